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
from .base import Context, Outcome, example  # noqa: F401
from .splice import splice_nested


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    return splice_nested(node, ast.OrPattern, lambda item: "FR5" if is_boolean(item) == is_boolean(node) else None)
