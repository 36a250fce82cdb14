"""NPDR1: a negated SEQ is unrolled from its last event.

``!SEQ(E1, ..., Ei) = !Ei ∨ ∃SEQ(!SEQ(E1, ..., Ei-1), Ei, !Ei)`` (Eq. 5.48): either there is no
Ei in the scope, or before the *last* Ei (``Ei, !Ei``: an Ei with no Ei after it, which needs
cepagg's open gaps) there is no ``SEQ(E1, ..., Ei-1)``. Applied again to the inner NOT it gives
the full unroll of Eq. 5.47. The chapter's own normal form of its query Q1 (Fig. 5.5) drops the
``!Ei`` after each witness and is not equivalent to Q1 (on ``r0 w1 c2 s3 d4 c5 o6`` Q1 has no
match, Fig. 5.5 has ``{r0, w1, o6}``); this rule keeps it. Conditions:

* Ei is one event of a known type (Example 22: "the last" composite match is not unique);
* no NOT anywhere inside the SEQ (Example 21: ``!SEQ(S, !D, C)`` needs a D between *every* S
  and C, the unrolled form only before the last C), and Ei-1 is not a NOT/EXISTS item;
* the scope is shorter than the window (:class:`.base.Context`): the negated SEQ only counts
  matches shorter than the window, the unrolled checks see events of the whole scope;
* a condition of the SEQ names either Ei or the items before it, not both: Ei's conditions go
  onto both copies of Ei (the last Ei *that satisfies them*), the others onto the inner SEQ.

>>> example(rewrite, "SEQ(R r, W w, NOT SEQ(S s, D d, C c), O o)")
'NPDR1: SEQ(R r, W w, NOT C c2 ∨ EXISTS SEQ(NOT SEQ(S s, D d), C c, NOT C c3), O o)'
>>> out = example(rewrite, "SEQ(A a, NOT SEQ(B b, C c, c.x > 2, b.x = 1), D d)")
>>> print(out)  # doctest: +NORMALIZE_WHITESPACE
NPDR1: SEQ(A a, NOT (C c2, c2.x > 2)
  ∨ EXISTS SEQ(NOT SEQ(B b, b.x = 1), (C c, c.x > 2), NOT (C c3, c3.x > 2)), D d)
>>> example(rewrite, "SEQ(R r, NOT SEQ(S s, NOT D, C c), O o)")
'blocked by NPDR1: NOT inside NOT SEQ(...) means "for every ..." (no rule pushes it down)'
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
        return Blocked("NPDR1", 'NOT inside NOT SEQ(...) means "for every ..." (no rule pushes it down)')
    if ctx.is_wide(node):
        return too_wide("NPDR1", node)
    last, before = seq.items[-1], seq.items[-2]
    if not is_primitive(last):
        return Blocked("NPDR1", f"the last item of {pattern_text(seq)} is not one event")
    if is_boolean(before):
        return Blocked("NPDR1", f"the item before the last of {pattern_text(seq)} is a NOT/EXISTS item")
    var = primitive_var(last)
    last_quals, front_quals = [], []
    for q in seq.quals:
        if var not in expr_vars(q):
            front_quals.append(q)
        elif expr_vars(q) & {v for x in seq.items[:-1] for v in _vars(x)}:
            return Blocked("NPDR1", f"a condition of {pattern_text(seq)} relates its last event to "
                                    "earlier ones")
        else:
            last_quals.append(q)
    positive_last = with_quals(last, tuple(last_quals))
    event = last.body if isinstance(last, ast.Qualified) else last
    all_quals = (tuple(last.quals) if isinstance(last, ast.Qualified) else ()) + tuple(last_quals)

    def copy() -> ast.Pattern:
        """Ei under a NOT of its own, with a fresh variable: one name in two scopes is ambiguous."""
        if event.var is None and not all_quals:
            return event
        new = fresh_var(var, ctx.taken)
        quals = tuple(rename_expr(q, var, new) for q in all_quals)
        return with_quals(ast.EventPattern(event.type, new), quals)

    front = ast.Seq(seq.items[:-1], tuple(front_quals))
    unrolled = ast.OrPattern((ast.Not(copy()),
                              ast.Exists(ast.Seq((ast.Not(front), positive_last, ast.Not(copy()))))))
    return Applied("NPDR1", unrolled)


def _vars(p: ast.Pattern) -> set[str]:
    return {n.var or n.type for n in p.walk() if isinstance(n, ast.EventPattern)}
