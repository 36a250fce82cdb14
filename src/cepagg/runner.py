"""Running a query in-process: the one-call API.

>>> from cepagg.datasets.stock import generate
>>> r = run("RETURN COUNT(*) PATTERN SEQ(C0, C1) WITHIN 2 s", generate(50, ticker_types=True, seed=3))
>>> r.columns
('COUNT(*)',)
"""

from __future__ import annotations

import pyarrow as pa

from .events import ID, EventBatch
from .lang import compile_query
from .lang.model import Query
from .plan import plan
from .result import Result


def run(query: str | Query, events: EventBatch, engine: str = "auto") -> Result:
    """Evaluate ``query`` over ``events`` with the chosen engine (``auto``: the fastest able)."""
    q = query if isinstance(query, Query) else compile_query(
        query, time_unit=events.time_unit, schema=events.attribute_kinds())
    return plan(q, engine).build().run(events)


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
    kinds = result.kinds + tuple(_kind(events.table.schema.field(n).type) for n in names) if result.kinds else ()
    return Result(result.columns + tuple(names), rows, kinds)


def _kind(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t):
        return "str"
    return "any"
