"""cepagg.spark.run returns a DataFrame of matches, over a batch DataFrame and over a streaming
one: the same matches as in-process (compared as sets: numbers differ between drivers), each
match number naming one match."""

from __future__ import annotations

import json
import os
import random

import pytest

from cepagg.events import EventBatch
from cepagg.result import Result
from cepagg.runner import run as run_local
from cepagg.spark import run
from cepagg.spark.sources import END_TS_MS, END_TYPE
from generators import random_stream
from helpers import match_sets

pytestmark = pytest.mark.spark

QUERY = "PATTERN SEQ(A a, B b+, C c) WHERE [g] AND b.x <= NEXT(b).x WITHIN 6 RETURN a, b, c"
SCHEMA = "_id long, type string, ts long, x long, g string"


#: a nested pattern, planned on neel (the union of its disjuncts on the match engines)
NESTED = "PATTERN SEQ(A a, NOT AND(B, C), A d) WHERE [g] WITHIN 6"


def _case(query=QUERY):
    rows = random_stream(random.Random(7), "ABC", n=60, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v", "w"]})
    for i, r in enumerate(rows):
        r["_id"] = i
    expected = run_local(query, EventBatch.from_rows(rows, ids=[r["_id"] for r in rows]), engine="reference")
    return rows, expected


def _matches(df_rows, columns) -> tuple:
    rows = [tuple(r[c] for c in columns) for r in df_rows]
    return match_sets(Result(columns, rows))


def test_a_batch_frame_of_matches(spark):
    rows, expected = _case()
    df = spark.createDataFrame(rows, SCHEMA)
    out = run(df, QUERY)
    assert out.columns[:len(expected.columns)] == list(expected.columns) and {"x", "g"} <= set(out.columns)
    got = out.collect()
    assert _matches(got, expected.columns) == match_sets(expected)
    assert all(r["g"] in "uvw" for r in got)


@pytest.mark.parametrize("query", [QUERY, NESTED])
def test_a_streaming_frame_of_matches(spark, tmp_path, query):
    rows, expected = _case(query)
    assert expected.rows
    src = tmp_path / "in"
    os.makedirs(src)
    rng = random.Random(3)
    for k in range(3):
        chunk = [dict(r) for r in rows[k * 20:(k + 1) * 20]]
        rng.shuffle(chunk)
        if k == 2:
            chunk.append({"_id": -1, "type": END_TYPE, "ts": END_TS_MS, "x": None, "g": None})
        path = src / f"part{k}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in chunk))
        os.utime(path, (1000 + k, 1000 + k))
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
    out = run(df, query, delay="20 milliseconds")
    assert out.isStreaming and out.columns == list(expected.columns)
    q = (out.writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "chk")).trigger(availableNow=True).start())
    q.awaitTermination()
    got = spark.read.parquet(str(tmp_path / "out")).collect()
    assert _matches(got, expected.columns) == match_sets(expected)


def test_cepagg_run_on_spark_writes_matches_wide_and_stops_at_n(spark, tmp_path, capsys):
    """`cepagg run` (on Spark) of a RETURN-of-events query: the matches of the Spark job written
    as they are fetched, in the wide form, stopped at --max-matches."""
    import pyarrow.parquet as pq

    from cepagg.cli import main

    rows, _ = _case()
    query = QUERY.replace("WITHIN 6", "WITHIN 30")
    expected = run_local(query, EventBatch.from_rows(rows), engine="rcep")
    assert len(set(expected.column("match"))) > 3
    events = tmp_path / "e.csv"
    events.write_text("type,ts,x,g\n" + "".join(f"{r['type']},{r['ts']},{r['x']},{r['g']}\n" for r in rows))
    out = tmp_path / "m.parquet"
    assert main(["run", "-q", query, "--events", str(events), "--engine", "rcep", "--out", str(out),
                 "--match-format", "wide"]) == 0
    table = pq.read_table(out)
    assert table.column_names == ["match", "a", "b", "c"]
    assert table.num_rows == len(set(expected.column("match")))
    assert main(["run", "-q", query, "--events", str(events), "--engine", "rcep", "--out", str(out),
                 "--max-matches", "3"]) == 0
    assert sorted(set(pq.read_table(out).column("match").to_pylist())) == [1, 2, 3]
    assert "stopped at 3 matches" in capsys.readouterr().err


def test_a_group_column_that_is_the_partition_attribute_is_not_joined_again(spark):
    """RETURN g, a, b ... WHERE [g] GROUP BY g: the attribute g was joined next to the group
    column g, and selecting the result's columns failed with Spark's AMBIGUOUS_REFERENCE."""
    query = "PATTERN SEQ(A a, B b) WHERE [g] WITHIN 6 GROUP BY g RETURN g, a, b"
    rows, expected = _case(query)
    assert expected.rows
    out = run(spark.createDataFrame(rows, SCHEMA), query)
    width = len(expected.columns)
    assert out.columns[:width] == list(expected.columns) and "x" in out.columns[width:]
    assert "g" not in out.columns[width:]  # (as in-process: run(..., match_format="long"))
    assert _matches(out.collect(), expected.columns) == match_sets(expected)


def test_an_attribute_named_like_a_result_column_is_refused_before_the_work_or_kept_apart(spark, tmp_path, capsys):
    """An attribute called `match`: cepagg.spark.run failed with AMBIGUOUS_REFERENCE, and so did
    `cepagg run --match-format wide` on Spark, whose events keep their attributes in records."""
    import pyarrow.parquet as pq

    from cepagg.cli import main
    from cepagg.matches import OutputRefused

    query = "PATTERN SEQ(A a, B b) WITHIN 6 RETURN a, b"
    df = spark.createDataFrame([(0, "A", 1, "m"), (1, "B", 2, "n")], "_id long, type string, ts long, match string")
    with pytest.raises(OutputRefused, match="two columns named 'match'"):
        run(df, query)
    assert run(df, query, attributes=False).collect() == [(1, "a", 0, 0, "A", 1), (1, "b", 0, 1, "B", 2)]
    events = tmp_path / "e.csv"
    events.write_text("type,ts,match\nA,1,m\nB,2,n\n")
    out = tmp_path / "m.parquet"
    assert main(["run", "-q", query, "--events", str(events), "--out", str(out), "--match-format", "wide"]) == 0
    assert pq.read_table(out).to_pylist() == [{"match": 1, "a": [{"event_id": 0, "type": "A", "ts": 1, "match": "m"}],
                                               "b": [{"event_id": 1, "type": "B", "ts": 2, "match": "n"}]}]
