"""The ``cepagg`` Python data source: event files as a stream, optionally replayed at a rate.

``spark.readStream.format("cepagg").option("path", ...).load()`` reads CSV, JSON Lines or
Parquet with :func:`cepagg.io.read_events` (so a bad row is reported exactly as in batch),
and streams the events in time order:

* ``rate`` (events per second of wall time) replays the file at that pace; without it every
  event is available at once (and ``maxEventsPerBatch`` can cut micro-batches);
* ``finite=true`` appends one end-of-stream event (type ``__end__``, a far-future time) after
  the last event: it moves the watermark past every window, so the last windows close and are
  emitted. Spark's own file source cannot do that (its watermark stops at the last event).

Offsets are event positions, so a restarted query re-reads exactly the events of its
unfinished micro-batch: recovery repeats nothing and loses nothing.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

END_TYPE = "__end__"
END_TS_MS = 9_000_000_000_000  # year 2255: beyond real event times, inside every time type


@lru_cache(maxsize=4)
def _load(path: str, fmt: str, options_json: str, stamp: float):
    """The events of a file, sorted, as an Arrow table with the source's column types (cached
    per worker process). Micro-batches are handed to Spark as Arrow batches: as Python rows,
    10^5 events took about 0.3 s per micro-batch."""
    from ..io import parse_schema, read_events

    opts = json.loads(options_json)
    report = read_events(path, format=fmt or None, type_column=opts.get("type_column", "type"),
                         time_column=opts.get("time_column", "ts"), time_unit=opts.get("time_unit", "ms"),
                         input_time_unit=opts.get("input_time_unit") or None,
                         schema=parse_schema(opts["schema"]) if opts.get("schema") else None,
                         constant_type=opts.get("constant_type") or None, timezone=opts.get("timezone") or "UTC",
                         on_bad_row="reject" if opts.get("reject") else "error", reject_path=opts.get("reject") or None)
    table = report.batch.table
    return table.schema, table.cast(_arrow_types(table.schema))


def _stamp(path: str) -> float:
    import os

    p = path
    if os.path.isdir(p):
        return max((os.path.getmtime(os.path.join(p, f)) for f in os.listdir(p)), default=0.0)
    return os.path.getmtime(p)


class _Partition(InputPartition):
    def __init__(self, start: int, end: int):
        self.start, self.end = start, end


class CepaggStreamReader(DataSourceStreamReader):
    def __init__(self, options: dict, schema):
        options = {k.lower(): v for k, v in options.items()}  # Spark may lower-case option names
        self.options = options
        self.path = options["path"]
        self.fmt = options.get("format", "")
        self.rate = float(options["rate"]) if options.get("rate") else None
        self.finite = options.get("finite", "false").lower() == "true"
        self.max_batch = int(options["maxeventsperbatch"]) if options.get("maxeventsperbatch") else None
        self._last_call = time.monotonic()

    def _events(self):
        return _load(self.path, self.fmt, _read_options(self.options), _stamp(self.path))[1]

    def _total(self) -> int:
        return self._events().num_rows + (1 if self.finite else 0)

    def initialOffset(self) -> dict:
        return {"pos": 0}

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.max_batch) if self.max_batch else ReadAllAvailable()

    def latestOffset(self, start: dict, limit) -> dict:
        pos = start["pos"]
        end = self._total()
        if self.rate is not None:
            now = time.monotonic()
            end = min(end, pos + max(1, int(self.rate * (now - self._last_call))))
            self._last_call = now
        # Spark 4.3 passes ReadAllAvailable to Python sources whatever the trigger, so the
        # source's own maxEventsPerBatch is applied here too: it is what cuts micro-batches.
        cap = limit.max_rows if isinstance(limit, ReadMaxRows) else self.max_batch
        if cap:
            end = min(end, pos + cap)
        return {"pos": end}

    def reportLatestOffset(self):
        return {"pos": self._total()}

    def partitions(self, start: dict, end: dict):
        if end["pos"] <= start["pos"]:
            return []
        return [_Partition(start["pos"], end["pos"])]

    def read(self, partition: _Partition):
        import pyarrow as pa

        events = self._events()
        n = events.num_rows
        if partition.start < n:
            yield from events.slice(partition.start, min(partition.end, n) - partition.start).to_batches()
        if self.finite and partition.end > n:
            from ..lang.model import TIME_UNITS_MS

            unit = TIME_UNITS_MS[self.options.get("time_unit") or "ms"]
            yield pa.RecordBatch.from_pylist([_end_row(events.schema, END_TS_MS // unit)], schema=events.schema)

    def commit(self, end: dict) -> None:
        pass


def _end_row(schema, ts: int) -> dict:
    """The end-of-stream event: type ``__end__``, id -1, no attributes."""
    from ..events import ID

    return {**dict.fromkeys(schema.names), ID: -1, "ts": ts, "type": END_TYPE}


class CepaggSource(DataSource):
    """``format("cepagg")``: options path, format, type_column, time_column, time_unit,
    input_time_unit, schema, constant_type, rate, maxEventsPerBatch, finite."""

    @classmethod
    def name(cls) -> str:
        return "cepagg"

    def schema(self):
        from .schema import spark_kind  # noqa: F401  (pyspark available here)

        options = {k.lower(): v for k, v in self.options.items()}
        arrow_schema = _load(options["path"], options.get("format", ""), _read_options(options),
                             _stamp(options["path"]))[0]
        return _ddl(arrow_schema)

    def streamReader(self, schema):
        return CepaggStreamReader(dict(self.options), schema)


_READ_OPTIONS = ("type_column", "time_column", "time_unit", "input_time_unit", "schema", "constant_type", "timezone",
                 "reject")


def _read_options(options: dict) -> str:
    return json.dumps({k: options[k] for k in _READ_OPTIONS if options.get(k)}, sort_keys=True)


def _arrow_types(arrow_schema):
    """The schema with each column's type as Spark receives it (see :func:`_ddl`)."""
    import pyarrow as pa

    def kind(t):
        if pa.types.is_integer(t):
            return pa.int64()
        if pa.types.is_floating(t):
            return pa.float64()
        return pa.bool_() if pa.types.is_boolean(t) else pa.string()
    return pa.schema([pa.field(f.name, kind(f.type)) for f in arrow_schema])


def _ddl(arrow_schema) -> str:
    import pyarrow as pa

    from .schema import quoted

    names = {pa.int64(): "bigint", pa.float64(): "double", pa.bool_(): "boolean", pa.string(): "string"}
    return ", ".join(f"{quoted(f.name)} {names[f.type]}" for f in _arrow_types(arrow_schema))


def register(spark) -> None:
    """Make ``format("cepagg")`` available to ``spark`` (a SparkSession)."""
    spark.dataSource.register(CepaggSource)
