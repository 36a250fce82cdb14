"""Results of a Spark job put together on the driver: partial rows merged, unchanged EMIT rows
dropped, matches numbered, event attributes attached, the result sorted.

The batch and workload drivers both finish their jobs here (:func:`merge_results`), so the
semantics of merging (sums add, minima and maxima combine, averages are sum over count) are
written once for Spark, as :func:`cepagg.engines.aggregates.combine_rows` writes them in
process.
"""

from __future__ import annotations

from ..events import ID
from ..lang.model import Query
from . import schema as S
from .tasks import Spec


def merge_results(raw, q: Query, spec: Spec, kinds: dict[str, str]):
    """Merge partial rows, drop unchanged EMIT rows, number matches globally."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key_cols = [c for c, _ in S.key_ddl(q, kinds)]
    floats = spec.numbers == "float"  # counts and sums are doubles (cepagg.engines.floats)
    count_type = "double" if floats else S.EXACT
    if spec.partial:
        aggs = []
        for i, a in enumerate(q.aggregates):
            if a.func in ("SUM", "AVG"):
                aggs += [F.sum(f"__sum{i}").alias(f"__sum{i}"), F.sum(f"__n{i}").alias(f"__n{i}")]
            elif a.func == "COUNT":
                aggs.append(F.sum(f"__agg{i}").cast(count_type).alias(f"__agg{i}"))
            else:
                aggs.append((F.min if a.func == "MIN" else F.max)(f"__agg{i}").alias(f"__agg{i}"))
        merged = raw.groupBy(*[F.col(S.quoted(c)) for c in key_cols]).agg(*aggs) if key_cols else raw.agg(*aggs)
        cols = [F.col(S.quoted(c)) for c in key_cols]
        for i, a in enumerate(q.aggregates):
            if a.func == "SUM":
                value = F.when(F.col(f"__n{i}") > 0, F.col(f"__sum{i}"))
                if (kinds.get(a.attr) == "int" or a.attr == "ts") and not floats:
                    value = value.cast(S.EXACT)
                cols.append(value.alias(a.column))
            elif a.func == "AVG":
                cols.append(F.when(F.col(f"__n{i}") > 0, F.col(f"__sum{i}").cast("double") /
                                   F.col(f"__n{i}")).alias(a.column))
            elif a.func == "COUNT":
                count = F.col(f"__agg{i}")
                cols.append((F.coalesce(count, F.lit(0).cast(count_type)) if not key_cols else count).alias(a.column))
            else:
                cols.append(F.col(f"__agg{i}").alias(a.column))
        return merged.select(*cols)
    if q.mode == "emit" and spec.split == "time":
        groups = [F.col(S.quoted(g.column)) for g in q.group_by]
        values = [a.column for a in q.aggregates]
        order = Window.partitionBy(*groups).orderBy("ts") if groups else Window.orderBy("ts")
        prev = [F.lag(F.col(S.quoted(v))).over(order) for v in values]
        first = F.row_number().over(order) == 1
        empty = F.lit(True)
        for a, v in zip(q.aggregates, values):
            empty = empty & ((F.col(S.quoted(v)) == 0) if a.func == "COUNT" else F.col(S.quoted(v)).isNull())
        changed = F.lit(False)
        for v, p in zip(values, prev):
            changed = changed | ~F.col(S.quoted(v)).eqNullSafe(p)
        keep = F.when(first, ~empty).otherwise(changed)
        return raw.withColumn("__keep", keep).filter("__keep").drop("__keep")
    if q.returns_matches:
        order = [F.col(S.quoted(c)) for c in key_cols] + [F.col("__part"), F.col("match")]
        numbered = raw.withColumn("__m", F.dense_rank().over(Window.orderBy(*order)))
        return numbered.withColumn("match", F.col("__m").cast("long")).drop("__m", "__part")
    if q.mode == "total" and not q.group_by:
        return _one_row(raw, q)
    return raw


def _one_row(raw, q: Query):
    """A WITHIN-alone aggregate without GROUP BY has one row even with no match (COUNT 0, the
    others null; docs/semantics.md §7). An engine's task gives it; where no task ran (no event
    of the query's types reached a task) it is added here. ``raw`` has at most one row."""
    from decimal import Decimal

    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    counts = {a.column for a in q.aggregates if a.func == "COUNT"}
    zero = {T.DecimalType: Decimal(0), T.DoubleType: 0.0}
    empty = [zero.get(type(f.dataType), 0) if f.name in counts else None for f in raw.schema.fields]
    fallback = raw.sparkSession.createDataFrame([empty], raw.schema).withColumn("__fallback", F.lit(1))
    both = raw.withColumn("__fallback", F.lit(0)).unionByName(fallback)
    return both.orderBy("__fallback").limit(1).drop("__fallback")


def attach_attributes(result, events, q: Query):
    """The attributes of each returned event joined to a RETURN-of-events result: those of the
    long form in-process (:func:`cepagg.matches.row_attributes`: not a partition attribute that
    is also a group column, which the result already holds)."""
    from ..matches import row_attributes

    attrs = row_attributes(q, [c for c in events.columns if c not in (ID, "ts", "type")])
    if not attrs:
        return result
    lookup = events.select(ID, *[S.quoted(c) for c in attrs]).withColumnRenamed(ID, "event_id")
    joined = result.join(lookup, on="event_id", how="left")
    return joined.select(*[S.quoted(c) for c in result.columns], *[S.quoted(c) for c in attrs])


def in_order(result):
    """The result sorted by all its columns, in one partition.

    Not ``orderBy``: a global sort first samples its input with a job of its own, which ran the
    whole evaluation a second time (local[2] took 1.5x as long as local[1], with twice the
    CPU). Results are aggregates, or matches a caller collects: one partition holds them.
    """
    from pyspark.sql import functions as F

    return result.repartition(1).sortWithinPartitions(*[F.col(S.quoted(c)) for c in result.columns])
