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
buckets are cleared slot by slot in every node (:func:`clear_slot`), and predecessors are
only removed for negation, on paths the planner gives to the scan instead.

Layout: a tree of ``n`` ranks occupies rows ``(off + i) * R + slot`` for ``i`` in ``1..n``
of the shared record arrays; its leaves (point values per rank, for ``=`` and to rebuild the
tree when ranks change between batches) occupy ``(loff + i) * R + slot`` for ``i`` in
``0..n-1`` of the leaf arrays. Predicates ``>``/``>=`` use reversed ranks, so every query is
a prefix.
"""

from __future__ import annotations

from . import _jit

_PURE = globals().get("_PURE", _jit.PURE_DEFAULT)
jit = _jit.jit(_PURE)
entry = _jit.jit(_PURE, entry=True)
_rec = _jit.sibling("_records", _PURE)
rec_add = _rec.add
rec_clear = _rec.clear


@jit
def insert(NI, NF, NM, off, n, R, rank, sI, sF, sM, srow0, slots, nslots, L, mmin, hard):
    """Add the record rows ``srow0 + k`` (bucket ``slots[k]``) at ``rank`` (0-based)."""
    over = False
    i = rank + 1
    while i <= n:
        base = (off + i) * R
        for k in range(nslots):
            if rec_add(NI, NF, NM, base + slots[k], sI, sF, sM, srow0 + k, L, mmin, hard):
                over = True
        i += i & (-i)
    return over


@jit
def prefix(NI, NF, NM, off, R, length, dI, dF, dM, drow0, slots, nslots, L, mmin, hard):
    """Add the sum (min/max) over ranks ``0 .. length-1`` into rows ``drow0 + k``."""
    over = False
    i = length
    while i > 0:
        base = (off + i) * R
        for k in range(nslots):
            if rec_add(dI, dF, dM, drow0 + k, NI, NF, NM, base + slots[k], L, mmin, hard):
                over = True
        i -= i & (-i)
    return over


@jit
def clear_slot(NI, NF, NM, off, n, R, slot, mmin):
    """Forget bucket ``slot`` in every node (the bucket expired; the slot will be reused)."""
    for i in range(1, n + 1):
        rec_clear(NI, NF, NM, (off + i) * R + slot, mmin)


@entry
def build(NI, NF, NM, off, n, R, LI, LF, LM, loff, L, mmin):
    """Rebuild the tree from its leaves in O(n) per slot (after ranks changed)."""
    for i in range(1, n + 1):
        for s in range(R):
            rec_clear(NI, NF, NM, (off + i) * R + s, mmin)
    for i in range(1, n + 1):
        for s in range(R):
            rec_add(NI, NF, NM, (off + i) * R + s, LI, LF, LM, (loff + i - 1) * R + s, L, mmin, 0)
        j = i + (i & (-i))
        if j <= n:
            for s in range(R):
                rec_add(NI, NF, NM, (off + j) * R + s, NI, NF, NM, (off + i) * R + s, L, mmin, 0)


# Reference: GRETA (seeds/003_27db06cb574fa58b.txt) Section 7 "Vertex Trees" (range queries
# driven by edge predicates) and Section 8 (the O(n) predecessor scan this replaces);
# P. M. Fenwick, "A new data structure for cumulative frequency tables", 1994.
