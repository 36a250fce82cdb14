"""A streaming job run as its own process by the recovery test (so it can be killed for real).

usage: stream_job.py EVENTS EVENTS_PER_BATCH OUT CHECKPOINT WORKLOAD_FILE

Runs every query of the workload file as its own streaming query (as ``start_workload`` does:
results in OUT/<name>, state in CHECKPOINT/<name>; here each query starts once the one before
has finished its first micro-batch or stopped at its point) over the events file cut into
micro-batches of EVENTS_PER_BATCH events, until the end of the stream; then prints
``cepagg-stream-job: done``.

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
from cepagg.spark.streaming import check_workload, flushed, run_until, start, workload_jobs

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


def _started(q, stopped_before: int) -> None:
    """Wait until query ``q`` has finished its first micro-batch, or stopped at its point (one
    more query stopped), or ended: the queries start one after another. Started at once, the
    three once failed as Spark deserialised a task (java.io.OptionalDataException in
    HashMap.readObject)."""
    deadline = time.monotonic() + 600
    while q.isActive and q.lastProgress is None and time.monotonic() < deadline:
        if STOPPED in os.environ and len(os.listdir(os.environ[STOPPED])) > stopped_before:
            return
        time.sleep(0.05)


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
    options = dict(delay="10 milliseconds", available_now=False, processing_time="0 seconds")
    check_workload(df, workload, **options)
    running = {}
    for name, text, path, chk in workload_jobs(workload, out, checkpoint):
        stopped = len(os.listdir(os.environ[STOPPED])) if STOPPED in os.environ else 0
        running[name] = start(df, text, out=path, checkpoint=chk, **options)
        _started(running[name], stopped)
    for q in running.values():
        run_until(q, flushed, timeout=600)
    print("cepagg-stream-job: done", flush=True)


if __name__ == "__main__":
    main()
