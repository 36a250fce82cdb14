"""Running one unit over its partitions: kernels per partition, rows per group.

Hashed Prefix Counters (paper §3.4): each partition key has its own state, and the kernel
runs once per partition per batch -- except under WITHIN alone without leading negation, where
the partitions are stacked column-wise (:class:`PartPool`) and one kernel call runs every
partition of a batch; a partition with more STARTs in its window than a slot holds, or an
overflow, goes on alone, with a :class:`PartState` of its own (and back into the stack once its
window fits a slot). Rows are then assembled per *group* (GROUP BY
values), which may gather several partitions (``[company]`` with GROUP BY sector, or an
equality chain): totals are merged at the end; SLIDE windows and EMIT ON CHANGE instants that
span partitions are merged once every partition of the group has been brought to the same
time (:mod:`.merge`). A partition whose windows are empty is dropped, so per-key state does
not outlive its window.

In float mode (``numbers="float"``) the integer family is float64 and nothing is checked.
On int64 overflow (exact mode) a partition under WITHIN alone first drops its window sums,
which that mode never reads (:func:`.windows.push`); otherwise, or on a second overflow, it
goes on from the step that overflowed with 128-bit integers (:mod:`.wide`: the same kernels,
compiled for them when a partition of the install first overflows), past 128 bits with Python
integers (the exact twin of the kernels), and back to int64 when its values are small again.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.4 (HPC), §3.2 (output when the result changes; the paper leaves
the output policy and the width of counts open).
"""

from __future__ import annotations

import numpy as np

from ...errors import CepaggError
from ...events import EventBatch
from .. import aggregates as aggmod
from ..kernels import stack_batch
from ..keys import IntKeys, take_keys
from . import _kernels as K
from . import layout
from .counters import (
    KERNELS,
    KERNELS_ARE_TWINS,
    TWIN,
    TWIN_ALGEBRA,
    Families,
    PartPool,
    PartState,
    Unit,
    empty_cells,
    families,
    pack_parts,
    unpack_parts,
    wide_kernels,
)
from .encode import Encoded, Encoder
from .layout import AT
from .merge import EmitMerge, SlideMerge
from .wide import Wide, limbs_of, to_object

LO, HI = K.NONE, K.INF
#: the width of a wide partition's integers, as :meth:`UnitRun._scratch` takes it (beside False
#: for int64 and True for Python ints)
WIDE = "wide"
LIN_KIND = TWIN_ALGEBRA.LIN


class UnitState:
    """The picklable state of one unit: kinds seen, partitions, merged results."""

    def __init__(self) -> None:
        self.kinds: tuple | None = None
        self.parts: dict[tuple, PartState] = {}
        self.totals: dict[tuple, tuple] = {}  # (output, group) -> partial cells (WITHIN alone)
        self.slide = SlideMerge()
        self.emit = EmitMerge()
        self.seen: set = set()  # groups with rows (WITHIN alone without GROUP BY needs none)
        self.pool: PartPool | None = None  # partitions stacked column-wise (UnitRun.pooled)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "parts": pack_parts(self.parts)}

    def __setstate__(self, d: dict) -> None:
        self.pool = None
        self.__dict__.update(d)
        self.parts = unpack_parts(d["parts"])


class UnitRun:
    """Evaluates one :class:`Unit`; one object serves any number of states (it keeps only
    per-layout scratch buffers and templates, never a state's data)."""

    def __init__(self, unit: Unit, partial: bool = False, start_range: tuple[int, int] | None = None,
                 numbers: str = "exact"):
        self.unit = unit
        self.partial = partial
        #: float mode: the integer family (counts, COUNT(E), SUM of integers) is float64, so the
        #: kernels compile a second time, for float arrays, when float mode is first used
        self.floats = numbers == "float"
        self._int = np.float64 if self.floats else np.int64
        self.lo, self.hi = start_range if start_range is not None else (LO, HI)
        self.every = start_range is not None and unit.mode == "emit"
        plan = unit.plans[0]
        self.windowed = unit.within is not None
        outs = unit.outputs
        self.group_is_partition = [sorted(o.plan.group_index) == list(range(len(plan.partition_attrs)))
                                   for o in outs]
        if unit.mode == "emit":
            simple = all(not o.plan.chain_attrs and set(o.plan.partition_attrs) ==
                         {g.attr for g in o.plan.query.group_by if g.var is None} for o in outs)
            self.kmode = K.EMIT if simple else K.RECORD
        elif unit.mode == "slide":
            self.kmode = K.SLIDE
        else:
            self.kmode = K.TOTAL
        self.coarse_slide = unit.mode == "slide" and not partial and not all(self.group_is_partition)
        self.parent = np.array(unit.parent, np.int64)
        self.gate = np.zeros(unit.n_nodes, np.uint8)
        if unit.gated_total:
            for o in outs:
                self.gate[o.node] = 1
        self.outnode = np.array([o.node for o in outs], np.int64)
        anc: list[int] = []
        cols: list[int] = []
        ptr, cptr = [0], [0]
        N = unit.n_nodes
        for j in range(N):  # ancestors of each node, itself included, increasing
            chain, x = [], j
            while x >= 0:
                chain.append(x)
                x = unit.parent[x]
            anc += sorted(chain)
            ptr.append(len(anc))
            cols += (sorted(chain) + [N]) if self.windowed else [0]  # map columns a row can fill
            cptr.append(len(cols))
        self.anc_ptr = np.array(ptr, np.int64)
        self.anc_idx = np.array(anc, np.int64)
        self.col_ptr = np.array(cptr, np.int64)
        self.col_idx = np.array(cols, np.int64)
        self.funcs = [tuple(a.func for a in o.plan.aggregates) for o in outs]
        self.empty_final = [aggmod.finalize(f, aggmod.empty(f)) for f in self.funcs]
        self._plan = layout.new_plan()  # int64: the kernels read a view (see .layout.PLAN)
        plan = layout.plan(self._plan, python=True)
        plan.mode = self.kmode
        plan.within = unit.within if unit.within is not None else -1
        plan.slide = unit.slide or 0
        plan.lo, plan.hi = self.lo, self.hi
        plan.every = int(self.every)
        plan.lead = int(bool(unit.lead))
        plan.gated = int(unit.gated_total)
        plan.flush = K.NONE
        plan.sums = 1
        plan.grouped = int(any(o.plan.query.group_by for o in outs))
        self._cache: dict = {}  # per column layout: families, encoder, kernel scratch
        self._rows: dict = {}  # (layout, exact, R) -> buffers for the rows a kernel call reports
        self._fresh: dict[tuple, PartState] = {}  # per layout: a new partition's state

    # -- layout per column kinds ----------------------------------------------------------------

    def _fam(self, state: UnitState, batch: EventBatch | None) -> Families:
        if state.kinds is None:
            kinds = batch.attribute_kinds() if batch is not None else {}
            state.kinds = tuple(sorted(kinds.items()))
        key = state.kinds
        if key not in self._cache:
            fam = families(self.unit, dict(key))
            self._cache[key] = (fam, Encoder(self.unit, fam, self.kmode == K.EMIT), {})
        return self._cache[key][0]

    def _encoder(self, state: UnitState) -> Encoder:
        return self._cache[state.kinds][1]

    def _scratch(self, state: UnitState, exact):
        """Kernel scratch buffers for integers of one width: ``exact`` False (int64, or float64
        in float mode), True (Python ints) or :data:`WIDE` (128-bit, :mod:`.wide`)."""
        fam, _, scr = self._cache[state.kinds]
        if exact is WIDE and WIDE not in scr:
            SI, SF, (AccI, AccF, NI, NF), vI, vF, tI, tF = self._scratch(state, False)
            w = [Wide(limbs_of(a)) for a in (SI, AccI, NI, vI, tI)]
            scr[WIDE] = (w[0], SF.copy(), (w[1], AccF.copy(), w[2], NF.copy()), w[3], vF.copy(), w[4], tF.copy())
        if exact not in scr:
            N = self.unit.n_nodes
            W = N + 1 if self.windowed else 1
            CI, CF, O = len(fam.kindI), len(fam.kindF), len(self.outnode)
            it = object if exact else self._int
            SI = np.zeros((4, CI, N, W), it)
            SF = np.zeros((4, CF, N, W), np.float64)
            acc = (np.zeros((CI, N, N + 1), it), np.zeros((CF, N, N + 1), np.float64),
                   np.zeros((CI, N, N + 1), it), np.zeros((CF, N, N + 1), np.float64))
            vI = np.zeros((4, CI, N), it)
            vF = np.zeros((4, CF, N), np.float64)
            (TWIN if exact else KERNELS).S.zero_vec(vI[3], vF[3], fam.kindI, fam.kindF)
            tI = np.zeros((max(O, 1), CI, N), it)
            tF = np.zeros((max(O, 1), CF, N), np.float64)
            scr[exact] = (SI, SF, acc, vI, vF, tI, tF)
        return scr[exact]

    def _out_rows(self, state: UnitState, exact: bool, R: int):
        """Buffers for the rows a kernel call reports (only the first ``rows`` (a counter) are read, and
        copied out, before the next call), kept per layout: 10^4 partitions per micro-batch
        each allocating their own cost more than their kernel calls."""
        key = (state.kinds, exact, R)
        if key not in self._rows:
            fam = self._cache[state.kinds][0]
            self._rows[key] = (np.zeros((R, 3), np.int64),
                               Wide(np.zeros((R, len(fam.kindI), 2), np.int64)) if exact is WIDE else
                               np.zeros((R, len(fam.kindI)), object if exact else self._int),
                               np.zeros((R, len(fam.kindF)), np.float64))
        return self._rows[key]

    def _new_part(self, state: UnitState) -> PartState:
        if state.kinds not in self._fresh:
            fam = self._cache[state.kinds][0]
            self._fresh[state.kinds] = PartState(self.unit.n_nodes, len(fam.kindI), len(fam.kindF),
                                                 len(self.outnode), self.windowed, bool(self.unit.lead), fam,
                                                 exact=fam.python_values, floats=self.floats)
        return self._fresh[state.kinds].copy()

    # -- the protocol -----------------------------------------------------------------------------

    def new_state(self) -> UnitState:
        return UnitState()

    def process(self, state: UnitState, batch: EventBatch) -> list[tuple[int, tuple]]:
        if len(batch) == 0:
            return []
        fam = self._fam(state, batch)  # the first batch fixes each aggregated attribute's type
        enc = self._encoder(state).encode(batch, fam.python_values)
        if self.floats and not fam.python_values:
            self._check_extremes(enc, fam)
        rows: list[tuple[int, tuple]] = []
        if self.pooled(fam) and stack_batch(len(enc.keys), 0 if state.pool is None else len(state.pool)):
            pool = self._pool(state)
            keys = enc.keys
            alone: list = []
            starts, ends = enc.bounds[:-1], enc.bounds[1:]
            if state.parts:  # a partition that went on alone (its own capacity, or exact) runs so
                on_own = _known(state.parts, keys)
                if on_own.any():
                    for r in np.flatnonzero(on_own).tolist():
                        alone.append(keys[r])
                        self._run(state, state.parts[keys[r]], keys[r], enc, int(enc.bounds[r]),
                                  int(enc.bounds[r + 1]), K.NONE, rows)
                    idx = np.flatnonzero(~on_own)
                    keys = take_keys(keys, idx)
                    starts, ends = enc.bounds[idx], enc.bounds[idx + 1]
            self._run_pool(state, pool, enc, keys, pool.slots_of(keys), starts, ends, K.NONE, K.NONE, rows)
            self._gc(state, alone, K.NONE)
            for key in alone:  # ... until its state fits a slot again
                st = state.parts.get(key)
                if st is not None and pool.attach(key, st):
                    del state.parts[key]
            return rows
        if state.pool is not None:  # a state restored from an engine that stacked these partitions
            self._unstack(state)
        for r, key in enumerate(enc.keys):
            a, b = int(enc.bounds[r]), int(enc.bounds[r + 1])
            st = state.parts.get(key)
            if st is None:
                st = state.parts[key] = self._new_part(state)
            self._run(state, st, key, enc, a, b, K.NONE, rows)
        if self.kmode == K.RECORD:
            state.emit.add_instants(self, batch)
        self._gc(state, list(enc.keys), K.NONE)
        return rows

    # -- partitions stacked column-wise -----------------------------------------------------------

    def pooled(self, fam: Families) -> bool:
        """Are the partitions kept in one :class:`PartPool` and run in one kernel call per batch?
        Under WITHIN alone with a window and no leading negation: such a partition reports
        nothing until its window empties, and then only totals -- for the one group, or with
        GROUP BY for its own groups (moved there by :meth:`_run_pool`). Not without partition
        attributes: the one partition runs alone (:meth:`_run`), and a query's first run compiles
        one kernel instead of both. A batch stacks its partitions when it touches many, or when
        some are stacked already (:func:`..kernels.stack_batch`); the others run alone."""
        return (self.kmode == K.TOTAL and self.windowed and not self.unit.lead and not fam.python_values
                and bool(self.unit.plans[0].partition_attrs) and not KERNELS_ARE_TWINS)

    def _unstack(self, state: UnitState) -> None:
        """Every stacked partition goes on alone (:meth:`PartPool.detach`): this engine does not
        stack the query's partitions (:meth:`pooled`), and the state was restored from a snapshot
        of an engine that did. Left in the stack, a partition would start again beside it, its
        matches begun before the snapshot never meeting the events after it."""
        pool = state.pool
        for key, s in list(pool.items()):
            state.parts[key] = pool.detach(s)
        state.pool = None

    def _pool(self, state: UnitState) -> PartPool:
        if state.pool is None:
            state.pool = PartPool(self._new_part(state))
        return state.pool

    def _run_pool(self, state: UnitState, pool: PartPool, enc: Encoded, keys, slots: np.ndarray,
                  starts: np.ndarray, ends: np.ndarray, flush: int, now: int, rows: list) -> None:
        """:meth:`_run` for the stacked partitions ``slots`` (keys ``keys``), events
        ``starts[r]:ends[r]`` each; partitions whose window empties are folded and released."""
        if not len(slots):
            return
        fam = self._cache[state.kinds][0]
        plan = layout.plan(self._plan, python=True)
        SI, SF, scr, vI, vF, tI, tF = self._scratch(state, False)
        R = max(64, 4 * len(self.outnode))
        outM, outI, outF = self._out_rows(state, False, R)
        outR = np.zeros(R, np.int64)
        freed = np.zeros(len(slots), np.uint8)
        pool.overflows = 0
        r, pos = 0, 0
        record = layout.plan(self._plan)
        while True:
            # (set before every call: a partition run alone in between, :meth:`_run`, sets its own)
            plan.flush = flush
            plan.checked = 0 if self.floats else 1
            plan.sums = 1  # every stacked partition keeps its window sums (the kernels read them)
            status, r, pos, nout = KERNELS.run_pool(
                *pool.args(), pool.gI, pool.gF, slots, starts, ends, r, pos, now, freed, outR, record, self.parent,
                self.gate, self.outnode, fam.kindI, fam.kindF, fam.maskI, fam.maskF, enc.cls_ptr, enc.cls_node,
                enc.cls_kind, outM, outI, outF, SI, SF, scr, vI, vF, tI, tF, enc.ts, enc.cls, enc.valI, enc.vldI,
                enc.valF, enc.vldF, enc.inst, self.anc_ptr, self.anc_idx, self.col_ptr, self.col_idx)
            if nout:  # pragma: no cover - WITHIN alone reports rows only at the end
                raise AssertionError("rows from a stacked partition")
            matched = np.flatnonzero(freed == 2)  # (GROUP BY) partitions with matches
            if len(matched):
                taken = slots[matched]
                totI, totF = pool.fields["totI"][taken].tolist(), pool.fields["totF"][taken].tolist()
                for i, r_ in enumerate(matched.tolist()):
                    self._add_totals(state, keys[r_], totI[i], totF[i])
                pool.reset(taken)
            pool.release(slots[freed != 0])
            freed[:] = 0
            if status == 0:
                break
            if status == 5:  # one partition's totals outgrow int64: to Python integers
                s = int(slots[r])
                self._fold_arrays(state, keys[r], pool.fields["totI"][s], pool.fields["totF"][s])
            elif status == 6:  # the group's totals would: to Python integers
                self._fold_arrays(state, keys[r], pool.gI, pool.gF)
            elif status == 4 and pool.widen(len(slots)):
                continue  # every slot holds more STARTs now: this partition goes on where it stopped
            elif status in (2, 4):
                # an overflow inside the window (this partition goes on alone, exactly), or more
                # STARTs in its window than a slot holds (it goes on alone, with its own capacity)
                s = int(slots[r])
                st = state.parts[keys[r]] = pool.detach(s)
                if status == 2:
                    self._overflowed(st, fam)
                self._run(state, st, keys[r], enc, int(starts[r]) + pos, int(ends[r]), flush, rows)
                self._gc(state, [keys[r]], now)
                r, pos = r + 1, 0
                if r == len(slots):
                    break
            elif status == 3:
                raise CepaggError("aseq: events of one partition arrived out of time order "
                                  f"(key {keys[r]}); sort each partition by (ts, _id)")
        if len(keys) and not plan.grouped:
            self._fold_arrays(state, keys[0], pool.gI, pool.gF)

    def _flush_pool(self, state: UnitState, flush: int, now: int, rows: list) -> None:
        pool = state.pool
        if pool is None or not len(pool):
            return
        keys, slots = pool.live()
        zero = np.zeros(len(keys), np.int64)
        self._run_pool(state, pool, self._empty_encoded(state), keys, slots, zero, zero, flush, now, rows)

    def advance(self, state: UnitState, watermark: int) -> list[tuple[int, tuple]]:
        if state.kinds is None:
            return []
        self._fam(state, None)  # a state restored by a new engine object (another process)
        rows: list[tuple[int, tuple]] = []
        self._advance_all(state, watermark + 1, rows)
        self._flush_pool(state, watermark + 1, watermark + 1, rows)
        rows += self._merged(state, watermark + 1)
        self._gc(state, list(state.parts), watermark + 1)
        return rows

    def finish(self, state: UnitState) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        if state.kinds is not None:
            self._fam(state, None)  # as in advance
            flush = HI
            if self.kmode == K.RECORD:
                last = state.emit.last_instant()
                flush = LO if last is None else last + 1
            if flush != LO:
                self._advance_all(state, flush, rows)
                self._flush_pool(state, flush, HI, rows)
            rows += self._merged(state, HI)
            for key, st in list(state.parts.items()):
                self._fold(state, key, st)
            state.parts.clear()  # the input has ended: nothing is kept
            if state.pool is not None:
                pool = state.pool
                for key, s in pool.items():  # (every window has emptied at the end)
                    self._fold_arrays(state, key, pool.fields["totI"][s], pool.fields["totF"][s])
                state.pool = None
        if self.kmode == K.TOTAL:
            rows += self._total_rows(state)
        return rows

    # -- kernels ----------------------------------------------------------------------------------

    def _advance_all(self, state: UnitState, flush: int, rows: list) -> None:
        enc = None
        for key, st in list(state.parts.items()):
            if st.empty() and not st.ctr[AT["pending"]]:
                continue
            if enc is None:
                enc = self._empty_encoded(state)
            self._run(state, st, key, enc, 0, 0, flush, rows)

    def _empty_encoded(self, state: UnitState) -> Encoded:
        fam = self._cache[state.kinds][0]
        z = np.zeros(0, np.int64)
        return Encoded(z, z, np.zeros((0, len(fam.kindI)), np.int64), np.zeros((0, len(fam.kindI)), np.uint8),
                       np.zeros((0, len(fam.kindF))), np.zeros((0, len(fam.kindF)), np.uint8), z,
                       np.zeros(1, np.int64), z, z, [], np.zeros(1, np.int64))

    def _run(self, state: UnitState, st: PartState, key: tuple, enc: Encoded, a: int, b: int, flush: int,
             rows: list) -> None:
        fam = self._cache[state.kinds][0]
        unit = self.unit
        plan = layout.plan(self._plan, python=True)  # read-only for the kernel; three fields change per call
        plan.flush = flush
        ts, cls, inst = enc.ts[a:b], enc.cls[a:b], enc.inst[a:b]
        valI, vldI = enc.valI[a:b], enc.vldI[a:b]
        valF, vldF = enc.valF[a:b], enc.vldF[a:b]
        R = max(64, 4 * len(self.outnode))
        pos = 0
        grow = [1, 1]
        while True:
            if self.windowed:
                st.reserve(0, grow[0])
                if unit.lead:
                    st.reserve(1, grow[1])
            exact = st.exact
            numbers = WIDE if st.wide else exact  # the width of the integer family
            plan.checked = 0 if (exact or self.floats) else 1
            plan.sums = 0 if st.nosums else 1
            kern = TWIN if exact else wide_kernels() if st.wide else KERNELS
            SI, SF, scr, vI, vF, tI, tF = self._scratch(state, numbers)
            outM, outI, outF = self._out_rows(state, numbers, R)
            vi = valI.astype(object) if exact and valI.dtype != object else valI
            pk, pVI, totI, lastI = st.ints()
            st.ctr[AT["rows"]] = 0
            # the compiled kernel takes records, the twin copies it reads quickly (.layout)
            twin = kern._TWIN
            rec, ctr = layout.for_twin(self._plan, st.ctr) if twin else (layout.plan(self._plan),
                                                                         layout.counters(st.ctr))
            try:
                status, pos = kern.run(st.seg(0), st.seg(1), ctr, rec, self.parent, self.gate, self.outnode,
                                       fam.kindI, fam.kindF, fam.maskI, fam.maskF, enc.cls_ptr, enc.cls_node,
                                       enc.cls_kind, pk, pVI, st.pVF, st.pres, totI, st.totF, lastI,
                                       st.lastF, outM, outI, outF, SI, SF, scr, vI, vF, tI, tF,
                                       ts, cls, vi, vldI, valF, vldF, inst, pos, self.anc_ptr, self.anc_idx,
                                       self.col_ptr, self.col_idx, None if self.kmode == K.TOTAL else True)
            finally:  # (the twin's counters are copies: written back whatever happens)
                if twin:
                    ctr.store()
            n = int(st.ctr[AT["rows"]])
            if numbers is WIDE and n:
                outI = to_object(outI.a[:n])
            self._collect(state, key, st, outM, outI, outF, n, rows)
            st.ctr[AT["rows"]] = 0
            if status == 0:
                break
            if status == 1:
                R *= 4
            elif status == 2:
                if st.exact or self.floats:  # pragma: no cover - nothing is checked there
                    raise AssertionError("overflow reported by an unchecked kernel")
                self._overflowed(st, fam)
            elif status == 5:  # only the totals outgrow int64: keep them as Python ints, go on
                self._fold(state, key, st)
            elif status == 4:
                grow = [max(4, st.items(0)), max(4, st.items(1))]
            elif status == 3:
                raise CepaggError("aseq: events of one partition arrived out of time order "
                                  f"(key {key}); sort each partition by (ts, _id)")
        if st.exact or st.wide:
            st.try_int64(fam)

    def _overflowed(self, st: PartState, fam: Families) -> None:
        """An overflow in partition ``st``. Of int64: under WITHIN alone with a window its window
        sums, never read there, are dropped first (:func:`.windows.push`); if it overflows again,
        or in another mode, it goes on with 128-bit integers in the wide kernels (compiled on the
        first such overflow of an install). Of 128 bits (or where every kernel is a twin): with
        Python integers (the exact twin)."""
        if self.kmode == K.TOTAL and self.windowed and not st.nosums and not st.wide:
            st.drop_sums(fam)
        elif st.wide or KERNELS_ARE_TWINS:
            st.to_exact()
        else:
            st.to_wide()

    # -- rows -------------------------------------------------------------------------------------

    def cells(self, o: int, vI, vF, fam: Families) -> tuple[int, tuple]:
        """Number of matches and partial cells (see cepagg.engines.aggregates) of output ``o``."""
        num = float if self.floats else int
        out = []
        for slot in self.unit.outputs[o].aggs:
            if slot.value is None:
                out.append(num(vI[0]))
                continue
            v = _val(slot.value[1], vI, vF, fam)
            if slot.func == "COUNT":
                out.append(num(v))
            elif slot.func in ("SUM", "AVG"):
                n = num(_val(slot.nonnull[1], vI, vF, fam))
                out.append(((float(v) if self.floats else _num(v)) if n else num(0), n))
            else:
                out.append(_extreme(slot.value[1], v, fam))
        return num(vI[0]), tuple(out)

    def _check_extremes(self, enc: Encoded, fam: Families) -> None:
        """Float mode keeps MIN and MAX exact: integer values pass through float64 unchanged
        only up to 2**53 in magnitude, so larger ones are refused."""
        for c, (kind, src) in enumerate(zip(fam.kindI, fam.srcI)):
            if kind != LIN_KIND and src[0] == "attr" and len(enc.valI):
                col = enc.valI[:, c][enc.vldI[:, c] != 0]
                if len(col) and int(np.abs(col).max()) > 2**53:
                    raise CepaggError(f"aseq: numbers='float' keeps MIN/MAX of '{src[1]}' exact only up to "
                                      "2**53 in magnitude; this batch holds larger integers (use numbers='exact')")

    def final(self, o: int, cells: tuple) -> tuple:
        return cells if self.partial else aggmod.finalize(self.funcs[o], cells)

    def group(self, o: int, key: tuple) -> tuple:
        return tuple(key[i] for i in self.unit.outputs[o].plan.group_index)

    def _collect(self, state: UnitState, key: tuple, st: PartState, outM, outI, outF, n: int, rows: list) -> None:
        fam = self._cache[state.kinds][0]
        w = self.unit.within
        for r in range(n):
            t, o, kind = int(outM[r, 0]), int(outM[r, 1]), int(outM[r, 2])
            count, cells = self.cells(o, outI[r], outF[r], fam)
            g = self.group(o, key)
            if kind == K.ROW_EMIT:
                value = self.final(o, cells)
                last = st.last_final.get(o)
                if self.every or value != (last if last is not None else self.empty_final[o]):
                    rows.append((self.unit.outputs[o].index, g + (t,) + value))
                    st.last_final[o] = None if value == self.empty_final[o] else value
            elif kind == K.ROW_WINDOW:
                if self.coarse_slide:
                    state.slide.add(o, g, t, count, cells, self.funcs[o])
                else:
                    rows.append((self.unit.outputs[o].index, g + (t, t + w) + self.final(o, cells)))
            else:
                state.emit.add_record(self, o, key, t, count, cells)

    def _merged(self, state: UnitState, horizon: int) -> list:
        rows = []
        if self.coarse_slide:
            for o, g, ws, cells in state.slide.pop_final(horizon - self.unit.within):
                rows.append((self.unit.outputs[o].index, g + (ws, ws + self.unit.within) + self.final(o, cells)))
        if self.kmode == K.RECORD:
            rows += state.emit.merge(self, horizon)
        return rows

    def _fold(self, state: UnitState, key: tuple, st: PartState) -> None:
        """Move a partition's totals to its groups' totals (WITHIN alone)."""
        if st.wide and self.kmode == K.TOTAL:
            totI = to_object(st.totI)
            self._fold_arrays(state, key, totI, st.totF)
            st.totI[...] = limbs_of(totI)
            return
        self._fold_arrays(state, key, st.totI, st.totF)

    def _fold_arrays(self, state: UnitState, key: tuple, totI, totF) -> None:
        """:meth:`_fold` of totals held in ``totI``, ``totF`` (emptied)."""
        if self.kmode != K.TOTAL:
            return
        self._add_totals(state, key, totI, totF)
        empty_cells(totI, totF, self._cache[state.kinds][0])

    def _add_totals(self, state: UnitState, key: tuple, totI, totF) -> None:
        """Add totals (per output: arrays or lists of cells) to the groups of partition ``key``."""
        fam = self._cache[state.kinds][0]
        for o in range(len(self.outnode)):
            count, cells = self.cells(o, totI[o], totF[o], fam)
            if count == 0:
                continue
            gk = (o, self.group(o, key))
            prev = state.totals.get(gk)
            state.totals[gk] = (count, cells) if prev is None else (
                prev[0] + count, aggmod.merge(self.funcs[o], prev[1], cells))

    def _gc(self, state: UnitState, keys: list, now: int) -> None:
        """Drop partitions whose window holds nothing (their totals folded first); ``now``: the
        time every partition has been brought to (or NONE: only their own last events)."""
        w = self.unit.within
        for key in keys:
            st = state.parts.get(key)
            if st is None or not st.empty():
                continue
            ell = int(st.ctr[AT["lead_ts"]])
            if ell != K.NONE and (w is None or ell + w > max(_settled(st), now)):
                continue
            if self.kmode == K.EMIT and any(v is not None for v in st.last_final.values()):
                continue
            self._fold(state, key, st)
            del state.parts[key]

    def _total_rows(self, state: UnitState) -> list:
        rows = []
        per_output: dict[int, list] = {}
        for (o, g), (count, cells) in state.totals.items():
            per_output.setdefault(o, []).append((g, cells))
        for o, out in enumerate(self.unit.outputs):
            found = per_output.get(o, [])
            if not found and not out.plan.query.group_by and not self.partial:
                found = [((), aggmod.empty(self.funcs[o]))]
            for g, cells in found:
                rows.append((out.index, g + self.final(o, cells)))
        return rows


def _known(parts: dict, keys) -> np.ndarray:
    """Which of ``keys`` (a batch's) are keys of ``parts``: for integer keys (:class:`cepagg.engines.keys.IntKeys`)
    compared as integers, without a tuple per key of the batch."""
    if isinstance(keys, IntKeys) and len(parts) < len(keys):
        ints = [k[0] for k in parts if len(k) == 1 and type(k[0]) is int]
        if len(ints) == len(parts):
            return np.isin(keys.ints, np.array(ints, np.int64))
    return np.fromiter(map(parts.__contains__, keys), bool, len(keys))


def _settled(st: PartState) -> int:
    return int(st.ctr[AT["pending_ts"]])


def _val(i: int, vI, vF, fam: Families):
    fam_name, idx = fam.where[i]
    return vI[idx] if fam_name == "I" else vF[idx]


def _num(v):
    if isinstance(v, (np.floating, float)):
        return float(v)
    return int(v)


def _extreme(i: int, v, fam: Families):
    fam_name, idx = fam.where[i]
    if fam_name == "F":
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, (float, np.floating)):  # float mode: exact below 2**53, sentinels at +-2**63
        return None if abs(v) >= 2.0**63 else int(v)
    if v == TWIN_ALGEBRA.I_NEG or v == TWIN_ALGEBRA.I_POS:
        return None
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else v


# Reference: A-Seq (SIGMOD 2014) §3.4 (HPC: per-key states, results summed or per group; GROUP BY
# with a different key and the output policy are left open by the paper).
