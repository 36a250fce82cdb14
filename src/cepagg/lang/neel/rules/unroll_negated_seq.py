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
from .base import Applied, Context, Outcome, example  # noqa: F401
from .negated_seq import EndSplit, split_end


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    split = split_end(node, ctx, "NPDR1", first=False)
    if not isinstance(split, EndSplit):
        return split
    unrolled = ast.OrPattern((ast.Not(split.copy(ctx.taken)),
                              ast.Exists(ast.Seq((ast.Not(split.rest), split.end,
                                                  ast.Not(split.copy(ctx.taken)))))))
    return Applied("NPDR1", unrolled)
