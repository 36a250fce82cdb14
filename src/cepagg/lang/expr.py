"""Evaluating condition and value expressions on event values.

Expressions are evaluated by walking the syntax tree; nothing is ever passed to ``eval``. Nulls
follow SQL: arithmetic with a null is null, a comparison with a null is unknown, and a condition
holds only when it is true. Comparing a string with a number is an error, not ``False``: it is
almost always a wrongly typed column.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from ..errors import CepaggError
from . import ast

Lookup = Callable[[ast.Expr], Any]
"""Maps an ``Attr``/``Ref`` node to its value for the events at hand (None for null)."""

_CMP = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


class ConditionTypeError(CepaggError):
    """A condition compares or computes with values of incompatible types."""


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return type(v).__name__


def value(e: ast.Expr, lookup: Lookup) -> Any:
    """The value of an arithmetic expression (None for null)."""
    if isinstance(e, ast.Literal):
        return e.value
    if isinstance(e, (ast.Attr, ast.Ref)):
        return lookup(e)
    if isinstance(e, ast.Negate):
        v = value(e.operand, lookup)
        if v is None:
            return None
        if _kind(v) != "number":
            raise ConditionTypeError(f"cannot negate {_kind(v)} value {v!r}")
        return -v
    if isinstance(e, ast.Arith):
        left, right = value(e.left, lookup), value(e.right, lookup)
        if left is None or right is None:
            return None
        if _kind(left) != "number" or _kind(right) != "number":
            raise ConditionTypeError(f"cannot compute {left!r} {e.op} {right!r}: arithmetic needs numbers")
        if e.op == "+":
            return left + right
        if e.op == "-":
            return left - right
        if e.op == "*":
            return left * right
        if right == 0:
            return None  # division by zero is null, as in SQL engines that do not raise
        return left / right
    raise ConditionTypeError(f"not a value expression: {type(e).__name__}")


def truth(e: ast.Expr, lookup: Lookup) -> bool | None:
    """Three-valued truth of a condition: True, False or None (unknown)."""
    if isinstance(e, ast.Compare):
        result: bool | None = True
        left = value(e.operands[0], lookup)
        for op, operand in zip(e.ops, e.operands[1:]):
            right = value(operand, lookup)
            if left is None or right is None:
                result = None if result is not False else False
            else:
                kl, kr = _kind(left), _kind(right)
                if kl != kr:
                    raise ConditionTypeError(f"cannot compare {kl} {left!r} with {kr} {right!r}")
                if not _CMP[op](left, right):
                    return False
            left = right
        return result
    if isinstance(e, ast.BoolOp):
        seen_unknown = False
        for operand in e.operands:
            t = truth(operand, lookup)
            if e.op == "and" and t is False:
                return False
            if e.op == "or" and t is True:
                return True
            seen_unknown |= t is None
        if seen_unknown:
            return None
        return e.op == "and"
    if isinstance(e, ast.NotExpr):
        t = truth(e.operand, lookup)
        return None if t is None else not t
    raise ConditionTypeError(f"not a condition: {type(e).__name__}")


def holds(e: ast.Expr, lookup: Lookup) -> bool:
    """A condition holds only when it is true (unknown counts as not holding)."""
    return truth(e, lookup) is True
