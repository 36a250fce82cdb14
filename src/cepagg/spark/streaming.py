"""Structured Streaming: the engine inside ``transformWithStateInPandas``, state per hash bucket.

Measured on these machines: every Python stateful call costs about 1 ms per key per
micro-batch, so events are grouped by a **hash bucket** of the attributes the plan
names (:attr:`cepagg.plan.Plan.bucket_keys`), not by the key: one bucket's engine state (which
keeps its partitions apart itself) is one blob in a ValueState, written through the engine's
versioned ``snapshot`` and read through its ``restore``. What is done to a bucket (buffering,
releasing events to the engine, revisions) is :mod:`cepagg.spark.bucket`, without Spark; this
module speaks to Spark (state store, timers, watermark, sinks).

Time: Spark's watermark (``withWatermark(event time, delay)``) bounds lateness. Events are
buffered per bucket and released to the engine in time order once the watermark has passed
them (K-slack with K = the delay); then ``engine.advance`` returns the windows that closed.
Event-time timers wake a bucket when the watermark passes its oldest buffered event or its
last open window, also in micro-batches without data for it. Rows older than the watermark are
dropped by Spark before they reach the operator; the query's progress reports count them
(:func:`dropped_by_watermark`, :class:`cepagg.spark.progress.BatchLines`), and ``cepagg stream``
says how many, so nothing is lost silently.

Output: Append for final rows (SLIDE windows, EMIT ON CHANGE instants, matches); Update for
WITHIN-alone totals, which are revised as input arrives: each row carries a ``revision``
number per group, and the sink keeps the highest (see :func:`start` and :func:`read_latest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..events import ID
from ..lang import compile_query
from ..lang.model import TIME_UNITS_MS, Query
from ..plan import plan
from ..runner import check_concepts
from . import schema as S
from .bucket import END_WATERMARK_MS, BucketState, admit, pack_bucket, release, revise, unpack_bucket, wake_times
from .tasks import compiled

# BucketState, imported above, also loads the pickles of checkpoints written while the bucket's
# steps were in this module: they name it cepagg.spark.streaming.BucketState

OP_ID, OP_TIME, OP_BUCKET = "cepagg_id", "cepagg_event_time", "cepagg_bucket"


def operator_input(kinds: dict[str, str]):
    """(columns, names): the event columns as the stateful operator receives them.

    Spark hands pandas the columns renamed by position where a name is no Python identifier or
    starts with "_" (its rows are named tuples): ``_id``, ``trip id``, ``class``. So the
    identity travels as ``cepagg_id`` and every attribute as ``cepagg_attr<i>``;
    :func:`event_names` gives the real names back, in the same order.
    """
    from pyspark.sql import functions as F

    cols = [F.col(ID).alias(OP_ID), F.col("ts"), F.col("type")]
    names = [OP_ID, "ts", "type"]
    for i, a in enumerate(sorted(kinds)):
        op = f"cepagg_attr{i}"
        cols.append(F.col(S.quoted(a)).alias(op))
        names.append(op)
    return cols, tuple(names)


def event_names(kinds) -> list[str]:
    """The real names of the operator's input columns (see :func:`operator_input`)."""
    return [ID, "ts", "type"] + sorted(dict(kinds))


@dataclass(frozen=True)
class StreamSpec:
    text: str
    time_unit: str
    kinds: tuple[tuple[str, str], ...]
    engine: str
    input_columns: tuple[str, ...]  # event columns in the order the operator receives them
    on_late: str = "count"  # "count": count and keep samples; "fail": stop the query
    numbers: str = "exact"  # "exact" | "float" (cepagg.engines.floats)

    def query(self) -> Query:
        return compiled(self.text, self.time_unit, self.kinds)

    @property
    def update_mode(self) -> bool:
        q = self.query()
        return q.mode == "total" and not q.returns_matches


@lru_cache(maxsize=16)
def _engine(spec: StreamSpec):
    return plan(spec.query(), spec.engine, spec.numbers).build()


def output_columns(spec: StreamSpec) -> list[tuple[str, str]]:
    cols = S.result_ddl(spec.query(), dict(spec.kinds), spec.numbers)
    if spec.update_mode:
        cols = cols + [("revision", "bigint")]
    return cols


def events_of(spec: StreamSpec, pdf) -> pa.Table:
    """The event columns of a pandas chunk the operator received, with their real names (see
    :func:`operator_input`) and the attribute types of the query's schema (pandas turns integer
    columns with nulls into floats)."""
    kinds = dict(spec.kinds)
    table = pa.Table.from_pandas(pdf[list(spec.input_columns)], preserve_index=False)
    table = table.rename_columns(event_names(spec.kinds))
    for name in kinds:
        want = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}.get(kinds[name], pa.string())
        i = table.column_names.index(name)
        if table.column(i).type != want:
            table = table.set_column(i, name, pa.compute.cast(table.column(i), want))
    return table


def _processor_class():
    from pyspark.sql.streaming import StatefulProcessor

    class CepaggProcessor(StatefulProcessor):
        """One bucket (:mod:`cepagg.spark.bucket`) per grouping key: read from the state store,
        given the call's events and watermark, asked for its timers, written back."""

        def __init__(self, spec: StreamSpec):
            self.spec = spec

        def init(self, handle) -> None:
            self.handle = handle
            self.blob = handle.getValueState("blob", "b binary")
            # the watermark the bucket was last brought to: a timer that fires at the same
            # watermark (in the batch whose input just ran) has nothing to do, and reading this
            # one number spares unpickling the whole bucket
            self.clock = handle.getValueState("clock", "wm bigint")

        def handleInputRows(self, key, rows, timerValues) -> Iterator:
            st = self._load()
            for pdf in rows:
                if len(pdf):
                    admit(st, events_of(self.spec, pdf), self.spec.on_late)
            yield from self._release(st, timerValues.getCurrentWatermarkInMs())

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator:
            watermark_ms = timerValues.getCurrentWatermarkInMs()
            if self.clock.exists() and self.clock.get()[0] == watermark_ms:
                return  # released at this very watermark: the same release again gives nothing
            yield from self._release(self._load(), watermark_ms)

        def _release(self, st: BucketState, watermark_ms: int) -> Iterator:
            spec = self.spec
            q = spec.query()
            self.clock.update((watermark_ms,))
            rows = release(st, _engine(spec), q, spec.time_unit, watermark_ms,
                           check=lambda batch: check_concepts([q], batch, names=False))  # (no event typed by a concept)
            for at in wake_times(st, spec.time_unit):
                self.handle.registerTimer(at)
            if rows and spec.update_mode:
                rows = revise(st, rows, len(q.group_by))
            self.blob.update((pack_bucket(_engine(spec), st),))
            if rows:
                yield S.to_arrow(rows, output_columns(spec)).to_pandas()

        def _load(self) -> BucketState:
            engine = _engine(self.spec)
            if self.blob.exists():
                return unpack_bucket(self.blob.get()[0], engine)
            return BucketState(engine_state=engine.new_state())

        def close(self) -> None:
            pass

    return CepaggProcessor


def event_columns(df, type_column: str, time_column: str, time_unit: str):
    """(events, attribute kinds): the stream with columns ``type``, ``ts`` (an integer in
    ``time_unit``; timestamps are converted) and ``_id`` (added when missing)."""
    from pyspark.sql import functions as F

    events = df
    if type_column != "type":
        events = events.withColumnRenamed(type_column, "type")
    if time_column != "ts":
        events = events.withColumnRenamed(time_column, "ts")
    if str(events.schema["ts"].dataType).startswith("Timestamp"):
        unit = TIME_UNITS_MS[time_unit]
        events = events.withColumn("ts", (F.unix_micros("ts") / (unit * 1000)).cast("long"))
    if ID not in events.columns:
        events = events.withColumn(ID, F.monotonically_increasing_id())
    kinds = {f.name: S.spark_kind(f.dataType) for f in events.schema.fields if f.name not in (ID, "ts", "type")}
    return events, kinds


def with_trigger(writer, checkpoint: str | None, available_now: bool, processing_time: str | None):
    """The checkpoint and trigger options every cepagg streaming sink takes."""
    if checkpoint:
        writer = writer.option("checkpointLocation", checkpoint)
    if available_now:
        return writer.trigger(availableNow=True)
    if processing_time:
        return writer.trigger(processingTime=processing_time)
    return writer


def progress_reports(q) -> list[dict]:
    """The query's recent progress reports as dicts."""
    import json

    return [p if isinstance(p, dict) else json.loads(p.json) for p in q.recentProgress or []]


def run_until(q, done, timeout: float, progress=None, interrupted=None):
    """Wait until ``done(q)`` (re-raising the query's failure), then stop ``q``.

    ``progress(q)``, when given, is called while waiting and once more at the end (e.g.
    :class:`cepagg.spark.progress.BatchLines`). ``interrupted()``, when given, is asked between
    looks at the query: when it says True the wait ends with KeyboardInterrupt (the query
    stopped), raised here rather than inside a call to Spark."""
    import time as _time

    deadline = _time.monotonic() + timeout
    try:
        while _time.monotonic() < deadline:
            if interrupted is not None and interrupted():
                raise KeyboardInterrupt
            if q.exception() is not None:
                raise q.exception()
            if progress is not None:
                progress(q)
            if done(q):
                break
            _time.sleep(0.2)
        else:
            raise TimeoutError(f"the stream did not end within {timeout:.0f} s")
    finally:
        q.stop()
        if progress is not None:
            progress(q)
    return q


def follow(running, interrupted=None) -> None:
    """Wait until every query of ``running``, pairs ``(query, progress)``, has ended (they run
    until stopped, or fail: the first failure is raised); ``progress(query)`` is called for
    each while they run and once after it ended, so that it reports every micro-batch the
    query finished, also those just before a failure (None: no progress). ``interrupted``: as
    for :func:`run_until` (the queries are left running; the caller stops them)."""
    import time as _time

    active = list(running)
    while active:
        if interrupted is not None and interrupted():
            raise KeyboardInterrupt
        for q, progress in list(active):
            ended = not q.isActive  # (asked first: the progress below covers every batch before the end)
            if progress is not None:
                progress(q)
            if ended:
                active.remove((q, progress))
                if q.exception() is not None:
                    raise q.exception()
        _time.sleep(0.5)


def stream(df, query: str | Query, *, engine: str = "auto", type_column: str = "type",
           time_column: str = "ts", time_unit: str = "ms", delay: str = "0 seconds",
           buckets: int = 16, on_late: str = "count", numbers: str = "exact"):
    """The result stream of ``query`` over the streaming events DataFrame ``df``.

    Args:
        df: a streaming DataFrame with a type column, a time column (integer in ``time_unit``,
            or a timestamp) and attributes, e.g. ``spark.readStream.format("cepagg")...``.
        delay: how late an event may arrive (Spark's watermark delay, e.g. "5 seconds").
        buckets: number of hash buckets of the partition key (the unit of Spark state).
        on_late: an event later than ``delay`` is counted (``"count"``, see :func:`late_events`)
            or stops the query (``"fail"``); it is never dropped silently.
        numbers: "exact" or "float" (COUNT, SUM and AVG as doubles; see :func:`cepagg.spark.run`).

    Returns:
        (result DataFrame, output mode) — start it with :func:`start` or ``writeStream``.
    """
    from pyspark.sql import functions as F

    text = query.text if isinstance(query, Query) else query
    events, kinds = event_columns(df, type_column, time_column, time_unit)
    unit = TIME_UNITS_MS[time_unit]
    q = compile_query(text, time_unit=time_unit, schema=kinds)
    chosen = plan(q, engine, numbers)
    engine_name, keys = chosen.engine, chosen.bucket_keys
    bucket = F.pmod(F.xxhash64(*[F.col(S.quoted(k)) for k in keys]), F.lit(buckets)) if keys else F.lit(0)
    cols, ordered_cols = operator_input(kinds)
    events = (events.withColumn(OP_BUCKET, bucket.cast("int"))  # (by the attributes' names, before the select)
              .select(*cols, OP_BUCKET)
              .withColumn(OP_TIME, F.timestamp_millis(F.col("ts") * F.lit(unit)))
              .withWatermark(OP_TIME, delay)
              .drop(OP_TIME))  # the watermark is set; the operator does not need the column
    spec = StreamSpec(text, time_unit, tuple(sorted(kinds.items())), engine_name, tuple(ordered_cols),
                      on_late, numbers)
    mode = "Update" if spec.update_mode else "Append"
    out = events.groupBy(OP_BUCKET).transformWithStateInPandas(
        statefulProcessor=_processor_class()(spec),
        outputStructType=S.ddl_string(output_columns(spec)),
        outputMode=mode, timeMode="EventTime")
    return out, mode


def start(df, query: str | Query, *, out: str | None = None, format: str = "parquet",
          checkpoint: str | None = None, available_now: bool = True, processing_time: str | None = None,
          count_out: bool = False, **options):
    """Run :func:`stream` into a sink and return the StreamingQuery (see also :func:`run_to_end`;
    ``count_out``: see :func:`_start`)."""
    return _start(df, query, out=out, format=format, checkpoint=checkpoint, available_now=available_now,
                  processing_time=processing_time, count_out=count_out, **options)


def workload_jobs(workload: str, out: str, checkpoint: str | None) -> list[tuple[str, str, str, str | None]]:
    """(name, query text, sink path, checkpoint) per query of a workload file: results go to
    ``out/<name>``, state to ``checkpoint/<name>``."""
    from ..lang.workload import split_workload

    return [(name, text, f"{out}/{name}", f"{checkpoint}/{name}" if checkpoint else None)
            for name, text in split_workload(workload)]


def check_workload(df, workload: str, *, time_unit: str = "ms", engine: str = "auto", numbers: str = "exact",
                   type_column: str = "type", time_column: str = "ts", **_) -> None:
    """Compile and plan every query of a workload over the stream's columns before any of them
    starts: a query that cannot run is refused naming it (and its line in the file), not after
    the queries before it have run to the end of the input."""
    from ..errors import UnsupportedQuery
    from ..lang.workload import compile_workload

    _, kinds = event_columns(df, type_column, time_column, time_unit)
    for name, q in compile_workload(workload, time_unit=time_unit, schema=kinds):
        try:
            plan(q, engine, numbers)
        except UnsupportedQuery as e:
            raise UnsupportedQuery(e.engine, f"{e.reason} (query {name})") from None


def start_workload(df, workload: str, *, out: str, checkpoint: str | None = None, **options) -> dict:
    """Start one streaming query per query of a workload file: ``{name: StreamingQuery}``.

    In streaming the queries do not share an engine (each has its own state and timers; the
    sharing of :func:`cepagg.spark.run_workload` is for batch jobs), as the workload's plan says
    (:data:`cepagg.plan.planner.STREAMING_APART`, printed by ``cepagg explain``); they read the
    same source.
    See :func:`workload_jobs` for where each writes.
    """
    check_workload(df, workload, **options)
    return {name: _start(df, text, out=path, checkpoint=chk, **options)
            for name, text, path, chk in workload_jobs(workload, out, checkpoint)}


def run_to_end(df, query: str | Query, *, timeout: float = 3600.0, progress=None, interrupted=None,
               **options):
    """Run a stream whose source ends with the end-of-stream event (``format("cepagg")`` with
    ``finite=true``) until that event has closed every window, then stop it.

    Micro-batches follow one another without pause (the source's ``maxEventsPerBatch`` or
    ``rate`` cuts them); the run stops after the batch in which the watermark passed the end,
    which is the batch that flushed the last windows. ``progress``, ``interrupted``: see
    :func:`run_until`.
    """
    q = _start(df, query, available_now=False, processing_time="0 seconds",
               count_out=progress is not None, **options)
    return run_until(q, flushed, timeout, progress, interrupted)


def flushed(q) -> bool:
    """Whether query ``q`` has seen the end-of-input watermark and a batch with no input after
    it: every row it will ever write is written (the test for `run_until` of a finite stream)."""
    from datetime import datetime

    for report in progress_reports(q):
        wm = (report.get("eventTime") or {}).get("watermark")
        if wm and report.get("batchId", -1) >= 0:
            at = datetime.fromisoformat(wm.replace("Z", "+00:00")).timestamp() * 1000
            if at > END_WATERMARK_MS and int(report.get("numInputRows", 0)) == 0:
                return True
    return False


def file_options(format: str) -> dict[str, str]:
    """Writer options of a file format as users read it: CSV files start with a header."""
    return {"header": "true"} if format == "csv" else {}


def write_batch(rows, batch_id: int, out: str, format: str) -> None:
    """One micro-batch's ``rows`` into ``out/batch=<id>``, replacing what an earlier attempt of
    the same batch wrote (with the checkpoint: exactly once; a batch run again has the same
    input and state, so the same rows).

    A batch without rows writes nothing, except batch 0: Spark writes a file without rows for
    an empty DataFrame (a CSV header alone, a Parquet schema, an empty JSON file), and most
    micro-batches of a stream have no rows; batch 0's file keeps a Parquet or CSV output
    readable by ``spark.read`` before any row is written. An empty JSON file names no column
    (``spark.read.json`` gives a frame without columns); :func:`read_latest` reads every
    format, an output without rows as the query's columns without rows. ``rows`` is computed
    twice (is it empty, then the write): the caller persists the micro-batch (a stateful
    operator must not run twice)."""
    if batch_id == 0 or not rows.isEmpty():
        rows.write.mode("overwrite").format(format).options(**file_options(format)).save(f"{out}/batch={batch_id}")


def _start(df, query: str | Query, *, out: str | None = None, format: str = "parquet",
           checkpoint: str | None = None, available_now: bool = True, processing_time: str | None = None,
           count_out: bool = False, **options):
    """Run :func:`stream` into a sink and return the StreamingQuery.

    Append-mode results go to Spark's file sink (exactly once through its commit log) or the
    console. Update-mode results (WITHIN-alone totals) are written per micro-batch with rows
    into ``out/batch=<id>`` (:func:`write_batch`). :func:`read_latest` gives the current value
    per group.
    ``count_out``: count the output rows of every micro-batch for its progress line
    (:class:`cepagg.spark.progress.BatchLines`).
    """
    result, mode = stream(df, query, **options)
    if count_out:
        from .progress import count_rows_out

        result = count_rows_out(result)
    writer = with_trigger(result.writeStream, checkpoint, available_now, processing_time)
    if format == "console":
        return writer.outputMode(mode).format("console").option("truncate", "false").start()
    if out is None:
        raise ValueError("give out=PATH for a file sink")
    if mode == "Append":
        return writer.outputMode("append").format(format).options(**file_options(format)).option("path", out).start()

    def upsert(batch_df, batch_id: int) -> None:
        batch_df = batch_df.persist()
        write_batch(batch_df, batch_id, out, format)
        batch_df.unpersist()

    return writer.outputMode("update").foreachBatch(upsert).start()


def read_latest(spark, path: str, query: str | Query, format: str = "parquet"):
    """The current result of an Update-mode run: the highest revision of every group
    (``format``: the run's ``--out-format``, parquet, csv or json).

    Output of the ordering layer (:mod:`cepagg.spark.order`, rows with a ``kind`` column) is
    netted per group and window/instant (latest revision, retracted keys dropped) or, for
    matches, per match number (deleted matches dropped).

    An output without rows gives the query's columns without rows; their types are in no
    file of a CSV or JSON output (a header, an empty file), so they are strings there."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    q = query if isinstance(query, Query) else compile_query(query)
    reader = spark.read.format(format)
    if format == "csv":  # (written with a header; the revision compared as a number, not as text)
        reader = reader.option("header", "true").option("inferSchema", "true")
    df = reader.load(path)
    if "revision" not in df.columns:  # (JSON files without rows: no column at all)
        return spark.createDataFrame([], S.ddl_string([(c, "string") for c in q.output_columns]))
    if "kind" in df.columns:
        from ..engines.aggregates import key_width

        cols = [F.col(S.quoted(c)) for c in q.output_columns]
        keys = cols[q.output_columns.index("match"):][:1] if q.returns_matches else cols[:key_width(q)]
        w = Window.partitionBy(*keys) if keys else Window.partitionBy(F.lit(0))
        latest = (df.withColumn("__top", F.max("revision").over(w))
                  .filter((F.col("revision") == F.col("__top")) & F.col("kind").isin("row", "revision", "insert")))
        return latest.select(*cols)
    groups = [g.column for g in q.group_by]
    w = Window.partitionBy(*[F.col(S.quoted(g)) for g in groups]).orderBy(F.col("revision").desc()) if groups else \
        Window.orderBy(F.col("revision").desc())
    latest = df.withColumn("__r", F.row_number().over(w)).filter("__r = 1").drop("__r", "revision")
    if "batch" in latest.columns:
        latest = latest.drop("batch")
    return latest


def dropped_by_watermark(query) -> int:
    """Rows Spark dropped as too late, summed over the query's recent progress reports."""
    import json

    total = 0
    for p in query.recentProgress or []:
        report = p if isinstance(p, dict) else json.loads(p.json)
        for op in report.get("stateOperators", []):
            total += int(op.get("numRowsDroppedByWatermark", 0))
    return total


def late_events(spark, checkpoint: str) -> tuple[int, list[dict]]:
    """Events that arrived too late in a run (count, up to 10 samples per bucket), read from
    the checkpoint's state store, together with the rows Spark itself dropped."""
    state = spark.read.format("statestore").option("stateVarName", "blob").load(checkpoint)
    count, samples = 0, []
    for row in state.select("value.b").collect():
        st = unpack_bucket(row[0])
        count += st.late
        samples += st.late_samples
    return count, samples

