"""Batch evaluation on Spark: events DataFrame in, result DataFrame out.

The plan (:mod:`cepagg.plan`) names the engine and the split, and says why
(``cepagg explain``); this driver lays the events out for that split, runs the tasks
(:mod:`.tasks`) and merges their rows (:mod:`.merge`):

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

from ..errors import InputError, UsageError
from ..events import ID
from ..lang import Hierarchy, compile_query
from ..lang.concepts import check_types, with_hierarchy
from ..lang.model import TIME_UNITS_MS, Query
from ..matches import check_attribute_names, row_attributes
from ..plan import plan
from ..plan.split import time_slices
from ..units import UNIT_NS
from . import schema as S
from .merge import attach_attributes, in_order, merge_results
from .tasks import Spec, out_columns, run_keys, run_slices

# ----------------------------------------------------------------------------------------------
# Input


def prepare_events(df, *, type_column: str = "type", time_column: str = "ts", time_unit: str = "ms",
                   input_time_unit: str | None = None, on_bad_row: str = "error",
                   reject_path: str | None = None):
    """Normalise an events DataFrame to the columns ``_id, ts, type, <attributes>``.

    ``ts`` may be a timestamp (converted exactly to integers in ``time_unit``) or an integer in
    ``input_time_unit`` (default: ``time_unit``). Rows without type or time, or with a NaN or
    infinite attribute value, are bad rows: an error naming how many and showing some, or
    (``on_bad_row="reject"``) written to
    ``reject_path`` and counted on stderr. They are never dropped silently.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    _check_dataframe(df)
    for what, unit, units in (("time_unit", time_unit, TIME_UNITS_MS), ("input_time_unit", input_time_unit, UNIT_NS)):
        if unit is not None and unit not in units:
            raise UsageError(f"{what}={unit!r}: expected one of {', '.join(units)}")
    if on_bad_row not in ("error", "reject"):
        raise UsageError(f"on_bad_row={on_bad_row!r}: expected 'error' or 'reject'")
    for col in (type_column, time_column):
        if col not in df.columns:
            raise InputError(f"the events have no column {col!r} (columns: {', '.join(df.columns)})")
    ts_type = df.schema[time_column].dataType
    unit_ms = TIME_UNITS_MS[time_unit]
    if isinstance(ts_type, (T.TimestampType, T.TimestampNTZType)):
        micros = F.unix_micros(F.col(S.quoted(time_column)).cast("timestamp"))
        ts = (micros / F.lit(unit_ms * 1000)).cast("long")
        exact = micros % F.lit(unit_ms * 1000) == 0
    else:
        # a time that is not a whole number (1.5, "abc", beyond 64 bits) is null here: a bad row,
        # where a plain cast failed the job (ANSI) or cut 1.5 to 1 without a word
        whole = F.col(S.quoted(time_column)).try_cast("long")
        whole = F.when(whole == F.col(S.quoted(time_column)).try_cast("decimal(38,9)"), whole)
        in_ns, out_ns = UNIT_NS[input_time_unit or time_unit], UNIT_NS[time_unit]
        if in_ns >= out_ns:
            ts = (whole.cast("decimal(38,0)") * F.lit(in_ns // out_ns)).try_cast("long")
            exact = ts.isNotNull()
        else:
            ts, exact = (whole / F.lit(out_ns // in_ns)).cast("long"), whole % F.lit(out_ns // in_ns) == 0
        exact = F.coalesce(exact, F.lit(False))
    attrs = [c for c in df.columns if c not in (type_column, time_column)]
    renamed = [F.col(S.quoted(c)).alias(c + "_" if c in ("_id", "ts", "type") else c) for c in attrs]
    with_id = df if ID in df.columns else df.withColumn(ID, F.monotonically_increasing_id())
    bad_row = F.col(S.quoted(type_column)).isNull() | F.col(S.quoted(time_column)).isNull() | ~exact
    for c in (c for c in attrs if isinstance(df.schema[c].dataType, (T.FloatType, T.DoubleType))):
        # NaN and infinities: no engine adds or orders them exactly (as the file readers refuse them)
        value = F.col(S.quoted(c))
        bad_row = bad_row | F.coalesce(F.isnan(value) | (F.abs(value) == float("inf")), F.lit(False))
    events = with_id.select(
        F.col(ID).cast("long").alias(ID), ts.alias("ts"), F.col(S.quoted(type_column)).cast("string").alias("type"),
        bad_row.alias("__bad"), *renamed)
    bad = events.filter("__bad")
    if on_bad_row == "reject":
        if reject_path is None:
            raise InputError("on_bad_row='reject' needs reject_path")
        n = bad.count()
        if n:
            bad.drop("__bad").write.mode("overwrite").parquet(reject_path)
            print(f"cepagg: {n} bad row(s) (no type, no time, a time not whole in {time_unit}, or a NaN or "
                  f"infinite value) written to {reject_path}", file=sys.stderr)
    else:
        sample = bad.limit(3).collect()
        if sample:
            n = bad.count()
            raise InputError(f"{n} row(s) without a type, without a time, with a time that is not a "
                             f"whole number of {time_unit} or with a NaN or infinite value, e.g. "
                             f"{[r.asDict() for r in sample]}; "
                             "use on_bad_row='reject' to set them aside")
    return events.filter(~F.col("__bad")).drop("__bad")


def _check_dataframe(df) -> None:
    """Refuse an events argument that is not a Spark DataFrame (an EventBatch, a path, None) with
    a TypeError saying what to give."""
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise TypeError(f"df: a Spark DataFrame of events (e.g. spark.read.csv(path, header=True, "
                        f"inferSchema=True)), not {type(df).__name__}")


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
    return events.select(*[F.col(S.quoted(c)) for c in events.columns if c in (ID, "ts", "type") or c in read])


# ----------------------------------------------------------------------------------------------
# Driver


def run(df, query: str | Query, *, engine: str = "auto", type_column: str = "type",
        time_column: str = "ts", time_unit: str = "ms", input_time_unit: str | None = None,
        on_bad_row: str = "error", reject_path: str | None = None, parallelism: int | None = None,
        prepared: bool = False, delay: str = "0 seconds", hierarchy: Hierarchy | None = None,
        numbers: str = "exact", attributes: bool = True):
    """Evaluate ``query`` over the events DataFrame ``df``; the result as a DataFrame.

    Over a streaming DataFrame the result is a streaming DataFrame in Append mode
    (:func:`cepagg.spark.streaming.stream`, ``delay`` the watermark's): matches, SLIDE windows
    and EMIT ON CHANGE rows. Its matches carry no attributes (join them from the events by
    ``event_id``). A WITHIN-alone aggregate is revised as events come (Update mode) and is
    refused here: :func:`cepagg.spark.stream` returns it with its mode.

    Args:
        df: events with a type column, a time column and attribute columns.
        query: query text (or a compiled query; its text is recompiled on the workers).
        engine: "auto" (the fastest engine that accepts the query), or a name.
        type_column, time_column, time_unit, input_time_unit, on_bad_row, reject_path: see
            :func:`prepare_events`.
        parallelism: number of Spark partitions (default: the session's default parallelism).
        prepared: ``df`` already has the columns ``_id, ts, type`` (from :func:`prepare_events`).
        hierarchy: a concept hierarchy for the query's types (:mod:`cepagg.lang.concepts`); it
            travels to the workers inside the query text, as CONCEPT lines.
        numbers: "exact" (default: counts and integer sums as DECIMAL(38,0), equal to the
            reference) or "float" (COUNT, SUM and AVG computed and returned as doubles:
            approximate, faster on aseq and greta; :mod:`cepagg.engines.floats`).
        attributes: for a RETURN-of-events query, join each returned event's attributes (an
            attribute with the name of a result column, ``match`` say, is refused before the
            work); False: the result columns only (``cepagg run`` joins them as it writes).

    Returns:
        A DataFrame with ``query.output_columns`` (plus the event attributes for a
        RETURN-of-events query), sorted by them.

    Example (starts Spark, so not run as a doctest)::

        spark = get_session()
        events = spark.read.csv("examples/ticks.csv", header=True, inferSchema=True)
        run(events, "RETURN COUNT(*) PATTERN SEQ(Stock a, Stock b) WHERE a.price < b.price WITHIN 1 s").show()
    """
    _check_dataframe(df)
    if parallelism is not None and (not isinstance(parallelism, int) or parallelism < 1):
        raise UsageError(f"parallelism={parallelism!r}: give a positive number of partitions")
    if df.isStreaming:
        if hierarchy is not None:  # (the stream's workers read it from the text's CONCEPT lines)
            query = with_hierarchy(query.text if isinstance(query, Query) else query, hierarchy)
        return _streaming(df, query, engine=engine, type_column=type_column, time_column=time_column,
                          time_unit=time_unit, delay=delay, numbers=numbers)
    spark = df.sparkSession
    text = query.text if isinstance(query, Query) else query
    events = df if prepared else prepare_events(
        df, type_column=type_column, time_column=time_column, time_unit=time_unit,
        input_time_unit=input_time_unit, on_bad_row=on_bad_row, reject_path=reject_path)
    kinds = {f.name: S.spark_kind(f.dataType) for f in events.schema.fields if f.name not in (ID, "ts", "type")}
    q = compile_query(text, time_unit=time_unit, schema=kinds, hierarchy=hierarchy)
    text = q.text  # (with the merged hierarchy's CONCEPT lines)
    if q.returns_matches and attributes:
        check_attribute_names(q.output_columns, row_attributes(q, kinds))
    check_types_on_spark(events, [q])
    chosen = plan(q, engine, numbers)
    split, keys, partial, _why = chosen.split
    n = parallelism or spark.sparkContext.defaultParallelism
    ordered, split, t0, width = arrange(narrow(events, [q]), split, keys, n, q.within or 0)
    spec = Spec(text, time_unit, tuple(sorted(kinds.items())), chosen.engine, split, keys,
                partial and split != "single", t0=t0, width=width, numbers=numbers)
    body = run_keys if split == "key" else run_slices
    raw = S.map_in_arrow(ordered, lambda it: body(spec, it), S.ddl_string(out_columns(spec)))

    result = merge_results(raw, q, spec, kinds)
    if q.returns_matches and attributes:
        result = attach_attributes(result, events, q)
    return in_order(result)


def _streaming(df, query, **options):
    """:func:`run` over a streaming DataFrame: the result stream, when it is in Append mode."""
    from .streaming import stream

    out, mode = stream(df, query, **options)
    if mode != "Append":
        raise UsageError("run: over a stream, a WITHIN-alone aggregate is revised as events come (Update "
                         "mode); use cepagg.spark.stream, which returns the output mode, or cepagg.spark.start")
    return out


def check_types_on_spark(events, queries) -> None:
    """Before any work, for queries with a concept hierarchy: no event typed by a concept, no query
    type unknown to both the hierarchy and the events (one small job over the type column)."""
    if any(q.hierarchy for q in queries):
        types = [r[0] for r in events.select("type").distinct().collect()]
        check_types(queries, types)


def arrange(events, split: str, keys: tuple[str, ...], n: int, within: int):
    """The events laid out for the split: ``(ordered, split, t0, width)``.

    ``key``: repartitioned by the key, sorted by (key, ts, _id). ``time``: cut into the
    slices :func:`cepagg.plan.split.time_slices` gives for the events' time range, every event
    copied to each slice whose matches it may belong to (``within`` either side), sorted by
    (slice, ts, _id); an empty input becomes ``single``. ``single``: one partition in
    (ts, _id) order.
    """
    from pyspark.sql import functions as F

    if split == "key":
        by = [F.col(S.quoted(k)) for k in keys]  # (a bare name with a dot reads as a nested field)
        return events.repartition(n, *by).sortWithinPartitions(*by, "ts", ID), split, 0, 0
    if split == "time":
        bounds = events.agg(F.min("ts").alias("lo"), F.max("ts").alias("hi")).collect()[0]
        if bounds["lo"] is not None:
            t0, width = time_slices(int(bounds["lo"]), int(bounds["hi"]), within, n)
            first = F.floor((F.col("ts") - F.lit(t0 + within)) / F.lit(width))
            last = F.floor((F.col("ts") - F.lit(t0 - within)) / F.lit(width))
            sliced = events.withColumn("__slice", F.explode(F.sequence(first.cast("long"), last.cast("long"))))
            return sliced.repartition(n, "__slice").sortWithinPartitions("__slice", "ts", ID), split, t0, width
    ordered = events.withColumn("__slice", F.lit(0).cast("long")).repartition(1).sortWithinPartitions("ts", ID)
    return ordered, "single", 0, 0
