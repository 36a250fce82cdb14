"""Flink SQL peer: count MATCH_RECOGNIZE matches with PyFlink (run with the apache-flink venv).

Usage (the runner builds this command; the script imports nothing from cepagg)::

    <flink venv>/bin/python flink_sql.py --csv FILE \
        --sql "SELECT COUNT(*) AS n FROM events MATCH_RECOGNIZE (...)"

The CSV ``ts,type,key,price`` is registered as the table ``events`` with an event-time column
``rt = TO_TIMESTAMP_LTZ(ts, 3)`` and the watermark ``rt`` (timestamps ascend), through the
filesystem connector. Flink's CSV format cannot skip a header, so a header-less copy is made
beside the file first (not timed). The job runs in streaming mode with parallelism 1; the
count is the last value of the updating ``COUNT(*)``. Prints one line::

    PEER-RESULT {"peer": "flink-sql", "count": N, "elapsed_ms": T, "net_runtime_ms": R}

``elapsed_ms`` runs from submitting the statement to the last result row; ``net_runtime_ms`` is
the job's own run time when Flink reports it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def headerless_copy(path: str) -> str:
    out = path + ".noheader"
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(path):
        with open(path) as src, open(out + ".tmp", "w") as dst:
            src.readline()
            for line in src:
                dst.write(line)
        os.replace(out + ".tmp", out)
    return out


def ddl(path: str) -> str:
    return (
        "CREATE TABLE events (ts BIGINT, `type` STRING, `key` STRING, price DOUBLE, "
        "rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH ("
        f"'connector' = 'filesystem', 'path' = 'file://{path}', 'format' = 'csv')"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--sql", required=True)
    ap.add_argument("--parallelism", type=int, default=1)
    a = ap.parse_args(argv)
    from pyflink.common import RowKind
    from pyflink.table import EnvironmentSettings, TableEnvironment

    data = headerless_copy(os.path.abspath(a.csv))
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = t_env.get_config()
    conf.set("parallelism.default", str(a.parallelism))
    conf.set("table.local-time-zone", "UTC")
    t_env.execute_sql(ddl(data))
    t0 = time.perf_counter()
    result = t_env.execute_sql(a.sql)
    count = 0
    with result.collect() as rows:
        for row in rows:
            if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                count = int(row[0])
    elapsed = (time.perf_counter() - t0) * 1000
    net = None
    try:
        job = result.get_job_client()
        if job is not None:
            net = job.get_job_execution_result().result().get_net_runtime()
    except Exception:  # noqa: BLE001 - optional detail
        net = None
    print("PEER-RESULT " + json.dumps({"peer": "flink-sql", "count": count,
                                       "elapsed_ms": round(elapsed, 3), "net_runtime_ms": net}),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
