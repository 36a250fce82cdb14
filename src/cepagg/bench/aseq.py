"""A-Seq engine benchmark: aseq against the two-step evaluators, pattern length and window sweeps.

On a generated stream (fixed seed; ``--types`` event types drawn uniformly, one event per
millisecond, so a window of ``E`` ms holds ``E`` events), it measures events per second (CPU
time of this process: the machine is shared) and peak traced memory of:

* ``aseq`` (this engine: prefix counters, two-stacks windows, compiled kernels);
* ``sem``: the paper's Start Event Marking (one counter vector per active START, all updated
  per event; compiled, COUNT only) — the per-event cost that grows with the window;
* ``stack``: the stack-based two-step baseline (SASE, A-Seq §2.2; Python);
* ``reference``: cepagg's reference evaluator (enumerate, then aggregate; Python).

Two-step evaluators cost ``|E|^n`` per window, so they run on prefixes of the stream that fit a
time budget; a prefix shorter than two windows has not reached steady state, and the speed-up
measured on it is a lower bound (marked ``>=``). The sweeps: pattern length 2..10 at 1,000
events per window; events per window 10^2..10^5; negation on/off; 1..10 queries sharing a
prefix, with and without sharing. A plain numpy pass over the same columns is reported as the
floor. ``--full`` runs every length at every window size.

Reference: the experiments of A-Seq (Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics:
Online Aggregation of Stream Sequence Patterns", SIGMOD 2014), Section 6, Figs. 12-16.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..events import ID, EventBatch
from ..lang import compile_query


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--full", action="store_true", help="every pattern length at every window size")
    p.add_argument("--events", type=int, default=1_000_000, help="stream length for aseq (default 1e6)")
    p.add_argument("--types", type=int, default=10, help="number of event types (default 10)")
    p.add_argument("--budget", type=float, default=2.0, help="seconds per two-step measurement (default 2)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out-dir", default="out", help="where the PNG goes (default out/)")
    p.add_argument("--repeat", type=int, default=2, help="aseq runs per point, best kept (default 2)")
    p.add_argument("--only", choices=("numbers", "keys"), default=None,
                   help="run one section: 'numbers' (exact past 64 bits, float mode) or 'keys' (partitions)")
    p.add_argument("--keys", type=int, nargs="+", default=[10, 10_000, 1_000_000],
                   help="partition counts of the keys section (default 10 10000 1000000)")


def stream(n: int, types: int, seed: int) -> EventBatch:
    rng = np.random.default_rng(seed)
    names = np.array([f"T{i}" for i in range(types)], dtype=object)
    t = names[rng.integers(0, types, n)]
    return EventBatch(pa.table({ID: np.arange(n, dtype=np.int64), "ts": np.arange(n, dtype=np.int64),
                                "type": pa.array(t.tolist(), pa.string())}))


def seq(length: int, window: int, negation: bool = False) -> str:
    items = [f"T{i}" for i in range(length)]
    if negation:
        items.insert(length - 1, f"!T{length + 1}")
    return f"RETURN COUNT(*) PATTERN SEQ({', '.join(items)}) WITHIN {window}"


@dataclass
class Point:
    engine: str
    length: int
    window: int
    events: int
    rate: float  # events per CPU second
    memory: int | None  # peak traced bytes
    steady: bool = True
    note: str = ""


# ----------------------------------------------------------------------------------------------
# Runners


def cpu_seconds(fn) -> float:
    """CPU seconds of this process that ``fn()`` takes."""
    c = time.process_time()
    fn()
    return time.process_time() - c


def run_aseq(texts: list[str], batch: EventBatch, warm: int, share: bool = True, repeat: int = 2,
             chunk: int = 1 << 16, budget: float = 20.0, numbers: str = "exact") -> tuple[float, int]:
    """Best events/s over ``repeat`` runs (after ``warm`` untimed events), rows returned."""
    from ..engines.aseq.workload import Workload

    qs = [compile_query(t) for t in texts]
    best = 0.0
    n_timed = 0
    for _ in range(repeat):
        wl = Workload(qs, share=share, numbers=numbers)
        st = wl.new_state()
        wl.process(st, batch.slice(0, warm))
        cpu = 0.0
        done = warm
        while done < len(batch) and cpu < budget:
            part = batch.slice(done, chunk)
            cpu += cpu_seconds(lambda: wl.process(st, part))
            done += len(part)
        cpu += cpu_seconds(lambda: wl.finish(st))
        n_timed = done - warm
        best = max(best, n_timed / max(cpu, 1e-9))
    return best, n_timed


def memory_of(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run_two_step(engine: str, text: str, batch: EventBatch, window: int, budget: float) -> Point | None:
    """The largest prefix (doubling from 100 events) evaluated within ``budget`` CPU seconds."""
    from ..engines import ENGINES
    from ..engines.aseq.engine import Aseq

    q = compile_query(text)
    cls = ENGINES[engine]
    n, last = 100, None
    while n <= len(batch):
        prefix = batch.slice(0, n)
        if engine == "reference":  # it holds every match in memory: check how many first
            count = Aseq(q).run(prefix).rows[0][0]
            if count > 300_000:
                break
        cpu = cpu_seconds(lambda: cls(q).run(prefix))
        last = Point(engine, 0, window, n, n / max(cpu, 1e-9), None, steady=n >= 2 * window)
        if cpu > budget / 3:
            break
        n *= 2
    if last is not None:
        prefix = batch.slice(0, last.events)
        last.memory = memory_of(lambda: cls(q).run(prefix))
        if engine == "stack":
            eng = cls(q)
            eng.run(prefix)
            last.note = f"{eng.peak_objects} objects"
    return last


_SEM = []


def _sem_kernel():
    if _SEM:
        return _SEM[0]
    import numba

    @numba.njit
    def sem(codes, ts, length, window):
        """The paper's SEM (Fig. 5, corrected): a counter vector per active START."""
        cap = 1024
        cnt = np.zeros((cap, length), np.int64)
        start = np.zeros(cap, np.int64)
        head = 0
        size = 0
        total = 0
        for e in range(codes.shape[0]):
            t = ts[e]
            while size > 0 and start[head] + window <= t:  # expire; its matches are final
                total += cnt[head, length - 1]
                head = (head + 1) % cap
                size -= 1
            c = codes[e]
            if c < 0 or c >= length:
                continue
            if c > 0:
                for k in range(size):  # every active START: O(k) per event
                    s = (head + k) % cap
                    cnt[s, c] += cnt[s, c - 1]
            else:
                if size == cap:
                    new = np.zeros((cap * 2, length), np.int64)
                    ns = np.zeros(cap * 2, np.int64)
                    for k in range(size):
                        new[k] = cnt[(head + k) % cap]
                        ns[k] = start[(head + k) % cap]
                    cnt, start, head, cap = new, ns, 0, cap * 2
                s = (head + size) % cap
                cnt[s, :] = 0
                cnt[s, 0] = 1
                start[s] = t
                size += 1
        for k in range(size):
            total += cnt[(head + k) % cap, length - 1]
        return total

    _SEM.append(sem)
    return sem


def run_sem(batch: EventBatch, length: int, window: int, budget: float) -> Point:
    """SEM on the type codes (distinct types per position, no ties: the stream has none)."""
    sem = _sem_kernel()
    types = batch.table.column("type").to_numpy(zero_copy_only=False)
    codes = np.array([int(t[1:]) for t in np.unique(types)])[np.unique(types, return_inverse=True)[1]]
    ts = batch.table.column("ts").to_numpy()
    sem(codes[:100], ts[:100], length, window)
    n = min(len(codes), max(10_000, 4 * window))
    while True:
        cpu = cpu_seconds(lambda: sem(codes[:n], ts[:n], length, window))
        if cpu > budget / 4 or n >= len(codes):
            break
        n = min(len(codes), n * 4)
    return Point("sem", length, window, n, n / max(cpu, 1e-9), None, steady=n >= 2 * window)


def numpy_floor(batch: EventBatch) -> float:
    """A plain pass over the same columns: encode the types, count them, scan the times."""
    import pyarrow.compute as pc

    def go():
        enc = pc.dictionary_encode(batch.table.column("type").combine_chunks())
        codes = enc.indices.to_numpy()
        np.bincount(codes)
        ts = batch.table.column("ts").to_numpy()
        int(np.diff(ts).min())

    go()
    return len(batch) / min(cpu_seconds(go) for _ in range(3))


# ----------------------------------------------------------------------------------------------
# Sweeps


def _by_length(args: argparse.Namespace, batch, lengths: list[int], base_lengths: list[int]) -> list[tuple]:
    """Section A: pattern length at 1,000 events per window, the two-step evaluators beside
    A-Seq; its rows."""
    rows_a = []
    print("A. pattern length, 1,000 events per window (COUNT, WITHIN 1000)")
    print(f"{'len':>4} {'aseq ev/s':>12} {'sem ev/s':>12} {'stack ev/s':>12} {'ref ev/s':>12} "
          f"{'aseq/stack':>12} {'aseq mem':>10} {'stack mem':>10} {'ref mem':>10}")
    for L in lengths:
        text = seq(L, 1000)
        rate, _ = run_aseq([text], batch.slice(0, min(len(batch), 300_000)), 2000, repeat=args.repeat)
        mem = memory_of(lambda: run_aseq([text], batch.slice(0, 20_000), 2000, repeat=1))
        sem = run_sem(batch, L, 1000, args.budget)
        st = run_two_step("stack", text, batch, 1000, args.budget) if L in base_lengths else None
        ref = run_two_step("reference", text, batch, 1000, args.budget) if L in base_lengths else None
        speed = "" if st is None else (">=" if not st.steady else "") + f"{rate / st.rate:,.0f}x"
        rows_a.append((L, rate, sem, st, ref, mem))
        st_mem, ref_mem = (_kib(x.memory if x else None) for x in (st, ref))
        print(f"{L:>4} {rate:>12,.0f} {sem.rate:>12,.0f} {_r(st):>12} {_r(ref):>12} {speed:>12} "
              f"{_kib(mem):>10} {st_mem:>10} {ref_mem:>10}")
    print("  (stack/ref: largest prefix within the budget; "
          "'>=': prefix shorter than two windows, a lower bound)\n")
    return rows_a


def _by_window(args: argparse.Namespace, batch, blens: list[int], windows: list[int]) -> list[tuple]:
    """Section B: events per window, ns per event; its rows."""
    rows_b = []
    print("B. events per window: ns per event (CPU)")
    print(f"{'len':>4} {'window':>8} {'aseq ns/ev':>11} {'sem ns/ev':>11} {'aseq M ev/s':>12} "
          f"{'aseq mem':>10}")
    for L in blens:
        for E in windows:
            warm = min(len(batch) // 2, 2 * E)
            repeat = 1 if E >= 100_000 else args.repeat
            rate, n = run_aseq([seq(L, E)], batch, warm, repeat=repeat, budget=5.0)
            mem = memory_of(lambda: run_aseq([seq(L, E)], batch.slice(0, min(len(batch), 3 * E + 10_000)),
                                             min(2 * E, 10_000), repeat=1))
            sem = run_sem(batch, L, E, args.budget)
            rows_b.append((L, E, rate, sem, mem))
            print(f"{L:>4} {E:>8,} {1e9 / rate:>11.0f} {1e9 / sem.rate:>11.0f} {rate / 1e6:>12.2f} "
                  f"{_kib(mem):>10}")
    print()
    return rows_b


def _negation(args: argparse.Namespace, batch) -> None:
    """Section C: a negation in a length-3 pattern, A-Seq and the stack evaluator."""
    print("C. negation (length 3, window 1,000): (T0, T1, T2) vs (T0, T1, !T4, T2)")
    for neg in (False, True):
        text = seq(3, 1000, neg)
        rate, _ = run_aseq([text], batch.slice(0, 300_000), 2000, repeat=args.repeat)
        st = run_two_step("stack", text, batch, 1000, args.budget)
        print(f"  negation {'on ' if neg else 'off'}: aseq {rate:,.0f} ev/s, stack {_r(st)} ev/s")
    print()


def _sharing(args: argparse.Namespace, batch) -> list[tuple]:
    """Section D: queries sharing a prefix, shared and alone; its rows."""
    rows_d = []
    print("D. queries sharing the prefix (T0, T1, T2), length 4, window 1,000: aseq ev/s")
    print(f"{'queries':>8} {'shared':>12} {'alone':>12} {'gain':>6}")
    sub = batch.slice(0, 300_000)
    for k in (1, 2, 4, 6, 8, 10):
        texts = [f"RETURN COUNT(*) PATTERN SEQ(T0, T1, T2, T{3 + i % (args.types - 3)}) WITHIN 1000"
                 for i in range(k)]
        shared, _ = run_aseq(texts, sub, 2000, share=True, repeat=args.repeat)
        alone, _ = run_aseq(texts, sub, 2000, share=False, repeat=args.repeat)
        rows_d.append((k, shared, alone))
        print(f"{k:>8} {shared:>12,.0f} {alone:>12,.0f} {shared / alone:>5.1f}x")
    print()
    return rows_d


def main(args: argparse.Namespace) -> int:
    if args.only == "numbers":
        return numbers_section(args)
    if args.only == "keys":
        return keys_section(args)
    t0 = time.time()
    full = args.full
    batch = stream(args.events, args.types, args.seed)
    lengths = list(range(2, 11)) if full else [2, 3, 4, 5, 6, 8, 10]
    windows = [100, 1_000, 10_000, 100_000]
    base_lengths = lengths if full else [2, 3, 4, 5]
    print(f"cepagg bench aseq: {len(batch)} events, {args.types} types, seed {args.seed}; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("rates are events per CPU second of this process (one core); memory is the traced peak\n")

    floor = numpy_floor(batch)
    print(f"numpy floor (encode types, count, scan times): {floor / 1e6:.1f} M events/s\n")

    rows_a = _by_length(args, batch, lengths, base_lengths)
    rows_b = _by_window(args, batch, lengths if full else [3, 5], windows)
    _negation(args, batch)
    rows_d = _sharing(args, batch)
    _summary(rows_a, rows_b, floor)
    png = _plot(rows_a, rows_b, rows_d, Path(args.out_dir))
    print(f"\nplot: {png}   ({time.time() - t0:.0f} s)")
    return 0


# ----------------------------------------------------------------------------------------------
# E: numbers (counts past 64 bits, float mode)

NUMBERS_QUERY = "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c, D d, E e) WITHIN {w}"


def cycling(n: int, types: str, keys: int = 0, seed: int = 7) -> EventBatch:
    """``n`` events, one per ms, types cycling through ``types``; with ``keys``, an attribute
    ``key`` drawn uniformly from ``keys`` values."""
    names = np.array(list(types), dtype=object)[np.arange(n) % len(types)]
    cols = {ID: np.arange(n, dtype=np.int64), "ts": np.arange(n, dtype=np.int64),
            "type": pa.array(names.tolist(), pa.string())}
    if keys:
        cols["key"] = np.random.default_rng(seed).integers(0, keys, n)
    return EventBatch(pa.table(cols))


def micro_batch_cpu(make, stream: EventBatch, m: int, repeat: int) -> float:
    """The least CPU seconds of one streaming micro-batch of ``m`` events after the first, as
    a streaming driver runs it: process, watermark at its last event, state snapshot and
    restore. ``make()`` gives the engine (or workload); ``stream`` holds three batches of
    ``m``; best of ``repeat`` runs of the second and third batch."""
    best = None
    for _ in range(repeat):
        eng = make()
        st = eng.new_state()
        eng.process(st, stream.slice(0, m))
        st = eng.restore(eng.snapshot(st))
        for b in (1, 2):
            part = stream.slice(b * m, m)
            last = part.table.column("ts")[m - 1].as_py()

            def step():
                nonlocal st
                eng.process(st, part)
                eng.advance(st, last)
                st = eng.restore(eng.snapshot(st))

            cpu = cpu_seconds(step)
            best = cpu if best is None else min(best, cpu)
    return best


#: windows of the numbers section: (short window, long window) of each result mode; the long
#: one's counts outgrow 64 bits (then the exact mode runs 128-bit kernels)
NUMBERS_WINDOWS = [("10 s", "100 s"), ("10 s SLIDE 10 s", "100 s SLIDE 10 s"),
                   ("10 s EMIT ON CHANGE", "100 s EMIT ON CHANGE")]


def numbers_section(args: argparse.Namespace) -> int:
    """The same query at 10 s (counts below 64 bits) and 100 s (past 64 bits) per window, exact
    and float, under WITHIN alone, with SLIDE and with EMIT ON CHANGE (whose window sums are read);
    and with SLIDE 100 s. The last column: exact events/s at 100 s against 10 s."""
    from ..engines.aseq.workload import Workload

    n = 300_000
    batch = cycling(n, "ABCDE")
    print(f"E. numbers: {NUMBERS_QUERY.format(w='W')}, {n:,} events (one per ms, 5 types cycling)")
    print(f"{'window':>22} {'numbers':>8} {'events/s':>12} {'bits of the count':>18} {'exact, 10 s / 100 s':>20}")
    short_rate = None
    for w in [w for pair in NUMBERS_WINDOWS for w in pair] + ["100 s SLIDE 100 s"]:
        text = NUMBERS_QUERY.format(w=w)
        (res,) = Workload([compile_query(text)], numbers="exact").run(batch)
        bits = max(int(r[-1]).bit_length() for r in res.rows)
        for numbers in ("exact", "float"):
            rate, _ = run_aseq([text], batch, 0, repeat=args.repeat, numbers=numbers)
            ratio = ""
            if numbers == "exact" and w.startswith("10 s"):
                short_rate = rate
            elif numbers == "exact" and short_rate and "SLIDE 100 s" not in w:
                ratio = f"{short_rate / rate:.2f}x"
            print(f"{w:>22} {numbers:>8} {rate:>12,.0f} {bits:>18} {ratio:>20}")
    return 0


# ----------------------------------------------------------------------------------------------
# F: many keys


KEYS_QUERY = "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [key] WITHIN 10 s"
#: the same counted per key (the partition attribute grouped as well)
KEYS_GROUPED = "RETURN key, COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [key] GROUP BY key WITHIN 10 s"


def keys_section(args: argparse.Namespace) -> int:
    """Events/s over 10..10^6 partitions, without and with GROUP BY the partition attribute,
    and the CPU of one streaming micro-batch (process, watermark, state snapshot and restore)
    after the first."""
    from ..engines.aseq.workload import Workload

    q = compile_query(KEYS_QUERY)
    n = 200_000
    print(f"F. keys: {KEYS_QUERY}, {n:,} events (one per ms, A B C cycling, key uniform);")
    print(f"   grouped: {KEYS_GROUPED}")
    print(f"{'keys':>10} {'events/s':>12} {'vs 10 keys':>10} {'grouped':>12} {'vs 10 keys':>10}")
    base = None
    for k in args.keys:
        batch = cycling(n, "ABC", k)
        rates = [run_aseq([text], batch, 0, repeat=args.repeat)[0] for text in (KEYS_QUERY, KEYS_GROUPED)]
        base = base or rates
        print(f"{k:>10,} {rates[0]:>12,.0f} {rates[0] / base[0]:>9.2f}x {rates[1]:>12,.0f} {rates[1] / base[1]:>9.2f}x")
    m, k = 100_000, 10_000
    best = micro_batch_cpu(lambda: Workload([q]), cycling(3 * m, "ABC", k), m, args.repeat)
    print(f"  streaming micro-batch of {m:,} events over {k:,} keys after the first "
          f"(process, watermark, snapshot, restore): {best:.3f} s CPU")
    return 0


def _summary(rows_a, rows_b, floor) -> None:
    print("Summary")
    for L, rate, sem, st, ref, mem in rows_a:
        if L == 5 and st is not None:
            ratio = rate / st.rate
            bound = ">=" if not st.steady else ""
            print(f"  aseq vs stack baseline at length 5, 1,000 events/window: {bound}{ratio:,.0f}x")
            print(f"  length-5 COUNT with a window: {rate / 1e6:.2f} M events/s on one core "
                  f"(numpy floor {floor / 1e6:.1f} M)")
    for L in sorted({r[0] for r in rows_b}):
        per = {E: 1e9 / rate for (l, E, rate, sem, mem) in rows_b if l == L}
        if 1_000 in per and 100_000 in per:
            lo, hi = min(per[E] for E in per if E >= 1000), max(per[E] for E in per if E >= 1000)
            print(f"  length {L}: ns/event from 10^3 to 10^5 events/window "
                  f"{per[1000]:.0f} -> {per[100_000]:.0f} (max/min {hi / lo:.2f})")


def _plot(rows_a, rows_b, rows_d, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.8))
    Ls = [r[0] for r in rows_a]
    ax[0].semilogy(Ls, [r[1] for r in rows_a], "o-", label="aseq")
    ax[0].semilogy(Ls, [r[2].rate for r in rows_a], "s-", label="SEM (paper, compiled)")
    for i, name in ((3, "stack two-step"), (4, "reference two-step")):
        pts = [(r[0], r[i].rate) for r in rows_a if r[i] is not None]
        if pts:
            ax[0].semilogy(*zip(*pts), "^--", label=name)
    ax[0].set(xlabel="pattern length", ylabel="events / CPU second", title="1,000 events per window")
    ax[0].legend()
    for L in sorted({r[0] for r in rows_b}):
        pts = [(E, 1e9 / rate) for (l, E, rate, sem, mem) in rows_b if l == L]
        ax[1].loglog(*zip(*pts), "o-", label=f"aseq, length {L}")
        pts = [(E, 1e9 / sem.rate) for (l, E, rate, sem, mem) in rows_b if l == L]
        ax[1].loglog(*zip(*pts), "s:", label=f"SEM, length {L}")
    ax[1].set(xlabel="events per window", ylabel="ns per event (CPU)", title="per-event cost vs window")
    ax[1].legend(fontsize=8)
    ks = [r[0] for r in rows_d]
    ax[2].plot(ks, [r[1] for r in rows_d], "o-", label="shared (PreTree)")
    ax[2].plot(ks, [r[2] for r in rows_d], "s-", label="alone")
    ax[2].set(xlabel="queries", ylabel="events / CPU second", title="queries sharing a prefix")
    ax[2].legend()
    fig.tight_layout()
    path = out / "bench_aseq.png"
    fig.savefig(path, dpi=110)
    return path


def _r(p: Point | None) -> str:
    if p is None:
        return "-"
    return f"{p.rate:,.0f}" + ("" if p.steady else "*")


def _kib(b: int | None) -> str:
    return "-" if b is None else f"{b / 1024:,.0f} KiB"


if __name__ == "__main__":  # pragma: no cover
    ns = argparse.ArgumentParser()
    add_arguments(ns)
    sys.exit(main(ns.parse_args()))


# Reference: A-Seq (SIGMOD 2014) Section 6, Figs. 12-16: length, window, negation, sharing.
