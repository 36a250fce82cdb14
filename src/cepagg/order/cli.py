"""Command-line options of the ordering layer (``cepagg run --order``, ``cepagg stream --order``)."""

from __future__ import annotations

import argparse
import json
import random
import re

from .policy import POLICIES
from .stream import Arrival

_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "sec": 10**9, "seconds": 10**9, "min": 60 * 10**9,
       "minutes": 60 * 10**9, "h": 3600 * 10**9, "hours": 3600 * 10**9, "d": 86400 * 10**9, "days": 86400 * 10**9}


def parse_span(text: str | None, time_unit: str) -> int | None:
    """``"10"`` (stream units), ``"5s"`` or ``"250 ms"`` -> an integer in ``time_unit``."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", str(text))
    if not m:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}")
    value, unit = int(m.group(1)), m.group(2) or time_unit
    if unit not in _NS:
        raise argparse.ArgumentTypeError(f"unknown time unit {unit!r} in {text!r}")
    ns = value * _NS[unit]
    if ns % _NS[time_unit]:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {time_unit}")
    return ns // _NS[time_unit]


def add_order_args(p: argparse.ArgumentParser, spark: bool) -> None:
    g = p.add_argument_group("out-of-order input (docs/semantics.md §12)")
    g.add_argument("--order", choices=["kslack", "conservative", "aggressive"],
                   help="ordering strategy; the input's row order is the arrival order")
    g.add_argument("--slack", help="kslack: K, how late an event may be (stream units or e.g. 5s)")
    g.add_argument("--lateness", help="aggressive: keep history for this long; later events are late "
                                      "(default: unbounded)")
    g.add_argument("--clock", choices=["key", "global"], default="key",
                   help="kslack/aggressive: a clock per partition key (default) or one for the stream")
    g.add_argument("--punctuate", default="in-file",
                   help="conservative: 'in-file' (rows of type __punct__, attribute punct_type; default) or "
                        "'exact:RATE[:types|all]' (truthful punctuations derived from the file at that rate "
                        "per event: for experiments)")
    if not spark:
        g.add_argument("--on-late", choices=list(POLICIES), default="drop",
                       help="late events: drop and count (default), output to --late-out, or fail")
        g.add_argument("--late-out", help="file for late events (.jsonl or .csv) with --on-late output")
        g.add_argument("--changes", help="also write every emitted row (kind, revision, at, clock) to this file")
        g.add_argument("--tick", type=int, default=1, help="emit after every N arriving items (default 1)")


def config_from_args(args: argparse.Namespace):
    from . import OrderConfig

    slack = parse_span(args.slack, args.time_unit)
    lateness = parse_span(args.lateness, args.time_unit)
    if args.order == "kslack" and slack is None:
        raise SystemExit("cepagg: --order kslack needs --slack K")
    if args.on_late == "output" and not args.late_out:
        raise SystemExit("cepagg: --on-late output needs --late-out PATH")
    return OrderConfig(args.order, slack=slack, lateness=lateness, clock=args.clock, on_late=args.on_late)


def punctuations_for(args: argparse.Namespace, arrival: Arrival) -> Arrival:
    spec = args.punctuate or "in-file"
    if spec == "in-file":
        return arrival
    m = re.fullmatch(r"exact:([0-9.]+)(?::(types|all))?", spec)
    if not m:
        raise SystemExit(f"cepagg: --punctuate {spec!r}: expected in-file or exact:RATE[:types|all]")
    from .disorder import exact_punctuations

    return exact_punctuations(arrival, float(m.group(1)), m.group(2) or "types", random.Random(0))


def write_late(events: list[dict], path: str | None) -> None:
    if not path:
        return
    if path.endswith(".csv"):
        import csv

        names: list[str] = []
        for e in events:
            names += [k for k in e if k not in names]
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=names)
            w.writeheader()
            w.writerows(events)
        return
    with open(path, "w", encoding="utf-8") as f:
        for e in events:
            f.write(json.dumps(e, default=str) + "\n")
