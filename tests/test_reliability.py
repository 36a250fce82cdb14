"""Nothing lost silently, no tracebacks, atomic output, bounded reading (the CLI and cepagg.io)."""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

from cepagg.cli import main
from cepagg.errors import InputError
from cepagg.io import read_events
from cepagg.output import write_result
from cepagg.result import Result
from helpers import CLI_QUERY, cli_run, write_file

SRC = str(Path(__file__).resolve().parents[1] / "src")
EVENTS = "type,ts,x\nA,1000,1\nB,2000,1\nB,3000,1\n"


# -- every row read or rejected --------------------------------------------------------------

def test_an_unterminated_quote_fails_naming_its_line(tmp_path, capsys):
    p = write_file(tmp_path, 'type,ts,x\nA,1000,"oops\nB,2000,1\nB,3000,1\n', "uq.csv")
    with pytest.raises(InputError) as e:
        read_events(p)
    assert e.value.row == 2 and "not closed" in str(e.value)
    assert cli_run("--events", p) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: {p}, row 2: a quoted field") and err.count("\n") == 1


def test_a_quote_left_open_on_the_last_line_fails_too(tmp_path):
    """'2,"B' then the file's last line break: read as an event of type 'B\\n', a silent non-match."""
    p = write_file(tmp_path, 'ts,type\n1,A\n2,"B\n', "last.csv")
    with pytest.raises(InputError) as e:
        read_events(p)
    assert e.value.row == 3 and "not closed" in str(e.value)


def test_quoted_line_breaks_are_records_not_losses(tmp_path):
    p = write_file(tmp_path, 'type,ts,x\nA,1000,"two\nlines"\nB,2000,1\n')
    report = read_events(p)
    assert report.rows_read == 2 and report.batch.table.column("x").to_pylist() == ["two\nlines", "1"]


# -- outputs never destroy inputs, and are checked before the work ------------------------------

@pytest.mark.parametrize("option", ["--out", "--reject", "--changes", "--late-out"])
def test_an_output_that_is_an_input_is_refused_before_reading(tmp_path, capsys, option):
    events = write_file(tmp_path, EVENTS, "ev.jsonl" if option == "--late-out" else "ev.csv")
    if option == "--late-out":
        events.write_text("".join(json.dumps(dict(zip(("type", "ts", "x"), r.split(",")))) + "\n"
                              for r in EVENTS.splitlines()[1:]))
    before = events.read_bytes()
    link = tmp_path / ("link" + events.suffix)
    link.symlink_to(events)  # another name of the same file
    extra = ["--order", "kslack", "--slack", "1"] + (["--on-late", "output"] if option == "--late-out" else [])
    for target in (events, link):
        args = [*(extra if option in ("--changes", "--late-out") else []), option, target]
        assert cli_run("--events", events, *args) == 2
        assert "is an input" in capsys.readouterr().err
    assert events.read_bytes() == before


def test_a_file_of_an_input_directory_is_an_input(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    write_file(d, EVENTS, "a.csv")
    assert cli_run("--events", d, "--out", d / "a.csv") == 2
    assert "is an input" in capsys.readouterr().err


@pytest.mark.parametrize("out, message", [
    ("", "cepagg: --out is empty; give a file name"),  # (was: "--out '' is a directory")
    ("r.csv.gz", "--out '{d}/r.csv.gz': compressed output is not written (.gz); name the file .csv, .jsonl or "
                 ".parquet"),
    ("r.jsonl.zst", "--out '{d}/r.jsonl.zst': compressed output is not written (.zst)"),
    ("r.txt", "--out '{d}/r.txt': cannot tell the output format; name it .csv, .jsonl or .parquet"),
])
def test_an_output_name_that_cannot_be_written_is_refused_naming_the_option(tmp_path, capsys, out, message):
    """A compressed name said only "cannot tell the output format of 'r.csv.gz'", and an empty
    --out was called a directory."""
    events = write_file(tmp_path, EVENTS, "ev.csv")
    target = str(tmp_path / out) if out else ""
    assert cli_run("--events", events, "--out", target) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message.format(d=tmp_path) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ev.csv"]


@pytest.mark.parametrize("out, error", [("missing/r.csv", "no directory"), ("r.csv.gz", "compressed output"),
                                        ("", "is empty")])
def test_write_matches_refuses_an_output_it_cannot_write_before_the_work(tmp_path, out, error):
    """write_matches created its temporary file in a missing directory and failed with
    FileNotFoundError naming that file ('.r.csv.abc123.tmp')."""
    from cepagg.events import EventBatch
    from cepagg.runner import write_matches

    events = EventBatch.from_rows([{"type": "A", "ts": 1}, {"type": "B", "ts": 2}])
    with pytest.raises(ValueError, match=error):
        write_matches("PATTERN SEQ(A a, B b) WITHIN 10 RETURN a, b", events, str(tmp_path / out) if out else "")


# -- atomic output ----------------------------------------------------------------------------

_SLOW_WRITER = textwrap.dedent("""
    import sys, time
    import pyarrow.parquet as pq
    from cepagg.output import write_result
    from cepagg.result import Result

    def half(*a):  # say so, half-way through writing, and wait for the test to kill the process
        print("half", flush=True)
        time.sleep(60)

    class Rows:  # CSV and JSON Lines: rows that stop half-way
        def __iter__(self):
            for i in range(1000):
                if i == 500 and not sys.argv[1].endswith(".parquet"):
                    half()
                yield (i, float(i))
        def __len__(self):
            return 1000

    write_table = pq.ParquetWriter.write_table
    def slow_write_table(self, table, row_group_size=None):  # Parquet: the first row group, then stop
        write_table(self, table.slice(0, 500), row_group_size)
        self.writer._flush() if hasattr(self.writer, "_flush") else None
        half()
    pq.ParquetWriter.write_table = slow_write_table

    write_result(Result(("k", "v"), Rows(), ("int", "float")), sys.argv[1])
""")


@pytest.mark.parametrize("name", ["r.csv", "r.jsonl", "r.parquet"])
def test_a_killed_write_leaves_the_previous_result(tmp_path, name):
    """SIGKILL in the middle of writing: the previous file is intact and no partial file looks
    complete (the temporary file is hidden, named .NAME.*.tmp)."""
    out = tmp_path / name
    write_result(Result(("k", "v"), [(1, 2.0)], ("int", "float")), out)
    before = out.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(out)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})
    assert proc.stdout.readline().strip() == "half"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [name]


def test_an_interrupted_write_leaves_the_previous_result_and_no_temporary_file(tmp_path):
    out = tmp_path / "r.csv"
    write_result(Result(("k",), [(1,)], ("int",)), out)

    def rows():
        yield (2,)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_result(Result(("k",), rows(), ("int",)), out)
    assert out.read_text().splitlines() == ["k", "1"] and [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_ctrl_c_in_a_run_is_one_line(tmp_path, capsys, monkeypatch):
    import cepagg.io

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cepagg.io.csv, "writer", interrupted)  # in the middle of writing the result
    out = write_file(tmp_path, "old\n", "r.csv")
    assert cli_run("--events", write_file(tmp_path, EVENTS), "--out", out) == 130
    assert capsys.readouterr().err == "cepagg: interrupted\n" and out.read_text() == "old\n"


# -- command-line errors: one line, exit status 2 ------------------------------------------------

@pytest.mark.parametrize("args", [
    ["--time-unit", "fortnight"],
    ["--out", "r.txt"],
    ["--out", "{dir}"],
    ["--out", "{dir}/missing/r.csv"],
    ["--schema", "x:decimal"],
    ["--timezone", "Mars/Base"],
    ["--input-time-unit", "fortnight"],
    ["--reject", "{dir}"],
    ["--reject", "{dir}/bad.parquet"],
    ["--reject", ""],  # (was: ignored, and a bad row stopped the run)
    ["--order", "kslack", "--slack", "5 parsecs"],
    ["--order", "kslack"],
    ["--out", "{dir}/r.csv", "--changes", "{dir}/r.csv", "--order", "conservative"],
])
def test_command_line_errors_are_one_line_and_exit_2(tmp_path, capsys, args):
    events = write_file(tmp_path, EVENTS)
    args = [a.format(dir=tmp_path) for a in args]
    code = cli_run("--events", events, *args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("cepagg: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.csv"]


@pytest.mark.parametrize("args, message", [
    (["cube", "--hierarchy", "{h}", "--out", ""], "--out is empty; give a directory name"),
    (["stream", "--out", ""], "--out is empty; give a directory name"),
    (["stream", "--out", "{dir}/o", "--checkpoint", ""], "--checkpoint is empty; give a directory name"),
])
def test_an_empty_output_name_is_refused_before_any_work(tmp_path, capsys, args, message):
    """`cepagg cube --out ''` wrote nothing and said nothing of it; `cepagg stream` took '' to Spark."""
    events = write_file(tmp_path, EVENTS)
    hierarchy = write_file(tmp_path, '{"X": ["A", "B"]}', "h.json")
    args = [a.format(dir=tmp_path, h=hierarchy) for a in args]
    assert main([args[0], "-q", CLI_QUERY, "--events", str(events), *args[1:]]) == 2
    assert capsys.readouterr().err == f"cepagg: {message}\n"


def test_a_query_name_that_would_write_outside_out_is_one_line_before_any_work(tmp_path, capsys):
    events = write_file(tmp_path, EVENTS)
    wl = write_file(tmp_path, f"-- name: ../x\n{CLI_QUERY}\n---\n{CLI_QUERY}\n", "w.cep")
    code = main(["run", str(wl), "--events", str(events), "--no-spark", "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("cepagg: ") and err.count("\n") == 1 and "'../x' cannot name a file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.csv", "w.cep"]


@pytest.mark.parametrize("unit, expected", [("min", "1"), ("h", "1"), ("d", "1")])
def test_every_time_unit_help_offers_runs(tmp_path, capsys, unit, expected):
    events = write_file(tmp_path, "type,ts\nA,1\nB,2\n")
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--events", str(events), "--no-spark",
                 "--engine", "reference", "--time-unit", unit]) == 0
    assert capsys.readouterr().out.split("\n")[2].strip() == expected


def test_a_closed_pipe_is_one_line():
    proc = subprocess.Popen([sys.executable, "-m", "cepagg.cli", "explain", "-q", CLI_QUERY], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": SRC})
    proc.stdout.close()  # like `| head -1` that has read its line
    err = proc.stderr.read().decode()
    assert proc.wait() == 2 and err == "cepagg: output closed before it ended (broken pipe)\n"


def test_an_empty_input_is_0_events_with_a_warning(tmp_path, capsys):
    assert main(["run", "-q", "RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE a.x > 1 WITHIN 10 s", "--events",
                 str(write_file(tmp_path, "")), "--no-spark", "--engine", "reference"]) == 0
    captured = capsys.readouterr()
    assert "warning: " in captured.err and "0 bytes" in captured.err and "cepagg: 0 events" in captured.err
    assert captured.out.split("\n")[2].strip() == "0"


@pytest.mark.parametrize("ext", ["gz", "bz2", "xz", "zst"])
def test_compressed_inputs_are_read(tmp_path, ext, capsys):
    p = tmp_path / f"e.csv.{ext}"
    data = EVENTS.encode()
    if ext == "zst":
        with pa.output_stream(str(p), compression="zstd") as f:
            f.write(data)
    else:
        p.write_bytes({"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[ext](data))
    assert read_events(p).rows_read == 3
    assert cli_run("--events", p) == 0 and capsys.readouterr().out.split("\n")[2].strip() == "2"


def test_a_zip_archive_is_refused(tmp_path, capsys):
    p = tmp_path / "e.csv.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("e.csv", EVENTS)
    assert cli_run("--events", p) == 1
    assert "zip archive" in capsys.readouterr().err


def test_reject_files_are_valid_and_keep_every_field(tmp_path):
    j = write_file(tmp_path, '{"type": "A", "ts": 1, "x": NaN, "y": null}\n{"type": "A", "ts": "x", "x": NaN, '
                        '"y": null}\n', "e.jsonl")
    report = read_events(j, on_bad_row="reject", reject_path=tmp_path / "r.jsonl")

    def no_constants(name):
        raise AssertionError(f"bare {name} in a JSON Lines file")

    rows = [json.loads(line, parse_constant=no_constants) for line in open(report.reject_path)]
    # (a NaN is itself a bad value: both rows are rejected, NaN written as the text "nan")
    assert rows == [{"type": "A", "ts": 1, "x": "nan", "y": None, "_error": rows[0]["_error"]},
                    {"type": "A", "ts": "x", "x": "nan", "y": None, "_error": rows[1]["_error"]}]
    c = write_file(tmp_path, "type,ts,x\nA,1,1\nA,2,1,extra,more\n", "c.csv")
    report = read_events(c, on_bad_row="reject", reject_path=tmp_path / "r.csv")
    rows = list(csv.DictReader(open(report.reject_path)))
    assert rows[0]["_raw"] == "A,2,1,extra,more" and rows[0]["x"] == "1"


def test_json_lines_count_lines_not_objects(tmp_path):
    """Two objects on one line are one bad row (a line is a record), not two events."""
    p = write_file(tmp_path, '{"type": "A", "ts": 1}\n{"type": "B", "ts": 2} {"type": "B", "ts": 3}\n', "e.jsonl")
    with pytest.raises(InputError, match=r"row 2: bad JSON: Extra data"):
        read_events(p)
    report = read_events(p, on_bad_row="reject", reject_path=tmp_path / "r.jsonl")
    assert (report.rows_read, report.rejected, len(report.batch)) == (2, 1, 1)


_SLOW_RUN = textwrap.dedent("""
    import csv, sys, time
    from cepagg.cli import main

    writer = csv.writer

    class SlowWriter:  # writes rows, and half-way says so and waits for the test to kill the process
        def __init__(self, f):
            self.w = writer(f)
        def writerow(self, row):
            self.w.writerow(row)
        def writerows(self, rows):
            for i, row in enumerate(rows):
                if i == 2:
                    sys.stdout.write("half\\n")
                    sys.stdout.flush()
                    time.sleep(60)
                self.w.writerow(row)

    csv.writer = SlowWriter
    sys.exit(main(sys.argv[1:]))
""")


def test_a_killed_run_leaves_the_previous_result(tmp_path):
    """`cepagg run` killed (SIGKILL) while writing --out: the previous result is intact."""
    events = write_file(tmp_path, "type,ts,g\n" + "".join(f"A,{2 * t},{t}\nB,{2 * t + 1},{t}\n" for t in range(1, 6)))
    out = write_file(tmp_path, "previous\n", "r.csv")
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, "run", "-q", "RETURN g, COUNT(*) PATTERN SEQ(A, B) "
                             "WHERE [g] GROUP BY g WITHIN 10", "--events", str(events), "--no-spark", "--engine",
                             "reference", "--out", str(out)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})
    assert proc.stdout.readline().strip() == "half"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["e.csv", "r.csv"]


_SLOW_MATCHES = textwrap.dedent("""
    import sys, time
    import cepagg.matches
    from cepagg.cli import main

    write, flush = cepagg.matches.Sink.write, cepagg.matches.Sink._flush
    calls = []

    def written(self):  # the second piece written: say so, then wait to be killed
        calls.append(1)
        if len(calls) == 2:
            if self.fmt != "parquet":
                self.f.flush()
            sys.stdout.write("half\\n")
            sys.stdout.flush()
            time.sleep(60)

    def slow_write(self, table):  # CSV, JSON Lines: a piece of rows
        write(self, table)
        if self.fmt != "parquet":
            written(self)

    def slow_flush(self):  # Parquet: a row group
        pending = bool(self._pending)
        flush(self)
        if pending:
            written(self)

    cepagg.matches.Sink.write = slow_write
    cepagg.matches.Sink._flush = slow_flush
    cepagg.matches.ROW_GROUP_ROWS = 1
    import cepagg.runner
    cepagg.runner.PIECE_EVENTS = 4
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("name", ["m.csv", "m.jsonl", "m.parquet"])
def test_a_run_killed_while_writing_matches_leaves_the_previous_result(tmp_path, name):
    """`cepagg run` of a RETURN-of-events query killed (SIGKILL) after some matches were written:
    the previous file is intact and nothing under another visible name looks like a result."""
    events = write_file(tmp_path, "type,ts\n" + "".join(f"{'AB'[t % 2]},{t}\n" for t in range(40)))
    out = tmp_path / name
    write_result(Result(("k",), [(1,)], ("int",)), out)
    before = out.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_MATCHES, "run", "-q", "PATTERN SEQ(A a, B b) WITHIN 10",
                             "--events", str(events), "--no-spark", "--engine", "rcep", "--out", str(out)],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": SRC})
    assert proc.stdout.readline().strip() == "half"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["e.csv", name]
    assert any(p.name.startswith(f".{name}.") and p.stat().st_size > 0 for p in tmp_path.iterdir())


@pytest.mark.parametrize("name", ["m.csv", "m.parquet"])
def test_a_run_terminated_while_writing_matches_leaves_the_previous_file_and_no_temporary_one(tmp_path, name):
    """``kill PID`` (SIGTERM) in the middle of writing matches: the process ended at once and
    left its hidden .NAME.*.tmp file; it now unwinds as Ctrl-C does, removing it, with one line."""
    events = write_file(tmp_path, "type,ts\n" + "".join(f"{'AB'[t % 2]},{t}\n" for t in range(40)))
    out = write_file(tmp_path, "old\n", name)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_MATCHES, "run", "-q", "PATTERN SEQ(A a, B b) WITHIN 10",
                             "--events", str(events), "--no-spark", "--engine", "rcep", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})
    assert proc.stdout.readline().strip() == "half"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and err == "cepagg: terminated\n", err
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.csv", name]


def test_ctrl_c_while_writing_matches_leaves_no_file(tmp_path, capsys, monkeypatch):
    import cepagg.matches

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cepagg.matches.Sink, "write", interrupted)
    events = write_file(tmp_path, EVENTS)
    out = write_file(tmp_path, "old\n", "m.csv")
    assert main(["run", "-q", "PATTERN SEQ(A a, B b) WITHIN 10 s", "--events", str(events), "--no-spark",
                 "--out", str(out)]) == 130
    assert capsys.readouterr().err.endswith("cepagg: interrupted\n") and out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.csv", "m.csv"]
