"""Shapes of pattern nodes that the NEEL rewrite rules test and build.

The rules work on the syntax tree of :mod:`cepagg.lang.ast`, before names are bound, so that a
rewritten pattern can be printed, parsed and bound again like any query. A **primitive** is one
event (``Type v``, or ``(Type v, conditions)``); a **boolean item** is a NOT, an EXISTS, or a
disjunction of them (``!P ∨ ∃Q``, an :class:`~cepagg.lang.ast.OrPattern` of boolean items).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from .. import ast


def is_primitive(p: ast.Pattern) -> bool:
    """One typed event, with or without conditions of its own."""
    if isinstance(p, ast.Qualified):
        p = p.body
    return isinstance(p, ast.EventPattern) and p.type is not None


def is_boolean(p: ast.Pattern) -> bool:
    """NOT, EXISTS, or a disjunction of them: an item that binds nothing visible outside."""
    if isinstance(p, (ast.Not, ast.Exists)):
        return True
    return isinstance(p, ast.OrPattern) and all(is_boolean(i) for i in p.items)


def is_positive_or(p: ast.Pattern) -> bool:
    return isinstance(p, ast.OrPattern) and not is_boolean(p)


def positives(items: Iterable[ast.Pattern]) -> list[ast.Pattern]:
    return [i for i in items if not is_boolean(i)]


def event_types(p: ast.Pattern) -> set[str | None]:
    """Every event type the pattern mentions (None for an untyped variable)."""
    return {n.type for n in p.walk() if isinstance(n, ast.EventPattern)}


def declared_vars(p: ast.Node) -> set[str]:
    """Every variable name written or implied (a type used without alias) in the pattern."""
    out = set()
    for n in p.walk():
        if isinstance(n, ast.EventPattern):
            out.add(n.var or n.type)
    return out


def expr_vars(e: ast.Expr) -> set[str]:
    """Variables a condition mentions (qualified attributes and NEXT/FIRST/LAST)."""
    out = set()
    for n in e.walk():
        if isinstance(n, ast.Attr) and n.var is not None:
            out.add(n.var)
        elif isinstance(n, ast.Ref):
            out.add(n.var)
    return out


def primitive_var(p: ast.Pattern) -> str:
    if isinstance(p, ast.Qualified):
        p = p.body
    assert isinstance(p, ast.EventPattern)
    return p.var or p.type


def rename_expr(e: ast.Expr, old: str, new: str) -> ast.Expr:
    """The condition with variable ``old`` written ``new``."""
    if isinstance(e, ast.Attr) and e.var == old:
        return replace(e, var=new)
    if isinstance(e, ast.Ref) and e.var == old:
        return replace(e, var=new)
    if isinstance(e, ast.Arith):
        return replace(e, left=rename_expr(e.left, old, new), right=rename_expr(e.right, old, new))
    if isinstance(e, ast.Negate):
        return replace(e, operand=rename_expr(e.operand, old, new))
    if isinstance(e, ast.NotExpr):
        return replace(e, operand=rename_expr(e.operand, old, new))
    if isinstance(e, ast.Compare):
        return replace(e, operands=tuple(rename_expr(o, old, new) for o in e.operands))
    if isinstance(e, ast.BoolOp):
        return replace(e, operands=tuple(rename_expr(o, old, new) for o in e.operands))
    return e


def fresh_var(base: str, taken: set[str]) -> str:
    """A variable name not in ``taken`` (which is updated), derived from ``base``."""
    stem = base[:1].lower() + base[1:]
    k = 2
    while f"{stem}{k}" in taken:
        k += 1
    taken.add(f"{stem}{k}")
    return f"{stem}{k}"


def with_quals(p: ast.Pattern, quals: tuple[ast.Expr, ...]) -> ast.Pattern:
    """``p`` with more conditions: on a primitive as ``(Type v, cond)``, on an operator as its
    own qualifications."""
    if not quals:
        return p
    if isinstance(p, ast.Qualified):
        return replace(p, quals=p.quals + quals)
    if isinstance(p, ast.EventPattern):
        return ast.Qualified(p, quals)
    if isinstance(p, (ast.Seq, ast.AndPattern, ast.OrPattern)):
        return replace(p, quals=p.quals + quals)
    raise ValueError(p)


def operator(p: ast.Pattern, items: Iterable[ast.Pattern], quals: tuple[ast.Expr, ...] = ()) -> ast.Pattern:
    """A node of ``p``'s class with new items (SEQ, AND or OR)."""
    return type(p)(tuple(items), quals)
