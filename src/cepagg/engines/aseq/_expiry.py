"""Time passing in a partition: STARTs expire and unblock, SLIDE windows close, rows are written.

A START is active at instant ``t`` iff ``t < start + w`` (the paper's Fig. 5 tests ``exp < ts``,
inverted); a START blocked by a leading negative event ``n`` (one lies in ``(t - w, start)``) is
unblocked at ``n + w``. Under WITHIN alone a START's matches are final when it leaves, so its vector
at the output nodes is added to the totals then (its trailing negation has been checked up to
``start + w``). A SLIDE window ``[k·s, k·s+w)`` is the state at its last instant ``k·s+w-1``. Groups
spanning partitions get *records*: the window sum whenever it changes (:mod:`.merge`).

Functions take arrays, records and scalars only (numba); the twin loader runs the same source as Python.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.2 (Lemma 3, SEM step 4).
"""


from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
step = kernels.jit(_TWIN, inline="step")  # spliced into its caller by numba (see settle)
inline = kernels.jit(_TWIN, inline=True)  # small helpers of the per-partition steps (LLVM inlines them)
A = kernels.sibling(__name__, "_algebra", _TWIN)
S = kernels.sibling(__name__, "windows", _TWIN)

# modes
TOTAL = 0
EMIT = 1
RECORD = 2
SLIDE = 3

# actions of an event class
EXTEND = 0
RESET = 1
LEAD = 2

# output row kinds
ROW_EMIT = 0
ROW_WINDOW = 1
ROW_RECORD = 2

NONE = -(2**63)
INF = 2**63 - 1


@jit
def out_row(outM, outI, outF, ctr, time, o, kind, vI, vF, j):
    r = ctr.rows
    outM[r, 0] = time
    outM[r, 1] = o
    outM[r, 2] = kind
    for c in range(vI.shape[0]):
        outI[r, c] = vI[c, j]
    for c in range(vF.shape[0]):
        outF[r, c] = vF[c, j]
    ctr.rows = r + 1


@jit
def same_as_last(lastI, lastF, o, vI, vF, j):
    for c in range(vI.shape[0]):
        if lastI[o, c] != vI[c, j]:
            return False
    for c in range(vF.shape[0]):
        if lastF[o, c] != vF[c, j]:
            return False
    return True


@jit
def set_last(lastI, lastF, o, vI, vF, j):
    for c in range(vI.shape[0]):
        lastI[o, c] = vI[c, j]
    for c in range(vF.shape[0]):
        lastF[o, c] = vF[c, j]


@jit
def query_all(seg0, ctr, outnode, tI, tF, zI, zF, W, kindI, kindF, checked, anc_ptr, anc_idx):
    """Window sums of every output node into ``t[o]`` (rows of t are (comps, nodes) views)."""
    aggI, aggF, bI, bF, bm, fI, fF, fm = seg0
    for o in range(outnode.shape[0]):
        if not S.window_sum(aggI, aggF, fI, fF, ctr, 0, outnode[o], tI[o], tF[o], zI, zF, W, kindI, kindF,
                            checked, anc_ptr, anc_idx):
            return False
    return True


@jit
def record(seg0, ctr, outnode, tI, tF, zI, zF, lastI, lastF, outM, outI, outF, time, W, kindI, kindF,
           checked, anc_ptr, anc_idx):
    """Record every output whose window sum changed (coarse EMIT: merged across partitions)."""
    if not query_all(seg0, ctr, outnode, tI, tF, zI, zF, W, kindI, kindF, checked, anc_ptr, anc_idx):
        return False
    for o in range(outnode.shape[0]):
        j = outnode[o]
        if not same_as_last(lastI, lastF, o, tI[o], tF[o], j):
            set_last(lastI, lastF, o, tI[o], tF[o], j)
            out_row(outM, outI, outF, ctr, time, o, ROW_RECORD, tI[o], tF[o], j)
    return True


@step
def totals_at_end(seg0, ctr, outnode, totI, totF, vI, vF, kindI, kindF, N, W, checked, anc_ptr, anc_idx):
    """Without a window, at the end of the input: every START's matches are final, so the
    window sum at each output is added to its totals (0; 5 if they would overflow, nothing
    added), and the aggregate is emptied."""
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    for o in range(outnode.shape[0]):
        j = outnode[o]
        S.window_sum(aggI0, aggF0, fI0, fF0, ctr, 0, j, vI[1], vF[1], vI[3], vF[3], W, kindI, kindF,
                     checked, anc_ptr, anc_idx)
        if not add_total(totI, totF, o, vI[1], vF[1], j, kindI, kindF, checked, False):
            return 5
    for o in range(outnode.shape[0]):
        j = outnode[o]
        S.window_sum(aggI0, aggF0, fI0, fF0, ctr, 0, j, vI[1], vF[1], vI[3], vF[3], W, kindI, kindF,
                     False, anc_ptr, anc_idx)
        add_total(totI, totF, o, vI[1], vF[1], j, kindI, kindF, False, True)
    for j in range(N):
        A.zero_row(aggI0, aggF0, kindI, kindF, j, 0)
    return 0


@jit
def expire_to(t, seg0, seg1, ctr, plan, outnode, totI, totF, lastI, lastF, outM, outI, outF,
              scr, vI, vF, tI, tF, kindI, kindF, N, W, anc_ptr, anc_idx, general):
    """Unblock and expire STARTs up to time ``t`` (both effective at instants >= their time).
    ``general``: as for :func:`settle`."""
    w = plan.within
    mode = plan.mode
    checked = plan.checked != 0
    aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0 = seg0
    if w < 0:
        if t == INF and mode == TOTAL:  # no window: every START's matches are final at the end
            return totals_at_end(seg0, ctr, outnode, totI, totF, vI, vF, kindI, kindF, N, W, checked, anc_ptr,
                                 anc_idx)
        return 0
    aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1 = seg1
    AccI, AccF, NI, NF = scr
    O = outnode.shape[0]
    sums = plan.sums != 0
    while True:
        xu = INF
        xe = INF
        if S.size(ctr, 1) > 0:
            xu = S.oldest_ts(bm1, fm1, ctr, 1, 1) + w
        if S.size(ctr, 0) > 0:
            xe = S.oldest_ts(bm0, fm0, ctr, 0, 0) + w
        x = min(xu, xe)
        if x == INF or x > t:
            return 0
        if general is not None and mode == RECORD and ctr.rows + O > outM.shape[0]:
            return 1
        while True:
            if S.size(ctr, 1) > 0 and S.oldest_ts(bm1, fm1, ctr, 1, 1) + w == x:  # unblock
                if not room(seg0, ctr, 0, 1):
                    return 4
                if ctr.items[1, 1] == 0 and not S.flip(aggI1, aggF1, bI1, bF1, bm1, fI1, fF1, fm1, ctr, 1, AccI,
                                                       AccF, NI, NF, vI[2], vF[2], kindI, kindF, checked, anc_ptr,
                                                       anc_idx, sums):
                    return 2
                if not S.current(aggI1, aggF1, fI1, fF1, ctr, 1, vI[1], vF[1], 0, N, kindI, kindF, checked,
                                 anc_ptr, anc_idx):
                    return 2
                if not S.push(aggI0, aggF0, bI0, bF0, bm0, ctr, 0, vI[1], vF[1], N, 0, 0, W, kindI, kindF,
                              checked, False, sums):
                    return 2
                ts = fm1[ctr.items[1, 1] - 1, 0]
                ell = fm1[ctr.items[1, 1] - 1, 1]
                ctr.items[1, 1] -= 1
                S.push(aggI0, aggF0, bI0, bF0, bm0, ctr, 0, vI[1], vF[1], N, ts, ell, W, kindI, kindF,
                       checked, True, sums)
            elif S.size(ctr, 0) > 0 and S.oldest_ts(bm0, fm0, ctr, 0, 0) + w == x:  # expire
                # the window's one START: its vector is its own item's affine column (a flip of
                # one item computes just that), read there without a flip; the window empties.
                # Not the aggregate's column: a partition without window sums leaves it unkept
                alone = ctr.items[0, 1] == 0 and ctr.items[0, 0] == 1
                if not alone and ctr.items[0, 1] == 0 and not S.flip(aggI0, aggF0, bI0, bF0, bm0, fI0, fF0, fm0,
                                                                     ctr, 0, AccI, AccF, NI, NF, vI[2], vF[2], kindI,
                                                                     kindF, checked, anc_ptr, anc_idx, sums):
                    return 2
                if mode == TOTAL:
                    for o in range(O):  # the START's final vector at each output: checked first
                        j = outnode[o]
                        if alone:
                            for c in range(bI0.shape[1]):
                                tI[o][c, j] = bI0[0, c, j, W - 1]
                            for c in range(bF0.shape[1]):
                                tF[o][c, j] = bF0[0, c, j, W - 1]
                        elif not S.current(aggI0, aggF0, fI0, fF0, ctr, 0, tI[o], tF[o], j, j + 1, kindI, kindF,
                                           checked, anc_ptr, anc_idx):
                            return 2
                        if not add_total(totI, totF, o, tI[o], tF[o], j, kindI, kindF, checked, False):
                            return 5
                    for o in range(O):
                        add_total(totI, totF, o, tI[o], tF[o], outnode[o], kindI, kindF, False, True)
                if alone:
                    ctr.items[0, 0] = 0
                    A.identity(aggI0, aggF0, kindI, kindF)
                else:
                    ctr.items[0, 1] -= 1
            else:
                break
        if general is not None and mode == RECORD:
            if not record(seg0, ctr, outnode, tI, tF, vI[3], vF[3], lastI, lastF, outM, outI, outF, x, W,
                          kindI, kindF, checked, anc_ptr, anc_idx):
                return 2


@jit
def room(seg, ctr, s, extra):
    """Can segment ``s`` take ``extra`` more items (else the caller grows it: status 4)?"""
    return S.size(ctr, s) + extra <= seg.bm.shape[0]


@inline
def add_total(totI, totF, o, vI, vF, j, kindI, kindF, checked, do):
    for c in range(vI.shape[0]):
        kd = kindI[c]
        if kd == A.LIN:
            if checked and abs(float(totI[o, c])) + abs(float(vI[c, j])) > A.LIMIT:
                return False
            if do:
                totI[o, c] = totI[o, c] + vI[c, j]
        elif do and A.better_i(kd, vI[c, j], totI[o, c]):
            totI[o, c] = vI[c, j]
    if do:
        for c in range(vF.shape[0]):
            kd = kindF[c]
            if kd == A.LIN:
                totF[o, c] = totF[o, c] + vF[c, j]
            elif A.better_f(kd, vF[c, j], totF[o, c]):
                totF[o, c] = vF[c, j]
    return True


@step
def settle(t, seg0, seg1, ctr, plan, outnode, totI, totF, lastI, lastF, outM, outI, outF,
           scr, vI, vF, tI, tF, kindI, kindF, N, W, anc_ptr, anc_idx, general):
    """Bring the state to instant ``t`` (before its events): report SLIDE windows that closed
    before ``t``, then expire up to ``t``.

    ``general`` is ``None`` under WITHIN alone (mode ``TOTAL``): numba then drops the code of
    the modes that write rows (SLIDE windows, RECORD) before typing it, so a query under WITHIN
    alone compiles its kernels without it; ``True`` keeps every mode.

    Spliced into :func:`._kernels.run` by numba: a function of its own would be optimised by
    LLVM once alone and again in ``run`` (with :func:`expire_to` and all below it linked in)."""
    mode = plan.mode
    checked = plan.checked != 0
    w = plan.within
    s = plan.slide
    O = outnode.shape[0]
    while general is not None and mode == SLIDE and (S.size(ctr, 0) > 0 or S.size(ctr, 1) > 0):
        k = ctr.next_window
        end = k * s + w - 1  # the window's last instant
        if end >= t:
            break
        if ctr.rows + O > outM.shape[0]:
            return 1
        st = expire_to(end, seg0, seg1, ctr, plan, outnode, totI, totF, lastI, lastF, outM, outI, outF,
                       scr, vI, vF, tI, tF, kindI, kindF, N, W, anc_ptr, anc_idx, general)
        if st:
            return st
        if not query_all(seg0, ctr, outnode, tI, tF, vI[3], vF[3], W, kindI, kindF, checked, anc_ptr, anc_idx):
            return 2
        if plan.lo <= k * s < plan.hi:
            for o in range(O):
                j = outnode[o]
                if tI[o][0, j] > 0:
                    out_row(outM, outI, outF, ctr, k * s, o, ROW_WINDOW, tI[o], tF[o], j)
        ctr.next_window = k + 1
    return expire_to(t, seg0, seg1, ctr, plan, outnode, totI, totF, lastI, lastF, outM, outI, outF,
                     scr, vI, vF, tI, tF, kindI, kindF, N, W, anc_ptr, anc_idx, general)



# Reference: A-Seq (SIGMOD 2014) §3.2 (SEM: expiry, Lemma 3-4, output on expiry; Fig. 5's expiry
# test is inverted), docs/semantics.md §7 (result modes).
