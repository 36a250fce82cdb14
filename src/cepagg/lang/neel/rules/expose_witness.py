"""FR6, FR7, NPDR6, NPDR7: inside the body of an EXISTS or a NOT, an EXISTS item becomes a
positive item.

The chapter's FR6, ``SEQ(A, ∃SEQ(B, C), D) = SEQ(A, ∃B, ∃C, D)``, is true only if the flat
``∃B, ∃C`` are ordered witnesses that are not returned (its Fig. 5.5 writes ``Proj``); cepagg's
EXISTS is an independent check of its own gap (docs/semantics.md §4), under which that rule is
false (``a1 c2 b3 d4``), and a positive witness would change what is counted. Inside the body of
an EXISTS or a NOT, though, no binding is visible or counted, only whether one exists:
``∃SEQ(∃X, C)`` has a match iff ``SEQ(X, C)`` has one (FR6; FR7 for AND), and
``!SEQ(∃X, C)`` iff ``!SEQ(X, C)`` (NPDR6; NPDR7 for AND). Conditions:

* in a SEQ the EXISTS item must be alone in its gap (no NOT/EXISTS next to it): a neighbour's
  scope would shrink from the gap to the part before or after the new positive event
  (``!SEQ(A, ∃B, !N, C)`` holds on ``a1 n2 b3 c4``, ``!SEQ(A, B, !N, C)`` does not);
* in an AND its event types must differ from those of the other positive items: AND uses an
  event at most once, an EXISTS item may see an event an item binds.

>>> example(rewrite, "SEQ(A a, EXISTS SEQ(EXISTS SEQ(NOT P, B b, NOT B), C c, NOT C), D d)")
'FR6: SEQ(A a, EXISTS SEQ(SEQ(NOT P, B b, NOT B), C c, NOT C), D d)'
>>> example(rewrite, "SEQ(A a, NOT SEQ(B b, EXISTS E, C c), D d)")
'NPDR6: SEQ(A a, NOT SEQ(B b, E, C c), D d)'
>>> example(rewrite, "SEQ(A a, NOT SEQ(B b, EXISTS E, NOT F, C c), D d)")  # doctest: +ELLIPSIS
'blocked by NPDR6: EXISTS E has a NOT/EXISTS next to it in a SEQ under NOT; a positive item ...'
>>> example(rewrite, "SEQ(A a, EXISTS AND(B b, EXISTS C), D d)")
'FR7: SEQ(A a, EXISTS AND(B b, C), D d)'
"""

from __future__ import annotations

from ... import ast
from ..terms import event_types, is_boolean, positives
from ..text import pattern_text
from .base import Applied, Blocked, Context, Outcome, example  # noqa: F401


def rewrite(node: ast.Pattern, ctx: Context) -> Outcome:
    if not isinstance(node, (ast.Not, ast.Exists)) or not isinstance(node.body, (ast.Seq, ast.AndPattern)):
        return None
    body = node.body
    in_seq = isinstance(body, ast.Seq)
    rule = ("FR6" if in_seq else "FR7") if isinstance(node, ast.Exists) else ("NPDR6" if in_seq else "NPDR7")
    where = f"a {'SEQ' if in_seq else 'AND'} under {'EXISTS' if isinstance(node, ast.Exists) else 'NOT'}"
    blocked = None
    for i, item in enumerate(body.items):
        if not isinstance(item, ast.Exists):
            continue
        if in_seq:
            near = body.items[max(i - 1, 0):i] + body.items[i + 1:i + 2]
            if any(is_boolean(x) for x in near):
                blocked = blocked or Blocked(
                    rule, f"{pattern_text(item)} has a NOT/EXISTS next to it in {where}; "
                          "a positive item there would narrow the gap of that neighbour")
                continue
        else:
            mine = event_types(item.body)
            others = set().union(set(), *(event_types(x) for x in positives(body.items)))
            if None in mine or mine & others or None in others:
                blocked = blocked or Blocked(
                    rule, f"{pattern_text(item)} shares event types with the other items of {where}; "
                          "AND uses an event once, EXISTS may see any")
                continue
        items = body.items[:i] + (item.body,) + body.items[i + 1:]
        return Applied(rule, type(node)(type(body)(items, body.quals)))
    return blocked
