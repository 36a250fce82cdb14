"""``--numbers exact|float`` on the command line (in-process paths; Spark's in tests/spark)."""

from __future__ import annotations

import csv
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cepagg.cli import main

EVENTS = "type,ts,x,g\nA,1,5,u\nB,2,7,u\nC,3,1,v\nA,4,2,u\nB,6,3,v\nC,9,8,u\nA,10,4,v\nB,11,6,u\n"
QUERY = "RETURN COUNT(*), SUM(B.x), AVG(A.x), MAX(B.x) PATTERN SEQ(A, B) WITHIN 8"


@pytest.fixture
def events(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text(EVENTS)
    return str(path)


def _close(a, b):
    return all(math.isclose(float(x), float(y), rel_tol=1e-9) for x, y in zip(a, b))


def test_parquet_columns_are_doubles_in_float_mode(events, tmp_path):
    exact, floats = tmp_path / "exact.parquet", tmp_path / "float.parquet"
    assert main(["run", "-q", QUERY, "--events", events, "--no-spark", "--out", str(exact)]) == 0
    assert main(["run", "-q", QUERY, "--events", events, "--no-spark", "--out", str(floats),
                 "--numbers", "float"]) == 0
    e, f = pq.read_table(exact), pq.read_table(floats)
    assert e.schema.types == [pa.int64(), pa.int64(), pa.float64(), pa.int64()]
    assert f.schema.types == [pa.float64(), pa.float64(), pa.float64(), pa.int64()]
    assert _close(e.to_pylist()[0].values(), f.to_pylist()[0].values())


def test_csv_in_float_mode_and_the_whole_read_path(events, tmp_path, capsys):
    """A workload reads its input whole (not in chunks): each query's file holds floats."""
    workload = tmp_path / "w.cep"
    workload.write_text(f"-- name: pairs\n{QUERY}\n---\n-- name: trend\n"
                        "RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] GROUP BY g WITHIN 8\n")
    out = tmp_path / "r.csv"
    assert main(["run", str(workload), "--events", events, "--no-spark", "--out", str(out), "--numbers", "float"]) == 0
    assert "float64" in capsys.readouterr().err
    with open(tmp_path / "r.pairs.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert row["COUNT(*)"] == "5.0" and row["MAX(B.x)"] == "7" and row["SUM(B.x)"] == "25.0"
    with open(tmp_path / "r.trend.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and all("." in r["COUNT(*)"] for r in rows)


def test_matches_are_the_same_in_either_mode(events, tmp_path):
    outs = []
    for numbers in ("exact", "float"):
        out = tmp_path / f"m.{numbers}.csv"
        assert main(["run", "-q", "RETURN a, b PATTERN SEQ(A a, B b) WITHIN 3", "--events", events, "--no-spark",
                     "--out", str(out), "--numbers", numbers]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1] and outs[0].count("\n") > 1


def test_bad_value_is_refused_in_one_line(events, capsys):
    assert main(["run", "-q", QUERY, "--events", events, "--no-spark", "--numbers", "double"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--numbers: invalid choice: 'double'" in err


@pytest.mark.parametrize("order", [["kslack", "--slack", "2"], ["conservative"], ["aggressive", "--lateness", "2"]])
def test_ordering_layer_in_float_mode(events, tmp_path, order):
    """Events in arrival order through each ordering strategy: the net result in float mode is
    the exact one as doubles."""
    exact, floats = tmp_path / "exact.parquet", tmp_path / "float.parquet"
    for numbers, out in (("exact", exact), ("float", floats)):
        assert main(["run", "-q", QUERY, "--events", events, "--no-spark", "--order", *order,
                     "--numbers", numbers, "--out", str(out)]) == 0
    e, f = pq.read_table(exact), pq.read_table(floats)
    assert f.schema.types[:3] == [pa.float64()] * 3 and e.schema.types[0] == pa.int64()
    assert e.num_rows == f.num_rows == 1 and _close(e.to_pylist()[0].values(), f.to_pylist()[0].values())


def test_explain_says_float_values_are_approximate(capsys):
    assert main(["explain", "-q", QUERY, "--numbers", "float"]) == 0
    out = capsys.readouterr().out
    assert "numbers: float64, approximate values for COUNT(*), SUM(B.x), AVG(A.x); computed " in out
    assert main(["explain", "-q", QUERY]) == 0
    assert "numbers:" not in capsys.readouterr().out
    assert main(["explain", "-q", f"{QUERY}\n---\nRETURN a PATTERN SEQ(A a, B b)", "--numbers", "float"]) == 0
    out = capsys.readouterr().out
    assert "numbers: float64, approximate" in out and "numbers: float has no effect: the query returns matches" in out


def test_a_count_parquet_cannot_hold_names_its_query_and_the_ways_out(tmp_path, capsys):
    """2^130 - 1 Kleene trends: beyond DECIMAL(38,0) in Parquet. The error names the workload's
    query and says what holds the value (CSV or JSON Lines, float mode); float mode writes it."""
    events = tmp_path / "a.csv"
    events.write_text("type,ts\n" + "".join(f"A,{t}\n" for t in range(1, 131)))
    workload = tmp_path / "w.cep"
    workload.write_text("-- name: small\nRETURN COUNT(*) PATTERN SEQ(A, A) WITHIN 3\n---\n"
                        "-- name: trends\nRETURN COUNT(*) PATTERN A+ WITHIN 1000\n")
    out = tmp_path / "r.parquet"
    assert main(["run", str(workload), "--events", str(events), "--no-spark", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cepagg: query trends: column 'COUNT(*)' holds 13611294676837538")
    assert "write CSV or JSON Lines" in err and "--numbers float" in err
    assert main(["run", str(workload), "--events", str(events), "--no-spark", "--out", str(out),
                 "--numbers", "float"]) == 0
    assert pq.read_table(tmp_path / "r.trends.parquet").column(0).to_pylist() == [float(2**130 - 1)]


def test_the_terminal_table_shows_every_digit_of_a_whole_float(tmp_path, capsys):
    """A float-mode count below 10^15 printed whole (it was cut to 6 digits: 3.43597e+10)."""
    events = tmp_path / "a.csv"
    events.write_text("type,ts,x\n" + "".join(f"A,{t},{t % 3}\n" for t in range(1, 36)))
    assert main(["run", "-q", "RETURN COUNT(*), AVG(A.x) PATTERN A+ WITHIN 100", "--events", str(events),
                 "--no-spark", "--numbers", "float"]) == 0
    row = capsys.readouterr().out.splitlines()[2].split()
    assert row[0] == str(2**35 - 1) and row[1] == "1.02857"  # (AVG: 6 significant digits)


def test_the_summary_line_says_float64_only_where_it_changes_the_result(events, capsys):
    assert main(["run", "-q", "RETURN MAX(B.x) PATTERN SEQ(A, B) WITHIN 8", "--events", events, "--no-spark",
                 "--numbers", "float"]) == 0
    assert "(in-process), 1 row in" in capsys.readouterr().err
    assert main(["run", "-q", QUERY, "--events", events, "--no-spark", "--numbers", "float"]) == 0
    assert "(in-process, float64), 1 row in" in capsys.readouterr().err
