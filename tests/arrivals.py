"""Disordered arrivals of the ordering-layer tests: the cases, the arrival as input rows, and
the reference's result over the same events in time order."""

from __future__ import annotations

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.order.stream import EventItem

#: (strategy, query) pairs run through the ordering layer on Spark and through its operator
ORDER_CASES = [
    ("kslack", "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3"),
    ("conservative", "PATTERN SEQ(A, B, !C) WHERE [g] WITHIN 5"),
    ("aggressive",
     "RETURN g, COUNT(*), MAX(A.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 5 EMIT ON CHANGE"),
    ("aggressive", "PATTERN SEQ(A, !C, B) WHERE [g] WITHIN 6"),
]


def arrival_rows(arr):
    """The arrival as file rows: events and punctuations, ``_id`` = arrival position."""
    events = arr.events.table.to_pylist()
    rows = []
    for pos, item in enumerate(arr.items):
        if isinstance(item, EventItem):
            r = dict(events[item.row])
        else:
            r = {"type": "__punct__", "ts": item.t, "punct_type": item.type}
        r["_id"] = pos
        rows.append(r)
    return rows


def expected_of(text, rows):
    """The reference's result over the arrival's events (punctuations dropped)."""
    events = [r for r in rows if r["type"] != "__punct__"]
    plain = [{k: v for k, v in r.items() if k not in ("_id", "punct_type")} for r in events]
    batch = EventBatch.from_rows(plain, ids=[r["_id"] for r in events])
    return ENGINES["reference"](compile_query(text)).run(batch)
