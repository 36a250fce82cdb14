"""The GRETA runtime loops: one partition's graph over one batch of its events.

:func:`pos_run` runs the positive graph (Algorithm 2 with the extensions of Sections 5-7):
for each event in time order it computes the event's *record* -- the aggregates of all trends
ending at it, one per start bucket (:mod:`.windows`) -- from its predecessors' records, then
adds it to the window results if it is an END event, and keeps it for later events. Edges are
never stored: the predecessor sum is a running total per state (no edge predicate), a prefix
of an ordered index (:mod:`.index`, for ``X.a θ NEXT(X).a``), or a scan over the stored
vertices (any other edge condition, negation crossing the transition, skip-till-next-match,
contiguous). Events with the same timestamp never precede each other: a timestamp's vertices
are *committed* to the running totals and indexes only when time moves on.

:func:`neg_run` runs a negative sub-pattern's graph. It needs no aggregates: a vertex keeps
the latest start of the sub-pattern matches ending at it, and every finished match
``(end time, latest start)`` that raises the running maximum is reported to the graph it
constrains (Definition 5, as a time threshold: a previous-type event ``p`` may precede a
following-type event ``e`` iff ``p.ts >= max{start of an N match ending before e}``).

Both return ``(status, next_event)``; a status other than ``DONE`` asks the caller to grow an
array or widen the integers (:mod:`.numbers`) and call again from ``next_event``: nothing is
ever truncated or wrapped.

Arguments come in tuples (plan, state, batch, scratch); the names are unpacked in each
function. The layouts are built by :mod:`.state`.
"""

from __future__ import annotations

from . import _jit

_PURE = globals().get("_PURE", _jit.PURE_DEFAULT)
jit = _jit.jit(_PURE)
_rec = _jit.sibling("_records", _PURE)
_idx = _jit.sibling("index", _PURE)
_prog = _jit.sibling("_program", _PURE)

rec_add = _rec.add
rec_sub = _rec.sub
rec_clear = _rec.clear
rec_copy = _rec.copy
rec_nonzero = _rec.nonzero
rec_any_count = _rec.any_count
rec_inc = _rec.inc
rec_add_field = _rec.add_field
rec_as_float = _rec.as_float
rec_mul_add = _rec.mul_add
fen_insert = _idx.insert
fen_prefix = _idx.prefix
fen_clear_slot = _idx.clear_slot
prog_run = _prog.run
HARD = _rec.HARD

# statuses
DONE, WIDEN, GROW_V, GROW_R, GROW_REC, OUT_FULL = 0, 1, 2, 3, 4, 5

NEG_INF = -(1 << 62)
POS_INF = 1 << 62

# plan scalars (pi)
PI_MODE, PI_HASW, PI_W, PI_S, PI_STRAT, PI_SLO, PI_SHI, PI_NS, PI_NG, PI_FI, PI_STORE, \
    PI_START, PI_END, PI_EXACT, PI_LEAD, PI_TRAIL, PI_SUFFIX = range(17)
MODE_SLIDE, MODE_TOTAL, MODE_EMIT = 0, 1, 2
STRAT_ANY, STRAT_NEXT, STRAT_CONTIG = 0, 1, 2
KIND_TOTAL, KIND_INDEX, KIND_SCAN = 0, 2, 3
OWN_COUNT, OWN_SUM_INT, OWN_SUM_FLOAT, OWN_MINMAX = 0, 1, 2, 3

# state scalars (sc)
SC_NOW, SC_NV, SC_VSTART, SC_BHI, SC_BLO, SC_PEND, SC_PCOMMIT, SC_WLO, SC_WHI, SC_NREC, \
    SC_RSTART, SC_OUTN, SC_TLAST, SC_HASLAST = range(14)
N_SC = 14


@jit
def floordiv(a, b):
    return a // b


@jit
def lead_threshold(negM, mask, ng):
    m = NEG_INF
    for g in range(ng):
        if (mask >> g) & 1:
            if negM[g] > m:
                m = negM[g]
    return m


# ----------------------------------------------------------------------------------------------
# buckets


@jit
def clear_bucket_slot(P, G, slot):
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    R = b_seq.shape[0]
    ns = pi[PI_NS]
    for x in range(ns):
        if st_total[x]:
            rec_clear(TI, TF, TM, x * R + slot, mmin)
    for ix in range(idx_off.shape[0]):
        n = idx_n[ix]
        if idx_point[ix] == 0:
            fen_clear_slot(NI_, NF_, NM_, idx_off[ix], n, R, slot, mmin)
        for q in range(n):
            rec_clear(LI_, LF_, LM_, (idx_loff[ix] + q) * R + slot, mmin)
    if pi[PI_MODE] == MODE_EMIT:
        rec_clear(AI, AF, AM, slot, mmin)
    b_seq[slot] = -1


@jit
def expire_to(P, G, t):
    """Forget the start buckets no trend ending at ``t`` or later can use."""
    pi = P[0]
    sc = G[0]
    b_key = G[4]
    R = b_key.shape[0]
    mode = pi[PI_MODE]
    if mode != MODE_SLIDE and pi[PI_HASW] == 0:
        return
    if mode == MODE_SLIDE:
        limit = floordiv(t - pi[PI_W], pi[PI_S]) + 1  # keep buckets with pane >= kmin(t)
    else:
        limit = t - pi[PI_W] + 1  # keep start times > t - W
    while sc[SC_BLO] <= sc[SC_BHI]:
        slot = sc[SC_BLO] & (R - 1)
        if b_key[slot] >= limit:
            break
        clear_bucket_slot(P, G, slot)
        sc[SC_BLO] += 1


@jit
def start_bucket(P, G, t):
    """Sequence number of the start bucket of a trend starting at ``t`` (created when new);
    -1 when no trend may start here (leading negation), -2 when the ring is full."""
    pi, st_lead = P[0], P[1]
    sc, negM, b_key, b_klo, b_m, b_seq = G[0], G[1], G[4], G[5], G[6], G[7]
    R = b_seq.shape[0]
    mode = pi[PI_MODE]
    m = lead_threshold(negM, st_lead[pi[PI_START]], pi[PI_NG])
    if mode == MODE_SLIDE:
        key = floordiv(t, pi[PI_S])
        klo = NEG_INF if m == NEG_INF else floordiv(m, pi[PI_S]) + 1
        if klo > key:
            return -1
    elif pi[PI_HASW]:
        key = t
        klo = 0
    else:
        if m != NEG_INF:
            return -1
        key = 0
        klo = 0
        m = NEG_INF
    if sc[SC_BLO] <= sc[SC_BHI]:
        slot = sc[SC_BHI] & (R - 1)
        if b_key[slot] == key and b_klo[slot] == klo and b_m[slot] == m:
            return sc[SC_BHI]
        if sc[SC_BHI] - sc[SC_BLO] + 1 >= R:
            return -2
        sc[SC_BHI] += 1
    else:
        sc[SC_BHI] += 1
        sc[SC_BLO] = sc[SC_BHI]
    seq = sc[SC_BHI]
    slot = seq & (R - 1)
    b_key[slot] = key
    b_klo[slot] = klo
    b_m[slot] = m
    b_seq[slot] = seq
    return seq


# ----------------------------------------------------------------------------------------------
# predecessors


@jit
def scan_into(P, G, E, X, i, t, s, tr, blo, nb, x, hard):
    """Add the records of every valid stored predecessor of state ``x`` (transition ``tr``)."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    (e_ts, e_state, e_pos, e_qpos, e_ipos, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval,
     neg_t, neg_ls, neg_off, neg_used) = E
    (tI, tF, tM, tmp, sv, sk, slots, thr) = X
    R = b_seq.shape[0]
    L = TI.shape[1] // pi[PI_FI]
    strat = pi[PI_STRAT]
    lo_v = sc[SC_VSTART]
    hi_v = sc[SC_PEND]
    if strat == STRAT_CONTIG:
        lo_v = hi_v - 1
        if lo_v < sc[SC_VSTART]:
            return False
        if v_pos[lo_v] != e_pos[i] - 1:
            return False
    over = False
    for v in range(lo_v, hi_v):
        if v_state[v] != x or v_bhi[v] < blo:
            continue
        if strat == STRAT_NEXT and v_death[v] < t:
            continue
        ok = False
        for d in range(der_off[tr], der_off[tr + 1]):
            if der_mask[d] != 0 and v_ts[v] < thr[d]:
                continue
            p = der_prog[d]
            if p >= 0:
                if prog_run(pg_op, pg_arg, pg_val, pg_off[p], pg_off[p + 1], v_col, v_colv, v,
                            e_col, e_colv, i, sv, sk) != 1:
                    continue
            ok = True
            break
        if not ok:
            continue
        for k in range(nb):
            seq = blo + k
            if seq < v_blo[v] or seq > v_bhi[v]:
                continue
            if rec_add(tI, tF, tM, k, VI, VF, VM, v * R + slots[k], L, mmin, hard):
                over = True
    return over


@jit
def compute_vertex(P, G, E, X, i, t, s, blo, nb, hard):
    """The record of event ``i`` (state ``s``) per bucket, into scratch rows 0..nb-1.
    Returns True on overflow (nothing was stored)."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    (e_ts, e_state, e_pos, e_qpos, e_ipos, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval,
     neg_t, neg_ls, neg_off, neg_used) = E
    (tI, tF, tM, tmp, sv, sk, slots, thr) = X
    R = b_seq.shape[0]
    L = TI.shape[1] // pi[PI_FI]
    for k in range(nb):
        rec_clear(tI, tF, tM, k, mmin)
    over = False
    for tr in range(tr_off[s], tr_off[s + 1]):
        x = tr_src[tr]
        kind = tr_kind[tr]
        if kind == KIND_TOTAL:
            for k in range(nb):
                if rec_add(tI, tF, tM, k, TI, TF, TM, x * R + slots[k], L, mmin, hard):
                    over = True
        elif kind == KIND_INDEX:
            ix = tr_arg[tr]
            q = e_qpos[i, ix]
            if idx_point[ix]:
                if q >= 0:
                    base = (idx_loff[ix] + q) * R
                    for k in range(nb):
                        if rec_add(tI, tF, tM, k, LI_, LF_, LM_, base + slots[k], L, mmin, hard):
                            over = True
            elif q > 0:
                if fen_prefix(NI_, NF_, NM_, idx_off[ix], R, q, tI, tF, tM, 0, slots, nb, L,
                              mmin, hard):
                    over = True
        else:
            if scan_into(P, G, E, X, i, t, s, tr, blo, nb, x, hard):
                over = True
        if over:
            return True
    return False


@jit
def own_contribution(P, G, E, X, i, s, nb, hard):
    """COUNT(E), SUM, MIN, MAX: the event's own part, with its complete count. Returns
    True when a value does not fit (widen and retry)."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (e_ts, e_state, e_pos, e_qpos, e_ipos, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval,
     neg_t, neg_ls, neg_off, neg_used) = E
    (tI, tF, tM, tmp, sv, sk, slots, thr) = X
    L = tI.shape[1] // pi[PI_FI]
    for o in range(own_off[s], own_off[s + 1]):
        kind = own_kind[o]
        a = own_attr[o]
        for k in range(nb):
            if not rec_nonzero(tI, k, 0, L):
                continue
            if kind == OWN_COUNT:
                if rec_add_field(tI, k, own_dst[o], 0, L, hard):
                    return True
                continue
            if not e_aval[i, a]:
                continue
            if kind == OWN_SUM_INT:
                if not rec_mul_add(tI, k, own_dst[o], 0, e_aint[i, a], L, hard, tmp):
                    return True
                if rec_add_field(tI, k, own_nnz[o], 0, L, hard):
                    return True
            elif kind == OWN_SUM_FLOAT:
                tF[k, own_dst[o]] += e_aflt[i, a] * rec_as_float(tI, k, 0, L)
                if rec_add_field(tI, k, own_nnz[o], 0, L, hard):
                    return True
            else:
                c = e_amm[i, a]
                f = own_dst[o]
                if mmin[f]:
                    if c < tM[k, f]:
                        tM[k, f] = c
                elif c > tM[k, f]:
                    tM[k, f] = c
    return False


# ----------------------------------------------------------------------------------------------
# END events: contributions to windows, totals, EMIT accumulators, trailing-negation records


@jit
def end_contribution(P, G, X, t, blo, nb, hard):
    """Per-window (SLIDE) or total (WITHIN) contribution of the END event just computed, into
    scratch rows R.. . Returns (overflow, kmin, kmax)."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    b_key, b_klo, b_m = G[4], G[5], G[6]
    (tI, tF, tM, tmp, sv, sk, slots, thr) = X
    R = b_key.shape[0]
    L = tI.shape[1] // pi[PI_FI]
    mode = pi[PI_MODE]
    if mode == MODE_SLIDE:
        W = pi[PI_W]
        S = pi[PI_S]
        kmin = floordiv(t - W, S) + 1
        kmax = floordiv(t, S)
        K = kmax - kmin + 1
        for w in range(K):
            rec_clear(tI, tF, tM, R + w, mmin)
        if pi[PI_SUFFIX]:
            # no leading negation: window k sums the buckets whose pane is >= k
            kb = nb - 1
            run = R + K  # running suffix row
            rec_clear(tI, tF, tM, run, mmin)
            for k in range(kmax, kmin - 1, -1):
                while kb >= 0 and b_key[slots[kb]] >= k:
                    if rec_add(tI, tF, tM, run, tI, tF, tM, kb, L, mmin, hard):
                        return True, kmin, kmax
                    kb -= 1
                rec_copy(tI, tF, tM, R + k - kmin, tI, tF, tM, run)
        else:
            for kb in range(nb):
                slot = slots[kb]
                lo = b_klo[slot]
                if lo < kmin:
                    lo = kmin
                hi = b_key[slot]
                if hi > kmax:
                    hi = kmax
                for k in range(lo, hi + 1):
                    if rec_add(tI, tF, tM, R + k - kmin, tI, tF, tM, kb, L, mmin, hard):
                        return True, kmin, kmax
        return False, kmin, kmax
    # WITHIN alone: buckets whose leading negation allows an end at t
    rec_clear(tI, tF, tM, R, mmin)
    for kb in range(nb):
        slot = slots[kb]
        if pi[PI_HASW] and b_m[slot] > t - pi[PI_W]:
            continue
        if rec_add(tI, tF, tM, R, tI, tF, tM, kb, L, mmin, hard):
            return True, 0, 0
    return False, 0, 0


@jit
def emit_value(P, G, X, tau, row):
    """The EMIT ON CHANGE value at time ``tau`` from the accumulators, into scratch ``row``."""
    pi, mmin = P[0], P[18]
    sc, b_key, b_m, b_seq = G[0], G[4], G[6], G[7]
    AI, AF, AM = G[39], G[40], G[41]
    tI, tF, tM = X[0], X[1], X[2]
    R = b_seq.shape[0]
    L = tI.shape[1] // pi[PI_FI]
    hard = 0 if pi[PI_EXACT] else HARD
    rec_clear(tI, tF, tM, row, mmin)
    over = False
    for seq in range(sc[SC_BLO], sc[SC_BHI] + 1):
        slot = seq & (R - 1)
        if pi[PI_HASW]:
            if b_key[slot] + pi[PI_W] <= tau or b_m[slot] > tau - pi[PI_W]:
                continue
        if rec_add(tI, tF, tM, row, AI, AF, AM, slot, L, mmin, hard):
            over = True
    return over


@jit
def emit_log(P, G, X, tau):
    """Record the EMIT value at ``tau`` if it changed. Returns a status (OUT_FULL, WIDEN)."""
    sc = G[0]
    o_k, OI, OF, OM, lastI, lastF, lastM = G[53], G[54], G[55], G[56], G[57], G[58], G[59]
    tI, tF, tM = X[0], X[1], X[2]
    R = G[7].shape[0]
    row = R + 1
    if emit_value(P, G, X, tau, row):
        return WIDEN
    same = sc[SC_HASLAST] == 1
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
    n = sc[SC_OUTN]
    if n > 0 and o_k[n - 1] == tau:
        n -= 1
    elif n >= o_k.shape[0]:
        return OUT_FULL
    o_k[n] = tau
    rec_copy(OI, OF, OM, n, tI, tF, tM, row)
    rec_copy(lastI, lastF, lastM, 0, tI, tF, tM, row)
    sc[SC_HASLAST] = 1
    sc[SC_OUTN] = n + 1
    return DONE


@jit
def emit_rebuild(P, G):
    """EMIT accumulators from the live trailing-negation records (after an invalidation, when
    MIN/MAX cannot be subtracted)."""
    pi, mmin = P[0], P[18]
    sc, b_seq = G[0], G[7]
    AI, AF, AM = G[39], G[40], G[41]
    r_alive, r_blo, r_bhi, RI, RF, RM = G[44], G[45], G[46], G[50], G[51], G[52]
    R = b_seq.shape[0]
    L = AI.shape[1] // pi[PI_FI]
    hard = 0 if pi[PI_EXACT] else HARD
    over = False
    for s in range(R):
        rec_clear(AI, AF, AM, s, mmin)
    for r in range(sc[SC_RSTART], sc[SC_NREC]):
        if not r_alive[r]:
            continue
        for seq in range(r_blo[r], r_bhi[r] + 1):
            slot = seq & (R - 1)
            if b_seq[slot] == seq:
                if rec_add(AI, AF, AM, slot, RI, RF, RM, r * R + (seq - r_blo[r]), L, mmin, hard):
                    over = True
    return over


# ----------------------------------------------------------------------------------------------
# time moving on: negative matches, window closes, bucket expiry


@jit
def invalidate_record(P, G, r, d, hard):
    """A match of a trailing negation (ending at ``d``) follows record ``r``'s END event."""
    pi, mmin = P[0], P[18]
    sc, b_seq = G[0], G[7]
    XI, XF, XM, AI, AF, AM = G[36], G[37], G[38], G[39], G[40], G[41]
    r_alive, r_blo, r_bhi, r_bkey, RI, RF, RM = G[44], G[45], G[46], G[49], G[50], G[51], G[52]
    R = b_seq.shape[0]
    L = XI.shape[1] // pi[PI_FI]
    r_alive[r] = 0
    mode = pi[PI_MODE]
    over = False
    if mode == MODE_TOTAL and pi[PI_HASW]:
        # buckets whose scope (start + W) ends no later than d stay valid
        for k in range(r_bhi[r] - r_blo[r] + 1):
            if r_bkey[r, k] + pi[PI_W] <= d:
                if rec_add(XI, XF, XM, 0, RI, RF, RM, r * R + k, L, mmin, hard):
                    over = True
    elif mode == MODE_EMIT:
        if mmin.shape[0] > 0:
            if emit_rebuild(P, G):
                over = True
        else:
            for seq in range(r_blo[r], r_bhi[r] + 1):
                slot = seq & (R - 1)
                if b_seq[slot] == seq:
                    rec_sub(AI, AF, slot, RI, RF, r * R + (seq - r_blo[r]), L)
    return over


@jit
def apply_negation(P, G, E, g, d, ls, hard):
    pi, st_trail = P[0], P[2]
    sc, negM, gdone, grptr = G[0], G[1], G[2], G[3]
    r_ts, r_alive = G[42], G[44]
    if ls > negM[g]:
        negM[g] = ls
    over = False
    if (st_trail[pi[PI_END]] >> g) & 1 and ls > gdone[g]:
        r = grptr[g]
        if r < sc[SC_RSTART]:
            r = sc[SC_RSTART]
        while r < sc[SC_NREC] and r_ts[r] < ls:
            if r_alive[r]:
                if invalidate_record(P, G, r, d, hard):
                    over = True
            r += 1
        grptr[g] = r
        gdone[g] = ls
    return over


@jit
def close_window(P, G, k):
    """Window ``k`` is final: write its result (when it has a trend). Returns a status."""
    pi, mmin = P[0], P[18]
    sc = G[0]
    w_k, WI, WF, WM = G[32], G[33], G[34], G[35]
    r_alive, r_kmin, r_kmax, RI, RF, RM = G[44], G[47], G[48], G[50], G[51], G[52]
    o_k, OI, OF, OM = G[53], G[54], G[55], G[56]
    RW = w_k.shape[0]
    L = WI.shape[1] // pi[PI_FI]
    hard = 0 if pi[PI_EXACT] else HARD
    slot = k & (RW - 1)
    if sc[SC_OUTN] >= o_k.shape[0]:
        return OUT_FULL
    if pi[PI_TRAIL]:
        rec_clear(WI, WF, WM, slot, mmin)
        w_k[slot] = k
        for r in range(sc[SC_RSTART], sc[SC_NREC]):
            if r_alive[r] and r_kmin[r] <= k and k <= r_kmax[r]:
                if rec_add(WI, WF, WM, slot, RI, RF, RM, r * RW + slot, L, mmin, hard):
                    return WIDEN
    if w_k[slot] == k:
        if rec_nonzero(WI, slot, 0, L):
            n = sc[SC_OUTN]
            o_k[n] = k
            rec_copy(OI, OF, OM, n, WI, WF, WM, slot)
            sc[SC_OUTN] = n + 1
        rec_clear(WI, WF, WM, slot, mmin)
        w_k[slot] = NEG_INF
    return DONE


@jit
def advance(P, G, E, X, t, hard):
    """Move time to ``t``: apply negative matches ending before ``t``, close windows ending
    at or before ``t``, log EMIT changes before ``t``, expire buckets. Returns a status."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    (e_ts, e_state, e_pos, e_qpos, e_ipos, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval,
     neg_t, neg_ls, neg_off, neg_used) = E
    R = b_seq.shape[0]
    L = TI.shape[1] // pi[PI_FI]
    mode = pi[PI_MODE]
    ng = pi[PI_NG]
    W = pi[PI_W]
    over = False
    if mode == MODE_EMIT and sc[SC_NOW] > NEG_INF and sc[SC_NOW] >= sc[SC_TLAST]:
        st = emit_log(P, G, X, sc[SC_NOW])
        if st != DONE:
            return st
    while True:
        ta = POS_INF
        for g in range(ng):
            j = neg_off[g] + neg_used[g]
            if j < neg_off[g + 1] and neg_t[j] < t and neg_t[j] < ta:
                ta = neg_t[j]
        tb = POS_INF
        if mode == MODE_SLIDE and sc[SC_WLO] <= sc[SC_WHI]:
            e = sc[SC_WLO] * pi[PI_S] + W
            if e <= t:
                tb = e
        tc = POS_INF
        if mode == MODE_EMIT and pi[PI_HASW] and sc[SC_BLO] <= sc[SC_BHI]:
            e = b_key[sc[SC_BLO] & (R - 1)] + W
            if e < t:
                tc = e
            for seq in range(sc[SC_BLO], sc[SC_BHI] + 1):
                slot = seq & (R - 1)
                if b_m[slot] != NEG_INF:
                    e = b_m[slot] + W
                    if sc[SC_TLAST] < e and e < t and e < tc:
                        tc = e
        tau = ta
        if tb < tau:
            tau = tb
        if tc < tau:
            tau = tc
        if tau == POS_INF:
            break
        if tb == tau:
            st = close_window(P, G, sc[SC_WLO])
            if st != DONE:
                return st
            sc[SC_WLO] += 1
            continue
        if ta == tau:
            for g in range(ng):
                j = neg_off[g] + neg_used[g]
                while j < neg_off[g + 1] and neg_t[j] == tau:
                    if apply_negation(P, G, E, g, tau, neg_ls[j], hard):
                        over = True
                    neg_used[g] += 1
                    j += 1
        if mode == MODE_EMIT:
            if pi[PI_HASW]:
                while sc[SC_BLO] <= sc[SC_BHI] and b_key[sc[SC_BLO] & (R - 1)] + W <= tau:
                    clear_bucket_slot(P, G, sc[SC_BLO] & (R - 1))
                    sc[SC_BLO] += 1
            st = emit_log(P, G, X, tau)
            if st != DONE:
                return st
            sc[SC_TLAST] = tau
        if over:
            return WIDEN
    if mode == MODE_SLIDE and sc[SC_WLO] > sc[SC_WHI]:
        sc[SC_WLO] = POS_INF
        sc[SC_WHI] = NEG_INF
    expire_to(P, G, t)
    if mode == MODE_TOTAL and pi[PI_TRAIL]:
        # trailing scopes ended: no match of the negation can come in time any more
        r = sc[SC_RSTART]
        while r < sc[SC_NREC] and (pi[PI_HASW] == 0 and t >= POS_INF or
                                   pi[PI_HASW] == 1 and r_ts[r] + W <= t):
            if r_alive[r]:
                r_alive[r] = 0
                for k in range(r_bhi[r] - r_blo[r] + 1):
                    if rec_add(XI, XF, XM, 0, RI, RF, RM, r * R + k, L, mmin, hard):
                        over = True
            r += 1
            if over:
                break
    if mode == MODE_SLIDE and pi[PI_TRAIL]:
        while sc[SC_RSTART] < sc[SC_NREC] and r_kmax[sc[SC_RSTART]] < sc[SC_WLO]:
            sc[SC_RSTART] += 1
    if mode == MODE_EMIT and pi[PI_TRAIL] and pi[PI_HASW]:
        while sc[SC_RSTART] < sc[SC_NREC] and r_ts[sc[SC_RSTART]] + W <= t:
            sc[SC_RSTART] += 1
    if mode == MODE_EMIT:
        st = emit_log(P, G, X, t)
        if st != DONE:
            return st
        sc[SC_TLAST] = t
    if over:
        return WIDEN
    return DONE


@jit
def commit(P, G, hard):
    """Insert the vertices of the finished timestamp into running totals and indexes."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    R = b_seq.shape[0]
    L = TI.shape[1] // pi[PI_FI]
    nidx = idx_off.shape[0]
    v = sc[SC_PCOMMIT]
    while v < sc[SC_NV]:
        x = v_state[v]
        over = False
        for seq in range(v_blo[v], v_bhi[v] + 1):
            slot = seq & (R - 1)
            row = v * R + slot
            if st_total[x]:
                if rec_add(TI, TF, TM, x * R + slot, VI, VF, VM, row, L, mmin, hard):
                    over = True
            for ix in range(nidx):
                if idx_src[ix] != x:
                    continue
                rank = v_irank[v, ix]
                if rank < 0:
                    continue
                if rec_add(LI_, LF_, LM_, (idx_loff[ix] + rank) * R + slot, VI, VF, VM, row, L,
                           mmin, hard):
                    over = True
        for ix in range(nidx):
            if idx_src[ix] != x or idx_point[ix]:
                continue
            rank = v_irank[v, ix]
            if rank < 0:
                continue
            # one tree update for all of the vertex's buckets
            nb = v_bhi[v] - v_blo[v] + 1
            i = rank + 1
            n = idx_n[ix]
            while i <= n:
                base = (idx_off[ix] + i) * R
                for seq in range(v_blo[v], v_blo[v] + nb):
                    slot = seq & (R - 1)
                    if rec_add(NI_, NF_, NM_, base + slot, VI, VF, VM, v * R + slot, L, mmin, hard):
                        over = True
                i += i & (-i)
        v += 1
        sc[SC_PCOMMIT] = v
        if over:
            return True
    if pi[PI_STORE] == 0:
        sc[SC_NV] = 0
        sc[SC_VSTART] = 0
        sc[SC_PEND] = 0
        sc[SC_PCOMMIT] = 0
    else:
        sc[SC_PEND] = sc[SC_NV]
    return False


@jit
def compact(P, G, t):
    """Drop stored vertices that no later event can use (purge in batches)."""
    pi, mmin = P[0], P[18]
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    R = b_seq.shape[0]
    blo = sc[SC_BLO]
    w = 0
    pend = sc[SC_PEND]
    new_pend = -1
    for v in range(sc[SC_VSTART], sc[SC_NV]):
        if v == pend:
            new_pend = w
        keep = v >= pend or (v_bhi[v] >= blo and sc[SC_BLO] <= sc[SC_BHI]
                             and not (pi[PI_STRAT] == STRAT_NEXT and v_death[v] < t))
        if pi[PI_STRAT] == STRAT_CONTIG and v < pend - 1:
            keep = False
        if not keep:
            continue
        if w != v:
            v_ts[w] = v_ts[v]
            v_state[w] = v_state[v]
            v_pos[w] = v_pos[v]
            v_blo[w] = v_blo[v]
            v_bhi[w] = v_bhi[v]
            v_death[w] = v_death[v]
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
    sc[SC_VSTART] = 0
    sc[SC_PEND] = new_pend
    sc[SC_PCOMMIT] = new_pend + (sc[SC_PCOMMIT] - pend)
    sc[SC_NV] = w


@jit
def compact_records(P, G):
    pi = P[0]
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    RX = RI.shape[0] // r_ts.shape[0]
    w = 0
    for r in range(sc[SC_RSTART], sc[SC_NREC]):
        if not r_alive[r]:
            continue
        if w != r:
            r_ts[w] = r_ts[r]
            r_state[w] = r_state[r]
            r_alive[w] = r_alive[r]
            r_blo[w] = r_blo[r]
            r_bhi[w] = r_bhi[r]
            r_kmin[w] = r_kmin[r]
            r_kmax[w] = r_kmax[r]
            for k in range(r_bkey.shape[1]):
                r_bkey[w, k] = r_bkey[r, k]
            for k in range(RX):
                rec_copy(RI, RF, RM, w * RX + k, RI, RF, RM, r * RX + k)
        w += 1
    sc[SC_RSTART] = 0
    sc[SC_NREC] = w
    for g in range(grptr.shape[0]):
        grptr[g] = 0


# ----------------------------------------------------------------------------------------------
# the loop


@jit
def pos_run(P, G, E, X, i0, until):
    """Process events ``i0..`` of the batch, then move time to ``until`` (exclusive: every
    event before ``until`` has been seen). Returns ``(status, next_event)``."""
    (pi, st_lead, st_trail, st_loopprog, fol, st_total, tr_off, tr_src, tr_kind, tr_arg, der_off,
     der_mask, der_prog, own_off, own_kind, own_dst, own_nnz, own_attr, mmin, pg_off, pg_op,
     pg_arg, pg_val, idx_point, idx_src) = P
    (sc, negM, gdone, grptr, b_key, b_klo, b_m, b_seq, TI, TF, TM, NI_, NF_, NM_, LI_, LF_, LM_,
     idx_off, idx_n, idx_loff, v_ts, v_state, v_pos, v_blo, v_bhi, v_death, v_irank, v_col,
     v_colv, VI, VF, VM, w_k, WI, WF, WM, XI, XF, XM, AI, AF, AM, r_ts, r_state, r_alive,
     r_blo, r_bhi, r_kmin, r_kmax, r_bkey, RI, RF, RM, o_k, OI, OF, OM, lastI, lastF, lastM) = G
    (e_ts, e_state, e_pos, e_qpos, e_ipos, e_col, e_colv, e_aint, e_aflt, e_amm, e_aval,
     neg_t, neg_ls, neg_off, neg_used) = E
    (tI, tF, tM, tmp, sv, sk, slots, thr) = X
    R = b_seq.shape[0]
    RW = w_k.shape[0]
    L = TI.shape[1] // pi[PI_FI]
    hard = 0 if pi[PI_EXACT] else HARD
    mode = pi[PI_MODE]
    n = e_ts.shape[0]
    ng = pi[PI_NG]
    vcap = v_ts.shape[0]
    rcap = r_ts.shape[0]
    for d in range(der_mask.shape[0]):
        thr[d] = lead_threshold(negM, der_mask[d], ng)
    for i in range(i0, n):
        t = e_ts[i]
        s = e_state[i]
        if t > sc[SC_NOW]:
            if sc[SC_PCOMMIT] < sc[SC_NV]:
                if commit(P, G, hard):
                    return WIDEN, i
            st = advance(P, G, E, X, t, hard)
            if st != DONE:
                return st, i
            sc[SC_NOW] = t
            sc[SC_PEND] = sc[SC_NV]
            sc[SC_PCOMMIT] = sc[SC_NV]
            for d in range(der_mask.shape[0]):
                thr[d] = lead_threshold(negM, der_mask[d], ng)
        if sc[SC_NV] >= vcap:
            if sc[SC_VSTART] > 0 or pi[PI_STORE]:
                compact(P, G, t)
            if sc[SC_NV] >= vcap:
                return GROW_V, i
        if sc[SC_NREC] >= rcap:
            compact_records(P, G)
            if sc[SC_NREC] >= rcap:
                return GROW_REC, i
        seq0 = -1
        if pi[PI_START] == s and pi[PI_SLO] <= t and t < pi[PI_SHI]:
            seq0 = start_bucket(P, G, t)
            if seq0 == -2:
                return GROW_R, i
        blo = sc[SC_BLO]
        nb = sc[SC_BHI] - blo + 1
        if nb > 0:
            for k in range(nb):
                slots[k] = (blo + k) & (R - 1)
            if compute_vertex(P, G, E, X, i, t, s, blo, nb, hard):
                return WIDEN, i
            if seq0 >= 0:
                if rec_inc(tI, seq0 - blo, 0, L, hard):
                    return WIDEN, i
            if rec_any_count(tI, 0, nb, L):
                if own_contribution(P, G, E, X, i, s, nb, hard):
                    return WIDEN, i
                over = False
                if pi[PI_END] == s:
                    bad, kmin, kmax = end_contribution(P, G, X, t, blo, nb, hard)
                    if bad:
                        return WIDEN, i
                    if pi[PI_TRAIL]:
                        r = sc[SC_NREC]
                        r_ts[r] = t
                        r_state[r] = s
                        r_alive[r] = 1
                        r_blo[r] = blo
                        r_bhi[r] = blo + nb - 1
                        r_kmin[r] = kmin
                        r_kmax[r] = kmax
                        if mode == MODE_SLIDE:
                            for k in range(kmin, kmax + 1):
                                rec_copy(RI, RF, RM, r * RW + (k & (RW - 1)), tI, tF, tM, R + k - kmin)
                        else:
                            for k in range(nb):
                                r_bkey[r, k] = b_key[slots[k]]
                                if mode == MODE_TOTAL and pi[PI_HASW] and b_m[slots[k]] > t - pi[PI_W]:
                                    rec_clear(RI, RF, RM, r * R + k, mmin)
                                else:
                                    rec_copy(RI, RF, RM, r * R + k, tI, tF, tM, k)
                        sc[SC_NREC] = r + 1
                    if mode == MODE_SLIDE:
                        if sc[SC_WLO] > sc[SC_WHI]:
                            sc[SC_WLO] = kmin
                            sc[SC_WHI] = kmax
                        if kmin < sc[SC_WLO]:
                            sc[SC_WLO] = kmin
                        if kmax > sc[SC_WHI]:
                            sc[SC_WHI] = kmax
                        for k in range(kmin, kmax + 1):
                            slot = k & (RW - 1)
                            if w_k[slot] != k:
                                rec_clear(WI, WF, WM, slot, mmin)
                                w_k[slot] = k
                            if not pi[PI_TRAIL]:
                                if rec_add(WI, WF, WM, slot, tI, tF, tM, R + k - kmin, L, mmin, hard):
                                    over = True
                    elif mode == MODE_TOTAL:
                        if not pi[PI_TRAIL]:
                            if rec_add(XI, XF, XM, 0, tI, tF, tM, R, L, mmin, hard):
                                over = True
                    else:
                        for k in range(nb):
                            if rec_add(AI, AF, AM, slots[k], tI, tF, tM, k, L, mmin, hard):
                                over = True
                # keep the vertex for later events
                v = sc[SC_NV]
                v_ts[v] = t
                v_state[v] = s
                v_pos[v] = e_pos[i]
                v_blo[v] = blo
                v_bhi[v] = blo + nb - 1
                v_death[v] = POS_INF
                for j in range(v_irank.shape[1]):
                    v_irank[v, j] = e_ipos[i, j]
                for j in range(v_col.shape[1]):
                    v_col[v, j] = e_col[i, j]
                    v_colv[v, j] = e_colv[i, j]
                for k in range(nb):
                    rec_copy(VI, VF, VM, v * R + slots[k], tI, tF, tM, k)
                sc[SC_NV] = v + 1
                if over:
                    kill(P, G, E, X, i, t, s)
                    return WIDEN, i + 1
        kill(P, G, E, X, i, t, s)
    if until > sc[SC_NOW]:
        if sc[SC_PCOMMIT] < sc[SC_NV]:
            if commit(P, G, hard):
                return WIDEN, n
        st = advance(P, G, E, X, until, hard)
        if st != DONE:
            return st, n
        if sc[SC_NOW] < until - 1:
            sc[SC_NOW] = until - 1
        sc[SC_PEND] = sc[SC_NV]
        sc[SC_PCOMMIT] = sc[SC_NV]
        if sc[SC_VSTART] > 0 or sc[SC_NV] > 0:
            compact(P, G, until)
        if sc[SC_RSTART] > 0:
            compact_records(P, G)
    return DONE, n


@jit
def kill(P, G, E, X, i, t, s):
    """skip-till-next-match: event ``i`` could follow the stored vertices of the states it may
    follow, which stop being predecessors of events after ``t``."""
    pi, st_loopprog, fol = P[0], P[3], P[4]
    pg_off, pg_op, pg_arg, pg_val = P[19], P[20], P[21], P[22]
    sc = G[0]
    v_ts, v_state, v_death, v_col, v_colv = G[20], G[21], G[25], G[27], G[28]
    e_col, e_colv = E[5], E[6]
    sv, sk = X[4], X[5]
    if pi[PI_STRAT] != STRAT_NEXT:
        return
    ns = pi[PI_NS]
    for v in range(sc[SC_VSTART], sc[SC_NV]):
        if v_ts[v] >= t or v_death[v] < POS_INF:
            continue
        x = v_state[v]
        if not fol[x * ns + s]:
            continue
        if x == s:
            p = st_loopprog[x]
            if p >= 0 and prog_run(pg_op, pg_arg, pg_val, pg_off[p], pg_off[p + 1], v_col, v_colv,
                                   v, e_col, e_colv, i, sv, sk) != 1:
                continue
        v_death[v] = t


# ----------------------------------------------------------------------------------------------
# negative sub-patterns


@jit
def neg_run(P, G, E, X, i0, until):
    """A negative sub-pattern's graph over a batch: finished matches as (end, latest start).

    Plan ``P``: (pi, st_start, st_end, tr_off, tr_src, der_off, der_mask, der_prog, pg_off,
    pg_op, pg_arg, pg_val); pi = [W or 0, number of child negations, pure flag].
    State ``G``: (sc, negM, v_ts, v_state, v_ls, v_col, v_colv, o_t, o_ls);
    sc = [now, nv, pend, emitted max start, out count].
    Batch ``E``: (e_ts, e_state, e_col, e_colv, neg_t, neg_ls, neg_off, neg_used) -- the last
    four are the matches of the child negations (nested NOT).
    """
    (pi, st_start, st_end, tr_off, tr_src, der_off, der_mask, der_prog, pg_off, pg_op, pg_arg,
     pg_val) = P
    (sc, negM, v_ts, v_state, v_ls, v_col, v_colv, o_t, o_ls) = G
    (e_ts, e_state, e_col, e_colv, neg_t, neg_ls, neg_off, neg_used) = E
    (sv, sk, thr) = X
    W = pi[0]
    ng = pi[1]
    n = e_ts.shape[0]
    cap = v_ts.shape[0]
    for i in range(i0, n):
        t = e_ts[i]
        s = e_state[i]
        if t > sc[0]:
            # child matches ending before t; prune vertices no match can use any more
            for g in range(ng):
                j = neg_off[g] + neg_used[g]
                while j < neg_off[g + 1] and neg_t[j] < t:
                    if neg_ls[j] > negM[g]:
                        negM[g] = neg_ls[j]
                    neg_used[g] += 1
                    j += 1
            for d in range(der_mask.shape[0]):
                thr[d] = lead_threshold(negM, der_mask[d], ng)
            w = 0
            for v in range(sc[1]):
                if v_ls[v] <= sc[3] or (W > 0 and v_ls[v] <= t - W):
                    continue
                if w != v:
                    v_ts[w] = v_ts[v]
                    v_state[w] = v_state[v]
                    v_ls[w] = v_ls[v]
                    for j in range(v_col.shape[1]):
                        v_col[w, j] = v_col[v, j]
                        v_colv[w, j] = v_colv[v, j]
                w += 1
            sc[1] = w
            sc[2] = w
            sc[0] = t
        if sc[1] >= cap:
            return GROW_V, i
        ls = NEG_INF
        if st_start[s]:
            ls = t
        for tr in range(tr_off[s], tr_off[s + 1]):
            x = tr_src[tr]
            for v in range(sc[2]):
                if v_state[v] != x or v_ls[v] <= ls:
                    continue
                ok = False
                for d in range(der_off[tr], der_off[tr + 1]):
                    if der_mask[d] != 0 and v_ts[v] < thr[d]:
                        continue
                    p = der_prog[d]
                    if p >= 0 and prog_run(pg_op, pg_arg, pg_val, pg_off[p], pg_off[p + 1], v_col,
                                           v_colv, v, e_col, e_colv, i, sv, sk) != 1:
                        continue
                    ok = True
                    break
                if ok:
                    ls = v_ls[v]
        if ls == NEG_INF or ls <= sc[3] or (W > 0 and t - ls >= W):
            continue
        if st_end[s]:
            m = sc[4]
            if m >= o_t.shape[0]:
                return GROW_REC, i
            o_t[m] = t
            o_ls[m] = ls
            sc[4] = m + 1
            sc[3] = ls
            continue  # extending it can only give matches with starts <= ls: useless
        v = sc[1]
        v_ts[v] = t
        v_state[v] = s
        v_ls[v] = ls
        for j in range(v_col.shape[1]):
            v_col[v, j] = e_col[i, j]
            v_colv[v, j] = e_colv[i, j]
        sc[1] = v + 1
    if until > sc[0]:
        for g in range(ng):
            j = neg_off[g] + neg_used[g]
            while j < neg_off[g + 1] and neg_t[j] < until:
                if neg_ls[j] > negM[g]:
                    negM[g] = neg_ls[j]
                neg_used[g] += 1
                j += 1
        sc[2] = sc[1]
    return DONE, n


# Reference: GRETA (seeds/003_27db06cb574fa58b.txt): Algorithm 2 (Section 4.2) and Theorem 2
# (count propagation); Section 5.2 (negative graphs, Definition 5 invalidation, event pruning);
# Section 6 (sliding windows share one graph; grouping); Section 7 (panes, batch purge);
# Section 9 (skip-till-next-match and contiguous as a change of adjacency).
