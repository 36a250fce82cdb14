"""Running a query in-process: the one-call API.

>>> from cepagg.datasets.stock import generate
>>> r = run("RETURN COUNT(*) PATTERN SEQ(C0, C1) WITHIN 2 s", generate(50, ticker_types=True, seed=3))
>>> r.columns
('COUNT(*)',)
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable

import pyarrow.compute as pc

from .events import ID, EventBatch, arrow_kind
from .lang import compile_query
from .lang.model import Query
from .plan import plan
from .result import Result, output_kinds, result_kind


def run(query: str | Query, events: EventBatch, engine: str = "auto") -> Result:
    """Evaluate ``query`` over ``events`` with the chosen engine (``auto``: the fastest able)."""
    q = query if isinstance(query, Query) else compile_query(
        query, time_unit=events.time_unit, schema=events.attribute_kinds())
    return plan(q, engine).build().run(events)


def run_chunks(query: str | Query, batches: Iterable[EventBatch], engine: str = "auto") -> tuple[Result, int, str]:
    """Evaluate ``query`` over batches in time order (each sorted by (ts, _id), none earlier than
    the one before: :class:`cepagg.io.EventChunks`), fed to one engine state batch by batch; after
    each, what the batch's last time closes is released (``advance``), so memory holds the
    engine's state and one batch, not every event. The query text is compiled with the first
    batch's attribute kinds. Returns the sorted result (that of :func:`run` over all the events),
    the number of events and the engine's name.

    Raises:
        cepagg.io.NotChunkable: there is no batch (no events: the caller reads the input whole).
    """
    from .io import NotChunkable

    batches = iter(batches)
    first = next(batches, None)
    if first is None:
        raise NotChunkable("")  # (quietly: a whole read reports the empty input)
    kinds = first.attribute_kinds()
    q = query if isinstance(query, Query) else compile_query(query, time_unit=first.time_unit, schema=kinds)
    p = plan(q, engine)
    eng = p.build()
    state, rows, events = eng.new_state(), [], 0
    for b in chain([first], batches):
        rows += eng.process(state, b)
        events += len(b)
        if eng.cheap_advance:  # later batches hold no time before this one's last
            rows += eng.advance(state, pc.max(b.table.column("ts")).as_py() - 1)
    rows += eng.finish(state)
    return Result(q.output_columns, rows, output_kinds(q, kinds)).sorted(), events, p.engine


def attach_event_columns(result: Result, events: EventBatch) -> Result:
    """Add the attributes of each returned event to a RETURN-of-events result."""
    if "event_id" not in result.columns or not result.rows:
        return result
    names = events.attribute_names
    ids = events.table.column(ID).to_pylist()
    index = {i: k for k, i in enumerate(ids)}
    cols = {n: events.table.column(n).to_pylist() for n in names}
    at = result.columns.index("event_id")
    rows = [r + tuple(cols[n][index[r[at]]] for n in names) for r in result.rows]
    attached = (arrow_kind(events.table.schema.field(n).type) for n in names)  # (timestamps stay datetimes)
    kinds = result.kinds + tuple("any" if k == "timestamp" else result_kind(k) for k in attached) \
        if result.kinds else ()
    return Result(result.columns + tuple(names), rows, kinds)
