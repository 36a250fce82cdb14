"""Running a query in-process: the one-call API.

>>> from cepagg.datasets.stock import generate
>>> r = run("RETURN COUNT(*) PATTERN SEQ(C0, C1) WITHIN 2 s", generate(50, ticker_types=True, seed=3))
>>> r.columns
('COUNT(*)',)
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable

import numpy as np
import pyarrow.compute as pc

from .events import ID, EventBatch, arrow_kind
from .lang import Hierarchy, compile_query
from .lang.concepts import check_types
from .lang.model import Query
from .plan import plan
from .result import Result, output_kinds, result_kind


def run(query: str | Query, events: EventBatch, engine: str = "auto", hierarchy: Hierarchy | None = None, *,
        match_format: str | None = None, max_matches: int | None = None, numbers: str = "exact") -> Result:
    """Evaluate ``query`` over ``events`` with the chosen engine (``auto``: the fastest able).

    ``numbers``: "exact" (the default: integers of any size, equal to the reference) or "float"
    (COUNT, SUM and AVG as float64, approximate; :mod:`cepagg.engines.floats`). It changes
    nothing for a query that returns matches.

    ``hierarchy``: a concept hierarchy for the query's types (:mod:`cepagg.lang.concepts`; a
    query text may also declare one in CONCEPT lines). Events whose type is a concept are refused
    before any work (:func:`check_concepts`).

    For a RETURN-of-events query, ``match_format`` "long" or "wide" gives the result with the
    events' attributes (:mod:`cepagg.matches`; None: the engine's rows, without them) and
    ``max_matches`` stops after that many matches (the first ones the engine finds); either
    given for an aggregate query, or ``max_matches`` below 1, is a UsageError.
    """
    q = _compiled(query, events, hierarchy)
    p = plan(q, engine, numbers)
    if match_format is None and max_matches is None:
        return p.build().run(events)
    from .errors import UsageError
    from .matches import Layout, as_result

    if not q.returns_matches:
        raise UsageError("run: match_format and max_matches apply to a query that returns matches "
                         "(this one returns aggregates)")
    _check_max_matches("run", max_matches)
    layout = Layout(q, events, match_format or "long")
    result, _ = as_result(match_feed(p.build(), events), layout, max_matches)
    return result


def write_matches(query: str | Query, events: EventBatch, out: str, *, format: str | None = None,
                  engine: str = "auto", match_format: str = "long", max_matches: int | None = None,
                  hierarchy: Hierarchy | None = None):
    """Write the matches of a RETURN-of-events query to ``out`` (.csv, .jsonl, .parquet; ``-``: a
    table on stdout) as the engine finds them, in the order it finds them: memory holds the
    events and the engine's state, not the matches. An output that cannot hold them is refused
    before the engine runs (:class:`cepagg.matches.OutputRefused`). Returns
    :class:`cepagg.matches.Written` (matches, rows, whether ``max_matches`` stopped it, engine).
    """
    from .errors import UsageError
    from .matches import Layout, check_layout, write
    from .output import check_output_path, output_format

    q = _compiled(query, events, hierarchy)
    if not q.returns_matches:
        raise UsageError("write_matches: the query returns aggregates, not matches")
    _check_max_matches("write_matches", max_matches)
    layout = Layout(q, events, match_format)
    if out not in (None, "-"):
        check_output_path(out, "write_matches: out")
        check_layout(layout, output_format(out, format))
    p = plan(q, engine)
    written = write(match_feed(p.build(), events), layout, out, format, max_matches)
    written.engine = p.engine
    return written


def _check_max_matches(caller: str, max_matches: int | None) -> None:
    """Refuse a ``max_matches`` below 1 (as ``cepagg run --max-matches`` does): it would return
    no match, which no caller means."""
    from .errors import UsageError

    if max_matches is not None and (not isinstance(max_matches, int) or isinstance(max_matches, bool)):
        raise TypeError(f"{caller}: max_matches={max_matches!r}: give an int")
    if max_matches is not None and max_matches < 1:
        raise UsageError(f"{caller}: max_matches={max_matches}: give a positive number")


#: events per piece fed to the engine at first; the size adapts to keep pieces near PIECE_ROWS rows
PIECE_EVENTS = 64
PIECE_ROWS = 1 << 16


def match_feed(eng, events: EventBatch):
    """The engine's rows over ``events``, handed a piece at a time to the callback the returned
    function is given (a :data:`cepagg.matches.Source`). The time-sorted events are fed in slices
    whose size adapts so that a slice gives about :data:`PIECE_ROWS` rows (down to one event
    where matches are dense); an engine that produces matches as it goes (rcep, nfa) also hands
    rows over in the middle of a call once it holds :data:`PIECE_ROWS` of them (its ``spill``),
    so memory never holds much more than a piece, however many matches one event ends; an engine
    that enumerates in compiled code (rcep) hands over blocks of arrays
    (:class:`cepagg.matches.MatchBlock`) instead of tuples, which the writer reads column-wise.
    One that
    evaluates at the end (the reference) gives everything in the last piece. The rows of one
    match are never split between pieces."""

    def feed(accept) -> None:
        batch = _in_stream_order(events)
        ts = batch.table.column("ts").to_numpy()
        produced = [0]

        def spill(rows: list) -> None:
            produced[0] += len(rows)
            accept(rows)

        eng.spill = spill
        eng.spill_rows = PIECE_ROWS
        eng.spill_blocks = True  # (rows may come as cepagg.matches.MatchBlock: write takes both)
        state = eng.new_state()
        i, step, n = 0, PIECE_EVENTS, len(batch)
        while i < n:
            j = min(n, i + step)
            produced[0] = 0
            rows = eng.process(state, batch.slice(i, j - i))
            if eng.cheap_advance:  # later slices hold no time before this one's last
                rows += eng.advance(state, int(ts[j - 1]) - 1)
            i = j
            spill(rows)
            # the next slice: as many events as gave about PIECE_ROWS rows here, at most twice as many
            step = max(1, min(2 * step, 1 << 16, step * PIECE_ROWS // max(produced[0], 1)))
        spill(eng.finish(state))

    return feed


def _in_stream_order(events: EventBatch) -> EventBatch:
    """``events`` sorted by (ts, id), the order engines assume; as they are when they already
    are in that order (a file written in time order: no copy of every column)."""
    table = events.table
    if table.column("ts").null_count or table.column(ID).null_count:
        return events.sorted()
    ts = table.column("ts").to_numpy()
    ids = table.column(ID).to_numpy()
    dt = np.diff(ts)
    if bool(np.all((dt > 0) | ((dt == 0) & (np.diff(ids) > 0)))):
        return events
    return events.sorted()


def _check_events(events: EventBatch) -> None:
    """Refuse events that are not an :class:`EventBatch` with a TypeError saying how to get one
    (a path, a pyarrow Table or a pandas frame failed deep inside with an AttributeError)."""
    if not isinstance(events, EventBatch):
        raise TypeError(f"events: an EventBatch (cepagg.io.read_events(path).batch, or "
                        f"cepagg.events.EventBatch.from_rows(rows)), not {type(events).__name__}")


def _compiled(query: str | Query, events: EventBatch, hierarchy: Hierarchy | None = None) -> Query:
    """The query compiled for ``events``, its concept types checked against them."""
    _check_events(events)
    q = query if isinstance(query, Query) else compile_query(
        query, time_unit=events.time_unit, schema=events.attribute_kinds(), hierarchy=hierarchy)
    check_concepts([q], events)
    return q


def check_concepts(queries: Iterable[Query], events: EventBatch, names: bool = True) -> None:
    """Refuse events typed with a concept of a query's hierarchy, or (``names``: ``events`` are the
    whole input) a query type unknown to both the hierarchy and the events
    (:func:`cepagg.lang.concepts.check_types`)."""
    queries = [q for q in queries if q.hierarchy]
    if queries:
        check_types(queries, pc.unique(events.table.column("type")).to_pylist(), names=names)


def run_workload(workload: str | Iterable[str | Query], events: EventBatch, engine: str = "auto",
                 hierarchy: Hierarchy | None = None, *, numbers: str = "exact") -> dict[str, Result]:
    """Evaluate several queries over ``events``, those aseq accepts in one shared plan; one result
    per query, by name. ``workload``: a workload text (:mod:`cepagg.lang.workload`), queries
    (named ``q0``, ``q1``, ...) or a ``{name: query}`` mapping.
    ``numbers``: as for :func:`run`, for every query."""
    from .lang.workload import compile_workload, named_queries
    from .plan import plan_workload

    _check_events(events)
    if isinstance(workload, str):
        named = compile_workload(workload, time_unit=events.time_unit, schema=events.attribute_kinds(),
                                 hierarchy=hierarchy)
    else:
        named = [(n, q if isinstance(q, Query) else compile_query(
            q, time_unit=events.time_unit, schema=events.attribute_kinds(), hierarchy=hierarchy))
            for n, q in named_queries(workload)]
    check_concepts([q for _, q in named], events)
    results = plan_workload([q for _, q in named], [n for n, _ in named], engine, numbers).run(events)
    return {n: r for (n, _), r in zip(named, results)}


def run_chunks(query: str | Query, batches: Iterable[EventBatch], engine: str = "auto",
               hierarchy: Hierarchy | None = None, *, numbers: str = "exact") -> tuple[Result, int, str]:
    """Evaluate ``query`` over batches in time order (each sorted by (ts, _id), none earlier than
    the one before: :class:`cepagg.io.EventChunks`), fed to one engine state batch by batch (in the
    numeric mode ``numbers``, as for :func:`run`); after
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
    p = plan(q, engine, numbers)
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
    return Result(q.output_columns, rows, output_kinds(q, kinds, numbers)).sorted(), events, p.engine


def check_event_columns(columns: Iterable[str], events: EventBatch, query: Query | None = None) -> None:
    """Refuse (:class:`cepagg.matches.OutputRefused`) to join the events' attributes to result
    ``columns`` that already hold one of their names: the table would have two columns of that
    name, and Parquet, JSON Lines and the ``Result`` rows keyed by name would keep only one.
    With ``query``, a group column that is the events' shared partition attribute is not joined
    again (:func:`cepagg.matches.row_attributes`)."""
    from .matches import check_attribute_names

    check_attribute_names(columns, _joined(events, query))


def _joined(events: EventBatch, query: Query | None) -> list[str]:
    from .matches import row_attributes

    names = events.attribute_names
    return list(names) if query is None else row_attributes(query, names)


def attach_event_columns(result: Result, events: EventBatch, query: Query | None = None) -> Result:
    """Add the attributes of each returned event to a RETURN-of-events result (refused when an
    attribute has the name of a result column: :func:`check_event_columns`)."""
    if "event_id" not in result.columns:
        return result
    check_event_columns(result.columns, events, query)
    if not result.rows:
        return result
    names = _joined(events, query)
    ids = events.table.column(ID).to_pylist()
    index = {i: k for k, i in enumerate(ids)}
    cols = {n: events.table.column(n).to_pylist() for n in names}
    at = result.columns.index("event_id")
    rows = [r + tuple(cols[n][index[r[at]]] for n in names) for r in result.rows]
    attached = (arrow_kind(events.table.schema.field(n).type) for n in names)  # (timestamps stay datetimes)
    kinds = result.kinds + tuple("any" if k == "timestamp" else result_kind(k) for k in attached) \
        if result.kinds else ()
    return Result(result.columns + tuple(names), rows, kinds)
