"""State: per-key state is gone once its window has passed (Flink CEP's classic leak), state
survives a pickle round trip mid-stream, ``advance`` reports closed windows."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import random_stream
from helpers import stream


def _engine(text: str):
    q = compile_query(text)
    eng = ENGINES["aseq"](q)
    return eng, eng.new_state()


def _parts(state):
    """Live partitions: alone (key -> PartState) and stacked (key -> slot)."""
    unit = state.parts[0]
    return {**unit.parts, **(unit.pool.slot_of if unit.pool is not None else {})}


@pytest.mark.parametrize("text", [
    "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [id] WITHIN 5",
    "RETURN id, COUNT(*) PATTERN SEQ(A, !C, B) GROUP BY id WITHIN 5 SLIDE 2",
    "RETURN id, COUNT(*), MAX(A.x) PATTERN SEQ(!N, A, B) GROUP BY id WITHIN 5 EMIT ON CHANGE",
    "RETURN COUNT(*) PATTERN SEQ(A, B, !C) WHERE A.id = B.id AND C.id = A.id WITHIN 5",
])
def test_key_state_is_gone_after_its_window(text):
    eng, st = _engine(text)
    rows = [{"type": t, "ts": ts, "id": k, "x": ts} for ts, (t, k) in
            enumerate([("A", 1), ("A", 2), ("B", 1), ("N", 2), ("B", 2), ("A", 3), ("C", 3), ("B", 3)])]
    b = EventBatch.from_rows(rows).sorted()
    eng.process(st, b)
    assert _parts(st), "partitions exist while their windows are open"
    eng.advance(st, 100)
    left = _parts(st)
    if "EMIT" in text:  # a key keeps its last reported value (to report the drop), no counters
        assert all(p.items(0) == p.items(1) == 0 and p.bm0.shape[0] <= 4 for p in left.values())
        left = {k: p for k, p in left.items() if not any(v is not None for v in p.last_final.values())}
    assert not left, f"per-key state left after the window passed: {list(left)}"


def test_emit_keeps_only_a_pending_drop():
    # a key whose count is 1 when its window passes must still report 0 at its next instant
    eng, st = _engine("RETURN id, COUNT(*) PATTERN SEQ(A, B) GROUP BY id WITHIN 5 EMIT ON CHANGE")
    b = EventBatch.from_rows([{"type": "A", "ts": 1, "id": 1}, {"type": "B", "ts": 2, "id": 1}]).sorted()
    assert eng.process(st, b) + eng.advance(st, 2) == [(1, 2, 1)]
    eng.advance(st, 100)
    (part,) = _parts(st).values()
    assert part.items(0) == 0 and part.items(1) == 0  # no counters, only the last value
    later = EventBatch.from_rows([{"type": "A", "ts": 200, "id": 1}], ids=[9])
    assert eng.process(st, later) + eng.finish(st) == [(1, 200, 0)]
    assert not _parts(st)


def test_snapshot_round_trip_mid_window():
    rng = random.Random(3)
    for text in ["RETURN COUNT(*), SUM(B.x), MIN(A.x) PATTERN SEQ(A, B, !D, C) WITHIN 6",
                 "RETURN g, COUNT(*), AVG(C.x) PATTERN SEQ(!D, A, C) WHERE [g] GROUP BY g WITHIN 4 SLIDE 3",
                 "RETURN COUNT(*), MAX(B.x) PATTERN SEQ(A, B) WHERE A.g = B.g WITHIN 5 EMIT ON CHANGE"]:
        q = compile_query(text)
        for _ in range(10):
            rows = random_stream(rng, "ABCD", n=30, attrs={"x": (0, 9), "g": ["u", "v"]})
            batch = EventBatch.from_rows(rows).sorted()
            whole = ENGINES["aseq"](q).run(batch)
            eng = ENGINES["aseq"](q)
            st = eng.new_state()
            out = []
            for a in range(0, 30, 7):
                out += eng.process(st, batch.slice(a, 7))
                st = eng.restore(eng.snapshot(st))
                st = pickle.loads(pickle.dumps(st))
            out += eng.finish(st)
            got = type(whole)(whole.columns, out, whole.kinds).sorted()
            assert not whole.diff(got), (text, whole.diff(got))


def test_advance_reports_closed_windows():
    eng, st = _engine("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 4 SLIDE 4")
    b = EventBatch.from_rows(stream("a1 b2 a5 b6")).sorted()
    assert eng.process(st, b) == [(0, 4, 1)]  # [0, 4) closed when b6 arrived... and a5 started later
    assert eng.advance(st, 7) == [(4, 8, 1)]
    assert eng.finish(st) == []


def test_out_of_order_input_is_an_error():
    from cepagg.errors import CepaggError

    eng, st = _engine("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 4")
    eng.process(st, EventBatch.from_rows(stream("a5 b6")))
    with pytest.raises(CepaggError, match="out of time order"):
        eng.process(st, EventBatch.from_rows(stream("a1"), ids=[7]))


def test_pickled_partitions_are_equal_and_independent(monkeypatch):
    # pickling stacks the partitions' arrays field by field (pack_parts): after loading, every
    # partition must hold its own values, in its own memory, whatever its layout (partitions
    # that go on alone: those of a stack are pickled as its arrays)
    from cepagg.engines.aseq import runtime
    from cepagg.engines.aseq.counters import STATE_FIELDS

    monkeypatch.setattr(runtime.UnitRun, "pooled", lambda self, fam: False)
    eng, st = _engine("RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, B, C) WHERE [g] GROUP BY g WITHIN 50")
    rng = random.Random(11)
    rows = random_stream(rng, "ABC", n=400, attrs={"x": (0, 9), "g": [f"k{i}" for i in range(12)]})
    eng.process(st, EventBatch.from_rows(rows).sorted())
    parts = _parts(st)
    assert len(parts) > 3
    first = next(iter(parts.values()))
    first.to_exact()  # one partition on Python integers: pickled as it is
    first.reserve(0, 200)  # and one with another layout: a group of its own
    before = {k: {n: getattr(p, n).copy() for n in STATE_FIELDS} for k, p in parts.items()}
    loaded = _parts(pickle.loads(pickle.dumps(st)))
    assert list(loaded) == list(parts)
    for k, p in loaded.items():
        for n in STATE_FIELDS:
            a = getattr(p, n)
            assert a.dtype == before[k][n].dtype and a.shape == before[k][n].shape
            assert (a == before[k][n]).all(), (k, n)
    a, b = list(loaded.values())[1:3]
    for n in STATE_FIELDS:
        assert not getattr(a, n).size or not np.shares_memory(getattr(a, n), getattr(b, n))
