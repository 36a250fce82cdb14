"""Nested queries on Spark: planned on ``neel`` like any query, run by the batch and workload
drivers through the plan, with the reference's rows (keyed: split by key; keyless: time slices
whose partial rows are merged)."""

from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal

import pytest

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.lang.workload import compile_workload
from cepagg.plan import plan
from cepagg.result import Result
from cepagg.spark import run, run_workload
from generators import random_stream

pytestmark = pytest.mark.spark

QUERIES = [
    "RETURN g, COUNT(*), SUM(a.x) PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [g] GROUP BY g WITHIN 6",
    "RETURN COUNT(*), MAX(b.x) PATTERN SEQ(A a, AND(B b, C c), D d) WITHIN 6",
    "RETURN COUNT(*) PATTERN SEQ(A a, NOT AND(B, C), D d) WITHIN 5 SLIDE 2",
]

WORKLOAD = """
-- name: nested_or
RETURN g, COUNT(*) PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [g] GROUP BY g WITHIN 6
---
-- name: flat
RETURN COUNT(*) PATTERN SEQ(A, B, D) WITHIN 6
"""


def _rows(df) -> list[tuple]:
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in df.collect()]


def _frame(spark, rows):
    return spark.createDataFrame([(r["type"], r["ts"], r["x"], r["g"]) for r in rows],
                                 "type string, ts long, x long, g string")


def test_nested_queries_on_spark_equal_the_reference(spark):
    rng = random.Random(17)
    rows = random_stream(rng, "ABCD", n=80, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v", "w"]})
    batch = EventBatch.from_rows(rows)
    df = _frame(spark, rows)
    for text in QUERIES:
        q = compile_query(text)
        assert plan(q).engine == "neel"
        expected = ENGINES["reference"](q).run(batch)
        got = _rows(run(df, text, parallelism=3))
        diff = expected.diff(Result(expected.columns, got))
        assert not diff, (text, diff)


def test_nested_query_in_a_workload(spark):
    rows = random_stream(random.Random(19), "ABCD", n=60, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v"]})
    batch = EventBatch.from_rows(rows)
    got = run_workload(_frame(spark, rows), WORKLOAD, parallelism=2)
    named = compile_workload(WORKLOAD, schema=batch.attribute_kinds())
    assert [plan(q).engine for _, q in named] == ["neel", "aseq"]
    for name, q in named:
        expected = ENGINES["reference"](q).run(batch)
        diff = expected.diff(Result(expected.columns, _rows(got[name])))
        assert not diff, (name, diff)


SHARING = """
-- name: flat_keyed
RETURN g, COUNT(*) PATTERN SEQ(A a, B b, D d) WHERE [g] GROUP BY g WITHIN 6
---
-- name: or_keyed
RETURN g, COUNT(*), SUM(a.x) PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [g] GROUP BY g WITHIN 6
---
-- name: flat
RETURN COUNT(*) PATTERN SEQ(A, C, D) WITHIN 5 SLIDE 2
---
-- name: and
RETURN COUNT(*), MAX(b.x) PATTERN SEQ(A a, AND(B b, C c), D d) WITHIN 5 SLIDE 2
"""


def test_nested_terms_share_a_job_with_flat_queries(spark):
    """Keyed (split by key) and keyless (time slices, partial rows merged): each nested query
    runs in the same job as the flat query of its split, its fitting terms in their shared plan."""
    from cepagg.plan import plan_workload

    rows = random_stream(random.Random(23), "ABCD", n=80, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v"]})
    batch = EventBatch.from_rows(rows)
    named = compile_workload(SHARING, schema=batch.attribute_kinds())
    wp = plan_workload([q for _, q in named], [n for n, _ in named])
    assert [m for _, m in wp.shared_jobs()] == [[0, 1], [2, 3]] and len(wp.shared_terms) == 3
    got = run_workload(_frame(spark, rows), SHARING, parallelism=2)
    for name, q in named:
        expected = ENGINES["reference"](q).run(batch)
        diff = expected.diff(Result(expected.columns, _rows(got[name])))
        assert not diff, (name, diff)


MATCH_QUERIES = [
    "PATTERN SEQ(A a, NOT AND(B, C), D d) WHERE [g] WITHIN 5",
    "RETURN a, c PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 6 SLIDE 3",
    "PATTERN SEQ(A a, NOT SEQ(B, C), D d) WITHIN 6",
]


def _match_signatures(columns, rows) -> Counter:
    """Matches as a multiset of (group and window cells, {(var, pos, type, ts, x)}): Spark
    numbers events and matches its own way."""
    cols = list(columns)
    m = cols.index("match")
    found: dict[tuple, set] = {}
    for r in rows:
        d = dict(zip(cols, r))
        found.setdefault(tuple(r[:m + 1]), set()).add((d["var"], d["pos"], d["type"], d["ts"], d.get("x")))
    return Counter((k[:-1], frozenset(v)) for k, v in found.items())


def test_nested_match_queries_on_spark_equal_the_reference(spark):
    """Nested queries returning matches run on ``neel`` (the union of their disjuncts on the
    match engines) by key and by time slices, with the reference's matches."""
    rows = random_stream(random.Random(23), "ABCD", n=60, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v"]})
    batch = EventBatch.from_rows(rows)
    x = {e["_id"]: e["x"] for e in batch.table.to_pylist()}
    for text in MATCH_QUERIES:
        q = compile_query(text)
        assert plan(q).engine == "neel"
        expected = ENGINES["reference"](q).run(batch)
        cols = list(expected.columns)
        want = [r + (x[r[cols.index("event_id")]],) for r in expected.rows]
        df = run(_frame(spark, rows), text, parallelism=3)
        got_cols = df.columns
        got = [tuple(r) for r in df.collect()]
        assert _match_signatures(cols + ["x"], want) == _match_signatures(got_cols, got), text
