"""Progress of Spark runs on stderr, as plain lines (Spark's own console progress bar is off:
it garbles captured output).

* :class:`Progress` -- batch jobs: active stages and their task counts, every few seconds,
  only while a job runs longer than ``after`` seconds.
* :class:`BatchLines` -- streaming queries: one line per micro-batch.
"""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    def __init__(self, spark, every: float = 3.0, after: float = 3.0, stream=sys.stderr):
        self.tracker = spark.sparkContext.statusTracker()
        self.every, self.after, self.stream = every, after, stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "Progress":
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=1)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if time.monotonic() - self.started < self.after:
                continue
            parts = []
            for sid in self.tracker.getActiveStageIds():
                info = self.tracker.getStageInfo(sid)
                if info:
                    parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
            if parts and not self._stop.is_set():  # (the run may have ended while Spark answered)
                elapsed = time.monotonic() - self.started
                try:
                    print(f"cepagg: {elapsed:5.0f} s  " + ", ".join(parts), file=self.stream, flush=True)
                except (ValueError, OSError):  # the stream was closed under a thread still asking Spark
                    return


#: name of the observed metric that counts a streaming query's output rows per micro-batch
ROWS_OUT = "cepagg_rows_out"


def count_rows_out(result):
    """``result`` (a streaming DataFrame) with its rows counted per micro-batch, for
    :class:`BatchLines` (Spark's file sink reports no output count of its own)."""
    from pyspark.sql import functions as F

    return result.observe(ROWS_OUT, F.count(F.lit(1)).alias("rows"))


class BatchLines:
    """One line per finished micro-batch of a streaming query, on stderr:

    ``cepagg: batch 3: 20 events in, 5 rows out, watermark 78, state 4 rows / 12.1 KB``

    and, for the batch that holds the end of a finite input, ``..., 20 events in, end of input, ...``
    (``finite``: the input is a finite ``cepagg`` source, whose last offset is that end).

    The watermark is in the stream's time unit (``own_clocks``: the query keeps a clock per key,
    as the ordering layer does, and the line says so instead); the state is what the stateful operator's store holds.
    Call it with the query whenever convenient (:func:`cepagg.spark.streaming.run_until` does
    while it waits): it prints the batches finished since the last call, each once.
    """

    def __init__(self, time_unit: str = "ms", name: str | None = None, stream=None, finite: bool = False,
                 own_clocks: bool = False):
        from ..lang.model import TIME_UNITS_MS

        self.unit_ms = TIME_UNITS_MS[time_unit]
        self.prefix = f"cepagg: {name}: " if name else "cepagg: "
        self.stream = stream
        self.printed: set[int] = set()
        self.finite = finite  # the input is a finite ``cepagg`` source: its last offset is the end-of-stream marker
        self.own_clocks = own_clocks  # the ordering layer: a clock per key, no watermark of Spark's
        #: input rows Spark dropped as older than its watermark, over the batches printed
        self.dropped = 0

    def __call__(self, query) -> None:
        from .streaming import progress_reports

        for report in progress_reports(query):
            batch = report.get("batchId", -1)
            if batch < 0 or batch in self.printed:
                continue
            self.printed.add(batch)
            self.dropped += _dropped(report)
            print(self.prefix + self.line(report), file=self.stream or sys.stderr, flush=True)

    def line(self, report: dict) -> str:
        """The same fields for every micro-batch, so that lines can be read in a column:
        events in, rows out (a batch whose plan processed no row reports no count: 0), the
        watermark ("none yet" before Spark has one; "clocks per key" for the ordering layer),
        and the state (0 rows where Spark reports no stateful operator)."""
        # (the marker is a row of the input to Spark, not an event of the user's)
        end = _holds_the_end(report) or self.finite and _reaches_the_end(report)
        parts = [f"batch {report['batchId']}: {_count(int(report.get('numInputRows', 0)) - end, 'event')} in"]
        if end:
            parts.append("end of input")
        observed = (report.get("observedMetrics") or {}).get(ROWS_OUT)
        parts.append(f"{_count(int(observed['rows']) if observed is not None else 0, 'row')} out")
        watermark = (report.get("eventTime") or {}).get("watermark")
        if self.own_clocks:
            parts.append("clocks per key")
        elif watermark:
            from datetime import datetime

            from .bucket import END_WATERMARK_MS

            ms = round(datetime.fromisoformat(watermark.replace("Z", "+00:00")).timestamp() * 1000)
            parts.append("watermark past the end of the input" if ms > END_WATERMARK_MS
                         else f"watermark {ms // self.unit_ms}")
        else:
            parts.append("watermark none yet")
        operators = report.get("stateOperators") or []
        rows = sum(int(op.get("numRowsTotal", 0)) for op in operators)
        size = sum(int(op.get("memoryUsedBytes", 0)) for op in operators)
        parts.append(f"state {_count(rows, 'row')} / {size / 1024:.1f} KB")
        dropped = _dropped(report)
        if dropped:
            parts.append(f"{_count(dropped, 'row')} dropped by Spark as late")
        return ", ".join(parts)


def _holds_the_end(report: dict) -> bool:
    """Whether a micro-batch held the end-of-stream marker of a finite ``cepagg`` source: its
    latest event time is the marker's, beyond every real one (known where Spark keeps a
    watermark and so reports event times; the ordering layer keeps its own clocks)."""
    latest = (report.get("eventTime") or {}).get("max")
    if not latest:
        return False
    from datetime import datetime

    from .bucket import END_WATERMARK_MS

    return datetime.fromisoformat(latest.replace("Z", "+00:00")).timestamp() * 1000 > END_WATERMARK_MS


def _reaches_the_end(report: dict) -> bool:
    """Whether a micro-batch read up to its source's latest offset (for a finite ``cepagg``
    source, the end-of-stream marker's), having read anything."""
    import json

    for source in report.get("sources") or []:
        start, end, latest = (json.loads(source.get(k) or "null") for k in ("startOffset", "endOffset", "latestOffset"))
        if isinstance(end, dict) and end == latest and end != start:
            return True
    return False


def _dropped(report: dict) -> int:
    """Input rows Spark dropped in a micro-batch as older than its watermark."""
    return sum(int(op.get("numRowsDroppedByWatermark", 0)) for op in report.get("stateOperators") or [])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
