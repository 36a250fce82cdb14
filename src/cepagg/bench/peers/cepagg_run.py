"""cepagg's side of the comparison, run as a subprocess like every peer (same time limit, same
peak-memory measurement).

``python -m cepagg.bench.peers.cepagg_run --csv FILE --query TEXT [--engine auto] [--spark]``

In-process: reads the CSV with :func:`cepagg.io.read_events` and evaluates with
:func:`cepagg.runner.run` (the planner picks the fastest engine that accepts the query).
``--spark``: the same through ``cepagg.spark.run(df, query)`` on a local Spark session; where
pyspark is not installed it prints a "not available" result instead of failing. Prints one line::

    PEER-RESULT {"peer": "cepagg", "count": N, "engine": "...", "elapsed_ms": T, "read_ms": R, "run_ms": E}

``elapsed_ms`` = reading the CSV + evaluation (the engine's construction included). The start
of Python, the imports and the one-time set-up (the query grammar, lazily imported readers) are
not in it, as a JVM's start is not in the peers' numbers: a warm-up run of the same query on the
file's first 1,000 rows pays them first (loading numba's compiled kernels from its cache
included). Nor is compiling and planning the query, as Flink's pattern is compiled before its
job runs and CORE's query before its events are sent. Short runs are repeated (until a second
in all, at most five, an odd count) and the median run reported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Iterator

SCHEMA = {"key": "str", "price": "float"}


def emit(payload: dict) -> None:
    print("PEER-RESULT " + json.dumps(payload), flush=True)


def spark_available() -> str | None:
    """None when ``cepagg.spark.run`` can be used, else why not (never raises)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("cepagg.spark")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "cepagg.spark is not available (pip install 'cepagg[spark]')"
    try:
        import cepagg.spark as cs  # noqa: F401
    except Exception as e:  # noqa: BLE001
        return f"cepagg.spark cannot be imported: {e}"
    if not hasattr(cs, "run"):
        return "cepagg.spark has no run(df, query) yet"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'cepagg[spark]')"
    return None


def run_inprocess(csv: str, query: str, engine: str) -> dict:
    from cepagg.bench.repeat import median_run
    from cepagg.io import read_events
    from cepagg.lang import compile_query
    from cepagg.plan import plan

    head = _warm_up(csv, query, engine)
    q = compile_query(query, time_unit=head.time_unit, schema=head.attribute_kinds())
    p = plan(q, engine)

    def timed() -> tuple[float, float, int, int]:
        t0 = time.perf_counter()
        batch = read_events(csv, schema=SCHEMA).batch
        t1 = time.perf_counter()
        count = _count(p.build().run(batch))
        return t1 - t0, time.perf_counter() - t1, count, len(batch)

    (read_s, run_s, count, events), runs = median_run(timed, lambda r: r[0] + r[1])
    if len({r[2] for r in runs}) != 1:
        raise RuntimeError(f"runs of the same query counted differently: {[r[2] for r in runs]}")
    return {"peer": "cepagg", "count": count, "engine": p.engine, "events": events,
            "elapsed_ms": round((read_s + run_s) * 1000, 3), "read_ms": round(read_s * 1000, 3),
            "run_ms": round(run_s * 1000, 3), "runs": len(runs)}


WARM_UP_ROWS = 1000


@contextmanager
def _head(csv: str) -> Iterator[str]:
    """A temporary CSV file of the header and the first WARM_UP_ROWS rows: enough that every
    event type of the workloads occurs, so the warm-up reaches every compiled kernel the timed
    run calls (three rows often held no event the query reads, and the timed run then paid
    ~300 ms of loading numba's cache)."""
    fd, tmp = tempfile.mkstemp(suffix=".csv")
    try:
        with open(csv) as src, os.fdopen(fd, "w") as f:
            f.writelines(line for _, line in zip(range(WARM_UP_ROWS + 1), src))
        yield tmp
    finally:
        os.unlink(tmp)


def _warm_up(csv: str, query: str, engine: str):
    """Run the query once on the first rows of the file (imports, grammar, lazy modules,
    kernels); returns those rows (an EventBatch: the file's time unit and attribute kinds)."""
    from cepagg.io import read_events
    from cepagg.runner import run

    with _head(csv) as head:
        batch = read_events(head, schema=SCHEMA).batch
    run(query, batch, engine=engine)
    return batch


def run_spark(csv: str, query: str) -> dict:
    """cepagg on Spark: ``cepagg.spark.run(df, query)`` on a local[2] session.

    The session's start and a warm-up run of the same query on the file's first rows are not
    timed (as a JVM's start is not for the peers); the timed part reads the CSV into a
    DataFrame, runs the query and collects the result.
    """
    import cepagg.spark as cs

    spark = cs.get_session()
    schema = "ts BIGINT, type STRING, key STRING, price DOUBLE"
    try:
        with _head(csv) as head:
            cs.run(spark.read.csv(head, header=True, schema=schema), query).collect()
        t0 = time.perf_counter()
        out = cs.run(spark.read.csv(csv, header=True, schema=schema), query)
        rows = out.collect()
        t1 = time.perf_counter()
        i = out.columns.index("COUNT(*)")
        count = sum(int(r[i]) for r in rows)
        from cepagg.lang import compile_query
        from cepagg.plan import plan

        engine = plan(compile_query(query, schema={"key": "str", "price": "float"})).engine
        return {"peer": "cepagg-spark", "count": count, "engine": f"spark+{engine}",
                "elapsed_ms": round((t1 - t0) * 1000, 3),
                "parallelism": spark.sparkContext.defaultParallelism}
    finally:
        spark.stop()


def _count(result) -> int:
    i = result.columns.index("COUNT(*)")
    return sum(int(r[i]) for r in result.rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--spark", action="store_true")
    a = ap.parse_args(argv)
    if a.spark:
        why = spark_available()
        if why is not None:
            emit({"peer": "cepagg-spark", "unavailable": why})
            return 0
        emit(run_spark(a.csv, a.query))
    else:
        emit(run_inprocess(a.csv, a.query, a.engine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
