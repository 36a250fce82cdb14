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

from . import _jit

_PURE = globals().get("_PURE", _jit.PURE_DEFAULT)
jit = _jit.jit(_PURE)
inline = _jit.jit(_PURE, inline=True)
entry = _jit.jit(_PURE, entry=True)
_rec = _jit.sibling("_records", _PURE)
rec_add = _rec.add
rec_clear = _rec.clear


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


@entry
def build(NI, NF, NM, NT, off, n, R, LI, LF, LM, LT, loff, L, mmin, alive, newest):
    """Rebuild a tree from its leaves in O(n) per slot (after ranks changed); buckets
    ``alive..newest`` are live."""
    for i in range(1, n + 1):
        for s in range(R):
            rec_clear(NI, NF, NM, (off + i) * R + s, mmin)
        NT[off + i, 0] = alive
        NT[off + i, 1] = newest
    for i in range(1, n + 1):
        leaf = loff + i - 1
        clean(LI, LF, LM, LT, leaf, leaf * R, alive, R, mmin)
        for s in range(R):
            rec_add(NI, NF, NM, (off + i) * R + s, LI, LF, LM, leaf * R + s, L, mmin, 0)
        j = i + (i & (-i))
        if j <= n:
            for s in range(R):
                rec_add(NI, NF, NM, (off + j) * R + s, NI, NF, NM, (off + i) * R + s, L, mmin, 0)


# Reference: GRETA (seeds/003_27db06cb574fa58b.txt) Section 7 "Vertex Trees" (range queries
# driven by edge predicates) and Section 8 (the O(n) predecessor scan this replaces);
# P. M. Fenwick, "A new data structure for cumulative frequency tables", 1994.
