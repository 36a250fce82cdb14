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

A query that returns matches is the union of its disjuncts' matches, each disjunct a flat
query on a match engine (:mod:`.union`); the runners below feed both kinds alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ...events import EventBatch
from ...lang.model import Query
from ..aggregates import combine_rows, funcs_of, key_width, merge
from ..base import Engine
from .terms import Decomposition, NotDecomposable, Term, decompose, interleaving_lines
from .union import MatchPlan, MatchUnion
from .union import explain_lines as union_lines

#: engines a term may run on: they aggregate without enumerating matches
FAST = ("aseq", "greta")


@dataclass
class NeelState:
    runners: list[Any]                                   # one state per runner
    held: dict[tuple, tuple] = field(default_factory=dict)  # key -> merged partial cells
    #: per runner with a time transform: events at their partition's last time, not yet given
    #: (the next batch may bring more events at that time, which the transform may put first)
    waiting: list[Any] = field(default_factory=list)


@dataclass
class Runner:
    """Terms evaluated together: those on aseq with the same time transform share one aseq
    workload (its PreTree shares their common prefixes, Chop-Connect other common parts, chosen
    by its cost model); a term on greta runs alone."""

    engine: str
    terms: list[int]
    evaluator: Any
    scale: int
    offsets: dict[str, int]
    keys: tuple[str, ...]  # partition attributes (the order a transform must keep)
    witnesses: dict[str, tuple] = field(default_factory=dict)

    @property
    def shared(self) -> bool:
        return self.engine == "aseq"

    @property
    def rewrites(self) -> bool:
        """The runner sees a changed stream (times transformed, witness events added), which
        depends on all events at a time: those at a partition's last time wait for the next batch."""
        return self.scale != 1 or bool(self.witnesses)


def runners_of(terms: list[Term], start_range=None, external: frozenset[int] = frozenset()) -> list[Runner]:
    """The terms grouped into runners. Terms on aseq with the same time transform share one
    workload; terms that ignore events of types they do not name (:func:`_blind`) share it
    whatever their witness types, the runner adding the witness events of all of them (a term
    never sees another's witness types), so that the disjuncts of a negated sequence -- one
    witness chain longer each -- run as one PreTree over one stream. Terms in ``external`` get
    no runner: a workload runs them in its shared plan (:func:`shared_term_refusal`)."""
    groups: dict[tuple, list[int]] = {}
    engines = [engine_of(t) for t in terms]
    for i, (t, e) in enumerate(zip(terms, engines)):
        if i in external:
            continue
        if e != "aseq":
            key: tuple = (e, i)
        else:
            key = (e, t.scale, tuple(sorted(t.offsets.items())), t.query.partition_by,
                   "blind" if _blind(t) else tuple(sorted(t.witnesses.items())))
        groups.setdefault(key, []).append(i)
    out = []
    for members in groups.values():
        t = terms[members[0]]
        rng = None if start_range is None else (start_range[0] * t.scale, start_range[1] * t.scale)
        witnesses = {w: v for i in members for w, v in terms[i].witnesses.items()}
        if engines[members[0]] == "aseq":
            from ..aseq.workload import Workload

            ev = Workload([terms[i].query for i in members], partial=True, start_range=rng)
        else:
            ev = _ENGINES()[engines[members[0]]](t.query, partial=True, start_range=rng)
        out.append(Runner(engines[members[0]], members, ev, t.scale, dict(t.offsets), t.query.partition_by,
                          witnesses))
    return out


def _blind(t: Term) -> bool:
    """The term reads no event of a type it does not name: every variable typed, and no
    equivalence or stream filter (which would read the attributes of a witness event)."""
    q = t.query
    return all(v.type is not None for v in q.variables.values()) and not q.equivalences and not q.stream_filters


def shared_term_refusal(t: Term) -> str | None:
    """Why the term cannot join a workload's shared aseq plan, whose queries all read the
    workload's events as they are (None: it can)."""
    engine = engine_of(t)
    if engine != "aseq":
        return f"runs on {engine}"
    if t.scale != 1 or any(t.offsets.values()):
        return f"reads times scaled to {t.scale}*ts + offset per type (an interleaving of an AND)"
    if t.witnesses:
        return ("reads witness events of " + ", ".join(sorted({b for b, _ in t.witnesses.values()}))
                + " added to the stream (a negated sequence)")
    return None


class Neel(Engine):
    name = "neel"

    def __init__(self, query: Query, *, partial: bool = False,
                 start_range: tuple[int, int] | None = None, numbers: str = "exact",
                 match_groups: list[tuple[int, ...]] | None = None, density: float | None = None,
                 external: frozenset[int] = frozenset()):
        """For a query returning matches: ``match_groups``, the partition of its disjuncts into
        units to run instead of Plan-Finder's; ``density``, events of each type per window of a
        partition, for Plan-Finder's cost model (:mod:`.plan_finder`; default: its ``DENSITY``).
        ``external``: terms (indices into ``decompose(query).terms``) the engine does not run:
        a workload runs them in its shared aseq plan and hands their rows to :meth:`take`
        (:mod:`.workload`)."""
        super().__init__(query, partial=partial, start_range=start_range, numbers=numbers)
        if query.returns_matches:  # the union of the disjuncts' matches (:mod:`.union`)
            from .union import match_plan

            self.plan = match_plan(query, match_groups, density)
            self.union = MatchUnion(self, self.plan, start_range)
            self.runners = self.union.runners
            return
        self.plan = decompose(query)
        self.union = None
        self.funcs = funcs_of(query)
        self.width = key_width(query)
        self.external = frozenset(external)
        self.runners = runners_of(self.plan.terms, start_range, self.external)

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        try:
            plan = decompose(query)
            if not query.returns_matches:
                for t in plan.terms:
                    engine_of(t)
        except NotDecomposable as e:
            return str(e)
        return None

    # -- protocol ------------------------------------------------------------------------------

    def new_state(self) -> NeelState:
        if self.union is not None:
            return self.union.new_state()
        return NeelState([r.evaluator.new_state() for r in self.runners], waiting=[None] * len(self.runners))

    def process(self, state: NeelState, batch: EventBatch) -> list[tuple]:
        if self.union is not None:
            return self.union.process(state, batch)
        rows = []
        for r, got in fed(self.runners, state.runners, state.waiting, batch):
            rows += self._signed(r, got)
        return self._out(state, rows, None)

    def advance(self, state: NeelState, watermark: int) -> list[tuple]:
        if self.union is not None:
            return self.union.advance(state, watermark)
        rows = []
        for r, got in advanced(self.runners, state.runners, state.waiting, watermark):
            rows += self._signed(r, got)
        return self._out(state, rows, watermark)

    def finish(self, state: NeelState) -> list[tuple]:
        if self.union is not None:
            return self.union.finish(state)
        rows = []
        for r, got in finished(self.runners, state.runners, state.waiting):
            rows += self._signed(r, got)
        out = self._out(state, rows, None)
        if self.partial:
            return out
        held = [k + cells for k, cells in state.held.items()]
        state.held.clear()
        return out + combine_rows(self.query, held)

    # -- combining -----------------------------------------------------------------------------

    def take(self, state: NeelState, k: int, rows: list[tuple]) -> list[tuple]:
        """Partial rows of external term ``k`` (from a shared workload), added to the query's:
        returned signed at once when ``partial``, else held for :meth:`advance` and
        :meth:`finish` to release."""
        return self._out(state, [self._term_row(k, row) for row in rows], None)

    def _signed(self, r: Runner, rows: list) -> list[tuple]:
        """A runner's rows as partial rows of the whole query."""
        out = []
        for row in rows:
            if r.shared:
                qi, row = row
                out.append(self._term_row(r.terms[qi], row))
            else:
                out.append(self._term_row(r.terms[0], row))
        return out

    def _term_row(self, k: int, row: tuple) -> tuple:
        """A partial row of term ``k`` as a partial row of the whole query: window columns back
        in the query's time, cells in the query's order, signed."""
        t = self.plan.terms[k]
        groups = len(self.query.group_by)
        sub_width = key_width(t.query)
        key = row[:sub_width]
        if t.scale != 1 and self.query.mode == "slide":
            key = key[:groups] + tuple(x // t.scale for x in key[groups:])
        cells = row[sub_width:]
        return tuple(key) + tuple(_cell(f, None if i is None else cells[i], t) for f, i in zip(self.funcs, t.cells))

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


def fed(runners: list[Runner], states: list, waiting: list, batch: EventBatch) -> Iterator[tuple[Runner, list]]:
    """Each runner's rows over ``batch`` (seen through its time transform and witness events;
    ``waiting`` holds, per runner, the events at a partition's last time not given yet)."""
    for k, (r, s) in enumerate(zip(runners, states)):
        if r.rewrites:
            now, waiting[k] = _hold_last(_joined(waiting[k], batch), r.keys)
            yield r, r.evaluator.process(s, _timed(now, r))
        else:
            yield r, r.evaluator.process(s, batch)


def advanced(runners: list[Runner], states: list, waiting: list, watermark: int) -> Iterator[tuple[Runner, list]]:
    """Each runner's rows once no event at or before ``watermark`` (query time) is to come."""
    for k, (r, s) in enumerate(zip(runners, states)):
        rows = []
        if waiting[k] is not None:  # nothing more comes at times <= watermark
            ready, waiting[k] = _split_at(waiting[k], watermark)
            rows += r.evaluator.process(s, _timed(ready, r))
        rows += r.evaluator.advance(s, watermark * r.scale + r.scale - 1)
        yield r, rows


def finished(runners: list[Runner], states: list, waiting: list) -> Iterator[tuple[Runner, list]]:
    """Each runner's last rows: the events still waiting, then its ``finish``."""
    for k, (r, s) in enumerate(zip(runners, states)):
        rows = []
        if waiting[k] is not None:
            rows += r.evaluator.process(s, _timed(waiting[k], r))
            waiting[k] = None
        rows += r.evaluator.finish(s)
        yield r, rows


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
    code = np.zeros(len(ts), np.int64)
    for k in keys:
        if k not in batch.table.column_names:
            continue
        enc = pa.compute.dictionary_encode(batch.table.column(k), null_encoding="encode").combine_chunks()
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        code = np.unique(code * (len(enc.dictionary) + 1) + idx, return_inverse=True)[1].reshape(-1)
    last = np.full(int(code.max()) + 1, np.iinfo(np.int64).min, np.int64)
    np.maximum.at(last, code, ts)
    hold = ts == last[code]
    return (EventBatch(batch.table.filter(pa.array(~hold)), batch.time_unit),
            EventBatch(batch.table.filter(pa.array(hold)), batch.time_unit))


def _split_at(batch: EventBatch, watermark: int) -> tuple[EventBatch, EventBatch | None]:
    ts = batch.table.column("ts").to_numpy()
    early = ts <= watermark
    rest = EventBatch(batch.table.filter(pa.array(~early)), batch.time_unit)
    return EventBatch(batch.table.filter(pa.array(early)), batch.time_unit), (rest if len(rest) else None)


def _timed(batch: EventBatch, t: Runner) -> EventBatch:
    """The batch as the runner sees it: with witness events, in the term's time (``K*ts +
    offset(type)``), in stream order."""
    if not t.rewrites or len(batch) == 0:
        return batch
    if t.witnesses:
        batch = with_witnesses(batch, t.witnesses, t.keys)
        if t.scale == 1:
            return batch.sorted()
    table = batch.table
    ts = table.column("ts").to_numpy().astype(np.int64) * t.scale
    types = table.column("type").to_numpy(zero_copy_only=False)
    for name, off in t.offsets.items():
        if off:
            ts = ts + off * (types == name)
    table = table.set_column(table.schema.get_field_index("ts"), "ts", pa.array(ts, pa.int64()))
    return EventBatch(table, batch.time_unit).sorted()


def with_witnesses(batch: EventBatch, witnesses: dict, keys: tuple[str, ...]) -> EventBatch:
    """The batch and, per witness type, one witness event per partition and time of its type's
    events with no event of its excluded types (:mod:`.witness`); witness events carry the
    partition attributes, their other attributes are null."""
    table = batch.table
    types = table.column("type")
    cols = [k for k in keys if k in table.column_names] + ["ts"]
    parts = [table]
    next_id = -1
    for wtype, (base, excluded) in sorted(witnesses.items()):
        times = _times(table, types, [base], cols)
        if excluded and times.num_rows:
            times = times.join(_times(table, types, list(excluded), cols), cols, join_type="left anti",
                               use_threads=False)
        n = times.num_rows
        if n == 0:
            continue
        arrays = []
        for f in table.schema:
            if f.name == "_id":
                arrays.append(pa.array(np.arange(next_id, next_id - n, -1, dtype=np.int64), f.type))
            elif f.name == "type":
                arrays.append(pa.array([wtype] * n, f.type))
            elif f.name in cols:
                arrays.append(times.column(f.name).cast(f.type))
            else:
                arrays.append(pa.nulls(n, f.type))
        next_id -= n
        parts.append(pa.Table.from_arrays(arrays, schema=table.schema))
    return EventBatch(pa.concat_tables(parts), batch.time_unit)


def _times(table: pa.Table, types, names: list[str], cols: list[str]) -> pa.Table:
    """The distinct (partition, ts) of the events of the given types."""
    sel = table.filter(pa.compute.is_in(types, pa.array(names, types.type)))
    return sel.select(cols).group_by(cols, use_threads=False).aggregate([])


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


def explain_lines(plan: Decomposition | MatchPlan) -> list[str]:
    """What ``explain`` shows of the decomposition: the terms, how they add up, and how they run
    (which engine, which terms share one aseq plan, and that plan with its cost estimates); of
    a query returning matches, its disjuncts and their match engines (:mod:`.union`)."""
    if isinstance(plan, MatchPlan):
        return union_lines(plan)
    lines = []
    lines += interleaving_lines(plan.interleavings)
    lines.append(f"neel terms ({len(plan.terms)}), each with partial cells:")
    for k, t in enumerate(plan.terms):
        sign = "+" if t.sign > 0 else "-"
        lines.append(f"  t{k}: {sign} {t.text}")
    lines += [f"combined: {n}" for n in plan.disjoint_note]
    for r in runners_of(plan.terms):
        names = ", ".join(f"t{k}" for k in r.terms)
        time = ("" if r.scale == 1 else
                f" over times {r.scale}*ts + offset (" + ", ".join(f"{k} {v}" for k, v in r.offsets.items()) + ")")
        if r.witnesses:
            time += (", with witness events (one per partition and time) of "
                     + ", ".join(sorted({b for b, _ in r.witnesses.values()})))
        if r.shared:
            lines.append(f"aseq workload for {names}{time}:")
            text = r.evaluator.explain()
            for i, k in sorted(enumerate(r.terms), reverse=True):
                text = text.replace(f"q{i}", f"t{k}")
            lines += ["  " + line for line in text.splitlines()]
        else:
            lines.append(f"{r.engine} for {names}{time}")
    return lines
