"""Attributes whose names hold a dot (``price.usd`` in a CSV header, back-quoted in a query) on
Spark: a column looked up by its bare name is read as a nested field (``price`` . ``usd``), so
every lookup of a user's column quotes it."""

from __future__ import annotations

import random

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from cepagg.runner import run as run_local
from cepagg.spark import run
from generators import random_stream

pytestmark = pytest.mark.spark

QUERIES = [
    # split by key (the key a dotted name), split by key with partial aggregates merged per group,
    # matches with their events' attributes joined, split by time
    "RETURN `g.x`, COUNT(*), SUM(B.`price.usd`) PATTERN SEQ(A, B) WHERE [`g.x`] GROUP BY `g.x` WITHIN 6",
    "RETURN `h.y`, COUNT(*), MAX(A.`price.usd`) PATTERN SEQ(A, C) WHERE [`g.x`, `h.y`] GROUP BY `h.y` WITHIN 5",
    "PATTERN SEQ(A a, B b) WHERE [`g.x`] AND a.`price.usd` < b.`price.usd` WITHIN 5 RETURN a, b",
    "RETURN COUNT(*), AVG(A.`price.usd`) PATTERN SEQ(A, B) WITHIN 4",
]


def _rows(rng):
    rows = random_stream(rng, "ABC", n=40, max_gap=2, attrs={"p": (0, 9), "g": ["u", "v"], "h": ["p", "q"]})
    return [{"_id": i, "type": r["type"], "ts": r["ts"], "price.usd": r["p"], "g.x": r["g"], "h.y": r["h"]}
            for i, r in enumerate(rows)]


@pytest.mark.parametrize("text", QUERIES)
def test_dotted_attribute_names_on_spark_equal_in_process(spark, text):
    rows = _rows(random.Random(3))
    expected = run_local(text, EventBatch.from_rows([{k: v for k, v in r.items() if k != "_id"} for r in rows]))
    df = spark.createDataFrame([tuple(r.values()) for r in rows],
                               "_id long, type string, ts long, `price.usd` long, `g.x` string, `h.y` string")
    got = [tuple(int(v) if hasattr(v, "as_integer_ratio") and not isinstance(v, float) else v for v in r)
           for r in run(df, text).collect()]
    q = compile_query(text)
    if q.returns_matches:
        width = len(expected.columns)
        assert sorted(r[:width] for r in got) == sorted(expected.rows)
        assert "price.usd" in run(df, text).columns
    else:
        assert not expected.diff(Result(expected.columns, got)), text


def test_cli_run_on_spark_reads_dotted_columns(spark, tmp_path):
    """``cepagg run`` on Spark over a CSV whose header has dotted names, the event type and time
    columns among them."""
    from cepagg.cli import main

    rows = _rows(random.Random(4))
    events = tmp_path / "events.csv"
    events.write_text("ev.type,ev.ts,price.usd,g.x,h.y\n" + "".join(
        f"{r['type']},{r['ts']},{r['price.usd']},{r['g.x']},{r['h.y']}\n" for r in rows))
    text = QUERIES[0]
    out = tmp_path / "out.csv"
    assert main(["run", "-q", text, "--events", str(events), "--type-column", "ev.type", "--time-column", "ev.ts",
                 "--out", str(out)]) == 0
    expected = run_local(text, EventBatch.from_rows([{k: v for k, v in r.items() if k != "_id"} for r in rows]))
    lines = out.read_text().splitlines()
    got = sorted((g, int(n), int(s)) for g, n, s in (line.split(",") for line in lines[1:]))
    assert got == sorted(expected.rows)


def test_cli_stream_buckets_by_a_dotted_key(spark, tmp_path):
    """``cepagg stream`` hashes the query's key to pick a state bucket: by its quoted name."""
    from cepagg.cli import main

    rows = _rows(random.Random(5))
    events = tmp_path / "events.csv"
    events.write_text("type,ts,price.usd,g.x,h.y\n" + "".join(
        f"{r['type']},{r['ts']},{r['price.usd']},{r['g.x']},{r['h.y']}\n" for r in rows))
    text = "RETURN `g.x`, COUNT(*) PATTERN SEQ(A, B) WHERE [`g.x`] GROUP BY `g.x` WITHIN 6 SLIDE 3"
    out = tmp_path / "out"
    assert main(["stream", "-q", text, "--events", str(events), "--out", str(out), "--out-format", "csv",
                 "--checkpoint", str(tmp_path / "chk")]) == 0
    got = sorted((g, int(a), int(b), int(n)) for part in out.glob("part-*.csv")
                 for g, a, b, n in (line.split(",") for line in part.read_text().splitlines()[1:]))
    expected = run_local(text, EventBatch.from_rows([{k: v for k, v in r.items() if k != "_id"} for r in rows]))
    assert got == sorted(expected.rows)
