"""State stays bounded: once the window has passed, nothing is left (Flink CEP's most reported
problem is state that never shrinks); a snapshot restores exactly."""

from __future__ import annotations

import pickle
import random

import pytest

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import random_stream

QUERIES = [
    "RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A+, NOT C, B) WHERE [g] AND A.x < NEXT(A).x GROUP BY g WITHIN 6 SLIDE 2",
    "RETURN COUNT(*), MAX(B.x) PATTERN (SEQ(NOT C, A, B+))+ WITHIN 5",
    "RETURN COUNT(*) PATTERN SEQ(A+, B, NOT SEQ(C, D)) WITHIN 4 EMIT ON CHANGE",
    "RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x >= NEXT(B).x WITHIN 5 SLIDE 5 STRATEGY skip-till-next-match",
]


# "auto" scans these sparse streams; "index" keeps the ordered index where the predicate allows
PATHS = pytest.mark.parametrize("paths", ["auto", "index"])


@PATHS
def test_state_is_empty_after_the_window_passes(paths):
    rng = random.Random(1)
    for text in QUERIES:
        q = compile_query(text)
        eng = ENGINES["greta"](q, paths=paths)
        state = eng.new_state()
        rows = random_stream(rng, "ABCD", n=40, attrs={"x": (0, 5), "g": ["u", "v"]})
        eng.process(state, EventBatch.from_rows(rows).sorted())
        assert _keys(state)  # the graph holds the recent events
        last = rows[-1]["ts"]
        eng.advance(state, last + 100)
        assert not _keys(state), text  # everything purged
        assert not state.windows
        assert len(state.totals) <= 1  # WITHIN alone: the running answer, one cell per group


def test_vertices_are_purged_while_the_stream_runs():
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE A.x < NEXT(A).x OR A.x = 0 WITHIN 10 SLIDE 5")
    eng = ENGINES["greta"](q)
    state = eng.new_state()
    rng = random.Random(2)
    for k in range(20):
        rows = random_stream(rng, "AB", n=50, start=k * 100, attrs={"x": (0, 5)})
        eng.process(state, EventBatch.from_rows(rows).sorted())
        eng.advance(state, rows[-1]["ts"])
    (part,) = state.partitions.values()
    (sub,) = part.subs.values()
    # a window is 10 time units; at most ~2 events per unit arrive
    assert sub.state.a["sc"][1] < 60


@PATHS
def test_snapshot_round_trip_is_identical(paths):
    rng = random.Random(3)
    for text in QUERIES:
        q = compile_query(text)
        eng = ENGINES["greta"](q, paths=paths)
        rows = random_stream(rng, "ABCD", n=30, attrs={"x": (0, 5), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        a = eng.new_state()
        eng.process(a, batch.slice(0, 15))
        b = eng.restore(eng.snapshot(a))
        assert len(pickle.dumps(a)) < 10**6
        out_a = eng.process(a, batch.slice(15)) + eng.finish(a)
        out_b = eng.process(b, batch.slice(15)) + eng.finish(b)
        assert sorted(out_a, key=repr) == sorted(out_b, key=repr)


def test_packed_arrays_come_back_equal_writable_and_apart():
    import numpy as np

    from cepagg.engines.greta.state import pack_arrays, unpack_arrays

    dicts = [{"a": np.arange(6, dtype=np.int64).reshape(2, 3) + 10 * i,
              "b": np.array([None, 2**70], dtype=object),
              "c": np.zeros(i, dtype=np.float64) if i != 1 else np.zeros((1, 1)),  # ranks differ
              "e": np.zeros((0, 4), dtype=np.bool_)} for i in range(3)]
    back = unpack_arrays(pickle.loads(pickle.dumps(pack_arrays(dicts), protocol=5)), 3)
    for d, e in zip(dicts, back):
        assert d.keys() == e.keys()
        for name in d:
            assert d[name].dtype == e[name].dtype and d[name].shape == e[name].shape
            assert (d[name] == e[name]).all()
    back[0]["a"][1, 2] = -1  # the kernels write into them: each state its own part
    assert back[0]["a"].flags.writeable and back[1]["a"][1, 2] == 15
    assert back[0]["a"].flags.c_contiguous
    assert unpack_arrays(pack_arrays([]), 0) == []


def test_packed_arrays_of_states_with_other_names_come_back_as_given():
    """States whose arrays are named differently (as many names each) are not packed by name."""
    import numpy as np

    from cepagg.engines.greta.state import pack_arrays, unpack_arrays

    dicts = [{"a": np.zeros(3), "b": np.ones(2)}, {"a": np.zeros(3), "c": np.ones(4)}]
    back = unpack_arrays(pickle.loads(pickle.dumps(pack_arrays(dicts), protocol=5)), 2)
    assert [d.keys() for d in back] == [d.keys() for d in dicts]
    assert all((d[k] == e[k]).all() for d, e in zip(dicts, back) for k in d)


def _keys(state) -> list[tuple]:
    """The partition keys of ``state``: run alone or stacked (:mod:`cepagg.engines.greta.pool`)."""
    return sorted(set(state.partitions) | set(state.pool.slot_of if state.pool is not None else ()))


@pytest.mark.parametrize("pool", [False, True])
def test_snapshot_of_many_keys_is_compact_and_exact(pool):
    q = compile_query("RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B+) WHERE [k] WITHIN 50")
    eng = ENGINES["greta"](q, pool=pool)
    rng = random.Random(4)
    rows = random_stream(rng, "AB", n=400, max_gap=1, attrs={"x": (0, 5), "k": list(range(100))})
    big = next(r for r in rows[50:] if r["type"] == "A")
    big["x"] = 2**40  # one partition's sums leave int64 limbs for Python integers
    batch = EventBatch.from_rows(rows).sorted()
    a = eng.new_state()
    eng.process(a, batch.slice(0, 200))
    assert len(_keys(a)) > 50 and (len(a.partitions) > 50) != pool
    assert [p.key for p in a.partitions.values() if any(s.state.exact for s in p.subs.values())] == [(big["k"],)]
    b = eng.restore(eng.snapshot(a))
    assert _keys(b) == _keys(a) and sorted(b.partitions) == sorted(a.partitions)
    out_a = eng.process(a, batch.slice(200)) + eng.finish(a)
    out_b = eng.process(b, batch.slice(200)) + eng.finish(b)
    assert out_a == out_b and out_a == ENGINES["reference"](q).run(batch).rows


@pytest.mark.parametrize("pool", [False, True])
@pytest.mark.parametrize("start, kept", [(0, False), (1, True)])
def test_a_watermark_drops_a_partition_exactly_when_its_starts_leave_the_window(start, kept, pool):
    # WITHIN 5: after a watermark at 4 an event can come at 5, which a trend started at 1
    # reaches (span 4) and one started at 0 does not (span 5)
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE [k] WITHIN 5")
    eng = ENGINES["greta"](q, pool=pool)
    rows = [{"type": "A", "ts": start, "k": 1}, {"type": "B", "ts": 2, "k": 1},
            {"type": "A", "ts": 3, "k": 2}, {"type": "C", "ts": 5, "k": 1}]
    batch = EventBatch.from_rows(rows)
    state = eng.new_state()
    eng.process(state, batch.slice(0, 3))
    eng.advance(state, 4)
    assert ((1,) in _keys(state)) == kept and (2,) in _keys(state)
    eng.process(state, batch.slice(3))
    assert eng.finish(state) == ENGINES["reference"](q).run(batch).rows == [(1 if kept else 0,)]
