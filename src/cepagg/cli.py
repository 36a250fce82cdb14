"""The ``cepagg`` command: run, check, explain and demo.

Errors cepagg reports on purpose (a bad query, bad input, a refused engine) are printed without
a traceback and exit with status 1 (2 for usage errors).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import CepaggError
from .lang import compile_query
from .lang.model import TIME_UNITS_MS


def _query_text(args: argparse.Namespace) -> str:
    if args.query_text is not None:
        return args.query_text
    if args.query_file is None:
        raise SystemExit("give a query file or -q TEXT")
    return Path(args.query_file).read_text(encoding="utf-8")


def _add_query_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query_file", nargs="?", help="file holding the query (or a workload: queries "
                   "separated by lines of --- or ;;)")
    p.add_argument("-q", "--query", dest="query_text", help="the query text")
    p.add_argument("--time-unit", default="ms", choices=sorted(TIME_UNITS_MS),
                   help="unit of the stream's integer timestamps (default ms)")


def _add_event_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", required=True, help="events file or directory (CSV, JSON Lines, Parquet)")
    p.add_argument("--format", choices=["csv", "jsonl", "parquet"], help="input format (default: from the extension)")
    p.add_argument("--type-column", default="type", help="column holding the event type (default: type)")
    p.add_argument("--time-column", default="ts", help="column holding the event time (default: ts)")
    p.add_argument("--input-time-unit", help="unit of integer times in the file (default: --time-unit)")
    p.add_argument("--timezone", default="UTC", help="zone of timestamps without offset (default UTC)")
    p.add_argument("--schema", help="declared attribute types, e.g. 'price:float,company:str'")
    p.add_argument("--constant-type", help="type of every event, when the file has no type column")
    p.add_argument("--reject", metavar="PATH", help="write bad rows here instead of failing")


def cmd_check(args: argparse.Namespace) -> int:
    schema = None
    if args.schema:
        from .io import parse_schema

        schema = parse_schema(args.schema)
    q = compile_query(_query_text(args), time_unit=args.time_unit, schema=schema)
    print(q)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .lang.workload import compile_workload, is_workload
    from .plan import plan, plan_workload

    text = _query_text(args)
    if is_workload(text):  # a workload file: queries separated by --- or ;;
        named = compile_workload(text, time_unit=args.time_unit)
        print(plan_workload([q for _, q in named], [n for n, _ in named], args.engine).explain())
        return 0
    q = compile_query(text, time_unit=args.time_unit)
    p = plan(q, args.engine)
    print(q)
    print()
    print(p.explain())
    return 0


def _run_workload(args: argparse.Namespace, text: str, report) -> int:
    """Every query of a workload file over the events; one result per query, named."""
    from .io import write_result
    from .lang.workload import compile_workload
    from .plan import plan_workload
    from .runner import attach_event_columns

    named = compile_workload(text, time_unit=args.time_unit, schema=report.batch.attribute_kinds())
    wp = plan_workload([q for _, q in named], [n for n, _ in named], args.engine)
    started = time.perf_counter()
    results = wp.run(report.batch)
    elapsed = time.perf_counter() - started
    for (name, q), result in zip(named, results):
        if q.returns_matches:
            result = attach_event_columns(result, report.batch)
        if args.out == "-":
            print(f"== {name}")
            write_result(result, "-")
        else:
            path = Path(args.out)
            write_result(result, str(path.with_name(f"{path.stem}.{name}{path.suffix}")))
    print(f"cepagg: {len(report.batch)} events, {len(named)} queries ({len(wp.shared)} in one shared aseq plan) "
          f"in {elapsed:.3f} s", file=sys.stderr)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from .io import parse_schema, read_events, write_result
    from .lang.workload import is_workload
    from .plan import plan
    from .runner import attach_event_columns

    text = _query_text(args)
    report = read_events(
        args.events, format=args.format, type_column=args.type_column, time_column=args.time_column,
        time_unit=args.time_unit, input_time_unit=args.input_time_unit, timezone=args.timezone,
        schema=parse_schema(args.schema) if args.schema else None, constant_type=args.constant_type,
        on_bad_row="reject" if args.reject else "error", reject_path=args.reject,
    )
    if report.rejected:
        print(f"cepagg: {report.rejected} bad row(s) of {report.rows_read} written to {report.reject_path}",
              file=sys.stderr)
    if is_workload(text):
        return _run_workload(args, text, report)
    q = compile_query(text, time_unit=args.time_unit, schema=report.batch.attribute_kinds())
    p = plan(q, args.engine)
    started = time.perf_counter()
    result = p.build().run(report.batch)
    elapsed = time.perf_counter() - started
    if q.returns_matches:
        result = attach_event_columns(result, report.batch)
    write_result(result, args.out)
    print(f"cepagg: {len(report.batch)} events, engine {p.engine}, {len(result)} rows in {elapsed:.3f} s",
          file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import main as demo_main

    return demo_main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cepagg", description=(
        "Complex event analytics: aggregate pattern matches without constructing them."))
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="evaluate a query over an events file")
    _add_query_args(p)
    _add_event_args(p)
    p.add_argument("--engine", default="auto", help="engine: auto (default), reference, ...")
    p.add_argument("--out", default="-", help="output file (.csv, .jsonl, .parquet) or - for a table")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("check", help="parse and check a query, print its normalised form")
    _add_query_args(p)
    p.add_argument("--schema", help="attribute types of the events, to check attribute names")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("explain", help="show what will run for a query and why")
    _add_query_args(p)
    p.add_argument("--engine", default="auto")
    p.set_defaults(func=cmd_explain)

    from .bench import add_parser as add_bench_parser

    add_bench_parser(sub)

    p = sub.add_parser("demo", help="generate a small stock stream and run seed queries on it")
    p.add_argument("--seed", type=int, default=7)
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CepaggError as exc:
        print(f"cepagg: {exc}", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        print(f"cepagg: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
