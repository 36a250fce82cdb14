"""The per-partition A-Seq loop over one batch of events, compiled.

Events arrive sorted by time; those with one timestamp form a *group* whose effect is one map
(:mod:`._algebra`). The last group of a batch stays *pending* (its per-node totals, not its
events) until a later timestamp, ``advance`` or ``finish`` shows it is complete — a group split
across two batches is still one group. Around each group, in time order:

1. SLIDE windows ``[k·s, k·s+w)`` that closed before it are reported (state as of their last
   instant ``k·s+w-1``);
2. STARTs expire (``now ≥ start + w``, Lemma 3) — under WITHIN alone their final vector is
   added to the totals (a match is complete, and its trailing negation checked, once its START
   leaves); STARTs blocked by a leading negation are unblocked when that negation leaves;
3. the group's map is applied to both segments (:mod:`.windows`) and its STARTs are pushed
   (into the *blocked* segment when a leading negative event lies in the window before them);
4. EMIT ON CHANGE instants compare the window sum with the last value and report a change.

Every step is atomic: on overflow of an int64 it returns status 2 *before* changing the state,
and the caller converts the partition to 128-bit integers and resumes at the same point with the
wide flavour of this module (:mod:`.wide`; past 128 bits: Python integers and the exact twin;
under WITHIN alone it first drops the window sums, ``plan.sums``).
Status 1 asks for a larger output buffer, 4 for more room in a window segment, 5 for the totals
to be moved to Python integers (they alone would overflow), 3 reports events out of time order.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.2 (SEM steps 1-4; its Fig. 5 tests ``exp < ts``, inverted: a
START is active while ``ts < exp``), §3.3 (Recounting Rule), §3.4 (filters).
"""


from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
inline = kernels.jit(_TWIN, inline=True)  # the per-event step (inlined by LLVM into run and run_pool)
step = kernels.jit(_TWIN, inline="step")  # a per-group step of run (spliced into it by numba)
A = kernels.sibling(__name__, "_algebra", _TWIN)
S = kernels.sibling(__name__, "windows", _TWIN)
X = kernels.sibling(__name__, "_expiry", _TWIN)

if _TWIN:
    def prefetch(a, offset):
        """(The twin: nothing to fetch.)"""
else:
    from llvmlite import ir as _ir
    from numba.core import types as _types
    from numba.core.extending import intrinsic as _intrinsic

    @_intrinsic
    def prefetch(typingctx, a, offset):
        """Ask the processor to bring byte ``offset`` of array ``a``'s data into its caches
        (LLVM's ``prefetch``, for a write, kept in every level), without waiting for it."""
        def codegen(context, builder, sig, args):
            data = builder.bitcast(context.make_array(sig.args[0])(context, builder, args[0]).data,
                                   _ir.IntType(8).as_pointer())
            i32 = _ir.IntType(32)
            fn = builder.module.declare_intrinsic("llvm.prefetch", [data.type], _ir.FunctionType(
                _ir.VoidType(), [data.type, i32, i32, i32]))
            builder.call(fn, [builder.gep(data, [args[1]]), i32(1), i32(3), i32(1)])
            return context.get_dummy_value()
        return _types.void(a, _types.intp), codegen


# constants shared with the expiry steps (and read by the runtime as K.*)
TOTAL, EMIT, RECORD, SLIDE = X.TOTAL, X.EMIT, X.RECORD, X.SLIDE
EXTEND, RESET, LEAD = X.EXTEND, X.RESET, X.LEAD
ROW_EMIT, ROW_WINDOW, ROW_RECORD = X.ROW_EMIT, X.ROW_WINDOW, X.ROW_RECORD
NONE, INF = X.NONE, X.INF


@step
def reset_pending(pk, pVI, pVF, pres, ctr, kindI, kindF):
    """The pending group emptied: no events, no reset, no leading negation, no instants."""
    for j in range(pk.shape[0]):
        pk[j] = 0
        pres[j] = 0
        for c in range(pVI.shape[0]):
            pVI[c, j] = 0 if kindI[c] == A.LIN else A.sent_i(kindI[c])
        for c in range(pVF.shape[0]):
            pVF[c, j] = 0.0 if kindF[c] == A.LIN else A.sent_f(kindF[c])
    ctr.pending_lead = 0
    ctr.pending_instants = 0


@jit
def instants(seg0, ctr, plan, outnode, kindI, kindF, lastI, lastF, outM, outI, outF, vI, vF, tI, tF, W,
             anc_ptr, anc_idx):
    """Step 4 for the applied pending group: EMIT rows or RECORD rows. Status as for :func:`run`."""
    mode = plan.mode
    checked = plan.checked != 0
    t = ctr.pending_ts
    O = outnode.shape[0]
    if ctr.rows + O > outM.shape[0]:
        return 1
    if not X.query_all(seg0, ctr, outnode, tI, tF, vI[3], vF[3], W, kindI, kindF, checked, anc_ptr, anc_idx):
        return 2
    for o in range(O):
        j = outnode[o]
        if mode == EMIT:
            if not (plan.lo <= t < plan.hi) or not ((ctr.pending_instants >> o) & 1):
                continue
            if not plan.every and X.same_as_last(lastI, lastF, o, tI[o], tF[o], j):
                continue
            X.set_last(lastI, lastF, o, tI[o], tF[o], j)
            X.out_row(outM, outI, outF, ctr, t, o, ROW_EMIT, tI[o], tF[o], j)
        elif not X.same_as_last(lastI, lastF, o, tI[o], tF[o], j):
            X.set_last(lastI, lastF, o, tI[o], tF[o], j)
            X.out_row(outM, outI, outF, ctr, t, o, ROW_RECORD, tI[o], tF[o], j)
    return 0


@inline
def accumulate(i, t, ctr, kindI, kindF, maskI, maskF, cls_ptr, cls_node, cls_kind, pk, pVI, pVF, pres,
               ev_ts, ev_cls, valI, vldI, valF, vldF, ev_inst, checked):
    """Add events ``i..`` at time ``t`` to the pending group; returns (status, next position):
    status 2 (nothing added of event ``i``) when an integer sum would overflow."""
    E = ev_ts.shape[0]
    CI = pVI.shape[0]
    CF = pVF.shape[0]
    while i < E and ev_ts[i] == t:
        c0 = ev_cls[i]
        if checked:  # check integer sums first, so that nothing is half-added
            for a in range(cls_ptr[c0], cls_ptr[c0 + 1]):
                if cls_kind[a] == EXTEND:
                    node = cls_node[a]
                    for c in range(1, CI):
                        if kindI[c] == A.LIN and maskI[c, node] and vldI[i, c]:
                            if abs(float(pVI[c, node])) + abs(float(valI[i, c])) > A.LIMIT:
                                return 2, i
        for a in range(cls_ptr[c0], cls_ptr[c0 + 1]):
            node = cls_node[a]
            kind = cls_kind[a]
            if kind == EXTEND:
                pk[node] += 1
                for c in range(1, CI):
                    if maskI[c, node] and vldI[i, c]:
                        v = valI[i, c]
                        if kindI[c] == A.LIN:
                            pVI[c, node] = pVI[c, node] + v
                        elif A.better_i(kindI[c], v, pVI[c, node]):
                            pVI[c, node] = v
                for c in range(CF):
                    if maskF[c, node] and vldF[i, c]:
                        v = valF[i, c]
                        if kindF[c] == A.LIN:
                            pVF[c, node] = pVF[c, node] + v
                        elif A.better_f(kindF[c], v, pVF[c, node]):
                            pVF[c, node] = v
            elif kind == RESET:
                pres[node] = 1
            else:
                ctr.pending_lead = 1
        ctr.pending_instants = ctr.pending_instants | ev_inst[i]
        i += 1
    return 0, i


@step
def due(t, seg0, seg1, ctr, plan):
    """Is anything due before ``t`` (a SLIDE window to report, a START to expire or unblock)?
    A test of a few counters before :func:`._expiry.settle`, run per group."""
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1 = seg1
    mode = plan.mode
    w = plan.within
    dd = False
    if w >= 0:
        n0 = ctr.items[0, 0] + ctr.items[0, 1]
        n1 = ctr.items[1, 0] + ctr.items[1, 1]
        if mode == SLIDE and (n0 > 0 or n1 > 0) and ctr.next_window * plan.slide + w - 1 < t:
            dd = True
        if n1 > 0 and (fm1[ctr.items[1, 1] - 1, 1] if ctr.items[1, 1] > 0 else bm1[0, 1]) + w <= t:
            dd = True
        if n0 > 0 and (fm0[ctr.items[0, 1] - 1, 0] if ctr.items[0, 1] > 0 else bm0[0, 0]) + w <= t:
            dd = True
    return dd


@step
def map_target(XI, XF, zI, zF, g_on, checked, parent, gate, kindI, kindF, pk, pVI, pVF, pres, col_ptr, col_idx):
    """The pending group's map applied to one target map ``X`` into ``z``: the rows of the nodes
    the group extends or resets, in the columns those rows can fill (``col_*``: their ancestors'
    and the affine one); with ``g_on`` a gated node's rows are empty. False if an integer would
    overflow."""
    N = parent.shape[0]
    CI = pVI.shape[0]
    CF = pVF.shape[0]
    ok = True
    for j in range(1, N):
        k = pk[j]
        r = pres[j]
        if k == 0 and r == 0:
            continue
        p = parent[j]
        # only columns of j's ancestors and the affine one can be non-empty (col_*)
        for a_ in range(col_ptr[j], col_ptr[j + 1]):
            col = col_idx[a_]
            if g_on and gate[j]:
                A.zero_row(zI, zF, kindI, kindF, j, col)
                continue
            cp = XI[0, p, col]
            base = 0 if r else XI[0, j, col]
            if checked and abs(float(base) + float(k) * float(cp)) > A.LIMIT:
                ok = False
            zI[0, j, col] = base + k * cp
            for c in range(1, CI):
                kd = kindI[c]
                if kd == A.LIN:
                    b = 0 if r else XI[c, j, col]
                    x = XI[c, p, col]
                    v = pVI[c, j]
                    if checked and (abs(float(b)) + abs(float(k) * float(x))
                                    + abs(float(v) * float(cp))) > A.LIMIT:
                        ok = False
                    zI[c, j, col] = b + k * x + v * cp
                else:
                    b = A.sent_i(kd) if r else XI[c, j, col]
                    if k > 0 and cp > 0:
                        cand = XI[c, p, col]
                        v = pVI[c, j]
                        if A.better_i(kd, v, cand):
                            cand = v
                        if A.better_i(kd, cand, b):
                            b = cand
                    zI[c, j, col] = b
            for c in range(CF):
                kd = kindF[c]
                if kd == A.LIN:
                    b = 0.0 if r else XF[c, j, col]
                    zF[c, j, col] = b + k * XF[c, p, col] + pVF[c, j] * cp
                else:
                    b = A.sent_f(kd) if r else XF[c, j, col]
                    if k > 0 and cp > 0:
                        cand = XF[c, p, col]
                        v = pVF[c, j]
                        if A.better_f(kd, v, cand):
                            cand = v
                        if A.better_f(kd, cand, b):
                            b = cand
                    zF[c, j, col] = b
    return ok


@step
def map_group(seg0, seg1, ctr, plan, parent, gate, kindI, kindF, pk, pVI, pVF, pres, SI, SF, col_ptr, col_idx):
    """Step 3, computed: the pending group's map applied to each target -- the aggregate and
    the newest item of both segments -- into the scratch ``SI``, ``SF`` (row by row, only the
    rows the group touches); False if an integer would overflow (nothing is changed)."""
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1 = seg1
    W = aggI0.shape[2]
    checked = plan.checked != 0
    useK = plan.lead != 0
    gated = plan.gated != 0
    ok = True
    for tgt in range(4):
        if tgt == 0:
            XI = aggI0
            XF = aggF0
        elif tgt == 1:
            if W == 1 or ctr.items[0, 0] == 0:
                continue
            XI = bI0[ctr.items[0, 0] - 1]
            XF = bF0[ctr.items[0, 0] - 1]
        elif tgt == 2:
            if not useK:
                continue
            XI = aggI1
            XF = aggF1
        else:
            if not useK or W == 1 or ctr.items[1, 0] == 0:
                continue
            XI = bI1[ctr.items[1, 0] - 1]
            XF = bF1[ctr.items[1, 0] - 1]
        if not map_target(XI, XF, SI[tgt], SF[tgt], gated and tgt >= 2, checked, parent, gate, kindI, kindF, pk,
                          pVI, pVF, pres, col_ptr, col_idx):
            ok = False
    return ok


@step
def start_vector(seg0, seg1, plan, gate, kindI, kindF, pk, pVI, pVF, vI, vF, target):
    """The pending group's START vector u (node 0 only) into ``v[0]``: the count, then the
    values of its events; False if adding it to the aggregate of segment ``target`` would
    overflow."""
    aggI0 = seg0[0]
    aggI1 = seg1[0]
    CI = pVI.shape[0]
    CF = pVF.shape[0]
    W = aggI0.shape[2]
    checked = plan.checked != 0
    gated = plan.gated != 0
    ok = True
    # the START vector u (node 0 only): count, then values of its events
    for c in range(CI):
        vI[0, c, 0] = pVI[c, 0]
    vI[0, 0, 0] = pk[0]
    for c in range(CF):
        vF[0, c, 0] = pVF[c, 0]
    if target == 1 and gated and gate[0]:  # a blocked single-event match is invalid
        for c in range(CI):
            vI[0, c, 0] = 0 if kindI[c] == A.LIN else A.sent_i(kindI[c])
        for c in range(CF):
            vF[0, c, 0] = 0.0 if kindF[c] == A.LIN else A.sent_f(kindF[c])
    const = W - 1
    XI = aggI1 if target == 1 else aggI0
    for c in range(CI):
        if checked and kindI[c] == A.LIN and \
                abs(float(XI[c, 0, const])) + abs(float(vI[0, c, 0])) > A.LIMIT:
            ok = False
    return ok


@step
def commit_group(seg0, seg1, ctr, plan, gate, kindI, kindF, pk, pres, SI, SF, col_ptr, col_idx):
    """Step 3, committed: the rows :func:`map_group` computed copied to their targets; node 0
    (the START) cleared where the group resets it or a gate blocks it."""
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1 = seg1
    N = pk.shape[0]
    CI = SI.shape[1]
    CF = SF.shape[1]
    W = aggI0.shape[2]
    useK = plan.lead != 0
    gated = plan.gated != 0
    for tgt in range(4):
        if tgt == 0:
            XI = aggI0
            XF = aggF0
        elif tgt == 1:
            if W == 1 or ctr.items[0, 0] == 0:
                continue
            XI = bI0[ctr.items[0, 0] - 1]
            XF = bF0[ctr.items[0, 0] - 1]
        elif tgt == 2:
            if not useK:
                continue
            XI = aggI1
            XF = aggF1
        else:
            if not useK or W == 1 or ctr.items[1, 0] == 0:
                continue
            XI = bI1[ctr.items[1, 0] - 1]
            XF = bF1[ctr.items[1, 0] - 1]
        zI = SI[tgt]
        zF = SF[tgt]
        for j in range(1, N):
            if pk[j] == 0 and pres[j] == 0:
                continue
            for a_ in range(col_ptr[j], col_ptr[j + 1]):
                col = col_idx[a_]
                for c in range(CI):
                    XI[c, j, col] = zI[c, j, col]
                for c in range(CF):
                    XF[c, j, col] = zF[c, j, col]
        if pres[0] != 0 or (gated and tgt >= 2 and gate[0] != 0):
            for col in range(W):
                A.zero_row(XI, XF, kindI, kindF, 0, col)


@step
def push_start(seg0, seg1, ctr, plan, vI, vF, target, t, ell, kindI, kindF):
    """The pending group's STARTs (vector ``v[0]``, time ``t``, last leading negation
    ``ell``) pushed as the newest item of segment ``target``; under SLIDE the first window
    to report is set when the segments were empty."""
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1 = seg1
    mode = plan.mode
    w = plan.within
    W = aggI0.shape[2]
    sums = plan.sums != 0  # else the aggregates' affine columns stay zero (windows.push)
    if mode == SLIDE and S.size(ctr, 0) == 0 and S.size(ctr, 1) == 0:
        first = (t - w) // plan.slide + 1
        if ctr.next_window == NONE or ctr.next_window < first:
            ctr.next_window = first
    if not sums:  # the START's own item only (windows.push)
        if target == 0:
            S.push_item(bI0, bF0, bm0, ctr, 0, vI[0], vF[0], 1, t, ell, W, kindI, kindF)
        else:
            S.push_item(bI1, bF1, bm1, ctr, 1, vI[0], vF[0], 1, t, ell, W, kindI, kindF)
    elif target == 0:
        S.push(aggI0, aggF0, bI0, bF0, bm0, ctr, 0, vI[0], vF[0], 1, t, ell, W, kindI, kindF,
               False, True, True)
    else:
        S.push(aggI1, aggF1, bI1, bF1, bm1, ctr, 1, vI[0], vF[0], 1, t, ell, W, kindI, kindF,
               False, True, True)


@jit
def run(seg0, seg1, ctr, plan, parent, gate, outnode, kindI, kindF, maskI, maskF,
        cls_ptr, cls_node, cls_kind, pk, pVI, pVF, pres, totI, totF, lastI, lastF,
        outM, outI, outF, SI, SF, scr, vI, vF, tI, tF,
        ev_ts, ev_cls, valI, vldI, valF, vldF, ev_inst, pos, anc_ptr, anc_idx, col_ptr, col_idx, general):
    """Process events ``pos..`` of one partition; returns (status, next position).

    ``general``: ``True``, or ``None`` under WITHIN alone (mode ``TOTAL``, the only mode of
    :func:`run_pool`): compiled without the code of the modes that write rows
    (:func:`._expiry.settle`).

    The per-group path is inline: a call that passes arrays passes each as a structure of
    seven words, so calls are left to steps that are not per event. Its steps (:func:`due`,
    :func:`map_group`, :func:`start_vector`, :func:`commit_group`, :func:`push_start`,
    :func:`reset_pending`) are spliced in by numba, :func:`accumulate` (shared with
    :func:`run_pool`) is inlined by LLVM.
    """
    N = parent.shape[0]
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1 = seg1
    W = aggI0.shape[2]
    checked = plan.checked != 0
    flush = plan.flush
    mode = plan.mode
    w = plan.within
    useK = plan.lead != 0
    i = pos
    E = ev_ts.shape[0]
    while True:
        if ctr.pending and (ctr.stage == 1 or (i < E and ev_ts[i] > ctr.pending_ts)
                            or (i >= E and ctr.pending_ts < flush)):
            t = ctr.pending_ts
            if ctr.stage == 0:
                if due(t, seg0, seg1, ctr, plan):
                    st = X.settle(t, seg0, seg1, ctr, plan, outnode, totI, totF, lastI, lastF, outM, outI, outF,
                                  scr, vI, vF, tI, tF, kindI, kindF, N, W, anc_ptr, anc_idx, general)
                    if st:
                        return st, i
                # where do the STARTs go (a leading negation strictly before t within the window blocks)
                ell = ctr.lead_ts
                blocked = useK and ell != NONE and (w < 0 or t - ell < w)
                start = pk[0] > 0 and not (blocked and w < 0)
                if mode == TOTAL and not (plan.lo <= t < plan.hi):
                    start = False
                target = 1 if blocked else 0
                if start and W > 1:
                    cap = bm1.shape[0] if target == 1 else bm0.shape[0]
                    if S.size(ctr, target) + 1 > cap:
                        return 4, i
                ok = map_group(seg0, seg1, ctr, plan, parent, gate, kindI, kindF, pk, pVI, pVF, pres, SI, SF,
                               col_ptr, col_idx)
                if start and not start_vector(seg0, seg1, plan, gate, kindI, kindF, pk, pVI, pVF, vI, vF, target):
                    ok = False
                if not ok:
                    return 2, i
                commit_group(seg0, seg1, ctr, plan, gate, kindI, kindF, pk, pres, SI, SF, col_ptr, col_idx)
                if start:
                    push_start(seg0, seg1, ctr, plan, vI, vF, target, t, ell, kindI, kindF)
                if ctr.pending_lead:
                    ctr.lead_ts = t
                ctr.stage = 1
            if general is not None and (mode == EMIT or mode == RECORD):
                st = instants(seg0, ctr, plan, outnode, kindI, kindF, lastI, lastF, outM, outI, outF, vI, vF,
                              tI, tF, W, anc_ptr, anc_idx)
                if st:
                    return st, i
            ctr.stage = 0
            ctr.pending = 0
            reset_pending(pk, pVI, pVF, pres, ctr, kindI, kindF)
            continue
        if i < E:
            t = ev_ts[i]
            if ctr.pending and t < ctr.pending_ts:
                return 3, i
            if not ctr.pending:
                ctr.pending = 1
                ctr.pending_ts = t
            st, i = accumulate(i, t, ctr, kindI, kindF, maskI, maskF, cls_ptr, cls_node, cls_kind, pk, pVI, pVF,
                               pres, ev_ts, ev_cls, valI, vldI, valF, vldF, ev_inst, checked)
            if st:
                return st, i
            continue
        break
    if flush != NONE:
        st = X.settle(flush, seg0, seg1, ctr, plan, outnode, totI, totF, lastI, lastF, outM, outI, outF,
                    scr, vI, vF, tI, tF, kindI, kindF, N, W, anc_ptr, anc_idx, general)
        if st:
            return st, i
    return 0, i


# Reference: A-Seq (SIGMOD 2014) §3.2 Fig. 5 (SEM, with the expiry test corrected),
# §3.3 (negation), §3.4 (HPC); docs/semantics.md §4, §7 (scopes, result modes).


@inline
def copy1(dst, src):
    for i in range(src.shape[0]):
        dst[i] = src[i]


@inline
def copy2(dst, src):
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@inline
def copy3(dst, src):
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            for k in range(src.shape[2]):
                dst[i, j, k] = src[i, j, k]


@step
def fold(plan, tot, totf, gI, gF, kindI, kindF):
    """A stacked partition whose window emptied gives up its totals ``tot*``. Without GROUP BY
    they are added to the one group's ``g*``: 0, or 6 (nothing added) if that would overflow.
    With GROUP BY: 2 if it has matches (the caller moves them to its groups), else 0."""
    O = tot.shape[0]
    if plan.grouped:
        for o in range(O):
            if tot[o, 0] != 0:
                return 2
        return 0
    for o in range(O):
        if not X.add_total(gI, gF, o, tot.T, totf.T, o, kindI, kindF, plan.checked != 0, False):
            return 6
    for o in range(O):
        X.add_total(gI, gF, o, tot.T, totf.T, o, kindI, kindF, False, True)
    return 0


@step
def reset_slot(s, P, ctrs, pks, pVIs, pVFs, press, totIs, totFs, lastIs, lastFs, fresh):
    """Slot ``s`` of the stacked state as a new partition's (the template ``fresh``); the
    segments' items need no reset (they are read only below their counts)."""
    aggI_f, aggF_f, aggI1_f, aggF1_f, ctr_f, pk_f, pVI_f, pVF_f, pres_f, totI_f, totF_f, lastI_f, lastF_f = fresh
    copy3(P[0][s], aggI_f)
    copy3(P[1][s], aggF_f)
    copy3(P[8][s], aggI1_f)
    copy3(P[9][s], aggF1_f)
    ctrs[s] = ctr_f
    copy1(pks[s], pk_f)
    copy2(pVIs[s], pVI_f)
    copy2(pVFs[s], pVF_f)
    copy1(press[s], pres_f)
    copy2(totIs[s], totI_f)
    copy2(totFs[s], totF_f)
    copy2(lastIs[s], lastI_f)
    copy2(lastFs[s], lastF_f)


@inline
def prefetch_rows(a, s):
    """Prefetch row ``s`` of ``a`` (a stacked partition's field), line by line."""
    row = a.strides[0]
    for off in range(0, row, 64):
        prefetch(a, s * row + off)


@step
def prefetch_slot(P, ctrs, pks, pVIs, pVFs, press, totIs, totFs, s, whole):
    """Prefetch the state of slot ``s`` that :func:`run_pool` reads: its counters and pending
    group, and with ``whole`` its window and totals too (a partition with one event mostly
    only joins its pending group: with 10^6 keys, most of them).

    With 10^4 partitions the stack outgrows the caches: a partition's fields, one array each,
    cost a miss apiece, and a visit's loads wait on one another (its steps branch on what they
    read); fetched while the partitions before it run, they are there when its turn comes."""
    prefetch_rows(ctrs, s)
    prefetch_rows(pks, s)
    prefetch_rows(pVIs, s)
    prefetch_rows(pVFs, s)
    prefetch_rows(press, s)
    if whole:
        prefetch_rows(totIs, s)
        prefetch_rows(totFs, s)
        prefetch_rows(P[0], s)
        prefetch_rows(P[1], s)
        prefetch_rows(P[2], s)
        prefetch_rows(P[3], s)
        prefetch_rows(P[4], s)
        prefetch_rows(P[5], s)
        prefetch_rows(P[6], s)
        prefetch_rows(P[7], s)
        prefetch_rows(P[8], s)
        prefetch_rows(P[9], s)
        prefetch_rows(P[10], s)
        prefetch_rows(P[11], s)
        prefetch_rows(P[12], s)
        prefetch_rows(P[13], s)
        prefetch_rows(P[14], s)
        prefetch_rows(P[15], s)


#: how many partitions ahead :func:`run_pool` prefetches (a visit of a partition with one event
#: is shorter than a miss)
AHEAD = 2


@jit
def run_pool(P, ctrs, pks, pVIs, pVFs, press, totIs, totFs, lastIs, lastFs, fresh, gI, gF,
             slots, starts, ends, r0, pos0, now, freed, outR, plan, parent, gate, outnode, kindI, kindF, maskI,
             maskF, cls_ptr, cls_node, cls_kind, outM, outI, outF, SI, SF, scr, vI, vF, tI, tF,
             ev_ts, ev_cls, valI, vldI, valF, vldF, ev_inst, anc_ptr, anc_idx, col_ptr, col_idx):
    """:func:`run` for many partitions in one call: partition ``r`` is slot ``slots[r]`` of the
    stacked state ``P`` (segments), ``ctrs``, ``pks``, ... and reads events ``starts[r]:ends[r]``.

    Under WITHIN alone (the only mode that uses it), a partition whose window has emptied is
    folded here: its totals are added to the group's ``g*`` (one group: no GROUP BY), its slot
    reset to ``fresh`` and ``freed[r]`` set to 1. With GROUP BY (``plan.grouped``) a partition
    without matches is reset alike; one with matches gets ``freed[r]`` 2, and the caller moves
    its totals to its groups and resets its slot. Rows go to ``out*`` with their partition in ``outR``.
    Returns (status, r, pos, rows): status as for :func:`run` (``r``, ``pos``: where to resume),
    or 6 when the group's totals would overflow. One call instead of one per partition: with
    10^4 partitions per batch the calls, not the events, cost the time. For the same reason three
    common cases skip :func:`run`: events that only join a partition's pending group, a pending
    group before an empty window that can add nothing (dropped as later events arrive), and a
    partition holding only a pending group whose STARTs expire by ``flush`` (see below).
    """
    aggI_f, aggF_f, aggI1_f, aggF1_f, ctr_f, pk_f, pVI_f, pVF_f, pres_f, totI_f, totF_f, lastI_f, lastF_f = fresh
    w = plan.within
    O = outnode.shape[0]
    nout = 0
    pos = pos0
    flush = plan.flush
    reads_start = False  # does an output read node 0 (a pattern of one event)?
    for o in range(O):
        if outnode[o] == 0:
            reads_start = True
    R = slots.shape[0]
    for q in range(r0, min(r0 + AHEAD, R)):
        prefetch_slot(P, ctrs, pks, pVIs, pVFs, press, totIs, totFs, slots[q], ends[q] - starts[q] != 1)
    for r in range(r0, R):
        s = slots[r]
        q = r + AHEAD
        if q < R:
            prefetch_slot(P, ctrs, pks, pVIs, pVFs, press, totIs, totFs, slots[q], ends[q] - starts[q] != 1)
        ctr = ctrs[s]
        a = starts[r]
        b = ends[r]
        if (a == b and pos == 0 and not reads_start
                and ctr.items[0, 0] + ctr.items[0, 1] + ctr.items[1, 0] + ctr.items[1, 1] == 0
                and ctr.pending and ctr.stage == 0 and not ctr.pending_lead and flush != NONE
                and ctr.pending_ts < flush and ctr.pending_ts + w <= flush):
            # only a pending group, whose STARTs (if any) would expire by ``flush`` having
            # extended nothing: it adds nothing to the totals, and the window empties (the
            # common case of many keys with few events each, as a watermark passes)
            ctr.pending = 0
        else:
            done = False
            if (b > a and pos == 0 and flush == NONE and ctr.stage == 0 and ctr.pending
                    and ev_ts[a] > ctr.pending_ts and not reads_start and not ctr.pending_lead
                    and ctr.items[0, 0] + ctr.items[0, 1] + ctr.items[1, 0] + ctr.items[1, 1] == 0
                    and (pks[s][0] == 0 or ctr.pending_ts + w <= ev_ts[a])):
                # only a pending group, the window empty, and the group adds nothing: without a
                # START it extends nothing (no START before it), and its STARTs expire before
                # the next events, having extended nothing. It is dropped (as :func:`run` would
                # leave no trace of it) and the events start a new one: with 10^4 keys and one
                # event per key and window, some 40% of the visits
                copy1(pks[s], pk_f)
                copy2(pVIs[s], pVI_f)
                copy2(pVFs[s], pVF_f)
                copy1(press[s], pres_f)
                ctr.pending_instants = 0
                ctr.pending = 0
            if (b > a and pos == 0 and flush == NONE and ctr.stage == 0
                    and (not ctr.pending or ev_ts[a] == ctr.pending_ts)):
                # events at the time of the pending group (or a partition's first) join it, as
                # in :func:`run`, without its call: with many keys most partitions get only these
                if not ctr.pending:
                    ctr.pending = 1
                    ctr.pending_ts = ev_ts[a]
                st, pos = accumulate(0, ev_ts[a], ctr, kindI, kindF, maskI, maskF, cls_ptr, cls_node, cls_kind,
                                     pks[s], pVIs[s], pVFs[s], press[s], ev_ts[a:b], ev_cls[a:b], valI[a:b],
                                     vldI[a:b], valF[a:b], vldF[a:b], ev_inst[a:b], plan.checked != 0)
                if st:
                    return st, r, pos, nout
                done = pos == b - a
            if not done:
                seg0 = S.Segment(P[0][s], P[1][s], P[2][s], P[3][s], P[4][s], P[5][s], P[6][s], P[7][s])
                seg1 = S.Segment(P[8][s], P[9][s], P[10][s], P[11][s], P[12][s], P[13][s], P[14][s], P[15][s])
                ctr.rows = nout
                st, pos = run(seg0, seg1, ctr, plan, parent, gate, outnode, kindI, kindF, maskI, maskF,
                              cls_ptr, cls_node, cls_kind, pks[s], pVIs[s], pVFs[s], press[s], totIs[s], totFs[s],
                              lastIs[s], lastFs[s], outM, outI, outF, SI, SF, scr, vI, vF, tI, tF,
                              ev_ts[a:b], ev_cls[a:b], valI[a:b], vldI[a:b], valF[a:b], vldF[a:b], ev_inst[a:b],
                              pos, anc_ptr, anc_idx, col_ptr, col_idx, None)
                for k in range(nout, ctr.rows):
                    outR[k] = r
                nout = ctr.rows
                ctr.rows = 0
                if st:
                    return st, r, pos, nout
            pos = 0
        # an empty window (nothing pending, no STARTs, no leading negation still in force): fold
        if ctr.items[0, 0] + ctr.items[0, 1] + ctr.items[1, 0] + ctr.items[1, 1] == 0 and ctr.pending == 0:
            ell = ctr.lead_ts
            if ell != NONE and ell + w > max(ctr.pending_ts, now):
                continue
            st = fold(plan, totIs[s], totFs[s], gI, gF, kindI, kindF)
            if st == 6:
                return 6, r, b - a, nout
            if st == 2:  # its groups' totals grow: the caller folds them, resets the slot
                freed[r] = 2
                continue
            reset_slot(s, P, ctrs, pks, pVIs, pVFs, press, totIs, totFs, lastIs, lastFs, fresh)
            freed[r] = 1
    return 0, slots.shape[0], 0, nout
