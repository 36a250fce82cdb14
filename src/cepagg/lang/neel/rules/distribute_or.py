"""DR1, DR2: an OR item of a SEQ (DR1) or an AND (DR2) is distributed over it.

``SEQ(A, OR(B, C), D) = OR(SEQ(A, B, D), SEQ(A, C, D))``: a match of the left side is a match
of one alternative in that place, and OR is a set union of matches, so a match both disjuncts
produce is counted once, as on the left. The outer conditions go into every disjunct (one that
names a variable a disjunct does not bind holds vacuously there, as it did on the left).
Refused when the OR carries conditions of its own (the chapter gives each alternative its own;
cepagg lets an OR condition relate alternatives, which no disjunct could check).

>>> example(rewrite, "SEQ(A a, OR(B b, SEQ(C c, NOT E)), D d)")
'DR1: OR(SEQ(A a, B b, D d), SEQ(A a, SEQ(C c, NOT E), D d))'
>>> example(rewrite, "AND(A a, OR(B b, C c))")
'DR2: OR(AND(A a, B b), AND(A a, C c))'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_positive_or
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Seq, ast.AndPattern)):
        return None
    rule = "DR1" if isinstance(node, ast.Seq) else "DR2"
    for i, item in enumerate(node.items):
        if is_positive_or(item):
            if item.quals:
                return Blocked(rule, f"{pattern_text(item)} has conditions of its own")
            return Applied(rule, ast.OrPattern(tuple(
                type(node)(node.items[:i] + (alt,) + node.items[i + 1:], node.quals) for alt in item.items)))
    return None
