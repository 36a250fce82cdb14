"""The protocol every engine implements, so the planner, the CLI and Spark can drive any of them.

An engine is built from a bound :class:`~cepagg.lang.model.Query` (and refuses it with
:class:`~cepagg.errors.UnsupportedQuery` when it cannot evaluate it). Its state is separate,
picklable and versioned, so Spark can keep it in a state store:

* ``process(state, batch)`` consumes events in stream order per partition key (ts, then id)
  and returns result rows that became final;
* ``advance(state, watermark)`` declares that no event with ``ts <= watermark`` will come and
  returns rows that became final (closed windows);
* ``finish(state)`` ends the input and returns the remaining rows.

Rows are tuples in ``query.output_columns`` order. Engines know nothing about Spark.

:class:`Evaluator` is this protocol as a type: what a driver may call. :class:`Engine`
implements it for one query; the A-Seq workload (:class:`cepagg.engines.aseq.workload.Workload`)
implements it for several, its rows tagged with the query's index.

Two options let a caller split one evaluation into independent parts (Spark does):

* ``partial=True`` (WITHIN alone and SLIDE): aggregate cells are partial
  (:mod:`cepagg.engines.aggregates`) so that rows of the same group from several partitions or
  slices can be merged with :func:`~cepagg.engines.aggregates.combine_rows`.
* ``start_range=(a, b)``: only the part of the result that belongs to the time slice
  ``[a, b)``: matches whose first event is in it (WITHIN alone), windows starting in it
  (SLIDE), instants in it (EMIT ON CHANGE, where a row is then emitted at *every* instant of
  the slice, for every group, and the caller drops unchanged rows with
  :func:`~cepagg.engines.aggregates.drop_unchanged`; only for unqualified GROUP BY keys). The engine
  still needs the events around the slice (one window before and after) for windows and
  negation.
"""

from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import UnsupportedQuery
from ..events import EventBatch
from ..lang.model import Query
from ..result import Result, output_kinds
from .aggregates import combine_rows

STATE_FORMAT = 1

#: the numeric modes: "exact" (integers of any size, the default; every engine equals the
#: reference) and "float" (COUNT, SUM and AVG in float64: approximate, faster; see
#: :mod:`cepagg.engines.floats`)
NUMBERS = ("exact", "float")


def check_numbers(numbers: str) -> str:
    """``numbers`` if it names a numeric mode (:data:`NUMBERS`), else ValueError in one line."""
    if numbers not in NUMBERS:
        raise ValueError(f"numbers={numbers!r}: expected 'exact' or 'float'")
    return numbers


@runtime_checkable
class Evaluator(Protocol):
    """What every driver (the in-process runner, Spark's batch, workload and streaming drivers,
    the ordering layer) calls on an engine, or on a workload of queries evaluated together.

    ``cheap_advance``: ``advance`` costs in proportion to what it releases, so a driver may call
    it after every batch. ``partial``, ``start_range``: the options the evaluator was built with
    (see the module docstring). ``run`` evaluates a whole batch: a
    :class:`~cepagg.result.Result` for an engine, one per query for a workload.
    """

    cheap_advance: bool
    partial: bool
    start_range: tuple[int, int] | None
    numbers: str

    def new_state(self) -> Any: ...

    def process(self, state: Any, batch: EventBatch) -> list: ...

    def advance(self, state: Any, watermark: int) -> list: ...

    def finish(self, state: Any) -> list: ...

    def snapshot(self, state: Any) -> bytes: ...

    def restore(self, data: bytes) -> Any: ...

    def run(self, batch: EventBatch) -> Any: ...


class Engine(ABC):
    """Base class of engines. Subclasses set ``name`` and implement the four steps."""

    name: ClassVar[str] = "engine"
    #: ``advance`` costs in proportion to what it releases, not to the state it holds: a caller
    #: may call it after every batch (Spark's batch driver does)
    cheap_advance: ClassVar[bool] = True
    #: set by a driver that writes matches as they are found (:func:`cepagg.runner.match_feed`):
    #: an engine that finds matches one by one (rcep, nfa) hands its pending rows to
    #: ``spill(rows)`` in the middle of a call once it holds ``spill_rows`` of them, and returns
    #: only the rest, so one event ending millions of matches never makes a list of them all
    spill: Any = None
    spill_rows: int = 1 << 16
    #: the engine computes in float64 itself when built with ``numbers="float"``; the plan
    #: converts the exact rows of the others
    float_native: ClassVar[bool] = False

    def __init__(self, query: Query, *, partial: bool = False,
                 start_range: tuple[int, int] | None = None, numbers: str = "exact"):
        reason = self.refusal(query)
        if reason:
            raise UnsupportedQuery(self.name, reason)
        if partial and (query.mode == "emit" or query.returns_matches):
            raise UnsupportedQuery(self.name, "partial rows exist for aggregates under WITHIN "
                                   "alone or SLIDE only")
        self.query = query
        self.partial = partial
        self.start_range = start_range
        self.numbers = check_numbers(numbers)

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        """Why this engine cannot evaluate ``query`` (None when it can)."""
        return None

    @abstractmethod
    def new_state(self) -> Any: ...

    @abstractmethod
    def process(self, state: Any, batch: EventBatch) -> list[tuple]: ...

    def advance(self, state: Any, watermark: int) -> list[tuple]:
        return []

    @abstractmethod
    def finish(self, state: Any) -> list[tuple]: ...

    def snapshot(self, state: Any) -> bytes:
        return pickle.dumps((STATE_FORMAT, self.name, state), protocol=5)

    def restore(self, data: bytes) -> Any:
        version, name, state = pickle.loads(data)
        if version != STATE_FORMAT or name != self.name:
            raise ValueError(f"state of {name} format {version} cannot be restored by "
                             f"{self.name} format {STATE_FORMAT}")
        return state

    def run(self, batch: EventBatch) -> Result:
        """Evaluate over a whole batch (sorted here) and return the final, sorted result."""
        state = self.new_state()
        rows = self.process(state, batch.sorted())
        rows += self.finish(state)
        if self.numbers == "float":  # (an engine computing in float64 itself: float_native)
            from .floats import final_result

            return final_result(self.query, rows, self.partial, batch)
        if self.partial:
            rows = combine_rows(self.query, rows)
        kinds = output_kinds(self.query, batch.attribute_kinds())
        return Result(self.query.output_columns, rows, kinds).sorted()


@dataclass
class StoredEvents:
    """State of an engine that evaluates stored events at once: the events, and the keys of the
    rows ``advance`` has already returned."""

    events: list = field(default_factory=list)
    emitted: set = field(default_factory=set)


class Recomputing(Engine):
    """Engines that keep every event and evaluate them all at once — the reference evaluator and
    the two-step baselines. ``advance`` re-evaluates and returns the rows that became final
    (closed SLIDE windows, EMIT instants up to the watermark); WITHIN-alone totals and matches
    come at ``finish``. Meant for tests and baselines, not for long streams."""

    cheap_advance = False  # every call re-evaluates every stored event

    @abstractmethod
    def evaluate(self, events: list) -> list[tuple]:
        """Every result row over ``events`` (sorted by ts, id)."""

    def new_state(self) -> StoredEvents:
        return StoredEvents()

    def process(self, state: StoredEvents, batch: EventBatch) -> list[tuple]:
        state.events.extend(batch.events())
        return []

    def _rows(self, state: StoredEvents) -> list[tuple]:
        return self.evaluate(sorted(state.events, key=lambda e: (e.ts, e.id)))

    def _key(self, row: tuple) -> tuple:
        q = self.query
        width = len(q.group_by) + (2 if q.mode == "slide" else 1 if q.mode == "emit" else 0)
        return tuple(row[:width])

    def advance(self, state: StoredEvents, watermark: int) -> list[tuple]:
        q = self.query
        if q.mode == "total" or q.returns_matches:
            return []
        groups = len(q.group_by)
        out = []
        for row in self._rows(state):
            final = row[groups + 1] - 1 <= watermark if q.mode == "slide" else row[groups] <= watermark
            key = self._key(row)
            if final and key not in state.emitted:
                state.emitted.add(key)
                out.append(row)
        return out

    def finish(self, state: StoredEvents) -> list[tuple]:
        if self.query.mode == "total" or self.query.returns_matches:
            return self._rows(state)
        rows = [r for r in self._rows(state) if self._key(r) not in state.emitted]
        state.emitted.update(self._key(r) for r in rows)
        return rows
