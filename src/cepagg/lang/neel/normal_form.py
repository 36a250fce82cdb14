"""The recogniser of NEEL's normal form, as cepagg defines it.

The chapter's Def. 20 (DNF): an OR of conjuncts, each one SEQ or AND "formed by primitive event
types". Derived from the rules (the chapter's Fig. 5.5 is not a correct normal form), a pattern
is in normal form when it is a conjunct or an OR of conjuncts, where a **conjunct** is a positive
item alone, or a SEQ or AND whose items are

* positive items: an event (``Type v``, an untyped variable, ``(Type v, conditions)``), or a
  Kleene over one;
* ``NOT x`` with x such an item (negation pushed down to events; ``NOT B+`` is ``NOT B``);
* ``EXISTS x`` with x such an item or a flat SEQ or AND of them, ``NOT`` item and ``EXISTS``
  item items (what NPDR1 leaves: ``∃SEQ(!B, C, !C)``; cepagg has no projected witnesses
  that would flatten it further, see :mod:`.rules.expose_witness`).

>>> from .rules.base import pattern
>>> is_normal_form(pattern("OR(SEQ(A, NOT C, D), SEQ(A, EXISTS SEQ(NOT B, C, NOT C), D))"))
True
>>> why_not_normal(pattern("SEQ(A, NOT SEQ(B, C), D)"))
'NOT SEQ(B, C) is a negation of more than one event'
"""

from __future__ import annotations

from .. import ast
from .terms import is_boolean
from .text import pattern_text


def _event(p: ast.Pattern) -> bool:
    """One event, typed or an untyped variable, with or without conditions."""
    if isinstance(p, ast.Qualified):
        p = p.body
    return isinstance(p, ast.EventPattern)


def _positive_item(p: ast.Pattern) -> bool:
    return _event(p) or isinstance(p, ast.Kleene) and _event(p.body)


def _flat_guard_body(p: ast.Pattern) -> bool:
    if _positive_item(p):
        return True
    if not isinstance(p, (ast.Seq, ast.AndPattern)) or not any(_positive_item(x) for x in p.items):
        return False
    return all(_positive_item(x) or isinstance(x, (ast.Not, ast.Exists)) and _positive_item(x.body)
               for x in p.items)


def _conjunct(p: ast.Pattern) -> str | None:
    if _positive_item(p):
        return None
    if not isinstance(p, (ast.Seq, ast.AndPattern)):
        return f"{pattern_text(p)} is not a SEQ or AND of events"
    inside = "a SEQ" if isinstance(p, ast.Seq) else "an AND"
    for x in p.items:
        if _positive_item(x):
            continue
        if isinstance(x, ast.Not):
            if not _positive_item(x.body):
                return f"{pattern_text(x)} is a negation of more than one event"
        elif isinstance(x, ast.Exists):
            if not _flat_guard_body(x.body):
                return f"{pattern_text(x)} is an EXISTS over a nested pattern"
        elif is_boolean(x):
            return f"{pattern_text(x)} is a disjunction inside {inside}"
        elif isinstance(x, ast.Kleene):
            return f"{pattern_text(x)} is a Kleene over a sub-pattern"
        elif isinstance(x, ast.AndPattern) and isinstance(p, ast.Seq):
            return (f"{pattern_text(x)} is nested inside a SEQ: an AND matches its events in any order "
                    "and at equal times, which no union of flat sequences expresses (the chapter "
                    "leaves SEQ(AND) unrewritten)")
        elif isinstance(x, ast.Seq) and isinstance(p, ast.AndPattern):
            return (f"{pattern_text(x)} is nested inside an AND: a conjunction of sequences (the chapter's "
                    "CNF), not a union of flat patterns")
        else:
            return f"{pattern_text(x)} is nested inside {inside}"
    return None


def why_not_normal(p: ast.Pattern) -> str | None:
    """None for a pattern in normal form, else what is not (the first such part)."""
    if isinstance(p, ast.OrPattern) and not is_boolean(p):
        if p.quals:
            return f"{pattern_text(p)} has conditions of its own"
        for alt in p.items:
            reason = _conjunct(alt)
            if reason:
                return reason
        return None
    return _conjunct(p)


def is_normal_form(p: ast.Pattern) -> bool:
    return why_not_normal(p) is None
