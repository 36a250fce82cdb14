"""Side by side with the engines people use today: Flink CEP, Flink SQL MATCH_RECOGNIZE, CORE.

``cepagg bench peers`` generates the workloads' CSV files (fixed seeds), installs the peers
into their own environments on first use (``environments``), then for every workload,
selection strategy, keyed/keyless and growing window runs cepagg and each peer that can express
the query as a subprocess with a time limit, checks that the counts agree, and writes tables,
ratios and plots (``report``). A peer stops at the first window it does not finish in time;
for Flink CEP (``--refine-peers``) a few bisection steps (``--refine``) then narrow down the
largest window it finishes, where cepagg's ratio to it is taken.

Outputs in ``--out`` (default ``out/peers``): ``results.jsonl`` (one record per run),
``report.md``, ``peers-<workload>.png``. ``--docs`` also runs the semantic probes
(:mod:`.probes`), writes both into docs/peers.md and copies the plots to docs/peers/. The final
numbers come from one command on a quiet machine::

    cepagg bench peers --scale full --timeout 120 --docs
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Iterator

from . import report
from .environments import default_cache, ensure
from .runner import ENGINES, Outcome, Runner
from .workloads import SCALES, STRATEGIES, STRATEGY_SHORT, by_name

REPO = Path(__file__).resolve().parents[4]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", choices=list(SCALES), default="quick",
                   help="data size and windows: tiny (seconds), quick (default), full (final numbers)")
    p.add_argument("--workloads", default="all", help="comma-separated: " + ", ".join(by_name()))
    p.add_argument("--strategies", default="any,next,contiguous",
                   help="comma-separated: any, next, contiguous")
    p.add_argument("--keyed", choices=["both", "yes", "no"], default="both",
                   help="per key (WHERE [key] / keyBy / PARTITION BY), keyless, or both")
    p.add_argument("--engines", default=",".join(e for e in ENGINES),
                   help="comma-separated: " + ", ".join(ENGINES))
    p.add_argument("--windows", default=None, help="comma-separated windows in ms (default: the scale's)")
    p.add_argument("--timeout", type=float, default=60.0, help="time limit of one run, seconds")
    p.add_argument("--cache", type=Path, default=None,
                   help="where the peers' environments live (default $CEPAGG_PEERS_CACHE or "
                        "~/.cache/cepagg/peers)")
    p.add_argument("--no-install", action="store_true", help="use installed peers only")
    p.add_argument("--out", type=Path, default=Path("out/peers"), help="results, report and plots")
    p.add_argument("--docs", action="store_true",
                   help="write the results (and the probes, which it then also runs) into "
                        "docs/peers.md and the plots into docs/peers/")
    p.add_argument("--report-only", action="store_true", help="rebuild the report from results.jsonl")
    p.add_argument("--probes", action="store_true",
                   help="run the semantic probes (tiny streams where definitions differ) instead")
    p.add_argument("--refine", type=int, default=3,
                   help="after a peer of --refine-peers times out, this many bisection steps between "
                        "the largest window it finished and the one it did not (default 3)")
    p.add_argument("--refine-peers", default="flink-cep",
                   help="comma-separated peers whose limit is refined (default flink-cep)")
    p.add_argument("--flink-parallelism", type=int, default=1)
    p.add_argument("--java-heap", default="4g", help="-Xmx of the Flink CEP JVM")


def _strategies(text: str) -> list[str]:
    inv = {v: k for k, v in STRATEGY_SHORT.items()}
    out = []
    for s in text.split(","):
        s = s.strip()
        out.append(inv.get(s, s))
        if out[-1] not in STRATEGIES:
            raise SystemExit(f"unknown strategy {s!r}: any, next, contiguous")
    return out


def main(args: argparse.Namespace) -> int:
    wls = by_name(args.scale)
    chosen = list(wls) if args.workloads == "all" else [w.strip() for w in args.workloads.split(",")]
    for w in chosen:
        if w not in wls:
            raise SystemExit(f"unknown workload {w!r}; known: {', '.join(wls)}")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ENGINES:
            raise SystemExit(f"unknown engine {e!r}; known: {', '.join(ENGINES)}")
    strategies = _strategies(args.strategies)
    keyed_opts = {"both": [False, True], "yes": [True], "no": [False]}[args.keyed]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    meta_file = out / "meta.json"
    if args.report_only and meta_file.exists():
        meta = json.loads(meta_file.read_text())
    else:
        command = (" ".join(["cepagg bench peers", *sys.argv[3:]]) if sys.argv[1:3] == ["bench", "peers"]
                   else " ".join(sys.argv))
        meta = {"command": command, "scale": args.scale, "time limit": f"{args.timeout:.0f} s",
                "machine": f"{platform.machine()}, {_cpus()} cores, Python {platform.python_version()}",
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    timeout = float(str(meta.get("time limit", f"{args.timeout}")).split()[0])

    if args.probes:
        return _probes(args, engines, out)
    if not args.report_only:
        meta_file.write_text(json.dumps(meta, indent=1))
        _measure_all(args, [(name, wls[name]) for name in chosen], engines, strategies, keyed_opts, out, results)
    outcomes = report.load(results)
    body = _report(outcomes, wls, out, meta, timeout)
    (out / "report.md").write_text(body)
    print(body)
    if args.docs:
        docs = Path("docs") if Path("docs/peers.md").exists() else REPO / "docs"
        (docs / "peers").mkdir(parents=True, exist_ok=True)
        for p in out.glob("peers-*.png"):
            shutil.copy(p, docs / "peers" / p.name)
        report.update_docs(docs / "peers.md", body.replace("](peers-", "](peers/peers-"))
        print(f"[peers] wrote the results into {docs / 'peers.md'} and the plots into {docs / 'peers'}",
              file=sys.stderr)
        if not args.report_only:
            _probes(args, engines, out)
    print(f"[peers] results: {results}; report: {out / 'report.md'}; plots: {out}/peers-*.png",
          file=sys.stderr)
    diffs = report.disagreements(outcomes)
    if diffs:
        print(f"[peers] {len(diffs)} count(s) differ from cepagg's: see the report "
              "(docs/peers.md explains each kind)", file=sys.stderr)
    return 0


def _measure_all(args: argparse.Namespace, workloads: list, engines: list[str], strategies: list[str],
                 keyed_opts: list[bool], out: Path, results: Path) -> None:
    """Run every engine on every workload (``(name, workload)``), strategy, keying and window,
    writing each outcome to ``results`` as it comes: the peers' environments first, and an
    engine that timed out or failed at a window is skipped at the larger ones."""
    peers = tuple(e for e in engines if not e.startswith("cepagg"))
    envs = None
    if peers:
        print(f"[peers] peer environments in {args.cache or default_cache()}", file=sys.stderr)
        envs = ensure(args.cache, peers, install=not args.no_install)
        for line in envs.describe():
            print(f"[peers] {line}", file=sys.stderr)
    runner = Runner(envs, out / "data", args.timeout, args.flink_parallelism, args.java_heap)
    outcomes: list[Outcome] = []
    spark_why = None
    if "cepagg-spark" in engines:
        from .cepagg_run import spark_available

        spark_why = spark_available()
        if spark_why:
            print(f"[peers] cepagg on Spark: {spark_why}", file=sys.stderr)
    with open(results, "w") as f:
        for name, wl in workloads:
            for strategy in strategies:
                windows = ([int(x) for x in args.windows.split(",")] if args.windows
                           else list(wl.windows_for(strategy)))
                for keyed in keyed_opts:
                    stopped: dict[str, str] = {}
                    for w in sorted(windows):
                        for e in engines:
                            base = dict(engine=e, workload=name, strategy=strategy, keyed=keyed,
                                        window_ms=w)
                            if e == "cepagg-spark" and spark_why:
                                o = Outcome(**base, status="unavailable", detail=spark_why)
                            elif e == "cepagg-spark" and not args.windows and (
                                    strategy != "skip-till-any-match" or w not in wl.check_windows):
                                # A Spark run costs a session start (30-60 s here): it is
                                # measured on skip-till-any-match at the check windows only.
                                continue
                            elif e in stopped:
                                o = Outcome(**base, status="skipped", detail=stopped[e])
                            else:
                                o = runner.run(e, wl, strategy, keyed, w)
                                if o.status in ("timeout", "error"):
                                    stopped[e] = f"{o.status} at {w} ms"
                                _progress(o)
                            outcomes.append(o)
                            f.write(o.to_json() + "\n")
                            f.flush()
                    for peer in args.refine_peers.split(","):
                        if peer in engines and args.refine > 0:
                            for o in _refine(runner, wl, strategy, keyed, peer, outcomes, args.refine):
                                outcomes.append(o)
                                f.write(o.to_json() + "\n")
                                f.flush()


def nice_window(ms: float) -> int:
    """``ms`` rounded to two significant digits, so refined windows read like the scale's.

    >>> [nice_window(x) for x in (3.2, 141.4, 3162.3, 7071.1)]
    [3, 140, 3200, 7100]
    """
    if ms < 10:
        return max(1, round(ms))
    step = 10 ** (len(str(int(ms))) - 2)
    return int(round(ms / step) * step)


def _refine(runner: Runner, wl, strategy: str, keyed: bool, peer: str, outcomes: list[Outcome],
            steps: int) -> Iterator[Outcome]:
    """Narrow down where ``peer`` stops finishing in one series: the scale's windows grow by
    2-2.5x, and "the largest window the peer finishes" (where a headline ratio is taken) is only
    as close to its time limit as that step. Bisects (geometrically) between the largest window it
    finished and the smallest it timed out at, running cepagg at each new window too, for the
    ratio."""
    mine = [o for o in outcomes if (o.workload, o.strategy, o.keyed) == (wl.name, strategy, keyed)]
    done = [o.window_ms for o in mine if o.engine == peer and o.status == "ok"]
    failed = [o.window_ms for o in mine if o.engine == peer and o.status == "timeout"]
    if not done or not failed:
        return
    lo, hi = max(done), min(failed)
    cepagg_stop = min((o.window_ms for o in mine
                       if o.engine == "cepagg" and o.status in ("timeout", "error")), default=None)
    for _ in range(steps):
        w = nice_window((lo * hi) ** 0.5)
        if not lo < w < hi:
            return
        if cepagg_stop is None or w < cepagg_stop:
            o = runner.run("cepagg", wl, strategy, keyed, w)
            _progress(o)
            yield o
        o = runner.run(peer, wl, strategy, keyed, w)
        _progress(o)
        yield o
        if o.status == "ok":
            lo = w
        elif o.status == "timeout":
            hi = w
        else:
            return


PROBES_START, PROBES_END = "<!-- peers:probes:start -->", "<!-- peers:probes:end -->"


def _probes(args, engines, out) -> int:
    from .probes import probes_markdown, run_probes

    engines = [e for e in engines if e != "cepagg-spark"]
    peers = tuple(e for e in engines if e != "cepagg")
    envs = ensure(args.cache, peers, install=not args.no_install) if peers else None
    runner = Runner(envs, out / "probes", args.timeout, args.flink_parallelism, args.java_heap)
    body = probes_markdown(run_probes(runner, out / "probes", engines), engines)
    (out / "probes.md").write_text(body + "\n")
    print(body)
    if args.docs:
        docs = Path("docs") if Path("docs/peers.md").exists() else REPO / "docs"
        report.update_docs(docs / "peers.md", body, PROBES_START, PROBES_END)
        print(f"[peers] wrote the probes into {docs / 'peers.md'}", file=sys.stderr)
    return 0


def _report(outcomes, wls, out, meta, timeout) -> str:
    plots = report.plot(outcomes, wls, out, timeout)
    parts = ["### Results", "", report.markdown(outcomes, wls, meta), "### Same answers", "",
             report.agreement_markdown(outcomes), "", "### Speed-ups at the ends of each series", "",
             report.end_ratios_markdown(outcomes), "", "### Plots", ""]
    for p in plots:
        parts.append(f"![{p.stem}]({p.name})")
        parts.append("")
    return "\n".join(parts)


def _progress(o: Outcome) -> None:
    bits = [f"{o.workload}/{STRATEGY_SHORT[o.strategy]}/{'key' if o.keyed else 'nokey'}/{o.window_ms}ms",
            f"{o.engine}: {o.status}"]
    if o.status == "ok":
        bits.append(f"count={o.count:,} engine={o.engine_s:.3f}s wall={o.wall_s:.1f}s "
                    f"rss={o.peak_rss_mb or 0:.0f}MB {o.detail}")
    elif o.detail:
        bits.append(o.detail[:160])
    print("[peers] " + "  ".join(bits), file=sys.stderr, flush=True)


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


__all__ = ["add_arguments", "main", "json"]
