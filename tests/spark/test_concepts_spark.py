"""Concept hierarchies on Spark: the hierarchy travels in the query text to the workers."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cepagg.events import EventBatch
from cepagg.lang import Hierarchy, HierarchyError
from cepagg.runner import run as run_local
from cepagg.spark import run, run_workload
from generators import random_stream, seeded

pytestmark = pytest.mark.spark

H = Hierarchy.from_mapping({"X": ["A", "B"], "Y": ["X", "C"]})


def _rows(df):
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in df.collect()]


def test_spark_equals_in_process_with_a_hierarchy(spark):
    rows = random_stream(seeded("concepts-spark"), "ABCD", n=60, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    df = spark.createDataFrame([(r["_id"], r["type"], r["ts"], r["x"], r["g"]) for r in rows],
                               "_id long, type string, ts long, x long, g string")
    batch = EventBatch.from_rows(rows)
    for text in ("RETURN COUNT(*), SUM(x.x) PATTERN SEQ(X x, !C, D) WITHIN 6",
                 "RETURN g, COUNT(*) PATTERN SEQ(Y a, X b) WHERE [g] GROUP BY g WITHIN 5"):
        assert _rows(run(df, text, hierarchy=H)) == run_local(text, batch, hierarchy=H).rows
    out = run_workload(df, "CONCEPT X = (A, B)\nRETURN COUNT(*) PATTERN SEQ(X, D) WITHIN 4\n---\n"
                           "RETURN COUNT(*) PATTERN SEQ(A, D) WITHIN 4")
    assert _rows(out["q0"]) == run_local("RETURN COUNT(*) PATTERN SEQ(X, D) WITHIN 4", batch, hierarchy=H).rows
    bad = spark.createDataFrame([(0, "X", 1, 1, "u")], "_id long, type string, ts long, x long, g string")
    with pytest.raises(HierarchyError, match="'X' is a concept"):
        run(bad, "RETURN COUNT(*) PATTERN SEQ(X, D) WITHIN 4", hierarchy=H)


def test_a_stream_reads_the_hierarchy_from_the_text(spark, tmp_path):
    import json

    from cepagg.lang.concepts import with_hierarchy
    from cepagg.spark.sources import END_TS_MS, END_TYPE
    from cepagg.spark.streaming import read_latest, start

    rows = random_stream(seeded("concepts-stream"), "ABCD", n=40, max_gap=2, attrs={"x": (0, 9)})
    (tmp_path / "in").mkdir()
    with open(tmp_path / "in" / "part0.json", "w") as f:
        for i, r in enumerate(rows):
            f.write(json.dumps(dict(r, _id=i)) + "\n")
        f.write(json.dumps({"_id": -1, "type": END_TYPE, "ts": END_TS_MS, "x": None}) + "\n")  # (closes the stream)
    text = with_hierarchy("RETURN COUNT(*), SUM(x.x) PATTERN SEQ(X x, !C, Y y) WITHIN 6", H)
    df = spark.readStream.schema("_id long, type string, ts long, x long").json(str(tmp_path / "in"))
    start(df, text, out=str(tmp_path / "out"), checkpoint=str(tmp_path / "chk"), delay="20 milliseconds") \
        .awaitTermination()
    got = _rows(read_latest(spark, str(tmp_path / "out"), text))
    assert got == run_local(text, EventBatch.from_rows(rows)).rows
