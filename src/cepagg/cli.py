"""The ``cepagg`` command: run, check, explain and demo.

Errors cepagg reports on purpose (a bad query, bad input, a refused engine) are one line on
stderr, without a traceback, and exit with status 1; a bad command line (an option's value, an
output path that is an input, a directory or in a missing directory) exits with status 2 before
anything is read. Outputs are written atomically (:func:`cepagg.output.atomic_path`).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

from .errors import CepaggError, InputError, OverflowResult, QueryError, UsageError
from .lang import compile_query
from .lang.model import TIME_UNITS_MS
from .units import UNIT_NS, unit_name

#: a workload query's name, used in output file names: no path separators, no leading dot


class _Parser(argparse.ArgumentParser):
    """Command-line errors as one ``cepagg: ...`` line and exit status 2."""

    def error(self, message: str):
        print(f"cepagg: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def query_text(args: argparse.Namespace) -> str:
    """The query or workload text; with ``--hierarchy``, the hierarchy's CONCEPT lines added (the
    text carries the hierarchy to every driver, Spark's workers included)."""
    from .lang.concepts import Hierarchy, with_hierarchy

    if args.query_text is not None and args.query_file is not None:
        raise UsageError(f"give a query file or -q TEXT, not both (file {args.query_file!r})")
    if args.query_text is not None:
        text = args.query_text
    elif args.query_file is None:
        raise UsageError("give a query file or -q TEXT")
    else:
        try:
            text = Path(args.query_file).read_text(encoding="utf-8-sig")  # (a BOM, as Windows editors write)
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read the query: {e}", args.query_file) from None
    if getattr(args, "hierarchy", None):
        text = with_hierarchy(text, Hierarchy.load(args.hierarchy))
    return text


def _unit(text: str) -> str:
    """A time unit option in any spelling of the one table (``minutes``, ``m``, ``sec``) as its
    canonical name, which argparse then checks against the option's choices."""
    return unit_name(text) or text


def _add_query_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query_file", nargs="?", help="file holding the query (or a workload: queries "
                   "separated by lines of --- or ;;)")
    p.add_argument("-q", "--query", dest="query_text", help="the query text")
    p.add_argument("--time-unit", default="ms", type=_unit, choices=list(TIME_UNITS_MS),
                   help="unit of the stream's integer timestamps (default ms)")
    p.add_argument("--hierarchy", metavar="FILE", help="concept hierarchy, JSON {concept: [child, ...]}: "
                   "a concept used as a type matches every event type below it")


def _add_event_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", required=True, help="events file or directory (CSV, JSON Lines, Parquet)")
    p.add_argument("--format", choices=["csv", "jsonl", "parquet"], help="input format (default: from the extension)")
    p.add_argument("--type-column", default="type", help="column holding the event type (default: type)")
    p.add_argument("--time-column", default="ts", help="column holding the event time (default: ts)")
    p.add_argument("--input-time-unit", type=_unit, choices=list(UNIT_NS),
                   help="unit of integer times in the file (default: --time-unit)")
    p.add_argument("--timezone", default="UTC", help="zone of timestamps without offset (default UTC)")
    p.add_argument("--schema", help="declared attribute types, e.g. 'price:float,company:str'")
    p.add_argument("--constant-type", help="type of every event, when the file has no type column (with one: an error)")
    p.add_argument("--reject", metavar="PATH", help="write bad rows here (.csv or .jsonl) instead of failing (stream "
                   "--follow: one file per input file with bad rows, PATH.<file>.ext)")


def _read_options(args: argparse.Namespace) -> dict:
    """The options of :func:`cepagg.io.read_events` the event arguments give."""
    from .io import parse_schema

    return dict(format=args.format, type_column=args.type_column, time_column=args.time_column,
                time_unit=args.time_unit, input_time_unit=args.input_time_unit, timezone=args.timezone,
                schema=parse_schema(args.schema) if args.schema else None, constant_type=args.constant_type,
                on_bad_row="reject" if args.reject else "error", reject_path=args.reject)


#: the event options (:func:`_add_event_args`) the ``cepagg`` stream source takes, by the same names
_SOURCE_OPTIONS = ("format", "type_column", "time_column", "time_unit", "input_time_unit", "timezone", "schema",
                   "constant_type", "reject")


def _source_options(args: argparse.Namespace) -> dict[str, str]:
    """The options of the ``cepagg`` stream source (:mod:`cepagg.spark.sources`) the event
    arguments give: the same reading as :func:`_read_options` gives ``run``."""
    return {key: str(getattr(args, key)) for key in _SOURCE_OPTIONS if getattr(args, key, None)}


def check_command_line(args: argparse.Namespace, text: str, outputs: dict[str, str | None],
                        directories: dict[str, str | None] | None = None) -> None:
    """Refuse a bad command line before reading anything (UsageError, exit status 2): bad read
    options, an output file that is an input file,
    a directory, of an unknown format or in a missing directory, an output directory that is an
    input. ``outputs``/``directories``: option -> path (None: not given)."""
    from .io import check_read_options, input_files
    from .lang.workload import is_workload, split_workload
    from .output import check_output_path, output_format, same_file

    for option, path in [*outputs.items(), *(directories or {}).items()]:
        if path is not None and not str(path).strip():  # (an empty name reads as "not given", or as ".")
            raise UsageError(f"{option} is empty; give a {'directory' if option in (directories or {}) else 'file'} "
                             "name")
    try:
        options = _read_options(args)
        check_read_options(**{k: options[k] for k in ("time_unit", "input_time_unit", "timezone", "schema",
                                                       "on_bad_row")})
        names = [n for n, _ in split_workload(text)] if is_workload(text) else []  # names fit file names
        if outputs.get("--out") not in (None, "-") and names and not directories:  # `run`: a file per query
            out = Path(outputs.pop("--out"))
            outputs.update({f"--out ({n})": str(out.with_name(f"{out.stem}.{n}{out.suffix}")) for n in names})
        inputs = [*input_files(args.events, args.format), Path(args.events)] + (
            [Path(args.query_file)] if getattr(args, "query_file", None) else []) + (
            [Path(args.hierarchy)] if getattr(args, "hierarchy", None) else [])
        given = {k: v for k, v in outputs.items() if v not in (None, "-")}
        for option, path in given.items():
            check_output_path(path, option)
            try:
                fmt = output_format(path)
            except ValueError as e:
                raise ValueError(f"{option.split(' (')[0]} {e}") from None
            if fmt == "parquet" and option in ("--reject", "--late-out"):
                raise ValueError(f"{option} {path!r}: name it .csv or .jsonl")
        for option, path in [*given.items(), *((k, v) for k, v in (directories or {}).items() if v)]:
            if any(same_file(path, i) for i in inputs):
                raise ValueError(f"{option} {path!r} is an input; writing it would destroy it")
        paths = list(given.items())
        for k, (a, pa_) in enumerate(paths):
            for b, pb in paths[k + 1:]:  # (--out and --changes the same file)
                if same_file(pa_, pb):
                    raise ValueError(f"{a} and {b} name the same file {pa_!r}")
    except ValueError as e:
        raise UsageError(str(e)) from None


def _add_engine_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", default="auto",
                   help="auto (default): the fastest engine that accepts the query (cepagg explain says which "
                        "and why); or one by name, e.g. reference, aseq, greta, neel, rcep, tree, nfa")


def _add_numbers_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--numbers", choices=["exact", "float"], default="exact",
                   help="COUNT, SUM and AVG as exact numbers, integers of any size (exact, default), or as "
                        "approximate float64 (float; explain --numbers float says which engine computes in float64)")


def _add_spark_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", help="Spark master (default local[2]; e.g. local[*], spark://host:7077)")
    p.add_argument("--spark-config", help="file of Spark settings (spark-defaults.conf style)")


def cmd_check(args: argparse.Namespace) -> int:
    schema = None
    if args.schema:
        from .io import parse_schema

        try:
            schema = parse_schema(args.schema)
        except ValueError as e:
            raise UsageError(str(e)) from None
    q = compile_query(query_text(args), time_unit=args.time_unit, schema=schema)
    print(q)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .lang.workload import compile_workload, is_workload
    from .plan import plan, plan_workload

    if args.strategy and not args.cube:  # (it was ignored: the plan shown is the planner's)
        raise UsageError(f"explain: --strategy {args.strategy} shows an E-Cube plan; add --cube")
    args.strategy = args.strategy or "chase"
    text = query_text(args)
    if args.cube:
        from .cube.cli import explain_cube

        if args.numbers == "float":
            raise UsageError("explain: an E-Cube is evaluated exactly; --numbers float does not apply to --cube")
        print(explain_cube(text, args))
        return 0
    if is_workload(text):  # a workload file: queries separated by --- or ;;
        named = compile_workload(text, time_unit=args.time_unit)
        print(plan_workload([q for _, q in named], [n for n, _ in named], args.engine, args.numbers).explain())
        return 0
    q = compile_query(text, time_unit=args.time_unit)
    p = plan(q, args.engine, args.numbers)
    print(q)
    print()
    print(p.explain())
    return 0


def _run_workload(args: argparse.Namespace, text: str, report) -> int:
    """Every query of a workload file over the events; one result per query, named. On Spark
    the queries aseq accepts, with the nested queries whose terms join their plan, run as shared
    jobs (``cepagg.spark.run_workload``)."""
    from .lang.workload import compile_workload
    from .output import write_result
    from .plan import plan_workload
    from .runner import attach_event_columns, check_concepts, check_event_columns

    named = compile_workload(text, time_unit=args.time_unit, schema=query_schema(report.batch))
    check_concepts([q for _, q in named], report.batch)
    from .matches import OutputRefused

    for name, q in named:
        if q.returns_matches:  # (refused before the work, as a single query is: matches.check_layout)
            try:
                check_event_columns(q.output_columns, report.batch, q)
            except OutputRefused as e:
                raise OutputRefused(f"query {name}: {e}") from None
    wp = plan_workload([q for _, q in named], [n for n, _ in named], args.engine, args.numbers)
    started = time.perf_counter()
    if args.no_spark:
        results = wp.run(report.batch)
        where = "in-process"
    else:
        from .spark import run_workload
        from .spark.progress import Progress

        spark = spark_session(args)
        df = spark.createDataFrame(report.batch.table)  # (Arrow: kept types, and a schema when empty)
        with Progress(spark):
            frames = run_workload(df, text, engine=args.engine, time_unit=args.time_unit, prepared=True,
                                  numbers=args.numbers)
            results = [_collected(out, q, report.batch, args.numbers) for (_, q), out in zip(named, frames.values())]
        where = f"Spark {spark.sparkContext.master}"
    elapsed = time.perf_counter() - started
    for (name, q), result in zip(named, results):
        if q.returns_matches and args.no_spark:
            result = attach_event_columns(result, report.batch, q)
        if args.out == "-":
            print(f"== {name}")
            write_result(result, "-")
        else:
            path = Path(args.out)
            try:
                write_result(result, str(path.with_name(f"{path.stem}.{name}{path.suffix}")))
            except OverflowResult as e:
                raise OverflowResult(f"query {name}: {e}") from None
    terms = f" with {len(wp.shared_terms)} nested terms" if wp.shared_terms else ""
    print(f"cepagg: {len(report.batch)} events, {len(named)} queries ({len(wp.shared)} in one shared aseq plan{terms}, "
          f"{where}{_numbers_note(args)}) in {elapsed:.3f} s", file=sys.stderr)
    return 0


def read_input(args: argparse.Namespace):
    from .io import read_events

    report = read_events(args.events, **_read_options(args))
    _tell_read(report)
    return report


def _tell_read(report) -> None:
    """Warnings and the count of rejected rows of a read, on stderr."""
    for w in report.warnings:
        print(f"cepagg: warning: {w}", file=sys.stderr)
    if report.rejected:
        print(f"cepagg: {report.rejected} bad row(s) of {report.rows_read} written to {report.reject_path}",
              file=sys.stderr)


def query_schema(batch) -> dict | None:
    """The attribute kinds to compile a query with: none for an input without events (a query
    naming attributes still runs over 0 events)."""
    return batch.attribute_kinds() if len(batch) else None


def _run_chunked(args: argparse.Namespace, text: str) -> int | str | None:
    """``cepagg run --no-spark`` of an aggregate query: the input read and fed to the engine chunk
    by chunk (:class:`cepagg.io.EventChunks`, :func:`cepagg.runner.run_chunks`), so memory holds
    the engine's state and one chunk. Else why the input must be read whole (not in time order,
    ...), or None (the query returns matches: their events' attributes are joined from the whole
    input)."""
    from .io import CHUNK_BYTES, EventChunks, NotChunkable
    from .output import write_result
    from .runner import run_chunks

    try:
        q = compile_query(text, time_unit=args.time_unit)
        if q.returns_matches:
            return None
    except QueryError:
        return None  # (reported by the whole read's compile, with the input's attributes)
    chunks = EventChunks(args.events, chunk_bytes=int(os.environ.get("CEPAGG_CHUNK_BYTES", CHUNK_BYTES)),
                         **_read_options(args))
    started = time.perf_counter()
    try:
        result, events, engine = run_chunks(text, chunks, args.engine, numbers=args.numbers)
    except NotChunkable as e:
        return str(e) or None
    elapsed = time.perf_counter() - started
    _tell_read(chunks)
    write_result(result, args.out)
    print(f"cepagg: {events} events (read in chunks), engine {engine} (in-process{_numbers_note(args, q)}), "
          f"{_count(len(result), 'row')} in {elapsed:.3f} s", file=sys.stderr)
    return 0


def _count(n: int, noun: str) -> str:
    """``1 match``, ``2 matches``: a count with its noun (nouns ending in ch take -es)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('ch') else 's'}"


def _spark_config(args: argparse.Namespace) -> dict[str, str]:
    """The settings of ``--spark-config`` (none without it)."""
    from .spark.session import read_config_file

    if not getattr(args, "spark_config", None):
        return {}
    try:
        return read_config_file(args.spark_config)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--spark-config {args.spark_config!r}: {e}") from None


def spark_session(args: argparse.Namespace):
    from .spark.session import get_session

    return get_session(getattr(args, "master", None), _spark_config(args))


def cmd_run(args: argparse.Namespace) -> int:
    from .lang.workload import is_workload
    from .output import write_result
    from .plan import plan
    from .runner import check_concepts

    text = query_text(args)
    if args.order and not args.no_spark:
        raise UsageError("run: --order runs in this process; add --no-spark (or use cepagg stream --order)")
    if is_workload(text) and args.order:
        raise UsageError("run: --order takes one query, not a workload file")
    from .order.cli import check_order_options

    check_order_options(args)
    check_command_line(args, text, {"--out": args.out, "--reject": args.reject,
                                     "--late-out": getattr(args, "late_out", None),
                                     "--changes": getattr(args, "changes", None)})
    _check_match_options(args, text)
    whole = None  # why the input is read whole
    if args.no_spark and not args.order and not is_workload(text):
        whole = _run_chunked(args, text)
        if isinstance(whole, int):
            return whole
    report = read_input(args)
    if whole:
        print(f"cepagg: the input was read whole, not in chunks ({whole})", file=sys.stderr)
    if is_workload(text):
        return _run_workload(args, text, report)
    q = compile_query(text, time_unit=args.time_unit, schema=query_schema(report.batch))
    check_concepts([q], report.batch)
    p = plan(q, args.engine, args.numbers)
    started = time.perf_counter()
    if args.order:
        return _run_ordered(args, q, p, report, started)
    if q.returns_matches:
        return _run_matches(args, q, p, report, started)
    if args.no_spark:
        result = p.build().run(report.batch)
        where = "in-process"
    else:
        from .spark import run as spark_run
        from .spark.progress import Progress

        spark = spark_session(args)
        df = spark.createDataFrame(report.batch.table)  # (Arrow: kept types, and a schema when empty)
        with Progress(spark):
            result = _collected(spark_run(df, q, engine=p.engine, time_unit=args.time_unit, prepared=True,
                                          numbers=args.numbers), q, report.batch, args.numbers)
        where = f"Spark {spark.sparkContext.master}"
    elapsed = time.perf_counter() - started
    write_result(result, args.out)
    print(f"cepagg: {len(report.batch)} events, engine {p.engine} ({where}{_numbers_note(args, p)}), "
          f"{_count(len(result), 'row')} in {elapsed:.3f} s", file=sys.stderr)
    return 0


def _check_match_options(args: argparse.Namespace, text: str) -> None:
    """Refuse ``--match-format wide`` to CSV, and the match options where they do not apply (a
    workload, ``--order``, an aggregate query), before anything is read."""
    from .lang.workload import is_workload
    from .output import output_format

    given = [o for o, v in (("--match-format", args.match_format), ("--max-matches", args.max_matches))
             if v]
    if args.max_matches is not None and args.max_matches < 1:
        raise UsageError(f"run: --max-matches {args.max_matches}: give a positive number")
    if not given:
        return
    if is_workload(text) or args.order:
        raise UsageError(f"run: {given[0]} takes one query without --order")
    try:
        if not compile_query(text, time_unit=args.time_unit).returns_matches:
            raise UsageError(f"run: {given[0]} applies to a query that returns matches (this one returns aggregates)")
    except QueryError:
        pass  # (reported by the run, with the input's attributes)
    if args.match_format == "wide" and args.out != "-" and output_format(args.out) == "csv":
        raise UsageError("run: --match-format wide writes a list of events per variable, which CSV cannot hold: "
                         "write .jsonl or .parquet, or use --match-format long")


def _run_matches(args: argparse.Namespace, q, p, report, started: float) -> int:
    """A RETURN-of-events query: matches written as they are found (:mod:`cepagg.matches`), in
    process or collected from Spark a piece at a time; ``--max-matches`` stops early."""
    from .matches import Layout, check_layout, write
    from .output import output_format
    from .runner import match_feed

    layout = Layout(q, report.batch, args.match_format or "long")
    check_layout(layout, "table" if args.out == "-" else output_format(args.out))
    if args.no_spark:
        pieces = match_feed(p.build(), report.batch)
        where = "in-process"
    else:
        from .spark import run as spark_run
        from .spark.schema import quoted

        spark = spark_session(args)
        df = spark.createDataFrame(report.batch.table)  # (Arrow: kept types, and a schema when empty)
        out = spark_run(df, q, engine=p.engine, time_unit=args.time_unit, prepared=True, attributes=False)
        pieces = _collected_pieces(out.select(*[quoted(c) for c in q.output_columns]), layout.key_width)
        where = f"Spark {spark.sparkContext.master}"
    written = write(pieces, layout, args.out, max_matches=args.max_matches)
    elapsed = time.perf_counter() - started
    if written.stopped:
        print(f"cepagg: stopped at {_count(written.matches, 'match')} (--max-matches)", file=sys.stderr)
    print(f"cepagg: {len(report.batch)} events, engine {p.engine} ({where}), {_count(written.matches, 'match')}, "
          f"{_count(written.rows, 'row')} in {elapsed:.3f} s", file=sys.stderr)
    return 0


def _collected_pieces(out, key_width: int, size: int = 1 << 16):
    """The rows of a Spark result of matches (sorted by match), fetched a partition at a time
    and handed on in pieces of about ``size`` rows, never splitting a match."""
    piece: list[tuple] = []
    for r in out.toLocalIterator():
        row = tuple(_plain(v) for v in r)
        if len(piece) >= size and row[:key_width] != piece[-1][:key_width]:
            yield piece
            piece = []
        piece.append(row)
    if piece:
        yield piece


def _run_ordered(args: argparse.Namespace, q, p, report, started: float) -> int:
    """``cepagg run --order ... --no-spark``: the file's row order is the arrival order."""
    from .order import Arrival, OrderConfig, run_ordered
    from .order.cli import config_from_args, punctuations_for, write_late
    from .output import write_result
    from .runner import attach_event_columns, check_event_columns

    batch = report.batch
    if q.returns_matches:  # (refused before the work, as attach_event_columns would)
        check_event_columns(q.output_columns, batch, q)
    batch = type(batch)(batch.table.sort_by("_id"), batch.time_unit)  # arrival order, not time order
    arrival = Arrival.from_batch(batch)
    arrival = punctuations_for(args, arrival)
    config: OrderConfig = config_from_args(args)
    run = run_ordered(q, arrival, config, engine=p.engine, tick=args.tick)
    result = run.net()
    if q.returns_matches:
        result = attach_event_columns(result, arrival.events, q)
    elapsed = time.perf_counter() - started
    write_result(result, args.out)
    if args.changes:
        write_result(run.table(), args.changes)
    if args.on_late == "output":
        write_late(run.late_events, args.late_out)
    kinds = {}
    for o in run.outputs:
        kinds[o.kind] = kinds.get(o.kind, 0) + 1
    print(f"cepagg: {len(arrival.events)} events, {len(arrival.punctuations())} punctuations, engine {p.engine} "
          f"(in-process{_numbers_note(args, p)}), order {config}: {len(result)} rows in {elapsed:.3f} s; "
          f"outputs by kind: {', '.join(f'{n} {k}' for k, n in sorted(kinds.items())) or 'none'}", file=sys.stderr)
    if run.late_count:
        print(f"cepagg: {run.late_count} late event(s) ({args.on_late}), e.g. {run.late_samples[:3]}", file=sys.stderr)
    return 0


def _numbers_note(args: argparse.Namespace, query=None) -> str:
    """For the summary line: ", float64" in float mode, unless ``query`` (a Query or a Plan's)
    has nothing float mode changes (matches; only MIN and MAX)."""
    from .engines.floats import affected

    query = getattr(query, "query", query)
    return ", float64" if args.numbers == "float" and (query is None or affected(query)) else ""


def _collected(out, q, batch, numbers: str = "exact"):
    """A Spark result DataFrame as a Result (exact decimals back to ints; the attribute columns
    joined to RETURN-of-events rows have no declared kind)."""
    from .result import Result, output_kinds

    rows = [tuple(_plain(v) for v in r) for r in out.collect()]
    kinds = output_kinds(q, batch.attribute_kinds(), numbers)
    return Result(tuple(out.columns), rows, kinds + ("any",) * (len(out.columns) - len(kinds)))


def _plain(v):
    from decimal import Decimal

    return int(v) if isinstance(v, Decimal) else v


def cmd_stream(args: argparse.Namespace) -> int:
    from .lang.workload import is_workload
    from .spark.progress import BatchLines
    from .spark.streaming import check_workload, workload_jobs

    text = query_text(args)
    if is_workload(text) and args.order:
        raise UsageError("stream: --order takes one query, not a workload file")
    from .order.cli import check_order_options

    check_order_options(args, "stream")
    _check_stream_options(args)
    _check_stream_out(args)
    check_command_line(args, text, {"--reject": args.reject},
                        {"--out": args.out, "--late-out": args.late_out, "--checkpoint": args.checkpoint})
    if not args.checkpoint and args.out_format != "console" and \
            "spark.sql.streaming.checkpointLocation" not in _spark_config(args):
        raise UsageError(f"stream: --out-format {args.out_format} needs --checkpoint DIR (where Spark keeps the "
                         "stream's progress)")
    spark = _stream_session(args)
    with _CtrlC().answering(_STARTING) as ctrl_c:
        df = _event_stream(args, spark)
        if args.order:
            return _stream_ordered(args, spark, df, text, ctrl_c)
        if is_workload(text):  # one streaming query per query, results in OUT/<name>
            check_workload(df, text, time_unit=args.time_unit, engine=args.engine, numbers=args.numbers)
            jobs = workload_jobs(text, args.out, args.checkpoint)
        else:
            jobs = [(None, text, args.out, args.checkpoint)]
        lines = [BatchLines(args.time_unit, name, finite=not args.follow) for name, _, _, _ in jobs]
        try:
            interrupted, ran = _run_stream_jobs(args, df, jobs, lines, ctrl_c)
        except Exception:  # a query failed: what Spark dropped before is still said, then the failure
            for (name, _, _, _), progress in zip(jobs, lines):
                _tell_dropped(name, progress, args.delay)
            raise
    # (the queries that ran only: the checkpoint of one that did not may hold an earlier run's late events)
    for (name, _, _, checkpoint), progress in zip(jobs[:ran], lines):
        _tell_late(spark, name, checkpoint, progress, args.delay)
    _tell_rejected(args)
    _results_line(args, (" (one folder per query)" if len(jobs) > 1 else "")
                  + (_REVISED if any(_revised(body, args.time_unit) for _, body, _, _ in jobs) else ""))
    return 130 if interrupted else 0


#: said at a Ctrl-C while the stream starts or runs to its end (Spark may be in a call: the run stops after it)
_STARTING = "cepagg: stopping as soon as Spark answers (Ctrl-C again to stop at once) ...\n"


class _CtrlC:
    """Ctrl-C during ``cepagg stream``, answered where cepagg next looks instead of inside a
    call to Spark's JVM. A KeyboardInterrupt raised inside a py4j call leaves py4j's tracebacks
    on the terminal and its connection broken, and pyspark's own handler calls the JVM from
    inside the call in progress; a first Ctrl-C then went unanswered or ended in tracebacks.
    The first press is noted (``message``, when set, is said at once: the next look may be
    seconds away while a query starts) and acted on at the next look (:meth:`check`, or the
    ``interrupted`` of :func:`cepagg.spark.streaming.follow`); a second press stops the run
    at once."""

    def __init__(self) -> None:
        self.pressed = 0
        self.message: str | None = None

    def __call__(self, signum, frame) -> None:
        self.pressed += 1
        if self.pressed > 1:
            raise KeyboardInterrupt
        if self.message:
            os.write(2, self.message.encode())

    def __bool__(self) -> bool:
        return self.pressed > 0

    def check(self) -> None:
        """KeyboardInterrupt, if Ctrl-C was pressed."""
        if self.pressed:
            raise KeyboardInterrupt

    @contextmanager
    def answering(self, message: str | None = None):
        """This object answers Ctrl-C while the block runs (in the main thread; elsewhere Python
        delivers no signal), saying ``message`` at the first press."""
        saved, self.message = self.message, message
        if threading.current_thread() is not threading.main_thread():
            yield self
            self.message = saved
            return
        handler = signal.signal(signal.SIGINT, self)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, handler)
            self.message = saved


def _stream_session(args: argparse.Namespace):
    """The Spark session of ``cepagg stream``, started in a thread of its own while this one
    waits, pyspark's worker lines filtered out (:func:`cepagg.spark.console.quiet_worker_lines`).
    pyspark installs its Ctrl-C handler (which calls the JVM from inside whatever call is in
    progress) only when a session starts in the main thread; here a Ctrl-C while Spark starts
    ends the wait at once, and the run's later calls to Spark are answered by :class:`_CtrlC`.
    A session this process already runs (an application calling :func:`main`) is taken as it is,
    in this thread: nothing is started, and its settings stay its own."""
    from .spark.console import quiet_worker_lines
    from .spark.session import running_session

    if running_session() is not None:
        return spark_session(args)
    started: dict = {}

    def start() -> None:
        try:
            started["spark"] = spark_session(args)
        except BaseException as e:  # (raised again in the main thread)
            started["error"] = e

    with quiet_worker_lines(active=not args.verbose):
        thread = threading.Thread(target=start, name="cepagg-spark-start", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.1)
    if "error" in started:
        raise started["error"]
    return started["spark"]


def _run_stream_jobs(args: argparse.Namespace, df, jobs, lines, ctrl_c: _CtrlC) -> tuple[bool, int]:
    """The streaming queries of ``cepagg stream`` (``jobs``: name, query, output, checkpoint;
    ``lines``: their :class:`cepagg.spark.progress.BatchLines`): each run to the end of the
    input in turn, or with ``--follow`` all started, then followed until Ctrl-C. (Stopped by
    Ctrl-C, how many of ``jobs``, the first ones, ran): a Ctrl-C before the first query started,
    or without --follow, raises KeyboardInterrupt; with --follow, one while the queries start
    stops those started, and the others never run."""
    from .spark.streaming import run_to_end, start

    options = dict(format=args.out_format, delay=args.delay, time_unit=args.time_unit, engine=args.engine,
                   numbers=args.numbers, on_late="fail" if args.on_late == "fail" else "count")
    running = []
    for (name, body, out, checkpoint), progress in zip(jobs, lines):
        if not args.follow:
            ctrl_c.check()
            run_to_end(df, body, progress=progress, interrupted=ctrl_c.__bool__, out=out, checkpoint=checkpoint,
                       **options)
            continue
        if ctrl_c and running:
            break  # (the queries started are stopped as at a Ctrl-C while they run)
        ctrl_c.check()
        running.append((start(df, body, available_now=False, processing_time=args.trigger, count_out=True,
                              out=out, checkpoint=checkpoint, **options), progress))
    if not args.follow:
        return False, len(jobs)
    return _follow_until_interrupted(running, args.checkpoint, ctrl_c), len(running)


def _event_stream(args: argparse.Namespace, spark):
    """The events file as a stream (the ``cepagg`` source, :mod:`cepagg.spark.sources`), read
    with the event options of ``run`` (:func:`_source_options`), finite unless ``--follow``."""
    from .spark.sources import register

    register(spark)
    reader = spark.readStream.format("cepagg").option("path", args.events).options(**_source_options(args))
    if args.rate:
        reader = reader.option("rate", str(args.rate))
    if args.events_per_batch:
        reader = reader.option("maxEventsPerBatch", str(args.events_per_batch))
    return reader.option("finite", "false" if args.follow else "true").load()


def _tell_late(spark, name: str | None, checkpoint: str | None, progress, delay: str,
               option: str = "--delay") -> None:
    """The late events of a streaming query, on stderr: those cepagg's operator counted (read
    from the checkpoint's state) and those Spark dropped (:func:`_tell_dropped`)."""
    from .spark.streaming import late_events

    count, samples = late_events(spark, checkpoint) if _committed(checkpoint) else (0, [])
    if count:
        print(f"cepagg: {count} event(s) arrived later than the delay of {delay}{_in_query(name)}"
              f"; e.g. {samples[:3]}", file=sys.stderr)
    _tell_dropped(name, progress, delay, option)


def _tell_dropped(name: str | None, progress, delay: str, option: str = "--delay") -> None:
    """The events Spark dropped as older than its watermark (they never reached cepagg), from
    the progress reports of the micro-batches (``progress``: the query's
    :class:`cepagg.spark.progress.BatchLines`)."""
    if progress.dropped:
        print(f"cepagg: Spark dropped {progress.dropped} event(s) older than its watermark{_in_query(name)} "
              f"(later than the delay of {delay}); raise {option} to keep them", file=sys.stderr)


def _in_query(name: str | None) -> str:
    return f" in query {name}" if name else ""


def _tell_rejected(args: argparse.Namespace) -> None:
    """Where a stream's bad rows went (``--reject``; under ``--follow`` one file per input file
    with bad rows)."""
    if args.reject and args.follow:
        from .spark.sources import reject_files

        written = reject_files(args.events, args.format or "", args.reject)
        print(f"cepagg: {sum(map(_rows_in, written))} bad row(s) of the input written to {', '.join(written)}"
              if written else "cepagg: no bad row in the input (no reject file written)", file=sys.stderr)
    elif args.reject and os.path.exists(args.reject):
        print(f"cepagg: {_rows_in(args.reject)} bad row(s) of the input written to {args.reject}", file=sys.stderr)


#: a Spark interval: "10 seconds", "1 minute 30 seconds", "interval 2 hours", "500 milliseconds"
_SPARK_INTERVAL = re.compile(r"\s*(interval\s+)?([+-]?\d+(\.\d+)?\s*(year|month|week|day|hour|minute|second|"
                             r"millisecond|microsecond)s?\s*)+", re.IGNORECASE)


def _spark_interval(option: str, value: str, time_unit: str | None) -> str:
    """``--delay`` or ``--trigger`` as an interval Spark parses. A number with a unit of the one
    table of time units (:data:`cepagg.units.UNIT_NAMES`, as ``--slack`` and queries take:
    ``5s``, ``2 m``, ``250 ms``) becomes milliseconds; a bare number is in the stream's
    ``time_unit`` (None: refused, as for the trigger, a wall-clock interval); Spark's own forms
    (``1 minute 30 seconds``, ``interval 2 hours``) pass as written. A negative one is refused."""
    from .order.cli import parse_span

    if re.fullmatch(r"\s*\d+\s*", value) and time_unit is None:
        raise UsageError(f"stream: {option} {value!r}: give a unit, e.g. '{value.strip()} seconds'")
    try:
        return f"{parse_span(value, time_unit or 'ms') * TIME_UNITS_MS[time_unit or 'ms']} milliseconds"
    except UsageError:
        if _SPARK_INTERVAL.fullmatch(value) and "-" not in value:
            return value
    raise UsageError(f"stream: {option} {value!r}: expected a duration such as '10 seconds', '10s', "
                     "'500 ms' or '1 minute 30 seconds'")


def _check_stream_options(args: argparse.Namespace) -> None:
    """Refuse, before Spark starts, stream options Spark would fail on with a traceback (an
    interval it cannot parse) or take for something else (a rate or batch size not above 0: no
    limit, or a stream that never advances). ``--delay`` and ``--trigger`` are rewritten as
    intervals Spark parses (:func:`_spark_interval`)."""
    args.delay = _spark_interval("--delay", args.delay, args.time_unit)
    args.trigger = _spark_interval("--trigger", args.trigger, None)
    if args.rate is not None and not args.rate > 0:
        raise UsageError(f"stream: --rate {args.rate:g}: give a positive number of events per second")
    if args.events_per_batch is not None and args.events_per_batch < 1:
        raise UsageError(f"stream: --events-per-batch {args.events_per_batch}: give a positive number")


def _follow_until_interrupted(running, checkpoint: str | None, ctrl_c: _CtrlC | None = None) -> bool:
    """Follow the running streaming queries (:func:`cepagg.spark.streaming.follow`) until they
    end or the user presses Ctrl-C (``ctrl_c``: pressed already while they started); on Ctrl-C
    stop them after the micro-batch in progress (pyspark's own handler would cancel it: Spark's
    error traces), say what the output holds, and return True, so that the run still reports
    its late events and where its results are. SIGTERM (:class:`_Terminated`) stops them at
    once and is raised again: the run ends as ``cepagg run`` does ("terminated", exit 143). A
    query that fails stops the others, and is raised once every query's last micro-batches
    are reported (also one that failed while the others were waited for at a Ctrl-C)."""
    from .spark.streaming import follow

    ctrl_c = ctrl_c or _CtrlC()
    with ctrl_c.answering():
        return _follow(running, checkpoint, ctrl_c, follow)


def _follow(running, checkpoint: str | None, ctrl_c: _CtrlC, follow) -> bool:
    try:
        follow(running, interrupted=ctrl_c.__bool__)
        return False
    except _Terminated:  # (a subclass of KeyboardInterrupt: caught first)
        for query, _ in running:
            query.stop()
        raise
    except KeyboardInterrupt:
        print("cepagg: stopping after the micro-batch in progress (Ctrl-C again to stop at once) ...",
              file=sys.stderr, flush=True)
        for query, progress in running:  # (a batch stopped midway: Spark logs its aborted tasks)
            waited = 0.0
            while waited < 120 and query.isActive and query.status.get("isTriggerActive"):
                time.sleep(0.2)
                waited += 0.2
            query.stop()
            if progress is not None:  # the lines of the batches finished meanwhile
                progress(query)
        failed = next((q.exception() for q, _ in running if q.exception() is not None), None)
        if failed is not None:  # (it failed while the others were waited for: a failure, not a stop)
            raise failed
        print("cepagg: stopped (Ctrl-C); the output holds every finished micro-batch"
              + ("; run the same command again to go on from the checkpoint" if checkpoint else ""),
              file=sys.stderr)
        return True
    except Exception:  # a query failed
        for query, progress in running:
            with suppress(Exception):  # (stopping the failed one again raises nothing new)
                query.stop()
            if progress is not None:
                progress(query)
        raise


def _committed(checkpoint: str | None) -> bool:
    """Whether a streaming query committed a micro-batch into ``checkpoint`` (Spark's state
    store cannot be read before: a run stopped in its first batch has no late events to count)."""
    commits = os.path.join(checkpoint, "commits") if checkpoint else None
    return bool(commits and os.path.isdir(commits) and any(n.isdigit() for n in os.listdir(commits)))


#: the end of the results line for a query whose values are revised as events come (Update mode)
_REVISED = ("; a WITHIN-alone total is revised as events come: each micro-batch's revised values are in "
            "batch=N folders with a revision number, the highest per group is current "
            "(cepagg.spark.streaming.read_latest nets them)")


def _revised(query: str, time_unit: str) -> bool:
    """Whether a streaming query writes revisions (Spark's Update mode, see
    :func:`cepagg.spark.streaming.start`): an aggregate over WITHIN alone."""
    q = compile_query(query, time_unit=time_unit)
    return q.mode == "total" and not q.returns_matches


def _check_stream_out(args: argparse.Namespace) -> None:
    """``--out`` names the directory the files are written to: needed for a file format, and
    refused with ``--out-format console`` (the rows are printed; nothing would be written there)."""
    if args.out_format == "console" and args.out is not None:
        raise UsageError("stream: --out-format console prints the rows; --out would not be written (drop it)")
    if args.out_format != "console" and args.out is None:
        raise UsageError(f"stream: --out-format {args.out_format} needs --out DIR (where the files are written)")


def _results_line(args: argparse.Namespace, detail: str = "") -> None:
    """The run's last line: where the results are, or nothing for console output (the rows
    were printed)."""
    if args.out is not None:
        print(f"cepagg: results in {args.out}{detail}", file=sys.stderr)


def _rows_in(reject_path: str) -> int:
    """The rows of a reject file (the stream's source writes it in Spark's workers, so the count
    is read back from the file)."""
    from .output import output_format

    if output_format(reject_path) == "csv":
        import pyarrow.csv as pcsv

        return pcsv.read_csv(reject_path).num_rows
    with open(reject_path, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def _stream_ordered(args: argparse.Namespace, spark, df, text: str, ctrl_c: _CtrlC) -> int:
    """``cepagg stream --order``: the ordering layer on Spark (:mod:`cepagg.spark.order`);
    ``ctrl_c`` answers Ctrl-C (:class:`_CtrlC`)."""
    from .order import OrderConfig
    from .order.cli import parse_span
    from .spark.order import late_count, run_ordered_to_end, start_ordered
    from .spark.progress import BatchLines

    slack = parse_span(args.slack, args.time_unit, "--slack")
    lateness = parse_span(args.lateness, args.time_unit, "--lateness")
    if args.punctuate not in (None, "in-file"):
        raise UsageError("stream: punctuations come from the input (rows of type __punct__)")
    if args.order == "kslack" and slack is None:
        raise UsageError("stream: --order kslack needs --slack K")
    if args.order == "kslack" and args.clock == "global":
        # K-slack with one clock for the stream is Spark's own watermark with delay K
        from .spark.streaming import run_to_end, start

        delay = f"{slack * TIME_UNITS_MS[args.time_unit]} milliseconds"
        options = dict(out=args.out, format=args.out_format, checkpoint=args.checkpoint, delay=delay,
                       time_unit=args.time_unit, engine=args.engine, numbers=args.numbers,
                       on_late="fail" if args.on_late == "fail" else "count")
        interrupted = False
        lines = BatchLines(args.time_unit, finite=not args.follow)
        ctrl_c.check()
        try:
            if args.follow:
                interrupted = _follow_until_interrupted(
                    [(start(df, text, available_now=False, processing_time=args.trigger, count_out=True, **options),
                      lines)], args.checkpoint, ctrl_c)
            else:
                run_to_end(df, text, progress=lines, interrupted=ctrl_c.__bool__, **options)
        except Exception:  # (a failed query: what Spark dropped before is still said)
            _tell_dropped(None, lines, delay, "--slack")
            raise
        _tell_late(spark, None, args.checkpoint, lines, delay, "--slack")
        _results_line(args, f" (K-slack on Spark's watermark, delay {delay})"
                      + (_REVISED if _revised(text, args.time_unit) else ""))
        return 130 if interrupted else 0
    if args.clock == "global":
        raise UsageError("stream: --clock global exists for kslack only (Spark's watermark)")
    policy = {"count": "drop"}.get(args.on_late, args.on_late)
    config = OrderConfig(args.order, slack=slack, lateness=lateness, clock="key", on_late=policy,
                         numbers=args.numbers)
    options = dict(out=args.out, format=args.out_format, checkpoint=args.checkpoint, late_out=args.late_out,
                   time_unit=args.time_unit, engine=args.engine)
    interrupted = False
    ctrl_c.check()
    if args.follow:
        interrupted = _follow_until_interrupted(
            [(start_ordered(df, text, config, available_now=False, processing_time=args.trigger, count_out=True,
                            **options), BatchLines(args.time_unit, own_clocks=True))], args.checkpoint, ctrl_c)
    else:
        run_ordered_to_end(df, text, config, progress=BatchLines(args.time_unit, finite=True, own_clocks=True),
                           interrupted=ctrl_c.__bool__, **options)
    if _committed(args.checkpoint):
        count, samples = late_count(spark, args.checkpoint)
        if count:
            print(f"cepagg: {count} late event(s) ({policy}); e.g. {samples[:3]}", file=sys.stderr)
    if args.out is not None:
        print(f"cepagg: output rows (with kind, revision) in {args.out}; net them with "
              f"cepagg.spark.streaming.read_latest", file=sys.stderr)
    return 130 if interrupted else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import main as demo_main

    return demo_main(args)


def cmd_warmup(args: argparse.Namespace) -> int:
    from .engines.kernels import WARMUP_SECONDS, warm

    print(f"cepagg: compiling the engines' kernels once per install, ~{WARMUP_SECONDS} s "
          f"(both engines in parallel) ...", file=sys.stderr, flush=True)
    seconds = warm(log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"cepagg: kernels ready ({seconds:.0f} s); later runs and Spark workers on this machine load them",
          file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cepagg", description=(
        "Complex event analytics: aggregate pattern matches without constructing them."))
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_run_command, _add_stream_command, _add_check_command, _add_explain_command,
                _add_cube_command):
        add(sub)
    from .bench import add_parser as add_bench_parser

    add_bench_parser(sub)
    _add_demo_command(sub)
    _add_warmup_command(sub)
    return parser


def _add_run_command(sub) -> None:
    from .order.cli import add_order_args

    p = sub.add_parser("run", help="evaluate a query over an events file (on Spark, local mode by default)")
    _add_query_args(p)
    _add_event_args(p)
    _add_engine_arg(p)
    p.add_argument("--out", default="-", help="output file (.csv, .jsonl, .parquet) or - for a table")
    p.add_argument("--match-format", choices=["long", "wide"],
                   help="matches: one row per matched event (long, default) or one row per match with a "
                        "list of events per variable (wide; .jsonl or .parquet)")
    p.add_argument("--max-matches", type=int, metavar="N", help="matches: stop after N matches")
    _add_spark_args(p)
    p.add_argument("--no-spark", action="store_true", help="run the engine in this process, without Spark")
    _add_numbers_arg(p)
    add_order_args(p, spark=False)
    p.set_defaults(func=cmd_run)


def _add_stream_command(sub) -> None:
    from .order.cli import add_order_args

    p = sub.add_parser("stream", help="run a query as a Structured Streaming job over an events file")
    _add_query_args(p)
    _add_event_args(p)
    p.add_argument("--rate", type=float, help="replay at this many events per second")
    p.add_argument("--events-per-batch", type=int, help="cut micro-batches at this many events")
    p.add_argument("--delay", default="0 seconds", help="allowed lateness (watermark delay): e.g. 10s, 500 ms, "
                   "2 min, or a number in the stream's time unit (default 0 seconds)")
    p.add_argument("--on-late", choices=["count", "drop", "output", "fail"], default="count",
                   help="late events: count (= drop), output (with --order: to --late-out), fail")
    p.add_argument("--late-out", help="with --order and --on-late output: directory for late events "
                                      "(default OUT/_late)")
    p.add_argument("--follow", action="store_true", help="keep running (no end of input)")
    p.add_argument("--trigger", default="1 second", help="micro-batch interval with --follow: e.g. 1s, 500 ms "
                   "(default 1 second)")
    _add_engine_arg(p)
    p.add_argument("--out", help="output directory (not with --out-format console)")
    p.add_argument("--out-format", default="parquet", choices=["parquet", "csv", "json", "console"],
                   help="format of the files written to --out (default parquet; json: JSON Lines), or console: "
                        "print each micro-batch's rows")
    p.add_argument("--checkpoint", help="checkpoint directory (recovery after a crash)")
    p.add_argument("--verbose", action="store_true",
                   help="also show the lines pyspark's streaming Python workers print for themselves")
    _add_numbers_arg(p)
    _add_spark_args(p)
    add_order_args(p, spark=True)
    p.set_defaults(func=cmd_stream)


def _add_check_command(sub) -> None:
    p = sub.add_parser("check", help="parse and check a query, print its normalised form")
    _add_query_args(p)
    p.add_argument("--schema", help="attribute types of the events, to check attribute names")
    p.set_defaults(func=cmd_check)


def _add_explain_command(sub) -> None:
    from .cube.chase import STRATEGIES

    p = sub.add_parser("explain", help="show what will run for a query and why")
    _add_query_args(p)
    _add_engine_arg(p)
    _add_numbers_arg(p)
    p.add_argument("--cube", action="store_true", help="the workload as an E-Cube: its refinement hierarchy and "
                   "the reuse plan with estimated costs (see cepagg cube)")
    p.add_argument("--strategy", choices=STRATEGIES, help="with --cube: the strategy to show (default chase)")
    p.set_defaults(func=cmd_explain)


def _add_cube_command(sub) -> None:
    from .cube.cli import add_arguments as add_cube_arguments
    from .cube.cli import cmd_cube

    p = sub.add_parser("cube", help="a workload as an E-Cube: every query's result, computed with reuse "
                                    "across concept and pattern levels")
    _add_query_args(p)
    _add_event_args(p)
    add_cube_arguments(p)
    p.set_defaults(func=cmd_cube)


def _add_demo_command(sub) -> None:
    from .demo import add_arguments as add_demo_arguments

    p = sub.add_parser("demo", help="run three example questions over the 2013 New York flights on Spark")
    add_demo_arguments(p)
    p.set_defaults(func=cmd_demo)


def _add_warmup_command(sub) -> None:
    p = sub.add_parser("warmup", help="compile the engines' kernels now (once per install; ./dev does it)")
    p.set_defaults(func=cmd_warmup)


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``kill PID``), raised in the main thread so that it unwinds as Ctrl-C does: an
    output being written is removed (:func:`cepagg.output.atomic_path`) instead of left behind
    as a hidden temporary file."""


@contextmanager
def _terminate_as_interrupt():
    """While the block runs, SIGTERM raises :class:`_Terminated` (only where its handler is
    still the default, and in the main thread: an application embedding ``main`` keeps its
    own)."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminate(signum, frame):
        raise _Terminated

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    with _terminate_as_interrupt():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a command-line error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"cepagg: {exc}", file=sys.stderr)
        return 2
    except CepaggError as exc:
        print(f"cepagg: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `cepagg explain ... | head -1`: stdout closed before the output ended
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (so that the exit's flush is quiet)
        print("cepagg: output closed before it ended (broken pipe)", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that is missing, not readable or not writable, a full disk, ...
        print(f"cepagg: {exc}", file=sys.stderr)
        return 1
    except _Terminated:
        print("cepagg: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("cepagg: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a cepagg error raised in a Spark worker or data source, wrapped by Spark
        from .errors import raised_in_spark

        raised = raised_in_spark(exc)
        if raised is None:
            raise
        print(f"cepagg: {raised[1]}", file=sys.stderr)
        return 2 if raised[0] == "UsageError" else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
