"""Prefix counters as linear maps: the arithmetic every A-Seq step is made of.

Per START event A-Seq keeps a *prefix counter vector*: for each node ``j`` of the pattern (a
position of a SEQ, or a node of a PreTree), the number ``c[j]`` of valid prefix matches ending
there (paper Lemma 1-2), plus, for SUM/COUNT(E)/AVG, the totals ``lin[j]`` of a value over those
prefixes, and for MIN/MAX the extreme ``mx[j]`` (the paper's §5 sketch is wrong in general: its MAX
can come from an event in no match; here extremes propagate per prefix).

Everything that happens at one timestamp — events extending prefixes (Lemma 1), negative
events resetting the prefix before them (the Recounting Rule, Lemma 6) — is the same map for
every START, and it is linear in ``c`` and ``lin`` (a "dual number" ``P + εR``) and max-plus
linear in ``mx`` (with the support of ``P`` deciding which prefixes exist). Maps compose, so the
sum over all active STARTs can be kept by sliding-window aggregation of maps
(:mod:`.windows`) instead of one vector per START.

Arrays here have shape ``(comps, nodes, cols)``: comp 0 of the integer family is the count,
the others are linear (LIN) or extreme (MAX/MIN) components; a vector has one column, a map
``N + 1`` (the last is the affine column: contributions of STARTs inside the map's interval).
Functions take arrays and scalars only, so :mod:`numba` compiles them; the same source run as
plain Python on object arrays is the exact twin (Python integers never overflow). With
``checked`` set, every integer operation is checked against :data:`LIMIT` via a float shadow and
the function reports overflow instead of wrapping; callers then redo the step exactly.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.1 (DPC, Lemma 1-2), §3.3 (Lemma 5-6), §5 (SUM, MAX: propagated
per prefix instead of the paper's sketch).
"""

import numpy as np

from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
inline = kernels.jit(_TWIN, inline=True)  # small helpers of the per-partition steps (LLVM inlines them)

LIN = 0
MAX = 1
MIN = 2

I_NEG = -(2**63)  # "no value" of an integer MAX component
I_POS = 2**63 - 1  # "no value" of an integer MIN component
# |value| above this (in the float shadow) is an overflow: of int64, or in the wide flavour
# (:func:`..kernels.wide`, 128-bit integers: :mod:`.wide`) of int128
LIMIT = 2.0**125 if kernels.is_wide(globals()) else 4.0e18


@jit
def sent_i(kind):
    return I_NEG if kind == MAX else I_POS


@jit
def sent_f(kind):
    return -np.inf if kind == MAX else np.inf


@jit
def better_i(kind, a, b):
    """Should extreme value ``a`` replace ``b`` (sentinels never win)."""
    if a == sent_i(kind):
        return False
    if b == sent_i(kind):
        return True
    return a > b if kind == MAX else a < b


@jit
def better_f(kind, a, b):
    return a > b if kind == MAX else a < b


@inline
def zero_row(XI, XF, kindI, kindF, j, col):
    """Component values of an empty prefix set at node ``j``, column ``col``."""
    for c in range(XI.shape[0]):
        XI[c, j, col] = 0 if kindI[c] == LIN else sent_i(kindI[c])
    for c in range(XF.shape[0]):
        XF[c, j, col] = 0.0 if kindF[c] == LIN else sent_f(kindF[c])


@inline
def identity(XI, XF, kindI, kindF):
    """The identity map (columns 0..N-1) with an empty affine column."""
    N = XI.shape[1]
    W = XI.shape[2]
    for j in range(N):
        for col in range(W):
            zero_row(XI, XF, kindI, kindF, j, col)
        XI[0, j, j] = 1


# ----------------------------------------------------------------------------------------------
# Maps applied to vectors, and composed


@jit
def apply_rows(AI, AF, vI, vF, oI, oF, j0, j1, affine, kindI, kindF, checked, anc_ptr, anc_idx):
    """Rows ``j0..j1-1`` of ``A v`` (plus A's affine column when ``affine``) into ``o[:, j]``.

    ``c' = P c``; ``lin' = R c + P lin``; ``mx'[j] = best(mx[m] where P[j,m] > 0, R[j,m] where
    c[m] > 0)``: a prefix set at node m reaches j along paths counted by P; a value picked up on
    the way (R of a MAX component) counts only if some prefix at m exists.
    """
    N = AI.shape[1]
    CI = AI.shape[0]
    CF = AF.shape[0]
    ok = True
    for j in range(j0, j1):
        cnt = AI[0, j, N] if affine else 0
        est = abs(float(cnt))
        for a_ in range(anc_ptr[j], anc_ptr[j + 1]):
            m = anc_idx[a_]
            p = AI[0, j, m]
            if p != 0 and vI[0, m] != 0:
                cnt = cnt + p * vI[0, m]
                est += float(p) * abs(float(vI[0, m]))
        if checked and est > LIMIT:
            ok = False
        oI[0, j] = cnt
        for c in range(1, CI):
            kd = kindI[c]
            if kd == LIN:
                s = AI[c, j, N] if affine else 0
                est = abs(float(s))
                for a_ in range(anc_ptr[j], anc_ptr[j + 1]):
                    m = anc_idx[a_]
                    p = AI[0, j, m]
                    r = AI[c, j, m]
                    if r != 0 and vI[0, m] != 0:
                        s = s + r * vI[0, m]
                        est += abs(float(r) * float(vI[0, m]))
                    if p != 0 and vI[c, m] != 0:
                        s = s + p * vI[c, m]
                        est += abs(float(p) * float(vI[c, m]))
                if checked and est > LIMIT:
                    ok = False
                oI[c, j] = s
            else:
                b = AI[c, j, N] if affine else sent_i(kd)
                for a_ in range(anc_ptr[j], anc_ptr[j + 1]):
                    m = anc_idx[a_]
                    if AI[0, j, m] > 0 and better_i(kd, vI[c, m], b):
                        b = vI[c, m]
                    if vI[0, m] > 0 and better_i(kd, AI[c, j, m], b):
                        b = AI[c, j, m]
                oI[c, j] = b
        for c in range(CF):
            kd = kindF[c]
            if kd == LIN:
                s = AF[c, j, N] if affine else 0.0
                for a_ in range(anc_ptr[j], anc_ptr[j + 1]):
                    m = anc_idx[a_]
                    s += AF[c, j, m] * vI[0, m] + AI[0, j, m] * vF[c, m]
                oF[c, j] = s
            else:
                b = AF[c, j, N] if affine else sent_f(kd)
                for a_ in range(anc_ptr[j], anc_ptr[j + 1]):
                    m = anc_idx[a_]
                    if AI[0, j, m] > 0 and better_f(kd, vF[c, m], b):
                        b = vF[c, m]
                    if vI[0, m] > 0 and better_f(kd, AF[c, j, m], b):
                        b = AF[c, j, m]
                oF[c, j] = b
    return ok


@jit
def compose(AI, AF, BI, BF, NI, NF, kindI, kindF, checked, anc_ptr, anc_idx):
    """Linear part of ``A ∘ B`` (B first) into ``N`` (columns 0..N-1): P = PA PB,
    R = RA PB + PA RB, and for extremes the values picked up in B or, after a path, in A.

    A prefix at node i reaches node j only if i is an ancestor of j (``anc_*``: the ancestors
    of each node, itself included, in increasing order — nodes are numbered parents first):
    only ``i, m`` among j's ancestors with ``i <= m`` contribute, and every other entry is empty.
    """
    N = AI.shape[1]
    CI = AI.shape[0]
    CF = AF.shape[0]
    ok = True
    for j in range(N):
        for i in range(N):
            for c in range(CI):
                NI[c, j, i] = 0 if kindI[c] == LIN else sent_i(kindI[c])
            for c in range(CF):
                NF[c, j, i] = 0.0 if kindF[c] == LIN else sent_f(kindF[c])
        a0 = anc_ptr[j]
        a1 = anc_ptr[j + 1]
        for ai in range(a0, a1):
            i = anc_idx[ai]
            cnt = 0
            est = 0.0
            for am in range(ai, a1):
                m = anc_idx[am]
                pa = AI[0, j, m]
                pb = BI[0, m, i]
                if pa != 0 and pb != 0:
                    cnt = cnt + pa * pb
                    est += float(pa) * float(pb)
            if checked and est > LIMIT:
                ok = False
            NI[0, j, i] = cnt
            for c in range(1, CI):
                kd = kindI[c]
                if kd == LIN:
                    s = 0
                    est = 0.0
                    for am in range(ai, a1):
                        m = anc_idx[am]
                        pa = AI[0, j, m]
                        pb = BI[0, m, i]
                        ra = AI[c, j, m]
                        rb = BI[c, m, i]
                        if ra != 0 and pb != 0:
                            s = s + ra * pb
                            est += abs(float(ra) * float(pb))
                        if pa != 0 and rb != 0:
                            s = s + pa * rb
                            est += abs(float(pa) * float(rb))
                    if checked and est > LIMIT:
                        ok = False
                    NI[c, j, i] = s
                else:
                    b = sent_i(kd)
                    for am in range(ai, a1):
                        m = anc_idx[am]
                        if AI[0, j, m] > 0 and better_i(kd, BI[c, m, i], b):
                            b = BI[c, m, i]
                        if BI[0, m, i] > 0 and better_i(kd, AI[c, j, m], b):
                            b = AI[c, j, m]
                    NI[c, j, i] = b
            for c in range(CF):
                kd = kindF[c]
                if kd == LIN:
                    s = 0.0
                    for am in range(ai, a1):
                        m = anc_idx[am]
                        s += AF[c, j, m] * BI[0, m, i] + AI[0, j, m] * BF[c, m, i]
                    NF[c, j, i] = s
                else:
                    b = sent_f(kd)
                    for am in range(ai, a1):
                        m = anc_idx[am]
                        if AI[0, j, m] > 0 and better_f(kd, BF[c, m, i], b):
                            b = BF[c, m, i]
                        if BI[0, m, i] > 0 and better_f(kd, AF[c, j, m], b):
                            b = AF[c, j, m]
                    NF[c, j, i] = b
    return ok


@jit
def add_into(XI, XF, col, uI, uF, j0, j1, kindI, kindF, checked, do):
    """``X[:, j, col] += u[:, j]`` for j in j0..j1-1 (extremes: the better). With ``do`` False
    only checks for overflow (so that a step can be checked before anything is written)."""
    ok = True
    for j in range(j0, j1):
        for c in range(XI.shape[0]):
            kd = kindI[c]
            if kd == LIN:
                if checked and abs(float(XI[c, j, col])) + abs(float(uI[c, j])) > LIMIT:
                    ok = False
                if do:
                    XI[c, j, col] = XI[c, j, col] + uI[c, j]
            elif do and better_i(kd, uI[c, j], XI[c, j, col]):
                XI[c, j, col] = uI[c, j]
        if do:
            for c in range(XF.shape[0]):
                kd = kindF[c]
                if kd == LIN:
                    XF[c, j, col] = XF[c, j, col] + uF[c, j]
                elif better_f(kd, uF[c, j], XF[c, j, col]):
                    XF[c, j, col] = uF[c, j]
    return ok


@jit
def combine_vec(aI, aF, bI, bF, oI, oF, j0, j1, kindI, kindF, checked):
    """``o = a + b`` for rows j0..j1-1 (extremes: the better); returns False on overflow."""
    ok = True
    for j in range(j0, j1):
        for c in range(aI.shape[0]):
            kd = kindI[c]
            if kd == LIN:
                if checked and abs(float(aI[c, j])) + abs(float(bI[c, j])) > LIMIT:
                    ok = False
                oI[c, j] = aI[c, j] + bI[c, j]
            else:
                oI[c, j] = aI[c, j] if better_i(kd, aI[c, j], bI[c, j]) else bI[c, j]
        for c in range(aF.shape[0]):
            kd = kindF[c]
            if kd == LIN:
                oF[c, j] = aF[c, j] + bF[c, j]
            else:
                oF[c, j] = aF[c, j] if better_f(kd, aF[c, j], bF[c, j]) else bF[c, j]
    return ok


# Reference: A-Seq (SIGMOD 2014) §3.1 Lemma 1-2 (DPC), §3.3 Lemma 5-6 (Recounting Rule), §5
# (SUM/MAX, propagated per prefix instead of the paper's sketch); the map view is this project's.
