"""Spark batch results equal the in-process results, whichever way the work is split."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from cepagg.errors import InputError, UsageError
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import split_of
from cepagg.result import Result
from cepagg.runner import run as run_local
from cepagg.spark import run
from generators import random_stream, seeded

pytestmark = pytest.mark.spark

QUERIES = [
    # keyless, split by time
    "RETURN COUNT(*), SUM(B.x), AVG(A.x), MIN(C.x) PATTERN SEQ(A, B, !D, C) WITHIN 6",
    "RETURN COUNT(*), MAX(A.x) PATTERN SEQ(A+, B) WITHIN 5 SLIDE 3",
    "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WITHIN 5 EMIT ON CHANGE",
    "PATTERN SEQ(A a, C c) WHERE a.x < c.x WITHIN 4",
    # keyed: groups, equivalence feeding one group, emit per group
    "RETURN g, COUNT(*), AVG(B.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6",
    "RETURN COUNT(*), MIN(A.x) PATTERN SEQ(A, B, C) WHERE [g] WITHIN 8",
    "RETURN h, COUNT(*) PATTERN SEQ(A, C) WHERE [g, h] GROUP BY h WITHIN 5 SLIDE 2",
    "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 4 EMIT ON CHANGE",
    "PATTERN SEQ(A a, NOT C, B b) WHERE [g] WITHIN 5 RETURN a, b",
    # queries that count positions: events of other types must reach the engine
    "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 6 STRATEGY contiguous",
    "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 3 EVENTS",
    "RETURN COUNT(*), SUM(b.x) PATTERN SEQ(A, b, C) WITHIN 4",
]


def _local_rows(result: Result) -> list[tuple]:
    return result.rows


def _spark_rows(df) -> list[tuple]:
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in df.collect()]


def _match_sets(columns, rows):
    i_m, i_id, i_var = columns.index("match"), columns.index("event_id"), columns.index("var")
    width = columns.index("match")
    found: dict = {}
    for r in rows:
        found.setdefault((r[:width], r[i_m]), set()).add((r[i_var], r[i_id]))
    return sorted(sorted(s) for s in found.values())


@pytest.mark.parametrize("text", QUERIES)
def test_spark_equals_in_process(spark, text):
    rng = seeded(text)
    q = compile_query(text)
    for _ in range(3):
        rows = random_stream(rng, "ABCD", n=40, max_gap=2,
                             attrs={"x": (0, 9), "g": ["u", "v", "w"], "h": ["p", "q"]})
        for i, r in enumerate(rows):
            r["_id"] = i
        batch = EventBatch.from_rows(rows)
        expected = run_local(q, batch)
        df = spark.createDataFrame([(r["_id"], r["type"], r["ts"], r["x"], r["g"], r["h"]) for r in rows],
                                   "_id long, type string, ts long, x long, g string, h string")
        got = _spark_rows(run(df, text))
        if q.returns_matches:
            cols = list(expected.columns)
            assert _match_sets(cols, expected.rows) == _match_sets(cols, [g[:len(cols)] for g in got])
        else:
            diff = expected.diff(Result(expected.columns, got))
            assert not diff, (text, split_of(q), diff)


def test_time_slices_cover_long_streams(spark):
    # many slices: the stream spans far more than the window
    rng = random.Random(5)
    rows = random_stream(rng, "AB", n=300, max_gap=3, attrs={"x": (0, 3)})
    text = "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, !A, B) WITHIN 4"
    expected = run_local(text, EventBatch.from_rows(rows))
    df = spark.createDataFrame([(r["type"], r["ts"], r["x"]) for r in rows], "type string, ts long, x long")
    assert split_of(compile_query(text)).kind == "time"
    assert _spark_rows(run(df, text, parallelism=4)) == expected.rows


def test_timestamps_are_converted(spark):
    from datetime import datetime, timezone

    rows = [("A", datetime(2024, 1, 1, 0, 0, 0, tzinfo=timezone.utc)),
            ("B", datetime(2024, 1, 1, 0, 0, 5, tzinfo=timezone.utc)),
            ("B", datetime(2024, 1, 1, 0, 0, 20, tzinfo=timezone.utc))]
    df = spark.createDataFrame(rows, "kind string, at timestamp")
    out = run(df, "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s", type_column="kind", time_column="at")
    assert _spark_rows(out) == [(1,)]


def test_bad_rows_are_reported_not_dropped(spark, tmp_path):
    df = spark.createDataFrame([("A", 1), (None, 2), ("B", None), ("B", 4)], "type string, ts long")
    with pytest.raises(InputError, match="2 row"):
        run(df, "RETURN COUNT(*) PATTERN SEQ(A, B)").collect()
    out = run(df, "RETURN COUNT(*) PATTERN SEQ(A, B)", on_bad_row="reject", reject_path=str(tmp_path / "bad"))
    assert _spark_rows(out) == [(1,)]
    assert spark.read.parquet(str(tmp_path / "bad")).count() == 2


def test_times_that_are_not_whole_numbers_are_bad_rows_not_cut_or_a_failed_job(spark):
    """A float time 1.5 was cut to 1 without a word; a string time that is no number failed the
    job with Spark's CAST_INVALID_INPUT stack trace."""
    floats = spark.createDataFrame([("A", 1.5), ("B", 2.0)], "type string, ts double")
    with pytest.raises(InputError, match="1 row"):
        run(floats, "RETURN COUNT(*) PATTERN SEQ(A, B)").collect()
    texts = spark.createDataFrame([("A", "1"), ("B", "C3"), ("B", "2")], "type string, ts string")
    with pytest.raises(InputError, match="1 row"):
        run(texts, "RETURN COUNT(*) PATTERN SEQ(A, B)").collect()
    seconds = spark.createDataFrame([("A", "1"), ("B", "2")], "type string, ts string")
    assert _spark_rows(run(seconds, "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1500", input_time_unit="s")) == [(1,)]
    assert _spark_rows(run(seconds, "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 500", input_time_unit="s")) == [(0,)]
    micros = spark.createDataFrame([("A", 1000), ("B", 2000)], "type string, ts long")  # (KeyError 'us' before)
    assert _spark_rows(run(micros, "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 2", input_time_unit="us")) == [(1,)]


@pytest.mark.parametrize("df, options, error, message", [
    (None, {}, TypeError, "df: a Spark DataFrame of events .*not NoneType"),
    ("events.csv", {}, TypeError, "df: a Spark DataFrame of events .*not str"),
    ("frame", {"time_unit": "parsec"}, UsageError, "time_unit='parsec': expected one of ms"),
    ("frame", {"input_time_unit": "parsec"}, UsageError, "input_time_unit='parsec': expected one of ns"),
    ("frame", {"on_bad_row": "ignore"}, UsageError, "on_bad_row='ignore'"),
    ("frame", {"parallelism": 0}, UsageError, "parallelism=0: give a positive number"),
])
def test_bad_arguments_are_named(spark, df, options, error, message):
    """Each raised AttributeError, KeyError or a Spark error, or (parallelism=0, on_bad_row) was
    ignored."""
    if df == "frame":
        df = spark.createDataFrame([("A", 1), ("B", 2)], "type string, ts long")
    with pytest.raises(error, match=message):
        run(df, "RETURN COUNT(*) PATTERN SEQ(A, B)", **options)


def test_nan_and_infinite_values_are_bad_rows(spark):
    """A NaN summed to nan on aseq (and failed the reference); the file readers refuse it."""
    df = spark.createDataFrame([("A", 1, 1.0), ("B", 2, float("nan")), ("B", 3, float("-inf")), ("B", 4, None)],
                               "type string, ts long, x double")
    with pytest.raises(InputError, match="2 row.*NaN or infinite"):
        run(df, "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B)").collect()


def test_counts_are_exact_decimals(spark):
    df = spark.createDataFrame([("A", 1), ("B", 2)], "type string, ts long")
    out = run(df, "RETURN COUNT(*) PATTERN SEQ(A, B)")
    assert str(out.schema["COUNT(*)"].dataType) == "DecimalType(38,0)"


def test_a_units_rows_come_out_as_its_batches_pass():
    """A unit's events arrive in time order, batch after batch: what waits on time (here EMIT
    ON CHANGE values merged over the partitions of a group) is released after each batch, not
    held, with the engine's bookkeeping, until the unit ends."""
    from cepagg.engines import ENGINES
    from cepagg.spark.tasks import drive

    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 5 EMIT ON CHANGE")
    rows = random_stream(seeded("drive"), "AB", n=400, max_gap=2, attrs={"g": ["u", "v", "w"]})
    table = EventBatch.from_rows(rows).sorted().table
    batches = table.to_batches(max_chunksize=50)
    at_finish = []

    class Engine(ENGINES["aseq"]):
        def finish(self, state):
            out = super().finish(state)
            at_finish.extend(out)
            return out

    out = [r for chunk in drive(iter(batches), lambda t: ([], t), lambda unit: Engine(q), lambda o: o)
           for r, _ in chunk]
    expected = ENGINES["reference"](q).run(EventBatch.from_rows(rows))
    assert not expected.diff(Result(expected.columns, out, expected.kinds).sorted())
    assert len(out) > 50 and len(at_finish) <= 5  # only the last batch's last instants wait


def test_cli_run_on_spark_over_an_empty_file_counts_zero(spark, tmp_path, capsys):
    """In-process the count was 0; on Spark the empty table failed with CANNOT_INFER_EMPTY_SCHEMA."""
    from cepagg.cli import main

    events = tmp_path / "e.csv"
    events.write_text("ts,type,x\n")
    out = tmp_path / "out.csv"
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B)", "--events", str(events), "--out", str(out)]) == 0
    assert out.read_text().splitlines() == ["COUNT(*)", "0"]


def test_a_total_without_groups_has_its_row_when_no_event_reaches_a_task(spark):
    """In-process SEQ(C, D) over A and B events counts 0 in one row; on Spark no task ran (no
    event of the query's types) and the result had no row."""
    df = spark.createDataFrame([("A", 1, 1), ("B", 2, 2)], "type string, ts long, x long")
    query = "RETURN COUNT(*), SUM(C.x), MIN(D.x) PATTERN SEQ(C, D) WITHIN 10"
    assert _spark_rows(run(df, query)) == [(0, None, None)]
    assert _spark_rows(run(df, query)) == run_local(query, EventBatch.from_rows(
        [{"type": "A", "ts": 1, "x": 1}, {"type": "B", "ts": 2, "x": 2}])).rows
    assert [tuple(r) for r in run(df, "RETURN COUNT(*) PATTERN C+", numbers="float").collect()] == [(0.0,)]


@pytest.mark.parametrize("text", [
    "PATTERN SEQ(A a, B b) WHERE [`trip id`] AND b.`price ($)` > a.`price ($)` WITHIN 10 "
    "GROUP BY `trip id` RETURN `trip id`, COUNT(*), SUM(b.`price ($)`)",
    "PATTERN SEQ(`odd type`, B) WITHIN 10 RETURN SUM(`odd type`.x)",
])
def test_result_columns_holding_backticks_are_quoted_for_spark(spark, text):
    """The column `SUM(b.`price ($)`)` went into Spark's DDL and column references unescaped:
    PARSE_SYNTAX_ERROR."""
    rows = [{"type": t, "ts": i, "trip id": f"t{i % 2}", "price ($)": i, "x": i}
            for i, t in enumerate(["A", "odd type", "B", "A", "B", "odd type", "B"])]
    df = spark.createDataFrame([(r["type"], r["ts"], r["trip id"], r["price ($)"], r["x"]) for r in rows],
                               "type string, ts long, `trip id` string, `price ($)` long, x long")
    expected = run_local(text, EventBatch.from_rows(rows))
    out = run(df, text)
    assert tuple(out.columns) == expected.columns and expected.rows
    assert _local_rows(expected) == sorted(tuple(int(v) if isinstance(v, Decimal) else v for v in r)
                                           for r in out.collect())
