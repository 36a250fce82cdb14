"""``cepagg stream`` as a user sees it, in a process of its own (so that the CLI starts the JVM):
CSV part files with a header, none of pyspark's worker lines on stderr, one progress line per
micro-batch, the count of rejected rows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cepagg.events import EventBatch
from cepagg.runner import run as run_local
from generators import random_stream

pytestmark = pytest.mark.spark

SRC = str(Path(__file__).resolve().parents[2] / "src")
QUERY = "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3"


def test_cli_stream_writes_csv_with_headers_and_a_line_per_batch(tmp_path):
    import random

    rows = random_stream(random.Random(6), "ABC", n=50, max_gap=3, attrs={"g": ["u", "v"]})
    events = tmp_path / "events.jsonl"
    bad = '{"type": "A", "ts": "not a time"}\n'
    events.write_text("".join(json.dumps(r) + "\n" for r in rows[:20]) + bad
                      + "".join(json.dumps(r) + "\n" for r in rows[20:]))
    out, chk, rejects = tmp_path / "out", tmp_path / "chk", tmp_path / "bad.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "cepagg.cli", "stream", "-q", QUERY, "--events", str(events),
                           "--out", str(out), "--out-format", "csv", "--checkpoint", str(chk),
                           "--events-per-batch", "15", "--master", "local[1]", "--reject", str(rejects)],
                          capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr

    parts = sorted(out.glob("part-*.csv"))
    assert parts
    body = []
    for part in parts:
        lines = part.read_text().splitlines()
        assert lines and lines[0] == "g,window_start,window_end,COUNT(*)", part.name
        body += lines[1:]
    expected = sorted(run_local(QUERY, EventBatch.from_rows(rows)).rows)
    assert sorted((g, int(a), int(b), int(n)) for g, a, b, n in (line.split(",") for line in body)) == expected

    assert f"cepagg: 1 bad row(s) of the input written to {rejects}" in done.stderr
    assert json.loads(rejects.read_text())["ts"] == "not a time"
    assert "TransformWithStateInPandas" not in done.stderr
    assert "Received UDF from JVM" not in done.stderr

    progress = re.findall(r"^cepagg: batch (\d+): (\d+) events? in,(?: end of input,)? (\d+) rows? out, "
                          r"watermark [^,]+, "
                          r"state \d+ rows? / [\d.]+ KB$", done.stderr, re.M)
    batches = sorted(int(name) for name in os.listdir(chk / "commits") if name.isdigit())
    assert [int(b) for b, _, _ in progress] == batches, done.stderr
    assert sum(int(n) for _, n, _ in progress) == len(rows)  # (not the end-of-stream marker)
    assert len(re.findall(r"events? in, end of input,", done.stderr)) == 1, done.stderr
    assert sum(int(n) for _, _, n in progress) == len(expected)


def test_cli_stream_over_a_file_with_a_bad_row_is_one_line(spark, tmp_path, capsys):
    """The stream's source raised the reader's error inside Spark: an AnalysisException with the
    Python traceback of the data source, not the reader's one line."""
    from cepagg.cli import main

    events = tmp_path / "events.csv"
    events.write_text("ts,type,x\n1,A,1\n,B,2\n")
    assert main(["stream", "-q", QUERY.replace("WHERE [g] GROUP BY g", "").replace("g, ", ""),
                 "--events", str(events), "--out-format", "console"]) == 1
    err = capsys.readouterr().err
    assert err == f"cepagg: {events}, row 3: time column 'ts' is empty\n"


def test_cli_stream_to_the_console_needs_no_out_and_names_no_path(spark, tmp_path, capsys):
    """``--out-format console`` required ``--out`` and ended with "results in OUT", a path
    never written (with and without ``--order``)."""
    from cepagg.cli import main

    events = tmp_path / "events.csv"
    events.write_text("type,ts\nA,10\nB,20\nA,100\nB,110\n")
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 50 SLIDE 50", "--events", str(events),
                 "--out-format", "console", "--checkpoint", str(tmp_path / "chk"), "--events-per-batch", "2",
                 "--order", "kslack", "--slack", "5"]) == 0
    out, err = capsys.readouterr()
    assert "COUNT(*)" in out and "| 1 " in out.replace("|1 ", "| 1 "), out
    assert " in None" not in err and "results in" not in err and "output rows" not in err, err


def test_cli_stream_to_files_needs_out(tmp_path, capsys):
    from cepagg.cli import main

    events = tmp_path / "events.csv"
    events.write_text("type,ts\nA,10\n")
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 50", "--events", str(events),
                 "--out-format", "csv", "--checkpoint", str(tmp_path / "chk")]) == 2
    assert capsys.readouterr().err == "cepagg: stream: --out-format csv needs --out DIR (where the files are written)\n"


def test_cli_stream_says_a_within_alone_total_is_written_as_revisions(spark, tmp_path, capsys):
    """The run ended with "results in OUT" alone, while OUT held a revision per micro-batch and
    group in batch=N folders: read as a table, every old revision counts as a result."""
    from cepagg.cli import main

    events = tmp_path / "events.csv"
    events.write_text("type,ts\nA,1\nB,2\nA,3\nB,4\nB,9\n")
    out = tmp_path / "out"
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--events", str(events),
                 "--out", str(out), "--out-format", "csv", "--checkpoint", str(tmp_path / "chk"),
                 "--events-per-batch", "2"]) == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"cepagg: results in {out}; a WITHIN-alone total is revised") and "read_latest" in last
    from cepagg.spark.streaming import read_latest

    assert [tuple(r) for r in read_latest(spark, str(out), "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5",
                                          format="csv").collect()] == [(3,)]


def test_an_update_mode_micro_batch_without_rows_writes_no_file(spark, tmp_path, capsys):
    """Each micro-batch without rows wrote a batch=N folder holding a CSV header alone; the first
    batch's file stays (it keeps an output without rows readable)."""
    from cepagg.cli import main
    from cepagg.spark.streaming import read_latest

    events = tmp_path / "events.csv"
    events.write_text("type,ts\nA,1\nB,2\nA,3\nB,4\nC,5\nC,6\nB,9\n")
    out, chk = tmp_path / "out", tmp_path / "chk"
    query = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5"
    assert main(["stream", "-q", query, "--events", str(events), "--out", str(out), "--out-format", "csv",
                 "--checkpoint", str(chk), "--events-per-batch", "2"]) == 0
    rows_out = sum(int(n) for n in re.findall(r"^cepagg: batch \d+: .* (\d+) rows? out", capsys.readouterr().err, re.M))
    written = {int(d.name.split("=")[1]): [row for p in d.glob("part-*.csv") for row in p.read_text().splitlines()[1:]]
               for d in out.glob("batch=*")}
    committed = [int(n) for n in os.listdir(chk / "commits") if n.isdigit()]
    assert 0 in written and len(written) < len(committed)  # (batches without rows ran)
    assert all(rows for batch, rows in written.items() if batch > 0), written
    assert sum(map(len, written.values())) == rows_out
    assert [tuple(r) for r in read_latest(spark, str(out), query, format="csv").collect()] == [(3,)]
    plain = spark.read.csv(str(out), header=True)
    assert plain.columns == ["COUNT(*)", "revision", "batch"] and plain.count() == rows_out


def test_read_latest_of_an_output_without_rows_gives_the_query_columns_in_every_format(spark, tmp_path):
    """batch 0 without rows writes an empty JSON file (no column): read_latest failed on it,
    asking for the revision column."""
    from cepagg.spark.streaming import read_latest, write_batch

    query = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5"
    empty = spark.createDataFrame([], "`COUNT(*)` bigint, revision bigint")
    for fmt in ("parquet", "csv", "json"):
        write_batch(empty, 0, str(tmp_path / fmt), fmt)
        latest = read_latest(spark, str(tmp_path / fmt), query, format=fmt)
        assert (latest.columns, latest.collect()) == (["COUNT(*)"], []), fmt
