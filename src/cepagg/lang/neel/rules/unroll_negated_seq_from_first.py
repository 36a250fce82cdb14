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
from ..terms import expr_vars, fresh_var, is_boolean, is_primitive, primitive_var, rename_expr, with_quals
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example, too_wide  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not (isinstance(node, ast.Not) and isinstance(node.body, ast.Seq)):
        return None
    seq = node.body
    if len(seq.items) < 2:
        return None
    if any(isinstance(n, ast.Not) for item in seq.items for n in item.walk()):
        return Blocked("NPDR2", 'NOT inside NOT SEQ(...) means "for every ..." (no rule pushes it down)')
    if ctx.is_wide(node):
        return too_wide("NPDR2", node)
    first, after = seq.items[0], seq.items[1]
    if not is_primitive(first):
        return Blocked("NPDR2", f"the first item of {pattern_text(seq)} is not one event")
    if is_boolean(after):
        return Blocked("NPDR2", f"the second item of {pattern_text(seq)} is a NOT/EXISTS item")
    var = primitive_var(first)
    later = {n.var or n.type for x in seq.items[1:] for n in x.walk() if isinstance(n, ast.EventPattern)}
    first_quals, rest_quals = [], []
    for q in seq.quals:
        if var not in expr_vars(q):
            rest_quals.append(q)
        elif expr_vars(q) & later:
            return Blocked("NPDR2", f"a condition of {pattern_text(seq)} relates its first event to "
                                    "later ones")
        else:
            first_quals.append(q)
    positive_first = with_quals(first, tuple(first_quals))
    event = first.body if isinstance(first, ast.Qualified) else first
    all_quals = (tuple(first.quals) if isinstance(first, ast.Qualified) else ()) + tuple(first_quals)

    def copy() -> ast.Pattern:
        if event.var is None and not all_quals:
            return event
        new = fresh_var(var, ctx.taken)
        quals = tuple(rename_expr(q, var, new) for q in all_quals)
        return with_quals(ast.EventPattern(event.type, new), quals)

    rest = ast.Seq(seq.items[1:], tuple(rest_quals))
    none = ast.Not(copy())
    first_one = ast.Exists(ast.Seq((ast.Not(copy()), positive_first, ast.Not(rest))))
    return Applied("NPDR2", ast.OrPattern((none, first_one)))
