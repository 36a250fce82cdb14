"""AND of events inside a SEQ as a union of flat sequences, ties included.

NEEL's rewriting leaves ``SEQ(AND(...))`` alone (its §5.2.7: AND also matches overlapping
intervals). With point events the only overlap is a tie: ``SEQ(A a, AND(B b, C c), D d)``
matches ``b`` and ``c`` in either order *or at the same time* (docs/semantics.md §3: an AND's
items may be simultaneous, every SEQ order is strict). Its matches are therefore, exactly and
without overlap, those of the interleavings ``SEQ(A a, B b, C c, D d)`` and
``SEQ(A a, C c, B b, D d)`` where each weak order of the AND's events is counted by one
interleaving only: the one listing tied events in the AND's written order. An interleaving
thus allows ``b.ts <= c.ts`` between consecutive items written in that order (a **tie pair**)
and ``<`` elsewhere.

A flat engine knows only ``<``. :func:`offsets` turns the tie pairs into a time transform
under which ``<`` means the right thing: every time ``t`` of an event of type ``T`` becomes
``K*t + off(T)`` with ``0 <= off(T) < K``. Events at different times keep their order; events
at the same time are ordered by ``off``. A tie pair needs ``off(B) < off(C)`` (a tie passes),
every other order ``off(X) >= off(Y)`` (a tie fails), and the types of a NOT/EXISTS item get
the offset band between their neighbours. Windows scale exactly: ``WITHIN w`` between a first
event of type F and a last of type L becomes ``K*(w-1) + off(L) - off(F) + 1`` and a SLIDE
window ``[k*s, k*s + w)`` becomes ``[K*k*s, K*(k*s + w))``.

>>> from cepagg.lang.neel.rules.base import pattern
>>> from cepagg.lang.neel.text import pattern_text
>>> [(pattern_text(p), sorted(t)) for p, t in expand(pattern("SEQ(A a, AND(B b, C c), D d)"))]
[('SEQ(A a, B b, C c, D d)', [('b', 'c')]), ('SEQ(A a, C c, B b, D d)', [])]
>>> offsets(pattern("SEQ(A a, B b, C c, D d)"), {("b", "c")})
{'A': 0, 'B': 0, 'C': 1, 'D': 0}
"""

from __future__ import annotations

import itertools

from ...lang import ast
from ...lang.neel.terms import is_boolean, is_primitive, primitive_var
from ...lang.neel.text import pattern_text

#: at most this many items in one AND (k! interleavings)
MAX_AND_ITEMS = 4


class CannotInterleave(Exception):
    """The AND cannot be evaluated as interleavings; ``str()`` says why."""


def has_and_in_seq(p: ast.Pattern) -> bool:
    """The top-level pattern is an AND, or a SEQ holding an AND item."""
    if isinstance(p, ast.AndPattern):
        return True
    return isinstance(p, ast.Seq) and any(isinstance(i, ast.AndPattern) for i in p.items)


def expand(p: ast.Pattern) -> list[tuple[ast.Pattern, frozenset[tuple[str, str]]]]:
    """The interleavings of the AND items of the top-level SEQ (or of a top-level AND), each
    with its tie pairs ``(x, y)``: variable ``x`` may be at the same time as the next item
    ``y``. Raises :class:`CannotInterleave`."""
    if isinstance(p, ast.AndPattern):
        p = ast.Seq((p,))
    assert isinstance(p, ast.Seq)
    choices: list[list[tuple[list[ast.Pattern], set]]] = []
    quals = list(p.quals)
    for item in p.items:
        if not isinstance(item, ast.AndPattern):
            choices.append([([item], set())])
            continue
        choices.append(_orders(item))
        quals += item.quals
    out = []
    for combo in itertools.product(*choices):
        items = [x for part, _ in combo for x in part]
        ties = frozenset(t for _, pairs in combo for t in pairs)
        out.append((ast.Seq(tuple(items), tuple(quals)), ties))
    return out


def _orders(node: ast.AndPattern) -> list[tuple[list[ast.Pattern], set]]:
    items = list(node.items)
    bad = [i for i in items if not is_primitive(i)]
    if bad:
        raise CannotInterleave(f"{pattern_text(bad[0])} in {pattern_text(node)} is not one typed event "
                               "(only an AND of events runs as interleavings)")
    if len(items) > MAX_AND_ITEMS:
        raise CannotInterleave(f"{pattern_text(node)} has more than {MAX_AND_ITEMS} items "
                               f"({len(items)}! interleavings)")
    types = [_type(i) for i in items]
    if len(set(types)) < len(types):
        raise CannotInterleave(f"{pattern_text(node)} holds one type twice: two of its events may be "
                               "simultaneous, which no order of types separates")
    out = []
    for perm in itertools.permutations(range(len(items))):
        ties = {(primitive_var(items[x]), primitive_var(items[y]))
                for x, y in zip(perm, perm[1:]) if x < y}
        out.append(([items[k] for k in perm], ties))
    return out


def _type(p: ast.Pattern) -> str:
    body = p.body if isinstance(p, ast.Qualified) else p
    assert isinstance(body, ast.EventPattern) and body.type is not None
    return body.type


def _positive_type(p: ast.Pattern) -> tuple[str, str | None]:
    """(variable, type) of a positive item of a flat SEQ (an event or a Kleene over one)."""
    if isinstance(p, ast.Kleene):
        p = p.body
    body = p.body if isinstance(p, ast.Qualified) else p
    if not isinstance(body, ast.EventPattern):
        raise CannotInterleave(f"{pattern_text(p)} is not an event")
    return body.var or body.type, body.type


def offsets(flat: ast.Pattern, ties: set | frozenset) -> dict[str, int]:
    """The time offset of every type of the flat SEQ ``flat`` under its tie pairs (see the
    module docstring); raises :class:`CannotInterleave` when no offsets exist."""
    items = list(flat.items) if isinstance(flat, ast.Seq) else [flat]
    # constraints off(x) >= off(y) + w, as edges (x, y, w)
    edges: list[tuple[str, str, int]] = []
    types: set[str] = set()
    prev: tuple[str, str] | None = None
    pending: list[set[str]] = []  # type sets of the boolean items since the previous positive
    for item in items:
        if is_boolean(item):
            names = {n.type for n in item.walk() if isinstance(n, ast.EventPattern)}
            if None in names:
                raise CannotInterleave(f"{pattern_text(item)} has an untyped variable")
            names = {t for t in names if t is not None}
            types |= names
            pending.append(names)
            continue
        var, typ = _positive_type(item)
        if typ is None:
            raise CannotInterleave(f"{pattern_text(item)} is an untyped variable")
        types.add(typ)
        if prev is not None:
            if (prev[0], var) in ties:
                edges.append((typ, prev[1], 1))
            else:
                edges.append((prev[1], typ, 0))
        for group in pending:
            first = next(iter(group), None)
            for t in group:
                edges += [(t, first, 0), (first, t, 0)]  # one band for the item's own order
                if prev is not None:
                    edges.append((prev[1], t, 0))
                edges.append((t, typ, 0))
        pending = []
        prev = (var, typ)
    for group in pending:  # trailing items
        first = next(iter(group), None)
        for t in group:
            edges += [(t, first, 0), (first, t, 0)]
            if prev is not None:
                edges.append((prev[1], t, 0))
    off = {t: 0 for t in types}
    for _ in range(len(types) + 1):
        changed = False
        for x, y, w in edges:
            if off[x] < off[y] + w:
                off[x] = off[y] + w
                changed = True
        if not changed:
            return dict(sorted(off.items()))
    raise CannotInterleave(f"{pattern_text(flat)}: its ties and strict orders between the same types "
                           "contradict each other")
