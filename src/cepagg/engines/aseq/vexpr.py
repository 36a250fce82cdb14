"""Conditions evaluated over whole columns at once (local predicates as arrival filters).

A-Seq applies local predicates to each arriving event before counting (paper §3.4). Doing it
one event at a time in Python would cost more than the counting itself, so conditions are
evaluated here over Arrow columns with :mod:`pyarrow.compute`, whose kernels follow SQL null
semantics as :mod:`cepagg.lang.expr` does: arithmetic with null is null, comparisons with null
are unknown, AND/OR are Kleene's, a condition holds only when true, division by zero is null.
Comparing a string with a number raises :class:`~cepagg.lang.expr.ConditionTypeError`, as the
scalar evaluator does. Query text is never evaluated; the syntax tree is walked.

>>> import pyarrow as pa
>>> from cepagg.lang.parser import parse
>>> t = pa.table({"x": [1, None, 5]})
>>> cond = parse("PATTERN A WHERE A.x > 2").where
>>> holds(cond, t).tolist()
[False, False, True]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...events import arrow_kind
from ...lang import ast
from ...lang.expr import ConditionTypeError

_CMP = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
        ">=": pc.greater_equal}


def _column(table: pa.Table, name: str) -> pa.Array:
    if name in table.column_names:
        col = table.column(name)
        return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return pa.nulls(table.num_rows)


def _kind(t: pa.DataType) -> str:
    """What an operand of type ``t`` is to an operator (:func:`cepagg.events.arrow_kind`,
    integers and floats alike numbers)."""
    kind = arrow_kind(t)
    return {"int": "number", "float": "number", "str": "string"}.get(kind, kind)


def value(e: ast.Expr, table: pa.Table):
    """The values of an arithmetic expression over the rows of ``table`` (array or scalar)."""
    if isinstance(e, ast.Literal):
        return pa.scalar(e.value)
    if isinstance(e, ast.Attr):
        return _column(table, e.name)
    if isinstance(e, ast.Negate):
        v = value(e.operand, table)
        _need_number(v, "negate")
        return pc.negate_checked(v)
    if isinstance(e, ast.Arith):
        left, right = value(e.left, table), value(e.right, table)
        _need_number(left, e.op)
        _need_number(right, e.op)
        if e.op == "+":
            return pc.add_checked(left, right)
        if e.op == "-":
            return pc.subtract_checked(left, right)
        if e.op == "*":
            return pc.multiply_checked(left, right)
        lf, rf = pc.cast(left, pa.float64()), pc.cast(right, pa.float64())
        zero = pc.equal(rf, 0.0)
        safe = pc.if_else(zero, pa.scalar(1.0), rf)
        return pc.if_else(zero, pa.scalar(None, pa.float64()), pc.divide(lf, safe))
    raise ConditionTypeError(f"not a value expression: {type(e).__name__}")


def _need_number(v, op: str) -> None:
    k = _kind(v.type)
    if k not in ("number", "null"):
        raise ConditionTypeError(f"cannot compute with {k} values ({op}): arithmetic needs numbers")


def truth(e: ast.Expr, table: pa.Table) -> pa.Array:
    """Three-valued truth per row (a boolean array whose nulls mean unknown)."""
    n = table.num_rows
    if isinstance(e, ast.Compare):
        result = None
        left = value(e.operands[0], table)
        for op, operand in zip(e.ops, e.operands[1:]):
            right = value(operand, table)
            kl, kr = _kind(left.type), _kind(right.type)
            if "null" not in (kl, kr) and kl != kr:
                _raise_mismatch(left, right, kl, kr)
            if "null" in (kl, kr):
                r = pa.nulls(n, pa.bool_())
            else:
                r = _CMP[op](left, right)
            result = r if result is None else pc.and_kleene(result, r)
            left = right
        return _broadcast(result, n)
    if isinstance(e, ast.BoolOp):
        parts = [truth(o, table) for o in e.operands]
        out = parts[0]
        for p in parts[1:]:
            out = pc.and_kleene(out, p) if e.op == "and" else pc.or_kleene(out, p)
        return out
    if isinstance(e, ast.NotExpr):
        return pc.invert(truth(e.operand, table))
    raise ConditionTypeError(f"not a condition: {type(e).__name__}")


def _broadcast(r, n: int) -> pa.Array:
    if isinstance(r, pa.Scalar):
        return pa.array([r.as_py()] * n, pa.bool_())
    return r


def _raise_mismatch(left, right, kl: str, kr: str) -> None:
    """Raise like the scalar evaluator, naming a pair of values that cannot be compared."""
    def first(v):
        if isinstance(v, pa.Scalar):
            return v.as_py()
        valid = v.drop_null()
        return valid[0].as_py() if len(valid) else None

    a, b = first(left), first(right)
    if a is None or b is None:
        return  # no row has both values: nothing is compared
    raise ConditionTypeError(f"cannot compare {kl} {a!r} with {kr} {b!r}")


def holds(e: ast.Expr, table: pa.Table) -> np.ndarray:
    """Rows where the condition is true (unknown counts as not holding), as a numpy bool array."""
    if table.num_rows == 0:
        return np.zeros(0, dtype=bool)
    t = truth(e, table)
    return pc.fill_null(t, False).to_numpy(zero_copy_only=False).astype(bool)


def holds_all(exprs, table: pa.Table) -> np.ndarray:
    out = np.ones(table.num_rows, dtype=bool)
    for e in exprs:
        out &= holds(e, table)
    return out


# Reference: docs/semantics.md §5 (conditions, nulls); A-Seq (SIGMOD 2014) §2.1, §3.4 (local
# predicates).
