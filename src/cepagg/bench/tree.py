"""Tree plans and condensed composition: condensed against plain stores, tree against rcep.

Re-creates the window sweeps of Li, Wang, Feng, Xue, "Accelerating Sequence Event Detection
through Condensed Composition" (about 2010):

* ``query2``: the paper's synthetic Query 2 with 4 classes (``t1.price > ti.price`` for every
  later class, each class one stock), over its random walk (one event per class per tick,
  ``X0 ~ U[0, 100)``, steps ``U[-5, 5)``, clamped to [0, 100], two decimals);
* ``query3``: the paper's Query 3 (a stock below the price of stock 600210, then above it) over
  a substitute for its Shanghai Stock Exchange trace (not available): ``--codes`` stocks
  published every 5 seconds, ticks of 0.01, most prices unchanged between snapshots;
* ``versus``: tree against rcep on typed SEQ queries of 2 to 4 variables, with and without
  conditions between variables, with a negation, keyed (10 keys) and keyless, over 20,000
  random events of types A, B, C (one every 10 ms, attribute x uniform in 0..99): the
  measurements behind the planner's choice between the two (:mod:`cepagg.plan.matches`).

For each window of ``query2`` and ``query3`` the tree engine runs with condensation off (plain
tree plans: the paper's Non-CC), forced on, and switched by the engine (``auto``), all on the
tree the cost model chooses; then rcep (recomputation) on the same query. Every run returns the same number of
matches (checked); the queries count them (``RETURN COUNT(*)``): every match is found and
folded one at a time, without writing rows, so the table compares detection. Reported: CPU
seconds (the machine is shared; runs under a second are repeated and the median kept), events
per CPU second, and for the tree engine the condition
evaluations on candidate pairs (one per group pair when condensed) -- the paper's measure of
work.

    cepagg bench tree                   # about two minutes
    cepagg bench tree --only query3 --windows 30,60,90
"""

from __future__ import annotations

import argparse
import random
import time

from ..engines import ENGINES
from ..events import EventBatch
from ..lang import compile_query
from .repeat import median_run

QUERY2 = ("RETURN COUNT(*) PATTERN SEQ(T t1, T t2, T t3, T t4) WHERE t1.price > t2.price "
          "AND t1.price > t3.price AND t1.price > t4.price AND t1.name = 'name1' "
          "AND t2.name = 'name2' AND t3.name = 'name3' AND t4.name = 'name4' WITHIN {w}")
QUERY3 = ("RETURN COUNT(*) PATTERN SEQ(t1, t2, t3, t4) WHERE t1.code = t3.code AND t2.code = t4.code "
          "AND t2.code = '600210' AND t1.price < t2.price - 0.02 AND t3.price > t4.price + 0.02 "
          "WITHIN {w} s")
VERSUS = (
    "RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN {w}",
    "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [k] WITHIN {w}",
    "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x < b.x AND c.x < a.x WITHIN {w}",
    "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE a.x = c.x WITHIN {w}",
    "RETURN COUNT(*) PATTERN SEQ(A a, B b, !C z, A d) WHERE [k] AND a.x > d.x WITHIN {w}",
    "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c, A d) WHERE [k] AND a.x < d.x AND b.x > c.x WITHIN {w}",
)

EXPERIMENTS = {
    # name: (queries, default windows)
    "query2": ((QUERY2,), (8, 16, 24, 32)),
    "query3": ((QUERY3,), (30, 60, 90)),
    "versus": (VERSUS, (1000, 3000)),
}
CONFIGS = (("tree", "off"), ("tree", "on"), ("tree", "auto"), ("rcep", None))
VERSUS_CONFIGS = (("tree", "auto"), ("rcep", None))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only", default=None, help="comma-separated experiments (query2, query3, versus)")
    p.add_argument("--windows", default=None, help="comma-separated windows (ticks for query2, "
                   "seconds for query3, milliseconds for versus)")
    p.add_argument("--ticks", type=int, default=2000, help="query2: ticks of the random walk")
    p.add_argument("--codes", type=int, default=40, help="query3: stocks per snapshot")
    p.add_argument("--snapshots", type=int, default=120, help="query3: 5-second snapshots")
    p.add_argument("--costs", action="store_true",
                   help="only measure the unit costs behind the condensation switch and exit")
    p.add_argument("--budget", type=float, default=30.0,
                   help="CPU seconds of a run beyond which larger windows are skipped for its configuration")


def random_walk(classes: int, ticks: int, seed: int = 1) -> list[dict]:
    """The paper's synthetic data: an n-dimensional random walk, one event per class per tick."""
    rng = random.Random(seed)
    x = [rng.uniform(0, 100) for _ in range(classes)]
    rows = []
    for t in range(ticks):
        for i in range(classes):
            x[i] = min(100.0, max(0.0, x[i] + rng.uniform(-5, 5)))
            rows.append({"type": "T", "ts": t, "name": f"name{i + 1}", "price": round(x[i], 2)})
    return rows


def snapshots(codes: int, count: int, seed: int = 1) -> list[dict]:
    """A substitute for 5-second stock snapshots: ``codes`` stocks (one of them 600210) priced
    within 0.05 of each other, prices that move by a tick or two (0.01) in one snapshot out of
    five, so that stocks cross 600210's price now and then."""
    rng = random.Random(seed)
    names = ["600210"] + [str(600000 + i) for i in range(1, codes)]
    price = {c: rng.randint(995, 1005) for c in names}
    rows = []
    for s in range(count):
        for c in names:
            if rng.random() < 0.2:
                price[c] = max(1, price[c] + rng.choice((-2, -1, 1, 2)))
            rows.append({"type": "Q", "ts": s * 5000, "code": c, "price": price[c] / 100})
    return rows


def typed_events(n: int = 20_000, seed: int = 1) -> list[dict]:
    """``versus``: random events of types A, B, C every 10 ms, 10 keys, x uniform in 0..99."""
    rng = random.Random(seed)
    return [{"type": rng.choice("ABC"), "ts": i * 10, "k": rng.randrange(10), "x": rng.randrange(100)}
            for i in range(n)]


def measure(engine: str, query, batch: EventBatch, **options) -> dict:
    """One configuration over the batch; a short run is repeated and its median kept
    (:func:`.repeat.median_run`)."""
    def once():
        eng = ENGINES[engine](query, **options)
        t0 = time.process_time()
        state = eng.new_state()
        rows = eng.process(state, batch)
        rows += eng.finish(state)
        return time.process_time() - t0, eng, state, rows

    (cpu, eng, state, rows), _ = median_run(once, lambda r: r[0])
    out = {"cpu": cpu, "count": rows[0][0], "events/s": len(batch) / cpu if cpu else float("inf")}
    if engine == "tree":
        out["evaluations"] = eng.evaluations
        out["tree"] = eng.describe(state.tree)
        stores = [s for p in state.partitions.values() for s in p.stores if s is not None]
        out["condensed"] = sum(s.condensed for s in stores)
        out["stores"] = len(stores)
    return out


def unit_costs(n: int = 200_000) -> dict[str, float]:
    """Microseconds per operation: a condition evaluated on a pair, a plain and a condensed
    insert into a store (the ``a`` and ``b`` of the condensation switch)."""
    import timeit

    from ..engines.tree import Tree
    from ..engines.tree.plan import compile_tree
    from ..engines.tree.stores import Store
    from ..events import Event

    q = compile_query("PATTERN SEQ(A a, B b) WHERE a.x > b.x WITHIN 10")
    check = compile_tree(Tree(q).shape, (0, 1)).root.checks[0]
    a, b = Event(1, 1, "A", {"x": 3}), Event(2, 2, "B", {"x": 2})
    condensed, plain = Store(((0, "x"),), condensed=True), Store(((0, "x"),))
    return {name: 1e6 * timeit.timeit(f, number=n) / n for name, f in (
        ("condition evaluation", lambda: check.holds((a, b))),
        ("plain insert", lambda: plain.insert((a,))),
        ("condensed insert", lambda: condensed.insert((a,))))}


def main(args: argparse.Namespace) -> int:
    if args.costs:
        for name, us in unit_costs().items():
            print(f"{name}: {us:.2f} us")
        return 0
    from . import chosen, whole_numbers

    names = chosen("--only", args.only, EXPERIMENTS) or list(EXPERIMENTS)
    given = whole_numbers("--windows", args.windows)
    print("| workload | window | engine | tree | condensed stores | matches | CPU s | events/s "
          "| condition evaluations |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        texts, windows = EXPERIMENTS[name]
        if given:
            windows = tuple(given)
        if name == "query2":
            rows = random_walk(4, args.ticks)
        elif name == "query3":
            rows = snapshots(args.codes, args.snapshots)
        else:
            rows = typed_events()
        batch = EventBatch.from_rows(rows).sorted()
        configs = VERSUS_CONFIGS if name == "versus" else CONFIGS
        for i, text in enumerate(texts):
            label_of = f"{name} {i + 1}" if len(texts) > 1 else name
            if not _sweep(label_of, text, windows, batch, configs, args.budget):
                return 1
    return 0


def _sweep(name: str, text: str, windows, batch: EventBatch, configs, budget: float) -> bool:
    """One query over its windows, a table row per configuration; False if they disagree."""
    skipped: set = set()
    for w in windows:
        q = compile_query(text.format(w=w))
        counts = set()
        for engine, policy in configs:
            label = engine if policy is None else f"{engine} condense={policy}"
            if label in skipped:
                print(f"| {name} | {w} | {label} | | | | skipped | | |")
                continue
            m = measure(engine, q, batch, **({} if policy is None else {"condense": policy}))
            counts.add(m["count"])
            if m["cpu"] > budget:
                skipped.add(label)
            tree = m.get("tree", "")
            cond = f"{m['condensed']} of {m['stores']}" if "stores" in m else ""
            evals = f"{m['evaluations']:,}" if "evaluations" in m else ""
            print(f"| {name} | {w} | {label} | {tree} | {cond} | {m['count']:,} | {m['cpu']:.2f} "
                  f"| {m['events/s']:,.0f} | {evals} |", flush=True)
        if len(counts) != 1:
            print(f"error: the configurations disagree on {name} window {w}: {sorted(counts)}")
            return False
    return True
