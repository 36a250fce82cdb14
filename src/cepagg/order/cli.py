"""Command-line options of the ordering layer (``cepagg run --order``, ``cepagg stream --order``)."""

from __future__ import annotations

import argparse
import json
import random
import re

from ..errors import UsageError
from ..lang.analyze import MAX_SPAN
from ..units import UNIT_NS, unit_name
from .policy import POLICIES
from .stream import Arrival


def parse_span(text: str | None, time_unit: str, option: str = "") -> int | None:
    """``"10"`` (stream units), ``"5s"``, ``"2 m"`` or ``"250 ms"`` -> an integer in ``time_unit``
    (units as in queries: :data:`cepagg.units.UNIT_NAMES`).

    >>> parse_span("2m", "s"), parse_span("250 ms", "ms"), parse_span("7", "s")
    (120, 250, 7)
    """
    if text is None:
        return None
    where = f"{option} " if option else ""
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(text))
    if not m:
        raise UsageError(f"{where}{text!r}: not a duration (e.g. 10, 5s, 250 ms)")
    value, unit = int(m.group(1)), unit_name(m.group(2)) if m.group(2) else time_unit
    if unit is None:
        raise UsageError(f"{where}{text!r}: unknown time unit {m.group(2)!r}")
    ns = value * UNIT_NS[unit]
    if ns % UNIT_NS[time_unit]:
        raise UsageError(f"{where}{text!r} is not a whole number of {time_unit}")
    if ns // UNIT_NS[time_unit] > MAX_SPAN:  # (the layer computes clock - K - 1 in 64-bit integers)
        raise UsageError(f"{where}{text!r} is too long: at most 2^61 = {MAX_SPAN} {time_unit}, as a window")
    return ns // UNIT_NS[time_unit]


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


#: ordering options -> (their default, the strategies they apply to; None: every one); ``stream``
#: has the first four (its --on-late also applies without --order)
_APPLIES = {"slack": (None, ("kslack",)), "lateness": (None, ("aggressive",)),
            "clock": ("key", ("kslack", "aggressive")), "punctuate": ("in-file", None),
            "on_late": ("drop", None), "late_out": (None, None), "changes": (None, None), "tick": (1, None)}
_STREAM = ("slack", "lateness", "clock", "punctuate")


def check_order_options(args: argparse.Namespace, command: str = "run") -> None:
    """Refuse an ordering option given where it does nothing: without ``--order``, or with a
    strategy it is not for (``--slack`` with conservative), instead of ignoring it."""
    for dest, (default, strategies) in _APPLIES.items():
        value = getattr(args, dest, default)
        if value == default or (command == "stream" and dest not in _STREAM):
            continue
        option = "--" + dest.replace("_", "-")
        if not args.order:
            raise UsageError(f"{command}: {option} applies with --order")
        if strategies and args.order not in strategies:
            raise UsageError(f"{command}: {option} applies with --order {' or '.join(strategies)}, "
                             f"not {args.order}")
    if getattr(args, "late_out", None) and args.on_late != "output":
        raise UsageError(f"{command}: --late-out applies with --on-late output")
    if command == "stream" and args.on_late == "output" and not args.order:
        raise UsageError("stream: --on-late output applies with --order (without it, late events are counted)")


def config_from_args(args: argparse.Namespace):
    from . import OrderConfig

    slack = parse_span(args.slack, args.time_unit, "--slack")
    lateness = parse_span(args.lateness, args.time_unit, "--lateness")
    if args.order == "kslack" and slack is None:
        raise UsageError("--order kslack needs --slack K")
    if args.on_late == "output" and not args.late_out:
        raise UsageError("--on-late output needs --late-out PATH")
    if args.tick < 1:
        raise UsageError(f"--tick {args.tick}: give a positive number of arriving items")
    return OrderConfig(args.order, slack=slack, lateness=lateness, clock=args.clock, on_late=args.on_late,
                       numbers=args.numbers)


def punctuations_for(args: argparse.Namespace, arrival: Arrival) -> Arrival:
    spec = args.punctuate or "in-file"
    if spec == "in-file":
        return arrival
    m = re.fullmatch(r"exact:(\d+(?:\.\d*)?|\.\d+)(?::(types|all))?", spec)
    if not m:
        raise UsageError(f"--punctuate {spec!r}: expected in-file or exact:RATE[:types|all], RATE a number")
    from .disorder import exact_punctuations

    return exact_punctuations(arrival, float(m.group(1)), m.group(2) or "types", random.Random(0))


def write_late(events: list[dict], path: str | None) -> None:
    """Late events to a CSV file (by the name's extension, as for --out) or JSON Lines, atomically."""
    from ..output import atomic_path, json_safe, output_format

    if not path:
        return
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        if output_format(path) == "csv":
            import csv

            names: list[str] = []
            for e in events:
                names += [k for k in e if k not in names]
            w = csv.DictWriter(f, fieldnames=names)
            w.writeheader()
            w.writerows(events)
            return
        for e in events:
            f.write(json.dumps({k: json_safe(v) for k, v in e.items()}, allow_nan=False) + "\n")
