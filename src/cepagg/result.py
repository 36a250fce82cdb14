"""Result tables: rows in the query's output columns, in one deterministic order.

Every engine returns a :class:`Result`; two engines agree on a query when their results are
equal row by row (floats to a relative 1e-9, since engines add in different orders).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pyarrow as pa

from .errors import OverflowResult
from .lang.model import Query

DECIMAL38_MAX = 10**38 - 1


def sort_key(value: Any) -> tuple:
    """Total order over mixed cell values: None last, numbers before strings."""
    if value is None:
        return (3, 0)
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, (int, float, Fraction)):
        return (0, value)
    return (1, str(value))


@dataclass
class Result:
    """A result table.

    Attributes:
        columns: output column names (see ``Query.output_columns``).
        rows: tuples in column order.
        kinds: per column, "int" (exact integer), "float", "str", "bool", "any".
    """

    columns: tuple[str, ...]
    rows: list[tuple]
    kinds: tuple[str, ...] = field(default=())

    def sorted(self, key_columns: int | None = None) -> "Result":
        n = len(self.columns) if key_columns is None else key_columns
        rows = sorted(self.rows, key=lambda r: tuple(sort_key(v) for v in r[:n]))
        return Result(self.columns, rows, self.kinds)

    def __len__(self) -> int:
        return len(self.rows)

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_arrow(self) -> pa.Table:
        """As an Arrow table; exact integers become DECIMAL(38,0) when they outgrow int64."""
        arrays = []
        for i, name in enumerate(self.columns):
            values = [r[i] for r in self.rows]
            kind = self.kinds[i] if self.kinds else "any"
            arrays.append(_arrow_column(name, values, kind))
        return pa.table(dict(zip(self.columns, arrays)))

    def equals(self, other: "Result", rel: float = 1e-9) -> bool:
        return not self.diff(other, rel)

    def diff(self, other: "Result", rel: float = 1e-9) -> list[str]:
        """Human-readable differences (empty when the results agree)."""
        problems = []
        if tuple(self.columns) != tuple(other.columns):
            return [f"columns differ: {self.columns} vs {other.columns}"]
        if len(self.rows) != len(other.rows):
            problems.append(f"{len(self.rows)} rows vs {len(other.rows)} rows")
        for k, (a, b) in enumerate(zip(self.rows, other.rows)):
            if not all(_same(x, y, rel) for x, y in zip(a, b)):
                problems.append(f"row {k}: {a} vs {b}")
                if len(problems) > 5:
                    break
        return problems


def _same(x: Any, y: Any, rel: float) -> bool:
    if x is None or y is None:
        return x is None and y is None
    if isinstance(x, float) or isinstance(y, float):
        if isinstance(x, str) or isinstance(y, str):
            return False
        fx, fy = float(x), float(y)
        if math.isnan(fx) or math.isnan(fy):
            return math.isnan(fx) and math.isnan(fy)
        return math.isclose(fx, fy, rel_tol=rel, abs_tol=1e-12)
    return x == y


def _arrow_column(name: str, values: list[Any], kind: str) -> pa.Array:
    if kind == "int":
        biggest = max((abs(v) for v in values if v is not None), default=0)
        if biggest > DECIMAL38_MAX:
            raise OverflowResult(f"column {name!r} holds {biggest}, beyond DECIMAL(38,0), the largest exact "
                                 "integer of Parquet (reported, never wrapped): write CSV or JSON Lines, which "
                                 "keep every digit, or use float mode (--numbers float)")
        if biggest >= 2**63:
            from decimal import Decimal

            return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal128(38, 0))
        return pa.array(values, pa.int64())
    if kind == "float":
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if kind == "str":
        return pa.array(values, pa.string())
    if kind == "bool":
        return pa.array(values, pa.bool_())
    return pa.array(values)


def output_kinds(query: Query, attribute_kinds: dict[str, str] | None = None,
                 numbers: str = "exact") -> tuple[str, ...]:
    """Column kinds of a query's result; with ``numbers="float"`` COUNT, SUM and AVG are "float"
    (computed in float64, :mod:`cepagg.engines.floats`)."""
    attribute_kinds = attribute_kinds or {}
    kinds: list[str] = []
    for g in query.group_by:
        kinds.append(result_kind(attribute_kinds.get(g.attr)))
    if query.mode == "slide":
        kinds += ["int", "int"]
    elif query.mode == "emit":
        kinds.append("int")
    if query.returns_matches:
        kinds += ["int", "str", "int", "int", "str", "int"]
    else:
        for a in query.aggregates:
            if numbers == "float" and a.func in ("COUNT", "SUM", "AVG"):
                kinds.append("float")
            elif a.func == "COUNT":
                kinds.append("int")
            elif a.func == "AVG":
                kinds.append("float")
            else:
                k = attribute_kinds.get(a.attr) if a.attr not in ("ts",) else "int"
                kinds.append("int" if a.func == "SUM" and k == "int" else result_kind(k))
    return tuple(kinds)


def result_kind(kind: str | None) -> str:
    """The result column kind of an attribute kind (:func:`cepagg.events.arrow_kind`)."""
    return {"int": "int", "float": "float", "str": "str", "bool": "bool", "timestamp": "int"}.get(kind or "", "any")


def format_table(result: Result, max_rows: int = 50, total: int | None = None) -> str:
    """A plain-text table for terminals (``total``: the number of rows when ``result`` holds only
    the first ones)."""
    cols = list(result.columns)
    rows = [[_fmt(v) for v in r] for r in result.rows[:max_rows]]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    line = "  ".join(c.rjust(w) for c, w in zip(cols, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    n = len(result.rows) if total is None else total
    if n > len(rows):
        out.append(f"... {n - len(rows)} more rows")
    out.append(f"({n} row{'s' if n != 1 else ''})")
    return "\n".join(out)


def _fmt(v: Any) -> str:
    """A cell as text: a whole float below 10^15 (a float-mode count or sum) with every digit,
    other floats to 6 significant digits."""
    if v is None:
        return "null"
    if isinstance(v, float):
        if abs(v) < 1e15 and v.is_integer():
            return f"{v:.0f}"
        return f"{v:.6g}" if abs(v) < 1e15 else f"{v:.6e}"
    return str(v)

