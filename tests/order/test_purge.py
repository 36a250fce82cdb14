"""Example 5 (Algorithm 2) and Example 4 (Algorithm 1) of Mo Liu's dissertation (WPI, 2012, ch. 3),
as test vectors TV-OOO-4 and TV-OOO-5, with
cepagg's strict window: an event at ts needs the earlier types in [ts - w + 1, ts - 1] and
the later ones in [ts + 1, ts + w - 1]."""

from __future__ import annotations

import random

from helpers_order import arrival, check_net, run

from cepagg.lang import compile_query
from cepagg.order.disorder import disorder
from cepagg.order.purge import purgeable, sequence_of, set_purgeable, singleton_purgeable
from generators import cases, random_stream


def times(text: str) -> dict:
    out: dict = {}
    for tok in text.split():
        out.setdefault(tok[0].upper(), []).append(int(tok[1:]))
    return {k: sorted(v) for k, v in out.items()}


def test_tv_ooo_4_pog_set_purge_of_a7():
    seq = sequence_of(compile_query("PATTERN SEQ(B, A, B, D, F) WITHIN 10"))
    present = times("b4 b6 a7 d10 b11 f17")
    # before a7: B in [-2, 6] = {b4, b6}; after: B in [8, 16] = {b11}, then D in [12, 16] = {}
    assert set_purgeable(seq, 1, 7, {"B": 17, "D": 17}, present, 10)
    # the closing punctuation needed for D is 7 + 10 - 1 = 16 (the printed strict test needed > 17)
    assert set_purgeable(seq, 1, 7, {"B": 17, "D": 16}, present, 10)
    assert not set_purgeable(seq, 1, 7, {"B": 17, "D": 15}, present, 10)  # d16 could still come
    # without a punctuation for B the cursor stays at 8, and d10 may still follow a future b9
    assert not set_purgeable(seq, 1, 7, {"D": 17}, present, 10)
    assert not set_purgeable(seq, 1, 7, {"B": 17}, present, 10)


def test_tv_ooo_5_singleton_purge_of_b1():
    seq = sequence_of(compile_query("PATTERN SEQ(A, B, !C, D) WITHIN 7"))
    assert seq == ["A", "B", "D"]
    # (a) a0 is in the state: <a0, b1, d2> is a match, b1 must stay
    assert not singleton_purgeable(seq, 1, 1, "A", 1, times("a0 d2"), 7)
    # (b) a0 is not: no A can come at or before 1, so b1 can never match
    assert singleton_purgeable(seq, 1, 1, "A", 1, times("d2"), 7)
    assert not singleton_purgeable(seq, 1, 1, "A", -1, times("d2"), 7)  # an a0 may still come
    assert purgeable(seq, "B", 1, {"A": 1}, times("d2"), 7)


def test_only_flat_sequences_qualify():
    assert sequence_of(compile_query("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 5")) is None
    assert sequence_of(compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 EMIT ON CHANGE")) is None
    assert sequence_of(compile_query("PATTERN SEQ(A, B)")) is None
    assert sequence_of(compile_query("RETURN COUNT(*) PATTERN SEQ(A, !C, B) WITHIN 5 SLIDE 5")) == ["A", "B"]


def test_conservative_purges_its_buffer_on_punctuations():
    # A and D are punctuated, C never: nothing is released (C bounds the frontier), but b1 can
    # never match once no A at or before 1 can come
    q = "PATTERN SEQ(A, B, !C, D) WITHIN 7"
    arr = arrival("b1 d2 |A1 |D3 a5 b6 d9 |A20 |D20")
    r = run(q, arr, "conservative")
    assert r.stats["purged"] >= 1
    check_net(q, arr, r)


def test_purging_never_changes_the_result():
    rng = random.Random(21)
    for _ in range(cases(20, 300)):
        text = rng.choice(["PATTERN SEQ(A, B, !C, D) WITHIN 5", "RETURN COUNT(*) PATTERN SEQ(A, !C, B, D) WITHIN 6",
                           "RETURN g, COUNT(*) PATTERN SEQ(B, A, B) WHERE [g] GROUP BY g WITHIN 5 SLIDE 2"])
        rows = random_stream(rng, "ABCD", n=rng.randint(10, 20), attrs={"g": ["u", "v"]})
        arr = disorder(rows, rng, fraction=0.4, delay="exp", scale=3, punctuate=0.7, punct="types")
        # drop the punctuations of C: the frontier stays put and only purging frees the buffer
        arr.items = [i for i in arr.items if getattr(i, "type", "") != "C" or hasattr(i, "row")]
        check_net(text, arr, run(text, arr, "conservative"))
