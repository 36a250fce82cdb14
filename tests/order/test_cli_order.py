"""``cepagg run --order ... --no-spark``: the file's row order is the arrival order."""

from __future__ import annotations

import csv
import json

import pytest

from cepagg.cli import main

ROWS = [("A", 3), ("C", 5), ("A", 7), ("B", 11), ("C", 9), ("__punct__", 20)]


@pytest.fixture
def events(tmp_path):
    path = tmp_path / "ev.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["type", "ts", "x"])
        for t, ts in ROWS:
            w.writerow([t, ts, "" if t == "__punct__" else 1])
    return str(path)


def _read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("order,kinds,rows", [
    (["--order", "kslack", "--slack", "1"], ["insert", "insert"], 2),  # c9 is dropped: a wrong match
    (["--order", "kslack", "--slack", "2"], [], 0),
    (["--order", "conservative"], [], 0),
    (["--order", "aggressive", "--lateness", "5"], ["insert", "insert", "delete", "delete"], 0),
])
def test_run_order_in_process(events, tmp_path, order, kinds, rows):
    out, changes = tmp_path / "out.csv", tmp_path / "changes.csv"
    assert main(["run", "-q", "PATTERN SEQ(A, !C, B) WITHIN 10", "--events", events, "--no-spark",
                 "--out", str(out), "--changes", str(changes), *order]) == 0
    assert [r["kind"] for r in _read(changes)] == kinds
    assert len(_read(out)) == rows


def test_run_order_late_events_to_a_file_or_failure(events, tmp_path, capsys):
    late = tmp_path / "late.jsonl"
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, !C, B) WITHIN 10", "--events", events, "--no-spark",
                 "--order", "kslack", "--slack", "1", "--on-late", "output", "--late-out", str(late)]) == 0
    assert [json.loads(x)["ts"] for x in late.read_text().splitlines()] == [9]
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, !C, B) WITHIN 10", "--events", events, "--no-spark",
                 "--order", "kslack", "--slack", "1", "--on-late", "fail"]) == 1
    assert "later than allowed" in capsys.readouterr().err


def test_run_order_needs_no_spark(events, capsys):
    assert main(["run", "-q", "PATTERN SEQ(A, B)", "--events", events, "--order", "conservative"]) == 2
    assert capsys.readouterr().err.startswith("cepagg: run: --order runs in this process")


@pytest.mark.parametrize("option", [["--slack", "2m"], ["--slack", "2 minutes"]])
def test_slack_takes_the_units_of_queries(events, tmp_path, option):
    """--slack reads units as query text does (``m`` is minutes); an unknown unit is a usage error."""
    out = tmp_path / "out.csv"
    assert main(["run", "-q", "PATTERN SEQ(A, !C, B) WITHIN 10", "--events", events, "--no-spark",
                 "--out", str(out), "--order", "kslack", *option]) == 0
    assert main(["run", "-q", "PATTERN SEQ(A, !C, B) WITHIN 10", "--events", events, "--no-spark",
                 "--out", str(out), "--order", "kslack", "--slack", "2 fortnights"]) == 2


def test_exact_punctuations_release_conservative_results(events, tmp_path):
    changes = tmp_path / "changes.csv"
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 4 SLIDE 2", "--events", events,
                 "--no-spark", "--order", "conservative", "--punctuate", "exact:1", "--changes", str(changes)]) == 0
    got = _read(changes)
    assert [(r["window_start"], r["COUNT(*)"], r["kind"]) for r in got] == [("2", "1", "row"), ("6", "1", "row")]
    # [2, 6) is final once A and C are closed up to 5: at the punctuation right after c5
    # (arrival: a3, its 3 punctuations, c5, then position 5)
    assert int(got[0]["at"]) == 5


@pytest.mark.parametrize("option,message", [
    (["--order", "aggressive", "--tick", "0"], "--tick 0: give a positive number"),
    (["--order", "aggressive", "--tick", "-2"], "--tick -2: give a positive number"),
    (["--order", "conservative", "--punctuate", "exact:1.2.3"], "--punctuate 'exact:1.2.3': expected"),
    (["--order", "conservative", "--punctuate", "exact:."], "--punctuate 'exact:.': expected"),
])
def test_bad_order_options_are_one_line_usage_errors(events, capsys, option, message):
    """A tick that is not positive, a punctuation rate that is not a number: exit code 2 and one
    line naming the option, never a traceback."""
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 4 SLIDE 2", "--events", events,
                 "--no-spark", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: {message}") and err.count("\n") == 1


def test_summary_line_names_float_mode_and_unbounded_lateness(events, capsys):
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 4 SLIDE 2", "--events", events,
                 "--no-spark", "--order", "aggressive", "--numbers", "float"]) == 0
    err = capsys.readouterr().err
    assert "(in-process, float64), order aggressive L=unbounded:" in err


@pytest.mark.parametrize("option,message", [
    (["--slack", "3"], "--slack applies with --order"),
    (["--changes", "{dir}/c.csv"], "--changes applies with --order"),
    (["--tick", "2"], "--tick applies with --order"),
    (["--on-late", "fail"], "--on-late applies with --order"),
    (["--order", "conservative", "--slack", "3"], "--slack applies with --order kslack, not conservative"),
    (["--order", "kslack", "--slack", "3", "--lateness", "4"], "--lateness applies with --order aggressive, not"),
    (["--order", "conservative", "--clock", "global"], "--clock applies with --order kslack or aggressive"),
    (["--order", "kslack", "--slack", "1", "--late-out", "{dir}/l.csv"], "--late-out applies with --on-late output"),
])
def test_an_ordering_option_that_does_nothing_is_refused(events, tmp_path, capsys, option, message):
    """An option that the chosen strategy (or a run without --order) would ignore is a usage
    error, not silently dropped."""
    option = [o.replace("{dir}", str(tmp_path)) for o in option]
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 4", "--events", events, "--no-spark",
                 *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: run: {message}") and err.count("\n") == 1


def test_summary_line_says_float64_only_where_float_mode_changes_something(events, capsys):
    assert main(["run", "-q", "RETURN a PATTERN SEQ(A a, C c) WITHIN 4", "--events", events, "--no-spark",
                 "--order", "conservative", "--numbers", "float"]) == 0
    assert "(in-process), order conservative" in capsys.readouterr().err


def test_late_events_go_to_csv_by_the_extension_in_any_case(events, tmp_path):
    """late.CSV is CSV, as --out reads extensions (it held JSON Lines)."""
    late = tmp_path / "late.CSV"
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, !C, B) WITHIN 10", "--events", events, "--no-spark",
                 "--order", "kslack", "--slack", "1", "--on-late", "output", "--late-out", str(late)]) == 0
    assert [r["ts"] for r in _read(late)] == ["9"]


@pytest.mark.parametrize("value, message", [
    ("-5", "--slack '-5': not a duration"), ("5parsec", "--slack '5parsec': unknown time unit 'parsec'"),
    ("5us", "--slack '5us' is not a whole number of ms")])
def test_a_bad_slack_is_one_line_naming_the_option(tmp_path, capsys, value, message):
    """The message said "not a duration: '-5'" without saying which option held it."""
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\nB,2\n")
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--events", str(events), "--no-spark",
                 "--order", "kslack", f"--slack={value}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: {message}") and err.count("\n") == 1
