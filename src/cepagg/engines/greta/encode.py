"""A batch as the arrays the kernels read: vertex predicates, partitions, keys, attributes.

Everything here is columnar: one numpy operation per column and condition for the whole
batch, never a Python object per event. Per batch:

* stream filters and local conditions (vertex predicates) give each event its template
  state in every graph, or -1;
* the partition key (unqualified equivalence and GROUP BY attributes) becomes an integer per
  event; the sub-partition key (an attribute every positive event shares) likewise;
* edge-program slots, index keys and aggregated attributes become float64/int64 columns
  with validity masks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...events import ID, arrow_kind
from ...lang import ast
from ...lang.expr import ConditionTypeError
from ..keys import IntKeys
from .layout import DataKindError, GraphLayout, Layout
from .numbers import float_codes
from .vector import Vec, arrow_vec, holds_mask, value

EXACT_FLOAT = 2**53


class BatchView:
    """Columns of one (sorted) batch, converted once and cached."""

    def __init__(self, table: pa.Table):
        self.table = table
        self.n = table.num_rows
        self.ts = np.asarray(table.column("ts").to_numpy(), dtype=np.int64)
        self._cols: dict[str, Vec] = {}

    def col(self, name: str) -> Vec:
        v = self._cols.get(name)
        if v is None:
            if name == "ts":
                v = Vec("number", self.ts, np.ones(self.n, dtype=bool))
            elif name in self.table.column_names:
                v = arrow_vec(self.table.column(name))
            else:
                v = Vec("number", np.zeros(self.n, dtype=np.int64), np.zeros(self.n, dtype=bool))
            self._cols[name] = v
        return v

    def lookup(self, node: ast.Expr) -> Vec:
        return self.col(node.name)

    @property
    def types(self) -> np.ndarray:
        return self.col("type").values


def sort_batch(table: pa.Table) -> pa.Table:
    ts = np.asarray(table.column("ts").to_numpy())
    ids = np.asarray(table.column(ID).to_numpy())
    if len(ts) < 2:
        return table
    d = np.diff(ts)
    if np.all((d > 0) | ((d == 0) & (np.diff(ids) > 0))):
        return table
    idx = pc.sort_indices(table, sort_keys=[("ts", "ascending"), (ID, "ascending")])
    return table.take(idx)


def attribute_kinds(table: pa.Table, names) -> dict[str, str]:
    """How GRETA encodes each attribute of ``names`` the table has (:func:`cepagg.events.arrow_kind`):
    bool, int (timestamps too: their integer value), float, or str (any other type, compared as
    text); an all-null column is left out."""
    out = {}
    for n in names:
        if n in table.column_names:
            kind = arrow_kind(table.schema.field(n).type)
            if kind != "null":
                out[n] = "int" if kind == "timestamp" else kind if kind in ("bool", "int", "float") else "str"
    return out


def _string_codes(col: pa.Array, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of the valid strings of ``col``, by Arrow's
    hash encoding and a sort of the distinct values only (sorting every row's string was most
    of a small batch's partitioning)."""
    enc = pc.dictionary_encode(col if valid.all() else col.filter(pa.array(valid)))
    distinct = np.array(enc.dictionary.to_pylist(), dtype=object)
    order = np.argsort(distinct.astype(str), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return distinct[order], rank[enc.indices.to_numpy(zero_copy_only=False)]


def factorize(vecs: list[Vec], n: int) -> tuple[np.ndarray, list[tuple]]:
    """Integer codes of the value tuples of ``vecs`` (-1 where any is null) and the tuples."""
    if not vecs:
        return np.zeros(n, dtype=np.int64), [()]
    valid = np.logical_and.reduce([v.valid for v in vecs])
    codes = np.zeros(n, dtype=np.int64)
    uniques = []
    for v in vecs:
        if v.kind == "string" and v.arrow is not None:
            u, inv = _string_codes(v.arrow, valid)
        elif v.kind == "string":
            u, inv = np.unique(v.values[valid].astype(str), return_inverse=True)
            u = u.astype(object)
        else:
            u, inv = np.unique(v.values[valid], return_inverse=True)
        uniques.append(u)
        codes[valid] = codes[valid] * max(len(u), 1) + inv
    ucodes, inv = np.unique(codes[valid], return_inverse=True)
    out = np.full(n, -1, dtype=np.int64)
    out[valid] = inv
    # decode the combined codes back to value tuples, a column at a time (a batch over 10^6
    # keys has as many tuples: Python work per value, not per key and column, would dominate)
    columns = []
    rest = ucodes
    for u in reversed(uniques):
        size = max(len(u), 1)
        idx = rest % size
        rest = rest // size
        if u.dtype == object:
            values = np.empty(len(u), dtype=object)
            values[:] = [_py(x) for x in u]
            columns.append(values[idx].tolist())
        else:
            columns.append(u[idx].tolist())  # Python scalars, as ``_py`` makes them
    return out, list(zip(*reversed(columns)))


def grouped(vecs: list[Vec], n: int) -> tuple[np.ndarray, list[tuple], np.ndarray, np.ndarray | None]:
    """:func:`factorize`, the rows in the order of their codes (stable: a code's rows in batch
    order, rows without a code first), and where the key is one integer without nulls, the
    keys' integers (int64, in the order of the keys; else None). For such a key, one stable
    sort gives all of them, where :func:`factorize` and a sort of its codes take three."""
    if len(vecs) == 1 and vecs[0].kind == "number" and vecs[0].values.dtype.kind in "iu" \
            and vecs[0].valid.all():
        values = vecs[0].values
        order, ordered = stable_sort(values)
        first = np.empty(n, dtype=bool)  # the first row of each value, in sorted order
        first[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        codes = np.empty(n, dtype=np.int64)
        codes[order] = np.cumsum(first) - 1
        distinct = ordered[first]
        if distinct.dtype.kind == "u" and distinct.dtype.itemsize == 8:  # (beyond int64)
            return codes, list(zip(distinct.tolist())), order, None
        values = distinct.astype(np.int64)
        return codes, IntKeys(values), order, values
    codes, keys = factorize(vecs, n)
    return codes, keys, np.argsort(codes, kind="stable"), None


def stable_sort(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``order = np.argsort(values, kind="stable")`` and ``values[order]``, for integers. Where
    the values' span leaves room for the row numbers in 63 bits, by one unstable sort of
    ``(value - min) << bits | row`` (distinct numbers whose order is the stable one): numpy sorts
    int64 with SIMD instructions, several times faster than its stable sort of a batch's key
    column, which was a large part of a batch over many keys."""
    n = len(values)
    bits = max(n - 1, 1).bit_length()
    if n > 1 and not (values.dtype.kind == "u" and values.dtype.itemsize == 8):  # (any byte order)
        lo, hi = int(values.min()), int(values.max())
        if (hi - lo) >> (63 - bits) == 0:
            packed = values.astype(np.int64)
            packed -= lo
            packed <<= bits
            packed |= np.arange(n, dtype=np.int64)
            packed.sort()
            order = packed & ((1 << bits) - 1)
            packed >>= bits
            packed += lo
            return order, packed.astype(values.dtype, copy=False)
    order = np.argsort(values, kind="stable")
    return order, values[order]


def _py(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    return x


def states_of(view: BatchView, g: GraphLayout, admitted: np.ndarray) -> np.ndarray:
    """Template state of every event in graph ``g`` (-1: not a candidate)."""
    out = np.full(view.n, -1, dtype=np.int64)
    types = view.types
    for typ, s in g.types.items():
        rows = admitted & (types == typ)
        if not rows.any():
            continue
        for cond in g.plan.local.get(s, []):
            rows &= holds_mask(cond, view.lookup, view.n)
        out[rows] = s
    return out


def program_columns(view: BatchView, g: GraphLayout, strings: dict[str, int]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The attribute slots of ``g``'s edge programs as float64 columns with validity."""
    progs = g.programs
    C = len(progs.slots)
    col = np.zeros((view.n, C), dtype=np.float64)
    ok = np.zeros((view.n, C), dtype=np.bool_)
    kinds = {}
    for j, name in enumerate(progs.slots):
        v = view.col(name)
        kinds[name] = v.kind
        ok[:, j] = v.valid
        if v.kind == "string":
            if j in progs.ordered and v.valid.any():
                raise DataKindError(f"edge condition compares strings of '{name}' by order; the "
                                    "scan path compares strings for equality only")
            vals = v.values
            codes = np.array([strings.setdefault(str(x), len(strings)) if m else 0
                              for x, m in zip(vals, v.valid)], dtype=np.float64)
            col[:, j] = codes
        else:
            vals = v.values
            if vals.dtype.kind in "iu" and v.valid.any() and \
                    np.abs(vals[v.valid]).max(initial=0) > EXACT_FLOAT:
                raise DataKindError(f"integer attribute '{name}' beyond 2**53 in an edge condition "
                                    "evaluated by the scan path")
            col[:, j] = vals.astype(np.float64)
    for e in progs.exprs:
        _check_kinds(e, kinds)
    return col, ok


def _static(e: ast.Expr, kinds: dict[str, str]) -> str | None:
    if isinstance(e, ast.Literal):
        return "bool" if isinstance(e.value, bool) else "string" if isinstance(e.value, str) else "number"
    if isinstance(e, (ast.Attr, ast.Ref)):
        return kinds.get(e.name)
    if isinstance(e, (ast.Arith, ast.Negate)):
        return "number"
    return None


def _check_kinds(e: ast.Expr, kinds: dict[str, str]) -> None:
    for n in e.walk():
        if isinstance(n, ast.Compare):
            ks = [k for k in (_static(o, kinds) for o in n.operands) if k is not None]
            if len(set(ks)) > 1:
                raise ConditionTypeError(f"cannot compare {ks[0]} with {ks[1]} in an edge condition")


def key_vec(view: BatchView, expr: ast.Expr) -> Vec:
    return value(expr, view.lookup, view.n)


def agg_columns(view: BatchView, layout: Layout) -> tuple[np.ndarray, ...]:
    """Aggregated attributes: (int values, float values, order codes, validity)."""
    A = len(layout.attr_slots)
    aint = np.zeros((view.n, A), dtype=np.int64)
    aflt = np.zeros((view.n, A), dtype=np.float64)
    amm = np.zeros((view.n, A), dtype=np.int64)
    aval = np.zeros((view.n, A), dtype=np.bool_)
    for j, name in enumerate(layout.attr_slots):
        v = view.col(name)
        aval[:, j] = v.valid
        if v.kind == "string":
            if v.valid.any():
                raise DataKindError(f"aggregate over '{name}' needs numbers or booleans; it holds strings")
            continue
        vals = v.values
        if vals.dtype == np.bool_:
            vals = vals.astype(np.int64)
        if vals.dtype.kind == "f":
            aflt[:, j] = vals
            amm[:, j] = float_codes(vals)
            aint[:, j] = 0
        else:
            aint[:, j] = vals
            aflt[:, j] = vals.astype(np.float64)
            amm[:, j] = vals
            _refuse_empty_codes(layout, j, name, vals, v.valid)
    return aint, aflt, amm, aval


#: The order code an empty MIN / MAX record holds: the one integer each cannot take.
_EMPTY_CODE = {"MIN": np.iinfo(np.int64).max, "MAX": np.iinfo(np.int64).min}


def _refuse_empty_codes(layout: Layout, j: int, name: str, vals: np.ndarray, valid: np.ndarray) -> None:
    """An integer MIN of 2**63 - 1 (a MAX of -2**63) would read back as no value: its order code
    is that of an empty record. Refused, never answered wrong."""
    for a in layout.aggs:
        if a.attr_slot == j and a.func in _EMPTY_CODE and (valid & (vals == _EMPTY_CODE[a.func])).any():
            raise DataKindError(f"{a.func} over '{name}': the value {int(_EMPTY_CODE[a.func])} is beyond what "
                                f"GRETA's {a.func} can hold (it marks an empty {a.func}); give it as a float")


# Reference: Poppe et al., "GRETA: Graph-based Real-time Event Trend Aggregation", PVLDB 11(1),
# 2017, Section 3: "the GRETA runtime first filters
# and partitions the stream based on the vertex predicates and grouping attributes".
