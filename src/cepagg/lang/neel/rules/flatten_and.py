"""FR3, FR4: an AND inside an AND is spliced into it.

Every item of an AND has the AND's scope (docs/semantics.md §4), the inner AND's scope is the
outer's, so the inner negations (FR4) mean the same after the splice; no event is used twice in
either form.

>>> example(rewrite, "AND(AND(A a, B b), C c)")
'FR3: AND(A a, B b, C c)'
>>> example(rewrite, "AND(AND(A a, NOT E), C c)")
'FR4: AND(A a, NOT E, C c)'
"""

from __future__ import annotations

from ... import ast
from ..terms import is_boolean
from .base import Context, Outcome, example  # noqa: F401
from .splice import splice_nested


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    return splice_nested(node, ast.AndPattern, lambda item: "FR4" if any(is_boolean(x) for x in item.items) else "FR3")
