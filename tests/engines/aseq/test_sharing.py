"""Multi-query sharing: a workload run as one plan returns, for every query, exactly what the
query returns alone (and what the reference returns) — PreTree units, Chop-Connect with
snapshots, multi-connect, and the optimizer's choices."""

from __future__ import annotations

import random

import pytest
from querygen import random_query

from cepagg.engines import ENGINES
from cepagg.engines.aseq.sharing import Stats
from cepagg.engines.aseq.workload import Workload
from cepagg.errors import UnsupportedQuery
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases, random_stream
from helpers import stream

EXAMPLE6 = [
    "SEQ(VKindle, BKindle, VCase, BCase)",
    "SEQ(VKindle, BKindle, VKindleFire)",
    "SEQ(VKindle, BKindle, VCase, BCase, VeBook, BeBook)",
    "SEQ(VKindle, BKindle, VCase, BCase, VLight, BLight)",
    "SEQ(Vipad, VKindleFire, VKindle, BKindle)",
]


def _check(workload: Workload, batch: EventBatch) -> None:
    for q, got in zip(workload.queries, workload.run(batch)):
        want = ENGINES["reference"](q).run(batch)
        assert not want.diff(got), (q.text, want.diff(got))


def test_example6_pretree():
    qs = [compile_query(f"PATTERN {p} RETURN COUNT(*) WITHIN 20") for p in EXAMPLE6]
    wl = Workload(qs)
    units = wl.sharing.units
    (tree,) = [u for u in units if len(u.outputs) == 4]
    assert tree.n_nodes == 9  # VKindle, BKindle, VKindleFire, VCase, BCase, VeBook, BeBook, VLight, BLight
    # a BKindle event updates one node per PreTree instance, not four (paper Example 7)
    assert sum(1 for f in tree.node_feed if f.type == "BKindle") == 1
    types = ["VKindle", "BKindle", "VCase", "BCase", "VKindleFire", "VeBook", "BeBook", "VLight", "BLight", "Vipad"]
    rng = random.Random(1)
    rows = [{"type": rng.choice(types), "ts": t} for t in range(120)]
    _check(wl, EventBatch.from_rows(rows))


def test_explain_shows_the_plan():
    qs = [compile_query(f"PATTERN {p} RETURN COUNT(*) WITHIN 20") for p in EXAMPLE6]
    text = Workload(qs).explain()
    assert "unit 0 (PreTree" in text and "BKindle" in text and "q0" in text and "optimizer:" in text


@pytest.mark.parametrize("seed", range(6))
def test_random_workloads_shared_equal_alone(seed):
    rng = random.Random(seed)
    for _ in range(cases(8, 80)):
        mode = rng.choice(["total", "slide", "emit"])
        w = rng.randint(2, 8)
        s = rng.randint(1, w)
        texts = []
        for _ in range(rng.randint(2, 5)):
            t = random_query(rng, types="ABC", max_len=4, modes=(mode,), groups=False, predicates=rng.random() < 0.3,
                             aggregates=["COUNT(*)", "SUM({v}.x)"], windows=False)
            head, _, _ = t.partition(" RETURN ")
            window = {"total": f"WITHIN {w}", "slide": f"WITHIN {w} SLIDE {s}",
                      "emit": f"WITHIN {w} EMIT ON CHANGE"}[mode]
            texts.append(f"{head} RETURN COUNT(*), SUM(p0.x) {window}")
        qs = [compile_query(t) for t in texts]
        rows = random_stream(rng, "ABC", n=rng.randint(5, 18), attrs={"x": (0, 5)})
        _check(Workload(qs), EventBatch.from_rows(rows))


@pytest.mark.parametrize("seed", range(6))
def test_random_chops_equal_reference(seed):
    rng = random.Random(100 + seed)
    done = 0
    while done < cases(25, 250):
        text = random_query(rng, types="ABC", max_len=5, groups=rng.random() < 0.3, predicates=True,
                            aggregates=["COUNT(*)"], windows=False)
        q = compile_query(text)
        wl_plan = Workload([q], share=False).sharing
        n = wl_plan.units[0].plans[0].length
        if n < 2:
            continue
        cuts = sorted(rng.sample(range(1, n), rng.randint(1, n - 1)))
        try:
            wl = Workload([q], chops={0: cuts})
        except UnsupportedQuery:
            continue
        rows = random_stream(rng, "ABC", n=rng.randint(3, 16), attrs={"x": (0, 5), "g": ["u", "v"]})
        _check(wl, EventBatch.from_rows(rows))
        done += 1


def test_chop_connect_shares_pieces_across_queries():
    # Q5-like: (X, Y, A, B) chopped before A shares piece (A, B) with (A, B, C) chopped after B
    qs = [compile_query(t) for t in ("PATTERN SEQ(X, Y, A, B) RETURN COUNT(*) WITHIN 10",
                                     "PATTERN SEQ(A, B, C) RETURN COUNT(*) WITHIN 10",
                                     "PATTERN SEQ(Z, A, B, !X, C) RETURN COUNT(*) WITHIN 10")]
    wl = Workload(qs, chops={0: [2], 1: [2], 2: [1, 3]})
    (run,) = [p for p in wl.pieces if hasattr(p, "chain")]
    assert run.chain[0][1] == run.chain[1][0]  # the (A, B) piece is one piece
    rng = random.Random(5)
    for _ in range(20):
        rows = random_stream(rng, "XYZABC", n=25, attrs={})
        _check(wl, EventBatch.from_rows(rows))


def test_multiconnect_example9():
    q = compile_query("PATTERN SEQ(A, B, C, D, E, F, G) WITHIN 20 EMIT ON CHANGE RETURN COUNT(*)")
    s = EventBatch.from_rows(stream("a1 a2 b3 c4 d5 b6 c7 d8 e9 e10 f12 g13 a14 g22"))
    (res,) = Workload([q], chops={0: [3, 5]}).run(s)
    assert res.rows == [(13, 16), (22, 0)]


def test_optimizer_follows_the_cost_model():
    texts = ["PATTERN SEQ(X, A, B, C, D) RETURN COUNT(*) WITHIN {w}",
             "PATTERN SEQ(Y, A, B, C, D) RETURN COUNT(*) WITHIN {w}",
             "PATTERN SEQ(Z, A, B, C, D) RETURN COUNT(*) WITHIN {w}"]
    stats = Stats({t: 0.01 for t in "XYZABCD"})
    small = Workload([compile_query(t.format(w=3)) for t in texts], stats=stats)
    big = Workload([compile_query(t.format(w=100000)) for t in texts], stats=stats)
    assert small.sharing.chopped and not big.sharing.chopped
    assert any(n.startswith("chop") for n in small.sharing.notes)
    assert any(n.startswith("keep") for n in big.sharing.notes)
    rng = random.Random(2)
    rows = random_stream(rng, "XYZABCD", n=60, attrs={})
    _check(small, EventBatch.from_rows(rows))


def test_chop_refusals():
    q = compile_query("PATTERN SEQ(A, B, C) RETURN SUM(A.x) WITHIN 5")
    with pytest.raises(UnsupportedQuery, match="COUNT"):
        Workload([q], chops={0: [1]})
