"""Benchmarks: ``cepagg bench NAME``. Each benchmark is a module here with ``add_arguments``
(optional) and ``main(args) -> int``; it prints a table, saves its plots and says where.

Benchmarks are programs, not tests: speed claims come from them (see docs/benchmarks.md),
never from timed unit tests.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from typing import Callable, Iterable

from ..errors import UsageError

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


def positive(kind: type) -> Callable[[str], int | float]:
    """An argparse type: a number of ``kind`` above 0. Every number a benchmark takes, its seed
    aside, is a count, a size, a time or a rate; 0 or less ran nothing, or failed deep inside
    numpy with a traceback.

    >>> positive(int)("3"), positive(float)("0.5")
    (3, 0.5)
    """
    def parse(text: str):
        value = kind(text)  # (a ValueError here is argparse's "invalid int value")
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r}: give a number above 0")
        return value

    parse.__name__ = kind.__name__
    return parse


def chosen(option: str, text: str | None, known: Iterable[str]) -> list[str] | None:
    """The comma-separated names ``option`` gives (None: not given), each one of ``known``: an
    unknown name ran nothing without a word, or failed with a KeyError.

    >>> chosen("--only", "a,b", ["a", "b", "c"]), chosen("--only", None, ["a"])
    (['a', 'b'], None)
    """
    if text is None or text == "":
        return None
    names, known = [x.strip() for x in text.split(",") if x.strip()], list(known)
    for name in (n for n in names if n not in known):
        raise UsageError(f"{option} {name!r}: expected one of {', '.join(known)}")
    return names


def whole_numbers(option: str, text: str | None, least: int = 1) -> list[int] | None:
    """The comma-separated whole numbers ``option`` gives (None: not given), each at least ``least``.

    >>> whole_numbers("--sizes", "10,100"), whole_numbers("--sizes", None)
    ([10, 100], None)
    """
    if text is None or text == "":
        return None
    out = []
    for x in (x.strip() for x in text.split(",") if x.strip()):
        if not x.isdigit() or int(x) < least:
            raise UsageError(f"{option} {x!r}: expected whole numbers of at least {least}, comma-separated")
        out.append(int(x))
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
        for action in bp._actions:  # (argparse has no public walk over a parser's options)
            if action.type in (int, float) and action.dest != "seed":
                action.type = positive(action.type)
        bp.set_defaults(func=mod.main)
