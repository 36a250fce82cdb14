"""FR5: an OR inside an OR is spliced into it (set union is associative).

The same holds for a disjunction of NOT/EXISTS items inside another. The inner OR's conditions
join the outer's: a condition on variables an alternative does not bind holds vacuously
(docs/semantics.md §5), so they still constrain only the inner alternatives.

>>> example(rewrite, "OR(OR(A a, B b), C c)")
'FR5: OR(A a, B b, C c)'
>>> example(rewrite, "SEQ(A a, NOT B ∨ (NOT C ∨ EXISTS E), D d)")
'FR5: SEQ(A a, NOT B ∨ NOT C ∨ EXISTS E, D d)'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_boolean
from .base import Applied, Context, Outcome, example  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, ast.OrPattern):
        return None
    for i, item in enumerate(node.items):
        if isinstance(item, ast.OrPattern) and is_boolean(item) == is_boolean(node):
            items = node.items[:i] + item.items + node.items[i + 1:]
            return Applied("FR5", ast.OrPattern(items, node.quals + item.quals))
    return None
