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
from .lang import Hierarchy, compile_query
from .lang.concepts import check_types
from .lang.model import Query
from .plan import plan
from .result import Result, output_kinds, result_kind


def run(query: str | Query, events: EventBatch, engine: str = "auto", hierarchy: Hierarchy | None = None) -> Result:
    """Evaluate ``query`` over ``events`` with the chosen engine (``auto``: the fastest able).

    ``hierarchy``: a concept hierarchy for the query's types (:mod:`cepagg.lang.concepts`; a
    query text may also declare one in CONCEPT lines). Events whose type is a concept are refused
    before any work (:func:`check_concepts`)."""
    q = query if isinstance(query, Query) else compile_query(
        query, time_unit=events.time_unit, schema=events.attribute_kinds(), hierarchy=hierarchy)
    check_concepts([q], events)
    return plan(q, engine).build().run(events)


def check_concepts(queries: Iterable[Query], events: EventBatch, names: bool = True) -> None:
    """Refuse events typed with a concept of a query's hierarchy, or (``names``: ``events`` are the
    whole input) a query type unknown to both the hierarchy and the events
    (:func:`cepagg.lang.concepts.check_types`)."""
    queries = [q for q in queries if q.hierarchy]
    if queries:
        check_types(queries, pc.unique(events.table.column("type")).to_pylist(), names=names)


def run_workload(workload: str | Iterable[str | Query], events: EventBatch, engine: str = "auto",
                 hierarchy: Hierarchy | None = None) -> dict[str, Result]:
    """Evaluate several queries over ``events``, those aseq accepts in one shared plan; one result
    per query, by name. ``workload``: a workload text (:mod:`cepagg.lang.workload`) or queries."""
    from .lang.workload import compile_workload
    from .plan import plan_workload

    if isinstance(workload, str):
        named = compile_workload(workload, time_unit=events.time_unit, schema=events.attribute_kinds(),
                                 hierarchy=hierarchy)
    else:
        named = [(f"q{i}", q if isinstance(q, Query) else compile_query(
            q, time_unit=events.time_unit, schema=events.attribute_kinds(), hierarchy=hierarchy))
            for i, q in enumerate(workload)]
    check_concepts([q for _, q in named], events)
    results = plan_workload([q for _, q in named], [n for n, _ in named], engine).run(events)
    return {n: r for (n, _), r in zip(named, results)}


def run_chunks(query: str | Query, batches: Iterable[EventBatch], engine: str = "auto",
               hierarchy: Hierarchy | None = None) -> tuple[Result, int, str]:
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
    q = query if isinstance(query, Query) else compile_query(query, time_unit=first.time_unit, schema=kinds,
                                                             hierarchy=hierarchy)
    p = plan(q, engine)
    eng = p.build()
    state, rows, events, seen = eng.new_state(), [], 0, set()
    for b in chain([first], batches):
        check_concepts([q], b, names=False)
        if q.hierarchy:
            seen.update(pc.unique(b.table.column("type")).to_pylist())
        rows += eng.process(state, b)
        events += len(b)
        if eng.cheap_advance:  # later batches hold no time before this one's last
            rows += eng.advance(state, pc.max(b.table.column("ts")).as_py() - 1)
    rows += eng.finish(state)
    if q.hierarchy:  # (a query type unknown to the hierarchy and to every batch)
        check_types([q], seen)
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
