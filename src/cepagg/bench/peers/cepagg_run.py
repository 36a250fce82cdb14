"""cepagg's side of the comparison, run as a subprocess like every peer (same time limit, same
peak-memory measurement).

``python -m cepagg.bench.peers.cepagg_run --csv FILE --query TEXT [--engine auto] [--spark]``

In-process: reads the CSV with :func:`cepagg.io.read_events` and evaluates with
:func:`cepagg.runner.run` (the planner picks the fastest engine that accepts the query).
``--spark``: the same through ``cepagg.spark.run(df, query)`` on a local Spark session, when
that adapter exists (it is being written on main); until then it prints a "not available"
result instead of failing. Prints one line::

    PEER-RESULT {"peer": "cepagg", "count": N, "engine": "...", "elapsed_ms": T, "read_ms": R, "run_ms": E}

``elapsed_ms`` = reading the CSV + planning + evaluation. The start of Python, the imports and
the one-time set-up (the query grammar, lazily imported readers) are not in it, as a JVM's start
is not in the peers' numbers: a warm-up run of the same query on the file's first rows pays them
first.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

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
        return "cepagg.spark is not available yet (the Spark adapter is being written on main)"
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
    from cepagg.io import read_events
    from cepagg.lang import compile_query
    from cepagg.plan import plan

    _warm_up(csv, query, engine)
    t0 = time.perf_counter()
    batch = read_events(csv, schema=SCHEMA).batch
    t1 = time.perf_counter()
    q = compile_query(query, time_unit=batch.time_unit, schema=batch.attribute_kinds())
    p = plan(q, engine)
    result = p.build().run(batch)
    t2 = time.perf_counter()
    count = _count(result)
    return {"peer": "cepagg", "count": count, "engine": p.engine, "events": len(batch),
            "elapsed_ms": round((t2 - t0) * 1000, 3), "read_ms": round((t1 - t0) * 1000, 3),
            "run_ms": round((t2 - t1) * 1000, 3)}


def _warm_up(csv: str, query: str, engine: str) -> None:
    """Run the query once on the first rows of the file (imports, grammar, lazy modules)."""
    import os
    import tempfile

    from cepagg.io import read_events
    from cepagg.runner import run

    with open(csv) as f:
        head = [f.readline() for _ in range(4)]
    fd, tmp = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "w") as f:
            f.writelines(head)
        run(query, read_events(tmp, schema=SCHEMA).batch, engine=engine)
    finally:
        os.unlink(tmp)


def run_spark(csv: str, query: str) -> dict:
    import os

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import cepagg.spark as cs
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("cepagg-peers")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        t0 = time.perf_counter()
        df = spark.read.csv(csv, header=True, schema="ts BIGINT, type STRING, key STRING, price DOUBLE")
        out = cs.run(df, query)
        rows = out.collect() if hasattr(out, "collect") else list(out)
        t1 = time.perf_counter()
        count = sum(int(r[-1]) for r in rows)
        return {"peer": "cepagg-spark", "count": count, "engine": "spark",
                "elapsed_ms": round((t1 - t0) * 1000, 3)}
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
