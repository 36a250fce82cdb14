"""Spark pipeline: end-to-end events/s on Spark vs in-process, local[1] vs local[2], a streaming
micro-batch of 10^5 events over 10^4 keys.

Each Spark configuration runs in its own process (a SparkSession's master is fixed for the
life of the JVM). Times are end to end: reading Parquet, evaluating, collecting the result; the
session start (about 10 s) is reported separately, not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = {
    # keyed: one type "Stock", partitioned by company
    # A-Seq: a fixed-length sequence per company (local conditions only)
    "keyed-seq": ("RETURN company, COUNT(*) PATTERN SEQ(Stock a, Stock b, Stock c) "
                  "WHERE [company] AND a.volume > 500 AND c.volume < 200 GROUP BY company WITHIN 20 s"),
    # GRETA: down-trends per company (Q1 with the company as group)
    "keyed-trend": ("RETURN company, COUNT(*) PATTERN Stock S+ "
                    "WHERE [company] AND S.price > NEXT(S).price GROUP BY company WITHIN 20 s"),
    # keyless: the tickers (C0, C1, ...) as types, the whole stream in time slices
    "keyless-seq": "RETURN COUNT(*), SUM(c.volume) PATTERN SEQ(C1 a, C2 b, !C4, C3 c) WITHIN 2 s",
    "keyless-trend": ("RETURN COUNT(*) PATTERN SEQ(C1 a, C2 b+, C3 c) WHERE b.price < NEXT(b).price "
                      "WITHIN 2 s"),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=10_000_000, help="events in the generated stream")
    p.add_argument("--keys", type=int, default=1000, help="companies (partition keys)")
    p.add_argument("--queries", default=",".join(QUERIES),
                   help="comma-separated names of " + ", ".join(QUERIES))
    p.add_argument("--masters", default="local[1],local[2]")
    p.add_argument("--cache", default=os.path.expanduser("~/.cache/cepagg/bench"))
    p.add_argument("--no-pin", dest="pin", action="store_false",
                   help="do not pin local[n] to n cores (by default its JVM and Python workers get n cores, "
                        "as an executor with n cores in a container would)")
    p.add_argument("--skip-stream", action="store_true")
    p.add_argument("--stream-batch", type=int, default=100_000, metavar="N",
                   help="events per streaming micro-batch (default 10^5; a small N shows the fixed cost of a "
                        "micro-batch)")
    p.add_argument("--stream-buckets", type=int, default=16, metavar="N",
                   help="hash buckets of the streaming query's state (default 16)")
    p.add_argument("--stream-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for the streaming run (repeatable), e.g. "
                        "spark.driver.extraJavaOptions='-XX:+UseSerialGC -XX:TieredStopAtLevel=1'")
    p.add_argument("--json", help="also write the results here")


def _data(args, tickers: bool) -> Path:
    """The generated stream (cached): the same ticks, typed "Stock" or by ticker."""
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"stock-{args.events}-{args.keys}{'-tickers' if tickers else ''}.parquet"
    if not path.exists():
        import pyarrow.parquet as pq

        from ..datasets.stock import generate

        print(f"generating {args.events:,} events over {args.keys} companies -> {path}", flush=True)
        typed = generate(args.events, companies=args.keys, tick_ms=2, seed=42, ticker_types=tickers)
        pq.write_table(typed.table, path)
    return path


def _in_process(path: Path, text: str) -> dict:
    import pyarrow.parquet as pq

    from ..events import EventBatch
    from ..lang import compile_query
    from ..plan import plan

    t0 = time.perf_counter()
    batch = EventBatch(pq.read_table(path))
    q = compile_query(text, schema=batch.attribute_kinds())
    p = plan(q)
    result = p.build().run(batch)
    return {"seconds": time.perf_counter() - t0, "rows": len(result), "engine": p.engine}


WORKER = r"""
import json, sys, time
from cepagg.spark.session import get_session
from cepagg.spark import run
master, jobs = sys.argv[1], json.loads(sys.argv[2])  # name -> [parquet path, query]
def busy():  # CPU seconds the whole machine spent (Linux), to show how many cores a run kept busy
    try:
        v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    except OSError:
        return None
    return (sum(v) - v[3] - v[4]) / 100.0
t0 = time.perf_counter()
spark = get_session(master, {"spark.sql.shuffle.partitions": master[6:-1] or "2",
                             "spark.driver.memory": "6g"})
started = time.perf_counter() - t0
out = {"session_seconds": started}
# warm-up: JIT of the Python workers and numba kernels on a small slice
for name, (path, text) in jobs.items():
    run(spark.read.parquet(path).limit(20000), text).collect()
for name, (path, text) in jobs.items():
    t, b = time.perf_counter(), busy()
    rows = run(spark.read.parquet(path), text).collect()
    out[name] = {"seconds": time.perf_counter() - t, "rows": len(rows),
                 "cpu_seconds": None if b is None else busy() - b}
print("RESULT " + json.dumps(out))
"""


def _cores(master: str, pin: bool) -> list[int] | None:
    """The cores a ``local[n]`` run is pinned to (None: not pinned). Unpinned, local[1] already
    keeps 1.5-1.8 of 2 cores busy -- its JVM task thread and Python worker run as a pipeline,
    Parquet decoding, GC and JIT on threads of their own -- which is not what one core means."""
    if not pin or not master.startswith("local[") or not hasattr(os, "sched_setaffinity"):
        return None
    n = master[6:-1]
    cores = sorted(os.sched_getaffinity(0))
    return cores[:int(n)] if n.isdigit() and int(n) < len(cores) else None


def _spark(master: str, jobs: dict, cores: list[int] | None) -> dict:
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    proc = subprocess.run([sys.executable, "-c", WORKER, master, json.dumps(jobs)],
                          capture_output=True, text=True, preexec_fn=pin)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"Spark run on {master} failed:\n{proc.stderr[-3000:]}")


STREAM_WORKER = r"""
import json, sys, time
from cepagg.spark.session import get_session
from cepagg.spark.sources import register
from cepagg.spark.streaming import start
path, out, chk, text, per_batch, buckets, conf = sys.argv[1:8]
spark = get_session("local[2]", {"spark.sql.shuffle.partitions": "2", **json.loads(conf)})
register(spark)
df = (spark.readStream.format("cepagg").option("path", path).option("maxEventsPerBatch", per_batch)
      .option("finite", "false").load())
q = start(df, text, out=out, checkpoint=chk, available_now=False, processing_time="0 seconds",
          delay="1 second", buckets=int(buckets))
while len(q.recentProgress) < 8 and q.isActive:
    time.sleep(0.5)
if q.exception() is not None:
    raise SystemExit(f"the streaming query failed: {q.exception()}")
q.stop()
print("RESULT " + json.dumps([json.loads(p.json) for p in q.recentProgress]))
"""


def _settings(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict (a pair without "=" is refused naming it)."""
    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise SystemExit(f"cepagg bench spark: --stream-conf {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def _stream(args) -> dict:
    from ..datasets.stock import generate

    with tempfile.TemporaryDirectory() as tmp:
        import pyarrow.parquet as pq

        batch = generate(1_000_000, companies=10_000, tick_ms=1, seed=5)
        path = Path(tmp) / "events.parquet"
        pq.write_table(batch.table, path)
        text = ("RETURN company, COUNT(*) PATTERN SEQ(Stock a, Stock b) WHERE [company] "
                "AND b.volume > 900 GROUP BY company WITHIN 5 s SLIDE 5 s")
        proc = subprocess.run(
            [sys.executable, "-c", STREAM_WORKER, str(path), f"{tmp}/out", f"{tmp}/chk", text, str(args.stream_batch),
             str(args.stream_buckets), json.dumps(_settings(args.stream_conf))],
            capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("RESULT "):
                progress = json.loads(line[7:])
                batches = [(p["batchId"], p["numInputRows"], p["durationMs"]["triggerExecution"])
                           for p in progress]
                return {"batches": batches, "progress": progress}
        raise RuntimeError(f"streaming run failed:\n{proc.stderr[-3000:]}")


#: the phases of a micro-batch in Spark's progress report (``durationMs``), in the order they run
PHASES = ("latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets")


def phase_medians(progress: list[dict]) -> dict[str, float]:
    """Median milliseconds per phase of the micro-batches after the first (which also starts the
    Python workers), with the state store's commit (inside ``addBatch``, summed over the tasks) and
    the rest of ``triggerExecution`` (progress reporting, the watermark, the trigger's own work)."""
    def median(values):
        values = sorted(values)
        return values[len(values) // 2] if values else 0.0

    later = [p for p in progress if p["batchId"] > 0 and p["numInputRows"] > 0]
    out = {name: median([p["durationMs"].get(name, 0) for p in later]) for name in PHASES}
    out["state commit (in addBatch, tasks summed)"] = median(
        [sum(op.get("commitTimeMs", 0) for op in p.get("stateOperators", [])) for p in later])
    out["other"] = median([p["durationMs"]["triggerExecution"] - sum(p["durationMs"].get(n, 0) for n in PHASES)
                           for p in later])
    out["triggerExecution"] = median([p["durationMs"]["triggerExecution"] for p in later])
    return out


def main(args: argparse.Namespace) -> int:
    names = [n for n in args.queries.split(",") if n]
    unknown = [n for n in names if n not in QUERIES]
    if unknown:
        raise SystemExit(f"cepagg bench spark: no query named {unknown[0]!r}; choose from {', '.join(QUERIES)}")
    paths = {n: str(_data(args, tickers=n.startswith("keyless"))) for n in names}
    texts = {n: QUERIES[n] for n in names}
    results: dict = {"events": args.events, "keys": args.keys, "in_process": {}, "spark": {}}
    for name, text in texts.items():
        r = _in_process(Path(paths[name]), text)
        results["in_process"][name] = r
        print(f"in-process {name:14s} {r['seconds']:8.2f} s  {args.events / r['seconds']:12,.0f} ev/s  "
              f"engine {r['engine']}, {r['rows']} rows", flush=True)
    for master in args.masters.split(",") if names else []:
        cores = _cores(master, args.pin)
        r = _spark(master, {n: [paths[n], t] for n, t in texts.items()}, cores)
        r["pinned_to_cores"] = cores
        results["spark"][master] = r
        if cores:
            print(f"{master}: JVM and Python workers pinned to core(s) {cores}", flush=True)
        for name in names:
            s = r[name]["seconds"]
            ratio = s / results["in_process"][name]["seconds"]
            same = "same rows" if r[name]["rows"] == results["in_process"][name]["rows"] else "ROWS DIFFER"
            cpu = r[name].get("cpu_seconds")
            cores = f", {cpu / s:.2f} cores busy" if cpu is not None else ""
            print(f"{master:10s} {name:14s} {s:8.2f} s  {args.events / s:12,.0f} ev/s  "
                  f"x{ratio:5.2f} of in-process, {same} (session start {r['session_seconds']:.1f} s{cores})",
                  flush=True)
    masters = args.masters.split(",")
    if len(masters) >= 2 and names:
        for name in names:
            one, two = (results["spark"][m][name]["seconds"] for m in masters[:2])
            speedup = one / two
            print(f"speed-up {masters[1]} over {masters[0]} for {name}: {speedup:.2f}x")
    if not args.skip_stream:
        s = _stream(args)
        results["stream"] = s
        for batch_id, n, ms in s["batches"]:
            print(f"micro-batch {batch_id}: {n:,} events (a stream over 10,000 keys) in {ms / 1000:.2f} s"
                  + ("  (the first: query planning, worker start, JIT)" if batch_id == 0 else ""))
        steady = sorted(ms for b, _, ms in s["batches"] if b > 0)
        if steady:
            print(f"micro-batches after the first: median {steady[len(steady) // 2] / 1000:.2f} s, "
                  f"max {steady[-1] / 1000:.2f} s")
            phases = phase_medians(s["progress"])
            s["phase_medians_ms"] = phases
            print("where a micro-batch after the first goes (median ms): "
                  + ", ".join(f"{name} {ms:.0f}" for name, ms in phases.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0
