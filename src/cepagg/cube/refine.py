"""Refinement between cube queries: E-Cube's Definitions 3 (concept) and 4 (pattern).

``coarser(k, j, h)`` says whether query pattern ``k`` is coarser than ``j`` -- every match of ``j``
gives a match of ``k`` -- and how:

* **concept** (Definition 3): same length, aligned by position; a positive position of ``k`` has
  the same type as ``j``'s or a concept above it; a *negative* position refines the other way
  (``k`` negates the same type or one below ``j``'s: negating less excludes less); some position
  differs.
* **pattern** (Definition 4): ``k``'s items are an order-preserving subsequence of ``j``'s, with
  equal types and signs; ``j`` has at least one more item (positive or negative).
* **both**: ``k`` embeds into a longer ``j`` with some aligned position differing as in the
  concept case (E-Cube's mixed edges, e.g. SEQ(TX, OK) above SEQ(G, A, T) when G, A lie under TX
  and T under OK).

>>> from cepagg.lang import Hierarchy
>>> from cepagg.cube.shape import Item, Shape
>>> h = Hierarchy.from_mapping({"TX": ["D", "A", "G"], "D": ["DBusStation", "DHospital"], "OK": ["T"]})
>>> s = lambda *ts: Shape(tuple(Item(t.lstrip("!"), t.startswith("!"), t.lstrip("!")) for t in ts))
>>> coarser(s("TX", "OK"), s("D", "T"), h), coarser(s("G", "A", "T"), s("G", "!D", "A", "T"), h)
('concept', 'pattern')
>>> coarser(s("G", "!DBusStation", "A", "T"), s("G", "!D", "A", "T"), h)  # negation reversed
'concept'
>>> coarser(s("TX", "OK"), s("G", "A", "T"), h), coarser(s("TX", "OK"), s("OK", "TX"), h)
('both', None)
>>> coarser(s("D", "T"), s("D", "T"), h) is None  # equal: no refinement
True
"""

from __future__ import annotations

from .shape import Item, Shape


def _covers(a: Item, b: Item, h) -> bool | None:
    """Does ``a`` (of the coarser query) cover ``b`` at one aligned position? True: equal; False:
    covers strictly; None: does not cover."""
    if a.negated != b.negated:
        return None
    if a.type == b.type:
        return True
    if not a.negated and h.finer(b.type, a.type):
        return False
    if a.negated and h.finer(a.type, b.type):
        return False
    return None


def _embeds(k: tuple[Item, ...], j: tuple[Item, ...], h, exact: bool) -> tuple[bool, bool]:
    """Is there an order-preserving alignment of every item of ``k`` onto items of ``j`` that
    covers them? Returns (found with all equal, found with some strict) -- searched over every
    alignment (queries are short)."""
    found_equal = found_strict = False

    def go(i: int, at: int, strict: bool) -> None:
        nonlocal found_equal, found_strict
        if i == len(k):
            if strict:
                found_strict = True
            else:
                found_equal = True
            return
        for p in range(at, len(j) - (len(k) - i) + 1):
            c = _covers(k[i], j[p], h)
            if c is None or (exact and c is False):
                continue
            go(i + 1, p + 1, strict or c is False)

    go(0, 0, False)
    return found_equal, found_strict


def coarser(k: Shape, j: Shape, h) -> str | None:
    """"concept", "pattern", "both" when ``k`` is coarser than ``j`` (module docstring), else None."""
    if len(k) > len(j):
        return None
    if len(k) == len(j):
        pairs = [_covers(a, b, h) for a, b in zip(k.items, j.items)]
        if all(c is not None for c in pairs) and any(c is False for c in pairs):
            return "concept"
        return None
    equal, strict = _embeds(k.items, j.items, h, exact=False)
    if equal:
        return "pattern"
    if strict:
        return "both"
    return None
