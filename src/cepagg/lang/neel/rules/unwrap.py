"""UNWRAP: an operator with a single positive item is that item.

``SEQ(X) = AND(X) = OR(X) = X``; its conditions go onto X. Not a rule of the chapter: the
others leave such operators behind (NPDR1 turns ``!SEQ(B, C)`` into ``... !SEQ(B) ...``), and
NPDR1 and the normal form need them gone.

>>> example(rewrite, "SEQ(A a, NOT SEQ(B b), C c)")
'UNWRAP: SEQ(A a, NOT B b, C c)'
>>> example(rewrite, "OR(SEQ(A a, B b, a.x < b.x))")
'UNWRAP: SEQ(A a, B b, a.x < b.x)'
>>> example(rewrite, "SEQ(A a+, NOT B)")
'no match'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_boolean, with_quals
from .base import Applied, Context, Outcome, example  # noqa: F401  (example: docstring)


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Seq, ast.AndPattern, ast.OrPattern)) or len(node.items) != 1:
        return None
    item = node.items[0]
    if is_boolean(item) or isinstance(item, (ast.Kleene, ast.Windowed, ast.Unsupported)) and node.quals:
        return None
    return Applied("UNWRAP", with_quals(item, node.quals))
