"""A query following a directory, stopped and restarted from its checkpoint by Spark: a file
replaced while it was stopped is refused on restart with one line naming it (as the command
line reports it), not taken for the file the checkpoint counted; a restart with nothing changed
runs no micro-batch. The files' modification times are real ones, to the nanosecond (beyond
what a double holds: the checkpoint keeps them exactly)."""

from __future__ import annotations

import json
import os

import pytest

pytestmark = pytest.mark.spark


def _put(path, rows, at):
    path.write_text("type,ts,x\n" + "".join(f"{t},{ts},{x}\n" for t, ts, x in rows))
    os.utime(path, ns=(at, at))
    return path


AT = 1_700_000_000_123_456_789  # (a modification time to the nanosecond, as a file system gives)


def _start(spark, events, out, chk):
    df = spark.readStream.format("cepagg").option("path", str(events)).option("finite", "false").load()
    return (df.writeStream.format("parquet").option("path", str(out)).option("checkpointLocation", str(chk))
            .start())


def test_a_file_replaced_while_the_query_was_stopped_is_one_line_naming_it_on_restart(spark, tmp_path):
    from cepagg.errors import raised_in_spark
    from cepagg.spark.sources import register

    register(spark)
    events, out, chk = tmp_path / "in", tmp_path / "out", tmp_path / "chk"
    events.mkdir()
    a = _put(events / "a.csv", [("A", 10, 1), ("B", 20, 2)], at=AT)
    query = _start(spark, events, out, chk)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(r["x"] for r in spark.read.parquet(str(out)).collect()) == [1, 2]
    _put(tmp_path / "a.csv", [("A", 10, 7), ("B", 20, 8)], at=AT).rename(a)  # same size and time
    query = _start(spark, events, out, chk)
    try:
        with pytest.raises(Exception) as e:
            query.processAllAvailable()
    finally:
        query.stop()
    raised = raised_in_spark(e.value)
    assert raised is not None and raised[0] == "InputError", str(e.value)[-2000:]
    assert raised[1].startswith(f"{a}: changed while the query was stopped (another file: inode ")
    assert sorted(r["x"] for r in spark.read.parquet(str(out)).collect()) == [1, 2]


def _run(spark, events, out, chk):
    query = _start(spark, events, out, chk)
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def _entries(folder):
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def test_a_restart_with_nothing_changed_runs_no_micro_batch(spark, tmp_path):
    """A checkpoint whose offsets list no signatures (an earlier version's): the restarted query
    listed its files anew with their signatures, and Spark, seeing another offset, ran one more
    micro-batch, empty."""
    from cepagg.spark.sources import register

    register(spark)
    events, out, chk = tmp_path / "in", tmp_path / "out", tmp_path / "chk"
    events.mkdir()
    _put(events / "a.csv", [("A", 10, 1), ("B", 20, 2)], at=AT)
    _run(spark, events, out, chk)
    offsets, commits = _entries(chk / "offsets"), _entries(chk / "commits")
    assert offsets == commits == [0]
    _run(spark, events, out, chk)
    assert (_entries(chk / "offsets"), _entries(chk / "commits")) == (offsets, commits)
    last = chk / "offsets" / str(offsets[-1])
    *head, source = last.read_text().splitlines()
    offset = json.loads(source)
    assert offset["files"] == [["a.csv", 2, [os.stat(events / "a.csv").st_ino, os.stat(events / "a.csv").st_size, AT]]]
    offset["files"] = [entry[:2] for entry in offset["files"]]  # (as an earlier version wrote it)
    last.write_text("\n".join([*head, json.dumps(offset)]))
    _run(spark, events, out, chk)
    assert (_entries(chk / "offsets"), _entries(chk / "commits")) == (offsets, commits)
    assert sorted(r["x"] for r in spark.read.parquet(str(out)).collect()) == [1, 2]
