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
tree when ranks change between batches) occupy ``(loff + l) * R + slot`` for the leaf ``l`` in
``0..n-1`` of the leaf arrays, where rank ``i`` holds leaf ``l = LT[loff + i, LEAF]``: the leaves
are a permutation of the ranks, so a key that changes rank takes its leaf by number, and no
record moves. Predicates ``>``/``>=`` use reversed ranks, so every query is
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
rec_clear_rows = _rec.clear_rows
rec_copy_rows = _rec.copy_rows
rec_add_rows = _rec.add_rows


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
    # the slots of buckets lo..end: at most two contiguous blocks of the ring (all of it when
    # R or more buckets expired since the node was last touched)
    n = end - lo + 1
    if n >= R:
        rec_clear_rows(I, F, M, base, R, mmin)
    elif n > 0:
        s0 = lo & (R - 1)
        n1 = R - s0
        if n1 > n:
            n1 = n
        rec_clear_rows(I, F, M, base + s0, n1, mmin)
        if n > n1:
            rec_clear_rows(I, F, M, base, n - n1, mmin)
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


# ----------------------------------------------------------------------------------------------
# key slots: ranks that never shift (a packed-memory array under the Fenwick tree)
#
# Keys arrive with every batch, and the ranks of a plain sorted list shift whenever a key is
# inserted in the middle: the tree would have to be rebuilt (O(n) records) per batch. Instead
# each index owns ``C`` *slots* (a power of two, at most ~2/3 full); a key keeps its
# slot, a new key takes a free slot between its neighbours, and when there is none the smallest
# aligned window of slots ``[a, a + 2**w)`` with room is re-spread (Itai, Konheim and Rodeh's
# sparse table, "packed memory array"), taking in every later key of the batch that falls in
# it (a batch's keys cluster where a price walks); there a key keeps its slot unless a new key
# before it or the window's end pushes it (:func:`places`). A key that moves takes its leaf's
# number along (column ``LEAF`` of the tags ``LT``, read by slot), not its records: every slot,
# free or not, holds a leaf, a free slot an empty one, so a new key or a dropped one changes no
# sum. Fenwick ranges are dyadic, so a node either covers the whole window (its sum does not
# change when keys move inside it) or lies inside it: those over a slot whose leaf changed (a
# key with records moved in or out) are rebuilt from their leaf and children. Keys are int64
# order codes (:meth:`.state.PosState.key_codes`);
# ``KS`` holds every occupied slot's key and, in a free slot, the key of the nearest occupied
# slot before it (``EMPTY_KEY`` before the first), so ``KS`` is sorted and a prefix query is a
# binary search. ``KO`` marks occupied slots. A key whose leaf holds no live bucket and that no
# pending vertex uses is dropped when its window is re-spread.
#
# A batch that brings many keys for the index's size (:data:`.state.BULK`) is merged in at once
# instead (:func:`respread`): one pass over the slots and one rebuild of the tree, where
# inserting run after run would re-spread overlapping windows of slots again and again.

EMPTY_KEY = -(1 << 63)
#: column of the leaf tags ``LT`` (rows by slot) holding the slot's leaf, counted from the
#: index's first (columns 0 and 1, rows by leaf: the buckets the leaf may hold)
LEAF = 2


@inline
def leaf_of(LT, loff, slot):
    """The leaf (row of the leaf arrays' tags; its records from ``leaf * R``) of ``slot``."""
    return loff + LT[loff + slot, LEAF]


@inline
def dead_leaf(LT, leaf):
    """The leaf holds no bucket (after :func:`clean`)."""
    return LT[leaf, 1] < LT[leaf, 0]


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


@inline
def move_key(KS, KO, LT, src, dst):
    """The key in slot ``src`` to the free slot ``dst`` (rows of ``KS``, ``KO``, ``LT``): the
    two slots swap leaves, the free slot's empty one staying free."""
    leaf = LT[src, LEAF]
    LT[src, LEAF] = LT[dst, LEAF]
    LT[dst, LEAF] = leaf
    KS[dst] = KS[src]
    KO[dst] = KO[src]
    KO[src] = 0


@inline
def place_new(KS, KO, d, k):
    """New key ``k`` in the free slot ``d``: its leaf is empty (free slots' are)."""
    KS[d] = k
    KO[d] = 2


@jit
def live_slot(KO, LI, LF, LM, LT, loff, slot, R, mmin, alive):
    """Is the key in ``slot`` still needed (after forgetting its expired buckets)?"""
    leaf = leaf_of(LT, loff, slot)
    clean(LI, LF, LM, LT, leaf, leaf * R, alive, R, mmin)
    return KO[loff + slot] == 2 or not dead_leaf(LT, leaf)


@jit
def rebuild_nodes(NI, NF, NM, NT, off, LI, LF, LM, LT, loff, j0, j1, R, L, mmin, alive, newest):
    """Fenwick nodes ``j0 .. j1-1`` (1-based) from the leaves; every node whose range lies in
    ``[j0 - 1 .. j1 - 1)`` is recomputed, the others are left alone."""
    for j in range(j0, j1):  # node j starts from the leaf of slot j - 1
        rec_copy_rows(NI, NF, NM, (off + j) * R, LI, LF, LM, leaf_of(LT, loff, j - 1) * R, R)
        NT[off + j, 0] = alive
        NT[off + j, 1] = newest
    for j in range(j0, j1):
        par = j + (j & (-j))
        if par < j1:
            rec_add_rows(NI, NF, NM, (off + par) * R, NI, NF, NM, (off + j) * R, R, mmin)


@jit
def rebuild_changed(NI, NF, NM, NT, off, LI, LF, LM, LT, loff, j0, j1, clo, chi, R, mmin, alive,
                    newest):
    """:func:`rebuild_nodes` for the nodes ``j0 .. j1-1`` whose range holds a slot of
    ``clo .. chi`` (the slots whose leaf changed), each the sum of its leaf and its children
    (cleaned first: a child left alone may still hold buckets that expired)."""
    for j in range(max(j0, clo + 1), j1):
        low = j & (-j)
        if j - low > chi:  # node j holds slots j - low .. j - 1
            continue
        node = (off + j) * R
        rec_copy_rows(NI, NF, NM, node, LI, LF, LM, leaf_of(LT, loff, j - 1) * R, R)
        c = 1
        while c < low:
            child = off + j - c
            clean(NI, NF, NM, NT, child, child * R, alive, R, mmin)
            rec_add_rows(NI, NF, NM, node, NI, NF, NM, child * R, R, mmin)
            c <<= 1
        NT[off + j, 0] = alive
        NT[off + j, 1] = newest


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


@inline
def places(KS, KO, LT, loff, a, s, m, new, t, u, D):
    """The slot ``D[i]`` of the ``i``-th of the ``m`` keys of window ``[a, a + s)`` once the
    new keys of ``new[t:u]`` are in (dead keys dropped): a key stays where it is unless a new
    key before it or the end of the window pushes it, and new keys take the free slots before
    their next key evenly, or the first ones. A key with records that moves changes the Fenwick
    nodes over its two slots; an even spread of the whole window moved nearly all of them."""
    pos = a  # the first slot the next key may take
    i = 0
    jn = t
    x = a
    while True:
        while x < a + s and (KO[loff + x] == 0 or (KO[loff + x] != 2 and dead_leaf(LT, leaf_of(LT, loff, x)))):
            x += 1
        last = x >= a + s
        # the new keys before the key in slot x (or after the window's last key)
        r = 0
        j = jn
        while j < u and (last or new[j] <= KS[loff + x]):
            if last or new[j] < KS[loff + x]:
                r += 1
            j += 1
        jn = j
        g = (a + s if last else x) - pos
        p0 = pos
        for q in range(r):
            cand = p0 + ((2 * q + 1) * g) // (2 * r) if g >= r else pos
            hi = a + s - (m - i)
            d = cand if cand < hi else hi
            d = d if d > pos else pos
            D[i] = d
            pos = d + 1
            i += 1
        if last:
            break
        hi = a + s - (m - i)
        if pos <= x <= hi:
            d = x
        elif x < pos:
            d = pos
        else:
            d = hi
        D[i] = d
        pos = d + 1
        i += 1
        x += 1


@inline
def occupied_from(KO, loff, C, x):
    """The first occupied slot from ``x`` on (``C`` if none): the keys of a batch that fall in
    a window of slots are those below this slot's key."""
    while x < C and KO[loff + x] == 0:
        x += 1
    return x


@jit
def window_with_room(KS, KO, LI, LF, LM, LT, loff, C, R, mmin, alive, logc, q, r, new, t):
    """The window of slots that takes the run of ``r`` new keys ``new[t:]`` after slot ``q``,
    as ``(first slot, size, room, live keys)``; first slot -1 where no window has room."""
    # the smallest aligned window of slots around q with room for the run and for every
    # later key of ``new`` that falls inside it (a batch's keys cluster where a price
    # walks: re-spreading one window once for all of them replaces re-spreading
    # overlapping windows run after run); failing that, the smallest with room for the
    # run, which takes the later keys as far as it has room
    nn = new.shape[0]
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
            nx = occupied_from(KO, loff, C, a + s)  # the later keys that fall in it: below the first key after it
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
    return a, s, cap, n


@jit
def keys_for_window(KS, KO, loff, C, a, s, room, new, t):
    """How far the keys of ``new[t:]`` that belong in the window ``[a, a + s)`` go, as
    ``(keys not yet present, end in new)``, at most ``room`` new ones."""
    # the keys of new[t:] that belong in the window (below the first key after it), as
    # many as it has room for; keys already present are skipped
    nn = new.shape[0]
    nxt = occupied_from(KO, loff, C, a + s)
    take = 0
    u = t
    while u < nn and (nxt >= C or new[u] < KS[loff + nxt]):
        if find(KS, KO, loff, C, new[u]) < 0:
            if take == room:
                break
            take += 1
        u += 1
    return take, u


@jit
def respread_window(KS, KO, LT, LI, LF, LM, NI, NF, NM, NT, loff, off, C, point, a, s, m, new, t, u, D, R,
                    mmin, alive, newest):
    """Re-spread the window ``[a, a + s)`` over its ``m`` keys, old and the new ``new[t:u]``."""
    # every key of the window, old and new, goes straight to its place (the i-th of m at
    # D[i]: :func:`places`), each moved once: first the keys whose place is to their
    # left, from the left, then the others and the new keys, from the right (a target
    # never holds a key not yet moved); dead keys are dropped
    places(KS, KO, LT, loff, a, s, m, new, t, u, D)
    i = 0
    jn = t
    clo = a + s  # the slots whose leaf changes (a key with records moved in or out)
    chi = a - 1
    for x in range(a, a + s):
        if KO[loff + x] == 0:
            continue
        leaf = leaf_of(LT, loff, x)
        if KO[loff + x] != 2 and dead_leaf(LT, leaf):
            KO[loff + x] = 0  # (its leaf was cleaned: empty, for the slot's next key)
            LT[leaf, 0] = 0
            LT[leaf, 1] = -1
            continue
        k = KS[loff + x]
        while jn < u and new[jn] <= k:
            if new[jn] < k:  # (an equal one is present: it is this key)
                i += 1
            jn += 1
        dest = D[i]
        if dest < x:
            move_key(KS, KO, LT, loff + x, loff + dest)
            if not dead_leaf(LT, leaf):
                clo = min(clo, dest)
                chi = max(chi, x)
        i += 1
    i = m - 1
    jn = u - 1
    for x in range(a + s - 1, a - 1, -1):
        if KO[loff + x] == 0:
            continue
        k = KS[loff + x]
        while jn >= t and new[jn] >= k:
            if new[jn] > k:
                place_new(KS, KO, loff + D[i], new[jn])
                i -= 1
            jn -= 1
        dest = D[i]
        if dest > x:
            if not dead_leaf(LT, leaf_of(LT, loff, x)):
                clo = min(clo, x)
                chi = max(chi, dest)
            move_key(KS, KO, LT, loff + x, loff + dest)
        i -= 1
    while jn >= t:
        place_new(KS, KO, loff + D[i], new[jn])
        i -= 1
        jn -= 1
    fill_free(KS, KO, loff, a, a + s, C)
    if point == 0 and clo <= chi:
        rebuild_changed(NI, NF, NM, NT, off, LI, LF, LM, LT, loff, a + 1, a + s, clo, chi, R, mmin,
                        alive, newest)


@jit
def insert_keys(KS, KO, LI, LF, LM, LT, NI, NF, NM, NT, loff, off, C, point, R, L, mmin, alive,
                newest, new, t0, v_irank, ix, p0, p1, pkeys, D):
    """Give each of the sorted keys ``new[t0:]`` a slot (keys present keep theirs); every key
    of ``new`` is in use (the batch's). New keys that fall between the same two neighbours
    are placed together: spread over the free slots between them when they fit, else over the
    smallest window with room for them and for the later keys of ``new`` that fall in it (or,
    if no window has, the smallest with room for them, with as many later keys as fit).
    Returns how far it got in ``new``: short of the end
    when the index is too full (grow it, call again from there). ``D``: scratch, ``C`` places."""
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
        a, s, cap, n = window_with_room(KS, KO, LI, LF, LM, LT, loff, C, R, mmin, alive, logc, q, r, new, t)
        if a < 0:
            placed = t
            break
        take, u = keys_for_window(KS, KO, loff, C, a, s, cap - n, new, t)
        respread_window(KS, KO, LT, LI, LF, LM, NI, NF, NM, NT, loff, off, C, point, a, s, n + take, new, t, u,
                        D, R, mmin, alive, newest)
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
        while x < oC and (oKO[oloff + x] == 0 or (oKO[oloff + x] != 2 and dead_leaf(oLT, leaf_of(oLT, oloff, x)))):
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
            src = leaf_of(oLT, oloff, x)
            leaf = leaf_of(LT, loff, d - loff)
            rec_copy_rows(LI, LF, LM, leaf * R, oLI, oLF, oLM, src * R, R)
            LT[leaf, 0] = oLT[src, 0]
            LT[leaf, 1] = oLT[src, 1]
            KS[d] = oKS[oloff + x]
            x += 1
        KO[d] = 1
        i += 1
    fill_free(KS, KO, loff, 0, C, C)
    if point == 0:
        rebuild_nodes(NI, NF, NM, NT, off, LI, LF, LM, LT, loff, 1, C + 1, R, L, mmin, alive, newest)
    remap_pending(KS, KO, loff, C, v_irank, ix, p0, p1, pkeys)


# Reference: GRETA (PVLDB 2017) Section 7 "Vertex Trees" (range queries
# driven by edge predicates) and Section 8 (the O(n) predecessor scan this replaces);
# P. M. Fenwick, "A new data structure for cumulative frequency tables", 1994.
# A. Itai, A. G. Konheim, M. Rodeh, "A sparse table implementation of priority queues", 1981.
