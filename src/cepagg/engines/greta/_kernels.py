"""The GRETA runtime loops: one partition's graph over one batch of its events.

:func:`pos_one` runs the positive graph (Algorithm 2 with the extensions of Sections 5-7):
for each event in time order it computes the event's *record* -- the aggregates of all trends
ending at it, one per start bucket (:mod:`.windows`) -- from its predecessors' records, adds
it to the window results if it is an END event, and keeps it for later events. Edges are never
stored: the predecessor sum is a running total per state (no edge predicate), a prefix of an
ordered index (:mod:`.index`, for ``X.a θ NEXT(X).a``), or a scan over the stored vertices
(other edge conditions, negation crossing the transition, skip-till-next-match, contiguous).
Events with the same timestamp never precede each other: a timestamp's vertices are
*committed* to the running totals and indexes only when time moves on.

:func:`neg_run` runs a negative sub-pattern's graph. It needs no aggregates: a vertex keeps
the latest start of the sub-pattern matches ending at it, and every finished match
``(end time, latest start)`` that raises the running maximum is reported to the graph it
constrains (Definition 5 as a time threshold: a previous-type event ``p`` may precede a
following-type event ``e`` iff ``p.ts >= max{start of an N match ending before e}``).

:func:`pos_run` runs a stack of graphs of one shape (:mod:`.pool`), one after the other, and
returns ``(status, graph, next_event)``; :func:`pos_one`, a graph alone as a stack of one,
returns ``(status, next_event)``; :func:`neg_run` returns ``(status, next_event)``. A status
other than ``DONE`` asks the caller to grow an array or widen the integers (:mod:`.numbers`)
and call again from there: nothing is ever truncated or wrapped.

The entry points and the two steps of the loop (:func:`move_time`, :func:`take_event`) take
named records (plan, state, batch, scratch: :mod:`.kernel_args`); helpers take the arrays they use,
and the graph's scalars as one record (``sc.nv``: :func:`state_scalars`). The two steps are spliced
into :func:`pos_run` by numba (``@step``); the helpers of the per-event path (``@inline``: record
arithmetic, index cleaning, the condition interpreter, the start bucket, the SLIDE windows of an
END event, the negation thresholds) are inlined by LLVM: a call passing a dozen arrays costs more
than their work (``cepagg bench greta --only index_vs_scan --engines greta --sizes 1000``:
478,000-502,000 events/s with calls, against 729,000-833,000 inlined). Every other function (per
timestamp, per window, or used by few queries) is a call. The code of the rare features (EMIT ON
CHANGE, trailing negation: the variant with ``rare``) is in functions of its own called from the
steps, not spliced: numba copies a spliced step's code once per block of it, each copy with all the
step's variables, so the steps' own size costs compiling time in proportion to its square. The
per-event code of the common features stays in the steps: split into named parts (inlined either
way), the first query compiled for 28 to 44 s instead of about 22 (:func:`..kernels.jit` says why).
"""

from __future__ import annotations

import ctypes

import numpy as np

from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)  # called from Python: the entry points, and commit (:mod:`.switch`)
local = kernels.jit(_TWIN, python=False)  # called by kernels only
inline = kernels.jit(_TWIN, inline=True, python=False)  # small helpers of the per-event path
step = kernels.jit(_TWIN, inline="step", python=False)  # the two steps of the loop
_rec = kernels.sibling(__name__, "_records", _TWIN)
_idx = kernels.sibling(__name__, "index", _TWIN)
_prog = kernels.sibling(__name__, "_program", _TWIN)
from .kernel_args import PosArrays, PosBatch  # noqa: E402  (the records built in :func:`pos_run`)

rec_add = _rec.add
rec_sub = _rec.sub
rec_clear = _rec.clear
rec_clear_rows = _rec.clear_rows
rec_copy = _rec.copy
rec_nonzero = _rec.nonzero
rec_any_count = _rec.any_count
rec_inc = _rec.inc
rec_add_field = _rec.add_field
rec_as_float = _rec.as_float
rec_mul_add = _rec.mul_add
rec_normalize = _rec.normalize
rec_add_from_ring = _rec.add_from_ring
rec_add_ring_to_ring = _rec.add_ring_to_ring
rec_copy_to_ring = _rec.copy_to_ring
rec_add_to_ring = _rec.add_to_ring
rec_limit = _rec.limit
fen_clean = _idx.clean
fen_held = _idx.held
fen_leaf = _idx.leaf_of
prog_run = _prog.run
HARD = _rec.HARD
TOP = 1 << 61  # limit of a carried total's top limb (results of WITHIN alone)

# statuses
DONE, WIDEN, GROW_V, GROW_R, GROW_REC, OUT_FULL = 0, 1, 2, 3, 4, 5

NEG_INF = -(1 << 62)
POS_INF = 1 << 62


def scalars(names: str, width: int | None = None) -> np.dtype:
    """A record of int64 fields ``names`` (space-separated), ``width`` int64 wide in all (the
    values beyond the names unused): the names of a kernel's scalars, kept in an int64 array.

    The kernels read a field as an attribute, ``sc.now`` (numba compiles it to a load at a
    constant offset, as an integer index of the array was); Python code by name, ``sc["now"]``
    (``np.void`` has no attribute access)."""
    fields = names.split()
    return np.dtype({"names": fields, "formats": [np.int64] * len(fields),
                     "itemsize": 8 * (width or len(fields))})


#: a positive graph's plan scalars (``P.pi``, int64) read as one record: in the kernels
#: ``pi = plan_scalars(P.pi)``, then ``pi.w``; in Python ``P.pi.view(PLAN_SCALARS)[0]["w"]``
PLAN_SCALARS = scalars("mode hasw w s strat slo shi ns ng fi store start end exact lead trail suffix")
MODE_SLIDE, MODE_TOTAL, MODE_EMIT = 0, 1, 2
STRAT_ANY, STRAT_NEXT, STRAT_CONTIG = 0, 1, 2
KIND_TOTAL, KIND_INDEX, KIND_SCAN = 0, 2, 3
OWN_COUNT, OWN_SUM_INT, OWN_SUM_FLOAT, OWN_MINMAX = 0, 1, 2, 3
# columns of the plan tables
ST_LEAD, ST_TRAIL, ST_LOOP, ST_TOTAL = 0, 1, 2, 3
TR_SRC, TR_KIND, TR_ARG = 0, 1, 2
D_MASK, D_PROG = 0, 1
O_KIND, O_DST, O_NNZ, O_ATTR = 0, 1, 2, 3
IX_OFF, IX_N, IX_LOFF, IX_POINT, IX_SRC = 0, 1, 2, 3, 4
# columns of the state tables
B_KEY, B_KLO, B_M, B_SEQ, B_C0 = 0, 1, 2, 3, 4
V_TS, V_STATE, V_POS, V_BLO, V_BHI, V_DEATH = 0, 1, 2, 3, 4, 5
R_TS, R_STATE, R_ALIVE, R_BLO, R_BHI, R_KMIN, R_KMAX = 0, 1, 2, 3, 4, 5, 6

#: a positive graph's state scalars (``G.sc``, int64) read as one record, written through: in
#: the kernels ``sc = state_scalars(G.sc)``, then ``sc.nv += 1``; in Python
#: ``G.sc.view(STATE_SCALARS)[0]["nv"] += 1`` (numpy's ``np.void`` of an array is a view)
STATE_SCALARS = scalars("now nv vstart bhi blo pend pcommit wlo whi nrec rstart outn tlast haslast ncommit")
#: a negative graph's plan scalars (three int64: the layouts of saved states hold three) and
#: state scalars, read the same way
NEG_PLAN_SCALARS = scalars("w ng", width=3)
NEG_STATE_SCALARS = scalars("now nv pend maxls outn")
# a negative graph's vertex columns
N3_TS, N3_STATE, N3_LS = 0, 1, 2


# ----------------------------------------------------------------------------------------------
# the scalars as records: ``sc = state_scalars(G.sc)``, then ``sc.nv += 1`` (written through)

if _TWIN:
    # ctypes structures over the arrays' own bytes: numpy's ``np.void`` has no attribute access
    # and reads a field by name some five times slower than an array index; a ctypes field
    # reads faster than the index (and gives a Python integer: the scalars never outgrow int64)
    def plan_scalars(pi):
        return _PLAN_C.from_buffer_copy(pi)  # (a copy: plans are only read, and may be read-only)

    def state_scalars(sc):
        return _STATE_C.from_buffer(sc)

    def neg_plan_scalars(pi):
        return _NEG_PLAN_C.from_buffer_copy(pi)

    def neg_state_scalars(sc):
        return _NEG_STATE_C.from_buffer(sc)

    _PLAN_C, _STATE_C, _NEG_PLAN_C, _NEG_STATE_C = (
        type("Scalars", (ctypes.Structure,), {"_fields_": [(n, ctypes.c_int64) for n in d.names]})
        for d in (PLAN_SCALARS, STATE_SCALARS, NEG_PLAN_SCALARS, NEG_STATE_SCALARS))
else:
    # numba's records of the arrays (passed by reference: writes reach the array)
    @inline
    def plan_scalars(pi):
        return pi.view(PLAN_SCALARS)[0]

    @inline
    def state_scalars(sc):
        return sc.view(STATE_SCALARS)[0]

    @inline
    def neg_plan_scalars(pi):
        return pi.view(NEG_PLAN_SCALARS)[0]

    @inline
    def neg_state_scalars(sc):
        return sc.view(NEG_STATE_SCALARS)[0]


def variant(P):
    """The code a positive graph with plan ``P`` may run, as :func:`pos_one`'s last
    three arguments ``(slide, total, rare)``: ``True`` where it may, ``None`` where it may not.

    Three variants, each compiled the first time a query needs it: SLIDE windows; WITHIN alone
    (or no window); and everything, for the rarer features (EMIT ON CHANGE, a trailing
    negation, skip-till-next-match). The common two compile without the others' code."""
    pi = P.pi.view(PLAN_SCALARS)[0]
    if pi["mode"] == MODE_EMIT or pi["trail"] or pi["strat"] == STRAT_NEXT:
        return True, True, True
    if pi["mode"] == MODE_SLIDE:
        return True, None, None
    return None, True, None


@inline
def floordiv(a, b):
    return a // b


@inline
def lead_threshold(negM, mask, ng):
    m = NEG_INF
    for g in range(ng):
        if (mask >> g) & 1:
            if negM[g] > m:
                m = negM[g]
    return m


# ----------------------------------------------------------------------------------------------
# buckets


@local
def clear_slot(TI, TF, TM, AI, AF, AM, ST, B, mmin, emit, R, slot):
    """Forget start bucket ``slot`` (it expired; the slot will be reused). Index rows are not
    touched: their tags tell (:mod:`.index`)."""
    for x in range(ST.shape[0]):
        if ST[x, ST_TOTAL]:
            rec_clear(TI, TF, TM, x * R + slot, mmin)
    if emit:
        rec_clear(AI, AF, AM, slot, mmin)
    B[slot, B_SEQ] = -1


@inline
def start_bucket(sc, B, negM, mask, ng, mode, hasw, S, t):
    """Sequence number of the start bucket of a trend starting at ``t`` (created when new);
    -1 when no trend may start here (leading negation), -2 when the ring is full."""
    R = B.shape[0]
    m = lead_threshold(negM, mask, ng)
    if mode == MODE_SLIDE:
        key = floordiv(t, S)
        klo = NEG_INF if m == NEG_INF else floordiv(m, S) + 1
        if klo > key:
            return -1
    elif hasw:
        key = t
        klo = 0
    else:
        if m != NEG_INF:
            return -1
        key = 0
        klo = 0
    if sc.blo <= sc.bhi:
        slot = sc.bhi & (R - 1)
        if B[slot, B_KEY] == key and B[slot, B_KLO] == klo and B[slot, B_M] == m:
            return sc.bhi
        if sc.bhi - sc.blo + 1 >= R:
            return -2
        sc.bhi += 1
    else:
        sc.bhi += 1
        sc.blo = sc.bhi
    seq = sc.bhi
    slot = seq & (R - 1)
    B[slot, B_KEY] = key
    B[slot, B_KLO] = klo
    B[slot, B_M] = m
    B[slot, B_SEQ] = seq
    B[slot, B_C0] = sc.ncommit
    return seq


# ----------------------------------------------------------------------------------------------
# predecessors


@local
def scan_into(tI, tF, tM, VI, VF, VM, V, v_col, v_colv, e_col, e_colv, i, epos, t, tr, der_off,
              DER, thr, pg_off, PGC, pg_val, sv, sk, slots, blo, nb, x, R, L, mmin, hard, strat,
              vstart, pend):
    """Add the records of every valid stored predecessor of state ``x`` (transition ``tr``)."""
    lo_v = vstart
    if strat == STRAT_CONTIG:
        lo_v = pend - 1
        if lo_v < vstart or V[lo_v, V_POS] != epos - 1:
            return False
    over = False
    for v in range(lo_v, pend):
        if V[v, V_STATE] != x or V[v, V_BHI] < blo:
            continue
        if strat == STRAT_NEXT and V[v, V_DEATH] < t:
            continue
        ok = False
        for d in range(der_off[tr], der_off[tr + 1]):
            if DER[d, D_MASK] != 0 and V[v, V_TS] < thr[d]:
                continue
            p = DER[d, D_PROG]
            if p >= 0:
                if prog_run(PGC, pg_val, pg_off[p], pg_off[p + 1], v_col, v_colv, v, e_col,
                            e_colv, i, sv, sk) != 1:
                    continue
            ok = True
            break
        if not ok:
            continue
        lo = V[v, V_BLO]
        if lo < blo:
            lo = blo
        hi = V[v, V_BHI]
        if hi >= lo:
            rec_add_from_ring(tI, tF, tM, lo - blo, VI, VF, VM, v * R, lo & (R - 1), hi - lo + 1,
                              R, mmin)
    return over


@local
def own_contribution(tI, tF, tM, own_off, OWN, s, nb, i, e_aint, e_aflt, e_amm, e_aval, mmin, L,
                     hard, tmp):
    """COUNT(E), SUM, MIN, MAX: the event's own part, with its complete count. Returns
    True when a value does not fit (widen and retry)."""
    for o in range(own_off[s], own_off[s + 1]):
        kind = OWN[o, O_KIND]
        a = OWN[o, O_ATTR]
        dst = OWN[o, O_DST]
        for k in range(nb):
            if not rec_nonzero(tI, k, 0, L):
                continue
            if kind == OWN_COUNT:
                if rec_add_field(tI, k, dst, 0, L, hard):
                    return True
                continue
            if not e_aval[i, a]:
                continue
            if kind == OWN_SUM_INT:
                if not rec_mul_add(tI, k, dst, 0, e_aint[i, a], L, hard, tmp):
                    return True
                if rec_add_field(tI, k, OWN[o, O_NNZ], 0, L, hard):
                    return True
            elif kind == OWN_SUM_FLOAT:
                tF[k, dst] += e_aflt[i, a] * rec_as_float(tI, k, 0, L)
                if rec_add_field(tI, k, OWN[o, O_NNZ], 0, L, hard):
                    return True
            else:
                c = e_amm[i, a]
                if mmin[dst]:
                    if c < tM[k, dst]:
                        tM[k, dst] = c
                elif c > tM[k, dst]:
                    tM[k, dst] = c
    return False


# ----------------------------------------------------------------------------------------------
# END events: contributions to windows, totals, EMIT accumulators, trailing negation


@local
def keep_record(t, s, blo, nb, kmin, kmax, mode, hasw, W, sc, B, slots, REC, r_bkey, RI, RF, RM, tI,
                tF, tM, RW, mmin):
    """Trailing negation: keep the contributions of the END event just computed (per window
    ``kmin..kmax`` under SLIDE, else per start bucket) as record ``sc.nrec``, until a match
    of the negation invalidates it or its scope ends."""
    R = B.shape[0]
    r = sc.nrec
    REC[r, R_TS] = t
    REC[r, R_STATE] = s
    REC[r, R_ALIVE] = 1
    REC[r, R_BLO] = blo
    REC[r, R_BHI] = blo + nb - 1
    REC[r, R_KMIN] = kmin
    REC[r, R_KMAX] = kmax
    if mode == MODE_SLIDE:
        for k in range(kmin, kmax + 1):
            rec_copy(RI, RF, RM, r * RW + (k & (RW - 1)), tI, tF, tM, R + k - kmin)
    else:
        for k in range(nb):
            r_bkey[r, k] = B[slots[k], B_KEY]
            if mode == MODE_TOTAL and hasw and B[slots[k], B_M] > t - W:
                rec_clear(RI, RF, RM, r * R + k, mmin)
            else:
                rec_copy(RI, RF, RM, r * R + k, tI, tF, tM, k)
    sc.nrec = r + 1


@inline
def end_slide(tI, tF, tM, B, slots, t, W, S, nb, R, suffix, L, mmin, hard):
    """Per-window contribution of the END event just computed, into scratch rows ``R + k -
    kmin``. Returns (overflow, kmin, kmax)."""
    kmin = floordiv(t - W, S) + 1
    kmax = floordiv(t, S)
    K = kmax - kmin + 1
    if suffix:
        # no leading negation: window k sums the buckets whose pane is >= k
        kb = nb - 1
        run = R + K
        rec_clear(tI, tF, tM, run, mmin)
        for k in range(kmax, kmin - 1, -1):
            while kb >= 0 and B[slots[kb], B_KEY] >= k:
                if rec_add(tI, tF, tM, run, tI, tF, tM, kb, L, mmin, hard):
                    return True, kmin, kmax
                kb -= 1
            rec_copy(tI, tF, tM, R + k - kmin, tI, tF, tM, run)
    else:
        for w in range(K):
            rec_clear(tI, tF, tM, R + w, mmin)
        for kb in range(nb):
            slot = slots[kb]
            lo = B[slot, B_KLO]
            if lo < kmin:
                lo = kmin
            hi = B[slot, B_KEY]
            if hi > kmax:
                hi = kmax
            for k in range(lo, hi + 1):
                if rec_add(tI, tF, tM, R + k - kmin, tI, tF, tM, kb, L, mmin, hard):
                    return True, kmin, kmax
    return False, kmin, kmax


@local
def end_total(tI, tF, tM, B, slots, t, hasw, W, nb, R, L, mmin, hard):
    """WITHIN alone: sum of the buckets whose leading negation allows an end at ``t``."""
    rec_clear(tI, tF, tM, R, mmin)
    for kb in range(nb):
        if hasw and B[slots[kb], B_M] > t - W:
            continue
        if rec_add(tI, tF, tM, R, tI, tF, tM, kb, L, mmin, hard):
            return True
    return False


@local
def emit_log(tI, tF, tM, AI, AF, AM, B, sc, o_k, OI, OF, OM, lastI, lastF, lastM, tau, hasw, W,
             R, L, mmin, hard):
    """Record the EMIT ON CHANGE value at ``tau`` if it changed. Returns a status."""
    row = R + 1
    rec_clear(tI, tF, tM, row, mmin)
    for seq in range(sc.blo, sc.bhi + 1):
        slot = seq & (R - 1)
        if hasw:
            if B[slot, B_KEY] + W <= tau or B[slot, B_M] > tau - W:
                continue
        rec_add(tI, tF, tM, row, AI, AF, AM, slot, L, mmin, hard)
    rec_normalize(tI, row, L, 0)
    same = sc.haslast == 1
    if same:
        for j in range(tI.shape[1]):
            if tI[row, j] != lastI[0, j]:
                same = False
        for j in range(tF.shape[1]):
            if tF[row, j] != lastF[0, j]:
                same = False
        for j in range(tM.shape[1]):
            if tM[row, j] != lastM[0, j]:
                same = False
    if same:
        return DONE
    n = sc.outn
    if n > 0 and o_k[n - 1] == tau:
        n -= 1
    elif n >= o_k.shape[0]:
        return OUT_FULL
    o_k[n] = tau
    rec_copy(OI, OF, OM, n, tI, tF, tM, row)
    rec_copy(lastI, lastF, lastM, 0, tI, tF, tM, row)
    sc.haslast = 1
    sc.outn = n + 1
    return DONE


@local
def emit_room(sc, o_k, neg_off, neg_used, ng):
    """Whether the EMIT log has room for every value a move of time can write: one before the
    loop and one after, one per negative match and two per bucket."""
    need = 2 + 2 * (sc.bhi - sc.blo + 1)
    for g in range(ng):
        need += neg_off[g + 1] - neg_off[g] - neg_used[g]
    return sc.outn + need <= o_k.shape[0]


@local
def emit_due(sc, B, t, W):
    """EMIT under WITHIN: the first time before ``t`` at which the value changes without an
    event (a bucket's scope ends, or a leading negation's match stops blocking a bucket);
    ``POS_INF`` when none."""
    R = B.shape[0]
    tc = POS_INF
    if sc.blo > sc.bhi:
        return tc
    e = B[sc.blo & (R - 1), B_KEY] + W
    if e < t:
        tc = e
    for seq in range(sc.blo, sc.bhi + 1):
        slot = seq & (R - 1)
        if B[slot, B_M] != NEG_INF:
            e = B[slot, B_M] + W
            if sc.tlast < e and e < t and e < tc:
                tc = e
    return tc


@local
def emit_at(tau, hasw, W, sc, B, ST, TI, TF, TM, AI, AF, AM, tI, tF, tM, o_k, OI, OF, OM, lastI, lastF,
            lastM, L, mmin, hard):
    """EMIT: the value at ``tau`` (the buckets whose scope ended by then expired first), logged
    if it changed. Returns a status."""
    R = B.shape[0]
    if hasw:
        while sc.blo <= sc.bhi and B[sc.blo & (R - 1), B_KEY] + W <= tau:
            clear_slot(TI, TF, TM, AI, AF, AM, ST, B, mmin, True, R, sc.blo & (R - 1))
            sc.blo += 1
    st = emit_log(tI, tF, tM, AI, AF, AM, B, sc, o_k, OI, OF, OM, lastI, lastF, lastM, tau, hasw, W,
                  R, L, mmin, hard)
    if st == DONE:
        sc.tlast = tau
    return st


@local
def emit_rebuild(AI, AF, AM, REC, RI, RF, RM, B, sc, R, L, mmin, hard):
    """EMIT accumulators from the live trailing-negation records (after an invalidation, when
    MIN/MAX cannot be subtracted)."""
    over = False
    for s in range(R):
        rec_clear(AI, AF, AM, s, mmin)
    for r in range(sc.rstart, sc.nrec):
        if not REC[r, R_ALIVE]:
            continue
        lo = REC[r, R_BLO]
        for seq in range(lo, REC[r, R_BHI] + 1):
            slot = seq & (R - 1)
            if B[slot, B_SEQ] == seq:
                if rec_add(AI, AF, AM, slot, RI, RF, RM, r * R + (seq - lo), L, mmin, hard):
                    over = True
    return over


@local
def invalidate_record(r, d, mode, hasw, W, XI, XF, XM, AI, AF, AM, REC, r_bkey, RI, RF, RM, B, sc,
                      R, L, mmin, hard):
    """A match of a trailing negation (ending at ``d``) follows record ``r``'s END event."""
    REC[r, R_ALIVE] = 0
    over = False
    lo = REC[r, R_BLO]
    if mode == MODE_TOTAL and hasw:
        # buckets whose scope (start + W) ends no later than d stay valid
        for k in range(REC[r, R_BHI] - lo + 1):
            if r_bkey[r, k] + W <= d:
                rec_add(XI, XF, XM, 0, RI, RF, RM, r * R + k, L, mmin, hard)
                if rec_normalize(XI, 0, L, TOP if hard else 0):
                    over = True
    elif mode == MODE_EMIT:
        if mmin.shape[0] > 0:
            if emit_rebuild(AI, AF, AM, REC, RI, RF, RM, B, sc, R, L, mmin, hard):
                over = True
        else:
            for seq in range(lo, REC[r, R_BHI] + 1):
                slot = seq & (R - 1)
                if B[slot, B_SEQ] == seq:
                    rec_sub(AI, AF, slot, RI, RF, r * R + (seq - lo), L)
    return over


@local
def end_scopes(t, mode, hasw, W, sc, REC, XI, XF, XM, RI, RF, RM, R, L, mmin, hard):
    """Trailing negation, time moved on to ``t``: the records whose scope ended are final (WITHIN
    alone: added to the total; SLIDE, EMIT: no longer kept). Returns True when a value reached
    the limb limit (widen and move time again: the records added are marked)."""
    if mode == MODE_TOTAL:
        r = sc.rstart
        while r < sc.nrec and ((hasw == 0 and t >= POS_INF) or
                                   (hasw == 1 and REC[r, R_TS] + W <= t)):
            over = False
            if REC[r, R_ALIVE]:
                REC[r, R_ALIVE] = 0
                for k in range(REC[r, R_BHI] - REC[r, R_BLO] + 1):
                    rec_add(XI, XF, XM, 0, RI, RF, RM, r * R + k, L, mmin, hard)
                    if rec_normalize(XI, 0, L, TOP if hard else 0):
                        over = True
            r += 1
            if over:
                return True
    elif mode == MODE_SLIDE:
        while sc.rstart < sc.nrec and REC[sc.rstart, R_KMAX] < sc.wlo:
            sc.rstart += 1
    elif hasw:
        while sc.rstart < sc.nrec and REC[sc.rstart, R_TS] + W <= t:
            sc.rstart += 1
    return False


@local
def invalidate_before(g, ls, tau, mode, hasw, W, sc, gdone, grptr, XI, XF, XM, AI, AF, AM, REC, r_bkey,
                      RI, RF, RM, B, L, mmin, hard):
    """A match of trailing negation ``g`` (latest start ``ls``) at ``tau``: every live record
    whose END event came before ``ls`` is invalid. Returns True when a value reached the limb
    limit."""
    R = B.shape[0]
    over = False
    r = grptr[g]
    if r < sc.rstart:
        r = sc.rstart
    while r < sc.nrec and REC[r, R_TS] < ls:
        if REC[r, R_ALIVE]:
            if invalidate_record(r, tau, mode, hasw, W, XI, XF, XM, AI, AF, AM, REC, r_bkey, RI, RF,
                                 RM, B, sc, R, L, mmin, hard):
                over = True
        r += 1
    grptr[g] = r
    gdone[g] = ls
    return over


@local
def close_window(k, trail, sc, w_k, WI, WF, WM, REC, RI, RF, RM, o_k, OI, OF, OM, L, mmin, hard):
    """Window ``k`` is final: write its result (when it has a trend). Returns a status."""
    RW = w_k.shape[0]
    slot = k & (RW - 1)
    if sc.outn >= o_k.shape[0]:
        return OUT_FULL
    if trail:
        rec_clear(WI, WF, WM, slot, mmin)
        w_k[slot] = k
        for r in range(sc.rstart, sc.nrec):
            if REC[r, R_ALIVE] and REC[r, R_KMIN] <= k and k <= REC[r, R_KMAX]:
                if rec_add(WI, WF, WM, slot, RI, RF, RM, r * RW + slot, L, mmin, hard):
                    return WIDEN
    if w_k[slot] == k:
        if rec_nonzero(WI, slot, 0, L):
            n = sc.outn
            o_k[n] = k
            rec_copy(OI, OF, OM, n, WI, WF, WM, slot)
            sc.outn = n + 1
        rec_clear(WI, WF, WM, slot, mmin)
        w_k[slot] = NEG_INF
    return DONE


@jit
def commit(sc, V, v_irank, VI, VF, VM, TI, TF, TM, ST, IDX, NI, NF, NM, NT, LI, LF, LM, LT, R, L,
           mmin, hard, store):
    """Insert the vertices of the finished timestamp into running totals and indexes.
    Returns True (after a whole vertex) when a value reached the limb limit."""
    nidx = IDX.shape[0]
    alive = sc.blo
    v = sc.pcommit
    while v < sc.nv:
        x = V[v, V_STATE]
        lo = V[v, V_BLO]
        nb = V[v, V_BHI] - lo + 1
        s0 = lo & (R - 1)
        vbase = v * R
        if ST[x, ST_TOTAL]:
            rec_add_ring_to_ring(TI, TF, TM, x * R, VI, VF, VM, vbase, s0, nb, R, mmin)
        for ix in range(nidx):
            if IDX[ix, IX_SRC] != x:
                continue
            rank = v_irank[v, ix]
            if rank < 0:
                continue
            leaf = fen_leaf(LT, IDX[ix, IX_LOFF], rank)
            fen_clean(LI, LF, LM, LT, leaf, leaf * R, alive, R, mmin)
            rec_add_ring_to_ring(LI, LF, LM, leaf * R, VI, VF, VM, vbase, s0, nb, R, mmin)
            fen_held(LT, leaf, lo, lo + nb - 1)
            if IDX[ix, IX_POINT]:
                continue
            j = rank + 1
            n = IDX[ix, IX_N]
            while j <= n:
                node = IDX[ix, IX_OFF] + j
                fen_clean(NI, NF, NM, NT, node, node * R, alive, R, mmin)
                rec_add_ring_to_ring(NI, NF, NM, node * R, VI, VF, VM, vbase, s0, nb, R, mmin)
                fen_held(NT, node, lo, lo + nb - 1)
                j += j & (-j)
        v += 1
        sc.pcommit = v
        sc.ncommit += 1
    if store == 0:
        sc.nv = 0
        sc.vstart = 0
        sc.pend = 0
        sc.pcommit = 0
    else:
        sc.pend = sc.nv
    return False


@local
def compact(sc, V, v_irank, v_col, v_colv, VI, VF, VM, R, strat, t):
    """Drop stored vertices that no later event can use (purge in batches)."""
    blo = sc.blo
    any_bucket = sc.blo <= sc.bhi
    w = 0
    pend = sc.pend
    new_pend = -1
    for v in range(sc.vstart, sc.nv):
        if v == pend:
            new_pend = w
        keep = v >= pend or (V[v, V_BHI] >= blo and any_bucket and
                             not (strat == STRAT_NEXT and V[v, V_DEATH] < t))
        if strat == STRAT_CONTIG and v < pend - 1:
            keep = False
        if not keep:
            continue
        if w != v:
            for j in range(V.shape[1]):
                V[w, j] = V[v, j]
            for j in range(v_irank.shape[1]):
                v_irank[w, j] = v_irank[v, j]
            for j in range(v_col.shape[1]):
                v_col[w, j] = v_col[v, j]
                v_colv[w, j] = v_colv[v, j]
            for s in range(R):
                rec_copy(VI, VF, VM, w * R + s, VI, VF, VM, v * R + s)
        w += 1
    if new_pend < 0:
        new_pend = w
    sc.vstart = 0
    sc.pcommit = new_pend + (sc.pcommit - pend)
    sc.pend = new_pend
    sc.nv = w


@local
def compact_records(sc, REC, r_bkey, RI, RF, RM, grptr):
    RX = RI.shape[0] // REC.shape[0]
    w = 0
    for r in range(sc.rstart, sc.nrec):
        if not REC[r, R_ALIVE]:
            continue
        if w != r:
            for j in range(REC.shape[1]):
                REC[w, j] = REC[r, j]
            for k in range(r_bkey.shape[1]):
                r_bkey[w, k] = r_bkey[r, k]
            for k in range(RX):
                rec_copy(RI, RF, RM, w * RX + k, RI, RF, RM, r * RX + k)
        w += 1
    sc.rstart = 0
    sc.nrec = w
    for g in range(grptr.shape[0]):
        grptr[g] = 0


@local
def kill(sc, V, v_col, v_colv, e_col, e_colv, i, t, s, ST, fol, ns, pg_off, PGC, pg_val, sv, sk):
    """skip-till-next-match: event ``i`` could follow the stored vertices of the states it may
    follow, which stop being predecessors of events after ``t``."""
    for v in range(sc.vstart, sc.nv):
        if V[v, V_TS] >= t or V[v, V_DEATH] < POS_INF:
            continue
        x = V[v, V_STATE]
        if not fol[x * ns + s]:
            continue
        if x == s:
            p = ST[x, ST_LOOP]
            if p >= 0 and prog_run(PGC, pg_val, pg_off[p], pg_off[p + 1], v_col, v_colv, v, e_col,
                                   e_colv, i, sv, sk) != 1:
                continue
        V[v, V_DEATH] = t


# ----------------------------------------------------------------------------------------------
# the loop


def pos_one(P, G, E, X, i0, until, slide, total, rare):
    """Run one graph ``G`` over its events ``E`` (from event ``i0``), then move time to ``until``
    (exclusive: every event before it has been seen). Returns ``(status, next_event)``: ``DONE``,
    or a request to grow or widen (the arrays grown, the caller calls again from ``next_event``).

    The records ``P``, ``G``, ``E``, ``X`` are :mod:`.kernel_args`'; ``slide``, ``total``,
    ``rare``: the code the query may run (:func:`variant`), ``None`` where it may not: numba drops
    the branches behind an ``x is not None`` test of a ``None`` argument before typing them, so a
    variant compiles only the functions its queries call.

    A graph alone is a stack of one graph for :func:`pos_run` (slot 0, each field's slot as long
    as any array): one loop is compiled for graphs alone and stacked, so the first stacked batch
    compiles nothing more, and ``cepagg warmup`` compiles less."""
    st, _, i = pos_run(P, G, _WHOLE, _SLOT0, E, _SLOT0, np.full(1, E.e_ts.shape[0], np.int64),
                       np.full(1, until, np.int64), X, 0, i0, slide, total, rare)
    return st, i


#: :func:`pos_one`'s stack of one graph: slot 0, whose fields run to their arrays' ends
_WHOLE = np.full(len(PosArrays._fields), 2**62, np.int64)
_SLOT0 = np.zeros(1, np.int64)


@jit
def pos_run(P, GP, rows, slots, EP, lo, hi, untils, X, j0, i0, slide, total, rare):
    """Run the graphs ``slots[j0:]`` of ``GP``, one after the other: graph ``j`` processes its
    events ``EP[lo[j]:hi[j]]`` (from ``i0`` for the first, ``j0``), then moves time to
    ``untils[j]`` (as :func:`pos_one` says). Returns ``(status, j, next_event)``: ``DONE`` once
    every graph ran; otherwise graph ``j`` asks to grow or widen (its arrays grown, it is run
    again from ``next_event``).

    ``GP`` holds graphs of one shape stacked (:class:`.pool.GraphPool`): field ``f`` of graph
    ``s`` is rows ``s * rows[f]`` to ``(s + 1) * rows[f]`` of ``GP``'s field ``f``. The records
    of views are built here, without a call from Python per graph: unboxing the 82 arrays of the
    four records cost more than a small batch's work. The loop over a graph's events is
    written here, not called per graph: a call would pass the ~80 arrays of its records by value
    and build every view, used or not, more than a graph with one event costs (at 10^6 keys,
    0.62 µs for a visit with no event, against 0.27 µs)."""
    pi = plan_scalars(P.pi)
    for j in range(j0, slots.shape[0]):
        G = graph_of(GP, rows, slots[j])
        E = batch_of(EP, lo[j], hi[j])
        until = untils[j]
        sc = state_scalars(G.sc)
        n = E.e_ts.shape[0]
        thresholds(P.DER, X.thr, G.negM, pi.ng)
        i = i0 if j == j0 else 0
        while True:
            final = i >= n
            if final:
                t = until
                if t <= sc.now:
                    break
            else:
                t = E.e_ts[i]
            if t > sc.now:
                st = move_time(P, G, E, X, t, final, slide, total, rare)
                if st != DONE:
                    return st, j, i
                if final:
                    break
            st, i = take_event(P, G, E, X, i, t, slide, total, rare)
            if st != DONE:
                return st, j, i
    return DONE, slots.shape[0], 0


@step
def graph_of(GP, rows, s):
    """Graph ``s`` of the stacked graphs ``GP`` (:func:`pos_run`): field ``f`` is rows
    ``s * rows[f]`` to ``(s + 1) * rows[f]`` of ``GP``'s (views: spliced into the caller, as
    compiled code without reference counting returns no view from a call)."""
    t = s + 1
    return PosArrays(
        GP.sc[s * rows[0]:t * rows[0]], GP.negM[s * rows[1]:t * rows[1]], GP.gdone[s * rows[2]:t * rows[2]],
        GP.grptr[s * rows[3]:t * rows[3]], GP.B[s * rows[4]:t * rows[4]], GP.TI[s * rows[5]:t * rows[5]],
        GP.TF[s * rows[6]:t * rows[6]], GP.TM[s * rows[7]:t * rows[7]], GP.IDX[s * rows[8]:t * rows[8]],
        GP.NI[s * rows[9]:t * rows[9]], GP.NF[s * rows[10]:t * rows[10]], GP.NM[s * rows[11]:t * rows[11]],
        GP.NT[s * rows[12]:t * rows[12]], GP.LI[s * rows[13]:t * rows[13]], GP.LF[s * rows[14]:t * rows[14]],
        GP.LM[s * rows[15]:t * rows[15]], GP.LT[s * rows[16]:t * rows[16]], GP.V[s * rows[17]:t * rows[17]],
        GP.v_irank[s * rows[18]:t * rows[18]], GP.v_col[s * rows[19]:t * rows[19]],
        GP.v_colv[s * rows[20]:t * rows[20]], GP.VI[s * rows[21]:t * rows[21]], GP.VF[s * rows[22]:t * rows[22]],
        GP.VM[s * rows[23]:t * rows[23]], GP.w_k[s * rows[24]:t * rows[24]], GP.WI[s * rows[25]:t * rows[25]],
        GP.WF[s * rows[26]:t * rows[26]], GP.WM[s * rows[27]:t * rows[27]], GP.XI[s * rows[28]:t * rows[28]],
        GP.XF[s * rows[29]:t * rows[29]], GP.XM[s * rows[30]:t * rows[30]], GP.AI[s * rows[31]:t * rows[31]],
        GP.AF[s * rows[32]:t * rows[32]], GP.AM[s * rows[33]:t * rows[33]], GP.REC[s * rows[34]:t * rows[34]],
        GP.r_bkey[s * rows[35]:t * rows[35]], GP.RI[s * rows[36]:t * rows[36]], GP.RF[s * rows[37]:t * rows[37]],
        GP.RM[s * rows[38]:t * rows[38]], GP.o_k[s * rows[39]:t * rows[39]], GP.OI[s * rows[40]:t * rows[40]],
        GP.OF[s * rows[41]:t * rows[41]], GP.OM[s * rows[42]:t * rows[42]], GP.lastI[s * rows[43]:t * rows[43]],
        GP.lastF[s * rows[44]:t * rows[44]], GP.lastM[s * rows[45]:t * rows[45]])


@step
def batch_of(EP, a, b):
    """Events ``a`` to ``b`` of the batch ``EP`` (the negation inputs whole)."""
    return PosBatch(EP.e_ts[a:b], EP.e_state[a:b], EP.e_pos[a:b], EP.e_qpos[a:b], EP.e_ipos[a:b],
                    EP.e_col[a:b], EP.e_colv[a:b], EP.e_aint[a:b], EP.e_aflt[a:b], EP.e_amm[a:b],
                    EP.e_aval[a:b], EP.neg_t, EP.neg_ls, EP.neg_off, EP.neg_used)


@inline
def thresholds(DER, thr, negM, ng):
    """Each derivation's lower bound on a predecessor's time set by the leading negations."""
    for d in range(DER.shape[0]):
        thr[d] = lead_threshold(negM, DER[d, D_MASK], ng)


@step
def move_time(P, G, E, X, t, final, slide, total, rare):
    """Time moves on to ``t`` (the next event's, or ``until`` when ``final``): commit the last
    timestamp's vertices, apply negative matches, close windows, expire start buckets, report
    EMIT changes. Returns a status (``DONE``: go on with the event)."""
    pi = plan_scalars(P.pi)
    ST, mmin = P.ST, P.mmin
    sc = state_scalars(G.sc)
    negM, gdone, grptr, B, TI, TF, TM, IDX = G.negM, G.gdone, G.grptr, G.B, G.TI, G.TF, G.TM, G.IDX
    NI, NF, NM, NT, LI, LF, LM, LT, V = G.NI, G.NF, G.NM, G.NT, G.LI, G.LF, G.LM, G.LT, G.V
    v_irank, v_col, v_colv, VI, VF, VM, w_k, WI = G.v_irank, G.v_col, G.v_colv, G.VI, G.VF, G.VM, G.w_k, G.WI
    WF, WM, XI, XF, XM, AI, AF, AM, REC = G.WF, G.WM, G.XI, G.XF, G.XM, G.AI, G.AF, G.AM, G.REC
    r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI = G.r_bkey, G.RI, G.RF, G.RM, G.o_k, G.OI, G.OF, G.OM, G.lastI
    lastF, lastM = G.lastF, G.lastM
    neg_t, neg_ls, neg_off, neg_used = E.neg_t, E.neg_ls, E.neg_off, E.neg_used
    tI, tF, tM = X.tI, X.tF, X.tM
    R = G.B.shape[0]
    L = G.TI.shape[1] // pi.fi
    hard = 0 if pi.exact else HARD
    mode = pi.mode
    hasw = pi.hasw
    W = pi.w
    S = pi.s
    strat = pi.strat
    ng = pi.ng
    trail = pi.trail
    emit = pi.mode == MODE_EMIT
    end_state = pi.end
    # ---- EMIT: room for every value this move can log, asked for before anything changes (a
    # full buffer midway would make the retry log the value before t from a state already
    # moved): one before the loop and one after, one per negative match and two per bucket ----
    if rare is not None and emit and not emit_room(sc, o_k, neg_off, neg_used, ng):
        return OUT_FULL
    # ---- time moves on to t: commit the last timestamp's vertices ----
    if sc.pcommit < sc.nv:
        if commit(sc, V, v_irank, VI, VF, VM, TI, TF, TM, ST, IDX, NI, NF, NM, NT, LI, LF,
                  LM, LT, R, L, mmin, hard, pi.store):
            return WIDEN
    # ---- EMIT: the value after the last timestamp ----
    if rare is not None and emit and sc.now > NEG_INF and sc.now >= sc.tlast:
        st = emit_log(tI, tF, tM, AI, AF, AM, B, sc, o_k, OI, OF, OM, lastI, lastF, lastM,
                      sc.now, hasw, W, R, L, mmin, hard)
        if st != DONE:
            return st
    # ---- negative matches ending before t, window closes, EMIT changes ----
    over = False
    while True:
        ta = POS_INF
        for g in range(ng):
            j = neg_off[g] + neg_used[g]
            if j < neg_off[g + 1] and neg_t[j] < t and neg_t[j] < ta:
                ta = neg_t[j]
        tb = POS_INF
        if slide is not None and mode == MODE_SLIDE and sc.wlo <= sc.whi:
            e = sc.wlo * S + W
            if e <= t:
                tb = e
        tc = POS_INF
        if rare is not None and emit and hasw:
            tc = emit_due(sc, B, t, W)
        tau = ta
        if tb < tau:
            tau = tb
        if tc < tau:
            tau = tc
        if tau == POS_INF:
            break
        if slide is not None and tb == tau:
            st = close_window(sc.wlo, trail, sc, w_k, WI, WF, WM, REC, RI, RF, RM,
                              o_k, OI, OF, OM, L, mmin, hard)
            if st != DONE:
                return st
            sc.wlo += 1
            continue
        if ta == tau:
            for g in range(ng):
                j = neg_off[g] + neg_used[g]
                while j < neg_off[g + 1] and neg_t[j] == tau:
                    ls = neg_ls[j]
                    if ls > negM[g]:
                        negM[g] = ls
                    if rare is not None and (ST[end_state, ST_TRAIL] >> g) & 1 and ls > gdone[g]:
                        if invalidate_before(g, ls, tau, mode, hasw, W, sc, gdone, grptr, XI, XF, XM,
                                             AI, AF, AM, REC, r_bkey, RI, RF, RM, B, L, mmin, hard):
                            over = True
                    neg_used[g] += 1
                    j += 1
        if rare is not None and emit:
            st = emit_at(tau, hasw, W, sc, B, ST, TI, TF, TM, AI, AF, AM, tI, tF, tM, o_k, OI, OF, OM,
                         lastI, lastF, lastM, L, mmin, hard)
            if st != DONE:
                return st
        if over:
            return WIDEN
    if slide is not None and mode == MODE_SLIDE and sc.wlo > sc.whi:
        sc.wlo = POS_INF
        sc.whi = NEG_INF
    # ---- expire start buckets no trend ending at t or later can use ----
    if mode == MODE_SLIDE or hasw:
        limit = floordiv(t - W, S) + 1 if mode == MODE_SLIDE else t - W + 1
        while sc.blo <= sc.bhi and B[sc.blo & (R - 1), B_KEY] < limit:
            clear_slot(TI, TF, TM, AI, AF, AM, ST, B, mmin, emit, R, sc.blo & (R - 1))
            sc.blo += 1
    # ---- trailing negation: scopes that ended ----
    if rare is not None and trail:
        if end_scopes(t, mode, hasw, W, sc, REC, XI, XF, XM, RI, RF, RM, R, L, mmin, hard):
            return WIDEN
    if rare is not None and emit:
        st = emit_log(tI, tF, tM, AI, AF, AM, B, sc, o_k, OI, OF, OM, lastI, lastF, lastM,
                      t, hasw, W, R, L, mmin, hard)
        if st != DONE:
            return st
        sc.tlast = t
    if final:
        sc.now = t - 1
        sc.pend = sc.nv
        sc.pcommit = sc.nv
        if sc.vstart > 0 or sc.nv > 0:
            compact(sc, V, v_irank, v_col, v_colv, VI, VF, VM, R, strat, t)
        if rare is not None and sc.rstart > 0:
            compact_records(sc, REC, r_bkey, RI, RF, RM, grptr)
        return DONE
    sc.now = t
    sc.pend = sc.nv
    sc.pcommit = sc.nv
    thresholds(P.DER, X.thr, G.negM, pi.ng)
    return DONE


@step
def take_event(P, G, E, X, i, t, slide, total, rare):
    """Event ``i`` at time ``t``: its record per start bucket from its predecessors', its
    contribution to the results if it ends a trend, and its vertex for later events.
    Returns ``(status, next event)``."""
    pi = plan_scalars(P.pi)
    ST, fol, tr_off, TR, der_off, DER = P.ST, P.fol, P.tr_off, P.TR, P.der_off, P.DER
    own_off, OWN, mmin, pg_off, PGC, pg_val = P.own_off, P.OWN, P.mmin, P.pg_off, P.PGC, P.pg_val
    sc = state_scalars(G.sc)
    negM, grptr, B, TI, TF, TM, IDX, NI = G.negM, G.grptr, G.B, G.TI, G.TF, G.TM, G.IDX, G.NI
    NF, NM, NT, LI, LF, LM, LT, V, v_irank = G.NF, G.NM, G.NT, G.LI, G.LF, G.LM, G.LT, G.V, G.v_irank
    v_col, v_colv, VI, VF, VM, w_k, WI, WF, WM = G.v_col, G.v_colv, G.VI, G.VF, G.VM, G.w_k, G.WI, G.WF, G.WM
    XI, XF, XM, AI, AF, AM, REC, r_bkey, RI = G.XI, G.XF, G.XM, G.AI, G.AF, G.AM, G.REC, G.r_bkey, G.RI
    RF, RM = G.RF, G.RM
    e_state, e_pos, e_qpos, e_ipos, e_col, e_colv = E.e_state, E.e_pos, E.e_qpos, E.e_ipos, E.e_col, E.e_colv
    e_aint, e_aflt, e_amm, e_aval = E.e_aint, E.e_aflt, E.e_amm, E.e_aval
    tI, tF, tM, tmp, sv, sk, slots, thr = X.tI, X.tF, X.tM, X.tmp, X.sv, X.sk, X.slots, X.thr
    R = G.B.shape[0]
    RW = G.w_k.shape[0]
    L = G.TI.shape[1] // pi.fi
    hard = 0 if pi.exact else HARD
    mode = pi.mode
    hasw = pi.hasw
    W = pi.w
    S = pi.s
    strat = pi.strat
    ng = pi.ng
    ns = pi.ns
    trail = pi.trail
    start_state = pi.start
    end_state = pi.end
    vcap = G.V.shape[0]
    rcap = G.REC.shape[0]
    s = e_state[i]
    if sc.nv >= vcap:
        if sc.vstart > 0 or pi.store:
            compact(sc, V, v_irank, v_col, v_colv, VI, VF, VM, R, strat, t)
        if sc.nv >= vcap:
            return GROW_V, i
    if rare is not None and sc.nrec >= rcap:
        compact_records(sc, REC, r_bkey, RI, RF, RM, grptr)
        if sc.nrec >= rcap:
            return GROW_REC, i
    seq0 = -1
    if start_state == s and pi.slo <= t and t < pi.shi:
        seq0 = start_bucket(sc, B, negM, ST[s, ST_LEAD], ng, mode, hasw, S, t)
        if seq0 == -2:
            return GROW_R, i
    blo = sc.blo
    nb = sc.bhi - blo + 1
    if nb > 0:
        s0 = blo & (R - 1)
        for k in range(nb):
            slots[k] = (blo + k) & (R - 1)
        rec_clear_rows(tI, tF, tM, 0, nb, mmin)
        over = False
        for tr in range(tr_off[s], tr_off[s + 1]):
            x = TR[tr, TR_SRC]
            kind = TR[tr, TR_KIND]
            if kind == KIND_TOTAL:
                rec_add_from_ring(tI, tF, tM, 0, TI, TF, TM, x * R, s0, nb, R, mmin)
            elif kind == KIND_INDEX:
                ix = TR[tr, TR_ARG]
                q = e_qpos[i, ix]
                if IDX[ix, IX_POINT]:
                    if q >= 0:
                        leaf = fen_leaf(LT, IDX[ix, IX_LOFF], q)
                        fen_clean(LI, LF, LM, LT, leaf, leaf * R, blo, R, mmin)
                        rec_add_from_ring(tI, tF, tM, 0, LI, LF, LM, leaf * R, s0, nb, R, mmin)
                else:
                    j = q
                    off = IDX[ix, IX_OFF]
                    while j > 0:
                        node = off + j
                        fen_clean(NI, NF, NM, NT, node, node * R, blo, R, mmin)
                        rec_add_from_ring(tI, tF, tM, 0, NI, NF, NM, node * R, s0, nb, R, mmin)
                        j -= j & (-j)
            else:
                if scan_into(tI, tF, tM, VI, VF, VM, V, v_col, v_colv, e_col, e_colv, i,
                             e_pos[i], t, tr, der_off, DER, thr, pg_off, PGC, pg_val, sv, sk,
                             slots, blo, nb, x, R, L, mmin, hard, strat, sc.vstart,
                             sc.pend):
                    over = True
            if over:
                return WIDEN, i
        if seq0 >= 0:
            rec_inc(tI, seq0 - blo, 0, L, hard)
        if rec_any_count(tI, 0, nb, L):
            # the largest top limb a vertex value may have so that no stored sum wraps
            top = 0
            if hard:
                terms = sc.ncommit - B[blo & (R - 1), B_C0] + 1
                top = rec_limit(terms, R + RW)
            # (nothing to normalise or check in records of one word without a limit: float
            # mode, and the exact twin)
            norm = L > 1 or top > 0
            if norm:
                for k in range(nb):
                    if rec_normalize(tI, k, L, top):
                        return WIDEN, i
            # a call only when the state has own contributions (COUNT(E), SUM, MIN, MAX of it)
            if own_off[s] < own_off[s + 1]:
                if own_contribution(tI, tF, tM, own_off, OWN, s, nb, i, e_aint, e_aflt, e_amm, e_aval,
                                    mmin, L, hard, tmp):
                    return WIDEN, i
                if norm:
                    for k in range(nb):
                        if rec_normalize(tI, k, L, top):
                            return WIDEN, i
            over = False
            if end_state == s:
                kmin = 0
                kmax = 0
                if slide is not None and mode == MODE_SLIDE:
                    bad, kmin, kmax = end_slide(tI, tF, tM, B, slots, t, W, S, nb, R,
                                                pi.suffix, L, mmin, hard)
                elif total is not None and mode == MODE_TOTAL:
                    bad = end_total(tI, tF, tM, B, slots, t, hasw, W, nb, R, L, mmin, hard)
                else:
                    bad = False
                if bad:
                    return WIDEN, i
                if rare is not None and trail:
                    keep_record(t, s, blo, nb, kmin, kmax, mode, hasw, W, sc, B, slots, REC, r_bkey,
                                RI, RF, RM, tI, tF, tM, RW, mmin)
                if slide is not None and mode == MODE_SLIDE:
                    if sc.wlo > sc.whi:
                        sc.wlo = kmin
                        sc.whi = kmax
                    if kmin < sc.wlo:
                        sc.wlo = kmin
                    if kmax > sc.whi:
                        sc.whi = kmax
                    for k in range(kmin, kmax + 1):
                        slot = k & (RW - 1)
                        if w_k[slot] != k:
                            rec_clear(WI, WF, WM, slot, mmin)
                            w_k[slot] = k
                    if not trail:  # the windows' rows: at most two contiguous blocks of the ring
                        rec_add_to_ring(WI, WF, WM, 0, tI, tF, tM, R, kmin & (RW - 1), kmax - kmin + 1,
                                        RW, mmin)
                elif total is not None and mode == MODE_TOTAL:
                    if not trail:
                        rec_add(XI, XF, XM, 0, tI, tF, tM, R, L, mmin, hard)
                        if rec_normalize(XI, 0, L, TOP if hard else 0):
                            over = True
                elif rare is not None and mode == MODE_EMIT:
                    for k in range(nb):
                        if rec_add(AI, AF, AM, slots[k], tI, tF, tM, k, L, mmin, hard):
                            over = True
            # keep the vertex for later events
            v = sc.nv
            V[v, V_TS] = t
            V[v, V_STATE] = s
            V[v, V_POS] = e_pos[i]
            V[v, V_BLO] = blo
            V[v, V_BHI] = blo + nb - 1
            V[v, V_DEATH] = POS_INF
            for j in range(v_irank.shape[1]):
                v_irank[v, j] = e_ipos[i, j]
            for j in range(v_col.shape[1]):
                v_col[v, j] = e_col[i, j]
                v_colv[v, j] = e_colv[i, j]
            rec_copy_to_ring(VI, VF, VM, v * R, tI, tF, tM, 0, s0, nb, R)
            sc.nv = v + 1
            if over:
                if rare is not None and strat == STRAT_NEXT:
                    kill(sc, V, v_col, v_colv, e_col, e_colv, i, t, s, ST, fol, ns, pg_off,
                         PGC, pg_val, sv, sk)
                return WIDEN, i + 1
    if rare is not None and strat == STRAT_NEXT:
        kill(sc, V, v_col, v_colv, e_col, e_colv, i, t, s, ST, fol, ns, pg_off, PGC, pg_val,
             sv, sk)
    return DONE, i + 1


# ----------------------------------------------------------------------------------------------
# negative sub-patterns


@jit
def neg_run(P, G, E, X, i0, until):
    """A negative sub-pattern's graph over a batch: finished matches as (end, latest start).

    ``P``, ``G``, ``E``, ``X``: plan, state, batch and scratch (:mod:`.kernel_args`); the batch
    carries the matches of the child negations (nested NOT). A vertex keeps the latest start of
    the sub-pattern matches ending at it; a match whose latest start does not raise the maximum
    reported so far (``sc.maxls``) is useless and dropped.
    """
    pi = neg_plan_scalars(P.pi)
    sc = neg_state_scalars(G.sc)
    negM, V3, v_col, v_colv, o_t, o_ls = G.negM, G.V3, G.v_col, G.v_colv, G.o_t, G.o_ls
    st_start, st_end, tr_off, TR, der_off, DER = P.st_start, P.st_end, P.tr_off, P.TR, P.der_off, P.DER
    e_ts, e_state, e_col, e_colv = E.e_ts, E.e_state, E.e_col, E.e_colv
    neg_t, neg_ls, neg_off, neg_used = E.neg_t, E.neg_ls, E.neg_off, E.neg_used
    thr = X.thr
    W = pi.w
    ng = pi.ng
    n = e_ts.shape[0]
    cap = V3.shape[0]
    for d in range(DER.shape[0]):
        thr[d] = lead_threshold(negM, DER[d, D_MASK], ng)
    i = i0
    while True:
        final = i >= n
        t = until if final else e_ts[i]
        if t > sc.now:
            # child matches ending before t; drop vertices no match can use any more
            for g in range(ng):
                j = neg_off[g] + neg_used[g]
                while j < neg_off[g + 1] and neg_t[j] < t:
                    if neg_ls[j] > negM[g]:
                        negM[g] = neg_ls[j]
                    neg_used[g] += 1
                    j += 1
            for d in range(DER.shape[0]):
                thr[d] = lead_threshold(negM, DER[d, D_MASK], ng)
            w = 0
            for v in range(sc.nv):
                if V3[v, N3_LS] <= sc.maxls or (W > 0 and V3[v, N3_LS] <= t - W):
                    continue
                if w != v:
                    for j in range(3):
                        V3[w, j] = V3[v, j]
                    for j in range(v_col.shape[1]):
                        v_col[w, j] = v_col[v, j]
                        v_colv[w, j] = v_colv[v, j]
                w += 1
            sc.nv = w
            sc.pend = w
            sc.now = t - 1 if final else t
        if final:
            break
        s = e_state[i]
        i += 1
        if sc.nv >= cap:
            return GROW_V, i - 1
        ls = NEG_INF
        if st_start[s]:
            ls = t
        for tr in range(tr_off[s], tr_off[s + 1]):
            x = TR[tr, TR_SRC]
            for v in range(sc.pend):
                if V3[v, N3_STATE] != x or V3[v, N3_LS] <= ls:
                    continue
                ok = False
                for d in range(der_off[tr], der_off[tr + 1]):
                    if DER[d, D_MASK] != 0 and V3[v, N3_TS] < thr[d]:
                        continue
                    p = DER[d, D_PROG]
                    if p >= 0 and prog_run(P.PGC, P.pg_val, P.pg_off[p], P.pg_off[p + 1], v_col, v_colv, v,
                                           e_col, e_colv, i - 1, X.sv, X.sk) != 1:
                        continue
                    ok = True
                    break
                if ok:
                    ls = V3[v, N3_LS]
        if ls == NEG_INF or ls <= sc.maxls or (W > 0 and t - ls >= W):
            continue
        if st_end[s]:
            m = sc.outn
            if m >= o_t.shape[0]:
                return GROW_REC, i - 1
            o_t[m] = t
            o_ls[m] = ls
            sc.outn = m + 1
            sc.maxls = ls
            continue  # extending it can only give matches with starts <= ls: useless
        v = sc.nv
        V3[v, N3_TS] = t
        V3[v, N3_STATE] = s
        V3[v, N3_LS] = ls
        for j in range(v_col.shape[1]):
            v_col[v, j] = e_col[i - 1, j]
            v_colv[v, j] = e_colv[i - 1, j]
        sc.nv = v + 1
    return DONE, n


# Reference: Poppe, Lei, Rundensteiner, Maier, "GRETA: Graph-based Real-time Event Trend
# Aggregation", PVLDB 11(1), 2017: Algorithm 2 (Section 4.2) and Theorem 2
# (count propagation); Section 5.2 (negative graphs, Definition 5 invalidation, event pruning);
# Section 6 (sliding windows share one graph; grouping); Section 7 (panes, batch purge);
# Section 9 (skip-till-next-match and contiguous as a change of adjacency).
