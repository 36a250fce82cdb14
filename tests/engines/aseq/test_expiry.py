"""A window of one START: as it expires, its vector is read from the window's aggregate (the
sum of the back's vectors) without the flip of the two-stacks queue (:func:`cepagg.engines.aseq._expiry.expire_to`).
The rows must be the reference's in every mode, stacked or alone, compiled, twin and wide."""

from __future__ import annotations

import random

import pytest
from test_exact import TYPES
from test_wide import compiled_only  # noqa: F401 (a fixture)

from cepagg.engines import ENGINES, kernels
from cepagg.engines.aseq import counters, runtime
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import assert_same, cases


def _sparse_starts(rng, keys: int, w: int, n: int) -> list[dict]:
    """Events of types A..D over ``keys`` keys where a key's STARTs (A) lie more than ``w``
    apart (each window holds at most one), other types in between, ties across keys."""
    rows, last_a = [], {}
    t = 0
    for _ in range(n):
        t += rng.choice([0, 1, 1, 2])
        g = rng.randrange(keys)
        typ = rng.choice("ABCD")
        if typ == "A":
            if t - last_a.get(g, -10**9) <= w:
                typ = rng.choice("BCD")
            else:
                last_a[g] = t
        rows.append({"type": typ, "ts": t, "g": g, "x": rng.choice([None, 0, 1, 2, 5]),
                     "y": rng.choice([None, 0.5, 1.5, -2.0])})
    return rows


def _query(rng, w: int) -> str:
    agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(c.x), MAX(b.x), MIN(c.y)", "AVG(b.y), COUNT(c), SUM(b.x)",
                      "MAX(a.y), MIN(a.x), COUNT(*)"])
    neg = rng.choice(["", ", NOT D"])
    mode = rng.choice(["", "", f" SLIDE {rng.randint(1, w)}", " EMIT ON CHANGE"])
    if rng.random() < 0.4:
        return f"RETURN g, {agg} PATTERN SEQ(A a, B b{neg}, C c) WHERE [g] GROUP BY g WITHIN {w}{mode}"
    where = rng.choice([" WHERE [g]", ""])
    return f"RETURN {agg} PATTERN SEQ(A a, B b{neg}, C c){where} WITHIN {w}{mode}"


@pytest.mark.parametrize("chunk", range(3))
def test_windows_of_one_start_give_the_reference_rows(chunk):
    rng = random.Random(8100 + chunk)
    for _ in range(cases(40, 400)):
        w = rng.randint(1, 8)
        text = _query(rng, w)
        rows = _sparse_starts(rng, rng.choice([1, 3, 40]), w, rng.randint(1, 60))
        assert_same(text, rows, "aseq")


def test_the_twin_expires_a_window_of_one_start_without_a_flip(monkeypatch):
    """On the twin (the same source as Python), count the flips: a window that never holds two
    STARTs never flips, and the rows are the reference's."""
    windows = kernels.twin("cepagg.engines.aseq.windows")
    flips = []
    original = windows.flip

    def flip(*args):
        flips.append(1)
        return original(*args)

    monkeypatch.setattr(windows, "flip", flip)
    monkeypatch.setattr(runtime, "KERNELS", counters.TWIN)
    rng = random.Random(5)
    for text in ["RETURN COUNT(*), SUM(c.x), MAX(b.y) PATTERN SEQ(A a, B b, C c) WHERE [g] WITHIN 6",
                 "RETURN g, COUNT(*), MIN(c.y) PATTERN SEQ(A a, B b, C c) WHERE [g] GROUP BY g WITHIN 6 SLIDE 2",
                 "RETURN COUNT(*), AVG(b.y) PATTERN SEQ(A a, B b, C c) WITHIN 6 EMIT ON CHANGE"]:
        rows = _sparse_starts(rng, 1 if "EMIT" in text else 5, 6, 80)
        assert sum(r["type"] == "A" for r in rows) > 3
        assert_same(text, rows, "aseq")
    assert not flips
    rows = [{"type": t, "ts": ts, "g": 1, "x": 1, "y": 1.0} for ts, t in enumerate("AABCC")]
    rows.append({"type": "B", "ts": 20, "g": 1, "x": 1, "y": 1.0})
    assert_same("RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [g] WITHIN 6", rows, "aseq")
    assert flips  # two STARTs in a window before the end: the oldest leaves through a flip


@pytest.mark.parametrize("twin", [False, True])
def test_the_starts_left_at_the_end_of_the_input_give_the_reference_rows(twin, monkeypatch):
    """Under WITHIN alone, windows of one START or many (some flipped to the front) when the
    input ends, every aggregate, stacked or alone: the rows are the reference's."""
    if twin:
        monkeypatch.setattr(runtime, "KERNELS", counters.TWIN)
    rng = random.Random(17)
    for _ in range(cases(30, 300)):
        w = rng.randint(3, 40)
        agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(c.x), MAX(b.x), MIN(c.y)", "AVG(b.y), COUNT(c), SUM(b.x)",
                          "MAX(a.y), MIN(a.x), COUNT(*)"])
        neg = rng.choice(["", ", NOT D"])
        head, where = rng.choice([("", ""), ("", " WHERE [g]"), ("g, ", " WHERE [g]")])
        group = " GROUP BY g" if head else ""
        text = f"RETURN {head}{agg} PATTERN SEQ(A a, B b{neg}, C c){where}{group} WITHIN {w}"
        n = rng.randint(1, 60)
        rows = [{"type": rng.choice("ABCD"), "ts": i // rng.choice([1, 2]), "g": rng.randrange(3),
                 "x": rng.choice([None, 0, 1, 2, 5]), "y": rng.choice([None, 0.5, 1.5, -2.0])} for i in range(n)]
        assert_same(text, rows, "aseq")


@pytest.mark.parametrize("tail", ["SLIDE 1000", "EMIT ON CHANGE"])
def test_a_window_of_one_start_past_int64(compiled_only, tail):  # noqa: F811
    """One A, then 500 events of each of seven types: the START's count, 500**7 > 2**62, is
    read (SLIDE, EMIT) in the 128-bit kernels, where the START then expires alone."""
    n, L = 500, 8
    rows = [{"type": TYPES[0], "ts": 0}]
    rows += [{"type": t, "ts": i * n + k} for i, t in enumerate(TYPES[1:L], start=1) for k in range(n)]
    q = compile_query(f"RETURN COUNT(*) PATTERN SEQ({', '.join(TYPES[:L])}) WITHIN 4000 {tail}")
    got = ENGINES["aseq"](q).run(EventBatch.from_rows(rows)).rows
    assert n ** (L - 1) > 2**62 and compiled_only
    if tail.startswith("SLIDE"):
        assert got == [(0, 4000, n ** (L - 1))]
    else:  # a row per H event (each adds 500**6 matches)
        assert len(got) >= n and max(r[-1] for r in got) == n ** (L - 1)

