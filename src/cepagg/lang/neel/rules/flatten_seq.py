"""FR1, FR2: a SEQ inside a SEQ is spliced into it.

``SEQ(A, SEQ(B, C), D) = SEQ(A, B, C, D)`` (FR1); with negation or EXISTS inside the inner SEQ
(FR2) too, because cepagg evaluates a nested sub-pattern inside the gap between its neighbours
(docs/semantics.md §3-4): the inner SEQ's leading or trailing negation is bounded by the outer
neighbours before and after as well. The inner SEQ's conditions join the outer's.

>>> example(rewrite, "SEQ(A a, SEQ(B b, C c, NOT E), D d)")
'FR2: SEQ(A a, B b, C c, NOT E, D d)'
>>> example(rewrite, "SEQ(A a, SEQ(B b, C c, b.x < c.x), D d)")
'FR1: SEQ(A a, B b, C c, D d, b.x < c.x)'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_boolean
from .base import Context, Outcome, example  # noqa: F401
from .splice import splice_nested


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    return splice_nested(node, ast.Seq, lambda item: "FR2" if any(is_boolean(x) for x in item.items) else "FR1")
