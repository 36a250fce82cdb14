"""FR7 (Table 5.2): an EXISTS over an AND of events, as an item, is one EXISTS per event.

``SEQ(A, ∃AND(B, C), D) = SEQ(A, ∃B, ∃C, D)`` and likewise inside an AND: every item of the
inner AND has the inner AND's scope, which is the slot's scope, the same scope each new EXISTS
item gets. Conditions: the inner items are events of pairwise different types (``∃AND(B, B)``
needs two B events, ``∃B, ∃B`` one) without conditions relating two of them, and the inner
AND has no NOT (``∃AND(B, !C)`` is one check of B and C together); the item's scope is shorter
than the window (:class:`.base.Context`: the inner AND matches only events less than a window
apart).

>>> example(rewrite, "SEQ(A a, EXISTS AND(B b, (C c, c.x > 1)), D d)")
'FR7: SEQ(A a, EXISTS B b, EXISTS (C c, c.x > 1), D d)'
>>> example(rewrite, "SEQ(A a, EXISTS AND(B b, B c), D d)")
'blocked by FR7: AND(B b, B c) needs distinct events of one type; separate EXISTS items could share one'
"""

from __future__ import annotations

from ... import ast
from ..terms import event_types, expr_vars, is_primitive, primitive_var, with_quals
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example, too_wide  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Seq, ast.AndPattern)):
        return None
    for i, item in enumerate(node.items):
        if not (isinstance(item, ast.Exists) and isinstance(item.body, ast.AndPattern)):
            continue
        inner = item.body
        if not all(is_primitive(x) for x in inner.items):
            continue
        if ctx.is_wide(item):
            return too_wide("FR7", item)
        types = [t for x in inner.items for t in event_types(x)]
        if len(set(types)) != len(types):
            return Blocked("FR7", f"{pattern_text(inner)} needs distinct events of one type; "
                                  "separate EXISTS items could share one")
        by_var = {primitive_var(x): k for k, x in enumerate(inner.items)}
        parts = list(inner.items)
        for q in inner.quals:
            mine = expr_vars(q) & set(by_var)
            if len(mine) > 1:
                return Blocked("FR7", f"a condition of {pattern_text(inner)} relates two of its events")
            if mine:
                k = by_var[mine.pop()]
                parts[k] = with_quals(parts[k], (q,))
            else:
                return Blocked("FR7", f"a condition of {pattern_text(inner)} names none of its events")
        items = node.items[:i] + tuple(ast.Exists(p) for p in parts) + node.items[i + 1:]
        return Applied("FR7", type(node)(items, node.quals))
    return None
