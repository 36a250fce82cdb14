"""Float mode on Spark: COUNT, SUM and AVG columns are doubles (batch, workload, streaming),
their values within 1e-9 relative of the exact in-process result."""

from __future__ import annotations

import json

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import split_of
from cepagg.result import Result
from cepagg.runner import run as run_local
from cepagg.spark import run, run_workload
from generators import random_stream, seeded

pytestmark = pytest.mark.spark

SCHEMA = "_id long, type string, ts long, x long, g string, h string"


def _rows():
    rows = random_stream(seeded("spark floats"), "ABCD", n=40, max_gap=2,
                         attrs={"x": (0, 9), "g": ["u", "v", "w"], "h": ["p", "q"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    return rows


def _frame(spark, rows):
    return spark.createDataFrame([tuple(r[c] for c in ("_id", "type", "ts", "x", "g", "h")) for r in rows], SCHEMA)


def _check(df, text, rows):
    """``df`` (a float-mode result) has double COUNT/SUM/AVG columns and equals exact mode."""
    q = compile_query(text)
    types = dict(df.dtypes)
    for a in q.aggregates:
        want = "double" if a.func in ("COUNT", "SUM", "AVG") else "bigint"
        assert types[a.column] == want, (text, a.column, types[a.column])
    got = [tuple(r) for r in df.collect()]
    expected = run_local(text, EventBatch.from_rows(rows))
    problems = expected.diff(Result(expected.columns, got))
    assert got and not problems, (text, problems)


def test_run_in_float_mode_gives_doubles_for_every_split(spark):
    rows = _rows()
    df = _frame(spark, rows)
    texts = [
        "RETURN COUNT(*), SUM(B.x), AVG(A.x), MIN(C.x) PATTERN SEQ(A, B, !D, C) WITHIN 6",  # time slices
        "RETURN h, COUNT(*), SUM(C.x) PATTERN SEQ(A, C) WHERE [g, h] GROUP BY h WITHIN 5 SLIDE 2",  # keys merged
        "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B+) WITHIN 4 EMIT ON CHANGE",  # time slices, emit
    ]
    assert [split_of(compile_query(t)).partial for t in texts] == [True, True, False]
    for text in texts:
        _check(run(df, text, numbers="float"), text, rows)


def test_run_workload_in_float_mode(spark):
    rows = _rows()
    texts = {"abc": "RETURN COUNT(*), SUM(B.x), MAX(C.x) PATTERN SEQ(A, B, C) WITHIN 6",
             "per_g": "RETURN g, COUNT(*), AVG(B.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 4 SLIDE 2",
             "trend": "RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 6"}  # greta: a job of its own
    frames = run_workload(_frame(spark, rows), list(texts.values()), names=list(texts), numbers="float")
    for name, text in texts.items():
        _check(frames[name], text, rows)


def test_cli_stream_in_float_mode_writes_doubles(spark, tmp_path):
    from cepagg.cli import main

    rows = _rows()
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = "RETURN g, COUNT(*), SUM(A.x), MAX(B.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3"
    out = tmp_path / "out"
    assert main(["stream", "-q", text, "--events", str(events), "--out", str(out), "--checkpoint",
                 str(tmp_path / "chk"), "--events-per-batch", "15", "--numbers", "float"]) == 0
    _check(spark.read.parquet(str(out)).orderBy("g", "window_start"), text, rows)


def test_cli_run_on_spark_in_float_mode_writes_doubles(spark, tmp_path):
    from cepagg.cli import main

    rows = _rows()
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = "RETURN h, COUNT(*), AVG(C.x), MIN(C.x) PATTERN SEQ(A, C) WHERE [g, h] GROUP BY h WITHIN 5"
    out = tmp_path / "out.parquet"
    assert main(["run", "-q", text, "--events", str(events), "--out", str(out), "--numbers", "float"]) == 0
    _check(spark.read.parquet(str(out)), text, rows)
