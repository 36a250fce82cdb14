"""Float mode for engines that count exactly: their rows converted to float64.

In float mode (``numbers="float"``) the COUNT, SUM and AVG cells of every result row are
Python floats, whichever engine computes them; MIN and MAX keep their exact values. An engine
with ``float_native`` computes in float64 itself; for every other engine the plan
(:meth:`cepagg.plan.Plan.build`) wraps the exact engine in :class:`FloatRows`, which follows
the same protocol (:class:`cepagg.engines.base.Evaluator`) and converts each row it hands on,
final or partial (:mod:`.aggregates`: a SUM or AVG partial cell ``(sum, n)`` becomes two
floats). So every driver sees one result shape, and a partial row of a converted engine merges
with one of a native engine. :class:`FloatWorkload` does the same for the A-Seq workload's
``(query index, row)`` pairs.

A count beyond float64's range (about 1.8e308) becomes ``inf``, as float64 arithmetic gives it.
Queries that return matches have no aggregate cells: float mode changes nothing for them, and
the plan does not wrap their engines.

>>> from cepagg.lang import compile_query
>>> q = compile_query("RETURN COUNT(*), AVG(A.x), MAX(A.x) PATTERN SEQ(A, B) WITHIN 5")
>>> float_row(q, (3, (12, 3), 7), partial=True)
(3.0, (12.0, 3.0), 7)
>>> float_row(q, (10**400, 4.0, 7), partial=False)
(inf, 4.0, 7)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, Iterable

from ..events import EventBatch
from ..lang.model import Query
from ..result import Result, output_kinds
from .aggregates import combine_rows, key_width

#: the aggregates float mode computes in float64; MIN and MAX are exact in either mode
FLOAT_FUNCS = ("COUNT", "SUM", "AVG")


def affected(query: Query) -> bool:
    """Does float mode change ``query``'s result (an aggregate COUNT, SUM or AVG)?"""
    return not query.returns_matches and any(a.func in FLOAT_FUNCS for a in query.aggregates)


def to_float(x: Any) -> float | None:
    """``x`` as a float64; None stays None, a number beyond float64's range is +-inf."""
    if x is None or isinstance(x, float):
        return x
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def float_row(query: Query, row: tuple, partial: bool) -> tuple:
    """A result row of ``query`` with its COUNT, SUM and AVG cells as floats (``partial``: the
    row's cells are partial, :mod:`.aggregates`)."""
    width = key_width(query)
    cells = list(row)
    for k, a in enumerate(query.aggregates, start=width):
        if a.func not in FLOAT_FUNCS:
            continue
        x = cells[k]
        if partial and a.func != "COUNT":
            cells[k] = (to_float(x[0]), to_float(x[1]))
        else:
            cells[k] = to_float(x)
    return tuple(cells)


def float_rows(query: Query, rows: Iterable[tuple], partial: bool) -> list[tuple]:
    return [float_row(query, r, partial) for r in rows]


class _Converted(ABC):
    """An evaluator whose steps are ``inner``'s and whose returned rows go through
    :meth:`_float`; the protocol's attributes are ``inner``'s."""

    numbers = "float"

    def __init__(self, inner):
        self.inner = inner
        self.cheap_advance: bool = inner.cheap_advance
        self.partial: bool = inner.partial
        self.start_range = inner.start_range

    @abstractmethod
    def _float(self, rows: list) -> list:
        """The returned rows converted (each subclass knows its row shape)."""

    def new_state(self) -> Any:
        return self.inner.new_state()

    def process(self, state: Any, batch: EventBatch) -> list:
        return self._float(self.inner.process(state, batch))

    def advance(self, state: Any, watermark: int) -> list:
        return self._float(self.inner.advance(state, watermark))

    def finish(self, state: Any) -> list:
        return self._float(self.inner.finish(state))

    def snapshot(self, state: Any) -> bytes:
        return self.inner.snapshot(state)

    def restore(self, data: bytes) -> Any:
        return self.inner.restore(data)


class FloatRows(_Converted):
    """An exact engine whose rows come out in float mode; see the module docstring.

    Every step is the engine's; only the rows it returns are converted. ``float_native`` is
    False: the values were computed exactly and rounded once, at the end.
    """

    float_native = False

    def __init__(self, engine):
        super().__init__(engine)
        self.engine = engine
        self.query: Query = engine.query
        self.name: str = engine.name

    def _float(self, rows: list) -> list:
        return float_rows(self.query, rows, self.partial)

    def run(self, batch: EventBatch) -> Result:
        """As :meth:`cepagg.engines.base.Engine.run`, in float mode."""
        state = self.new_state()
        rows = self.process(state, batch.sorted())
        rows += self.finish(state)
        return final_result(self.query, rows, self.partial, batch)


def final_result(query: Query, rows: list[tuple], partial: bool, batch: EventBatch) -> Result:
    """The sorted float-mode result of ``query`` from an evaluation's rows (merged when
    ``partial``; the merge's empty row, COUNT 0 without any match, made a float too)."""
    if partial:
        rows = combine_rows(query, rows)
    kinds = output_kinds(query, batch.attribute_kinds(), numbers="float")
    return Result(query.output_columns, float_rows(query, rows, False), kinds).sorted()


class FloatWorkload(_Converted):
    """The A-Seq workload (:class:`cepagg.engines.aseq.workload.Workload`) in float mode: its
    ``(query index, row)`` pairs converted, one float-mode result per query from :meth:`run`.
    Converting a cell the workload already computed in float64 changes nothing."""

    def __init__(self, workload):
        super().__init__(workload)
        self.workload = workload
        self.queries: list[Query] = workload.queries

    def _float(self, tagged: list) -> list:
        return [(i, row if self.queries[i].returns_matches else float_row(self.queries[i], row, self.partial))
                for i, row in tagged]

    def explain(self) -> str:
        return self.workload.explain()

    def run(self, batch: EventBatch) -> list[Result]:
        """One sorted float-mode result per query."""
        state = self.new_state()
        batch = batch.sorted()
        tagged = self.process(state, batch) + self.finish(state)
        return [final_result(q, [r for qi, r in tagged if qi == i], self.partial, batch)
                for i, q in enumerate(self.queries)]
