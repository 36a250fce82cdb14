"""DR3, DR4: a disjunction of NOT/EXISTS items in a SEQ (DR3) or an AND (DR4) is distributed.

``SEQ(A, !B ∨ ∃C, D) = OR(SEQ(A, !B, D), SEQ(A, ∃C, D))``. The chapter states it for ``∃``
items and applies it to ``!`` items and mixtures (its Example 25); it holds for any boolean
items because each one's scope depends only on the positive neighbours, which are the same in
every disjunct, and a match satisfying several disjuncts is one match of the OR.

>>> example(rewrite, "SEQ(A a, NOT B ∨ EXISTS SEQ(C c, NOT E), D d)")
'DR3: OR(SEQ(A a, NOT B, D d), SEQ(A a, EXISTS SEQ(C c, NOT E), D d))'
>>> example(rewrite, "AND(A a, NOT B ∨ NOT C)")
'DR4: OR(AND(A a, NOT B), AND(A a, NOT C))'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_boolean
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Seq, ast.AndPattern)):
        return None
    rule = "DR3" if isinstance(node, ast.Seq) else "DR4"
    for i, item in enumerate(node.items):
        if isinstance(item, ast.OrPattern) and is_boolean(item):
            if item.quals:
                return Blocked(rule, f"{pattern_text(item)} has conditions of its own")
            return Applied(rule, ast.OrPattern(tuple(
                type(node)(node.items[:i] + (alt,) + node.items[i + 1:], node.quals) for alt in item.items)))
    return None
