"""The ordering layer in Structured Streaming: K-slack with per-key clocks, conservative, aggressive.

:func:`stream_ordered` runs :class:`cepagg.order.layer.Layer` inside
``transformWithStateInPandas``, one layer state per hash bucket of the *lane* key (the
unqualified GROUP BY attributes for aggregates, the partition key for matches), kept in a
ValueState as :meth:`Layer.snapshot` writes it (engine states through the engine's versioned
snapshot, as :mod:`cepagg.spark.streaming` keeps them).

Time is the layer's, not Spark's: ``timeMode="None"`` and no Spark watermark, so Spark never
drops an event. Each lane keeps its own clock (``clock="key"``): a slow key's events are in time
as long as they are no later than K (or L) *with respect to that key's own events*, where
Spark's global watermark (:func:`cepagg.spark.streaming.stream`, which is K-slack with a global
clock) would drop them. A late event follows the layer's policy: counted in state
(:func:`late_count`), written to the late-events output, or failing the query.

Punctuations (rows of type ``__punct__``, attribute ``punct_type``) and the end-of-stream event
of the ``cepagg`` source are sent to every bucket; at the end every lane flushes
(:meth:`Layer.finish`), so a finite input ends with the complete, final result for every
strategy.

Output: every emitted row carries ``kind``, ``revision``, ``at`` (the ``_id`` of the last
arrival before it) and ``clock``; rows of late events (policy ``output``) have kind ``late``
and the event as JSON in ``late``. :func:`start_ordered` writes them per micro-batch with a
``foreachBatch`` sink into ``out/batch=<id>`` (results) and ``late/batch=<id>`` (late events),
overwriting a re-run batch, so with the checkpoint the output is exactly once.
:func:`cepagg.spark.streaming.read_latest` nets the result rows: the highest revision per group
and window (retracted keys dropped), for matches the highest revision per match number
(deleted matches dropped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import pyarrow as pa
import pyarrow.compute  # noqa: F401

from ..events import ID
from ..lang import compile_query
from ..lang.model import Query
from ..order import OrderConfig
from ..order.layer import stored_state
from ..order.output import EXTRA_COLUMNS
from ..order.stream import PUNCT_ATTR, PUNCT_TYPE, Punctuation
from . import schema as S
from .progress import count_rows_out
from .sources import END_TYPE
from .streaming import (
    event_columns,
    event_names,
    operator_input,
    progress_reports,
    run_until,
    with_trigger,
    write_batch,
)
from .tasks import compiled

OP_BUCKET = "cepagg_bucket"
_ARROW = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}


@dataclass(frozen=True)
class OrderSpec:
    text: str
    time_unit: str
    kinds: tuple[tuple[str, str], ...]
    engine: str
    input_columns: tuple[str, ...]
    config: OrderConfig
    buckets: int

    def query(self) -> Query:
        return compiled(self.text, self.time_unit, self.kinds)


def event_schema(spec: OrderSpec) -> pa.Schema:
    kinds = dict(spec.kinds)
    fields = []
    for c in event_names(spec.kinds):
        if c == ID:
            fields.append(pa.field(ID, pa.int64()))
        elif c == "ts":
            fields.append(pa.field("ts", pa.int64()))
        elif c == "type":
            fields.append(pa.field("type", pa.string()))
        else:
            fields.append(pa.field(c, _ARROW.get(kinds.get(c), pa.string())))
    return pa.schema(fields)


@lru_cache(maxsize=16)
def _layer(spec: OrderSpec):
    return spec.config.build(spec.query(), event_schema(spec), spec.engine)


def output_columns(spec: OrderSpec) -> list[tuple[str, str]]:
    return S.result_ddl(spec.query(), dict(spec.kinds), spec.config.numbers) + \
        list(zip(EXTRA_COLUMNS, ["string", "bigint", "bigint", "bigint"])) + [("late", "string")]


def _processor_class():
    from pyspark.sql.streaming import StatefulProcessor

    class OrderProcessor(StatefulProcessor):
        def __init__(self, spec: OrderSpec):
            self.spec = spec

        def init(self, handle) -> None:
            self.handle = handle
            self.blob = handle.getValueState("blob", "b binary")

        def handleInputRows(self, key, rows, timerValues) -> Iterator:
            spec, layer = self.spec, _layer(self.spec)
            schema = event_schema(spec)
            if self.blob.exists():
                st = layer.restore(self.blob.get()[0])
            else:
                st = layer.new_state()
                st.next_match, st.match_step = int(key[0]) + 1, spec.buckets  # unique across buckets
            tables = [self._table(pdf, schema) for pdf in rows if len(pdf)]
            out, late = [], []
            if tables:
                table = pa.concat_tables(tables).sort_by(ID)  # arrival order
                cols = [table.column(n).to_pylist() for n in schema.names]
                i_type, i_ts, i_id = (schema.names.index(n) for n in ("type", "ts", ID))
                punct_col = table.column(PUNCT_ATTR).to_pylist() if PUNCT_ATTR in schema.names else None
                events: list = []
                ended, at = False, None
                for k, values in enumerate(zip(*cols)):
                    typ, at = values[i_type], values[i_id]
                    if typ == END_TYPE:
                        ended = True
                    elif typ == PUNCT_TYPE:
                        if events:
                            layer.admit(st, events, at)
                            events = []
                        layer.punctuate(st, Punctuation(punct_col[k] if punct_col else None, values[i_ts]), at)
                    else:
                        events.append(values)
                if events:
                    layer.admit(st, events, at)
                out += layer.tick(st, at)
                late += st.late.drain()
                if ended:
                    out += layer.finish(st, at)
            self.blob.update((layer.snapshot(st),))
            if out or late:
                yield self._frame(out, late)

        def _table(self, pdf, schema: pa.Schema) -> pa.Table:
            table = pa.Table.from_pandas(pdf[list(self.spec.input_columns)], preserve_index=False)
            table = table.rename_columns(schema.names)
            for i, f in enumerate(schema):
                if table.column(i).type != f.type:
                    table = table.set_column(i, f.name, pa.compute.cast(table.column(i), f.type))
            return table

        def _frame(self, outputs, late):
            cols = output_columns(self.spec)
            width = len(cols) - len(EXTRA_COLUMNS) - 1
            rows = [o.as_tuple() + (None,) for o in outputs]
            rows += [(None,) * width + ("late", None, e.get("_arrived_at"), None, json.dumps(e, default=str))
                     for e in late]
            return S.to_arrow(rows, cols).to_pandas()

        def close(self) -> None:
            pass

    return OrderProcessor


def stream_ordered(df, query: str | Query, config: OrderConfig, *, engine: str = "auto",
                   type_column: str = "type", time_column: str = "ts", time_unit: str = "ms",
                   buckets: int = 16):
    """The output stream (result rows with kind/revision, and late rows) of ``query`` over the
    streaming DataFrame ``df`` under the ordering strategy ``config``. Returns (DataFrame, mode)."""
    from pyspark.sql import functions as F

    from ..plan import plan

    text = query.text if isinstance(query, Query) else query
    events, kinds = event_columns(df, type_column, time_column, time_unit)
    q = compile_query(text, time_unit=time_unit, schema=kinds)
    chosen = plan(q, engine)
    engine_name = chosen.engine
    lane = list(chosen.order_lanes)
    bucket = F.pmod(F.xxhash64(*[F.col(S.quoted(k)) for k in lane]), F.lit(buckets)) if lane else F.lit(0)
    everywhere = F.col("type").isin(END_TYPE, PUNCT_TYPE)  # punctuations and the end go to every bucket
    bucket = F.when(everywhere, F.sequence(F.lit(0), F.lit(buckets - 1))).otherwise(F.array(bucket.cast("int")))
    cols, ordered = operator_input(kinds)
    events = (events.withColumn(OP_BUCKET, F.explode(bucket))  # (by the attributes' names, before the select)
              .select(*cols, OP_BUCKET))
    spec = OrderSpec(text, time_unit, tuple(sorted(kinds.items())), engine_name, tuple(ordered), config, buckets)
    out = events.groupBy(OP_BUCKET).transformWithStateInPandas(
        statefulProcessor=_processor_class()(spec), outputStructType=S.ddl_string(output_columns(spec)),
        outputMode="Update", timeMode="None")
    return out, "Update"


def start_ordered(df, query: str | Query, config: OrderConfig, *, out: str | None = None, checkpoint: str | None = None,
                  format: str = "parquet", late_out: str | None = None, available_now: bool = True,
                  processing_time: str | None = None, count_out: bool = False, **options):
    """Run :func:`stream_ordered` into files (see the module docstring); returns the query.
    ``count_out``: count each micro-batch's output rows for its progress line
    (:class:`cepagg.spark.progress.BatchLines`)."""
    from pyspark.sql import functions as F

    result, _ = stream_ordered(df, query, config, **options)
    if count_out:
        result = count_rows_out(result)
    late_path = late_out or f"{out}/_late"

    def sink(batch_df, batch_id: int) -> None:
        batch_df = batch_df.persist()
        rows = batch_df.filter(F.col("kind") != "late").drop("late")
        if format == "console":  # the rows are printed; late events still go to their directory
            rows.show(truncate=False)
        else:
            write_batch(rows, batch_id, out, format)
        late = batch_df.filter(F.col("kind") == "late").select("at", "late")
        if not late.isEmpty():
            late.write.mode("overwrite").format("json").save(f"{late_path}/batch={batch_id}")
        batch_df.unpersist()

    writer = result.writeStream.outputMode("update").foreachBatch(sink)
    return with_trigger(writer, checkpoint, available_now, processing_time).start()


def run_ordered_to_end(df, query: str | Query, config: OrderConfig, *, timeout: float = 3600.0,
                       progress=None, interrupted=None, **options):
    """Run over a finite ``cepagg`` source (``finite=true``) until the batch holding its last
    offset (the end-of-stream event) has been processed, then stop. ``progress``,
    ``interrupted``: see :func:`cepagg.spark.streaming.run_until`."""
    q = start_ordered(df, query, config, available_now=False, processing_time="0 seconds",
                      count_out=progress is not None, **options)
    return run_until(q, _consumed, timeout, progress, interrupted)


def _consumed(q) -> bool:
    for report in progress_reports(q):
        sources = report.get("sources") or []
        if sources and all(s.get("endOffset") is not None and s.get("endOffset") == s.get("latestOffset")
                           and s.get("latestOffset") is not None for s in sources) and report.get("batchId", -1) >= 0:
            return True
    return False


def late_count(spark, checkpoint: str) -> tuple[int, list[dict]]:
    """Late events counted in the state store (all policies but ``fail``), with samples."""
    state = spark.read.format("statestore").option("stateVarName", "blob").load(checkpoint)
    count, samples = 0, []
    for row in state.select("value.b").collect():
        st = stored_state(row[0])
        count += st.late.count
        samples += st.late.samples
    return count, samples
