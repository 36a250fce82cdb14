"""Benchmarks: ``cepagg bench NAME``. Each benchmark is a module here with ``add_arguments``
(optional) and ``main(args) -> int``; it prints a table, saves its plots and says where.

Benchmarks are programs, not tests: speed claims come from them (see docs/benchmarks.md),
never from timed unit tests.
"""

from __future__ import annotations

import importlib
import importlib.util

#: name -> module, for the benchmarks present.
BENCHMARKS = {
    "aseq": "cepagg.bench.aseq",
    "greta": "cepagg.bench.greta",
    "spark": "cepagg.bench.spark",
    "disorder": "cepagg.bench.disorder",
    "peers": "cepagg.bench.peers",
    "matches": "cepagg.bench.matches",
    "tree": "cepagg.bench.tree",
    "neel": "cepagg.bench.neel",
    "ecube": "cepagg.bench.ecube",
}


def available() -> dict[str, str]:
    out = {}
    for name, module in BENCHMARKS.items():
        if importlib.util.find_spec(module) is not None:
            out[name] = module
    return out


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="run a benchmark (see docs/benchmarks.md)")
    bench_sub = p.add_subparsers(dest="bench", required=True)
    for name, module in available().items():
        mod = importlib.import_module(module)
        summary = (mod.__doc__ or "").strip().splitlines()
        bp = bench_sub.add_parser(name, help=summary[0] if summary else None)
        if hasattr(mod, "add_arguments"):
            mod.add_arguments(bp)
        bp.set_defaults(func=mod.main)
