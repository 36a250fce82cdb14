"""What NPDR1 and NPDR2 share: taking the end event off a negated SEQ.

Both rules unroll ``!SEQ(E1, ..., Ei)`` around one end event (the last for NPDR1, the first
for NPDR2) and need the same things of it: the SEQ has no NOT inside, its scope is shorter than
the window, the end item is one event and its neighbour is not a NOT/EXISTS item, and each
condition of the SEQ names either the end event or the other items, not both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ... import ast
from ..terms import (
    declared_vars,
    expr_vars,
    fresh_var,
    is_boolean,
    is_primitive,
    primitive_var,
    rename_expr,
    with_quals,
)
from ..text import pattern_text
from .base import Blocked, Context, too_wide


@dataclass(frozen=True)
class EndSplit:
    """A negated SEQ cut at one end: ``end`` is the end event with the SEQ's conditions that
    name it alone, ``rest`` the SEQ of the other items with the other conditions."""

    end: ast.Pattern
    rest: ast.Seq
    _event: ast.EventPattern
    _var: str
    _quals: tuple[ast.Expr, ...]

    def copy(self, taken: set[str]) -> ast.Pattern:
        """The end event for a NOT of its own, with a fresh variable: one name in two scopes is
        ambiguous."""
        if self._event.var is None and not self._quals:
            return self._event
        new = fresh_var(self._var, taken)
        quals = tuple(rename_expr(q, self._var, new) for q in self._quals)
        return with_quals(ast.EventPattern(self._event.type, new), quals)


def split_end(node: ast.Pattern, ctx: Context, rule: str, first: bool) -> Union[EndSplit, Blocked, None]:
    """``node`` cut at its first (``first``) or last event, a refusal naming ``rule``, or None
    where ``node`` is not a negated SEQ of two items or more."""
    if not (isinstance(node, ast.Not) and isinstance(node.body, ast.Seq)):
        return None
    seq = node.body
    if len(seq.items) < 2:
        return None
    if any(isinstance(n, ast.Not) for item in seq.items for n in item.walk()):
        return Blocked(rule, 'NOT inside NOT SEQ(...) means "for every ..." (no rule pushes it down)')
    if ctx.is_wide(node):
        return too_wide(rule, node)
    if first:
        end, neighbour, others = seq.items[0], seq.items[1], seq.items[1:]
        end_word, neighbour_words, others_word = "first", "the second item", "later"
    else:
        end, neighbour, others = seq.items[-1], seq.items[-2], seq.items[:-1]
        end_word, neighbour_words, others_word = "last", "the item before the last", "earlier"
    if not is_primitive(end):
        return Blocked(rule, f"the {end_word} item of {pattern_text(seq)} is not one event")
    if is_boolean(neighbour):
        return Blocked(rule, f"{neighbour_words} of {pattern_text(seq)} is a NOT/EXISTS item")
    var = primitive_var(end)
    other_vars = {v for x in others for v in declared_vars(x)}
    end_quals, other_quals = [], []
    for q in seq.quals:
        if var not in expr_vars(q):
            other_quals.append(q)
        elif expr_vars(q) & other_vars:
            return Blocked(rule, f"a condition of {pattern_text(seq)} relates its {end_word} event to "
                                 f"{others_word} ones")
        else:
            end_quals.append(q)
    event = end.body if isinstance(end, ast.Qualified) else end
    own_quals = tuple(end.quals) if isinstance(end, ast.Qualified) else ()
    return EndSplit(with_quals(end, tuple(end_quals)), ast.Seq(others, tuple(other_quals)),
                    event, var, own_quals + tuple(end_quals))
