"""Beyond the paper: the windowed sum over active STARTs in time independent of their number.

A-Seq's Start Event Marking (paper §3.2, Fig. 5) keeps one prefix-counter vector per active
START and updates all of them on every event: O(k) per event for k STARTs in the window. But
every update at one timestamp is the *same* map ``M`` for all of them (:mod:`._algebra`), so

    sum over active STARTs s of  v_s(now) = M_now ... M_(t_s+) u_s

is a sliding-window aggregate over a FIFO of items with an associative operator (composition
of affine maps), and the classic *two-stacks* queue computes it:

* **back** (new STARTs): each item keeps its own map since it was pushed (only the newest
  item's map still changes), and an aggregate map ``agg`` composes everything since the last
  flip; its affine column is the sum of the back STARTs' current vectors;
* **front** (old STARTs, oldest on top): frozen at the last flip, each item holds its own vector
  ``g`` and the suffix sum ``f`` over it and every newer front item;
* the window sum is ``agg(f_top)``, a START's current vector is ``Lin(agg) g``; when the front
  is empty and an item must leave, the back is *flipped*: its maps are composed newest to
  oldest (one matrix product per item) into the front's ``g`` and ``f``.

Per event the cost is the rows of ``agg`` (and of the newest item's map) its type touches —
O(pattern length) — plus an amortised O(length³) per START for the flip; never O(k).

A window is a *segment*; queries with leading negation use two (:mod:`._kernels`): STARTs
still blocked by a recent negative event, and the unblocked ones. All functions take arrays,
records and scalars only (numba); a segment is the arrays ``agg*, b*, bm, f*, fm`` and its counters in
``ctr.items[s, 0]`` (back size) and ``ctr.items[s, 1]`` (front size).

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.2 (SEM, Lemma 3-4) — this replaces SEM's per-START loop;
two-stacks: Tangwongsan, Hirzel, Schneider, "Sliding-Window Aggregation Algorithms", Encyclopedia of
Big Data Technologies (2019).
"""


from collections import namedtuple

from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
inline = kernels.jit(_TWIN, inline=True)  # small helpers of the per-partition steps (LLVM inlines them)
A = kernels.sibling(__name__, "_algebra", _TWIN)

#: one window segment as the kernels take it: the aggregate map ``agg*``, the back items' maps
#: ``b*`` and their (START time, last leading negation) ``bm``, the front items' vectors ``f*``
#: and theirs ``fm``; ``ctr`` holds each segment's back and front sizes
Segment = namedtuple("Segment", "aggI aggF bI bF bm fI fF fm")


@jit
def size(ctr, s):
    return ctr.items[s, 0] + ctr.items[s, 1]


@jit
def oldest_ts(bm, fm, ctr, s, field):
    """``field`` 0: START time, 1: time of the last leading negative event before it."""
    fn = ctr.items[s, 1]
    if fn > 0:
        return fm[fn - 1, field]
    return bm[0, field]


@inline
def zero_vec(vI, vF, kindI, kindF):
    for c in range(vI.shape[0]):
        for j in range(vI.shape[1]):
            vI[c, j] = 0 if kindI[c] == A.LIN else A.sent_i(kindI[c])
    for c in range(vF.shape[0]):
        for j in range(vF.shape[1]):
            vF[c, j] = 0.0 if kindF[c] == A.LIN else A.sent_f(kindF[c])


@inline
def copy_vec(aI, aF, bI, bF):
    for c in range(aI.shape[0]):
        for j in range(aI.shape[1]):
            bI[c, j] = aI[c, j]
    for c in range(aF.shape[0]):
        for j in range(aF.shape[1]):
            bF[c, j] = aF[c, j]


@jit
def flip(aggI, aggF, bI, bF, bm, fI, fF, fm, ctr, s, AccI, AccF, NI, NF, pI, pF, kindI, kindF, checked,
         anc_ptr, anc_idx, sums):
    """Move every back item to the (empty) front, newest first. Nothing is committed on
    overflow (the front is empty, so the slots written are unused). Without ``sums`` the suffix
    sums ``f`` are not computed (see :func:`push`)."""
    bn = ctr.items[s, 0]
    N = aggI.shape[1]
    A.identity(AccI, AccF, kindI, kindF)
    zero_vec(pI, pF, kindI, kindF)
    for idx in range(bn - 1, -1, -1):
        k = bn - 1 - idx
        ok = A.apply_rows(AccI, AccF, bI[idx, :, :, N], bF[idx, :, :, N], fI[k, 0], fF[k, 0], 0, N, False,
                          kindI, kindF, checked, anc_ptr, anc_idx)
        if sums:
            ok = A.combine_vec(fI[k, 0], fF[k, 0], pI, pF, fI[k, 1], fF[k, 1], 0, N, kindI, kindF, checked) and ok
        if not ok:
            return False
        fm[k, 0] = bm[idx, 0]
        fm[k, 1] = bm[idx, 1]
        if sums:
            copy_vec(fI[k, 1], fF[k, 1], pI, pF)
        if idx > 0:
            if not A.compose(AccI, AccF, bI[idx], bF[idx], NI, NF, kindI, kindF, checked, anc_ptr, anc_idx):
                return False
            AccI, NI = NI, AccI  # the product becomes the accumulator (no copy)
            AccF, NF = NF, AccF
    ctr.items[s, 1] = bn
    ctr.items[s, 0] = 0
    A.identity(aggI, aggF, kindI, kindF)
    return True


@jit
def current(aggI, aggF, fI, fF, ctr, s, oI, oF, j0, j1, kindI, kindF, checked, anc_ptr, anc_idx):
    """Rows j0..j1-1 of the oldest (front top) item's current vector ``Lin(agg) g``."""
    fn = ctr.items[s, 1]
    # strided views (``::1``): the type of :func:`flip`'s column views, so apply_rows compiles once
    return A.apply_rows(aggI, aggF, fI[fn - 1, 0, :, ::1], fF[fn - 1, 0, :, ::1], oI, oF, j0, j1, False, kindI,
                        kindF, checked, anc_ptr, anc_idx)


@jit
def window_sum(aggI, aggF, fI, fF, ctr, s, j, oI, oF, zI, zF, W, kindI, kindF, checked, anc_ptr, anc_idx):
    """Row ``j`` of the sum of every item's current vector (``agg(f_top)``) into ``o[:, j]``."""
    if W == 1:  # no window: the aggregate is the sum itself (DPC)
        for c in range(aggI.shape[0]):
            oI[c, j] = aggI[c, j, 0]
        for c in range(aggF.shape[0]):
            oF[c, j] = aggF[c, j, 0]
        return True
    fn = ctr.items[s, 1]
    if fn > 0:
        return A.apply_rows(aggI, aggF, fI[fn - 1, 1, :, ::1], fF[fn - 1, 1, :, ::1], oI, oF, j, j + 1, True,
                            kindI, kindF, checked, anc_ptr, anc_idx)
    return A.apply_rows(aggI, aggF, zI[:, ::1], zF[:, ::1], oI, oF, j, j + 1, True, kindI, kindF, checked, anc_ptr,
                        anc_idx)


@jit
def push(aggI, aggF, bI, bF, bm, ctr, s, uI, uF, j1, ts, ell, W, kindI, kindF, checked, do, sums):
    """Add a START (its vector ``u``, rows 0..j1-1) as the newest item. With ``do`` False only
    checks that the aggregate's affine column can take it.

    ``sums`` False (a partition under WITHIN alone whose window sums outgrew int64): the window
    sum is never read there (a START's matches are counted from its own vector as it leaves),
    so the START is not added to the aggregate's affine column, which stays zero (the group
    maps keep it so) -- nor to the front's suffix sums (:func:`flip`). Those sums are the
    largest numbers of a window (every START's count added up); leaving them out keeps the
    partition in int64 as long as one START's counts fit."""
    const = W - 1
    if not sums:
        if not do:
            return True
    elif not do:
        return A.add_into(aggI, aggF, const, uI, uF, 0, j1, kindI, kindF, checked, False)
    else:
        A.add_into(aggI, aggF, const, uI, uF, 0, j1, kindI, kindF, False, True)
    push_item(bI, bF, bm, ctr, s, uI, uF, j1, ts, ell, W, kindI, kindF)
    return True


@jit
def push_item(bI, bF, bm, ctr, s, uI, uF, j1, ts, ell, W, kindI, kindF):
    """The item part of :func:`push`: the START's own map (identity, its vector as the affine
    column) and times."""
    const = W - 1
    if W > 1:
        idx = ctr.items[s, 0]
        A.identity(bI[idx], bF[idx], kindI, kindF)
        for c in range(uI.shape[0]):
            for j in range(j1):
                bI[idx, c, j, const] = uI[c, j]
        for c in range(uF.shape[0]):
            for j in range(j1):
                bF[idx, c, j, const] = uF[c, j]
        bm[idx, 0] = ts
        bm[idx, 1] = ell
        ctr.items[s, 0] = idx + 1
    return True


# Reference: A-Seq (SIGMOD 2014) §3.2 (SEM, Fig. 5, Lemma 3-4: O(k) per event for k active STARTs),
# replaced here by a two-stacks sliding aggregation of the per-timestamp maps.
