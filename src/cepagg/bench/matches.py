"""Matches written per second to Parquet: rcep, nfa and the reference, with CORE and Flink CEP.

Each measurement is one process (``--child``) that reads a generated events file, then writes
every match of a RETURN-of-events query to a Parquet file through
:func:`cepagg.runner.write_matches` (long form, a row per matched event); it reports the
matches, the time of the writing (evaluation included, reading the events excluded) and its
peak memory (RSS of the process, measured around it by the peers' wrapper,
:func:`cepagg.bench.peers.runner.with_rss`).

Workloads (the peers' generated data, :mod:`cepagg.bench.peers.workloads`):

* ``seq3``: ``SEQ(A a, B b, C c) WHERE [key]`` over uniformly random types A-E, N in 10 keys;
  the window grows so the matches go from about 10^5 to 10^7 (the memory series).
* ``kleene``: ``SEQ(A a, B b+, C c) WHERE [key]``, the query of a new user's first try; the
  window grows to about 7 * 10^6 matches.
* ``query1``: the RCEP paper's Query 1 (Kammoun et al., EDBT 2018) over price walks,
  ``SEQ(a, b+, c) WHERE [key] AND a.price < b.price AND b.price < NEXT(b).price AND
  c.price < FIRST(b).price``, and the variant without the uptrend condition (every subset of
  the rising b's): rcep against the automaton baseline, nfa.
* ``query1-or``: Query 1 with a disjunction checked per pair of b's (``b.price <
  NEXT(b).price OR NEXT(b).price > a.price + 1``); ``query1-agg``: the matches of
  ``query1-any`` folded into ``COUNT(*)``, ``SUM``, ``AVG`` and ``MAX`` per key (an aggregate
  query: its time is the evaluation's, no file; its "matches" are those folded).

``rcep-python`` (run only when named in ``--engines``) is rcep with its compiled join switched
off: the Python join.

CORE and Flink CEP run each workload's pattern (:func:`peer_workload`: keyed,
skip-till-any-match) through ``cepagg bench peers``' runners, where installed, and their counts
are checked against cepagg's (they enumerate matches; CORE into its text output, Flink CEP into
a counter, neither to Parquet). CORE cannot state Query 1 (its filters are unary); the cell
says so.

The reference runs only where rcep found at most ``--reference-max`` matches; an engine that
exceeds the time limit on a window is not run on the larger windows of the series.

``--compile`` only times rcep's first match query in fresh processes, with the compiled join's
numba cache deleted and then present (its compile time, :mod:`cepagg.engines.rcep.compiled`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

MARK = "MATCHES-RESULT "
SCALES = {
    # workload -> (events, windows in ms)
    "tiny": {"seq3": (2_000, (500, 1_000)), "kleene": (2_000, (1_000, 2_000)), "query1": (500, (200, 500)),
             "query1-any": (500, (200, 500)), "query1-or": (500, (200, 500)), "query1-agg": (500, (200, 500))},
    # seq3 about 10^5, 10^6 and 10^7 matches
    "quick": {"seq3": (20_000, (5_000, 15_000, 50_000)),
              # kleene about 10^4, 10^5, 6 * 10^5, 3 * 10^6 and 7 * 10^6 matches
              "kleene": (20_000, (1_000, 2_000, 3_000, 4_000, 4_500)),
              "query1": (2_000, (200, 500, 1_000)), "query1-any": (2_000, (200, 500, 1_000)),
              "query1-or": (2_000, (200, 500, 1_000)), "query1-agg": (2_000, (200, 500, 1_000))},
}
QUERIES = {
    "seq3": "PATTERN SEQ(A a, B b, C c) WHERE [key] WITHIN {w} ms RETURN a, b, c",
    "kleene": "PATTERN SEQ(A a, B b+, C c) WHERE [key] WITHIN {w} ms RETURN a, b, c",
    "query1": "PATTERN SEQ(a, b+, c) WHERE [key] AND a.price < b.price AND b.price < NEXT(b).price "
              "AND c.price < FIRST(b).price WITHIN {w} ms RETURN a, b, c",
    "query1-any": "PATTERN SEQ(a, b+, c) WHERE [key] AND a.price < b.price AND c.price < FIRST(b).price "
                  "WITHIN {w} ms RETURN a, b, c",
    # a disjunction checked per pair of b's; and query1-any's matches folded into aggregates
    "query1-or": "PATTERN SEQ(a, b+, c) WHERE [key] AND a.price < b.price AND (b.price < NEXT(b).price "
                 "OR NEXT(b).price > a.price + 1) AND c.price < FIRST(b).price WITHIN {w} ms RETURN a, b, c",
    "query1-agg": "RETURN key, COUNT(*), SUM(b.price), AVG(b.price), MAX(c.price) PATTERN SEQ(a, b+, c) "
                  "WHERE [key] AND a.price < b.price AND c.price < FIRST(b).price GROUP BY key WITHIN {w} ms",
}
ENGINES = ("rcep", "nfa", "reference")
#: run only when named: rcep with its compiled join switched off (the Python join)
VARIANTS = ("rcep-python",)
PEERS = ("core", "flink-cep")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", choices=list(SCALES), default="quick",
                   help="tiny (a minute), quick (default: up to 10^7 matches, about an hour)")
    p.add_argument("--workloads", default=",".join(QUERIES), help="comma-separated: " + ", ".join(QUERIES))
    p.add_argument("--engines", default=",".join(ENGINES + PEERS),
                   help="comma-separated: " + ", ".join(ENGINES + PEERS + VARIANTS))
    p.add_argument("--timeout", type=float, default=300.0, help="seconds one measurement may take")
    p.add_argument("--reference-max", type=int, default=200_000,
                   help="run the reference only where rcep found at most this many matches")
    p.add_argument("--data", type=Path, default=Path("bench-data"), help="folder of the generated events files")
    p.add_argument("--out", type=Path, default=Path("bench-results/matches.json"), help="results (JSON)")
    p.add_argument("--plot", type=Path, default=None, help="folder for the plots (e.g. docs/img)")
    p.add_argument("--no-install", action="store_true", help="do not install missing peers (report them)")
    p.add_argument("--compile", action="store_true",
                   help="only time rcep's first match query in a fresh process, with its compiled join's "
                        "cache deleted (cold) and then cached; --repeat times each")
    p.add_argument("--repeat", type=int, default=2, help="with --compile: runs of each")
    p.add_argument("--compile-child", choices=("cold", "cached"), help=argparse.SUPPRESS)
    p.add_argument("--child", nargs=4, metavar=("ENGINE", "CSV", "QUERY", "OUT"), help=argparse.SUPPRESS)


def child(engine: str, csv: str, query: str, out: str) -> int:
    """One measurement: read the events, write the matches, print one result line."""
    from cepagg.io import read_events
    from cepagg.runner import write_matches

    batch = read_events(csv).batch
    if engine == "rcep-python":
        from cepagg.engines.rcep.engine import Rcep

        Rcep.compiles, engine = False, "rcep"
    if not query.startswith("PATTERN"):
        return _aggregate_child(engine, batch, query)
    write_matches(query, batch.slice(0, 200), out, engine=engine)  # warm-up: imports, the grammar
    t0 = time.perf_counter()
    written = write_matches(query, batch, out, engine=engine)
    seconds = time.perf_counter() - t0
    size = os.path.getsize(out)
    os.unlink(out)
    print(MARK + json.dumps({"count": written.matches, "rows": written.rows, "seconds": seconds,
                             "bytes": size, "engine": written.engine}), flush=True)
    return 0


def _aggregate_child(engine: str, batch, query: str) -> int:
    """One measurement of an aggregate query (``RETURN key, COUNT(*), ...``): the time of its
    evaluation; ``count`` is the number of matches folded (the sum of COUNT(*))."""
    from cepagg.runner import run

    run(query, batch.slice(0, 200), engine=engine)  # warm-up: imports, the grammar
    t0 = time.perf_counter()
    result = run(query, batch, engine=engine)
    seconds = time.perf_counter() - t0
    print(MARK + json.dumps({"count": sum(result.column("COUNT(*)")), "rows": len(result.rows),
                             "seconds": seconds, "bytes": 0, "engine": engine}), flush=True)
    return 0


def compile_child(mode: str) -> int:
    """CPU seconds of rcep's first condition-free match query in this process (numba's import
    and the compiled join's compiling or loading included), after deleting the join's cache
    when ``mode`` is "cold"."""
    import cepagg.engines.rcep as rcep

    if mode == "cold":
        for f in (Path(rcep.__file__).parent / "__pycache__").glob("_kernels*.nb*"):
            f.unlink()
    from cepagg.events import EventBatch
    from cepagg.runner import run

    batch = EventBatch.from_rows([{"type": t, "ts": i} for i, t in enumerate("ABC")])
    c0 = time.process_time()
    rows = run("PATTERN SEQ(A a, B b, C c) WITHIN 10 RETURN a, b, c", batch, engine="rcep").rows
    assert len(rows) == 3
    print(MARK + json.dumps({"mode": mode, "cpu_s": time.process_time() - c0}), flush=True)
    return 0


def compile_times(repeat: int) -> int:
    """``--compile``: rcep's first match query, cold and cached, each ``repeat`` times."""
    import subprocess

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for _ in range(repeat):
        for mode in ("cold", "cached"):
            out = subprocess.run([sys.executable, "-m", "cepagg.cli", "bench", "matches", "--compile-child", mode],
                                 env=env, capture_output=True, text=True, check=True).stdout
            r = json.loads(next(x for x in out.splitlines() if x.startswith(MARK))[len(MARK):])
            print(f"rcep's first match query, {mode}: {r['cpu_s']:.2f} s CPU", flush=True)
    return 0


def _spec(name: str, n: int):
    """The generated data of workload ``name``: the peers' random types, or their price walks."""
    from .peers.workloads import TYPES, DataSpec

    return (DataSpec("types", "types", n, 10, TYPES, mean_gap_ms=10, seed=42) if name in ("seq3", "kleene")
            else DataSpec("stock", "stock", n, 10, ("Stock",), mean_gap_ms=10, seed=7))


def _data(name: str, n: int, folder: Path) -> tuple[Path, object]:
    from .peers.workloads import write_data

    spec = _spec(name, n)
    return write_data(spec, folder).resolve(), spec


def _measure(engine: str, csv: Path, query: str, out: Path, timeout: float) -> dict:
    from .peers.runner import run_limited, with_rss

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "cepagg.cli", "bench", "matches", "--child", engine, str(csv), query, str(out)]
    stdout, rc, wall, peak, tail = run_limited(with_rss(cmd), timeout + 30, env=env)
    if rc is None:
        return {"status": "timeout", "detail": f"no answer within {timeout:.0f} s"}
    for line in stdout.splitlines():
        if line.startswith(MARK):
            r = json.loads(line[len(MARK):])
            status = "timeout" if r["seconds"] > timeout else "ok"
            return dict(r, status=status, peak_rss_mb=peak, wall_s=wall)
    return {"status": "error", "detail": f"exit {rc}: {tail}"}


#: The workloads the peers run: each is the pattern of :data:`QUERIES` (keyed,
#: skip-till-any-match) as a :class:`cepagg.bench.peers.workloads.Workload`.
PEER_WORKLOADS = ("seq3", "kleene", "query1", "query1-any")


def peer_workload(name: str, n: int):
    """The peers' workload ``name`` over the file of :func:`_data` (``name``, ``n``): the peers'
    ``seq3`` and ``kleene``; RCEP's Query 1 with and without its uptrend condition."""
    from dataclasses import replace

    from .peers.workloads import by_name, query1

    if name in ("query1", "query1-any"):
        return query1(_spec(name, n), (), uptrend=name == "query1")
    wl = by_name("quick")[name]
    return replace(wl, data=replace(wl.data, n_events=n))


def _peer(runner, peer: str, name: str, window: int, n: int) -> dict:
    """CORE or Flink CEP on workload ``name``, keyed, skip-till-any-match (their count of matches)."""
    o = runner.run(peer, peer_workload(name, n), "skip-till-any-match", True, window)
    if o.status != "ok":
        return {"status": o.status, "detail": o.detail}
    return {"status": "ok", "count": o.count, "seconds": o.engine_s, "peak_rss_mb": o.peak_rss_mb,
            "wall_s": o.wall_s}


def main(args: argparse.Namespace) -> int:
    if args.child:
        return child(*args.child)
    if args.compile_child:
        return compile_child(args.compile_child)
    if args.compile:
        return compile_times(args.repeat)
    series = SCALES[args.scale]
    names = [w for w in args.workloads.split(",") if w]
    engines = [e for e in args.engines.split(",") if e]
    for x in names + engines:
        if x not in QUERIES and x not in ENGINES + PEERS + VARIANTS:
            raise SystemExit(f"cepagg bench matches: unknown workload or engine {x!r}")
    args.data.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    runner = None
    peers = [p for p in engines if p in PEERS]
    if peers and any(name in PEER_WORKLOADS for name in names):
        from .peers.environments import ensure
        from .peers.runner import Runner

        envs = ensure(peers=tuple(peers), install=not args.no_install)
        for line in envs.describe():
            print(f"# peers: {line}", flush=True)
        runner = Runner(envs, args.data, args.timeout)
    results = []
    for name in names:
        n, windows = series[name]
        csv, _ = _data(name, n, args.data)
        gave_up: set[str] = set()
        for w in windows:
            query = QUERIES[name].format(w=w)
            row = {"workload": name, "window_ms": w, "events": n, "query": query, "runs": {}}
            ours = [e for e in engines if e in ENGINES + VARIANTS]
            for engine in ours + (peers if name in PEER_WORKLOADS else []):
                rcep = row["runs"].get("rcep", {})
                if engine in gave_up:
                    r = {"status": "skipped", "detail": "timed out on a smaller window"}
                elif engine == "reference" and not (rcep.get("status") == "ok"
                                                    and rcep["count"] <= args.reference_max):
                    r = {"status": "skipped", "detail": f"more than {args.reference_max} matches"}
                elif engine in PEERS:
                    r = _peer(runner, engine, name, w, n)
                else:
                    r = _measure(engine, csv, query, args.data / f"out-{engine}.parquet", args.timeout)
                if r["status"] == "timeout":
                    gave_up.add(engine)
                row["runs"][engine] = r
                print(f"# {name} w={w} {engine}: {_cell(r)}", flush=True)
            row["agree"] = _agree(row["runs"])
            results.append(row)
    args.out.write_text(json.dumps({"scale": args.scale, "results": results}, indent=1))
    print(markdown(results))
    print(f"# results: {args.out}")
    if args.plot:
        plot(results, args.plot)
    return 0 if all(r["agree"] is not False for r in results) else 1


def _agree(runs: dict) -> bool | None:
    counts = {r["count"] for r in runs.values() if r.get("status") == "ok"}
    return None if len(counts) == 0 else len(counts) == 1


def _cell(r: dict) -> str:
    if r.get("status") != "ok":
        return f"{r.get('status')}: {r.get('detail', '')}"
    rate = r["count"] / r["seconds"] if r.get("seconds") else float("nan")
    mem = f", {r['peak_rss_mb']:.0f} MiB" if r.get("peak_rss_mb") else ""
    return f"{r['count']:,} matches in {r['seconds']:.2f} s = {rate:,.0f}/s{mem}"


#: How the table shows a run without a rate.
CELL_STATUS = {"inexpressible": "cannot express", "skipped": "–"}


def markdown(results: list[dict]) -> str:
    engines = [e for e in ENGINES + VARIANTS + PEERS if any(e in r["runs"] for r in results)]
    head = "| workload | window | matches | " + " | ".join(f"{e}: matches/s, peak RSS" for e in engines) + " |"
    lines = [head, "|" + "---|" * (3 + len(engines))]
    for r in results:
        counts = sorted({x["count"] for x in r["runs"].values() if x.get("status") == "ok"})
        cells = []
        for e in engines:
            x = r["runs"].get(e)
            if x is None:
                cells.append("")
            elif x.get("status") != "ok":
                cells.append(CELL_STATUS.get(x.get("status", ""), x.get("status", "")))
            else:
                rss = f", {x['peak_rss_mb']:.0f} MiB" if x.get("peak_rss_mb") else ""
                cells.append(f"{x['count'] / x['seconds']:,.0f}{rss}")
        agree = "" if r["agree"] is not False else " (counts differ!)"
        lines.append(f"| {r['workload']} | {r['window_ms']:,} ms | {', '.join(f'{c:,}' for c in counts)}{agree} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: list[dict], folder: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("# matplotlib missing: no plots")
        return
    folder.mkdir(parents=True, exist_ok=True)
    colors = {"rcep": "tab:blue", "nfa": "tab:orange", "reference": "tab:gray", "core": "tab:green",
              "flink-cep": "tab:red"}
    styles = {"seq3": "-", "kleene": "-", "query1": "-", "query1-any": "--"}
    panels = [(("seq3",), "seq3"), (("kleene",), "kleene"),
              (("query1", "query1-any"), "Query 1 (-), Query 1 without NEXT (--)")]
    fig, axes = plt.subplots(len(panels), 2, figsize=(11, 4 * len(panels)))
    for row, (workloads, title) in zip(axes, panels):
        labelled = set()
        for name in workloads:
            for e in ENGINES + PEERS:
                pts = sorted((x["count"], x["count"] / x["seconds"], x.get("peak_rss_mb")) for r in results
                             if r["workload"] == name for k, x in r["runs"].items()
                             if k == e and x.get("status") == "ok" and x.get("seconds"))
                if not pts:
                    continue
                style = dict(color=colors[e], linestyle=styles[name], marker="o",
                             label=None if e in labelled else e)
                labelled.add(e)
                row[0].plot([p[0] for p in pts], [p[1] for p in pts], **style)
                if all(p[2] for p in pts):
                    row[1].plot([p[0] for p in pts], [p[2] for p in pts], **style)
        for ax, what, ylabel in [(row[0], "matches per second", "matches/s"), (row[1], "peak memory (RSS)", "MiB")]:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("matches")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{what}: {title}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        row[0].legend(fontsize=7)
    fig.tight_layout()
    path = folder / "matches.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"# plot: {path}")
