"""GRETA on a stream whose density changes: the path re-chosen per partition and batch against
either path fixed.

``cepagg bench greta --only density_change``: one company's ticks under Q1's window (10
minutes sliding by 10 s, 61 windows per event), in two phases -- sparse (20 events per window)
then dense (5,000), and the reverse -- in micro-batches of ``--batch`` events, each followed by
a watermark. Each run is timed phase by phase (CPU of ``process`` and ``advance``), for greta
choosing its path (``paths="auto"``: :mod:`cepagg.engines.greta.switch`) and for the index and
the scan fixed. A path fixed for the whole stream is also what an engine that let the first
batch choose for good would run: the scan for the stream that starts sparse, the index for the
one that starts dense. Each run is a child process with ``--budget`` seconds; each phase's
figure is the median of :data:`RUNS` runs.
"""

from __future__ import annotations

import multiprocessing as mp
import time

from .child import in_child

DENSITY_QUERY = ("RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price "
                 "WITHIN 10 minutes SLIDE 10 seconds")
WINDOW_MS = 600_000
SPARSE, DENSE = 20, 5_000  # events per window of each phase
RUNS = 3  # runs per engine and order; the median of each phase is reported
PHASE_EVENTS = {SPARSE: 100_000, DENSE: 20_000}  # events of each phase (a phase of 0.1 s or more)
WARM = 2_000  # events of each phase run untimed first, from a new state (kernels, caches)
ENGINES = {"greta": "auto", "greta-index": "index", "greta-no-index": "no-index"}


def phased_stream(per_window: list[int]):
    """One company's ticks: :data:`PHASE_EVENTS` at each density of ``per_window`` in turn (a
    mean-reverting price, so the phases differ in density only). Returns the batch and where
    phase 2 starts."""
    import numpy as np
    import pyarrow as pa

    from ..datasets.stock import generate
    from ..events import EventBatch

    tables, shift, start = [], 0, 0
    for k, pw in enumerate(per_window):
        n = PHASE_EVENTS[pw]
        t = generate(n_events=n, companies=1, sectors=1, tick_ms=max(1, WINDOW_MS // pw), seed=11 + k,
                     reversion=0.001).table
        ts = np.asarray(t.column("ts").to_numpy(), dtype=np.int64) + shift
        t = t.set_column(t.column_names.index("ts"), "ts", pa.array(ts))
        ids = np.asarray(t.column("_id").to_numpy(), dtype=np.int64) + start  # ids unique across phases
        t = t.set_column(t.column_names.index("_id"), "_id", pa.array(ids))
        shift = int(ts[-1]) + 1
        start += n
        tables.append(t)
    return EventBatch(pa.concat_tables(tables)), PHASE_EVENTS[per_window[0]]


def _run(paths: str, order: list[int], batch: int, out: mp.Queue) -> None:
    from ..engines.greta import switch as sw
    from ..engines.greta.engine import Greta
    from ..lang import compile_query

    events, boundary = phased_stream(order)
    eng = Greta(compile_query(DENSITY_QUERY), paths=paths)
    for start in (0, boundary):  # kernels loaded, and a first run's costs paid, before timing
        warm = eng.new_state()
        eng.process(warm, events.slice(start, WARM))
        eng.finish(warm)
    ts = events.table.column("ts").to_numpy()
    state = eng.new_state()
    cpu = [0.0, 0.0]
    on_index = [[], []]  # per batch of each phase: the partition's path after it
    for i in range(0, len(events), batch):
        c0 = time.process_time()
        eng.process(state, events.slice(i, batch))
        eng.advance(state, int(ts[min(i + batch, len(events)) - 1]) - 1)
        phase = 0 if i < boundary else 1
        cpu[phase] += time.process_time() - c0
        subs = [s for p in state.partitions.values() for s in p.subs.values()]
        on_index[phase].append(all(sw.on_index(s.state) for s in subs))
    c0 = time.process_time()
    eng.finish(state)
    cpu[1] += time.process_time() - c0
    out.put({"cpu": cpu, "index_batches": [sum(x) for x in on_index], "batches": [len(x) for x in on_index],
             "switches": dict(eng.router.switches) if eng.router is not None else None})


def run_one(paths: str, order: list[int], batch: int, budget: float) -> dict | None:
    """One run in a child process; None when it exceeded ``budget`` seconds or failed."""
    ended = in_child(lambda out: _run(paths, order, batch, out), budget)
    return ended.result if ended.ok else None


def density_section(args) -> None:
    """Events/s of each phase, per engine and phase order (see the module's docstring)."""
    budget = args.budget or 600.0
    print(f"density_change: {DENSITY_QUERY}, one company, {PHASE_EVENTS[SPARSE]:,} events at "
          f"{SPARSE} per window, {PHASE_EVENTS[DENSE]:,} at {DENSE:,}, micro-batches of {args.batch}, "
          f"budget {budget:.0f} s per run, median of {RUNS} runs")
    print(f"{'phases':>22} {'engine':>15} {'phase 1 ev/s':>13} {'phase 2 ev/s':>13}  path (batches on the index)")
    for order in ([SPARSE, DENSE], [DENSE, SPARSE]):
        label = f"{order[0]:,} then {order[1]:,}"
        for engine, paths in ENGINES.items():
            runs = []
            for _ in range(RUNS):
                r = run_one(paths, order, args.batch, budget)
                if r is None:
                    break
                runs.append(r)
            if len(runs) < RUNS:
                print(f"{label:>22} {engine:>15} {'timeout or error':>27}", flush=True)
                continue
            rates = [sorted(PHASE_EVENTS[order[k]] / x["cpu"][k] for x in runs)[RUNS // 2] for k in (0, 1)]
            path = ", ".join(f"{i}/{n}" for i, n in zip(r["index_batches"], r["batches"]))
            extra = f"  switches {r['switches']}" if r["switches"] is not None else ""
            print(f"{label:>22} {engine:>15} {rates[0]:>13,.0f} {rates[1]:>13,.0f}  {path}{extra}", flush=True)
