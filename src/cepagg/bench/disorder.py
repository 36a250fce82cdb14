"""Out-of-order strategies: latency, state, throughput, revisions, early precision/recall.

A synthetic stream (types A, B, C; ``--keys`` partitions; integer times) is disordered with
:func:`cepagg.order.disorder.disorder` at several disorder fractions and delay distributions
(with bursts of late C events, the negated type), then run through

* ``in-order`` — the engine fed events as they arrive, late ones dropped (K-slack with K = 0),
* ``kslack`` at K = the 50th, 90th and 100th percentile of the actual lateness of late events,
* ``conservative`` at several punctuation rates (truthful per-type punctuations),
* ``aggressive`` with L = the largest lateness,

for a SLIDE aggregate query and a match query. Per run: result latency (the stream clock when a
unit's final value was emitted, minus the clock at which an in-order engine could first have
emitted it; mean and 95th percentile), the first-emission latency, the layer's state (buffered
events, tracked units), events per second, revisions, precision and recall of the outputs
emitted before the end of the input against the final answer, whether the net output equals
the reference evaluator on the in-order stream, late events, and how often the first emission
of a unit came no later than the in-order engine's.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

QUERIES = {
    "slide": "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 20 SLIDE 10",
    "match": "PATTERN SEQ(A, !C, B) WHERE [g] WITHIN 10",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=600, help="events per stream (default 600)")
    p.add_argument("--keys", type=int, default=6, help="partition keys (default 6)")
    p.add_argument("--fractions", default="0,0.1,0.3,0.5", help="disorder fractions (exponential delays)")
    p.add_argument("--delays", default="uniform,exp,pareto",
                   help="delay distributions compared at --at-fraction")
    p.add_argument("--at-fraction", type=float, default=0.3)
    p.add_argument("--scale", type=float, default=10, help="delay scale in time units (default 10)")
    p.add_argument("--cap", type=int, default=300, help="largest delay (default 300)")
    p.add_argument("--rates", default="0.02,0.1,0.5", help="conservative punctuation rates per arrival")
    p.add_argument("--queries", default="slide,match", help="which queries: slide, match")
    p.add_argument("--engine", default="auto")
    p.add_argument("--tick", type=int, default=1, help="emit after every N arrivals")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--plots", default="docs/img", help="directory for the PNG plots ('' for none)")
    p.add_argument("--spark", action="store_true",
                   help="instead: on Spark, a slow key (--slow-lag behind the others) under Spark's global "
                        "watermark vs the layer's per-key clocks (uses --events, --keys, --batch-rows)")
    p.add_argument("--slow-lag", type=int, default=40, help="--spark: how far the slow key lags (default 40)")
    p.add_argument("--batch-rows", type=int, default=20, help="--spark: events per micro-batch (default 20)")


def stream(rng: random.Random, n: int, keys: int) -> list[dict]:
    ts, rows = 0, []
    for _ in range(n):
        ts += rng.randint(0, 3)
        rows.append({"type": rng.choice("AABBC"), "ts": ts, "x": rng.randint(0, 9),
                     "g": f"k{rng.randrange(keys)}"})
    return rows


def _quantile(values: list[int], q: float) -> int:
    if not values:
        return 0
    values = sorted(values)
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def configs(arr, rates: list[float]):
    from ..order import OrderConfig
    from ..order.disorder import exact_punctuations

    late = [d for d in arr.lateness() if d > 0]
    top = max(late, default=0)
    out = [("in-order", "in-order (K=0)", OrderConfig("kslack", slack=0), arr)]
    for name, q in (("p50", 0.5), ("p90", 0.9), ("max", 1.0)):
        k = _quantile(late, q)
        out.append((f"kslack K={k} ({name})", f"kslack K={name}", OrderConfig("kslack", slack=k), arr))
    for rate in rates:
        out.append((f"conservative p={rate:g}", f"conservative p={rate:g}", OrderConfig("conservative"),
                    exact_punctuations(arr, rate, "types", random.Random(7))))
    out.append((f"aggressive L={top}", "aggressive L=max", OrderConfig("aggressive", lateness=top), arr))
    return out


def measure(query, arr, config, engine: str, tick: int, baseline=None) -> dict:
    """Run one configuration and compute its metrics (see the module docstring)."""
    from ..engines import ENGINES
    from ..order import run_ordered
    from ..order.output import same_result
    from ..order.shape import INF, Shape

    shape = Shape(query)
    n = len(arr.items)
    started = time.perf_counter()
    run = run_ordered(query, arr, config, engine=engine, tick=tick, sample_every=max(1, n // 200))
    wall = time.perf_counter() - started
    reference = ENGINES["reference"](query).run(arr.in_order())
    final = shape.units(reference.rows)
    emissions = unit_emissions(shape, run.outputs)
    lat, first_lat, early_ok, early_all, recalled = [], [], 0, 0, 0
    for unit, events in emissions.items():
        due = shape.due_clock(unit)
        for at, clock, value, asserted in events:
            if at < n and asserted:
                early_all += 1
                early_ok += int(_correct(shape, final, unit, value))
        if due >= INF:
            continue
        first_lat.append(events[0][1] - due)
    for unit in final:
        events = emissions.get(unit, [])
        settle = _settled(shape, final, unit, events)
        if settle is not None:
            at, clock = settle
            due = shape.due_clock(unit)
            if due < INF:
                lat.append(clock - due)
            recalled += int(at < n)
    first_ok = first_total = 0
    if baseline is not None:
        for unit, events in baseline.items():
            if unit in final and unit in emissions:
                first_total += 1
                first_ok += int(emissions[unit][0][0] <= events[0][0])
    kinds = {}
    for o in run.outputs:
        kinds[o.kind] = kinds.get(o.kind, 0) + 1
    return {
        "latency_mean": statistics.fmean(lat) if lat else float("nan"),
        "latency_p95": _quantile(lat, 0.95) if lat else float("nan"),
        "first_latency_mean": statistics.fmean(first_lat) if first_lat else float("nan"),
        "buffered_max": max((s[1] for s in run.samples), default=0),
        "buffered_mean": statistics.fmean(s[1] for s in run.samples) if run.samples else 0,
        "units_max": max((s[2] for s in run.samples), default=0),
        "events_per_s": len(arr.events) / wall,
        "revisions": run.revisions(),
        "outputs": len(run.outputs),
        "precision": early_ok / early_all if early_all else float("nan"),
        "recall": recalled / len(final) if final else float("nan"),
        "converged": not same_result(query, reference, run.net()),
        "late": run.late_count,
        "first_no_later": (first_ok, first_total),
        "rollbacks": run.stats.get("rollbacks", 0),
        "emissions": emissions,
        "kinds": kinds,
    }


def unit_emissions(shape, outputs) -> dict:
    """{unit: [(at, clock, value, asserts_a_value)]} in emission order. Aggregates: value is the
    row (None for a retraction); matches: value is +1 for an insertion, -1 for a deletion."""
    out: dict = {}
    if not shape.matches:
        for o in outputs:
            key = tuple(o.row[:shape.width])
            value = None if o.kind == "retract" else o.row
            out.setdefault(key, []).append((o.at, o.clock, value, o.kind != "retract"))
        return out
    groups: dict = {}
    for o in outputs:
        groups.setdefault((o.kind, o.row[shape.width]), (o.at, o.clock, []))[2].append(o.row)
    for (kind, _), (at, clock, rows) in sorted(groups.items(), key=lambda kv: kv[1][0]):
        for unit in shape.units(rows):
            out.setdefault(unit, []).append((at, clock, 1 if kind == "insert" else -1, kind == "insert"))
    return out


def _correct(shape, final, unit, value) -> bool:
    if shape.matches:
        return unit in final
    return unit in final and final[unit] == value


def _settled(shape, final, unit, events):
    """(at, clock) of the emission after which the unit stayed at its final value."""
    if not events:
        return None
    if shape.matches:
        live, since = 0, None
        for at, clock, value, _ in events:
            live += value
            if live >= final[unit] and since is None:
                since = (at, clock)
            elif live < final[unit]:
                since = None
        return since
    at, clock, value, _ = events[-1]
    return (at, clock) if value == final[unit] else None


def _fractions(option: str, text: str) -> list[float]:
    """A comma-separated list of fractions in [0, 1] (of delayed events, of punctuations per arrival)."""
    from ..errors import UsageError

    out = []
    for x in (x.strip() for x in text.split(",") if x.strip()):
        try:
            value = float(x)
        except ValueError:
            value = None
        if value is None or not 0 <= value <= 1:
            raise UsageError(f"{option} {x!r}: expected fractions from 0 to 1, comma-separated")
        out.append(value)
    return out


def main(args: argparse.Namespace) -> int:
    if args.spark:
        return spark_lag(args)
    from ..lang import compile_query
    from ..order.disorder import DELAYS, disorder
    from . import chosen

    fractions, rates = _fractions("--fractions", args.fractions), _fractions("--rates", args.rates)
    delays = chosen("--delays", args.delays, DELAYS) or []
    queries = chosen("--queries", args.queries, QUERIES) or []
    settings = [("exp", f) for f in fractions]
    settings += [(d, args.at_fraction) for d in delays if (d, args.at_fraction) not in settings]
    results = []
    print(f"cepagg bench disorder: {args.events} events, {args.keys} keys, delay scale {args.scale}, "
          f"cap {args.cap}, engine {args.engine}, tick {args.tick}, seed {args.seed}", file=sys.stderr)
    for qname in queries:
        query = compile_query(QUERIES[qname])
        for delay, fraction in settings:
            rng = random.Random(args.seed)
            rows = stream(rng, args.events, args.keys)
            arr = disorder(rows, rng, fraction=fraction, delay=delay, scale=args.scale, cap=args.cap,
                           burst_types=("C",), bursts=0.05 if fraction > 0 else 0.0,
                           burst_delay=int(3 * args.scale))
            baseline = None
            for name, label, config, arrival in configs(arr, rates):
                m = measure(query, arrival, config, args.engine, args.tick,
                            baseline=None if name == "in-order" else baseline)
                if name == "in-order":
                    baseline = m["emissions"]
                m.update(query=qname, delay=delay, fraction=fraction, strategy=name, label=label,
                         late_events=sum(1 for d in arr.lateness() if d > 0))
                results.append(m)
                print(_line(m), file=sys.stderr)
    print(markdown(results))
    if args.plots:
        for path in plots(results, Path(args.plots)):
            print(f"cepagg bench disorder: plot {path}", file=sys.stderr)
    return 0


def _line(m: dict) -> str:
    ok, total = m["first_no_later"]
    return (f"{m['query']:5} {m['delay']:7} {m['fraction']:.2f} {m['strategy']:24} "
            f"lat {m['latency_mean']:7.1f} p95 {m['latency_p95']:6} first {m['first_latency_mean']:7.1f} "
            f"buf {m['buffered_max']:4} "
            f"ev/s {m['events_per_s']:6.0f} rev {m['revisions']:4} prec {m['precision']:.3f} "
            f"rec {m['recall']:.3f} conv {m['converged']} late {m['late']} first<=in-order {ok}/{total}")


def markdown(results: list[dict]) -> str:
    head = ("| query | delays | disorder | strategy | latency mean | p95 | first-output latency | "
            "buffered max | units max | events/s | revisions | early precision | early recall | converged | "
            "late | first ≤ in-order |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for m in results:
        ok, total = m["first_no_later"]
        lines.append(
            f"| {m['query']} | {m['delay']} | {m['fraction']:.0%} | {m['strategy']} | "
            f"{_f(m['latency_mean'])} | {_f(m['latency_p95'])} | {_f(m['first_latency_mean'])} | "
            f"{m['buffered_max']} | {m['units_max']} | "
            f"{m['events_per_s']:.0f} | {m['revisions']} | {_f(m['precision'], 3)} | {_f(m['recall'], 3)} | "
            f"{'yes' if m['converged'] else 'NO'} | {m['late']} | {f'{ok}/{total}' if total else '–'} |")
    return "\n".join(lines)


def _f(x: float, digits: int = 1) -> str:
    return "–" if x != x else f"{x:.{digits}f}"


def plots(results: list[dict], where: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    where.mkdir(parents=True, exist_ok=True)
    paths = []
    panels = [("latency_mean", "result latency, mean (time units)"),
              ("buffered_max", "buffered events (max)"),
              ("revisions", "revisions emitted"), ("precision", "precision of early outputs"),
              ("recall", "recall of early outputs"), ("events_per_s", "events/s (reference engine)")]
    for qname in sorted({m["query"] for m in results}):
        sweep = [m for m in results if m["query"] == qname and m["delay"] == "exp"]
        labels = list(dict.fromkeys(m["label"] for m in sweep))
        fig, axes = plt.subplots(2, 3, figsize=(15, 8))
        for ax, (metric, title) in zip(axes.flat, panels):
            for label in labels:
                pts = sorted((m["fraction"], m[metric]) for m in sweep if m["label"] == label)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            ax.set_xlabel("disorder fraction (exponential delays)")
            ax.set_title(title, fontsize=10)
            ax.grid(alpha=0.3)
            if metric == "events_per_s":
                ax.set_yscale("log")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"cepagg bench disorder: {qname} query ({QUERIES[qname]})", fontsize=10)
        fig.tight_layout()
        path = where / f"disorder_{qname}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)

        fraction = max((m["fraction"] for m in results if m["query"] == qname and m["delay"] != "exp"),
                       default=None)
        cut = [m for m in results if m["query"] == qname and m["fraction"] == fraction]
        delays = list(dict.fromkeys(m["delay"] for m in cut))
        if len(delays) < 2:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(14, 4.5))
        width = 0.8 / len(delays)
        bars = [("latency_mean", "result latency, mean"), ("precision", "precision of early outputs")]
        for ax, (metric, title) in zip(axes, bars):
            for j, d in enumerate(delays):
                vals = [next((m[metric] for m in cut if m["delay"] == d and m["label"] == label),
                             float("nan")) for label in labels]
                ax.bar([i + j * width for i in range(len(labels))], vals, width, label=d)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))], labels, rotation=30,
                          ha="right", fontsize=8)
            ax.set_title(f"{title} at {fraction:.0%} disorder", fontsize=10)
            ax.grid(alpha=0.3, axis="y")
        axes[0].legend(title="delays")
        fig.tight_layout()
        path = where / f"disorder_{qname}_delays.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def _lagging_key(args: argparse.Namespace) -> list[dict]:
    """``--events`` events of ``--keys`` keys in arrival order, key ``k0``'s ``--slow-lag``
    time units behind the others'; ``_id``: the arrival position."""
    rng = random.Random(args.seed)
    rows = []
    for k in range(args.keys):
        ts = 0
        for _ in range(args.events // args.keys):
            ts += rng.randint(0, 3)
            rows.append({"type": rng.choice("AABBC"), "ts": ts, "x": rng.randint(0, 9), "g": f"k{k}"})
    rows.sort(key=lambda r: (r["ts"] + (args.slow_lag if r["g"] == "k0" else 0), r["g"]))
    return [dict(r, _id=i) for i, r in enumerate(rows)]


def _micro_batch_files(rows: list[dict], size: int) -> str:
    """A new temporary folder whose ``in/`` holds ``rows`` as JSON Lines files of ``size`` rows
    in arrival order (modification times increasing, for Spark's file source to take one per
    micro-batch), the end-of-stream event after the last row."""
    import json
    import os
    import tempfile

    from ..spark.sources import END_TS_MS, END_TYPE

    base = tempfile.mkdtemp(prefix="cepagg-bench-")
    os.makedirs(f"{base}/in")
    pieces = -(-len(rows) // size)
    for p in range(pieces):
        chunk = rows[p * size:(p + 1) * size]
        if p == pieces - 1:
            chunk = chunk + [{"_id": len(rows), "type": END_TYPE, "ts": END_TS_MS}]
        path = f"{base}/in/p{p:05d}.json"
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in chunk)
        os.utime(path, (1000 + p, 1000 + p))
    return base


def spark_lag(args: argparse.Namespace) -> int:
    """One key's events all arrive ``--slow-lag`` time units behind the others'. Spark's global
    watermark (K-slack with one clock, :func:`cepagg.spark.streaming.start`) must be as large as
    the lag to keep them; the layer's per-key clocks (:mod:`cepagg.spark.order`) keep them with
    a small K."""
    import shutil
    from decimal import Decimal

    from ..engines import ENGINES
    from ..events import EventBatch
    from ..lang import compile_query
    from ..order import OrderConfig, same_result
    from ..result import Result
    from ..spark.order import late_count, start_ordered
    from ..spark.session import get_session
    from ..spark.streaming import dropped_by_watermark, late_events, read_latest, start

    text = QUERIES["slide"]
    rows = _lagging_key(args)
    base = _micro_batch_files(rows, args.batch_rows)
    size = args.batch_rows
    q = compile_query(text)
    expected = ENGINES["reference"](q).run(EventBatch.from_rows(
        [{k: v for k, v in r.items() if k != "_id"} for r in rows], ids=[r["_id"] for r in rows]))
    spark = get_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    schema = "_id long, type string, ts long, x long, g string"

    def source():
        return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(f"{base}/in")

    def result(df):
        return Result(q.output_columns,
                      [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in df.collect()])

    small = 5
    runs = [
        (f"Spark watermark, delay {small} (global clock)", "wm", lambda d: start(
            source(), text, out=f"{d}/out", checkpoint=f"{d}/chk", delay=f"{small} milliseconds", buckets=4)),
        (f"Spark watermark, delay {args.slow_lag + small} (global clock)", "wm", lambda d: start(
            source(), text, out=f"{d}/out", checkpoint=f"{d}/chk",
            delay=f"{args.slow_lag + small} milliseconds", buckets=4)),
        (f"layer kslack K={small}, per-key clocks", "layer", lambda d: start_ordered(
            source(), text, OrderConfig("kslack", slack=small), out=f"{d}/out", checkpoint=f"{d}/chk",
            buckets=4)),
        (f"layer aggressive L={small}, per-key clocks", "layer", lambda d: start_ordered(
            source(), text, OrderConfig("aggressive", lateness=small), out=f"{d}/out", checkpoint=f"{d}/chk",
            buckets=4)),
    ]
    print(f"cepagg bench disorder --spark: {len(rows)} events, {args.keys} keys, "
          f"key k0 {args.slow_lag} behind, {size} events per micro-batch, query {text}", file=sys.stderr)
    print("| run | events | wall s | events/s | late (dropped or counted) | equals reference |")
    print("|---|---|---|---|---|---|")
    for k, (name, kind, go) in enumerate(runs):
        d = f"{base}/run{k}"
        started = time.perf_counter()
        sq = go(d)
        sq.awaitTermination()
        wall = time.perf_counter() - started
        if kind == "wm":
            lost = late_events(spark, f"{d}/chk")[0] + dropped_by_watermark(sq)
            got = result(spark.read.parquet(f"{d}/out"))
        else:
            lost = late_count(spark, f"{d}/chk")[0]
            got = result(read_latest(spark, f"{d}/out", text))
        same = not same_result(q, expected, got)
        print(f"| {name} | {len(rows)} | {wall:.1f} | {len(rows) / wall:.0f} | {lost} | "
              f"{'yes' if same else 'NO'} |", flush=True)
    shutil.rmtree(base, ignore_errors=True)
    return 0
