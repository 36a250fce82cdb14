"""Partial rows merged on Spark keep exact counts of any size: the number of events behind an
AVG grows like the number of trends (2^n for n falling prices), far past 64 bits."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cepagg.events import EventBatch
from cepagg.runner import run as run_local
from cepagg.spark import run

pytestmark = pytest.mark.spark

QUERY = ("RETURN sector, COUNT(*), AVG(S.price), SUM(S.size) PATTERN Stock S+ "
         "WHERE [company, sector] AND S.price > NEXT(S).price GROUP-BY sector WITHIN 1 minute")


def test_avg_over_more_than_2_to_the_64_events(spark):
    # two companies of one sector, 70 falling prices each: partitions (companies) are not the
    # groups (sectors), so each partition's (sum, count) cells are merged by Spark
    rows = [{"type": "Stock", "ts": 100 * i + c, "company": f"c{c}", "sector": "s",
             "price": 1000.0 - i, "size": i} for c in (1, 2) for i in range(70)]
    expected = run_local(QUERY, EventBatch.from_rows(rows)).rows
    df = spark.createDataFrame([(r["type"], r["ts"], r["company"], r["sector"], r["price"], r["size"])
                                for r in rows],
                               "type string, ts long, company string, sector string, price double, "
                               "size long")
    got = [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in run(df, QUERY).collect()]
    assert expected[0][1] > 2 ** 64
    assert [(g, n, s) for g, n, _, s in got] == [(g, n, s) for g, n, _, s in expected]
    assert got[0][2] == pytest.approx(expected[0][2], rel=1e-12)
