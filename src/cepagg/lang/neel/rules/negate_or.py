"""NPDR5: a negated OR, as an item, is one negated item per alternative.

``SEQ(A, !OR(B, C), D) = SEQ(A, !B, !C, D)``: no alternative has a match in the gap; consecutive
NOT items of a SEQ all constrain the same gap, the items of an AND its whole scope
(docs/semantics.md §4).

>>> example(rewrite, "SEQ(A a, NOT OR(B b, SEQ(C c, E e)), D d)")
'NPDR5: SEQ(A a, NOT B b, NOT SEQ(C c, E e), D d)'
>>> example(rewrite, "AND(A a, NOT OR(B, C))")
'NPDR5: AND(A a, NOT B, NOT C)'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_positive_or
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Seq, ast.AndPattern)):
        return None
    for i, item in enumerate(node.items):
        if isinstance(item, ast.Not) and is_positive_or(item.body):
            if item.body.quals:
                return Blocked("NPDR5", f"{pattern_text(item.body)} has conditions of its own")
            items = node.items[:i] + tuple(ast.Not(alt) for alt in item.body.items) + node.items[i + 1:]
            return Applied("NPDR5", type(node)(items, node.quals))
    return None
