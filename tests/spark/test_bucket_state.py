"""A streaming bucket as the state store keeps it (no Spark session): the driver's bookkeeping
pickled, the engine's state through the engine's versioned snapshot and restore."""

from __future__ import annotations

import pickle

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan
from cepagg.spark.bucket import BucketState, pack_bucket, unpack_bucket
from generators import random_stream, seeded

QUERY = "RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A, B+) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3"


def test_a_bucket_stores_its_engine_state_as_the_engines_snapshot():
    q = compile_query(QUERY)
    rows = random_stream(seeded(QUERY), "AB", n=30, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v"]})
    batch = EventBatch.from_rows(rows).sorted()
    engine = plan(q).build()
    calls = []

    class Spy(type(engine)):
        def snapshot(self, state):
            calls.append("snapshot")
            return super().snapshot(state)

        def restore(self, data):
            calls.append("restore")
            return super().restore(data)

    spy = Spy(q)
    st = BucketState(engine_state=spy.new_state(), late=2)
    out = spy.process(st.engine_state, batch.slice(0, 15))
    data = pack_bucket(spy, st)
    version, bookkeeping, snapshot = pickle.loads(data)
    assert bookkeeping.engine_state is None and bookkeeping.late == 2
    assert isinstance(snapshot, bytes) and calls == ["snapshot"]

    again = unpack_bucket(data, spy)
    assert calls == ["snapshot", "restore"] and again.late == 2
    out += spy.process(again.engine_state, batch.slice(15)) + spy.finish(again.engine_state)
    whole = engine.run(batch)
    assert not whole.diff(type(whole)(whole.columns, out, whole.kinds).sorted())
    assert unpack_bucket(data).late == 2  # the bookkeeping alone, as late_events reads it


def test_a_bucket_pickled_under_its_former_module_name_still_loads():
    """Checkpoints written while BucketState lived in cepagg.spark.streaming name it there."""
    from cepagg.spark.bucket import BUCKET_FORMAT

    pytest.importorskip("pyspark")
    engine = plan(compile_query(QUERY)).build()
    st = BucketState(engine_state=None, late=3)
    here = pickle.dumps((BUCKET_FORMAT, st, engine.snapshot(engine.new_state())), protocol=2)
    assert b"cepagg.spark.bucket\nBucketState\n" in here  # (protocol 2 names a class as text)
    old = here.replace(b"cepagg.spark.bucket\nBucketState\n", b"cepagg.spark.streaming\nBucketState\n")
    assert unpack_bucket(old, engine).late == 3


def test_a_bucket_of_another_format_is_refused():
    engine = plan(compile_query(QUERY)).build()
    data = pickle.dumps((99, BucketState(engine_state=None), engine.snapshot(engine.new_state())))
    with pytest.raises(ValueError, match="new checkpoint"):
        unpack_bucket(data, engine)


def test_a_bucket_released_by_watermarks_gives_the_engines_result_and_counts_late_events():
    """The operator's steps on a bucket, without Spark: three micro-batches, each released up to
    the previous one's last time (K-slack), then the end of input; an event older than the
    time already closed is counted, not given to the engine."""
    from cepagg.spark.bucket import END_WATERMARK_MS, admit, release, wake_times

    q = compile_query(QUERY)
    rows = random_stream(seeded(QUERY + "release"), "AB", n=45, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v"]})
    table = EventBatch.from_rows(rows).sorted().table
    engine = plan(q).build()
    st = BucketState(engine_state=engine.new_state())
    out, watermark = [], 0
    for lo in (0, 15, 30):
        chunk = table.slice(lo, 15)
        admit(st, chunk)
        out += release(st, engine, q, "ms", watermark)
        waiting = [t for p in st.pending for t in p.column("ts").to_pylist()]
        assert waiting and min(waiting) >= watermark and wake_times(st, "ms")[0] == min(waiting) + 1
        watermark = chunk.column("ts").to_pylist()[-1]
    admit(st, table.slice(0, 1))  # (its time was closed by the last release)
    assert st.late == 1 and st.late_samples == table.slice(0, 1).to_pylist()
    out += release(st, engine, q, "ms", END_WATERMARK_MS + 1)
    assert st.ended and not wake_times(st, "ms")
    whole = engine.run(EventBatch(table, "ms"))
    assert not whole.diff(type(whole)(whole.columns, out, whole.kinds).sorted())
