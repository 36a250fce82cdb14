"""Cold start: how long the first A-Seq and GRETA queries of a fresh install take.

The engines' kernels are compiled by numba on first use and cached on disk beside their sources
(``__pycache__``), so a second process, a Spark worker included, loads machine code instead of
compiling. This measures, each in a fresh Python process:

* ``cold``: the numba cache of the engines deleted first (a fresh install), then the first
  GRETA query and the first A-Seq query of the process, each timed from its call; and, in a
  process of its own (A-Seq's cache deleted again), the first A-Seq query with partition
  attributes (per company, grouped by it: the shape of ``cepagg demo``'s ``cancel_then_delays``);
* ``cached``: the same with the cache the cold runs left (a later process, or a Spark worker);
* ``warm``: the same queries run a second time in the cached process (no loading at all).

GRETA runs first, so it also carries numba's own start-up (about a second).

The queries are the synthetic ones of ``cepagg demo --synthetic`` and :data:`KEYED_ASEQ`, over
400 generated stock ticks of 4 companies.

Run: ``python -m cepagg.bench.coldstart [--repeat N]``. It deletes the engines' cached kernels:
afterwards the next query compiles them again (``cepagg warmup`` does it once).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

#: an A-Seq query with partition attributes over the synthetic ticks
KEYED_ASEQ = """RETURN company, COUNT(*) AS runs, MAX(c.price)
    PATTERN SEQ(Stock a, Stock b, Stock c)
    WHERE [company] AND a.volume > 500 AND c.price > 100
    GROUP BY company
    WITHIN 4 s"""

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from cepagg.bench.coldstart import KEYED_ASEQ
from cepagg.demo import SYNTHETIC
from cepagg.datasets.stock import generate
from cepagg.lang import compile_query
from cepagg.plan import plan
out = {"import": time.perf_counter() - t0}
trends = generate(n_events=400, companies=4, sectors=2, tick_ms=250, seed=7)
tickers = generate(n_events=400, companies=4, sectors=2, tick_ms=250, seed=7, ticker_types=True)
every = {"greta": ("greta", SYNTHETIC[0][1], trends), "aseq": ("aseq", SYNTHETIC[1][1], tickers),
         "aseq keyed": ("aseq", KEYED_ASEQ, trends)}
jobs = [(name, *every[name]) for name in sys.argv[1:]]
for rnd in ("first", "warm"):
    for name, engine, text, batch in jobs:
        q = compile_query(text, schema=batch.attribute_kinds())
        p = plan(q)
        assert p.engine == engine, p.engine
        t, c = time.perf_counter(), time.process_time()
        p.build().run(batch)
        out[f"{name} {rnd}"] = time.perf_counter() - t
        out[f"{name} {rnd} cpu"] = time.process_time() - c
print(json.dumps(out))
"""


def _child(*jobs: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, *jobs], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cepagg.bench.coldstart", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="cold/cached pairs to run (default 1)")
    args = ap.parse_args(argv)
    from ..engines.kernels import clear_cache

    print("seconds per query: CPU of the process (wall in parentheses; the machine may be shared)")
    print(f"{'run':>8} {'greta 1st':>14} {'aseq 1st':>14} {'keyed 1st':>14} {'greta warm':>10} {'aseq warm':>10} "
          f"{'keyed warm':>10}")
    for _ in range(args.repeat):
        for label in ("cold", "cached"):
            if label == "cold":
                clear_cache()
            r = _child("greta", "aseq")
            if label == "cold":
                clear_cache(("aseq",))
            r.update(_child("aseq keyed"))

            def cell(key: str, width: int = 14, digits: int = 1) -> str:
                return f"{r[key + ' cpu']:.{digits}f} ({r[key]:.{digits}f})".rjust(width)

            print(f"{label:>8} {cell('greta first')} {cell('aseq first')} {cell('aseq keyed first')} "
                  f"{r['greta warm cpu']:10.3f} {r['aseq warm cpu']:10.3f} {r['aseq keyed warm cpu']:10.3f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
