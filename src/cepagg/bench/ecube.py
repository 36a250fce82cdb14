"""E-Cube benchmark: the chapter's workloads, independent against top-down, bottom-up and chase.

A stock-like stream (:mod:`cepagg.datasets.stock`, fixed seed) with nine tickers as event types,
grouped company -> sector -> market as the chapter's Fig. 4.10 describes (DELL, INTC, MSFT:
Computer; QQQ, FCF, RCM: Finance; EFC, ANAT, OREL: Education; the three sectors: Market). The
workloads are those of Mo Liu, "Extending Event Sequence Processing: New Models and Optimization
Techniques", PhD dissertation, WPI, 2012, §4.6: 1-3 add one ticker to a shared pattern of length
3, 4, 5 (pattern refinement only), 4 and 5 change concept levels only, 7 mixes both. Each query
returns COUNT(*) over a sliding window of 1 s, as there.

Every strategy is run ``--repeat`` times on a fresh cube (no result known) and the best wall
time is kept; every strategy's results are checked equal to ``independent``'s before a time is
reported. Costs are estimated from the stream's event counts per type.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import pyarrow as pa

from ..events import ID, EventBatch

HIERARCHY = {"Market": ["Computer", "Finance", "Education"], "Computer": ["DELL", "INTC", "MSFT"],
             "Finance": ["QQQ", "FCF", "RCM"], "Education": ["EFC", "ANAT", "OREL"]}
TICKERS = [t for s in ("Computer", "Finance", "Education") for t in HIERARCHY[s]]

WORKLOADS = {
    "1 (pattern, shared length 3)": ["SEQ(INTC, !MSFT, FCF)", "SEQ(INTC, !MSFT, FCF, RCM)",
                                      "SEQ(INTC, !MSFT, FCF, EFC)", "SEQ(INTC, !MSFT, FCF, ANAT)",
                                      "SEQ(INTC, !MSFT, FCF, OREL)"],
    "2 (pattern, shared length 4)": ["SEQ(DELL, INTC, !MSFT, FCF)", "SEQ(DELL, INTC, !MSFT, FCF, RCM)",
                                      "SEQ(DELL, INTC, !MSFT, FCF, OREL)", "SEQ(DELL, INTC, !MSFT, FCF, ANAT)",
                                      "SEQ(DELL, INTC, !MSFT, FCF, QQQ)"],
    "3 (pattern, shared length 5)": ["SEQ(QQQ, DELL, INTC, !MSFT, FCF)", "SEQ(QQQ, DELL, INTC, !MSFT, FCF, RCM)",
                                      "SEQ(QQQ, DELL, INTC, !MSFT, FCF, ANAT)",
                                      "SEQ(QQQ, DELL, INTC, !MSFT, FCF, OREL)",
                                      "SEQ(QQQ, DELL, INTC, !MSFT, FCF, EFC)"],
    "4 (concept)": ["SEQ(Computer, Finance, Education)", "SEQ(Computer, Finance, EFC)"],
    "5 (concept)": ["SEQ(Computer, Finance, Education)", "SEQ(Computer, QQQ, EFC)"],
    "7 (mixed)": ["SEQ(DELL, QQQ, ANAT)", "SEQ(DELL, QQQ, ANAT, RCM)", "SEQ(FCF, DELL, QQQ, ANAT)",
                  "SEQ(DELL, QQQ, ANAT, OREL)", "SEQ(DELL, QQQ, ANAT, INTC)", "SEQ(DELL, QQQ, ANAT, INTC, EFC)",
                  "SEQ(Computer, Finance, Education)", "SEQ(Computer, Finance, ANAT)", "SEQ(DELL, Finance, ANAT)",
                  "SEQ(QQQ, DELL, Finance, ANAT)"],
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=200_000, help="stream length (default 200,000)")
    p.add_argument("--rate", type=int, default=2000, help="events per second of stream time (default 2,000, "
                   "the chapter's arrival rate)")
    p.add_argument("--window", default="1 s", help="the queries' window (default 1 s)")
    p.add_argument("--repeat", type=int, default=3, help="runs per strategy, best kept (default 3)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--workload", action="append", help="only workloads whose name starts with this (repeatable)")


def stream(n: int, rate: int, seed: int) -> EventBatch:
    """``n`` ticks of the nine tickers drawn uniformly, ``rate`` per second on average."""
    from ..datasets.stock import generate

    b = generate(n_events=n, companies=len(TICKERS), sectors=3, tick_ms=1, seed=seed, ticker_types=True)
    rng = np.random.default_rng(seed)
    ts = np.cumsum(rng.exponential(1000.0 / rate, n)).astype(np.int64)
    names = np.array(TICKERS, dtype=object)
    codes = np.array([int(c[1:]) for c in b.table.column("type").to_pylist()])
    return EventBatch(pa.table({ID: np.arange(n, dtype=np.int64), "ts": ts,
                                "type": pa.array(names[codes].tolist(), pa.string()),
                                "price": b.table.column("price")}))


def main(args: argparse.Namespace) -> int:
    from ..cube import STRATEGIES, Cube
    from ..lang import Hierarchy

    h = Hierarchy.from_mapping(HIERARCHY)
    batch = stream(args.events, args.rate, args.seed)
    print(f"cepagg bench ecube: {len(batch):,} events, {args.rate} per second, window {args.window}, "
          f"seed {args.seed}; {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("best wall time of --repeat runs per strategy; speed-up against independent\n")
    print(f"{'workload':<30} {'strategy':<12} {'seconds':>9} {'speed-up':>9} {'est. cost':>12}  plan")
    for name, patterns in WORKLOADS.items():
        if args.workload and not any(name.startswith(w) for w in args.workload):
            continue
        text = "\n---\n".join(f"RETURN COUNT(*) PATTERN {p} WITHIN {args.window}" for p in patterns)
        Cube.from_text(text, h).evaluate(batch.slice(0, 2000), "independent")  # kernels loaded
        base = None
        for strategy in STRATEGIES:
            best, results = float("inf"), None
            for _ in range(args.repeat):
                cube = Cube.from_text(text, h)
                started = time.perf_counter()
                results = cube.evaluate(batch, strategy)
                best = min(best, time.perf_counter() - started)
            if base is None:
                base, expected = best, results
            elif results != expected:
                raise AssertionError(f"workload {name}: {strategy} differs from independent")
            kinds = {}
            for r in cube.last_plan.chosen.values():
                kinds[r.kind] = kinds.get(r.kind, 0) + 1
            plan = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            print(f"{name:<30} {strategy:<12} {best:>9.3f} {base / best:>8.2f}x {cube.last_plan.cost:>12,.0f}  {plan}")
        print()
    return 0
