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
    """The events of a file, sorted, as Python rows (cached per worker process)."""
    from ..io import parse_schema, read_events

    opts = json.loads(options_json)
    report = read_events(path, format=fmt or None, type_column=opts.get("type_column", "type"),
                         time_column=opts.get("time_column", "ts"), time_unit=opts.get("time_unit", "ms"),
                         input_time_unit=opts.get("input_time_unit") or None,
                         schema=parse_schema(opts["schema"]) if opts.get("schema") else None,
                         constant_type=opts.get("constant_type") or None)
    table = report.batch.table
    return table.schema, [tuple(r.values()) for r in table.to_pylist()]


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
        self.options = options
        self.path = options["path"]
        self.fmt = options.get("format", "")
        self.rate = float(options["rate"]) if options.get("rate") else None
        self.finite = options.get("finite", "false").lower() == "true"
        self.max_batch = int(options["maxEventsPerBatch"]) if options.get("maxEventsPerBatch") else None
        self._last_call = time.monotonic()

    def _events(self):
        opts = json.dumps({k: v for k, v in self.options.items() if k not in ("path", "format")}, sort_keys=True)
        return _load(self.path, self.fmt, opts, _stamp(self.path))[1]

    def _total(self) -> int:
        return len(self._events()) + (1 if self.finite else 0)

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
        if isinstance(limit, ReadMaxRows):
            end = min(end, pos + limit.maxRows)
        return {"pos": end}

    def reportLatestOffset(self):
        return {"pos": self._total()}

    def partitions(self, start: dict, end: dict):
        if end["pos"] <= start["pos"]:
            return []
        return [_Partition(start["pos"], end["pos"])]

    def read(self, partition: _Partition):
        events = self._events()
        n = len(events)
        for i in range(partition.start, min(partition.end, n)):
            yield events[i]
        if self.finite and partition.end > n:
            from ..lang.model import TIME_UNITS_MS

            unit = TIME_UNITS_MS[self.options.get("time_unit", "ms")]
            yield _end_row(events[0] if events else None, END_TS_MS // unit)

    def commit(self, end: dict) -> None:
        pass


def _end_row(template, ts: int):
    width = len(template) if template is not None else 3
    row = [None] * width
    row[0], row[1], row[2] = -1, ts, END_TYPE
    return tuple(row)


class CepaggSource(DataSource):
    """``format("cepagg")``: options path, format, type_column, time_column, time_unit,
    input_time_unit, schema, constant_type, rate, maxEventsPerBatch, finite."""

    @classmethod
    def name(cls) -> str:
        return "cepagg"

    def schema(self):
        from .schema import spark_kind  # noqa: F401  (pyspark available here)

        opts = json.dumps({k: v for k, v in self.options.items() if k not in ("path", "format")}, sort_keys=True)
        arrow_schema = _load(self.options["path"], self.options.get("format", ""), opts,
                             _stamp(self.options["path"]))[0]
        return _ddl(arrow_schema)

    def streamReader(self, schema):
        return CepaggStreamReader(dict(self.options), schema)


def _ddl(arrow_schema) -> str:
    import pyarrow as pa

    parts = []
    for f in arrow_schema:
        t = f.type
        if pa.types.is_integer(t):
            ddl = "bigint"
        elif pa.types.is_floating(t):
            ddl = "double"
        elif pa.types.is_boolean(t):
            ddl = "boolean"
        else:
            ddl = "string"
        parts.append(f"`{f.name}` {ddl}")
    return ", ".join(parts)


def register(spark) -> None:
    """Make ``format("cepagg")`` available in this session."""
    spark.dataSource.register(CepaggSource)
