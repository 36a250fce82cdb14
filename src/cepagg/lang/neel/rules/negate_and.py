"""NPDR3, NPDR4: a negated AND is a disjunction of its negated items.

``!AND(B, C) = !B ∨ !C`` (NPDR3); with NOT/EXISTS items (NPDR4) a positive or EXISTS item
becomes a NOT and a NOT becomes an EXISTS: ``!AND(B, !C) = !B ∨ ∃C``. All items of the inner AND
have the scope of the NOT, the scope each new item gets. Conditions, because an AND uses an
event at most once: the positive and EXISTS items are of pairwise different event types
(``!AND(B b1, B b2)`` means "fewer than two B", not "no B"); the AND has no conditions (a
condition relating two items has no place in the disjunction) and no disjunction item; and the
scope is shorter than the window (an AND matches only events less than a window apart: on
``c0 a5 b9`` with ``WITHIN 6``, ``AND(A a, !AND(B, C))`` matches ``a5``, ``AND(A a, !B ∨ !C)``
does not -- see :class:`.base.Context`).

>>> example(rewrite, "SEQ(A a, NOT AND(B b, C c), D d)")
'NPDR3: SEQ(A a, NOT B b ∨ NOT C c, D d)'
>>> example(rewrite, "SEQ(A a, NOT AND(B b, NOT C, EXISTS E), D d)")
'NPDR4: SEQ(A a, NOT B b ∨ EXISTS C ∨ NOT E, D d)'
>>> example(rewrite, "AND(A a, NOT AND(B, C))", top_wide=True)  # doctest: +ELLIPSIS
'blocked by NPDR3: the scope of NOT AND(B, C) can be longer than the window ...'
>>> example(rewrite, "SEQ(A a, NOT AND(B b, B c), D d)")  # doctest: +ELLIPSIS
'blocked by NPDR3: AND(B b, B c) has two items of one event type: its negation is not one ...'
"""

from __future__ import annotations

from ... import ast
from ..terms import event_types, is_boolean
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example, too_wide  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not (isinstance(node, ast.Not) and isinstance(node.body, ast.AndPattern)):
        return None
    inner = node.body
    rule = "NPDR4" if any(is_boolean(x) for x in inner.items) else "NPDR3"
    if ctx.is_wide(node):
        return too_wide(rule, node)
    if inner.quals:
        return Blocked(rule, f"{pattern_text(inner)} has conditions relating its items")
    if any(isinstance(x, ast.OrPattern) for x in inner.items):
        return Blocked(rule, f"{pattern_text(inner)} has a disjunction item")
    seen: list[str | None] = []
    for x in inner.items:
        if not isinstance(x, ast.Not):
            seen += sorted(event_types(x), key=str)
    if None in seen or len(set(seen)) != len(seen):
        return Blocked(rule, f"{pattern_text(inner)} has two items of one event type: its negation is not "
                             "one per item")
    flipped = tuple(ast.Exists(x.body) if isinstance(x, ast.Not) else
                    ast.Not(x.body if isinstance(x, ast.Exists) else x) for x in inner.items)
    return Applied(rule, flipped[0] if len(flipped) == 1 else ast.OrPattern(flipped))
