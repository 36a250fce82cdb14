"""A query following a directory, stopped and restarted from its checkpoint by Spark: a file
replaced while it was stopped is refused on restart with one line naming it (as the command
line reports it), not taken for the file the checkpoint counted."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.spark


def _put(path, rows, at):
    path.write_text("type,ts,x\n" + "".join(f"{t},{ts},{x}\n" for t, ts, x in rows))
    os.utime(path, ns=(at, at))
    return path


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
    a = _put(events / "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    query = _start(spark, events, out, chk)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(r["x"] for r in spark.read.parquet(str(out)).collect()) == [1, 2]
    _put(tmp_path / "a.csv", [("A", 10, 7), ("B", 20, 8)], at=1_000_000_000).rename(a)  # same size and time
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
