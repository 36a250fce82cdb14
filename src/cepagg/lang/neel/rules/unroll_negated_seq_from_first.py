"""NPDR2: a negated SEQ is unrolled from its first event.

``!SEQ(E1, E2, ..., Ei) = !E1 ∨ ∃SEQ(!E1, E1, !SEQ(E2, ..., Ei))`` (Eq. 5.50): either there is
no E1 in the scope, or after the *first* E1 (``!E1, E1``) there is no ``SEQ(E2, ..., Ei)`` --
if any E1 starts such a sequence, the first one does. It is the mirror image of NPDR1 and gives
a different normal form with the same meaning; :func:`..normalize.normalize` uses NPDR1 only, so
that the normal form is unique, and this rule is kept for callers that prefer sharing prefixes.
Its conditions mirror NPDR1's (the chapter copies NPDR1's for it, which name the wrong end):
E1 is one event of a known type; no NOT anywhere inside the SEQ and E2 is not a NOT/EXISTS
item; the scope is shorter than the window; a condition names E1 or the items after it, not
both.

>>> example(rewrite, "SEQ(A a, NOT SEQ(B b, C c, E e), D d)")
'NPDR2: SEQ(A a, NOT B b2 ∨ EXISTS SEQ(NOT B b3, B b, NOT SEQ(C c, E e)), D d)'
>>> example(rewrite, "SEQ(A a, NOT SEQ(SEQ(B b, C c), E e), D d)")
'blocked by NPDR2: the first item of SEQ(SEQ(B b, C c), E e) is not one event'
"""

from __future__ import annotations

from ... import ast
from .base import Applied, Context, Outcome, example  # noqa: F401
from .negated_seq import EndSplit, split_end


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    split = split_end(node, ctx, "NPDR2", first=True)
    if not isinstance(split, EndSplit):
        return split
    none = ast.Not(split.copy(ctx.taken))
    first_one = ast.Exists(ast.Seq((ast.Not(split.copy(ctx.taken)), split.end, ast.Not(split.rest))))
    return Applied("NPDR2", ast.OrPattern((none, first_one)))
