"""``cepagg cube WORKLOAD --hierarchy H --events E``: every query of a workload at once, computed
with reuse; one result table per query, then the refinement hierarchy and the plan.

``cepagg explain WORKLOAD --cube`` prints the hierarchy and the plan (the reuse arborescence
with its estimated costs) without running it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from ..errors import UsageError
from .chase import STRATEGIES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategy", default="chase", choices=STRATEGIES,
                   help="how queries reuse each other's results (default chase: the cheapest plan)")
    p.add_argument("--out", metavar="DIR", help="write each query's result to DIR/<name>.csv instead of printing")
    p.add_argument("--plot", metavar="PNG", help="draw a cube slice: a query's result at each concept level of "
                   "each position (the query: --slice)")
    p.add_argument("--slice", metavar="NAME", help="the query --plot draws (default: the first)")
    p.add_argument("--adapt", type=int, metavar="N", help="run in batches of about N events, re-planning when "
                   "the measured statistics drift (prints when and why)")
    p.add_argument("--drift", type=float, metavar="THETA", help="with --adapt: re-plan when a "
                   "rate changes by more than this fraction of the larger of the old and new rate (default 0.5: "
                   "doubled or halved)")
    p.add_argument("--gain", type=float, metavar="GAMMA", help="with --adapt: install a new plan "
                   "when its estimated cost is lower by more than this fraction (default 0.1)")


def cmd_cube(args: argparse.Namespace) -> int:
    from ..cli import check_command_line, query_schema, query_text, read_input
    from ..output import write_result
    from .cube import Cube

    text = query_text(args)
    planned = Cube.from_text(text, time_unit=args.time_unit)  # (names and shapes, before reading)
    outs = {f"--out ({n})": str(Path(args.out) / f"{n}.csv") for n in planned.queries} if args.out else {}
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out!r} is a file; the cube writes one file per query into a directory")
    check_command_line(args, text, {"--reject": args.reject}, {"--out": args.out, **outs})
    _check_slice(args, planned)
    adapt = _adaptation(args)
    if args.plot:
        from ..output import check_output_path

        if not args.plot.lower().endswith(".png"):
            raise UsageError(f"--plot {args.plot!r}: name it .png")
        try:
            check_output_path(args.plot, "--plot")
        except ValueError as e:
            raise UsageError(str(e)) from None
    report = read_input(args)
    cube = Cube.from_text(text, time_unit=args.time_unit, schema=query_schema(report.batch))
    started = time.perf_counter()
    results = cube.evaluate(report.batch, args.strategy, adapt=adapt)
    elapsed = time.perf_counter() - started
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    for name, result in results.items():
        if args.out:
            write_result(result, str(Path(args.out) / f"{name}.csv"))
        else:
            print(f"== {name}: {cube.shapes[name].text()}")
            write_result(result, "-")
            print()
    print("E-Cube hierarchy:")
    print(cube.hierarchy_text())
    print()
    if adapt is None:
        print(cube.last_plan.explain())
    else:
        print(adaptation_text(cube, adapt))
    if args.plot:
        from .slice import plot_slice

        plot_slice(cube, args.slice or next(iter(results)), args.plot)  # (checked by _check_slice)
        print(f"cepagg: cube slice drawn in {args.plot}", file=sys.stderr)
    queries = f"{len(results)} " + ("query" if len(results) == 1 else "queries")
    print(f"cepagg: {len(report.batch)} events, {queries}, strategy {args.strategy}, "
          f"in {elapsed:.3f} s" + (f"; results in {args.out}" if args.out else ""), file=sys.stderr)
    return 0


def _adaptation(args: argparse.Namespace):
    """The --adapt options as an :class:`~cepagg.cube.adapt.Adaptation` (None without --adapt)."""
    if args.adapt is None:
        if args.drift is not None or args.gain is not None:  # (given, even at their default values)
            raise UsageError("--drift and --gain set plan adaptation; add --adapt N")
        return None
    from .adapt import Adaptation

    default = {f.name: f.default for f in dataclasses.fields(Adaptation)}
    drift = default["drift"] if args.drift is None else args.drift
    gain = default["gain"] if args.gain is None else args.gain
    if args.adapt < 1 or not 0 <= drift <= 1 or not 0 <= gain < 1:
        raise UsageError("--adapt takes at least 1 event, --drift a fraction in [0, 1], --gain one in [0, 1)")
    return Adaptation(args.adapt, drift, gain)


def adaptation_text(cube, adapt) -> str:
    """The plans an adaptive evaluation used, and when and why it re-planned."""
    n = len(cube.replans)
    installed = sum(r.installed for r in cube.replans)
    lines = [f"plan adaptation: batches of about {adapt.batch:,} events, drift threshold {adapt.drift:.0%}, "
             f"gain threshold {adapt.gain:.0%}; re-planned {n} time{'' if n == 1 else 's'}, "
             f"installed {installed} new plan{'' if installed == 1 else 's'}"]
    lines += [f"  {r.text()}" for r in cube.replans]
    for k, p in cube.plans:
        lines += ["", f"from batch {k}:", p.explain()]
    return "\n".join(lines)


def explain_cube(text: str, args: argparse.Namespace) -> str:
    """What ``cepagg explain --cube`` prints (costs from uniform event counts)."""
    from .cube import Cube

    cube = Cube.from_text(text, time_unit=args.time_unit)
    plan = cube.plan(getattr(args, "strategy", "chase"))
    lines = ["E-Cube hierarchy:", cube.hierarchy_text(), "", "reuse graph (estimated costs, uniform event counts):"]
    lines += [f"  {r.text()}" for r in plan.candidates]
    lines += ["", plan.explain()]
    return "\n".join(lines)


def _check_slice(args: argparse.Namespace, planned) -> None:
    """Refuse ``--slice`` without ``--plot``, an unknown slice name and a query a slice cannot
    draw, before any work."""
    if args.slice and not args.plot:
        raise UsageError("--slice names the query --plot draws; add --plot FILE.png")
    if not args.plot:
        return
    name = args.slice or next(iter(planned.queries))
    if name not in planned.queries:
        raise UsageError(f"--slice {name!r}: the cube has no such query; it has " + ", ".join(planned.queries))
    q = planned.queries[name]
    if q.returns_matches or q.group_by or q.mode != "total":
        raise UsageError(f"--plot: query {name!r} has no single value per level to draw (a slice needs "
                         "aggregates without GROUP BY, SLIDE or EMIT ON CHANGE); name another with --slice")
