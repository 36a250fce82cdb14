"""A state snapshot restored by a new engine object goes on where it stopped.

That is how a state travels in streaming: Spark's stateful operator pickles each bucket's state
after every micro-batch, and a restarted query (or another Python worker, another executor)
unpickles it into an engine built in that process. The first call there may be ``advance``
(the watermark moved, no new event for the bucket) or ``finish`` (the stream ended).
"""

from __future__ import annotations

import random

import pytest

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import random_stream

QUERIES = [
    "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 8",
    "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 8 SLIDE 4",
    "RETURN COUNT(*), MAX(A.x) PATTERN SEQ(A+, B) WITHIN 5 EMIT ON CHANGE",
    "PATTERN SEQ(A a, !C, B b) WHERE [g] WITHIN 8 RETURN a, b",
]


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("first", ["advance", "process", "finish"])
def test_a_new_engine_goes_on_from_a_restored_state(text, first):
    """Events up to ``cut`` go to one engine object, the rest to another, which restores the
    state and first calls ``first``; the rows are those of one uninterrupted run."""
    rng = random.Random(5)
    q = compile_query(text)
    for _ in range(5):
        rows = random_stream(rng, "ABC", n=30, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        cut = len(batch) if first == "finish" else 15
        for name, cls in ENGINES.items():
            if cls.refusal(q) is not None:
                continue
            whole = cls(q).run(batch)
            before = cls(q)
            state = before.new_state()
            out = before.process(state, batch.slice(0, cut))
            after = cls(q)  # as built in another process
            state = after.restore(before.snapshot(state))
            if first == "advance":
                out += after.advance(state, batch.table.column("ts")[cut].as_py() - 1)
            if cut < len(batch):
                out += after.process(state, batch.slice(cut))
            out += after.finish(state)
            got = type(whole)(whole.columns, out, whole.kinds).sorted()
            assert not whole.diff(got), (name, text, first, whole.diff(got))
