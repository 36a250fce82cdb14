"""Partial aggregates: what engines emit when one result is split across partitions or slices.

A group's result may come from several partitions (GROUP BY sector with ``[company]``), or,
for a query without partition key, from several time slices evaluated in parallel. Engines
then emit *partial* rows whose aggregate cells can be merged; :func:`combine_rows` merges and
finalises them. The same code serves in-process runs and Spark, so no aggregate semantics
lives in the Spark adapter.

Partial cell per aggregate:

* ``COUNT`` -> int
* ``SUM`` and ``AVG`` -> ``(sum, n)``: the sum of non-null values and how many there were
* ``MIN`` / ``MAX`` -> the value, or None

>>> funcs = ("COUNT", "AVG", "MAX")
>>> a = (2, (10, 2), 7)
>>> b = (1, (5, 1), 9)
>>> finalize(funcs, merge(funcs, a, b))
(3, 5.0, 9)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Sequence

from ..lang.model import Query


def funcs_of(query: Query) -> tuple[str, ...]:
    return tuple(a.func for a in query.aggregates)


def empty(funcs: Sequence[str]) -> tuple:
    return tuple(0 if f == "COUNT" else (0, 0) if f in ("SUM", "AVG") else None for f in funcs)


def merge(funcs: Sequence[str], a: tuple, b: tuple) -> tuple:
    out = []
    for f, x, y in zip(funcs, a, b):
        if f == "COUNT":
            out.append(x + y)
        elif f in ("SUM", "AVG"):
            out.append((x[0] + y[0], x[1] + y[1]))
        elif x is None or y is None:
            out.append(y if x is None else x)
        else:
            out.append(min(x, y) if f == "MIN" else max(x, y))
    return tuple(out)


def finalize(funcs: Sequence[str], partial: tuple) -> tuple:
    out: list[Any] = []
    for f, x in zip(funcs, partial):
        if f == "COUNT":
            out.append(x)
        elif f == "SUM":
            total, n = x
            out.append(None if n == 0 else _plain(total))
        elif f == "AVG":
            total, n = x
            out.append(None if n == 0 else float(Fraction(total) / n) if isinstance(total, (int, Fraction))
                       else total / n)
        else:
            out.append(x)
    return tuple(out)


def finalize_column(func: str, partials: list) -> list:
    """:func:`finalize` of one aggregate over a column of partial cells (columnar engines)."""
    if func in ("COUNT", "MIN", "MAX"):
        return partials
    return [finalize((func,), (x,))[0] for x in partials]


def _plain(total: Any) -> Any:
    return float(total) if isinstance(total, Fraction) else total


def key_width(query: Query) -> int:
    """Number of leading key cells of a row: group columns, then window or instant columns."""
    width = len(query.group_by)
    if query.mode == "slide":
        width += 2
    elif query.mode == "emit":
        width += 1
    return width


def combine_rows(query: Query, partial_rows: Iterable[tuple]) -> list[tuple]:
    """Merge partial rows with equal keys and finalise them (WITHIN alone and SLIDE modes).

    A query without GROUP BY in WITHIN-alone mode always has its one row, even with no match.
    """
    funcs = funcs_of(query)
    width = key_width(query)
    merged: dict[tuple, tuple] = {}
    for row in partial_rows:
        key, cells = tuple(row[:width]), tuple(row[width:])
        merged[key] = merge(funcs, merged[key], cells) if key in merged else cells
    if query.mode == "total" and not query.group_by and not merged:
        merged[()] = empty(funcs)
    return [key + finalize(funcs, cells) for key, cells in merged.items()]


def drop_unchanged(query: Query, rows: Iterable[tuple]) -> list[tuple]:
    """EMIT ON CHANGE rows computed at every instant (per time slice), reduced to the changes.

    Rows are final; they are put in (group, instant) order, and a row is kept when its values
    differ from the group's previous row (the first is compared with the empty aggregate).
    """
    groups = len(query.group_by)
    funcs = funcs_of(query)
    nothing = finalize(funcs, empty(funcs))
    last: dict[tuple, tuple] = {}
    out = []
    for row in sorted(rows, key=lambda r: (tuple(map(_order, r[:groups])), r[groups])):
        g, values = tuple(row[:groups]), tuple(row[groups + 1:])
        if values != last.get(g, nothing):
            out.append(row)
            last[g] = values
    return out


def _order(v: Any) -> tuple:
    from ..result import sort_key

    return sort_key(v)
