"""DR5, DR6: an EXISTS over an OR, in a SEQ (DR5) or an AND (DR6), is distributed.

``SEQ(A, ∃OR(B, C), D) = OR(SEQ(A, ∃B, D), SEQ(A, ∃C, D))``: some alternative has a match in
the gap iff the OR has one. (The chapter's Eq. 5.45 drops the ∃ of its last disjunct: a typo.)

>>> example(rewrite, "SEQ(A a, EXISTS OR(B b, SEQ(C c, E e)), D d)")
'DR5: OR(SEQ(A a, EXISTS B b, D d), SEQ(A a, EXISTS SEQ(C c, E e), D d))'
>>> example(rewrite, "AND(A a, EXISTS OR(B, C))")
'DR6: OR(AND(A a, EXISTS B), AND(A a, EXISTS C))'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_positive_or
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Seq, ast.AndPattern)):
        return None
    rule = "DR5" if isinstance(node, ast.Seq) else "DR6"
    for i, item in enumerate(node.items):
        if isinstance(item, ast.Exists) and is_positive_or(item.body):
            if item.body.quals:
                return Blocked(rule, f"{pattern_text(item.body)} has conditions of its own")
            return Applied(rule, ast.OrPattern(tuple(
                type(node)(node.items[:i] + (ast.Exists(alt),) + node.items[i + 1:], node.quals)
                for alt in item.body.items)))
    return None
