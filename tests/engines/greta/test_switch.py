"""The index or the scan re-chosen per partition and batch (:mod:`cepagg.engines.greta.switch`):
streams whose density changes across batches switch paths both ways, with snapshots between
batches, and give the rows of the reference evaluator and of either fixed path.

The router's threshold is lowered to a few events per window so that the reference evaluator,
which enumerates the trends, can follow the dense phases."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from cepagg.engines import ENGINES
from cepagg.engines.greta import switch as sw
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result

W = 12
QUERIES = [
    f"RETURN COUNT(*), SUM(B.x), MAX(B.x) PATTERN B+ WHERE B.x < NEXT(B).x WITHIN {W} SLIDE 4",
    f"RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] AND B.x >= NEXT(B).x GROUP BY g WITHIN {W}",
    f"RETURN COUNT(*), MIN(B.y) PATTERN B+ WHERE B.y * 2 > NEXT(B).y + 1 WITHIN {W} SLIDE 6",
    f"RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x = NEXT(B).x WITHIN {W} EMIT ON CHANGE",
    f"RETURN COUNT(*) PATTERN SEQ(A, NOT C, B+) WHERE B.x <= NEXT(B).x WITHIN {W} SLIDE 4",
    f"RETURN COUNT(*), AVG(B.x) PATTERN SEQ(A, B+) WHERE A.id = B.id AND B.x > NEXT(B).x WITHIN {W}",
    f"RETURN COUNT(*) PATTERN B+ WHERE B.c = NEXT(B).c WITHIN {W} SLIDE 3",
    f"RETURN COUNT(*) PATTERN SEQ(A+, B+) WHERE A.x < NEXT(A).x AND B.y > NEXT(B).y WITHIN {W}",
]


def _phased_stream(rng: random.Random, phases: list[tuple[int, int, int]]) -> list[dict]:
    """Events in phases of (count, least gap, largest gap): sparse and dense in turn."""
    rows, ts = [], 0
    for n, lo, hi in phases:
        for _ in range(n):
            ts += rng.randint(lo, hi)
            rows.append({"type": rng.choice("AABBBBBC"), "ts": ts, "x": rng.randint(0, 4),
                         "y": rng.choice([0.5, 1.0, 1.5, 2.25, 3.0]), "g": rng.choice("uv"),
                         "id": rng.randint(0, 1), "c": rng.choice(["p", "q"]),
                         "z": rng.randint(0, 3) << 40})
    return rows


def _run(eng, batch: EventBatch, cuts: list[int], rng: random.Random, paths_seen: list | None = None):
    """``eng`` over ``batch`` cut at ``cuts``, a watermark and a snapshot now and then."""
    state = eng.new_state()
    ts = batch.table.column("ts").to_pylist()
    out, prev = [], 0
    for c in cuts + [len(batch)]:
        out += eng.process(state, batch.slice(prev, c - prev))
        if paths_seen is not None:
            paths_seen.append(_paths(state))
        if c < len(batch) and rng.random() < 0.6:
            out += eng.advance(state, ts[c] - 1)
        if rng.random() < 0.4:
            state = eng.restore(eng.snapshot(state))
        prev = c
    return out + eng.finish(state)


def _paths(state) -> dict:
    """Each graph's path: "index", "keep" (index, keeping its vertices) or "scan"."""
    return {(pk, sk): ("scan" if not sw.on_index(sub.state) else "keep" if sw.keeping(sub.state) else "index")
            for pk, part in state.partitions.items() for sk, sub in part.subs.items()}


def _auto(q, threshold: int, **kw):
    eng = ENGINES["greta"](q, **kw)
    assert eng.router is not None
    eng.router.threshold = threshold
    return eng


#: the engine's options and how many cases of each: exact records of int64 limbs, float64
#: records (``numbers="float"``, equal within 1e-9), the pure-Python twins, and records of
#: Python integers (a SUM of integers beyond 2**31 makes a graph exact, run by the twins)
VARIANTS = {"limbs": ({}, 24), "float": ({"numbers": "float"}, 16), "pure": ({"pure": True}, 8),
            "python-integers": ({}, 8)}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_switching_paths_agrees_with_the_reference_and_the_fixed_paths(variant):
    kw, count = VARIANTS[variant]
    rel = 1e-9  # (AVG, and float mode)
    switched = {"index": 0, "scan": 0}
    for k in range(count):
        seed = 40_000 + 1000 * list(VARIANTS).index(variant) + k
        rng = random.Random(seed)
        text = QUERIES[k % len(QUERIES)]
        if variant == "python-integers":
            text = text.replace("RETURN ", "RETURN SUM(B.z), ", 1)
        q = compile_query(text)
        phases = [(rng.randint(6, 10), 5, 12), (rng.randint(20, 30), 0, 1), (rng.randint(8, 12), 6, 14),
                  (rng.randint(14, 24), 0, 2)]
        rows = _phased_stream(rng, phases)
        batch = EventBatch.from_rows(rows).sorted()
        n = len(batch)
        cuts = sorted(rng.sample(range(1, n), rng.randint(8, 16)))
        expected = ENGINES["reference"](q).run(batch)
        eng = _auto(q, rng.choice([3, 4]), **kw)
        got = Result(expected.columns, _run(eng, batch, cuts, random.Random(seed)), expected.kinds).sorted()
        assert not expected.diff(got, rel=rel), (text, seed, cuts, expected.diff(got, rel=rel))
        for fixed in ("index", "no-index"):
            other = ENGINES["greta"](q, paths=fixed, **kw)
            same = Result(expected.columns, _run(other, batch, cuts, random.Random(seed)), expected.kinds).sorted()
            assert not same.diff(got, rel=rel), (text, seed, fixed)
        for way, count in eng.router.switches.items():
            switched[way] += count
    # the streams made partitions switch both ways, many times
    assert switched["index"] >= count // 2 and switched["scan"] >= count // 2, switched


def test_a_partition_moves_to_the_index_when_dense_and_back_when_sparse():
    q = compile_query(f"RETURN COUNT(*) PATTERN B+ WHERE B.x < NEXT(B).x WITHIN {W} SLIDE 4")
    rng = random.Random(5)
    rows = [dict(r, type="B") for r in _phased_stream(rng, [(12, 8, 10), (60, 0, 1), (20, 8, 10)])]
    batch = EventBatch.from_rows(rows).sorted()
    cuts = list(range(4, len(batch), 4))
    eng = _auto(q, 3)
    seen: list = []
    out = _run(eng, batch, cuts, random.Random(0), seen)
    path = [p[((), ())] for p in seen]
    # sparse first (a first batch spanning a window), the index once dense, kept vertices, the scan
    first_index = path.index("index")
    assert path[0] == "scan" and "keep" in path[first_index:]
    assert path[-1] == "scan", path
    assert eng.router.switches["index"] >= 1 and eng.router.switches["scan"] >= 1
    expected = ENGINES["greta"](q, paths="index").run(batch)
    assert not expected.diff(Result(expected.columns, out, expected.kinds).sorted())


def test_near_the_threshold_the_path_stays():
    """Hysteresis: a stream at the threshold's density keeps the path it started on."""
    q = compile_query(f"RETURN COUNT(*) PATTERN B+ WHERE B.x < NEXT(B).x WITHIN {W} SLIDE 4")
    rng = random.Random(6)
    rows = [{"type": "B", "ts": 3 * i + rng.randint(0, 1), "x": rng.randint(0, 4)} for i in range(200)]
    batch = EventBatch.from_rows(rows).sorted()
    eng = _auto(q, 4)  # 4 events per window: between the bounds 2.7 and 6
    seen: list = []
    _run(eng, batch, list(range(10, 200, 10)), random.Random(0), seen)
    assert eng.router.switches == {"index": 0, "scan": 0}
    assert {p[((), ())] for p in seen} == {"index"}


def test_an_old_snapshot_restores_and_switches():
    """A state whose graphs carry no evidence (a snapshot taken before paths were re-chosen)
    goes on from its path and switches once the evidence says so."""
    q = compile_query(f"RETURN COUNT(*) PATTERN B+ WHERE B.x < NEXT(B).x WITHIN {W} SLIDE 4")
    rng = random.Random(7)
    rows = [dict(r, type="B") for r in _phased_stream(rng, [(12, 8, 10), (60, 0, 1)])]
    batch = EventBatch.from_rows(rows).sorted()
    eng = _auto(q, 3)
    state = eng.new_state()
    out = eng.process(state, batch.slice(0, 12))
    for part in state.partitions.values():
        for sub in part.subs.values():
            del sub.state.evidence  # as a snapshot of the first-choice engine holds it
    state = eng.restore(eng.snapshot(state))
    assert _paths(state) == {((), ()): "scan"}
    for i in range(12, len(batch), 6):
        out += eng.process(state, batch.slice(i, 6))
    out += eng.finish(state)
    assert _paths(state) == {} or eng.router.switches["index"] == 1
    assert eng.router.switches["index"] == 1
    expected = ENGINES["greta"](q, paths="index").run(batch)
    assert not expected.diff(Result(expected.columns, out, expected.kinds).sorted())


@pytest.mark.parametrize("pooled", [False, True])
@pytest.mark.parametrize("first", ["no-index", "index"])
def test_a_snapshot_of_a_first_choice_engine_restores_and_switches(first, pooled):
    """A snapshot taken by an engine whose first batch chose the path for good holds one
    layout, of the path chosen, and graphs without evidence (an engine with the path fixed
    makes the same state): it restores, goes on from its path and switches when the evidence
    says so. A scanning engine that stacks its graphs (:mod:`cepagg.engines.greta.pool`)
    leaves them stacked in its snapshot: the switching engine takes them out of the stack."""
    q = compile_query(f"RETURN COUNT(*), MAX(B.x) PATTERN B+ WHERE B.x < NEXT(B).x WITHIN {W} SLIDE 4")
    rng = random.Random(8)
    phases = [(12, 8, 10), (60, 0, 1), (30, 8, 10)] if first == "no-index" else [(60, 0, 1), (30, 8, 10)]
    rows = [dict(r, type="B") for r in _phased_stream(rng, phases)]
    batch = EventBatch.from_rows(rows).sorted()
    old = ENGINES["greta"](q, paths=first, pool=pooled)
    state = old.new_state()
    out = old.process(state, batch.slice(0, 12))
    eng = _auto(q, 3)
    state = eng.restore(old.snapshot(state))
    if pooled and first == "no-index":
        assert len(state.pool) == 1 and not state.partitions
    else:
        assert _paths(state) == {((), ()): "scan" if first == "no-index" else "index"}
    for i in range(12, len(batch), 6):
        out += eng.process(state, batch.slice(i, 6))
        if i % 12 == 0:
            state = eng.restore(eng.snapshot(state))
    out += eng.finish(state)
    if first == "no-index":
        assert eng.router.switches["index"] >= 1 and eng.router.switches["scan"] >= 1
    else:
        assert eng.router.switches["scan"] >= 1
    expected = ENGINES["reference"](q).run(batch)
    assert not expected.diff(Result(expected.columns, out, expected.kinds).sorted())


def test_explain_says_the_path_is_rechosen_per_batch_and_on_what_rule():
    from cepagg.plan import plan

    text = plan(compile_query("RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price "
                              "WITHIN 10 minutes SLIDE 10 seconds")).explain()
    assert "re-chosen at every batch" in text
    assert f"at {sw.UP * 200:g} or more events per window" in text and "below 133.3 averaged" in text
    fixed = plan(compile_query("RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price")).explain()
    assert "ordered index on S.price > NEXT(S).price (no window in time" in fixed


def test_switching_to_the_index_runs_with_every_kernel_a_twin():
    """``CEPAGG_TWINS=1`` makes the kernel module itself a twin: the commit of the stored
    vertices then takes the twin's scalars, not a numpy record."""
    if os.environ.get("CEPAGG_TWINS") == "1":
        pytest.skip("already running with the twins")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                           "moves_to_the_index_when_dense"], env={**os.environ, "CEPAGG_TWINS": "1"},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
