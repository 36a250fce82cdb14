"""Ordered indexes over predecessor events: sums (and minima/maxima) in O(log n).

GRETA sums, for each new event, the aggregates of all compatible predecessors: O(n) per
event, O(n^2) per window. For an edge predicate ``f(X) θ g(NEXT(X))`` the compatible
predecessors of ``e`` are those whose key ``f(p)`` lies on one side of ``g(e)``: a prefix of
the keys once they are ranked. A Fenwick tree over the ranks answers a prefix in O(log n) and
accepts a new predecessor in O(log n) (the paper's Vertex Tree answers the same range query in
O(log n + m), m the predecessors returned).

The tree holds *records* (:mod:`._records`), one per start bucket, so one query returns the
per-window aggregates at once. Sums are prefix sums; minima and maxima are prefix minima and
maxima, which a Fenwick tree maintains as long as nothing is removed, and nothing is: expired
buckets are forgotten through the tags below, and predecessors are only removed for negation,
on paths the planner gives to the scan instead.

Layout: a tree of ``n`` ranks occupies rows ``(off + i) * R + slot`` for ``i`` in ``1..n``
of the shared record arrays; its leaves (point values per rank, for ``=`` and to rebuild the
tree when ranks change between batches) occupy ``(loff + i) * R + slot`` for ``i`` in
``0..n-1`` of the leaf arrays. Predicates ``>``/``>=`` use reversed ranks, so every query is
a prefix. Every node and leaf records the range of start buckets it holds: when a bucket
expires nothing is cleared (that would cost O(n) per expiry); the node forgets it when it is
next touched (:func:`clean`), and reads and writes are then plain contiguous blocks.
"""

from __future__ import annotations

from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
inline = kernels.jit(_TWIN, inline=True)  # small helpers of the per-event path
_rec = kernels.sibling(__name__, "_records", _TWIN)
rec_clear = _rec.clear
MIN_EMPTY = _rec.MIN_EMPTY
MAX_EMPTY = _rec.MAX_EMPTY


@inline
def clean(I, F, M, T, node, base, alive, R, mmin):
    """Before node ``node`` (rows ``base + slot``) is read or written: forget the buckets it
    holds that expired (sequence below ``alive``). ``T[node]`` is the range of buckets the
    node may hold, so a bucket's expiry costs nothing until the node is next touched, and then
    only the slots it actually used."""
    lo = T[node, 0]
    if lo >= alive:
        return
    hi = T[node, 1]
    end = hi if hi < alive - 1 else alive - 1
    for seq in range(lo, end + 1):
        rec_clear(I, F, M, base + (seq & (R - 1)), mmin)
    T[node, 0] = alive
    if hi < alive:
        T[node, 1] = alive - 1


@inline
def held(T, node, lo, hi):
    """Record that node ``node`` now holds buckets ``lo..hi`` too."""
    if T[node, 1] < T[node, 0]:
        T[node, 0] = lo
        T[node, 1] = hi
        return
    if lo < T[node, 0]:
        T[node, 0] = lo
    if hi > T[node, 1]:
        T[node, 1] = hi


@inline
def copy_block(D, d0, S, s0, n):
    """Rows ``d0 .. d0+n-1`` of ``D`` = rows ``s0 .. s0+n-1`` of ``S`` (2-D, C order): one
    flat run of ``n * width`` values, which LLVM vectorises (a loop over rows of a 2-D array
    does not)."""
    w = D.shape[1]
    if w == 0:
        return
    Df = D.reshape(D.shape[0] * w)
    Sf = S.reshape(S.shape[0] * w)
    a = d0 * w
    b = s0 * w
    for k in range(n * w):
        Df[a + k] = Sf[b + k]


@inline
def add_block(D, d0, S, s0, n):
    """Rows ``d0 ..`` of ``D`` += rows ``s0 ..`` of ``S``, as one flat run (sums and limbs)."""
    w = D.shape[1]
    if w == 0:
        return
    Df = D.reshape(D.shape[0] * w)
    Sf = S.reshape(S.shape[0] * w)
    a = d0 * w
    b = s0 * w
    for k in range(n * w):
        Df[a + k] += Sf[b + k]


@inline
def extreme_block(D, d0, S, s0, n, mmin):
    """Rows ``d0 ..`` of order codes ``D`` take the minima (``mmin``) or maxima of theirs and
    rows ``s0 ..`` of ``S``."""
    for r in range(n):
        for j in range(D.shape[1]):
            v = S[s0 + r, j]
            if mmin[j]:
                if v < D[d0 + r, j]:
                    D[d0 + r, j] = v
            elif v > D[d0 + r, j]:
                D[d0 + r, j] = v


@inline
def zero_block(D, d0, n):
    """Rows ``d0 .. d0+n-1`` of ``D`` set to zero, as one flat run."""
    w = D.shape[1]
    if w == 0:
        return
    Df = D.reshape(D.shape[0] * w)
    a = d0 * w
    for k in range(n * w):
        Df[a + k] = 0


# ----------------------------------------------------------------------------------------------
# key slots: ranks that never shift (a packed-memory array under the Fenwick tree)
#
# Keys arrive with every batch, and the ranks of a plain sorted list shift whenever a key is
# inserted in the middle: the tree would have to be rebuilt (O(n) records) per batch. Instead
# each index owns ``C`` *slots* (a power of two, at most ~2/3 full); a key keeps its slot, a new
# key takes a free slot between its neighbours, and when there is none the smallest aligned
# window of slots ``[a, a + 2**w)`` with room is re-spread evenly (Itai, Konheim and Rodeh's
# sparse table, "packed memory array"), taking in every later key of the batch that falls in it
# (a batch's keys cluster where a price walks) and moving each key's leaf once. Fenwick ranges
# are dyadic, so a node either covers the whole window (its sum does not change when keys move
# inside it) or lies inside it (rebuilt from the leaves, O(window)). Keys are int64 order
# codes (:meth:`.state.PosState.key_codes`);
# ``KS`` holds every occupied slot's key and, in a free slot, the key of the nearest occupied
# slot before it (``EMPTY_KEY`` before the first), so ``KS`` is sorted and a prefix query is a
# binary search. ``KO`` marks occupied slots. A key whose leaf holds no live bucket and that no
# pending vertex uses is dropped when its window is re-spread.
#
# A batch that brings many keys for the index's size (:data:`.state.BULK`) is merged in at once
# instead (:func:`respread`): one pass over the slots and one rebuild of the tree, where
# inserting run after run would re-spread overlapping windows of slots again and again.

EMPTY_KEY = -(1 << 63)


@jit
def lower(KS, base, C, k):
    """First slot whose key is >= ``k``."""
    lo = 0
    hi = C
    while lo < hi:
        mid = (lo + hi) >> 1
        if KS[base + mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def find(KS, KO, base, C, k):
    """The slot holding key ``k``, or -1."""
    p = lower(KS, base, C, k)
    while p < C and KO[base + p] == 0 and KS[base + p] == k:
        p += 1
    if p < C and KO[base + p] != 0 and KS[base + p] == k:
        return p
    return -1


@jit
def find_many(KS, KO, base, C, keys, out):
    for i in range(keys.shape[0]):
        out[i] = find(KS, KO, base, C, keys[i])


@jit
def move_leaf(LI, LF, LM, LT, src, dst, R, mmin):
    if src == dst:
        return
    copy_block(LI, dst * R, LI, src * R, R)
    copy_block(LF, dst * R, LF, src * R, R)
    copy_block(LM, dst * R, LM, src * R, R)
    zero_block(LI, src * R, R)
    zero_block(LF, src * R, R)
    for r in range(src * R, src * R + R):  # minima and maxima: emptied to their sentinels
        for j in range(LM.shape[1]):
            LM[r, j] = MIN_EMPTY if mmin[j] else MAX_EMPTY
    LT[dst, 0] = LT[src, 0]
    LT[dst, 1] = LT[src, 1]
    LT[src, 0] = 0
    LT[src, 1] = -1


@inline
def move_key(KS, KO, LI, LF, LM, LT, src, dst, R, mmin):
    """The key in slot ``src`` (leaf arrays' row) and its leaf to the free slot ``dst``."""
    move_leaf(LI, LF, LM, LT, src, dst, R, mmin)
    KS[dst] = KS[src]
    KO[dst] = KO[src]
    KO[src] = 0


@inline
def place_new(KS, KO, LT, d, k):
    """New key ``k`` in the free slot ``d``: its leaf is empty (free slots' rows are)."""
    KS[d] = k
    KO[d] = 2
    LT[d, 0] = 0
    LT[d, 1] = -1


@jit
def live_slot(KO, LI, LF, LM, LT, loff, slot, R, mmin, alive):
    """Is the key in ``slot`` still needed (after forgetting its expired buckets)?"""
    leaf = loff + slot
    clean(LI, LF, LM, LT, leaf, leaf * R, alive, R, mmin)
    return KO[leaf] == 2 or LT[leaf, 1] >= LT[leaf, 0]


@jit
def rebuild_nodes(NI, NF, NM, NT, off, LI, LF, LM, loff, j0, j1, R, L, mmin, alive, newest):
    """Fenwick nodes ``j0 .. j1-1`` (1-based) from the leaves; every node whose range lies in
    ``[j0 - 1 .. j1 - 1)`` is recomputed, the others are left alone."""
    # the nodes' rows are the leaves' rows, one slot on (leaf i is node i + 1): one block
    copy_block(NI, (off + j0) * R, LI, (loff + j0 - 1) * R, (j1 - j0) * R)
    copy_block(NF, (off + j0) * R, LF, (loff + j0 - 1) * R, (j1 - j0) * R)
    copy_block(NM, (off + j0) * R, LM, (loff + j0 - 1) * R, (j1 - j0) * R)
    for j in range(j0, j1):
        NT[off + j, 0] = alive
        NT[off + j, 1] = newest
    for j in range(j0, j1):
        par = j + (j & (-j))
        if par < j1:
            add_block(NI, (off + par) * R, NI, (off + j) * R, R)
            add_block(NF, (off + par) * R, NF, (off + j) * R, R)
            extreme_block(NM, (off + par) * R, NM, (off + j) * R, R, mmin)


@jit
def fill_free(KS, KO, loff, a, b, C):
    """Free slots from ``a`` on carry the key before them (through ``b`` and past it until the
    next occupied slot)."""
    prev = KS[loff + a - 1] if a > 0 else EMPTY_KEY
    s = a
    while s < C and (s < b or KO[loff + s] == 0):
        if KO[loff + s] != 0:
            prev = KS[loff + s]
        else:
            KS[loff + s] = prev
        s += 1


@jit
def mark_pending(KS, KO, loff, v_irank, ix, p0, p1, pkeys):
    for v in range(p0, p1):
        r = v_irank[v, ix]
        pkeys[v - p0] = EMPTY_KEY
        if r >= 0:
            KO[loff + r] = 2
            pkeys[v - p0] = KS[loff + r]


@jit
def mark_keys(KS, KO, loff, C, keys, value):
    """Occupancy ``value`` (2: in use, 1: plain) for the slots of ``keys`` that are present."""
    for i in range(keys.shape[0]):
        r = find(KS, KO, loff, C, keys[i])
        if r >= 0:
            KO[loff + r] = value


@jit
def remap_pending(KS, KO, loff, C, v_irank, ix, p0, p1, pkeys):
    for v in range(p0, p1):
        if v_irank[v, ix] >= 0:
            r = find(KS, KO, loff, C, pkeys[v - p0])
            v_irank[v, ix] = r
            KO[loff + r] = 1


@jit
def insert_keys(KS, KO, LI, LF, LM, LT, NI, NF, NM, NT, loff, off, C, point, R, L, mmin, alive,
                newest, new, t0, v_irank, ix, p0, p1, pkeys):
    """Give each of the sorted keys ``new[t0:]`` a slot (keys present keep theirs); every key
    of ``new`` is in use (the batch's). New keys that fall between the same two neighbours
    are placed together: spread over the free slots between them when they fit, else over the
    smallest window with room for them and for the later keys of ``new`` that fall in it (or,
    if no window has, the smallest with room for them, with as many later keys as fit).
    Returns how far it got in ``new``: short of the end
    when the index is too full (grow it, call again from there)."""
    logc = 0
    while (1 << logc) < C:
        logc += 1
    mark_pending(KS, KO, loff, v_irank, ix, p0, p1, pkeys)
    mark_keys(KS, KO, loff, C, new, 2)  # the batch's keys are in use, even without counts yet
    nn = new.shape[0]
    placed = nn
    t = t0
    while t < nn:
        k = new[t]
        p = lower(KS, loff, C, k)
        while p < C and KO[loff + p] == 0 and KS[loff + p] == k:
            p += 1
        if p < C and KO[loff + p] != 0 and KS[loff + p] == k:
            t += 1
            continue
        # the run of new keys between the same neighbours q < run < p
        u = t + 1
        while u < nn and (p == C or new[u] < KS[loff + p]):
            u += 1
        r = u - t
        q = p - 1
        while q >= 0 and KO[loff + q] == 0:
            q -= 1
        g = p - q - 1
        if r <= g:
            for i in range(r):
                d = q + 1 + ((2 * i + 1) * g) // (2 * r)
                KS[loff + d] = new[t + i]
                KO[loff + d] = 2
            fill_free(KS, KO, loff, q + 1, p, C)
            t = u
            continue
        # the smallest aligned window of slots around q with room for the run and for every
        # later key of ``new`` that falls inside it (a batch's keys cluster where a price
        # walks: re-spreading one window once for all of them replaces re-spreading
        # overlapping windows run after run); failing that, the smallest with room for the
        # run, which takes the later keys as far as it has room
        c = q if q >= 0 else 0
        a = -1
        s = 1
        n = 0
        cap = 0
        fa = -1
        fs = 0
        fcap = 0
        fn = 0
        pa = c
        ps = 1
        for w in range(1, logc + 1):
            s = 1 << w
            a = c - (c & (s - 1))
            cap = s if logc <= 1 else s - (s * (w - 1)) // (4 * (logc - 1))  # 3/4 full at the root
            # live keys of the window: those of the half counted at the level below, and
            # the other half's
            for x in range(a, a + s):
                if pa <= x < pa + ps and w > 1:
                    continue
                if KO[loff + x] != 0 and live_slot(KO, LI, LF, LM, LT, loff, x, R, mmin, alive):
                    n += 1
            pa = a
            ps = s
            if n + r <= cap:
                if fa < 0:  # the first window with room for the run
                    fa, fs, fcap, fn = a, s, cap, n
                nx = a + s  # the later keys that fall in it: below the first key after it
                while nx < C and KO[loff + nx] == 0:
                    nx += 1
                ra = 0
                uu = t
                while uu < nn and (nx >= C or new[uu] < KS[loff + nx]):
                    if find(KS, KO, loff, C, new[uu]) < 0:
                        ra += 1
                    uu += 1
                if n + ra <= cap:
                    break
            a = -1
        if a < 0 and fa >= 0:
            a, s, cap, n = fa, fs, fcap, fn
        if a < 0:
            placed = t
            break
        # the keys of new[t:] that belong in the window (below the first key after it), as
        # many as it has room for; keys already present are skipped
        nxt = a + s
        while nxt < C and KO[loff + nxt] == 0:
            nxt += 1
        room = cap - n
        take = 0
        u = t
        while u < nn and (nxt >= C or new[u] < KS[loff + nxt]):
            if find(KS, KO, loff, C, new[u]) < 0:
                if take == room:
                    break
                take += 1
            u += 1
        # every key of the window, old and new, goes straight to its place in the even
        # spread (the i-th of m at a + (2i + 1) s / 2m), each leaf moved once: first the keys
        # whose place is to their left, from the left, then the others and the new keys, from
        # the right (a target never holds a key not yet moved); dead keys are dropped
        m = n + take
        i = 0
        jn = t
        for x in range(a, a + s):
            if KO[loff + x] == 0:
                continue
            if KO[loff + x] != 2 and LT[loff + x, 1] < LT[loff + x, 0]:
                KO[loff + x] = 0
                LT[loff + x, 0] = 0
                LT[loff + x, 1] = -1
                continue
            k = KS[loff + x]
            while jn < u and new[jn] <= k:
                if new[jn] < k:  # (an equal one is present: it is this key)
                    i += 1
                jn += 1
            dest = a + ((2 * i + 1) * s) // (2 * m)
            if dest < x:
                move_key(KS, KO, LI, LF, LM, LT, loff + x, loff + dest, R, mmin)
            i += 1
        i = m - 1
        jn = u - 1
        for x in range(a + s - 1, a - 1, -1):
            if KO[loff + x] == 0:
                continue
            k = KS[loff + x]
            while jn >= t and new[jn] >= k:
                if new[jn] > k:
                    place_new(KS, KO, LT, loff + a + ((2 * i + 1) * s) // (2 * m), new[jn])
                    i -= 1
                jn -= 1
            dest = a + ((2 * i + 1) * s) // (2 * m)
            if dest > x:
                move_key(KS, KO, LI, LF, LM, LT, loff + x, loff + dest, R, mmin)
            i -= 1
        while jn >= t:
            place_new(KS, KO, LT, loff + a + ((2 * i + 1) * s) // (2 * m), new[jn])
            i -= 1
            jn -= 1
        fill_free(KS, KO, loff, a, a + s, C)
        if point == 0:
            rebuild_nodes(NI, NF, NM, NT, off, LI, LF, LM, loff, a + 1, a + s, R, L, mmin, alive,
                          newest)
        t = u
    mark_keys(KS, KO, loff, C, new, 1)
    remap_pending(KS, KO, loff, C, v_irank, ix, p0, p1, pkeys)
    return placed


@jit
def live_count(KS, KO, LI, LF, LM, LT, loff, C, R, mmin, alive, v_irank, ix, p0, p1, new):
    """Keys of index ``ix`` still in use (those of ``new`` included)."""
    n = 0
    mark_keys(KS, KO, loff, C, new, 2)
    for v in range(p0, p1):
        r = v_irank[v, ix]
        if r >= 0 and KO[loff + r] == 1:
            KO[loff + r] = 2
    for x in range(C):
        if KO[loff + x] != 0 and live_slot(KO, LI, LF, LM, LT, loff, x, R, mmin, alive):
            n += 1
    for x in range(C):
        if KO[loff + x] == 2:
            KO[loff + x] = 1
    return n


@jit
def respread(oKS, oKO, oLI, oLF, oLM, oLT, oloff, oC, KS, KO, LI, LF, LM, LT, loff, C, NI, NF, NM,
             NT, off, point, R, L, mmin, alive, newest, v_irank, ix, p0, p1, pkeys, new):
    """Move index ``ix``'s live keys from the old slot arrays (``oC`` slots) to new ones (``C``
    slots, zero, at least as many as the live keys and the keys of ``new`` not there yet),
    evenly spread, with the keys of ``new`` that were not there in their places (empty
    leaves), and build its tree: a merge of two sorted runs, O(C) once, where inserting many
    keys one run at a time re-spreads windows of slots again and again."""
    mark_pending(oKS, oKO, oloff, v_irank, ix, p0, p1, pkeys)
    mark_keys(oKS, oKO, oloff, oC, new, 2)
    m = 0
    for x in range(oC):
        if oKO[oloff + x] != 0 and live_slot(oKO, oLI, oLF, oLM, oLT, oloff, x, R, mmin, alive):
            m += 1
    nn = new.shape[0]
    for t in range(nn):
        if find(oKS, oKO, oloff, oC, new[t]) < 0:
            m += 1
    i = 0
    x = 0
    t = 0
    while True:
        while x < oC and (oKO[oloff + x] == 0 or (oKO[oloff + x] != 2 and oLT[oloff + x, 1] < oLT[oloff + x, 0])):
            x += 1
        while t < nn and find(oKS, oKO, oloff, oC, new[t]) >= 0:
            t += 1
        if x >= oC and t >= nn:
            break
        d = loff + ((2 * i + 1) * C) // (2 * m)
        if t < nn and (x >= oC or new[t] < oKS[oloff + x]):
            KS[d] = new[t]  # a new key: its leaf is empty (the new arrays are)
            t += 1
        else:
            src = oloff + x
            copy_block(LI, d * R, oLI, src * R, R)
            copy_block(LF, d * R, oLF, src * R, R)
            copy_block(LM, d * R, oLM, src * R, R)
            LT[d, 0] = oLT[src, 0]
            LT[d, 1] = oLT[src, 1]
            KS[d] = oKS[src]
            x += 1
        KO[d] = 1
        i += 1
    fill_free(KS, KO, loff, 0, C, C)
    if point == 0:
        rebuild_nodes(NI, NF, NM, NT, off, LI, LF, LM, loff, 1, C + 1, R, L, mmin, alive, newest)
    remap_pending(KS, KO, loff, C, v_irank, ix, p0, p1, pkeys)


# Reference: GRETA (PVLDB 2017) Section 7 "Vertex Trees" (range queries
# driven by edge predicates) and Section 8 (the O(n) predecessor scan this replaces);
# P. M. Fenwick, "A new data structure for cumulative frequency tables", 1994.
# A. Itai, A. G. Konheim, M. Rodeh, "A sparse table implementation of priority queues", 1981.
