"""The ordering layer in Structured Streaming: disordered files, micro-batches, per-key clocks.

Each case writes a disordered arrival (rows in arrival order, ``_id`` = arrival position, with
punctuation rows and the end-of-stream event) as JSON files read one per micro-batch, runs a
strategy, nets the output with ``read_latest`` and compares it with the reference evaluator on
the same events in time order.
"""

from __future__ import annotations

import json
import os
import random
from decimal import Decimal

import pytest

from arrivals import ORDER_CASES, arrival_rows, expected_of
from cepagg.lang import compile_query
from cepagg.order import OrderConfig, same_result
from cepagg.order.disorder import disorder
from cepagg.result import Result
from cepagg.spark.order import late_count, start_ordered
from cepagg.spark.sources import END_TS_MS, END_TYPE
from cepagg.spark.streaming import dropped_by_watermark, late_events, read_latest, start
from generators import random_stream, seeded

pytestmark = pytest.mark.spark

SCHEMA = "_id long, type string, ts long, x long, g string, punct_type string"


def _write(base, rows, pieces):
    os.makedirs(base, exist_ok=True)
    size = -(-len(rows) // pieces)
    chunks = [rows[k * size:(k + 1) * size] for k in range(pieces)]
    chunks[-1] = chunks[-1] + [{"_id": len(rows), "type": END_TYPE, "ts": END_TS_MS}]
    for k, chunk in enumerate(chunks):
        path = os.path.join(base, f"part{k:02d}.json")
        with open(path, "w") as f:
            for r in chunk:
                f.write(json.dumps(r) + "\n")
        os.utime(path, (1000 + k, 1000 + k))  # the file source orders files by modification time


def _got(spark, path, text):
    q = compile_query(text)
    rows = [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in read_latest(spark, path, text).collect()]
    return Result(q.output_columns, rows)


@pytest.mark.parametrize("strategy,text", ORDER_CASES)
def test_ordered_stream_nets_to_the_reference(spark, tmp_path, strategy, text):
    rng = seeded(text)
    stream = random_stream(rng, "ABC", n=40, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    arr = disorder(stream, rng, fraction=0.4, delay="exp", scale=4, burst_types=("C",), bursts=0.3,
                   punctuate=0.5 if strategy == "conservative" else 0.0, punct="types")
    rows = arrival_rows(arr)
    _write(str(tmp_path / "in"), rows, pieces=4)
    bound = max(arr.lateness())
    config = {"kslack": OrderConfig("kslack", slack=bound), "conservative": OrderConfig("conservative"),
              "aggressive": OrderConfig("aggressive", lateness=bound)}[strategy]
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    q = start_ordered(df, text, config, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), buckets=2)
    q.awaitTermination()
    problems = same_result(compile_query(text), expected_of(text, rows), _got(spark, str(tmp_path / "out"), text))
    assert not problems, problems
    assert late_count(spark, str(tmp_path / "chk"))[0] == 0
    kinds = {r[0] for r in spark.read.parquet(str(tmp_path / "out")).select("kind").distinct().collect()}
    if strategy != "aggressive":
        assert kinds <= {"row", "insert"}  # never revised


def test_per_key_clocks_keep_a_slow_keys_events(spark, tmp_path):
    """Key v's events all arrive 40 time units behind key u's: Spark's global watermark (delay 5)
    drops or counts them as late, per-key K-slack with K = 5 keeps every one."""
    text = "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 10 SLIDE 5"
    rng = random.Random(5)
    fast = [dict(r, g="u") for r in random_stream(rng, "AB", n=30, max_gap=3, attrs={"x": (0, 9)})]
    slow = [dict(r, g="v") for r in random_stream(rng, "AB", n=30, max_gap=3, attrs={"x": (0, 9)})]
    order = sorted([(r["ts"], 0, r) for r in fast] + [(r["ts"] + 40, 1, r) for r in slow], key=lambda x: x[:2])
    rows = [dict(r, _id=i) for i, (_, _, r) in enumerate(order)]
    _write(str(tmp_path / "in"), rows, pieces=5)
    expected = expected_of(text, rows)

    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    q = start_ordered(df, text, OrderConfig("kslack", slack=5), out=str(tmp_path / "out"),
                      checkpoint=str(tmp_path / "chk"), buckets=2)
    q.awaitTermination()
    assert not same_result(compile_query(text), expected, _got(spark, str(tmp_path / "out"), text))
    assert late_count(spark, str(tmp_path / "chk"))[0] == 0

    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in")).drop("punct_type")
    q = start(df, text, out=str(tmp_path / "wm"), checkpoint=str(tmp_path / "chk2"), delay="5 milliseconds", buckets=2)
    q.awaitTermination()
    lost = late_events(spark, str(tmp_path / "chk2"))[0] + dropped_by_watermark(q)
    assert lost > 0  # the global watermark loses v's events


def test_late_events_go_to_the_late_output(spark, tmp_path):
    text = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 50 SLIDE 50"
    rows = [{"_id": i, "type": t, "ts": ts, "x": 1, "g": "u"} for i, (t, ts) in
            enumerate([("A", 10), ("B", 20), ("A", 100), ("B", 110), ("B", 15)])]
    _write(str(tmp_path / "in"), rows, pieces=2)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    q = start_ordered(df, text, OrderConfig("kslack", slack=5, on_late="output"), out=str(tmp_path / "out"),
                      checkpoint=str(tmp_path / "chk"), late_out=str(tmp_path / "late"), buckets=2)
    q.awaitTermination()
    late = [json.loads(r["late"]) for r in spark.read.json(str(tmp_path / "late")).collect()]
    assert [e["ts"] for e in late] == [15]
    assert late_count(spark, str(tmp_path / "chk"))[0] == 1
    assert sorted(_got(spark, str(tmp_path / "out"), text).rows) == [(0, 50, 1), (100, 150, 1)]


def test_late_events_go_to_the_late_output_when_rows_go_to_the_console(spark, tmp_path, capsys):
    """With console output the late events were printed among the rows and --late-out stayed empty."""
    text = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 50 SLIDE 50"
    rows = [{"_id": i, "type": t, "ts": ts, "x": 1, "g": "u"} for i, (t, ts) in
            enumerate([("A", 10), ("B", 20), ("A", 100), ("B", 110), ("B", 15)])]
    _write(str(tmp_path / "in"), rows, pieces=2)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    q = start_ordered(df, text, OrderConfig("kslack", slack=5, on_late="output"), format="console",
                      checkpoint=str(tmp_path / "chk"), late_out=str(tmp_path / "late"), buckets=2)
    q.awaitTermination()
    late = [json.loads(r["late"]) for r in spark.read.json(str(tmp_path / "late")).collect()]
    assert [e["ts"] for e in late] == [15]
    assert "|late" not in capsys.readouterr().out


def test_cli_stream_order_over_the_cepagg_source(spark, tmp_path):
    """``cepagg stream --order aggressive`` over a finite file (arrival = row order) ends by
    itself and its netted output equals the reference; in float mode, as doubles."""
    from cepagg.cli import main

    text = "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 6"
    rng = random.Random(8)
    stream = random_stream(rng, "ABC", n=30, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    arr = disorder(stream, rng, fraction=0.4, delay="uniform", scale=5, burst_types=("C",), bursts=0.3)
    rows = arrival_rows(arr)
    path = tmp_path / "events.jsonl"
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps({k: v for k, v in r.items() if k != "_id"}) + "\n")  # _id = row position
    out = str(tmp_path / "out")
    assert main(["stream", "-q", text, "--events", str(path), "--out", out, "--checkpoint", str(tmp_path / "chk"),
                 "--order", "aggressive", "--lateness", str(max(arr.lateness())), "--events-per-batch", "8",
                 "--numbers", "float"]) == 0
    types = dict(spark.read.parquet(out).dtypes)
    assert types["COUNT(*)"] == types["SUM(B.x)"] == "double"
    assert not same_result(compile_query(text), expected_of(text, rows), _got(spark, out, text))
