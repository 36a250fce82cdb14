"""A streaming bucket as the state store keeps it (no Spark session): the driver's bookkeeping
pickled, the engine's state through the engine's versioned snapshot and restore."""

from __future__ import annotations

import pickle

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan
from cepagg.spark.streaming import BucketState, pack_bucket, unpack_bucket
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


def test_a_bucket_of_another_format_is_refused():
    engine = plan(compile_query(QUERY)).build()
    data = pickle.dumps((99, BucketState(engine_state=None), engine.snapshot(engine.new_state())))
    with pytest.raises(ValueError, match="new checkpoint"):
        unpack_bucket(data, engine)
