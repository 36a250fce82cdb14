"""The rcep engine: recomputation-based CEP behind cepagg's engine protocol.

Kammoun et al., "All that Incremental is not Efficient: Towards Recomputation Based Complex
Event Processing for Expensive Queries", EDBT 2018 (RCEP): keep only the events of the window,
one time-ordered buffer per variable (:mod:`.buffers`), and no partial match; when an event that
can bind the last variable arrives (a trigger), recompute the matches that end at it by joining
the buffers (:mod:`.plan`, :mod:`.join`). Matches become result rows, or are folded into
aggregates, as they are found (:mod:`.output`).

Per partition key, in stream order:

1. the partition's time moves to the event's: triggers whose matches could be waiting for a
   trailing negation and whose scope has now passed are recomputed, and events too old for any
   pending or future match leave the buffers;
2. the event enters the buffer of every variable it may bind (type, stream filters, local
   conditions; an untyped variable takes any event), and of every negated variable;
3. if it entered the last variable's buffer it is a trigger: its matches are recomputed now, or,
   when the pattern ends with a negation, once the negation's scope has passed (its end is
   ``first + w`` under WITHIN alone and the window's end under SLIDE, docs/semantics.md §4).
   Under SLIDE a trigger is recomputed once per window containing it, that window being the
   scope of its leading and trailing negation.

Accepted: a flat ``SEQ`` (or a single variable) of typed and untyped variables, each a single
event or Kleene plus of one event; ``NOT`` and ``EXISTS`` of one event in any gap (leading,
between, trailing), with their own conditions; any condition between variables, with
NEXT/FIRST/LAST; stream filters; partition attributes, equivalences on a variable, GROUP BY a
partition attribute or a variable's attribute; ``WITHIN d`` alone or with ``SLIDE``; RETURN of
events or aggregates (COUNT, SUM, AVG, MIN, MAX); skip-till-any-match; the protocol's ``partial``
and ``start_range``. Refused with a reason (:func:`.shape.refusal`): EMIT ON CHANGE, WITHIN n
EVENTS, no window, other selection strategies, AND/OR and nested SEQ, Kleene or negation of a
sub-pattern, inner windows, a variable written twice. Results equal the reference evaluator's;
match numbers follow the order of discovery (:mod:`.output`).

Two joins: queries whose conditions between variables compute on numbers (AND/OR/NOT of
comparisons with arithmetic; no NOT/EXISTS in the pattern, no equivalence on a Kleene variable,
no GROUP BY a variable's attribute) take the compiled join (:mod:`.compiled`: a numba kernel,
conditions checked as a match grows, aggregates folded from per-event counts of the matches,
matches handed over as arrays); every other query takes the Python join (:mod:`.join`).
``cepagg explain`` says which.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import InputError
from ...events import ID, EventBatch
from ...lang.expr import holds
from ...lang.model import Query
from ..base import Engine
from ..reference.evaluate import empty_result, partition_key
from . import output
from .buffers import Buffer
from .compiled import CompiledJoin, Store, compiled_refusal, numeric
from .join import Join
from .plan import choose_order, compile_steps
from .shape import refusal, shape_of

NEG_INF = -(2**62)
POS_INF = 2**62


@dataclass
class Partition:
    buffers: list  # per position: Buffer
    negs: list  # per negation: Buffer
    last_ts: int = NEG_INF
    pending: list = field(default_factory=list)  # heap (deadline, seq, trigger, window start)
    store: Any = None  # the compiled path's events (compiled.Store), instead of the buffers
    expire_at: int = NEG_INF  # (compiled path) when the buffers next drop old events


@dataclass
class RcepState:
    partitions: dict = field(default_factory=dict)
    next_match: int = 1
    seq: int = 0
    totals: dict = field(default_factory=dict)  # WITHIN alone: group -> Acc
    windows: dict = field(default_factory=dict)  # SLIDE: group + (start, end) -> Acc
    kinds: dict = field(default_factory=dict)  # (compiled path) aggregated attribute -> "int" or "float"


class Rcep(Engine):
    name = "rcep"
    #: matches are enumerated by the compiled kernel where it applies (:mod:`.compiled`)
    compiles: ClassVar[bool] = True
    #: set by a driver that takes matches as :class:`cepagg.matches.MatchBlock` through ``spill``
    #: (:func:`cepagg.runner.match_feed`); otherwise the compiled path returns tuples
    spill_blocks: bool = False

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        return refusal(query)

    def __init__(self, query: Query, **kw: Any):
        super().__init__(query, **kw)
        q = query
        self.shape = shape_of(q)
        self.w = q.within
        self.slide = q.slide
        self.lo, self.hi = self.start_range if self.start_range is not None else (NEG_INF, POS_INF)
        self.trailing = self.shape.trailing
        self.join = Join(self.shape, self.w)
        self._steps: dict[tuple, tuple] = {}
        self._rows = output.MatchRows(q)
        # a group cell: from the partition key, or (GROUP BY X.a) from X's first event
        self._groups = [(None, g.var, g.attr) if g.var is not None
                        else (q.partition_by.index(g.attr), None, None) for g in q.group_by]
        self._group_per_match = any(g.var is not None for g in q.group_by)
        # how far back a buffer must reach behind the partition's time
        self.keep = 2 * self.w - 1 if self.trailing and q.mode == "total" else self.w
        self._filters = [f.expr for f in q.stream_filters]
        self._fits_pos = [self._fits(p.var) for p in self.shape.positions]
        self._fits_neg = [self._fits(n.var) for n in self.shape.negations]
        self.compiled_refusal = compiled_refusal(q, self.shape) if self.compiles else "not this engine"
        self._compiled = CompiledJoin(q, self.shape) if self.compiled_refusal is None else None

    def _fits(self, var: str):
        vtype = self.query.members(self.query.variables[var].type)  # (a concept: the types below it)
        local = [c.expr for c in self.shape.local.get(var, ())]
        same = self.shape.same.get(var, ())

        def fits(e) -> bool:
            if vtype is not None and e.type not in vtype:
                return False
            if any(e.get(a) is None for a in same):
                return False  # an equivalence attribute must have a value
            return all(holds(x, lambda node: e.get(node.name)) for x in local)
        return fits

    # -- protocol -----------------------------------------------------------------------------

    def new_state(self) -> RcepState:
        return RcepState()

    def process(self, state: RcepState, batch: EventBatch) -> list[tuple]:
        if self._compiled is not None:
            values = self._slot_values(batch, state)
            if values is not None:
                out = self._process_compiled(state, batch, values)
                self._hand_over()
                return out
            self._leave_compiled(state)
        out: list[tuple] = []
        q = self.query
        k = len(self.shape.positions)
        for e in batch.events():
            key = partition_key(q, e)
            if key is None:
                continue
            part = state.partitions.get(key)
            if part is None:
                part = state.partitions[key] = Partition([Buffer() for _ in range(k)],
                                                          [Buffer() for _ in self.shape.negations])
            if not self._admit(state, key, part, e, out):
                continue
            trigger = False
            for i, (b, fits) in enumerate(zip(part.buffers, self._fits_pos)):
                if fits(e):
                    b.append(e)
                    trigger = i == k - 1
            if trigger:
                self._trigger(state, key, part, e, out)
        self._hand_over()
        return out

    def _slot_values(self, batch: EventBatch, state: RcepState):
        """The values of the attributes the compiled join reads (float64, NaN for a null,
        one row per slot), or None when one of them holds values it does not compare as the
        reference does (:func:`~.compiled.numeric`), or an aggregated one holds infinities or
        values of another kind (integer, float) than before: aggregates return the values'
        kind, which the float64 store does not keep. Records the aggregated attributes' kinds in
        ``state.kinds``."""
        slots, aggregated = self._compiled.slots, self._compiled.agg_slots
        n = len(batch)
        vals = np.full((len(slots), n), np.nan, dtype=np.float64)
        names = set(batch.attribute_names)
        kinds = {}
        for s, a in enumerate(slots):
            if a != "ts" and a not in names:
                continue  # missing: null everywhere
            col = batch.table.column(a)
            if pa.types.is_null(col.type):
                continue
            if pa.types.is_integer(col.type):
                lo_hi = pc.min_max(col).as_py()
                if any(v is not None and not numeric(v, self._compiled.limit) for v in lo_hi.values()):
                    return None
                kinds[a] = "int"
            elif not pa.types.is_floating(col.type) or pc.any(pc.is_nan(col)).as_py():
                return None
            else:
                kinds[a] = "float"
                if a in aggregated and not pc.all(pc.is_finite(col)).as_py():
                    return None
            vals[s] = pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False)
        for a in aggregated:
            if a in kinds and state.kinds.setdefault(a, kinds[a]) != kinds[a]:
                return None
        return vals

    def _leave_compiled(self, state: RcepState) -> None:
        """Move to the Python join for good (a batch holds values the compiled join does not
        compare): every partition's store becomes per-position buffers."""
        slots, k = self._compiled.slots, len(self.shape.positions)
        self.compiled_refusal = f"an attribute among {', '.join(slots)} holds values other than numbers " \
                                f"within 2^{self._compiled.limit.bit_length() - 1}" \
                                + (" (or, aggregated, infinities, or integers and floats in turn)"
                                   if self._compiled.agg_slots else "")
        self._compiled = None
        for part in state.partitions.values():
            if part.store is not None:
                part.buffers = part.store.to_buffers(k, slots, state.kinds)
                part.negs = [Buffer() for _ in self.shape.negations]
                part.store = None

    def _process_compiled(self, state: RcepState, batch: EventBatch, values) -> list[tuple]:
        """``process`` for the compiled path: the same steps over the batch's columns (no
        negation buffers, no pending triggers there). A partition keeps its events in one
        :class:`~.compiled.Store` (id, time, type and the positions each may bind), all the
        compiled join reads; a batch's events are added to it partition by partition, then the
        matches of its triggers are found (so matches come partition by partition within a
        batch). Events that no future match can use are dropped once per window of time per
        partition, before a batch's events are added (a store holds at most about two windows
        and a batch). Event objects are made only where a local condition, an equivalence or a
        stream filter must read an event's attributes."""
        out: list[tuple] = []
        q = self.query
        n = len(batch)
        if not n:
            return out
        table = batch.table
        type_col = table.column("type")
        type_codes, type_names = _type_codes(type_col)
        bits = self._position_bits(batch, type_col, type_codes, type_names)
        types = type_names[type_codes] if type_codes is not None else type_names
        ts, ids = table.column("ts").to_numpy(), table.column(ID).to_numpy()
        last = 1 << (len(self.shape.positions) - 1)
        fold = self._compiled.fold
        direct = self.slide is None and (fold or self._blocks())  # (all of a partition's triggers in one call)
        group_at = [i for i, _, _ in self._groups]
        groups = _rows_by_arrow(table, q.partition_by, n)
        if groups is None:
            names = set(batch.attribute_names)

            def column(a: str) -> list:
                if a in ("ts", "type") or a in names:
                    return table.column(a).to_pylist()
                return [None] * n

            groups = _partition_rows(list(zip(*(column(a) for a in q.partition_by))))
        for key, rows in groups.items():
            part = state.partitions.get(key)
            if part is None:
                part = state.partitions[key] = Partition([], [], store=Store(len(self._compiled.slots)))
            tixs = self._store_rows(part, key, rows, bits, ts, ids, types, values, last)
            if not tixs.size:
                continue  # (no event of the batch ends a match in this partition)
            if direct and fold:
                self._compiled.fold_into(part.store, tixs, self.lo, self.hi, self.w, tuple(key[i] for i in group_at),
                                         state.totals, state.kinds)
            elif direct:
                self._compiled.run(part.store, tixs, self.lo, self.hi, self.w, tuple(key[i] for i in group_at),
                                   state, self.spill_rows, self.spill)
            else:
                for tix in tixs.tolist():
                    self._trigger_compiled(state, key, part, tix, out)
        return out

    def _position_bits(self, batch: EventBatch, type_col, type_codes, type_names) -> np.ndarray:
        """Per event of ``batch``, the positions it may bind (bit ``p``: position ``p``): by its
        type alone, or, where a local condition, an equivalence or a stream filter reads its
        attributes, by the event as an object."""
        q, n = self.query, len(batch)
        bits = np.zeros(n, dtype=np.int64)
        if self._filters or any(self.shape.local.get(p.var) or self.shape.same.get(p.var)
                                for p in self.shape.positions):
            events = batch.events()
            passing = [all(holds(x, lambda node: e.get(node.name)) for x in self._filters) for e in events]
            for p, fits in enumerate(self._fits_pos):
                bits |= np.array([ok and fits(e) for ok, e in zip(passing, events)], dtype=np.int64) << p
            return bits
        for p in self.shape.positions:
            members = q.members(q.variables[p.var].type)
            if members is None:
                bits |= 1 << p.index
            elif type_codes is not None:  # (membership of the few distinct types, then per event)
                inside = np.array([t in members for t in type_names], dtype=np.int64)
                bits |= (inside[type_codes] if n else np.zeros(0, np.int64)) << p.index
            else:
                inside = pc.is_in(type_col, value_set=pa.array(sorted(members), pa.string()))
                bits |= inside.to_numpy(zero_copy_only=False).astype(np.int64) << p.index
        return bits

    def _store_rows(self, part: Partition, key: tuple, rows: np.ndarray, bits: np.ndarray, ts: np.ndarray,
                    ids: np.ndarray, types: np.ndarray, values, last: int) -> np.ndarray:
        """Add the batch's ``rows`` of partition ``key`` (``ts``, ``ids``, ``types``: the batch's
        columns) that may bind a position to its store (checking time order; dropping what no
        future match can use, once a window of time); returns where the triggers among them are
        stored (bit ``last`` of ``bits``)."""
        t = ts[rows]
        if t[0] < part.last_ts or (t.shape[0] > 1 and bool((t[1:] < t[:-1]).any())):
            r = np.flatnonzero(np.diff(t, prepend=part.last_ts) < 0)[0]
            self._out_of_order(key, int(t[r]), int(t[r - 1]) if r else part.last_ts)
        if t[0] >= part.expire_at:  # (once a window of time, before the batch's events)
            part.store.drop_before(int(t[0]) - self.keep + 1)
            part.expire_at = int(t[0]) + self.w
        part.last_ts = int(t[-1])
        rows = rows[bits[rows] != 0]
        store, n0 = part.store, part.store.n
        if not rows.size:
            return np.zeros(0, dtype=np.int64)
        kept = bits[rows]
        store.extend(ids[rows], ts[rows], kept, types[rows].tolist(), values[:, rows] if values.shape[0] else None)
        return n0 + np.flatnonzero(kept & last)

    def _trigger_compiled(self, state: RcepState, key: tuple, part: Partition, tix: int, out: list) -> None:
        """The compiled path's :meth:`_trigger` and :meth:`_recompute`: the matches ending at the
        event stored at ``tix`` in ``part``'s store, once per window containing it (no trailing
        negation there: none waits)."""
        store, w = part.store, self.w
        t = int(store.ts[tix])
        cells = tuple(key[i] for i, _, _ in self._groups)
        tixs = np.array([tix], dtype=np.int64)
        for wlo in self._windows_of(t):
            if wlo is None:
                lo, first_hi, window = self.lo, self.hi, ()
            else:  # (the window's events: from its start, whatever w)
                lo, first_hi, window, w = wlo, POS_INF, (wlo, wlo + self.w), POS_INF
            if self._compiled.fold:
                self._compiled.fold_into(store, tixs, lo, first_hi, w, cells + window,
                                         state.totals if wlo is None else state.windows, state.kinds)
            elif self._blocks():
                self._compiled.run(store, tixs, lo, first_hi, w, cells + window, state, self.spill_rows, self.spill)
            else:
                self._compiled.run(store, tixs, lo, first_hi, w, cells + window, state, self.spill_rows, None, out,
                                   self.spill)

    def _out_of_order(self, key: tuple, ts: int, last: int) -> None:
        raise InputError(f"events of partition {key} out of time order: time {ts} after "
                         f"{last} (the engine needs stream order per partition key; "
                         f"put an ordering strategy in front)")

    def restore(self, data: bytes) -> RcepState:
        state = super().restore(data)
        if not hasattr(state, "kinds"):  # (a state without the aggregated attributes' kinds)
            state.kinds = {}
        if self._compiled is not None:  # (a snapshot of the Python join's buffers)
            stores = {key: Store.of_buffers(part.buffers, self._compiled.slots, self._compiled.limit)
                      for key, part in state.partitions.items() if getattr(part, "store", None) is None}
            if stores and self._compiled.fold:  # (the buffers do not say which kind aggregates return)
                self._leave_compiled(state)
                self.compiled_refusal = "restored from the Python join's buffers, aggregates stay there"
            elif any(s is None for s in stores.values()):
                self._leave_compiled(state)  # (values it does not compare: the Python join)
            else:
                for key, store in stores.items():
                    state.partitions[key].store = store
                    state.partitions[key].buffers = []
                for part in state.partitions.values():
                    if not hasattr(part.store, "vals"):  # (a store of the older format, without values)
                        part.store.vals = np.empty((0, part.store.ts.shape[0]), dtype=np.float64)
        return state

    def _blocks(self) -> bool:
        """Whether matches go to the driver as blocks (else as the protocol's tuples)."""
        return self.spill is not None and self.spill_blocks

    def _hand_over(self) -> None:
        """Give the driver the block the compiled path was filling (at the end of every protocol
        call: what a call found is handed over by its end)."""
        if self._compiled is not None:
            blk = self._compiled.take_block()
            if blk is not None:
                self.spill(blk)

    def _admit(self, state: RcepState, key: tuple, part, e, out: list) -> bool:
        """Bring the partition to ``e``'s time (what ends before it is released, what the window
        no longer needs is dropped), then whether ``e`` passes the query's event filters; if it
        does, it joins the negation buffers it fits. The per-event prologue of every engine built
        on these windows (rcep, tree, nfa)."""
        if e.ts < part.last_ts:
            self._out_of_order(key, e.ts, part.last_ts)
        if e.ts > part.last_ts:
            self._due(state, key, part, e.ts - 1, out)
            part.last_ts = e.ts
            self._expire(part, e.ts - self.keep + 1)
        if self._filters and not all(holds(x, lambda n: e.get(n.name)) for x in self._filters):
            return False
        for b, fits in zip(part.negs, self._fits_neg):
            if fits(e):
                b.append(e)
        return True

    def _expire(self, part, horizon: int) -> None:
        """Drop the buffered events before ``horizon``."""
        for b in part.buffers:
            b.drop_before(horizon)
        for b in part.negs:
            b.drop_before(horizon)

    def _trigger(self, state: RcepState, key: tuple, part, e, out: list) -> None:
        """``e`` can end matches: recompute them now, or once a trailing negation's scope has
        passed."""
        for wlo in self._windows_of(e.ts):
            if self.trailing:
                deadline = (e.ts if wlo is None else wlo) + self.w - 1
                heapq.heappush(part.pending, (deadline, state.seq, e, wlo))
                state.seq += 1
            else:
                self._recompute(state, key, part, e, wlo, out)

    def advance(self, state: RcepState, watermark: int) -> list[tuple]:
        out: list[tuple] = []
        if self.trailing:  # only then are triggers waiting
            for key, part in state.partitions.items():
                self._due(state, key, part, watermark, out)
        if self.slide is not None and not self.query.returns_matches:
            done = [g for g in state.windows if g[-1] - 1 <= watermark]
            out += output.final_rows(state.windows, done, self.partial)
            for g in done:
                del state.windows[g]
        self._hand_over()
        return out

    def finish(self, state: RcepState) -> list[tuple]:
        out = self.advance(state, POS_INF)
        q = self.query
        if q.mode == "total" and not q.returns_matches:
            out += output.final_rows(state.totals, list(state.totals), self.partial)
            if not self.partial and not q.group_by and not state.totals:
                out.append(empty_result(q))  # an ungrouped aggregate has one row, as in SQL
            state.totals.clear()
        return out

    # -- triggers -----------------------------------------------------------------------------

    def _windows_of(self, ts: int) -> list:
        """Window starts containing ``ts`` that belong to this slice (None: WITHIN alone)."""
        if self.slide is None:
            return [None]
        s, w = self.slide, self.w
        return [i * s for i in range((ts - w) // s + 1, ts // s + 1) if self.lo <= i * s < self.hi]

    def _due(self, state: RcepState, key: tuple, part: Partition, upto: int, out: list) -> None:
        """Recompute the pending triggers whose scope has passed ``upto``."""
        while part.pending and part.pending[0][0] <= upto:
            _, _, e, wlo = heapq.heappop(part.pending)
            self._recompute(state, key, part, e, wlo, out)

    def _steps_for(self, part: Partition, lo: int, hi: int) -> tuple:
        sizes = [b.count(lo, hi) for b in part.buffers]
        order = choose_order(self.shape, sizes)
        steps = self._steps.get(order)
        if steps is None:
            steps = self._steps[order] = compile_steps(self.shape, order, self.slide is None)
        return steps

    def _recompute(self, state: RcepState, key: tuple, part: Partition, e, wlo, out: list) -> None:
        q = self.query
        if wlo is None:
            scope = (e.ts - self.w + 1, None)
            cand_lo, first_hi = max(scope[0], self.lo), self.hi
            window: tuple = ()
        else:
            scope = (wlo, wlo + self.w)
            cand_lo, first_hi = wlo, POS_INF
            window = (wlo, wlo + self.w)
        groups = self._groups
        steps = self._steps_for(part, cand_lo, e.ts)
        if self._group_per_match:
            def cells_of(env):
                return tuple(key[i] if i is not None else first_value(env, var, attr)
                             for i, var, attr in groups) + window
        else:
            fixed = tuple(key[i] for i, _, _ in groups) + window

            def cells_of(env):
                return fixed
        if q.returns_matches:
            add, spill, spill_rows = self._rows.add, self.spill, self.spill_rows

            def emit(env):
                add(out, cells_of(env), state.next_match, env)
                state.next_match += 1
                if spill is not None and len(out) >= spill_rows:  # (the driver writes them now)
                    spill(out[:])
                    out.clear()
        else:
            accs = state.totals if wlo is None else state.windows

            def emit(env):
                output.fold(accs, q, cells_of(env), env)
        self.join.run(part.buffers, part.negs, e, steps, scope, cand_lo, first_hi, emit)


def _type_codes(type_col) -> tuple[np.ndarray | None, np.ndarray]:
    """The batch's types once per batch: (codes into a small array of names, the names), or
    (None, one name per event) for a column with nulls or of another kind than strings."""
    if type_col.null_count or not pa.types.is_string(type_col.type):
        return None, np.array(type_col.to_pylist(), dtype=object)
    enc = pc.dictionary_encode(type_col.combine_chunks())
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), np.array(enc.dictionary.to_pylist(),
                                                                                 dtype=object)


def _rows_by_arrow(table: pa.Table, attrs: tuple, n: int) -> dict | None:
    """:func:`_partition_rows` of a batch whose key attributes are integer or string columns
    (or absent: a null key, no partition), grouped by Arrow and numpy rather than row by row
    (the same groups: those values compare in Arrow as in Python); None for other columns."""
    if not attrs:
        return {(): np.arange(n, dtype=np.int64)} if n else {}
    code = np.zeros(n, dtype=np.int64)
    ok = np.ones(n, dtype=np.bool_)
    size = 1
    indexes, values = [], []
    for a in attrs:
        if a not in table.column_names:
            return {}
        col = table.column(a)
        if not (pa.types.is_integer(col.type) or pa.types.is_string(col.type)):
            return None
        enc = pc.dictionary_encode(col.combine_chunks())
        ok &= pc.is_valid(enc.indices).to_numpy(zero_copy_only=False)
        idx = pc.fill_null(enc.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        d = enc.dictionary.to_pylist()
        size *= max(len(d), 1)
        if size >= 2**62:
            return None
        code = code * max(len(d), 1) + idx
        indexes.append(idx)
        values.append(d)
    rows = np.flatnonzero(ok)
    codes = code[rows]
    order = np.argsort(codes, kind="stable")
    rows, codes = rows[order], codes[order]
    found: dict = {}
    if not rows.size:
        return found
    bounds = [0, *(np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist(), rows.size]
    for a, b in zip(bounds, bounds[1:]):
        r = rows[a]
        found[tuple(v[i[r]] for v, i in zip(values, indexes))] = rows[a:b]
    return found


def _partition_rows(keys: list) -> dict:
    """The batch's row numbers (int64 arrays, in stream order) per partition key; rows with a
    null key attribute belong to none."""
    found: dict = {}
    for r, key in enumerate(keys):
        if None not in key:
            found.setdefault(key, []).append(r)
    return {key: np.array(rows, dtype=np.int64) for key, rows in found.items()}


def first_value(env: dict, var: str, attr: str):
    """GROUP BY X.a: the value on X's first event (X shares it when it binds several)."""
    runs = env.get(var)
    return runs[0][0].get(attr) if runs else None
