"""The `cepagg` command end to end (in-process paths; the Spark path is tested under tests/spark)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from cepagg.cli import main


def _csv(tmp_path, text: str, name: str = "events.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


EVENTS = "type,ts,x,g\nA,1,5,u\nB,2,7,u\nC,3,1,v\nA,4,2,u\nB,6,3,v\nC,9,8,u\n"


def test_check_prints_the_normalised_query(capsys):
    assert main(["check", "-q", "RETURN COUNT(*) PATTERN (A, B, !C, D) WITHIN 10s"]) == 0
    out = capsys.readouterr().out
    assert "PATTERN SEQ(A, B, NOT C, D)" in out and "WITHIN 10 seconds" in out


def test_check_reports_a_positioned_error(capsys):
    assert main(["check", "-q", "PATTERN SEQ(A a, B b)\nWHERE NEXT(a).x > 1"]) == 1
    err = capsys.readouterr().err
    assert "Line 2, Col 7" in err and "^^^^" in err and "Traceback" not in err


def test_check_reads_a_query_file(tmp_path, capsys):
    path = tmp_path / "q.cep"
    path.write_text("-- a comment\nRETURN COUNT(*)\nPATTERN Stock S+ WHERE S.price > NEXT(S).price\n")
    assert main(["check", str(path)]) == 0
    assert "(Stock S)+" in capsys.readouterr().out


def test_explain_names_the_engine_and_the_conditions(capsys):
    assert main(["explain", "-q", "RETURN g, COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] AND a.x > 2 "
                 "GROUP BY g WITHIN 5 SLIDE 5"]) == 0
    out = capsys.readouterr().out
    assert "engine:" in out and "partition by: g" in out and "condition [local]: a.x > 2" in out


def test_run_in_process_prints_a_table(tmp_path, capsys):
    events = _csv(tmp_path, EVENTS)
    assert main(["run", "-q", "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B, C) WITHIN 6", "--events", events,
                 "--no-spark", "--engine", "reference"]) == 0
    out = capsys.readouterr().out
    assert "COUNT(*)" in out and "(1 row)" in out
    assert out.split("\n")[2].split() == ["2", "10"]


def test_run_writes_parquet_with_exact_counts(tmp_path):
    events = _csv(tmp_path, EVENTS)
    out = tmp_path / "out.parquet"
    assert main(["run", "-q", "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g", "--events", events,
                 "--no-spark", "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column_names == ["g", "COUNT(*)"]
    assert table.to_pylist() == [{"g": "u", "COUNT(*)": 1}]  # (A1, B2); B6 is in group v


def test_run_returns_matches_with_attributes(tmp_path):
    events = _csv(tmp_path, EVENTS)
    out = tmp_path / "m.jsonl"
    assert main(["run", "-q", "PATTERN SEQ(A a, C c) WHERE a.x > c.x WITHIN 3", "--events", events,
                 "--no-spark", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["match"], r["var"], r["ts"], r["x"]) for r in rows] == [(1, "a", 1, 5), (1, "c", 3, 1)]


def test_bad_row_stops_the_run_with_file_and_line(tmp_path, capsys):
    events = _csv(tmp_path, "type,ts,x\nA,1,5\nB,oops,7\n")
    assert main(["run", "-q", "PATTERN SEQ(A, B)", "--events", events, "--no-spark"]) == 1
    err = capsys.readouterr().err
    assert "events.csv" in err and "3" in err


def test_bad_rows_can_be_rejected_and_counted(tmp_path, capsys):
    events = _csv(tmp_path, "type,ts,x\nA,1,5\nB,oops,7\nB,3,2\n,4,1\n")
    reject = tmp_path / "bad.csv"
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B)", "--events", events, "--no-spark",
                 "--reject", str(reject)]) == 0
    captured = capsys.readouterr()
    assert "2 bad row(s) of 4" in captured.err
    assert captured.out.split("\n")[2].strip() == "1"
    assert len(reject.read_text().strip().splitlines()) == 3  # header + two rows


def test_unknown_engine_is_refused(tmp_path, capsys):
    events = _csv(tmp_path, EVENTS)
    assert main(["run", "-q", "PATTERN SEQ(A, B)", "--events", events, "--no-spark", "--engine", "nope"]) == 2
    assert "engine 'nope': no such engine" in capsys.readouterr().err


def test_stream_takes_the_event_options_of_run():
    from cepagg.cli import build_parser

    parser = build_parser()
    run_options = {a.dest for a in parser._subparsers._group_actions[0].choices["run"]._actions}
    stream = parser._subparsers._group_actions[0].choices["stream"]
    assert {"timezone", "reject", "input_time_unit", "schema", "constant_type"} <= run_options
    assert {"timezone", "reject", "input_time_unit", "schema", "constant_type"} <= {a.dest for a in stream._actions}


def test_stream_checks_its_command_line_before_starting_spark(tmp_path, capsys):
    events = _csv(tmp_path, EVENTS)
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--events", events,
                 "--out", events]) == 2
    assert "is an input" in capsys.readouterr().err
    workload = tmp_path / "w.cep"
    workload.write_text("-- name: ../x\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5\n---\n"
                        "RETURN COUNT(*) PATTERN SEQ(B, A) WITHIN 5\n")
    assert main(["stream", str(workload), "--events", events, "--out", str(tmp_path / "out")]) == 1
    assert "query name '../x' cannot name a file" in capsys.readouterr().err
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--events", events,
                 "--out", str(tmp_path / "out"), "--timezone", "Mars/Base"]) == 2
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--events", events,
                 "--out", str(tmp_path / "out"), "--out-format", "csv"]) == 2
    assert "needs --checkpoint" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_check_refuses_a_bad_schema_in_one_line(capsys):
    assert main(["check", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B)", "--schema", "x:decimal"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cepagg: bad schema entry 'x:decimal'") and err.count("\n") == 1


def test_attached_attributes_keep_their_kinds():
    """One map from Arrow types to kinds: a bool attribute joined to matches is "bool", not "any"."""
    from cepagg.events import EventBatch
    from cepagg.result import Result
    from cepagg.runner import attach_event_columns

    events = EventBatch.from_rows([{"type": "A", "ts": 1, "ok": True, "n": 2, "p": 1.5, "s": "x"}])
    result = Result(("match", "var", "event_id"), [(1, "a", 0)], ("int", "str", "int"))
    got = attach_event_columns(result, events)
    assert got.kinds[3:] == ("bool", "int", "float", "str") and got.rows == [(1, "a", 0, True, 2, 1.5, "x")]


def test_an_os_error_is_one_line(monkeypatch, capsys):
    """A file the process may not read or write (PermissionError, which root never meets here)
    or a full disk is one line naming the file, not a traceback."""
    import cepagg.cli as cli

    def denied(args):
        raise PermissionError(13, "Permission denied", "/data/events.csv")

    monkeypatch.setattr(cli, "cmd_check", denied)
    assert main(["check", "-q", "PATTERN SEQ(A a, B b)"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "cepagg: [Errno 13] Permission denied: '/data/events.csv'"


@pytest.mark.parametrize("option, message", [
    (["--delay", "abc"], "--delay 'abc': expected a duration"),
    (["--delay", "10 parsecs"], "--delay '10 parsecs': expected a duration"),
    (["--delay=-5s"], "--delay '-5s': expected a duration"),
    (["--delay=-5 seconds"], "--delay '-5 seconds': expected a duration"),
    (["--trigger", "5"], "--trigger '5': give a unit"),
    (["--trigger", "often"], "--trigger 'often': expected a duration"),
    (["--rate", "-5"], "--rate -5: give a positive number"),
    (["--events-per-batch", "0"], "--events-per-batch 0: give a positive number"),
    (["--events-per-batch", "-3"], "--events-per-batch -3: give a positive number"),
])
def test_stream_options_spark_cannot_take_are_refused_before_spark_starts(tmp_path, capsys, monkeypatch,
                                                                          option, message):
    """A delay Spark cannot parse raised AnalysisException with a traceback once Spark had started;
    a batch size of 0 was ignored, a negative one moved the source's offset backwards."""
    import cepagg.cli as cli

    monkeypatch.setattr(cli, "spark_session", lambda args: pytest.fail("Spark started"))
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\n")
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, A) WITHIN 5", "--events", str(events),
                 "--out", str(tmp_path / "o"), "--out-format", "console", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: stream: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("delay", ["0 seconds", "10 seconds", "1 minute 30 seconds", "interval 2 hours",
                                   "500 milliseconds", "1.5 SECONDS"])
def test_stream_takes_the_intervals_spark_parses(delay):
    from cepagg.cli import _SPARK_INTERVAL

    assert _SPARK_INTERVAL.fullmatch(delay)


@pytest.mark.parametrize("delay, time_unit, interval", [
    ("10s", "ms", "10000 milliseconds"), ("2 m", "ms", "120000 milliseconds"),
    ("250 ms", "ms", "250 milliseconds"),
    ("7", "ms", "7 milliseconds"), ("7", "s", "7000 milliseconds"),
    ("1 minute 30 seconds", "ms", "1 minute 30 seconds"),
])
def test_stream_delay_takes_the_units_slack_and_queries_take(delay, time_unit, interval):
    """--slack 5s and WITHIN 2 m were accepted while --delay 5s and --delay 2m were refused."""
    from cepagg.cli import _spark_interval

    assert _spark_interval("--delay", delay, time_unit) == interval


def test_a_named_engine_refusing_one_query_of_a_workload_names_the_query(capsys):
    workload = ("-- name: trends\nRETURN COUNT(*) PATTERN A+ WITHIN 5\n---\n"
                "-- name: pairs\nRETURN COUNT(*) PATTERN SEQ(A a, A b) WITHIN 5\n")
    assert main(["explain", "-q", workload, "--engine", "greta"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cepagg: engine 'greta' cannot evaluate") and err.endswith("(query pairs)\n")


@pytest.mark.parametrize("option, message", [
    (["--slack", "3"], "--slack applies with --order"),
    (["--order", "conservative", "--lateness", "3"], "--lateness applies with --order aggressive, not conservative"),
    (["--on-late", "output"], "--on-late output applies with --order"),
    (["--late-out", "{dir}/late"], "--late-out applies with --on-late output"),
])
def test_stream_refuses_ordering_options_that_would_do_nothing(tmp_path, capsys, monkeypatch, option, message):
    import cepagg.cli as cli

    monkeypatch.setattr(cli, "spark_session", lambda args: pytest.fail("Spark started"))
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\n")
    option = [o.replace("{dir}", str(tmp_path)) for o in option]
    assert main(["stream", "-q", "RETURN COUNT(*) PATTERN SEQ(A, A) WITHIN 5", "--events", str(events),
                 "--out", str(tmp_path / "o"), "--out-format", "console", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: stream: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("master", ["bogus://x", "local[0]", "local[abc]", "spark:/h:7077"])
def test_a_master_spark_cannot_start_with_is_one_line_before_a_jvm_starts(tmp_path, capsys, master):
    """Spark refused such a master with a JVM stack trace followed by a Python traceback."""
    events = _csv(tmp_path, EVENTS)
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B)", "--events", events, "--master", master]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: master {master!r}: expected local") and err.count("\n") == 1


@pytest.mark.parametrize("option, message", [(["--rows", "0"], "demo: --rows 0: give a positive"),
                                             (["--rows=-3"], "demo: --rows -3: give a positive"),
                                             (["--master", "bogus://x"], "master 'bogus://x': expected local")])
def test_demo_refuses_bad_options_before_loading_data(monkeypatch, capsys, option, message):
    """--rows -3 printed every row but the last three; a bad master was seen only after loading."""
    import cepagg.datasets.nycflights as nyc

    monkeypatch.setattr(nyc, "load", lambda: pytest.fail("data loaded"))
    assert main(["demo", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: {message}") and err.count("\n") == 1


def test_a_query_file_and_query_text_together_are_refused(tmp_path, capsys):
    """-q won and the file was ignored without a word."""
    path = tmp_path / "q.cep"
    path.write_text("RETURN COUNT(*) PATTERN SEQ(A, B)")
    assert main(["check", str(path), "-q", "PATTERN A"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cepagg: give a query file or -q TEXT, not both") and err.count("\n") == 1


@pytest.mark.parametrize("command", ["run", "explain", "stream"])
def test_every_engine_option_says_what_it_takes(command, capsys):
    """`cepagg explain --help` and `cepagg stream --help` listed --engine without a word."""
    assert main([command, "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--engine ENGINE auto (default): the fastest engine that accepts the query" in out
    if command == "stream":
        assert "--out-format {parquet,csv,json,console} format of the files written to --out" in out


def test_attributes_whose_names_are_no_plain_name_are_written_in_backticks(tmp_path, capsys):
    """Columns such as `trip id` and `price ($)` were read but no query could name them."""
    events = tmp_path / "e.csv"
    events.write_text("type,ts,trip id,price ($)\nA,1,t1,5\nB,2,t1,6\nB,3,t1,7\nA,4,t2,1\nB,5,t2,2\n")
    out = tmp_path / "r.csv"
    assert main(["run", "-q", "PATTERN SEQ(A a, B b+) WHERE [`trip id`] AND b.`price ($)` > a.`price ($)` "
                 "WITHIN 10 ms GROUP BY `trip id` RETURN `trip id`, COUNT(*), SUM(b.`price ($)`) AS s",
                 "--events", str(events), "--no-spark", "--out", str(out)]) == 0
    assert out.read_text().splitlines() == ["trip id,COUNT(*),s", "t1,3,26", "t2,1,2"]


def test_explain_strategy_without_cube_is_refused(capsys):
    """`cepagg explain W --strategy top-down` printed the planner's plan, the strategy ignored."""
    assert main(["explain", "-q", "PATTERN SEQ(A, B) WITHIN 5 RETURN COUNT(*)", "--strategy", "top-down"]) == 2
    assert capsys.readouterr().err == "cepagg: explain: --strategy top-down shows an E-Cube plan; add --cube\n"
    assert main(["explain", "-q", "PATTERN SEQ(A, B) WITHIN 5 RETURN COUNT(*)", "--cube"]) == 0
    assert "strategy chase:" in capsys.readouterr().out


def test_query_and_hierarchy_files_with_a_byte_order_mark_are_read(tmp_path, capsys):
    """Files saved as "UTF-8 with BOM" (Windows editors) were refused: "Unexpected character
    '\\ufeff'. Line 1, Col 1.", and a workload's first name line was not seen."""
    workload = tmp_path / "w.cep"
    workload.write_bytes("-- name: first\r\nPATTERN SEQ(A a, B b) WITHIN 10 RETURN COUNT(*)\r\n;;\r\n"
                         "PATTERN SEQ(X a, B b) WITHIN 10 RETURN COUNT(*)\r\n".encode("utf-8-sig"))
    hierarchy = tmp_path / "h.json"
    hierarchy.write_bytes('{"X": ["A"]}'.encode("utf-8-sig"))
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\nB,2\n")
    assert main(["run", str(workload), "--hierarchy", str(hierarchy), "--events", str(events), "--no-spark",
                 "--out", str(tmp_path / "r.csv")]) == 0
    assert (tmp_path / "r.first.csv").read_text().splitlines() == ["COUNT(*)", "1"]
    assert (tmp_path / "r.q1.csv").read_text().splitlines() == ["COUNT(*)", "1"]
