"""Reading event files and writing results (cepagg.io)."""

from __future__ import annotations

import csv
import json
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cepagg.errors import InputError
from cepagg.io import parse_schema, read_events
from cepagg.output import write_result
from cepagg.result import Result

ROWS = [
    {"ts": 3000, "type": "B", "price": 2.5, "n": 7, "company": "acme", "ok": True},
    {"ts": 1000, "type": "A", "price": 1.0, "n": -3, "company": "globex", "ok": False},
    {"ts": 1000, "type": "C", "price": None, "n": None, "company": None, "ok": None},
    {"ts": 2000, "type": "A", "price": 4.25, "n": 2**40, "company": "initech", "ok": True},
]


def _write(path, rows, fmt):
    if fmt == "csv":
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(rows[0].keys())
            for r in rows:
                w.writerow(["" if v is None else str(v).lower() if isinstance(v, bool) else v for v in r.values()])
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _csv(tmp_path, text, name="e.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _rows(report):
    return report.batch.table.to_pylist()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_round_trip_each_format(tmp_path, fmt):
    report = read_events(_write(tmp_path / f"e.{fmt}", ROWS, fmt))
    assert report.rows_read == 4 and report.rejected == 0 and report.reject_path is None
    got = _rows(report)
    assert [r["_id"] for r in got] == [1, 2, 3, 0]  # sorted by (ts, _id); _id = input position
    assert [{k: v for k, v in r.items() if k != "_id"} for r in got] == [ROWS[i] for i in (1, 2, 3, 0)]
    assert report.batch.attribute_kinds() == {"price": "float", "n": "int", "company": "str", "ok": "bool"}
    assert report.batch.time_unit == "ms"


def test_inference_of_int_float_str_bool(tmp_path):
    p = _csv(tmp_path, "ts,type,i,f,b,s,e,mixed\n1,A,1,1.5,TRUE,x,,a\n2,A, +2 ,2,false,3,,true\n3,A,,1e3,,y,,2.5\n")
    report = read_events(p)
    assert report.batch.attribute_kinds() == {"i": "int", "f": "float", "b": "bool", "s": "str", "e": "str",
                                              "mixed": "str"}
    t = report.batch.table
    assert t.column("i").to_pylist() == [1, 2, None]
    assert t.column("f").to_pylist() == [1.5, 2.0, 1000.0]
    assert t.column("b").to_pylist() == [True, False, None]
    assert t.column("s").to_pylist() == ["x", "3", "y"]
    assert t.column("e").null_count == 3


def test_declared_schema_overrides_inference(tmp_path):
    p = _csv(tmp_path, "ts,type,zip,qty,flag\n1,A,00123,5,1\n2,A,04000,6,0\n")
    schema = parse_schema("zip:str, qty : float")
    assert schema == {"zip": "str", "qty": "float"}
    report = read_events(p, schema=schema)
    assert report.batch.attribute_kinds() == {"zip": "str", "qty": "float", "flag": "int"}
    assert report.batch.table.column("zip").to_pylist() == ["00123", "04000"]
    assert read_events(p, schema="zip:str, qty : float").batch.attribute_kinds() == report.batch.attribute_kinds()
    with pytest.raises(ValueError, match="money"):
        parse_schema("price:money")
    with pytest.raises(InputError, match="'nope'"):
        read_events(p, schema={"nope": "int"})


def test_a_schema_declaring_one_attribute_twice_is_refused():
    """``price:int,price:float`` kept the last kind without a word."""
    with pytest.raises(ValueError, match="'price' twice"):
        parse_schema("price:int, qty:int, price:float")


def test_nan_and_infinities_are_bad_rows(tmp_path):
    """'nan' and 'inf' were read as floats: the reference failed on them with an OverflowError
    traceback, and aseq returned SUM nan or inf."""
    p = _csv(tmp_path, "ts,type,x\n1,A,1.5\n2,B,nan\n3,B,-inf\n4,B,\n")
    with pytest.raises(InputError, match=r"row 3: column 'x': nan is not a finite number"):
        read_events(p)
    report = read_events(p, on_bad_row="reject", reject_path=str(tmp_path / "bad.jsonl"))
    assert report.batch.table.column("x").to_pylist() == [1.5, None]


def test_an_integer_beyond_64_bits_is_a_bad_value_not_a_rounded_float(tmp_path):
    """A column of integers with one of 20 digits was read as floats: 99999999999999999999 became
    1e20 and every integer of the column a float, without a word."""
    p = _csv(tmp_path, "ts,type,x\n1,A,1\n2,B,-99999999999999999999\n3,B,7\n")
    with pytest.raises(InputError, match=r"row 3: column 'x': '-99999999999999999999' is not a valid 64-bit "
                                         r"integer: declare the column float \(--schema x:float\)"):
        read_events(p)
    assert read_events(p, schema={"x": "float"}).batch.table.column("x").to_pylist() == [1.0, -1e20, 7.0]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_word_in_a_column_of_numbers_is_a_bad_value_not_a_text_column(tmp_path, fmt):
    """One ``abc`` among numbers made the whole column text: ``a.x < b.x`` then compared "10" < "9"."""
    rows = [(1, "10"), (2, "9"), (3, "abc"), (4, "2.5"), (5, "")]
    if fmt == "csv":
        p = _csv(tmp_path, "ts,type,x\n" + "".join(f"{t},A,{x}\n" for t, x in rows))
    else:
        p = tmp_path / "e.jsonl"
        p.write_text("".join(json.dumps({"ts": t, "type": "A", "x": x if x in ("abc", "") else float(x)}) + "\n"
                             for t, x in rows))
    line = 4 if fmt == "csv" else 3  # (CSV: the header is line 1)
    with pytest.raises(InputError, match=rf"row {line}: column 'x': 'abc' is not a number, as most values of the "
                                         r"column are \(leave a missing value empty, or declare the column "
                                         r"text with --schema x:str\)"):
        read_events(p)
    report = read_events(p, on_bad_row="reject", reject_path=str(tmp_path / "bad.jsonl"))
    assert report.batch.attribute_kinds() == {"x": "float"} and report.rejected == 1
    assert report.batch.table.column("x").to_pylist() == [10.0, 9.0, 2.5, None]
    assert read_events(p, schema={"x": "str"}).batch.attribute_kinds() == {"x": "str"}


def test_a_column_mostly_of_words_stays_text(tmp_path):
    p = _csv(tmp_path, "ts,type,x\n1,A,abc\n2,A,7\n3,A,def\n4,A,3M\n")
    report = read_events(p)
    assert report.batch.attribute_kinds() == {"x": "str"}
    assert report.batch.table.column("x").to_pylist() == ["abc", "7", "def", "3M"]


def test_timestamps_with_offsets_and_naive_in_timezone(tmp_path):
    p = _csv(tmp_path, "ts,type\n2013-01-01T05:17:00Z,A\n2013-01-01T05:17:00+01:00,A\n"
                       "2013-01-01 05:17,A\n2013-07-01 05:17:00.250,A\n")
    utc = lambda *a: int(datetime(*a, tzinfo=timezone.utc).timestamp() * 1000)  # noqa: E731
    got = read_events(p, timezone="America/New_York").batch.table.column("ts").to_pylist()
    assert got == [utc(2013, 1, 1, 4, 17), utc(2013, 1, 1, 5, 17), utc(2013, 1, 1, 10, 17),
                   utc(2013, 7, 1, 9, 17) + 250]
    got = read_events(p).batch.table.column("ts").to_pylist()  # naive = UTC by default
    assert got[2] == utc(2013, 1, 1, 5, 17)
    j = tmp_path / "e.jsonl"
    j.write_text('{"ts": "2013-01-01T05:17:00Z", "type": "A"}\n{"ts": "2013-01-01 05:17", "type": "A"}\n')
    assert read_events(j, timezone="Europe/Paris").batch.table.column("ts").to_pylist() == [
        utc(2013, 1, 1, 4, 17), utc(2013, 1, 1, 5, 17)]


def test_naive_times_in_dst_overlap_and_gap(tmp_path):
    p = _csv(tmp_path, "ts,type\n2013-11-03 01:30,A\n2013-03-10 02:30,A\n")
    with pytest.raises(InputError, match=r"row 3: .*'2013-03-10 02:30' is neither .* in America/New_York"):
        read_events(p, timezone="America/New_York")  # a local time that never existed
    report = read_events(p, timezone="America/New_York", on_bad_row="reject", reject_path=tmp_path / "r.csv")
    utc = datetime(2013, 11, 3, 5, 30, tzinfo=timezone.utc)  # the earlier of the two 01:30 (EDT)
    assert report.batch.table.column("ts").to_pylist() == [int(utc.timestamp() * 1000)]


def test_empty_files(tmp_path):
    assert len(read_events(_csv(tmp_path, "", "a.csv")).batch) == 0
    report = read_events(_csv(tmp_path, "ts,type,x\n", "b.csv"))
    assert (len(report.batch), report.rows_read) == (0, 0)


def test_parquet_timestamp_columns(tmp_path):
    p = tmp_path / "e.parquet"
    naive = pa.array([datetime(2020, 1, 1, 12)], pa.timestamp("us"))
    pq.write_table(pa.table({"ts": naive, "type": ["A"]}), p)
    got = read_events(p, timezone="Europe/Berlin", time_unit="s").batch.table.column("ts").to_pylist()
    assert got == [int(datetime(2020, 1, 1, 11, tzinfo=timezone.utc).timestamp())]


def test_input_time_unit_conversions(tmp_path):
    p = _csv(tmp_path, "ts,type\n5,A\n7,A\n")
    assert read_events(p, input_time_unit="s").batch.table.column("ts").to_pylist() == [5000, 7000]
    assert read_events(p, time_unit="s").batch.table.column("ts").to_pylist() == [5, 7]
    p = _csv(tmp_path, "ts,type\n3000000,A\n4000000,B\n")
    assert read_events(p, input_time_unit="ns").batch.table.column("ts").to_pylist() == [3, 4]
    p = _csv(tmp_path, "ts,type\n3000000,A\n4000001,B\n")
    with pytest.raises(InputError, match=r"e\.csv, row 3: .*'4000001' \(ns\) is not a whole number of ms"):
        read_events(p, input_time_unit="ns")
    p = _csv(tmp_path, "ts,type\n9000000000000000000,A\n")
    with pytest.raises(InputError, match="row 2: .*out of range"):
        read_events(p, input_time_unit="s")


def test_constant_type(tmp_path):
    p = _csv(tmp_path, "ts,price,type_\n1,10.5,x\n2,11,y\n")
    report = read_events(p, constant_type="tick")
    assert report.batch.table.column("type").to_pylist() == ["tick", "tick"]
    assert report.batch.attribute_names == ["price", "type_"]
    with pytest.raises(InputError, match="constant_type"):
        read_events(p)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_constant_type_over_a_file_with_a_type_column_is_refused(tmp_path, fmt):
    """The type column silently became an attribute ``type_`` and every event the constant type."""
    p = _write(tmp_path / f"e.{fmt}", [{"ts": 1, "type": "A", "x": 1}, {"ts": 2, "type": "B", "x": 2}], fmt)
    with pytest.raises(InputError, match=r"e\.\w+: column 'type' holds the events' types, and constant_type "
                                         r"\(--constant-type\) gives every event the type 'tick'"):
        read_events(p, constant_type="tick")
    with pytest.raises(InputError, match="column 'kind' holds"):
        read_events(_write(tmp_path / f"k.{fmt}", [{"ts": 1, "kind": "A"}], fmt), constant_type="t", type_column="kind")


def test_reserved_names_are_renamed(tmp_path):
    p = _csv(tmp_path, "time,kind,ts,type,_id,id\n1,A,x,y,z,5\n")
    report = read_events(p, time_column="time", type_column="kind")
    assert _rows(report) == [{"_id": 0, "ts": 1, "type": "A", "ts_": "x", "type_": "y", "_id_": "z", "id": 5}]


def test_directory_and_list_input(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    _csv(d, "ts,type,x\n5,A,1\n1,A,2\n", "b.csv")
    _csv(d, "ts,type,x\n3,B,1.5\n", "a.csv")
    _csv(d, "garbage", "_rejects.csv")  # skipped: names starting with _ or .
    (d / "notes.txt").write_text("not data")
    report = read_events(d)
    assert [(r["_id"], r["ts"], r["x"]) for r in _rows(report)] == [(2, 1, 2.0), (0, 3, 1.5), (1, 5, 1.0)]
    report = read_events([d / "b.csv", d / "a.csv"])
    assert [r["_id"] for r in _rows(report)] == [1, 2, 0]
    with pytest.raises(InputError, match="no such file"):
        read_events(tmp_path / "missing.csv")


@pytest.mark.parametrize("text, line, message", [
    ("ts,type,q\n1,A,1\nabc,A,1\n", 3, "time column 'ts': 'abc' is neither an integer nor an ISO-8601"),
    ("ts,type,q\n1,A,1\n,A,1\n", 3, "time column 'ts' is empty"),
    ("ts,type,q\n1,A,1\n\n2,,1\n", 4, "type column 'type' is empty"),
    ('ts,type,q,s\n1,A,1,"multi\nline"\n2,A,x,y\n', 4, "column 'q': 'x' is not a valid int"),
    ("ts,type,q\n1,A,1\n2,A\n", 3, "expected 3 fields, found 2"),
    ("ts,type,q\n1.5,A,1\n", 2, "'1.5' is neither an integer"),
])
def test_csv_bad_rows_name_file_and_line(tmp_path, text, line, message):
    p = _csv(tmp_path, text, "bad.csv")
    with pytest.raises(InputError) as e:
        read_events(p, schema={"q": "int"})
    assert str(e.value).startswith(f"{p}, row {line}: ") and message in str(e.value)
    assert e.value.source == str(p) and e.value.row == line


@pytest.mark.parametrize("text, line, message", [
    ('{"ts": 1, "type": "A"}\n\n{"ts": 2, "type": "A"\n', 3, "bad JSON: Expecting"),
    ('{"ts": 1, "type": "A"}\n[1, 2]\n', 2, "not a JSON object but a list"),
    ('{"ts": 1, "type": "A"}\n{"ts": 2.5, "type": "A"}\n', 2, "2.5 is neither an integer"),
    ('{"ts": 1, "type": "A"}\n{"ts": 2, "type": null}\n', 2, "type column 'type' is empty"),
    ('{"ts": 1, "type": "A", "v": 1}\n{"ts": 2, "type": "A", "v": "x"}\n', 2, "column 'v': 'x' is not a valid int"),
    ('{"ts": 1, "type": "A"}\n{"ts": 2, "type": "A", "x": 1, "x": 5}\n', 2, "bad JSON: key 'x' appears twice"),
    ('{"ts": 1, "type": "A", "x": {"k": 1, "k": 2}}\n', 1, "bad JSON: key 'k' appears twice"),
])
def test_jsonl_bad_rows_name_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_events(p, schema={"v": "int"} if '"v"' in text else None)
    assert str(e.value).startswith(f"{p}, row {line}: ") and message in str(e.value)


def test_parquet_bad_row_names_row(tmp_path):
    p = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"ts": [1, None, 3], "type": ["A", "B", "C"]}), p)
    with pytest.raises(InputError, match=r"bad\.parquet, row 2: time column 'ts' is empty"):
        read_events(p)


def test_reject_mode_csv(tmp_path):
    p = _csv(tmp_path, "ts,type,q\n1,A,1\nx,A,2\n3,,3\n4,A,oops\n5,A\n6,B,6\n", "in.csv")
    out = tmp_path / "rej.csv"
    report = read_events(p, schema={"q": "int"}, on_bad_row="reject", reject_path=out)
    assert (report.rows_read, report.rejected, report.reject_path) == (6, 4, str(out))
    assert [(r["_id"], r["ts"], r["q"]) for r in _rows(report)] == [(0, 1, 1), (5, 6, 6)]
    rows = list(csv.DictReader(out.open()))
    assert [r["ts"] for r in rows] == ["x", "3", "4", "5"]
    assert [r["_error"].split(": ", 1)[0] for r in rows] == [f"{p}, row {n}" for n in (3, 4, 5, 6)]
    assert "'oops' is not a valid int" in rows[2]["_error"] and "expected 3 fields" in rows[3]["_error"]


def test_reject_mode_jsonl_and_parquet_default_path(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text('{"ts": 1, "type": "A"}\nnot json\n{"ts": "x", "type": "A"}\n{"ts": 4, "type": "B"}\n')
    report = read_events(p, on_bad_row="reject")
    assert report.rejected == 2 and report.reject_path == str(tmp_path / "_in.rejects.jsonl")
    assert [r["_id"] for r in _rows(report)] == [0, 3]
    rejects = [json.loads(x) for x in open(report.reject_path)]
    assert rejects[0]["_raw"] == "not json" and "row 2" in rejects[0]["_error"]
    assert rejects[1]["ts"] == "x" and "row 3" in rejects[1]["_error"]
    q = tmp_path / "in.parquet"
    pq.write_table(pa.table({"ts": [1, 2], "type": ["A", ""]}), q)
    report = read_events(q, on_bad_row="reject", reject_path=tmp_path / "r.jsonl")
    assert report.rejected == 1 and len(report.batch) == 1
    assert json.loads(open(report.reject_path).read())["ts"] == 2


def test_jsonl_falls_back_for_conflicting_types_and_huge_ints(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text('{"ts": 1, "type": "A", "v": 1, "big": 12345678901234567890, "w": {"a": [1]}}\n'
                 '{"ts": "2", "type": "A", "v": 2.5, "big": "x", "w": null}\n')
    report = read_events(p, schema={"big": "str"})
    assert report.batch.table.column("big").to_pylist() == ["12345678901234567890", "x"]
    assert report.batch.table.column("w").to_pylist() == ['{"a": [1]}', None]  # nested values: JSON text
    assert report.batch.table.column("v").to_pylist() == [1.0, 2.5]
    assert report.batch.table.column("ts").to_pylist() == [1, 2]


def test_write_result_all_formats(tmp_path, capsys):
    big = 2**70
    result = Result(("k", "total", "avg"), [("a", big, 1.5), ("b", 3, None)], ("str", "int", "float"))
    write_result(result, tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().splitlines() == ["k,total,avg", f"a,{big},1.5", "b,3,"]
    write_result(result, tmp_path / "r.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert lines == [{"k": "a", "total": str(big), "avg": 1.5}, {"k": "b", "total": 3, "avg": None}]
    write_result(result, tmp_path / "r.out", format="parquet")
    t = pq.read_table(tmp_path / "r.out")
    assert t.schema.field("total").type == pa.decimal128(38, 0)
    assert [int(v) for v in t.column("total").to_pylist()] == [big, 3]
    write_result(result, "-")
    assert str(big) in capsys.readouterr().out
    with pytest.raises(ValueError):
        write_result(result, tmp_path / "r.txt")


@pytest.mark.parametrize("kind", ["int", "float"])
def test_plain_number_fast_path_agrees_with_the_regular_expressions(kind):
    """_plain casts whole columns of plain numbers at once; where it answers, it must give what the
    row-by-row path gives, and it must answer for plain columns (else it saves nothing)."""
    import random

    from cepagg.io import _parse, _plain

    rng = random.Random(7)
    answered = 0
    for _ in range(400):
        values = ["".join(rng.choice("0123456789-.+e ") for _ in range(rng.randint(0, 4)))
                  for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.5:  # plain columns, to be answered
            tails = ["", ".", ".25"] if kind == "float" else [""]
            values = [rng.choice(["", "-"]) + str(rng.randint(0, 10**6)) + rng.choice(tails)
                      for _ in range(rng.randint(1, 4))]
        arr = pa.array(values, pa.string())
        fast = _plain(arr, kind)
        if fast is None:
            continue
        answered += 1
        slow, bad = _parse(arr, kind)
        assert bad == [] and fast.equals(slow), values
    assert answered >= 150
    assert _plain(pa.array(["1", " 2"]), kind) is None and _plain(pa.array(["1", None]), kind) is None
    assert _plain(pa.array(["99999999999999999999"]), "int") is None  # out of range: the slow path names it
