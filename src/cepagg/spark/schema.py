"""Spark schemas of cepagg's inputs and results, and Arrow conversion of engine rows.

Exact counts are ``DECIMAL(38,0)`` (a value beyond it raises, it never wraps); sums of integer
attributes too; sums of floating attributes and averages are doubles; minima and maxima keep the
attribute's type; times are integers (LongType) in the stream's time unit. In float mode
(``numbers="float"``, :mod:`cepagg.engines.floats`) counts, sums and averages are doubles, and so
are the sum and count columns of partial rows.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Sequence

import pyarrow as pa

from ..engines.floats import FLOAT_FUNCS
from ..errors import OverflowResult
from ..lang.model import MATCH_COLUMNS, Query
from ..result import DECIMAL38_MAX

EXACT = "decimal(38,0)"


def spark_kind(data_type) -> str:
    """cepagg's kind ("int", "float", "str", "bool") of a Spark data type."""
    from pyspark.sql import types as T

    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "int"
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return "float"
    if isinstance(data_type, T.DecimalType):
        return "int" if data_type.scale == 0 else "float"
    if isinstance(data_type, T.BooleanType):
        return "bool"
    if isinstance(data_type, T.TimestampType):
        return "int"
    return "str"


def _ddl(kind: str) -> str:
    return {"int": "bigint", "float": "double", "str": "string", "bool": "boolean"}.get(kind, "string")


def _agg_ddl(query: Query, kinds: dict[str, str], numbers: str = "exact") -> list[tuple[str, str]]:
    out = []
    for a in query.aggregates:
        if numbers == "float" and a.func in FLOAT_FUNCS:
            out.append((a.column, "double"))
        elif a.func == "COUNT":
            out.append((a.column, EXACT))
        elif a.func == "AVG":
            out.append((a.column, "double"))
        elif a.func == "SUM":
            out.append((a.column, EXACT if kinds.get(a.attr) == "int" or a.attr == "ts" else "double"))
        else:
            kind = "int" if a.attr == "ts" else kinds.get(a.attr, "str")
            out.append((a.column, _ddl(kind)))
    return out


def key_ddl(query: Query, kinds: dict[str, str]) -> list[tuple[str, str]]:
    """Group columns, then window or instant columns."""
    cols = [(g.column, _ddl(kinds.get(g.attr, "str"))) for g in query.group_by]
    if query.mode == "slide":
        cols += [("window_start", "bigint"), ("window_end", "bigint")]
    elif query.mode == "emit":
        cols.append(("ts", "bigint"))
    return cols


def result_ddl(query: Query, kinds: dict[str, str], numbers: str = "exact") -> list[tuple[str, str]]:
    cols = key_ddl(query, kinds)
    if query.returns_matches:
        cols += list(zip(MATCH_COLUMNS, ["bigint", "string", "bigint", "bigint", "string", "bigint"]))
    else:
        cols += _agg_ddl(query, kinds, numbers)
    return cols


def partial_ddl(query: Query, kinds: dict[str, str], numbers: str = "exact") -> list[tuple[str, str]]:
    """Partial rows: SUM and AVG cells split into a sum column and a count column."""
    cols = key_ddl(query, kinds)
    floats = numbers == "float"
    for i, (a, (name, ddl)) in enumerate(zip(query.aggregates, _agg_ddl(query, kinds, numbers))):
        if a.func in ("SUM", "AVG"):
            exact = (kinds.get(a.attr) == "int" or a.attr == "ts") and not floats
            cols += [(f"__sum{i}", EXACT if exact else "double"), (f"__n{i}", "double" if floats else EXACT)]
        else:
            cols.append((f"__agg{i}", ddl))
    return cols


def quoted(name: str) -> str:
    """A column name as a Spark SQL identifier: in backticks, a backtick in it doubled (a
    result column such as ``SUM(b.`price ($)`)`` holds some).

    >>> quoted("SUM(b.`x y`)")
    '`SUM(b.``x y``)`'
    """
    return "`" + name.replace("`", "``") + "`"


def ddl_string(cols: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{quoted(n)} {t}" for n, t in cols)


def arrow_schema(cols: Sequence[tuple[str, str]]) -> pa.Schema:
    mapping = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(),
               "boolean": pa.bool_(), EXACT: pa.decimal128(38, 0)}
    return pa.schema([(n, mapping[t]) for n, t in cols])


def to_arrow(rows: Sequence[tuple], cols: Sequence[tuple[str, str]]) -> pa.RecordBatch:
    """Engine rows (flattened to ``cols``) as an Arrow batch; exact integers as decimals."""
    schema = arrow_schema(cols)
    arrays = []
    for i, (name, ddl) in enumerate(cols):
        values = [r[i] for r in rows]
        if ddl == EXACT:
            values = [None if v is None else _decimal(v, name) for v in values]
        elif ddl == "double":
            values = [None if v is None else float(v) for v in values]
        arrays.append(pa.array(values, schema.field(i).type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _decimal(v: Any, column: str) -> Decimal:
    if isinstance(v, float):
        v = int(v)
    if abs(v) > DECIMAL38_MAX:
        raise OverflowResult(f"column {column!r} holds {v}, beyond Spark's DECIMAL(38,0) (an error, never a "
                             "wrapped value); run with --numbers float (numbers=\"float\") for an approximate "
                             "double, or in-process (--no-spark) to CSV or JSON Lines for every digit")
    return Decimal(int(v))


def flatten_partial(query: Query, row: tuple) -> tuple:
    """A partial engine row with (sum, n) cells -> a flat tuple matching ``partial_ddl``."""
    width = len(key_ddl(query, {}))
    flat = list(row[:width])
    for a, cell in zip(query.aggregates, row[width:]):
        if a.func in ("SUM", "AVG"):
            total, n = cell
            flat += [total if n else None, n]
        else:
            flat.append(cell)
    return tuple(flat)


def map_in_arrow(df, fn, ddl: str):
    """``df.mapInArrow(fn, ddl)`` for columns of any name. pyspark's ``mapInArrow`` looks its
    input columns up by their bare names, so a name with a dot (``price.usd``) is read as a
    nested field and not found: the columns go in under plain positional names and ``fn`` sees
    its batches under the columns' own names again."""
    import pyarrow as pa

    names = list(df.columns)

    def renamed(batches):
        return fn(pa.RecordBatch.from_arrays(b.columns, names=names) for b in batches)

    return df.toDF(*[f"__c{i}" for i in range(len(names))]).mapInArrow(renamed, ddl)
