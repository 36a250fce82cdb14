"""A streaming job run as its own process by the recovery test (so it can be killed for real).

usage: stream_job.py EVENTS EVENTS_PER_BATCH OUT CHECKPOINT WORKLOAD_FILE

Runs every query of the workload file as its own streaming query (``start_workload``: results
in OUT/<name>, state in CHECKPOINT/<name>) over the events file cut into micro-batches of
EVENTS_PER_BATCH events, until the end of the stream; then prints ``cepagg-stream-job: done``.

``CEPAGG_TEST_KILL`` (e.g. ``read:4`` or ``read:8,written:7``) stops each query at the first
of these points it reaches, and when every query has stopped, the job SIGKILLs its own
process group (this Python driver and its JVM; the test starts the job in a session of its
own), so each query's checkpoint is caught exactly at its point:

* ``read:N`` — micro-batch N starts reading its events (the source's ``read``, on a Python
  worker): batch N's offsets are logged, nothing of it is committed;
* ``written:N`` — the ``foreachBatch`` writer (Update-mode results) has written batch N: its
  state store versions and its output are committed, its commit-log entry is not.

A query stopped at its point waits (its task or its writer sleeps) until the kill.
"""

import os
import signal
import sys
import threading
import time
import uuid

from cepagg.spark.session import get_session
from cepagg.spark.sources import CepaggSource, CepaggStreamReader
from cepagg.spark.streaming import flushed, run_until, start_workload, workload_jobs

KILL = "CEPAGG_TEST_KILL"
STOPPED = "CEPAGG_TEST_STOPPED"  # a folder: one file per query stopped at its point


def _points() -> dict[str, int]:
    return {p: int(n) for p, n in (s.split(":") for s in os.environ.get(KILL, "").split(",") if s)}


def _stop_here() -> None:
    """Record that a query reached its point, then wait for the kill."""
    (open(os.path.join(os.environ[STOPPED], uuid.uuid4().hex), "w")).close()
    time.sleep(3600)


class StoppingReader(CepaggStreamReader):
    """The cepagg source, stopping its query when micro-batch N starts reading."""

    def read(self, partition):
        n = _points().get("read")
        if n is not None and partition.start == n * self.max_batch:
            _stop_here()
        yield from super().read(partition)


class StoppingSource(CepaggSource):
    def streamReader(self, schema):
        return StoppingReader(dict(self.options), schema)


def _stop_after_written(batch: int) -> None:
    """Wrap every ``foreachBatch`` function: once it has written ``batch``, stop its query."""
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    original = DataStreamWriter.foreachBatch

    def foreach_batch(self, func):
        def write_then_stop(df, batch_id):
            func(df, batch_id)
            if batch_id == batch:
                _stop_here()
        return original(self, write_then_stop)

    DataStreamWriter.foreachBatch = foreach_batch


def _kill_when_all_stopped(queries: int) -> None:
    def watch():
        while len(os.listdir(os.environ[STOPPED])) < queries:
            time.sleep(0.05)
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    events, per_batch, out, checkpoint, workload_file = sys.argv[1:6]
    with open(workload_file) as f:
        workload = f.read()
    points = _points()
    if points:
        os.environ[STOPPED] = os.path.join(checkpoint, "..", f"stopped-{uuid.uuid4().hex}")
        os.makedirs(os.environ[STOPPED])
        _kill_when_all_stopped(len(workload_jobs(workload, out, checkpoint)))
    if "written" in points:
        _stop_after_written(points["written"])
    # a task slot per query, so that queries stopped in a task do not hold the others up
    spark = get_session("local[4]", {"spark.sql.shuffle.partitions": "2",
                                     "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"})
    spark.dataSource.register(StoppingSource)
    df = (spark.readStream.format("cepagg").option("path", events)
          .option("maxEventsPerBatch", per_batch).option("finite", "true").load())
    running = start_workload(df, workload, out=out, checkpoint=checkpoint, delay="10 milliseconds",
                             available_now=False, processing_time="0 seconds")
    for q in running.values():
        run_until(q, flushed, timeout=600)
    print("cepagg-stream-job: done", flush=True)


if __name__ == "__main__":
    main()
