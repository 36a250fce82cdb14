"""Batch evaluation on Spark: events DataFrame in, result DataFrame out.

Two ways to split the work, chosen from the query (``explain_split`` says which and why):

* **by key** — queries with a partition key (GROUP BY or equivalence attributes): the events
  are repartitioned by the key and sorted by (key, ts, _id) within partitions; ``mapInArrow``
  streams each partition's Arrow batches through the engine one key at a time, so a worker
  holds one key's window, not its history.
* **by time** — queries without a partition key: time is cut into slices; each event is
  copied to the slices whose window margin covers it; each slice is evaluated with the
  engine's ``start_range`` option, so every match (window, instant) is counted by exactly one
  slice; the partial results are merged.

Where one group is fed by several partitions or slices, engines emit partial aggregates and
Spark merges them (sums add, minima and maxima combine, averages are sum over count). The
engine code, aggregate semantics included, is the same as in-process: nothing about
patterns is implemented here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..events import ID, EventBatch
from ..lang import compile_query
from ..lang.model import TIME_UNITS_MS, Query
from . import schema as S

_INTERNAL = ("__slice",)


@dataclass(frozen=True)
class Spec:
    """What a Spark task needs to rebuild the query and engine (pickled to the workers)."""

    text: str
    time_unit: str
    kinds: tuple[tuple[str, str], ...]
    engine: str
    split: str  # "key" | "time" | "single"
    keys: tuple[str, ...]
    partial: bool
    t0: int = 0
    width: int = 0

    def query(self) -> Query:
        return compiled(self.text, self.time_unit, self.kinds)


@lru_cache(maxsize=32)
def compiled(text: str, time_unit: str, kinds: tuple) -> Query:
    """A query compiled once per worker process (tasks get its text, not the bound object)."""
    return compile_query(text, time_unit=time_unit, schema=dict(kinds))


# ----------------------------------------------------------------------------------------------
# Input


def prepare_events(df, *, type_column: str = "type", time_column: str = "ts", time_unit: str = "ms",
                   input_time_unit: str | None = None, on_bad_row: str = "error",
                   reject_path: str | None = None):
    """Normalise an events DataFrame to the columns ``_id, ts, type, <attributes>``.

    ``ts`` may be a timestamp (converted exactly to integers in ``time_unit``) or an integer in
    ``input_time_unit`` (default: ``time_unit``). Rows without type or time are bad rows: an
    error naming how many and showing some, or (``on_bad_row="reject"``) written to
    ``reject_path`` and counted on stderr. They are never dropped silently.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    for col in (type_column, time_column):
        if col not in df.columns:
            raise InputError(f"the events have no column {col!r} (columns: {', '.join(df.columns)})")
    ts_type = df.schema[time_column].dataType
    unit_ms = TIME_UNITS_MS[time_unit]
    if isinstance(ts_type, (T.TimestampType, T.TimestampNTZType)):
        micros = F.unix_micros(F.col(time_column).cast("timestamp"))
        ts = (micros / F.lit(unit_ms * 1000)).cast("long")
        exact = micros % F.lit(unit_ms * 1000) == 0
    else:
        factor = TIME_UNITS_MS[input_time_unit or time_unit] / unit_ms
        if factor >= 1:
            ts, exact = F.col(time_column).cast("long") * F.lit(int(factor)), F.lit(True)
        else:
            div = int(round(1 / factor))
            ts, exact = (F.col(time_column).cast("long") / F.lit(div)).cast("long"), F.col(time_column) % div == 0
    attrs = [c for c in df.columns if c not in (type_column, time_column)]
    renamed = [F.col(f"`{c}`").alias(c + "_" if c in ("_id", "ts", "type") else c) for c in attrs]
    with_id = df if ID in df.columns else df.withColumn(ID, F.monotonically_increasing_id())
    events = with_id.select(
        F.col(ID).cast("long").alias(ID), ts.alias("ts"), F.col(type_column).cast("string").alias("type"),
        (F.col(type_column).isNull() | F.col(time_column).isNull() | ~exact).alias("__bad"), *renamed)
    bad = events.filter("__bad")
    if on_bad_row == "reject":
        if reject_path is None:
            raise InputError("on_bad_row='reject' needs reject_path")
        n = bad.count()
        if n:
            bad.drop("__bad").write.mode("overwrite").parquet(reject_path)
            print(f"cepagg: {n} bad row(s) (no type, no time, or a time not whole in {time_unit}) "
                  f"written to {reject_path}", file=sys.stderr)
    else:
        sample = bad.limit(3).collect()
        if sample:
            n = bad.count()
            raise InputError(f"{n} row(s) without a type, without a time or with a time that is not a "
                             f"whole number of {time_unit}, e.g. {[r.asDict() for r in sample]}; "
                             "use on_bad_row='reject' to set them aside")
    return events.filter(~F.col("__bad")).drop("__bad")


def narrow(events, queries):
    """Only the rows and columns that can change the queries' results.

    Moving events is what costs on Spark (the shuffle, the sort and the copy to Python take
    about 2 s per million rows here), and a query often reads a few of the stream's types and
    attributes: events of other types are dropped (unless a query counts positions, see
    :attr:`Query.input_types`) and so are columns no query reads.
    """
    from pyspark.sql import functions as F

    types: set[str] | None = set()
    for q in queries:
        t = q.input_types
        types = None if t is None or types is None else types | t
    if types is not None:
        events = events.filter(F.col("type").isin(sorted(types)))
    read = set().union(*(q.attributes for q in queries))
    return events.select(*[F.col(f"`{c}`") for c in events.columns if c in (ID, "ts", "type") or c in read])


# ----------------------------------------------------------------------------------------------
# Planning the split


def plan_split(query: Query) -> tuple[str, tuple[str, ...], bool, str]:
    """(split, key columns, partial, why) for a query."""
    unqualified_groups = tuple(g.attr for g in query.group_by if g.var is None)
    if query.mode == "emit":
        # an instant's value needs every partition of the group at once
        if unqualified_groups:
            return "key", unqualified_groups, False, "EMIT ON CHANGE: one task per group"
        keys: tuple[str, ...] = ()
    else:
        keys = query.partition_by
    if keys:
        merge = not set(keys) <= set(unqualified_groups)
        why = "partitioned by " + ", ".join(keys)
        if merge and not query.returns_matches:
            why += "; several partitions feed a group, their partial aggregates are merged"
        return "key", keys, merge and not query.returns_matches, why
    if query.within is None and query.within_events is None:
        return "single", (), False, "no window and no partition key: one task sees the whole stream"
    if query.within_events is not None:
        return "single", (), False, "tuple-count windows cannot be cut by time: one task"
    if query.mode == "emit" and any(g.var is not None for g in query.group_by):
        return "single", (), False, "EMIT ON CHANGE with GROUP BY X.a cannot be cut by time: one task"
    return "time", (), not query.returns_matches and query.mode != "emit", \
        "no partition key: time slices overlapping by the window, merged"


# ----------------------------------------------------------------------------------------------
# Workers


def _engine(spec: Spec, **options):
    from ..plan import plan

    return plan(spec.query(), spec.engine).build_with(**options)


def _out_cols(spec: Spec):
    q = spec.query()
    kinds = dict(spec.kinds)
    if spec.partial:
        return S.partial_ddl(q, kinds)
    cols = S.result_ddl(q, kinds)
    if q.returns_matches:
        cols = cols + [("__part", "string")]
    return cols


def _emit(spec: Spec, rows: list[tuple]) -> pa.RecordBatch:
    if spec.partial:
        rows = [S.flatten_partial(spec.query(), r) for r in rows]
    return S.to_arrow(rows, _out_cols(spec))


def _units(batches: Iterator[pa.RecordBatch], label) -> Iterator[tuple[object, pa.Table, bool]]:
    """Runs of consecutive rows with the same unit (a key, or a time slice) in sorted batches,
    and whether the run ends its batch (the unit may go on in the next one).

    ``label(table)`` gives the columns that make the unit and the table without helper
    columns; a unit is the tuple of those columns' values.
    """
    for rb in batches:
        if rb.num_rows == 0:
            continue
        columns, table = label(pa.Table.from_batches([rb]))
        starts = _run_starts(columns, rb.num_rows)
        units = list(zip(*(c.take(pa.array(starts)).to_pylist() for c in columns))) if columns \
            else [()] * len(starts)
        ends = list(starts[1:]) + [rb.num_rows]
        for unit, start, end in zip(units, starts, ends):
            yield unit, table.slice(start, end - start), end == rb.num_rows


def _run_starts(columns: list, n: int) -> np.ndarray:
    """Where a new run of equal values (nulls equal to nulls) begins, in rows 0..n-1."""
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for col in columns:
        a = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        differs = pc.not_equal(a.slice(1), a.slice(0, n - 1)).fill_null(False).to_numpy(zero_copy_only=False)
        valid = a.is_valid().to_numpy(zero_copy_only=False)
        change[1:] |= differs | (valid[1:] != valid[:-1])
    return np.flatnonzero(change)


def drive(batches, label, make_engine, emit) -> Iterator[pa.RecordBatch]:
    """One engine state per unit, in unit order; ``emit`` turns ``(row, unit)`` pairs into an
    Arrow batch (every 4,096 rows and at the end)."""
    current = engine = state = None
    out: list[tuple] = []
    for unit, table, goes_on in _units(batches, label):
        if unit != current:
            if state is not None:
                out += [(r, current) for r in engine.finish(state)]
            current = unit
            engine = make_engine(unit)
            state = engine.new_state()
        out += [(r, current) for r in engine.process(state, EventBatch(table))]
        # a unit's events come in time order: everything before this batch's last time has
        # been seen, so what waits on that (windows and EMIT ON CHANGE values merged over
        # several partitions) is released now instead of piling up until the unit ends -- once
        # per batch, where the unit may go on in the next (otherwise `finish` follows)
        if goes_on and engine.cheap_advance and table.num_rows:
            out += [(r, current) for r in engine.advance(state, pc.max(table.column("ts")).as_py() - 1)]
        if len(out) >= 4096:
            yield emit(out)
            out = []
    if state is not None:
        out += [(r, current) for r in engine.finish(state)]
    if out:
        yield emit(out)


def unit_label(spec: Spec):
    """``label(table) -> (unit columns, table)`` for the split: the key columns, or the time
    slice's number."""
    if spec.split == "key":
        def by_key(table: pa.Table):
            return [table.column(k) for k in spec.keys], table
        return by_key

    def by_slice(table: pa.Table):
        return [table.column("__slice")], table.drop(["__slice"])
    return by_slice


def slice_range(spec: Spec, unit: tuple[int]) -> tuple[int, int] | None:
    """The start range of the time slice ``unit`` (None when one task sees the whole stream)."""
    a = spec.t0 + unit[0] * spec.width
    return (a, a + spec.width) if spec.split == "time" else None


def run_keys(spec: Spec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: events sorted by (key, ts, _id); one engine state per key."""
    engine = _engine(spec, partial=spec.partial)  # the same engine serves every key
    return drive(batches, unit_label(spec), lambda key: engine, lambda out: _rows_batch(spec, out))


def run_slices(spec: Spec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: events sorted by (slice, ts, _id); one engine per slice (its range)."""
    return drive(batches, unit_label(spec),
                 lambda unit: _engine(spec, partial=spec.partial, start_range=slice_range(spec, unit)),
                 lambda out: _rows_batch(spec, out))


def _rows_batch(spec: Spec, tagged: list[tuple[tuple, object]]) -> pa.RecordBatch:
    """Result rows; a match also carries its unit, so that matches are numbered per unit."""
    q = spec.query()
    if q.returns_matches:
        return S.to_arrow([r + (repr(u),) for r, u in tagged], _out_cols(spec))
    return _emit(spec, [r for r, _ in tagged])


# ----------------------------------------------------------------------------------------------
# Driver


def run(df, query: str | Query, *, engine: str = "auto", type_column: str = "type",
        time_column: str = "ts", time_unit: str = "ms", input_time_unit: str | None = None,
        on_bad_row: str = "error", reject_path: str | None = None, parallelism: int | None = None,
        prepared: bool = False):
    """Evaluate ``query`` over the events DataFrame ``df``; the result as a DataFrame.

    Args:
        df: events with a type column, a time column and attribute columns.
        query: query text (or a compiled query; its text is recompiled on the workers).
        engine: "auto" (the fastest engine that accepts the query), or a name.
        type_column, time_column, time_unit, input_time_unit, on_bad_row, reject_path: see
            :func:`prepare_events`.
        parallelism: number of Spark partitions (default: the session's default parallelism).
        prepared: ``df`` already has the columns ``_id, ts, type`` (from :func:`prepare_events`).

    Returns:
        A DataFrame with ``query.output_columns`` (plus the event attributes for a
        RETURN-of-events query), sorted by them.

    >>> # doctest: +SKIP
    >>> spark = get_session()
    >>> events = spark.read.parquet("ticks.parquet")
    >>> run(events, "RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 1 s").show()
    """
    spark = df.sparkSession
    text = query.text if isinstance(query, Query) else query
    events = df if prepared else prepare_events(
        df, type_column=type_column, time_column=time_column, time_unit=time_unit,
        input_time_unit=input_time_unit, on_bad_row=on_bad_row, reject_path=reject_path)
    kinds = {f.name: S.spark_kind(f.dataType) for f in events.schema.fields if f.name not in (ID, "ts", "type")}
    q = compile_query(text, time_unit=time_unit, schema=kinds)
    from ..plan import plan

    engine_name = plan(q, engine).engine
    split, keys, partial, _why = plan_split(q)
    n = parallelism or spark.sparkContext.defaultParallelism
    ordered, split, t0, width = arrange(narrow(events, [q]), split, keys, n, q.within or 0)
    spec = Spec(text, time_unit, tuple(sorted(kinds.items())), engine_name, split, keys,
                partial and split != "single", t0=t0, width=width)
    body = run_keys if split == "key" else run_slices
    raw = ordered.mapInArrow(lambda it: body(spec, it), S.ddl_string(_out_cols(spec)))

    result = _finish(raw, q, spec, kinds)
    if q.returns_matches:
        result = _attach_attributes(result, events)
    return in_order(result)


def in_order(result):
    """The result sorted by all its columns, in one partition.

    Not ``orderBy``: a global sort first samples its input with a job of its own, which ran the
    whole evaluation a second time (local[2] took 1.5x as long as local[1], with twice the
    CPU). Results are aggregates, or matches a caller collects: one partition holds them.
    """
    from pyspark.sql import functions as F

    return result.repartition(1).sortWithinPartitions(*[F.col(f"`{c}`") for c in result.columns])


def arrange(events, split: str, keys: tuple[str, ...], n: int, within: int):
    """The events laid out for the split: ``(ordered, split, t0, width)``.

    ``key``: repartitioned by the key, sorted by (key, ts, _id). ``time``: cut into slices of
    ``width`` starting at ``t0``, every event copied to each slice whose matches it may belong
    to (``within`` either side), sorted by (slice, ts, _id); an empty input becomes
    ``single``. ``single``: one partition in (ts, _id) order.
    """
    from pyspark.sql import functions as F

    if split == "key":
        return events.repartition(n, *keys).sortWithinPartitions(*keys, "ts", ID), split, 0, 0
    if split == "time":
        bounds = events.agg(F.min("ts").alias("lo"), F.max("ts").alias("hi")).collect()[0]
        if bounds["lo"] is not None:
            t0 = int(bounds["lo"])
            width = int(max(within, -(-(bounds["hi"] - bounds["lo"] + 1) // (4 * n))))
            first = F.floor((F.col("ts") - F.lit(t0 + within)) / F.lit(width))
            last = F.floor((F.col("ts") - F.lit(t0 - within)) / F.lit(width))
            sliced = events.withColumn("__slice", F.explode(F.sequence(first.cast("long"), last.cast("long"))))
            return sliced.repartition(n, "__slice").sortWithinPartitions("__slice", "ts", ID), split, t0, width
    ordered = events.withColumn("__slice", F.lit(0).cast("long")).repartition(1).sortWithinPartitions("ts", ID)
    return ordered, "single", 0, 0


def _finish(raw, q: Query, spec: Spec, kinds: dict[str, str]):
    """Merge partial rows, drop unchanged EMIT rows, number matches globally."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key_cols = [c for c, _ in S.key_ddl(q, kinds)]
    if spec.partial:
        aggs = []
        for i, a in enumerate(q.aggregates):
            if a.func in ("SUM", "AVG"):
                aggs += [F.sum(f"__sum{i}").alias(f"__sum{i}"), F.sum(f"__n{i}").alias(f"__n{i}")]
            elif a.func == "COUNT":
                aggs.append(F.sum(f"__agg{i}").cast(S.EXACT).alias(f"__agg{i}"))
            else:
                aggs.append((F.min if a.func == "MIN" else F.max)(f"__agg{i}").alias(f"__agg{i}"))
        merged = raw.groupBy(*key_cols).agg(*aggs) if key_cols else raw.agg(*aggs)
        cols = [F.col(f"`{c}`") for c in key_cols]
        for i, a in enumerate(q.aggregates):
            if a.func == "SUM":
                value = F.when(F.col(f"__n{i}") > 0, F.col(f"__sum{i}"))
                if kinds.get(a.attr) == "int" or a.attr == "ts":
                    value = value.cast(S.EXACT)
                cols.append(value.alias(a.column))
            elif a.func == "AVG":
                cols.append(F.when(F.col(f"__n{i}") > 0, F.col(f"__sum{i}").cast("double") /
                                   F.col(f"__n{i}")).alias(a.column))
            elif a.func == "COUNT":
                count = F.col(f"__agg{i}")
                cols.append((F.coalesce(count, F.lit(0).cast(S.EXACT)) if not key_cols else count).alias(a.column))
            else:
                cols.append(F.col(f"__agg{i}").alias(a.column))
        return merged.select(*cols)
    if q.mode == "emit" and spec.split == "time":
        groups = [F.col(f"`{g.column}`") for g in q.group_by]
        values = [a.column for a in q.aggregates]
        order = Window.partitionBy(*groups).orderBy("ts") if groups else Window.orderBy("ts")
        prev = [F.lag(F.col(f"`{v}`")).over(order) for v in values]
        first = F.row_number().over(order) == 1
        empty = F.lit(True)
        for a, v in zip(q.aggregates, values):
            empty = empty & ((F.col(f"`{v}`") == 0) if a.func == "COUNT" else F.col(f"`{v}`").isNull())
        changed = F.lit(False)
        for v, p in zip(values, prev):
            changed = changed | ~F.col(f"`{v}`").eqNullSafe(p)
        keep = F.when(first, ~empty).otherwise(changed)
        return raw.withColumn("__keep", keep).filter("__keep").drop("__keep")
    if q.returns_matches:
        order = [F.col(f"`{c}`") for c in key_cols] + [F.col("__part"), F.col("match")]
        numbered = raw.withColumn("__m", F.dense_rank().over(Window.orderBy(*order)))
        return numbered.withColumn("match", F.col("__m").cast("long")).drop("__m", "__part")
    return raw


def _attach_attributes(result, events):
    attrs = [c for c in events.columns if c not in (ID, "ts", "type")]
    if not attrs:
        return result
    lookup = events.select(ID, *attrs).withColumnRenamed(ID, "event_id")
    joined = result.join(lookup, on="event_id", how="left")
    return joined.select(*[f"`{c}`" for c in result.columns], *[f"`{c}`" for c in attrs])
