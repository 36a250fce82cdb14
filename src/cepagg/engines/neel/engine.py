"""``neel``: a nested query as flat queries on the fast engines, combined exactly.

The query is decomposed (:mod:`.terms`) into signed flat terms -- the disjuncts of its NEEL
normal form, their intersections where disjuncts share matches, the interleavings of an AND.
Each term runs on the engine the planner picks for it among the aggregate engines that do
not enumerate matches (aseq, greta), with partial cells (``partial=True``); the rows are
combined with :func:`~cepagg.engines.aggregates.merge` after signing them, and finalised with
:func:`~cepagg.engines.aggregates.combine_rows`.

A row of the whole query is final only when every term has said its last word on it, so
without ``partial`` rows are held: SLIDE windows until ``advance`` passes their end (every term
has then emitted the window, by the protocol), WITHIN-alone totals until ``finish``. With
``partial=True`` the signed rows go out at once: the caller merges partial rows anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ...events import EventBatch
from ...lang.model import Query
from ..aggregates import combine_rows, funcs_of, key_width, merge
from ..base import Engine
from .terms import Decomposition, NotDecomposable, Term, decompose

#: engines a term may run on: they aggregate without enumerating matches
FAST = ("aseq", "greta")


@dataclass
class NeelState:
    terms: list[Any]                                     # one state per term
    held: dict[tuple, tuple] = field(default_factory=dict)  # key -> merged partial cells
    #: per term with a time transform: events at their partition's last time, not yet given
    #: (the next batch may bring more events at that time, which the transform puts first)
    waiting: list[Any] = field(default_factory=list)


class Neel(Engine):
    name = "neel"

    def __init__(self, query: Query, *, partial: bool = False,
                 start_range: tuple[int, int] | None = None):
        super().__init__(query, partial=partial, start_range=start_range)
        self.plan = decompose(query)
        self.funcs = funcs_of(query)
        self.width = key_width(query)
        self.engines = []
        for t in self.plan.terms:
            engine = engine_of(t)
            rng = None if start_range is None else (start_range[0] * t.scale, start_range[1] * t.scale)
            self.engines.append(_ENGINES()[engine](t.query, partial=True, start_range=rng))

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        try:
            plan = decompose(query)
            for t in plan.terms:
                engine_of(t)
        except NotDecomposable as e:
            return str(e)
        return None

    # -- protocol ------------------------------------------------------------------------------

    def new_state(self) -> NeelState:
        return NeelState([e.new_state() for e in self.engines], waiting=[None] * len(self.engines))

    def process(self, state: NeelState, batch: EventBatch) -> list[tuple]:
        rows = []
        for k, (t, e, s) in enumerate(zip(self.plan.terms, self.engines, state.terms)):
            if t.scale != 1:
                batch_k, state.waiting[k] = _hold_last(_joined(state.waiting[k], batch),
                                                        t.query.partition_by)
                rows += self._signed(t, e.process(s, _timed(batch_k, t)))
            else:
                rows += self._signed(t, e.process(s, batch))
        return self._out(state, rows, None)

    def advance(self, state: NeelState, watermark: int) -> list[tuple]:
        rows = []
        for k, (t, e, s) in enumerate(zip(self.plan.terms, self.engines, state.terms)):
            if state.waiting[k] is not None:  # nothing more at times <= watermark
                ready, state.waiting[k] = _split_at(state.waiting[k], watermark)
                rows += self._signed(t, e.process(s, _timed(ready, t)))
            rows += self._signed(t, e.advance(s, watermark * t.scale + t.scale - 1))
        return self._out(state, rows, watermark)

    def finish(self, state: NeelState) -> list[tuple]:
        rows = []
        for k, (t, e, s) in enumerate(zip(self.plan.terms, self.engines, state.terms)):
            if state.waiting[k] is not None:
                rows += self._signed(t, e.process(s, _timed(state.waiting[k], t)))
                state.waiting[k] = None
            rows += self._signed(t, e.finish(s))
        out = self._out(state, rows, None)
        if self.partial:
            return out
        held = [k + cells for k, cells in state.held.items()]
        state.held.clear()
        return out + combine_rows(self.query, held)

    # -- combining -----------------------------------------------------------------------------

    def _signed(self, t: Term, rows: list[tuple]) -> list[tuple]:
        """Term rows as partial rows of the whole query: window columns back in the query's
        time, cells in the query's order, signed."""
        groups = len(self.query.group_by)
        sub_width = key_width(t.query)
        out = []
        for row in rows:
            key = row[:sub_width]
            if t.scale != 1 and self.query.mode == "slide":
                key = key[:groups] + tuple(x // t.scale for x in key[groups:])
            cells = row[sub_width:]
            out.append(tuple(key) + tuple(_cell(f, None if i is None else cells[i], t)
                                          for f, i in zip(self.funcs, t.cells)))
        return out

    def _out(self, state: NeelState, rows: list[tuple], watermark: int | None) -> list[tuple]:
        if self.partial:
            return rows
        w = self.width
        for row in rows:
            key, cells = row[:w], row[w:]
            state.held[key] = merge(self.funcs, state.held[key], cells) if key in state.held else cells
        if watermark is None or self.query.mode != "slide":
            return []
        groups = len(self.query.group_by)
        ready = [k for k in state.held if k[groups + 1] - 1 <= watermark]
        return combine_rows(self.query, [k + state.held.pop(k) for k in ready])

    def explain_lines(self) -> list[str]:
        return explain_lines(self.plan)


def _cell(func: str, value: Any, t: Term) -> Any:
    if value is None and func == "COUNT":
        return 0
    if func == "COUNT":
        return t.sign * value
    if func in ("SUM", "AVG"):
        if value is None:
            return (0, 0)
        return (t.sign * value[0], t.sign * value[1])
    return value if t.size == 1 else None  # MIN/MAX: the disjuncts alone


def _joined(waiting: EventBatch | None, batch: EventBatch) -> EventBatch:
    if waiting is None or len(waiting) == 0:
        return batch
    table = pa.concat_tables([waiting.table, batch.table], promote_options="permissive")
    return EventBatch(table, batch.time_unit)


def _hold_last(batch: EventBatch, keys: tuple[str, ...]) -> tuple[EventBatch, EventBatch | None]:
    """(events to give now, events at their partition's last time in the batch, held)."""
    if len(batch) == 0:
        return batch, None
    ts = batch.table.column("ts").to_numpy()
    if keys:
        cols = [batch.table.column(k).to_pylist() if k in batch.table.column_names else [None] * len(ts)
                for k in keys]
        last: dict = {}
        ids = list(zip(*cols))
        for key, t in zip(ids, ts.tolist()):
            if last.get(key, t) <= t:
                last[key] = t
        hold = np.fromiter((t == last[key] for key, t in zip(ids, ts.tolist())), bool, len(ts))
    else:
        hold = ts == ts.max()
    return (EventBatch(batch.table.filter(pa.array(~hold)), batch.time_unit),
            EventBatch(batch.table.filter(pa.array(hold)), batch.time_unit))


def _split_at(batch: EventBatch, watermark: int) -> tuple[EventBatch, EventBatch | None]:
    ts = batch.table.column("ts").to_numpy()
    early = ts <= watermark
    rest = EventBatch(batch.table.filter(pa.array(~early)), batch.time_unit)
    return EventBatch(batch.table.filter(pa.array(early)), batch.time_unit), (rest if len(rest) else None)


def _timed(batch: EventBatch, t: Term) -> EventBatch:
    """The batch in the term's time (``K*ts + offset(type)``), in stream order."""
    if t.scale == 1 or len(batch) == 0:
        return batch
    table = batch.table
    ts = table.column("ts").to_numpy().astype(np.int64) * t.scale
    types = table.column("type").to_numpy(zero_copy_only=False)
    for name, off in t.offsets.items():
        if off:
            ts = ts + off * (types == name)
    table = table.set_column(table.schema.get_field_index("ts"), "ts", pa.array(ts, pa.int64()))
    return EventBatch(table, batch.time_unit).sorted()


def engine_of(t: Term) -> str:
    """The engine the planner picks for a term; raises :class:`NotDecomposable` unless it is one
    of :data:`FAST`."""
    from ...plan.planner import PREFERENCE

    refusals = []
    for name in PREFERENCE:
        if name not in FAST:
            continue
        reason = _ENGINES()[name].refusal(t.query)
        if reason is None:
            return name
        refusals.append(f"{name}: {reason}")
    raise NotDecomposable(f"no aggregate engine takes the flat pattern {t.text} ({'; '.join(refusals)})")


def _ENGINES():
    from .. import ENGINES

    return ENGINES


def explain_lines(plan: Decomposition) -> list[str]:
    """What ``explain`` shows of the decomposition: the terms, their engines, how they add up."""
    lines = []
    if plan.interleavings:
        lines.append("AND inside SEQ: the union of its interleavings (disjoint; tied events in the "
                     "AND's written order only)")
        lines += [f"  {x}" for x in plan.interleavings]
    lines.append(f"neel terms ({len(plan.terms)}), each with partial cells:")
    for t in plan.terms:
        sign = "+" if t.sign > 0 else "-"
        time = ("" if t.scale == 1 else
                f", times {t.scale}*ts + " + "/".join(f"{k}:{v}" for k, v in t.offsets.items()))
        lines.append(f"  {sign} {t.text}  [{engine_of(t)}{time}]")
    lines += [f"combined: {n}" for n in plan.disjoint_note]
    return lines
