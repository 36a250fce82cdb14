"""The GRETA engine: event trend aggregation without constructing trends.

Kleene patterns (nested at any depth), SEQ and NOT (nested, leading, trailing) under
skip-till-any-match -- and skip-till-next-match and contiguous -- in the three result modes
of docs/semantics.md, with COUNT(*), COUNT(E), SUM, AVG, MIN and MAX, exact counts of any
size, one graph per partition shared by every sliding window.

>>> from cepagg.lang import compile_query
>>> from cepagg.events import EventBatch
>>> q = compile_query("RETURN COUNT(*) PATTERN (SEQ(A+, B))+")
>>> fig4 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9".split()
>>> rows = [{"type": e[0].upper(), "ts": int(e[1:])} for e in fig4]
>>> Greta(q).run(EventBatch.from_rows(rows)).rows
[(43,)]

With ``numbers="float"`` COUNT, SUM and AVG are float64 (one word per record field instead of
limbs that widen with the counts): within a relative 1e-9 of the exact values as long as they
stay below about 1.8e308, beyond which they are ``inf`` (and an AVG of two of them ``nan``).

Per batch (:meth:`Greta.process`): the batch is encoded column by column
(:mod:`.encode`); each partition's negative sub-pattern graphs run first, deepest first, and
report their finished matches; then the positive graph of each (sub-)partition runs
(:func:`._kernels.pos_one`) -- for queries without negation, sub-partition or index, the graphs
of a batch over many partitions stacked and run by one call (:mod:`.pool`,
:meth:`Greta._run_pool`; how many: :func:`..kernels.stack_batch`).
Windows close and rows are released when the caller declares time has passed
(:meth:`Greta.advance`) or the input ends (:meth:`Greta.finish`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress
from typing import Any

import numpy as np

from ...errors import InputError
from ...events import EventBatch
from ...lang.model import Query
from .. import aggregates as agg
from ..base import Engine
from ..kernels import stack_batch
from ..kernels import twin as _twin
from . import _kernels as K
from . import encode as enc
from . import layout as lay
from . import plan as pl
from . import results as res
from . import switch as sw
from .kernel_args import NegBatch, PosBatch
from .numbers import decode_floats, python_ints, to_ints
from .pool import GraphPool
from .state import G_NAMES, NegState, PosState, gc_paused, grow, pack_arrays, unpack_arrays


@dataclass
class Partition:
    """One partition (unqualified equivalence and GROUP BY key): negative graphs, the
    positive graph per sub-partition, and the negative matches not yet consumed."""

    key: tuple
    neg: list[NegState]
    queues: dict[int, tuple[np.ndarray, np.ndarray]]  # non-top negations -> (end, start)
    fold: np.ndarray  # top negations: latest start of matches before `last_ts`
    keep: dict[int, tuple[np.ndarray, np.ndarray]]  # top negations: matches at >= last_ts
    subs: dict[tuple, "Sub"] = field(default_factory=dict)
    count: int = 0  # events seen (positions, for contiguous)
    last_ts: int = K.NEG_INF  # settled up to here: its last event so far


@dataclass
class Sub:
    state: PosState
    group: tuple
    queue: dict[int, tuple[np.ndarray, np.ndarray]]
    log: list = field(default_factory=list)  # EMIT: (time, cells)


@dataclass
class GretaState:
    layout: Any = None
    partitions: dict = field(default_factory=dict)
    windows: res.WindowResults | None = None  # SLIDE: records per (group, window)
    totals: dict = field(default_factory=dict)  # WITHIN: group -> partial cells
    instants: dict = field(default_factory=dict)  # EMIT: unqualified group -> [times]
    emit_logs: dict = field(default_factory=dict)  # EMIT: group -> {(pkey, skey): log}
    emit_last: dict = field(default_factory=dict)  # EMIT: group -> last emitted values
    kinds: dict = field(default_factory=dict)
    watermark: int = K.NEG_INF
    pool: GraphPool | None = None  # partitions whose graphs are stacked (:meth:`Greta._run_pool`)

    def __reduce__(self):
        """Pickled with every partition's arrays packed name by name (:func:`.state.pack_arrays`):
        a state over many keys pickles as a few large arrays."""
        with gc_paused():
            parts = list(self.partitions.values())
            skeleton = [(p.key, p.neg, p.queues, p.keep, p.count, p.last_ts,
                         [(skey, s.group, s.queue, s.log, s.state.shell()) for skey, s in p.subs.items()])
                        for p in parts]
            fields = {k: v for k, v in self.__dict__.items() if k != "partitions"}
            return _unpacked_state, (fields, skeleton, pack_arrays([{"fold": p.fold} for p in parts]),
                                     pack_arrays([s.state.a for p in parts for s in p.subs.values()]))


def _unpacked_state(fields: dict, skeleton: list, folds: dict, arrays: dict) -> GretaState:
    """The state :meth:`GretaState.__reduce__` pickled."""
    state = GretaState(**fields)
    with gc_paused():
        graphs = iter(unpack_arrays(arrays, sum(len(p[-1]) for p in skeleton)))
        for (key, neg, queues, keep, count, last_ts, subs), fold in zip(skeleton, unpack_arrays(folds, len(skeleton))):
            part = Partition(key, neg, queues, fold["fold"], keep, {}, count, last_ts)
            for skey, group, queue, log, shell in subs:
                part.subs[skey] = Sub(PosState.restored(shell, next(graphs)), group, queue, log)
            state.partitions[key] = part
    return state


class Greta(Engine):
    name = "greta"
    float_native = True

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        return pl.refusal(query)

    def __init__(self, query: Query, *, partial: bool = False,
                 start_range: tuple[int, int] | None = None, pure: bool = False,
                 paths: str = "auto", numbers: str = "exact", pool: bool = True):
        """``pure`` runs the pure-Python twins of the kernels. ``paths``: "auto" chooses
        between the index and the scan where that matters, per (sub-)partition and batch
        (:class:`.switch.Router`); "index", "no-index" and "scan" fix the plan
        (:func:`.plan.compile_plan`; for tests and benchmarks). ``numbers="float"``: COUNT,
        SUM and AVG are computed in float64 (records of one float per field instead of int64
        limbs; MIN and MAX keep their exact order codes), and their cells are Python floats.
        ``pool=False`` runs every partition's graph alone, where :meth:`_run_pool` would stack
        them (for tests and benchmarks)."""
        super().__init__(query, partial=partial, start_range=start_range, numbers=numbers)
        if paths not in ("auto", "index", "no-index", "scan"):
            raise ValueError(f"paths={paths!r}: expected 'auto', 'index', 'no-index' or 'scan'")
        self.plan = pl.compile_plan(query, paths="index" if paths == "auto" else paths)
        self.router = None  # chooses each (sub-)partition's path, where the choice matters
        if paths == "auto" and pl.may_prefer_scan(query) and \
                any(t.path == "index" for g in self.plan.graphs for t in g.transitions):
            self.router = sw.Router(query, self.plan, pl.compile_plan(query, paths="no-index"), start_range)
        self.kernels = _twin(K.__name__) if pure else K
        self.pooled = pool
        self.floats = self.numbers == "float"
        self._unlimited: dict[int, tuple] = {}  # id(kernel plan) -> (plan, its exact-flag copy)
        self._fresh_state: tuple | None = None  # (layout, a new PosState of it): the last layout's
        self._batch_span = 0  # (the router's evidence) time spanned by the batch's events of the query
        self.funcs = agg.funcs_of(query)
        # COUNT, MIN and MAX cells are already final: finalising them row by row is skipped
        self._cells_final = partial or all(f in ("COUNT", "MIN", "MAX") for f in self.funcs)
        q = query
        self.windows_per_event = 1
        if q.mode == "slide":
            self.windows_per_event = -(-q.within // q.slide) + 1
        self.types = q.event_types
        self._aggr_attrs = sorted({a.attr for a in q.aggregates if a.attr and a.attr != "ts"})

    # ------------------------------------------------------------------------------------------

    def new_state(self) -> GretaState:
        return GretaState()

    def _layout(self, state: GretaState, table, view, partitions: int) -> lay.Layout:
        kinds = enc.attribute_kinds(table, self._aggr_attrs)
        for k, v in kinds.items():
            if k in state.kinds and state.kinds[k] != v and {state.kinds[k], v} != {"int", "bool"}:
                raise lay.DataKindError(f"attribute '{k}' was {state.kinds[k]} in an earlier batch "
                                        f"and is {v} now")
            state.kinds.setdefault(k, v)
        if state.layout is None:
            state.layout = lay.build(self.plan, dict(state.kinds), self.start_range)
        if self.router is not None:
            ts = view.ts if self.types is None else view.ts[self._of_types(view)]
            # of the query's events: others say nothing of its density
            self._batch_span = int(ts[-1]) - int(ts[0]) + 1 if len(ts) else 0
        return state.layout

    def _path(self, state: GretaState, layout: lay.Layout, sub: "Sub", view=None, rows=None) -> lay.Layout:
        """The layout ``sub`` runs with: the state's, or where the router chooses the path
        per (sub-)partition, the one of its path, re-chosen on the evidence of its events
        ``rows`` of ``view`` when given (:meth:`.switch.Router.choose`)."""
        if self.router is None:
            return layout
        if view is None:
            return self.router.layout_of(layout, sub.state)
        return self.router.choose(layout, sub.state, view.ts[rows], self._batch_span,
                                  lambda names: {n: _kind_in(view, n) for n in names})

    def _of_types(self, view) -> np.ndarray:
        """Which events of the batch have one of the query's types (``self.types`` is set)."""
        return np.isin(view.types, np.array(sorted(self.types), dtype=object))

    def process(self, state: GretaState, batch: EventBatch) -> list[tuple]:
        if len(batch) == 0:
            return []
        table = enc.sort_batch(batch.table)
        q = self.query
        view = enc.BatchView(table)
        n = view.n
        pcodes, pkeys, order, pvalues = enc.grouped([view.col(a) for a in q.partition_by], n)
        layout = self._layout(state, table, view, len(pkeys))
        admitted = np.ones(n, dtype=bool)
        for f in q.stream_filters:
            admitted &= enc.holds_mask(f.expr, view.lookup, n)
        if q.mode == "emit":
            self._collect_instants(state, view, pcodes, pkeys)
        pos_state = enc.states_of(view, layout.positive, admitted)
        neg_states = [enc.states_of(view, g, admitted) for g in layout.negatives]
        scodes = None
        skeys: list[tuple] = [()]
        if self.plan.sub_partition:
            scodes, skeys = enc.factorize([view.col(a) for a in self.plan.sub_partition], n)
            pos_state[scodes < 0] = -1
        pcol, pcolv = enc.program_columns(view, layout.positive, layout.strings)
        ncols = [enc.program_columns(view, g, layout.strings) for g in layout.negatives]
        aint, aflt, amm, aval = enc.agg_columns(view, layout)
        specs = (self.router.layouts(layout)[0] if self.router else layout).positive.index_specs
        keys = [(enc.key_vec(view, sp.pkey), enc.key_vec(view, sp.ekey)) for sp in specs]
        # events with an aggregated integer beyond 2**31 (not np.abs: it wraps at -2**63)
        big = (aval & ((aint >= 2**31) | (aint <= -2**31))).any(axis=1)
        # where each code's rows begin in ``order`` (rows without a code, code -1, first)
        bounds = np.concatenate([[0], np.cumsum(np.bincount(pcodes + 1, minlength=len(pkeys) + 1))])
        plain = not layout.negatives and scodes is None and not layout.positive.index_specs and self.router is None
        if state.pool is not None and len(state.pool) and not (plain and self._stacks(layout)):
            self._unstack(state, layout)  # a state restored from an engine that stacks its graphs
        if plain:
            self._process_plain(state, layout, view, pkeys, order, bounds, pos_state, pcol, pcolv,
                                aint, aflt, amm, aval, big, pvalues)
            return []
        for p in range(len(pkeys)):
            rows = order[bounds[p + 1]: bounds[p + 2]]
            if len(rows) == 0:
                continue
            part = self._partition(state, layout, pkeys[p])
            positions = part.count + np.arange(len(rows), dtype=np.int64)
            part.count += len(rows)
            first, until = int(view.ts[rows[0]]), int(view.ts[rows[-1]])  # in order per partition only
            if first < part.last_ts:
                raise InputError(f"events of partition {pkeys[p]} out of time order: time {first} after "
                                 f"{part.last_ts} (the engine needs stream order per partition key; "
                                 f"put an ordering strategy in front)")
            new_entries = self._run_negatives(layout, part, view, rows, neg_states, ncols, until)
            prow = rows[pos_state[rows] >= 0]
            ppos = positions[pos_state[rows] >= 0]
            groups: dict[int, np.ndarray] = {}
            if scodes is not None:
                sc_rows = scodes[prow]
                for c in np.unique(sc_rows):
                    groups[int(c)] = np.flatnonzero(sc_rows == c)
            elif len(prow):
                groups[0] = np.arange(len(prow))
            for c, sel in groups.items():
                sub = self._sub(state, layout, part, skeys[c] if scodes is not None else ())
                r = prow[sel]
                self._queue(sub, new_entries)
                sub_layout = self._path(state, layout, sub, view, r)
                E = self._inputs(sub_layout, sub.state, view, r, ppos[sel], pos_state, pcol, pcolv,
                                 aint, aflt, amm, aval, keys, big)
                self._run_pos(state, sub_layout, part, sub, E, until)
            for skey, sub in part.subs.items():
                if not any(skey == (skeys[c] if scodes is not None else ()) for c in groups):
                    # no positive event here, but time moved: what the sub held back for
                    # simultaneous events is settled now (EMIT reads it on the next advance)
                    self._queue(sub, new_entries)
                    sub_layout = self._path(state, layout, sub)
                    self._run_pos(state, sub_layout, part, sub, _no_inputs(sub_layout), until)
            self._fold(part, new_entries, until)
            part.last_ts = until
        return []

    def _process_plain(self, state: GretaState, layout: lay.Layout, view, pkeys: list[tuple],
                       order: np.ndarray, bounds: np.ndarray, pos_state: np.ndarray, pcol, pcolv,
                       aint, aflt, amm, aval, big, pvalues: np.ndarray | None = None) -> None:
        """:meth:`process` for a query without negation, sub-partition or index, where a batch
        spreads over many keys: the batch's inputs are gathered in partition order once (one
        numpy take per column), and each partition's inputs are slices of them (views), not a
        take per partition and column; partitions without positive events are not run."""
        rows = order[bounds[1]:]  # events with a partition, grouped by it, in time order
        starts = bounds[1:-1] - bounds[1]  # of each partition in ``rows``
        ends = bounds[2:] - bounds[1]
        rank = np.arange(len(rows), dtype=np.int64) - np.repeat(starts, ends - starts)
        keep = pos_state[rows] >= 0
        prow = rows[keep]
        # slices of the positive events per partition
        pcum = np.concatenate([[0], np.cumsum(keep)])
        plo, phi = pcum[starts], pcum[ends]
        ts_all = view.ts[rows]
        first_ts, until_ts = ts_all[starts], ts_all[ends - 1]
        counts = ends - starts
        e_ts, e_state, e_rank = view.ts[prow], pos_state[prow], rank[keep]
        e_col, e_colv = pcol[prow], pcolv[prow]
        e_aint, e_aflt, e_amm, e_aval = aint[prow], aflt[prow], amm[prow], aval[prow]
        nix0 = np.zeros((len(prow), 0), dtype=np.int64)
        # partitions with an aggregated integer beyond 2**31 (their graphs go exact)
        big_parts = set(np.searchsorted(pcum[ends], np.flatnonzero(big[prow]), side="right").tolist())
        ran: list[Sub] = []
        columns = (e_ts, e_state, e_rank, nix0, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval)
        alone = None
        if self._stacks(layout) and stack_batch(len(pkeys), 0 if state.pool is None else len(state.pool)):
            alone = self._run_pool(state, layout, pkeys, ran, first_ts, until_ts, plo, phi, counts,
                                   columns, big_parts, pvalues)
        if alone is None or alone:
            with gc_paused():  # a batch over many keys makes as many new partitions
                self._run_partitions(state, layout, pkeys, ran, first_ts.tolist(), until_ts.tolist(),
                                     plo.tolist(), phi.tolist(), counts.tolist(), columns, big_parts, alone)
        if self.query.mode == "total":
            self._drain_totals(state, layout, ran)

    def _run_partitions(self, state: GretaState, layout: lay.Layout, pkeys: list[tuple], ran: list,
                        first_ts: list, until_ts: list, plo: list, phi: list, counts: list,
                        columns: tuple, big_parts: set[int], only: list[int] | None = None) -> None:
        """The loop of :meth:`_process_plain`: each partition's graph (of those numbered
        ``only``, or all) run over its slices of the gathered ``columns``; the graphs run are
        appended to ``ran``."""
        e_ts, e_state, e_rank, nix0, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval = columns
        for p in (range(len(pkeys)) if only is None else only):
            key = pkeys[p]
            part = self._partition(state, layout, key)
            first, until = first_ts[p], until_ts[p]
            if first < part.last_ts:
                raise InputError(f"events of partition {key} out of time order: time {first} after "
                                 f"{part.last_ts} (the engine needs stream order per partition key; "
                                 f"put an ordering strategy in front)")
            a, b = plo[p], phi[p]
            if a < b:
                sub = self._sub(state, layout, part, ())
                if p in big_parts:
                    sub.state.make_exact()
                E = (e_ts[a:b], e_state[a:b], e_rank[a:b] + part.count, nix0[a:b], nix0[a:b],
                     e_col[a:b], e_colv[a:b], e_aint[a:b], e_aflt[a:b], e_amm[a:b], e_aval[a:b])
                self._run_pos(state, layout, part, sub, E, until, totals=False)
                ran.append(sub)
            elif part.subs:
                # no positive event here, but time moved: what the sub held back for
                # simultaneous events is settled now (EMIT reads it on the next advance)
                self._run_pos(state, layout, part, part.subs[()], _no_inputs(layout), until, totals=False)
                ran.append(part.subs[()])
            part.count += counts[p]
            part.last_ts = until

    def _run_pool(self, state: GretaState, layout: lay.Layout, pkeys: list[tuple], ran: list,
                  first_ts: np.ndarray, until_ts: np.ndarray, plo: np.ndarray, phi: np.ndarray,
                  counts: np.ndarray, columns: tuple, big_parts: set[int],
                  values: np.ndarray | None = None) -> list[int]:
        """:meth:`_run_partitions` for graphs stacked in ``state.pool`` (:mod:`.pool`;
        :meth:`_stacks` says when): one kernel call runs every stacked partition of the batch,
        and their results are read from the stack (:meth:`_run_stack`). A partition whose graph
        must grow leaves the stack and goes on alone (in ``state.partitions``), as do partitions
        that already run alone and those with an aggregated integer beyond 2**31: the numbers of
        these are returned, for :meth:`_run_partitions`. ``values``: the keys' integers, where
        each key is one (:func:`.encode.grouped`)."""
        pool = state.pool
        if pool is None:
            fresh = PosState(layout, np.full(len(layout.bits), K.NEG_INF, dtype=np.int64), self.windows_per_event,
                             pure=self.kernels is not K, floats=self.floats, **POOLED_CAPACITY,
                             ocap=16 if self.query.mode == "slide" else 1)
            pool = state.pool = GraphPool(fresh, layout.positive.kernel_plan.DER.shape[0])
        alone = set(big_parts)
        if state.partitions:  # (a C loop over the keys)
            alone.update(compress(range(len(pkeys)), map(state.partitions.__contains__, pkeys)))
        for p in sorted(big_parts):
            if pool.slot(pkeys[p]) >= 0:
                self._detach(state, layout, pkeys[p])
        stacked = np.ones(len(pkeys), dtype=bool)
        stacked[list(alone)] = False
        sel = np.flatnonzero(stacked)
        if not len(sel):
            return sorted(alone)
        keys = list(map(pkeys.__getitem__, sel.tolist())) if alone else pkeys
        e_state = columns[1]
        starts = np.concatenate([[0], np.cumsum(e_state == _start_state(layout))])
        lo, hi = plo[sel], phi[sel]
        starting = starts[hi] > starts[lo]  # the partition has an event of the START state
        slots = pool.slots_of(keys, values[sel] if values is not None and alone else values, starting)
        first, until = first_ts[sel], until_ts[sel]
        late = np.flatnonzero(first < pool.last_ts[slots])
        if len(late):
            j = int(late[0])
            raise InputError(f"events of partition {keys[j]} out of time order: time {int(first[j])} after "
                             f"{int(pool.last_ts[slots[j]])} (the engine needs stream order per partition key; "
                             f"put an ordering strategy in front)")
        e_ts, e_state, e_rank, nix0, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval = columns
        base = np.zeros(len(pkeys), dtype=np.int64)
        base[sel] = pool.count[slots]
        e_pos = e_rank + np.repeat(base, phi - plo)  # positions: events of the partition before
        E = PosBatch(e_ts, e_state, e_pos, nix0, nix0, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval, *_NO_NEGATIONS)
        pool.count[slots] += counts[sel]
        pool.last_ts[slots] = until
        # a blank graph (:meth:`.pool.GraphPool.fill`) is run from an event of its START state
        # on; before it, events change nothing in a new graph
        blank = pool.blank[slots]
        runs = ~blank | starting
        pool.fill(slots[blank & runs])
        if not runs.all():
            slots, lo, hi, until = slots[runs], lo[runs], hi[runs], until[runs]
        self._run_stack(state, layout, pool, slots, E, lo, hi, until)
        return sorted(alone)

    def _stacks(self, layout: lay.Layout) -> bool:
        """Whether partitions' graphs are stacked (:meth:`_run_pool`): without negation (the
        caller, :meth:`_process_plain`, has no sub-partition or index either), and for the
        results of SLIDE or WITHIN (EMIT keeps a log per graph). A batch stacks them when it
        touches many partitions, or when some are stacked already (:func:`..kernels.stack_batch`);
        the others run alone."""
        return self.pooled and not layout.negatives and self.query.mode != "emit"

    def _run_stack(self, state: GretaState, layout: lay.Layout, pool: GraphPool, slots: np.ndarray,
                   E: PosBatch, lo: np.ndarray, hi: np.ndarray, until: np.ndarray) -> None:
        """Run the stacked graphs ``slots`` (graph ``j`` over events ``lo[j]:hi[j]`` of ``E``, then
        to time ``until[j]``) in one kernel call, more where one asks: outputs full, its outputs
        are read and it goes on; otherwise it leaves the stack (:meth:`_detach`; its count and
        last time are already the batch's), grows, and runs the rest of its events alone. The
        results of the graphs still stacked are read at the end."""
        kp = layout.positive.kernel_plan
        plan = self._no_limbs(kp) if self.floats else kp
        code = K.variant(kp)  # the features the kernel compiles (one variant per kind of query)
        j = i = 0
        while True:
            status, j, i = self.kernels.pos_run(plan, pool.args(), pool.rows, slots, E, lo, hi, until,
                                                pool.scratch, j, i, *code)
            if status == K.DONE:
                break
            if status == K.OUT_FULL:
                self._drain_pool_outputs(state, layout, pool, slots[j:j + 1])
                continue
            part = self._detach(state, layout, pool.keys_at(slots[j:j + 1])[0])
            sub = part.subs[()]
            grow(sub.state, status)
            a, b = int(lo[j]), int(hi[j])
            self._run_pos(state, layout, part, sub, tuple(c[a:b] for c in E[:11]), int(until[j]), i0=i)
            j, i = j + 1, 0
        stacked = slots[pool.alive[slots]]  # (the graphs that left are read)
        if self.query.mode == "total":
            self._drain_pool_totals(state, layout, pool, stacked)
        elif self.query.mode == "slide":
            self._drain_pool_outputs(state, layout, pool, stacked)

    def _detach(self, state: GretaState, layout: lay.Layout, key: tuple) -> Partition:
        """The stacked partition ``key`` goes on alone (its graph copied out of the stack)."""
        pool = state.pool
        slot = pool.slot(key)
        count, last = int(pool.count[slot]), int(pool.last_ts[slot])
        part = self._partition(state, layout, key)
        part.count, part.last_ts = count, last
        part.subs[()] = Sub(pool.detach(slot), self._group(key, ()), {})
        return part

    def _unstack(self, state: GretaState, layout: lay.Layout) -> None:
        """Every stacked partition goes on alone: this engine runs each partition's graph by
        itself (its query has the index, or the engine was made with ``pool=False``), and the
        state was restored from a snapshot of an engine that stacked them."""
        for key in state.pool.keys():
            self._detach(state, layout, key)

    def _drain_pool_outputs(self, state: GretaState, layout: lay.Layout, pool: GraphPool,
                            slots: np.ndarray) -> None:
        """:meth:`_drain` for stacked graphs under SLIDE: the window records ``slots`` emitted,
        handed to the window results (one hand-over per group) and their outputs emptied."""
        sc = pool.scalars()
        n = sc["outn"][slots]
        has = np.flatnonzero(n > 0)
        if not len(has):
            return
        slots, n = slots[has], n[has]
        if state.windows is None:
            state.windows = res.WindowResults.of(layout)
        which = np.repeat(slots, n)  # the slot and output row of each record
        row = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        k, OI, OF, OM = (pool.field(f)[which, row] for f in ("o_k", "OI", "OF", "OM"))
        ints = self._ints(layout, pool, OI)
        if not self.query.group_by:
            state.windows.add((), k, ints, OF, OM)
        else:
            bounds = np.concatenate([[0], np.cumsum(n)]).tolist()
            for key, a, b in zip(pool.keys_at(slots), bounds, bounds[1:]):
                state.windows.add(self._group(key, ()), k[a:b], ints[a:b], OF[a:b], OM[a:b])
        sc["outn"][slots] = 0

    def _drain_pool_totals(self, state: GretaState, layout: lay.Layout, pool: GraphPool,
                           slots: np.ndarray) -> None:
        """:meth:`_drain_totals` for stacked graphs: the WITHIN totals of ``slots`` added to
        their groups' and reset."""
        XI = pool.field("XI")[slots, 0]
        live = np.flatnonzero((XI != 0).any(axis=1))  # all zero: no trend ended
        if not len(live):
            return
        slots = slots[live]
        XF, XM = pool.field("XF")[slots, 0], pool.field("XM")[slots, 0]
        cells = self._cells(layout, self._ints(layout, pool, XI[live]), XF, XM)
        for key, (count, c) in zip(pool.keys_at(slots), cells):
            if count:
                group = self._group(key, ())
                old = state.totals.get(group)
                state.totals[group] = (count, c) if old is None else \
                    (old[0] + count, agg.merge(self.funcs, old[1], c))
        t = pool.template
        names = G_NAMES
        for name in ("XI", "XF", "XM"):
            pool.field(name)[slots] = t[names.index(name)]

    def _drain_totals(self, state: GretaState, layout: lay.Layout, subs: list[Sub]) -> None:
        """The WITHIN totals of many graphs added to the groups' and reset: read as one stack of
        records per number width, not graph by graph (:meth:`_drain` does one)."""
        by_width: dict[tuple, list[Sub]] = {}
        for sub in subs:
            by_width.setdefault((sub.state.exact, sub.state.L), []).append(sub)
        for group in by_width.values():
            XI = np.concatenate([sub.state.a["XI"] for sub in group])
            live = np.flatnonzero((XI != 0).any(axis=1))  # all zero: no trend ended
            if not len(live):
                continue
            group = [group[i] for i in live.tolist()]
            XF = np.concatenate([sub.state.a["XF"] for sub in group])
            XM = np.concatenate([sub.state.a["XM"] for sub in group])
            cells = self._cells(layout, self._ints(layout, group[0].state, XI[live]), XF, XM)
            for sub, (count, c) in zip(group, cells):
                if count:
                    old = state.totals.get(sub.group)
                    state.totals[sub.group] = (count, c) if old is None else \
                        (old[0] + count, agg.merge(self.funcs, old[1], c))
                    sub.state.clear_records("X")

    # ------------------------------------------------------------------------------------------

    def _partition(self, state: GretaState, layout: lay.Layout, key: tuple) -> Partition:
        part = state.partitions.get(key)
        if part is None:
            G = len(layout.bits)
            neg = [NegState(len(g.programs.slots), G) for g in layout.negatives]
            part = Partition(key, neg, {}, np.full(G, K.NEG_INF, dtype=np.int64), {})
            state.partitions[key] = part
        return part

    def _group(self, pkey: tuple, skey: tuple) -> tuple:
        q = self.query
        out = []
        for g in q.group_by:
            if g.var is None:
                out.append(pkey[q.partition_by.index(g.attr)])
            else:
                out.append(skey[self.plan.sub_partition.index(g.attr)])
        return tuple(out)

    def _sub(self, state: GretaState, layout: lay.Layout, part: Partition, skey: tuple) -> Sub:
        sub = part.subs.get(skey)
        if sub is None:
            st = self._fresh(layout).copy(part.fold)
            queue = {g: (t.copy(), ls.copy()) for g, (t, ls) in part.keep.items()}
            sub = Sub(st, self._group(part.key, skey), queue)
            part.subs[skey] = sub
        return sub

    def _fresh(self, layout: lay.Layout) -> PosState:
        """A new positive graph of ``layout``, to be copied for each new (sub-)partition
        (:meth:`.state.PosState.copy`): building one allocates some fifty arrays one by one,
        and a stream with a key per few events builds one per few events."""
        got = self._fresh_state
        if got is None or got[0] is not layout:  # one kept: a restored state brings a new layout
            st = PosState(layout, np.full(len(layout.bits), K.NEG_INF, dtype=np.int64),
                          self.windows_per_event, pure=self.kernels is not K, floats=self.floats)
            got = self._fresh_state = (layout, st)
        return got[1]

    def _top(self, layout: lay.Layout) -> set[int]:
        """Bits of the negations the positive graph refers to."""
        return {layout.bits[n] for n in layout.positive.plan.template.negations}

    def _queue(self, sub: Sub, new: dict[int, tuple[np.ndarray, np.ndarray]]) -> None:
        for g, (t, ls) in new.items():
            if g not in sub.queue:
                sub.queue[g] = (t, ls)
            else:
                a, b = sub.queue[g]
                sub.queue[g] = (np.concatenate([a, t]), np.concatenate([b, ls]))

    def _fold(self, part: Partition, new: dict, until: int) -> None:
        for g, (t, ls) in new.items():
            if g in part.keep:
                t = np.concatenate([part.keep[g][0], t])
                ls = np.concatenate([part.keep[g][1], ls])
            early = t < until
            if early.any():
                part.fold[g] = max(int(part.fold[g]), int(ls[early].max()))
            part.keep[g] = (t[~early], ls[~early])

    def _run_negatives(self, layout: lay.Layout, part: Partition, view, rows, neg_states, ncols,
                       until: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Run the negative graphs (children first); return the new matches of the negations
        the positive graph refers to, per bit."""
        top = self._top(layout)
        out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        G = len(layout.bits)
        for h in range(len(layout.negatives) - 1, -1, -1):
            g_layout = layout.negatives[h]
            bit = layout.bits[g_layout.plan.not_id]
            st = part.neg[h]
            sel = rows[neg_states[h][rows] >= 0]
            children = [layout.bits[n] for n in g_layout.plan.template.negations]
            qt = [part.queues.get(c, (np.zeros(0, np.int64), np.zeros(0, np.int64))) for c in range(G)]
            qt = [q if c in children else (np.zeros(0, np.int64), np.zeros(0, np.int64))
                  for c, q in enumerate(qt)]
            neg_off = np.zeros(G + 1, dtype=np.int64)
            neg_off[1:] = np.cumsum([len(q[0]) for q in qt])
            neg_t = np.concatenate([q[0] for q in qt]) if G else np.zeros(0, np.int64)
            neg_ls = np.concatenate([q[1] for q in qt]) if G else np.zeros(0, np.int64)
            neg_used = np.zeros(G, dtype=np.int64)
            col, colv = ncols[h]
            E = NegBatch(view.ts[sel], neg_states[h][sel], np.ascontiguousarray(col[sel]),
                         np.ascontiguousarray(colv[sel]), neg_t.astype(np.int64), neg_ls.astype(np.int64),
                         neg_off, neg_used)
            kern = self.kernels
            nder = len(g_layout.kernel_plan.DER)
            i = 0
            found_t, found_ls = [], []
            while True:
                status, i = kern.neg_run(g_layout.kernel_plan, st.args(), E, st.scratch(nder), i, until)
                t_, ls_ = st.drain()
                found_t.append(t_)
                found_ls.append(ls_)
                if status == K.DONE:
                    break
                if status == K.GROW_V:
                    st.grow_vertices()
                elif status == K.GROW_REC:
                    st.grow_outputs()
            for c in children:
                t, ls = part.queues.get(c, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
                used = int(neg_used[c])
                part.queues[c] = (t[used:], ls[used:])
            t_all = np.concatenate(found_t)
            ls_all = np.concatenate(found_ls)
            if bit in top:
                out[bit] = (t_all, ls_all)
            else:
                old = part.queues.get(bit)
                if old is not None:
                    t_all = np.concatenate([old[0], t_all])
                    ls_all = np.concatenate([old[1], ls_all])
                part.queues[bit] = (t_all, ls_all)
        return out

    def _inputs(self, layout: lay.Layout, st: PosState, view, rows, positions, pos_state, pcol,
                pcolv, aint, aflt, amm, aval, keys, big) -> tuple:
        specs = layout.positive.index_specs
        nix = len(specs)
        n = len(rows)
        qpos = np.zeros((n, nix), dtype=np.int64)
        ipos = np.full((n, nix), -1, dtype=np.int64)
        states = pos_state[rows]
        for ix, sp in enumerate(specs):
            src = layout.positive.index_src[ix]
            pk, ek = keys[ix]
            from_rows = rows[(states == src) & pk.valid[rows]]
            qpos[:, ix], ipos[:, ix] = self._ranks(st, ix, sp.op, pk, ek, rows, from_rows, states, src)
        if big[rows].any():
            st.make_exact()
        return (view.ts[rows], states, positions.astype(np.int64), qpos, ipos,
                np.ascontiguousarray(pcol[rows]), np.ascontiguousarray(pcolv[rows]),
                np.ascontiguousarray(aint[rows]), np.ascontiguousarray(aflt[rows]),
                np.ascontiguousarray(amm[rows]), np.ascontiguousarray(aval[rows]))

    def _ranks(self, st: PosState, ix: int, op: str, pk, ek, rows, from_rows, states, src):
        """Query lengths / points for every event and insert slots for the index's vertices:
        the batch's new keys get slots first (:meth:`.state.PosState.insert_keys`)."""
        reverse = op in (">", ">=")
        m = len(rows)
        sel = (states == src) & pk.valid[rows]
        ok = ek.valid[rows]
        codes = st.key_codes(ix, [(pk, rows[sel]), (ek, rows[ok])], reverse)
        cp = codes[0] if sel.any() else np.zeros(0, dtype=np.int64)
        ce = codes[-1] if ok.any() else np.zeros(0, dtype=np.int64)
        if len(cp):
            st.insert_keys(ix, np.unique(cp))
        KS, KO, C = st.slot_keys(ix)
        kern = st._kernels_index()
        ins = np.full(m, -1, dtype=np.int64)
        if len(cp):
            slot = np.empty(len(cp), dtype=np.int64)
            kern.find_many(KS, KO, 0, C, cp, slot)
            ins[sel] = slot
        qry = np.zeros(m, dtype=np.int64) if op != "=" else np.full(m, -1, dtype=np.int64)
        if len(ce) and C:
            if op == "=":
                got = np.empty(len(ce), dtype=np.int64)
                kern.find_many(KS, KO, 0, C, ce, got)
                qry[ok] = got
            else:
                qry[ok] = np.searchsorted(KS, ce, side="left" if op in ("<", ">") else "right")
        return qry, ins

    def _run_pos(self, state: GretaState, layout: lay.Layout, part: Partition, sub: Sub, E: tuple,
                 until: int, totals: bool = True, i0: int = 0) -> None:
        """Run the positive graph of ``sub`` over ``E`` (from its event ``i0``) up to ``until``,
        growing its arrays as the kernel asks; its results are drained after each call, its
        WITHIN totals too unless ``totals`` is false (the caller drains many graphs' at once:
        :meth:`_drain_totals`)."""
        st = sub.state
        G = len(layout.bits)
        if G:
            qt = [sub.queue.get(c, (np.zeros(0, np.int64), np.zeros(0, np.int64))) for c in range(G)]
            neg_off = np.zeros(G + 1, dtype=np.int64)
            neg_off[1:] = np.cumsum([len(q[0]) for q in qt])
            neg_t = np.concatenate([q[0] for q in qt]).astype(np.int64)
            neg_ls = np.concatenate([q[1] for q in qt]).astype(np.int64)
            neg_used = np.zeros(G, dtype=np.int64)
            E = E + (neg_t, neg_ls, neg_off, neg_used)
        else:
            E = E + _NO_NEGATIONS
        E = PosBatch(*E)
        if st.exact:  # the twin multiplies Python integers by the attributes: Python integers too
            E = E._replace(e_aint=python_ints(E.e_aint))
        kp = layout.positive.kernel_plan
        nder = kp.DER.shape[0]
        code = K.variant(kp)  # the features the kernel compiles (one variant per kind of query)
        i = i0
        while True:
            kern, plan = self._pos_kernel(st, kp)  # (widening may leave int64 limbs)
            status, i = kern.pos_one(plan, st.args(), E, st.scratch(nder), i, until, *code)
            self._drain(state, layout, sub, totals)
            if status == K.DONE:
                break
            grow(st, status)
        for g in range(G):
            used = int(E[-1][g])  # how many of the queued negative matches the run used
            if g in sub.queue:
                t, ls = sub.queue[g]
                sub.queue[g] = (t[used:], ls[used:])

    def _pos_kernel(self, st: PosState, kp) -> tuple:
        """The kernel module and plan that run graph ``st``: exact graphs (Python integers) run
        the twin, float graphs the plan without limbs."""
        if st.exact:
            return _twin(K.__name__), self._no_limbs(kp)
        return self.kernels, (self._no_limbs(kp) if st.floats else kp)

    def _no_limbs(self, kp):
        """The kernel plan with the exact flag set: records of one field each (Python integers
        or float64), no limb limit checked (:func:`.layout.exact_plan`, made once per plan)."""
        got = self._unlimited.get(id(kp))
        if got is None or got[0] is not kp:
            got = self._unlimited[id(kp)] = (kp, lay.exact_plan(kp))
        return got[1]

    # -- results ------------------------------------------------------------------------------

    def _ints(self, layout: lay.Layout, st: PosState, I: np.ndarray) -> np.ndarray:
        """The integer fields of record rows as Python integers (an object array, rows x FI)."""
        out = np.empty((I.shape[0], layout.FI), dtype=object)
        for f in range(layout.FI):
            out[:, f] = to_ints(I, f, 1 if (st.exact or st.floats) else st.L)
        return out

    def _cells(self, layout: lay.Layout, ints: np.ndarray, F: np.ndarray,
               M: np.ndarray) -> list[tuple[int, tuple]]:
        """(COUNT(*), partial cells) of record rows (cells as cepagg.engines.aggregates)."""
        counts, columns = self._cell_columns(layout, ints, F, M)
        return list(zip(counts, zip(*columns) if columns else [()] * len(counts)))

    def _cell_columns(self, layout: lay.Layout, ints: np.ndarray, F: np.ndarray,
                      M: np.ndarray) -> tuple[list, list[list]]:
        """COUNT(*) and a column of partial cells per aggregate, of record rows, built a
        column at a time: Q1 emits more window rows than it reads events, and a per-row loop
        over the aggregates was a quarter of its time at small windows."""
        fields = [ints[:, f].tolist() for f in range(layout.FI)]
        columns: list[list] = []
        for a in layout.aggs:
            if a.func == "COUNT":
                columns.append(fields[a.field])
            elif a.func in ("SUM", "AVG"):
                values = fields[a.field]
                if a.kind == "float":
                    values = [float(v) if isinstance(v, np.floating) else v for v in F[:, a.field].tolist()]
                columns.append(list(zip(values, fields[a.nnz])))
            else:
                codes = M[:, a.field].astype(np.int64)
                empty = codes == (res.EMPTY_MIN if a.func == "MIN" else res.EMPTY_MAX)
                values = (decode_floats(codes).tolist() if a.kind == "float" else
                          [bool(c) for c in codes.tolist()] if a.kind == "bool" else codes.tolist())
                columns.append([None if e else v for e, v in zip(empty.tolist(), values)])
        return fields[0], columns

    def _drain(self, state: GretaState, layout: lay.Layout, sub: Sub, totals: bool = True) -> None:
        st = sub.state
        a = st.a
        sc = st.sc
        q = self.query
        n = int(sc["outn"])
        if n:
            ints = self._ints(layout, st, a["OI"][:n])
            if q.mode == "slide":
                if state.windows is None:
                    state.windows = res.WindowResults.of(layout)
                state.windows.add(sub.group, a["o_k"][:n], ints, a["OF"][:n], a["OM"][:n])
            else:
                sub.log.extend(zip(a["o_k"][:n].tolist(), self._cells(layout, ints, a["OF"][:n], a["OM"][:n])))
            sc["outn"] = 0
        if q.mode == "total" and totals:
            ((count, c),) = self._cells(layout, self._ints(layout, st, a["XI"]), a["XF"], a["XM"])
            if count:
                old = state.totals.get(sub.group)
                state.totals[sub.group] = (count, c) if old is None else \
                    (old[0] + count, agg.merge(self.funcs, old[1], c))
                st.clear_records("X")

    # -- time -----------------------------------------------------------------------------------

    def advance(self, state: GretaState, watermark: int) -> list[tuple]:
        self._move_all(state, watermark + 1)
        state.watermark = max(state.watermark, watermark)
        rows = self._release(state, watermark)
        self._purge(state, watermark + 1)
        return rows

    def finish(self, state: GretaState) -> list[tuple]:
        self._move_all(state, K.POS_INF)
        rows = self._release(state, K.POS_INF - 1)
        if self.query.mode == "total":
            rows += self._total_rows(state)
        self._purge(state, K.POS_INF)
        return rows

    def _purge(self, state: GretaState, until: int) -> None:
        """Drop (sub-)partitions that nothing later can use: state shrinks with the window."""
        if state.layout is not None and self._moves_nothing(state.layout):
            return  # :meth:`_move_all` dropped them
        pool = state.pool
        if pool is not None and len(pool) and self.query.within is not None:
            # a stacked graph holding nothing, in a partition without negation: nothing later
            # can use it (:meth:`_stale`)
            live = pool.live()
            live = live[pool.last_ts[live] < until]
            q = self.query
            if q.mode == "slide" and until == K.POS_INF:
                # the end of the input: each graph holding a window record was moved there,
                # which closed them all, and every start bucket leaves the window there
                pool.release(live)
            elif q.mode == "slide":  # moved or not (:meth:`_move_all`)
                pool.release(live[pool.idle(live, until, q.within, q.slide)])
            else:
                pool.release(live[pool.empty(live)])
        for pkey, part in list(state.partitions.items()):
            if part.last_ts >= until:
                continue
            for skey in [k for k, s in part.subs.items() if s.state.empty() and not s.log]:
                del part.subs[skey]
            if not part.subs and self._stale(part, until):
                del state.partitions[pkey]
        if self.query.mode == "emit":
            nothing = self._nothing()
            live = {(pkey, skey) for pkey, part in state.partitions.items() for skey in part.subs}
            for ug, groups in list(state.emit_logs.items()):
                for g, mem in list(groups.items()):
                    for m, log in list(mem.items()):
                        if m not in live and all(c[0] == 0 for _, c in log):
                            del mem[m]
                    if not mem:
                        del groups[g]
                if not groups:
                    del state.emit_logs[ug]
            for ug, last in list(state.emit_last.items()):
                for g in [g for g, v in last.items() if v == nothing]:
                    del last[g]
                if not last:
                    del state.emit_last[ug]
            for ug in [u for u, ch in state.instants.items() if not any(len(c) for c in ch)]:
                del state.instants[ug]

    def _move_all(self, state: GretaState, until: int) -> None:
        layout = state.layout
        if layout is None:
            return
        empty = np.zeros(0, dtype=np.int64)

        class _NoEvents:
            ts = empty

        neg_states = [empty for _ in layout.negatives]
        ncols = [(np.zeros((0, len(g.programs.slots))), np.zeros((0, len(g.programs.slots)), dtype=bool))
                 for g in layout.negatives]
        w = self.query.within
        if self._moves_nothing(layout):
            # a partition whose every start has left the window by ``until`` adds nothing more
            # (its trends were counted as they ended): it goes, without a kernel call
            limit = until - w + 1
            for pkey in [k for k, part in state.partitions.items()
                         if part.last_ts < limit or
                         all(sub.state.starts_before(limit) for sub in part.subs.values())]:
                del state.partitions[pkey]
            pool = state.pool
            if pool is not None and len(pool):
                live = pool.live()
                pool.release(live[(pool.last_ts[live] < limit) | pool.starts_before(live, limit)])
            return
        pool = state.pool
        if pool is not None and len(pool):
            live = pool.live()
            live = live[pool.last_ts[live] < until]
            if self.query.mode == "slide":
                # moving time changes the results of a graph only where a window it holds a
                # record of closes; the others move with their next events, or go as idle
                # (:meth:`_purge`)
                live = live[pool.closing(live, until, self.query.within, self.query.slide)]
            else:
                live = live[~pool.blank[live]]  # (a new graph does not change with time)
            if len(live):
                none = np.zeros(len(live), dtype=np.int64)
                E = PosBatch(*_no_inputs(layout), *_NO_NEGATIONS)
                self._run_stack(state, layout, pool, live, E, none, none, np.full(len(live), until, dtype=np.int64))
        for pkey, part in list(state.partitions.items()):
            if part.last_ts >= until:
                continue
            if layout.negatives:
                new = self._run_negatives(layout, part, _NoEvents, empty, neg_states, ncols, until)
                for sub in part.subs.values():
                    self._queue(sub, new)
                self._fold(part, new, until)
            for sub in part.subs.values():
                sub_layout = self._path(state, layout, sub)
                self._run_pos(state, sub_layout, part, sub, _no_inputs(sub_layout), until)

    def _moves_nothing(self, layout: lay.Layout) -> bool:
        """WITHIN alone without negation: a trend is counted when its last event arrives, so
        moving time without events changes no result, only frees memory; the next batch's
        events move it as far (expiry is by the time moved to, commits do not depend on it).
        Watermarks then only drop the partitions that have left the window."""
        return self.query.mode == "total" and self.query.within is not None and not layout.negatives

    def _stale(self, part: Partition, until: int) -> bool:
        """Nothing in the partition can matter to an event at ``until`` or later: no vertex,
        and every negative match started more than a window before (a threshold below every
        live predecessor and every window start)."""
        w = self.query.within
        if w is None or not all(n.empty() for n in part.neg):
            return False
        horizon = until - w
        latest = int(part.fold.max(initial=K.NEG_INF))
        for t, ls in list(part.keep.values()) + list(part.queues.values()):
            if len(ls):
                latest = max(latest, int(ls.max()))
        return latest < horizon

    def _release(self, state: GretaState, watermark: int) -> list[tuple]:
        q = self.query
        rows: list[tuple] = []
        if q.mode == "slide" and state.windows is not None:
            # window k ends at k * SLIDE + WITHIN - 1: closed once the watermark reaches it
            groups, ks, ints, F, M = state.windows.pop((watermark - q.within + 1) // q.slide)
            starts = ks * q.slide
            if self.start_range is not None:
                keep = (starts >= self.start_range[0]) & (starts < self.start_range[1])
                groups = [g for g, kept in zip(groups, keep.tolist()) if kept]
                starts, ints, F, M = starts[keep], ints[keep], F[keep], M[keep]
            _, columns = self._cell_columns(state.layout, ints, F, M)
            if not self._cells_final:
                columns = [agg.finalize_column(f, c) for f, c in zip(self.funcs, columns)]
            # rows assembled by zipping columns: Q1 releases about two rows per event
            rows = list(zip(*zip(*groups), starts.tolist(), (starts + q.within).tolist(), *columns))
        elif q.mode == "emit":
            rows = self._emit_rows(state, watermark)
        return rows

    def _nothing(self) -> tuple:
        """The final cells of a group without trends (COUNT 0.0 in float mode)."""
        cells = agg.empty(self.funcs)
        if self.floats:
            cells = tuple(0.0 if f == "COUNT" else c for f, c in zip(self.funcs, cells))
        return agg.finalize(self.funcs, cells)

    def _final(self, cells: tuple) -> tuple:
        return cells if self._cells_final else agg.finalize(self.funcs, cells)

    def _total_rows(self, state: GretaState) -> list[tuple]:
        rows = []
        for g, (count, cells) in state.totals.items():
            if count:
                rows.append(g + self._final(cells))
        if not rows and not self.query.group_by and not self.partial:
            rows.append(self._nothing())
        state.totals = {}
        return rows

    # -- EMIT ON CHANGE -------------------------------------------------------------------------

    def _collect_instants(self, state: GretaState, view, pcodes, pkeys) -> None:
        q = self.query
        rel = pcodes >= 0
        if self.types is not None:
            rel &= self._of_types(view)
        for p, key in enumerate(pkeys):
            times = view.ts[rel & (pcodes == p)]
            if len(times):
                ug = tuple(key[q.partition_by.index(g.attr)] for g in q.group_by if g.var is None)
                state.instants.setdefault(ug, []).append(times)

    def _emit_rows(self, state: GretaState, watermark: int) -> list[tuple]:
        q = self.query
        lo, hi = self.start_range if self.start_range is not None else (K.NEG_INF, K.POS_INF)
        every = self.start_range is not None
        nothing = self._nothing()
        # logs by unqualified group -> group -> member -> log
        for pkey, part in state.partitions.items():
            for skey, sub in part.subs.items():
                ug = tuple(pkey[q.partition_by.index(g.attr)] for g in q.group_by if g.var is None)
                logs = state.emit_logs.setdefault(ug, {}).setdefault(sub.group, {})
                logs.setdefault((pkey, skey), []).extend(sub.log)
                sub.log = []
        rows: list[tuple] = []
        for ug, chunks in list(state.instants.items()):
            times = np.unique(np.concatenate(chunks))
            ready = times[times <= watermark]
            state.instants[ug] = [times[times > watermark]]
            glogs = state.emit_logs.get(ug, {})
            last = state.emit_last.setdefault(ug, {})
            unq = all(g.var is None for g in q.group_by)
            cursors = {g: {m: [0, None] for m in mem} for g, mem in glogs.items()}
            for t in ready.tolist():
                values = {}
                for g, mem in glogs.items():
                    total = None
                    for m, log in mem.items():
                        cur = cursors[g][m]
                        while cur[0] < len(log) and log[cur[0]][0] <= t:
                            cur[1] = log[cur[0]][1]
                            cur[0] += 1
                        if cur[1] is not None and cur[1][0]:
                            c = cur[1]
                            total = c if total is None else (total[0] + c[0], agg.merge(self.funcs, total[1], c[1]))
                    if total is not None:
                        values[g] = agg.finalize(self.funcs, total[1])
                if not (lo <= t < hi):
                    continue
                groups = set(last) | set(values)
                if every and unq:
                    groups.add(ug)
                for g in sorted(groups, key=repr):
                    value = values.get(g, nothing)
                    if value != last.get(g, nothing) or every:
                        rows.append(g + (t,) + value)
                        last[g] = value
            # keep only each member's current value
            for g, mem in glogs.items():
                for m, log in mem.items():
                    cur = cursors[g][m]
                    mem[m] = ([(K.NEG_INF, cur[1])] if cur[1] is not None else []) + log[cur[0]:]
        return rows


#: the first capacities of a stacked graph (:mod:`.pool`): a partition of a stream over many keys
#: holds a few events per window, and starts in a few of the panes of a window (SLIDE); one that
#: needs more leaves the stack
POOLED_CAPACITY = {"vcap": 4, "ring": 4, "slide_ring": 4}

def _start_state(layout: lay.Layout) -> int:
    """The START state of the positive graph (the template has one)."""
    return int(layout.positive.kernel_plan.pi.view(K.PLAN_SCALARS)[0]["start"])


def _kind_in(view, name: str) -> str | None:
    """The kind of attribute ``name`` in the batch ("int", "float", "bool", "string"), None where
    it has no value there."""
    v = view.col(name)
    if not v.valid.any():
        return None
    if v.kind == "number":
        return "int" if v.values.dtype.kind in "iu" else "float"
    return v.kind


#: The negation inputs of ``_run_pos`` for a query without negation (nothing is written to them).
_NO_NEGATIONS = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64))


def _no_inputs(layout: lay.Layout) -> tuple:
    """The positive-event inputs of ``_run_pos`` for a run with no new events."""
    return _empty_inputs(len(layout.positive.index_specs), len(layout.positive.programs.slots),
                         len(layout.attr_slots))


@lru_cache(maxsize=64)
def _empty_inputs(nix: int, C: int, A: int) -> tuple:
    """Zero-row input arrays (the kernel reads none and cannot write any): built once per shape."""
    return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros((0, nix), np.int64), np.zeros((0, nix), np.int64),
            np.zeros((0, C), np.float64), np.zeros((0, C), np.bool_),
            np.zeros((0, A), np.int64), np.zeros((0, A), np.float64),
            np.zeros((0, A), np.int64), np.zeros((0, A), np.bool_))


__all__ = ["Greta"]

# Reference: Poppe, Lei, Rundensteiner, Maier, "GRETA: Graph-based Real-time Event Trend
# Aggregation", PVLDB 11(1), 2017: Sections 3-7 (framework, runtime), and
# docs/semantics.md for every result mode.

