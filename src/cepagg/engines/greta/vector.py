"""Conditions and values evaluated on whole columns with numpy, with SQL's nulls.

GRETA's vertex predicates (local conditions, stream filters) and the two sides of an indexed
edge predicate are evaluated once per batch for all events, never per event in Python. The
rules are those of :mod:`cepagg.lang.expr` (the reference's evaluator): arithmetic with a
null is null, division by zero is null, a comparison with a null is unknown, a condition holds
only when true, and comparing a string with a number is an error naming the values.

A value is a :class:`Vec`: a kind ("number", "string", "bool"), a numpy array and a validity
mask.

>>> import numpy as np
>>> x = Vec("number", np.array([1, 5, 0]), np.array([True, True, False]))
>>> holds_mask(ast.Compare((">",), (ast.Attr("a", "x"), ast.Literal(2))), lambda n: x)
array([False,  True, False])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...lang import ast
from ...lang.expr import ConditionTypeError
from .numbers import key_codes


@dataclass
class Vec:
    kind: str  # "number" | "string" | "bool"
    values: np.ndarray
    valid: np.ndarray
    arrow: pa.Array | None = None  # strings read from a batch: the Arrow column (hash-encoded fast)
    codes: np.ndarray | None = field(default=None, repr=False, compare=False)  # see float_codes()

    def __len__(self) -> int:
        return len(self.values)

    def float_codes(self) -> np.ndarray:
        """Order codes of float values as edge keys (:func:`.numbers.key_codes`), computed once
        for the whole column: every partition of a batch slices the same codes."""
        if self.codes is None:
            self.codes = key_codes(self.values)
        return self.codes


Lookup = Callable[[ast.Expr], Vec]


def arrow_vec(col: pa.ChunkedArray | pa.Array) -> Vec:
    """An Arrow column as a Vec (nulls masked; the masked values are arbitrary)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    t = col.type
    valid = np.ones(len(col), dtype=bool) if col.null_count == 0 else col.is_valid().to_numpy(zero_copy_only=False)
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = col.type
    if pa.types.is_boolean(t):
        return Vec("bool", pc.fill_null(col, False).to_numpy(zero_copy_only=False).astype(bool), valid)
    if pa.types.is_integer(t):
        return Vec("number", pc.fill_null(col, 0).cast(pa.int64()).to_numpy(), valid)
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return Vec("number", pc.fill_null(col.cast(pa.float64()), 0.0).to_numpy(), valid)
    if pa.types.is_timestamp(t):
        return Vec("number", pc.fill_null(col.cast(pa.int64()), 0).to_numpy(), valid)
    if pa.types.is_null(t):
        return Vec("number", np.zeros(len(col), dtype=np.int64), np.zeros(len(col), dtype=bool))
    values = col.to_numpy(zero_copy_only=False).astype(object)
    return Vec("string", values, valid, col)


def literal(value, n: int) -> Vec:
    if isinstance(value, bool):
        return Vec("bool", np.full(n, value), np.ones(n, dtype=bool))
    if isinstance(value, str):
        return Vec("string", np.full(n, value, dtype=object), np.ones(n, dtype=bool))
    dtype = np.int64 if isinstance(value, int) else np.float64
    return Vec("number", np.full(n, value, dtype=dtype), np.ones(n, dtype=bool))


def _kind_error(op: str, a: Vec, b: Vec, both: np.ndarray, what: str) -> ConditionTypeError:
    i = int(np.flatnonzero(both)[0])
    return ConditionTypeError(f"cannot {what} {a.kind} {a.values[i]!r} {op} {b.kind} {b.values[i]!r}")


def value(e: ast.Expr, lookup: Lookup, n: int) -> Vec:
    """The value of an arithmetic expression over ``n`` rows."""
    if isinstance(e, ast.Literal):
        return literal(e.value, n)
    if isinstance(e, (ast.Attr, ast.Ref)):
        return lookup(e)
    if isinstance(e, ast.Negate):
        v = value(e.operand, lookup, n)
        if v.kind != "number" and v.valid.any():
            raise ConditionTypeError(f"cannot negate {v.kind} value {v.values[v.valid][0]!r}")
        return Vec("number", -v.values, v.valid)
    if isinstance(e, ast.Arith):
        a, b = value(e.left, lookup, n), value(e.right, lookup, n)
        valid = a.valid & b.valid
        if (a.kind != "number" or b.kind != "number") and valid.any():
            raise _kind_error(e.op, a, b, valid, "compute")
        with np.errstate(all="ignore"):
            if e.op == "+":
                out = a.values + b.values
            elif e.op == "-":
                out = a.values - b.values
            elif e.op == "*":
                out = a.values * b.values
            else:
                zero = b.values == 0
                valid = valid & ~zero
                out = np.true_divide(a.values, np.where(zero, 1, b.values))
        return Vec("number", out, valid)
    raise ConditionTypeError(f"not a value expression: {type(e).__name__}")


_CMP = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
        ">": np.greater, ">=": np.greater_equal}


def compare(op: str, a: Vec, b: Vec) -> tuple[np.ndarray, np.ndarray]:
    """(true, unknown) masks of ``a op b``."""
    valid = a.valid & b.valid
    if a.kind != b.kind:
        if valid.any():
            raise _kind_error(op, a, b, valid, "compare")
        return np.zeros(len(valid), dtype=bool), ~valid
    if a.kind == "string":
        res = np.zeros(len(valid), dtype=bool)
        idx = np.flatnonzero(valid)
        if len(idx):
            res[idx] = _CMP[op](a.values[idx].astype(str), b.values[idx].astype(str))
    else:
        res = _CMP[op](a.values, b.values)
    return res & valid, ~valid


def truth(e: ast.Expr, lookup: Lookup, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Three-valued truth as (true, false) masks; rows in neither are unknown."""
    if isinstance(e, ast.Compare):
        true = np.ones(n, dtype=bool)
        false = np.zeros(n, dtype=bool)
        unknown = np.zeros(n, dtype=bool)
        left = value(e.operands[0], lookup, n)
        for op, operand in zip(e.ops, e.operands[1:]):
            right = value(operand, lookup, n)
            t, u = compare(op, left, right)
            false |= ~t & ~u
            unknown |= u
            left = right
        true = ~false & ~unknown
        return true, false
    if isinstance(e, ast.BoolOp):
        parts = [truth(o, lookup, n) for o in e.operands]
        ts = [t for t, _ in parts]
        fs = [f for _, f in parts]
        if e.op == "and":
            return np.logical_and.reduce(ts), np.logical_or.reduce(fs)
        return np.logical_or.reduce(ts), np.logical_and.reduce(fs)
    if isinstance(e, ast.NotExpr):
        t, f = truth(e.operand, lookup, n)
        return f, t
    raise ConditionTypeError(f"not a condition: {type(e).__name__}")


def holds_mask(e: ast.Expr, lookup: Lookup, n: int | None = None) -> np.ndarray:
    """Rows where the condition is true."""
    if n is None:
        n = _rows(e, lookup)
    return truth(e, lookup, n)[0]


def _rows(e: ast.Expr, lookup: Lookup) -> int:
    for node in e.walk():
        if isinstance(node, (ast.Attr, ast.Ref)):
            return len(lookup(node))
    raise ValueError("an expression without attributes needs an explicit row count")


# Reference: docs/semantics.md §5 (conditions, nulls); GRETA (PVLDB 2017)
# Section 6 "vertex predicates" evaluated on single events to filter the stream.
