"""The demo job: a generated stock stream and a few queries from the seeds, as result tables."""

from __future__ import annotations

import argparse
import time

from .datasets.stock import generate
from .lang import compile_query
from .plan import plan
from .result import format_table

QUERIES = [
    ("GRETA Q1: down-trends per sector, 10 s windows sliding every 5 s",
     """RETURN sector, COUNT(*), AVG(S.price)
        PATTERN Stock S+
        WHERE [company, sector] AND S.price > NEXT(S).price
        GROUP-BY sector WITHIN 10 seconds SLIDE 5 seconds"""),
    ("A-Seq: C0 then C1 then C3 with no C2 in between, within 4 s, per company group",
     """PATTERN SEQ(C0 a, C1 b, !C2, C3 c)
        WITHIN 4 s
        RETURN COUNT(*), SUM(c.volume), MAX(b.price)"""),
    ("RCEP Query 1 (V-shape) on one company, 20 s windows",
     """PATTERN SEQ(a, b+, c)
        WHERE [company] AND company = "C1" AND a.price < b.price AND b.price < NEXT(b).price
              AND c.price < FIRST(b).price
        WITHIN 20 seconds
        RETURN COUNT(*)"""),
]


def main(args: argparse.Namespace | None = None) -> int:
    seed = getattr(args, "seed", 7)
    trends = generate(n_events=400, companies=4, sectors=2, tick_ms=250, seed=seed)
    tickers = generate(n_events=400, companies=4, sectors=2, tick_ms=250, seed=seed, ticker_types=True)
    print(f"cepagg demo: {len(trends)} generated stock ticks (4 companies, 2 sectors, seed {seed})\n")
    for title, text in QUERIES:
        batch = tickers if "C0 a" in text else trends
        q = compile_query(text, schema=batch.attribute_kinds())
        p = plan(q)
        started = time.perf_counter()
        result = p.build().run(batch)
        elapsed = time.perf_counter() - started
        print(f"== {title}")
        print(str(q).replace("\n", "\n   "))
        print(f"-- engine {p.engine}, {elapsed * 1000:.1f} ms")
        print(format_table(result, max_rows=12))
        print()
    return 0
