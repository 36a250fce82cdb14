"""Structured Streaming results equal the in-process results (out-of-order files, late rows)."""

from __future__ import annotations

import json
import os
import random
from decimal import Decimal

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.runner import run as run_local
from cepagg.spark.sources import END_TS_MS, END_TYPE
from cepagg.spark.streaming import dropped_by_watermark, late_events, read_latest, start
from generators import random_stream, seeded

pytestmark = pytest.mark.spark

SCHEMA = "_id long, type string, ts long, x long, g string"


def _write_files(base, rows, rng, pieces=3, end=True):
    os.makedirs(base, exist_ok=True)
    size = -(-len(rows) // pieces)
    for k in range(pieces):
        chunk = list(rows[k * size:(k + 1) * size])
        rng.shuffle(chunk)  # out of order within a micro-batch
        if end and k == pieces - 1:
            chunk.append({"_id": -1, "type": END_TYPE, "ts": END_TS_MS, "x": None, "g": None})
        path = os.path.join(base, f"part{k}.json")
        with open(path, "w") as f:
            for r in chunk:
                f.write(json.dumps(r) + "\n")
        os.utime(path, (1000 + k, 1000 + k))  # the file source orders files by modification time


def _rows(df):
    return sorted(tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in df.collect())


@pytest.mark.parametrize("text", [
    "RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3",
    "RETURN COUNT(*), MAX(B.x) PATTERN SEQ(A, !C, B) WITHIN 5 EMIT ON CHANGE",
    "RETURN g, COUNT(*), AVG(B.x) PATTERN SEQ(A, B, !C) WHERE [g] GROUP BY g WITHIN 6",
    # nested patterns, planned on neel
    "RETURN g, COUNT(*), SUM(a.x) PATTERN SEQ(A a, OR(B b, C c), B d) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3",
    "RETURN COUNT(*) PATTERN SEQ(A a, NOT AND(B, C), A d) WITHIN 5",
])
def test_stream_equals_in_process(spark, tmp_path, text):
    rng = seeded(text)
    rows = random_stream(rng, "ABC", n=45, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    _write_files(str(tmp_path / "in"), rows, rng)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    q = start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), delay="20 milliseconds")
    q.awaitTermination()
    expected = sorted(run_local(text, EventBatch.from_rows(rows), engine="reference").rows)
    if compile_query(text).mode == "total":
        got = _rows(read_latest(spark, str(tmp_path / "out"), text))
    else:
        got = _rows(spark.read.parquet(str(tmp_path / "out")))
    assert got == expected


def test_rows_later_than_the_delay_are_counted(spark, tmp_path):
    # the last file holds an event far older than the watermark: Spark drops it, cepagg reports it
    rows = [{"_id": i, "type": t, "ts": ts, "x": 1, "g": "u"} for i, (t, ts) in
            enumerate([("A", 10), ("B", 20), ("A", 100), ("B", 110)])]
    later = [{"_id": 8, "type": "A", "ts": 200, "x": 1, "g": "u"}]  # its batch closes time up to 104
    late = [{"_id": 9, "type": "B", "ts": 15, "x": 1, "g": "u"}]
    base = str(tmp_path / "in")
    os.makedirs(base)
    end = [{"_id": -1, "type": END_TYPE, "ts": END_TS_MS, "x": None, "g": None}]
    for k, chunk in enumerate([rows, later, late, end]):
        path = os.path.join(base, f"p{k}.json")
        with open(path, "w") as f:
            for r in chunk:
                f.write(json.dumps(r) + "\n")
        os.utime(path, (1000 + k, 1000 + k))
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(base)
    text = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 50 SLIDE 50"
    q = start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), delay="5 milliseconds")
    q.awaitTermination()
    count, samples = late_events(spark, str(tmp_path / "chk"))
    assert count + dropped_by_watermark(q) == 1  # reported, by cepagg or by Spark
    assert count == 0 or samples[0]["ts"] == 15
    assert _rows(spark.read.parquet(str(tmp_path / "out"))) == [(0, 50, 1), (100, 150, 1)]


def test_ungrouped_query_over_partitions_reports_one_row(spark, tmp_path):
    rng = random.Random(4)
    rows = random_stream(rng, "AB", n=40, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v", "w"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    _write_files(str(tmp_path / "in"), rows, rng)
    text = "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 6 SLIDE 6"
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    q = start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), delay="20 milliseconds")
    q.awaitTermination()
    assert _rows(spark.read.parquet(str(tmp_path / "out"))) == sorted(run_local(text, EventBatch.from_rows(rows)).rows)


def test_attributes_named_with_an_underscore_survive_the_operator(spark, tmp_path):
    """Spark renames pandas columns starting with "_" by position; an attribute such as ``_w``
    (or ``_id_``, what the cepagg source names a file's own ``_id``) must still arrive."""
    rng = random.Random(9)
    rows = random_stream(rng, "AB", n=30, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"], "_w": (0, 5)})
    for i, r in enumerate(rows):
        r["_id"] = i
    _write_files(str(tmp_path / "in"), rows, rng)
    text = "RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3"
    df = (spark.readStream.schema(SCHEMA + ", _w long").option("maxFilesPerTrigger", 1)
          .json(str(tmp_path / "in")))
    q = start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), delay="20 milliseconds")
    q.awaitTermination()
    expected = sorted(run_local(text, EventBatch.from_rows(rows), engine="reference").rows)
    assert _rows(spark.read.parquet(str(tmp_path / "out"))) == expected


def test_attributes_whose_names_are_no_python_identifier_survive_the_operator(spark, tmp_path):
    """Spark renames by position the pandas columns whose names are no Python identifier
    (``trip id``) or a keyword (``class``): the stream stopped with KeyError "['trip id'] not in
    index" inside the operator."""
    rng = random.Random(9)
    rows = random_stream(rng, "AB", n=30, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"], "class": (0, 5),
                                                          "trip id": (0, 5)})
    for i, r in enumerate(rows):
        r["_id"] = i
    _write_files(str(tmp_path / "in"), rows, rng)
    text = "RETURN g, COUNT(*), SUM(A.class) PATTERN SEQ(A, B) WHERE [g] AND B.class > 1 GROUP BY g WITHIN 6 SLIDE 3"
    df = (spark.readStream.schema(SCHEMA + ", class long, `trip id` long").option("maxFilesPerTrigger", 1)
          .json(str(tmp_path / "in")))
    q = start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), delay="20 milliseconds")
    q.awaitTermination()
    expected = sorted(run_local(text, EventBatch.from_rows(rows), engine="reference").rows)
    assert expected and _rows(spark.read.parquet(str(tmp_path / "out"))) == expected


def test_a_workload_streams_one_query_each(spark, tmp_path):
    from cepagg.spark import start_workload

    rng = random.Random(21)
    rows = random_stream(rng, "ABC", n=40, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    _write_files(str(tmp_path / "in"), rows, rng)
    texts = {"pairs": "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3",
             "trends": "RETURN COUNT(*), MAX(B.x) PATTERN SEQ(A, B+, C) WITHIN 6 SLIDE 6"}
    workload = "\n---\n".join(f"-- name: {n}\n{t}" for n, t in texts.items())
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    running = start_workload(df, workload, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"),
                             delay="20 milliseconds")
    assert list(running) == list(texts)
    for q in running.values():
        q.awaitTermination()
    for name, text in texts.items():
        expected = sorted(run_local(text, EventBatch.from_rows(rows), engine="reference").rows)
        assert _rows(spark.read.parquet(str(tmp_path / "out" / name))) == expected, name


@pytest.mark.parametrize("bad, message", [
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE a.x > NEXT(b).x WITHIN 5",
     "In query 'bad': NEXT(b) is only meaningful for a variable inside a Kleene pattern (b+). Line 5, Col 51."),
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE a.nope > 1 WITHIN 5", "In query 'bad': Unknown attribute 'nope'"),
])
def test_cli_stream_refuses_a_bad_query_of_a_workload_before_any_query_runs(spark, tmp_path, capsys, bad, message):
    """The queries before the bad one ran to the end of the input first, and the error named
    neither the query nor its line in the file."""
    from cepagg.cli import main

    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps({"type": t, "ts": i, "x": i}) + "\n" for i, t in enumerate("ABAB")))
    workload = tmp_path / "workload.cep"
    workload.write_text(f"-- name: good\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5\n---\n-- name: bad\n{bad}\n")
    out = tmp_path / "out"
    assert main(["stream", str(workload), "--events", str(path), "--out", str(out),
                 "--checkpoint", str(tmp_path / "chk")]) == 1
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_cli_streams_a_workload_file_to_one_folder_per_query(spark, tmp_path):
    from cepagg.cli import main

    rng = random.Random(4)
    rows = random_stream(rng, "ABC", n=30, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    path = tmp_path / "events.jsonl"
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    texts = {"pairs": "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3",
             "negated": "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WITHIN 5 SLIDE 5"}
    workload = tmp_path / "workload.cep"
    workload.write_text("\n;;\n".join(f"-- name: {n}\n{t}" for n, t in texts.items()))
    out = tmp_path / "out"
    assert main(["stream", str(workload), "--events", str(path), "--out", str(out),
                 "--checkpoint", str(tmp_path / "chk"), "--events-per-batch", "10"]) == 0
    for name, text in texts.items():
        expected = sorted(run_local(text, EventBatch.from_rows(rows), engine="reference").rows)
        assert _rows(spark.read.parquet(str(out / name))) == expected, name


def test_a_checkpoint_begun_without_the_state_changelog_is_resumed_with_it(spark, tmp_path):
    """The session writes the state store's changelog at each commit; a checkpoint written by a
    run without it (Spark's default) resumes with it and gives the rows of one run."""
    key = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
    text = "RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3"
    rng = seeded(text + " changelog")
    rows = random_stream(rng, "ABC", n=60, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    _write_files(str(tmp_path / "staged"), rows, rng)
    (tmp_path / "in").mkdir()

    def arrive(*names):  # (a rename keeps the modification time the file source orders by)
        for name in names:
            os.rename(tmp_path / "staged" / name, tmp_path / "in" / name)

    def run():
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
        start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"),
              delay="20 milliseconds").awaitTermination()

    before = spark.conf.get(key, None)
    try:
        spark.conf.set(key, "false")
        arrive("part0.json", "part1.json")
        run()
        assert not list((tmp_path / "chk" / "state").rglob("*.changelog"))
        spark.conf.set(key, "true")
        arrive("part2.json")
        run()
        assert list((tmp_path / "chk" / "state").rglob("*.changelog"))
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    expected = sorted(run_local(text, EventBatch.from_rows(rows), engine="reference").rows)
    assert _rows(spark.read.parquet(str(tmp_path / "out"))) == expected
