"""Workload files (queries separated by --- or ;;, optional -- name:) and the CLI on them."""

from __future__ import annotations

import pytest

from cepagg.cli import main
from cepagg.errors import QueryError
from cepagg.lang.workload import compile_workload, is_workload, split_workload

TEXT = """-- name: first
PATTERN SEQ(A, B) RETURN COUNT(*) WITHIN 5
---
-- a plain comment
PATTERN SEQ(A, B, C) RETURN COUNT(*) WITHIN 5
;;
-- name: kleene
PATTERN SEQ(A+, B) RETURN COUNT(*)
---
-- only a comment
"""


def test_split_and_names():
    blocks = split_workload(TEXT)
    assert [n for n, _ in blocks] == ["first", "q1", "kleene"]
    assert "-- a plain comment" in blocks[1][1]
    assert is_workload(TEXT) and not is_workload("PATTERN A RETURN COUNT(*)")


def test_errors_name_the_query():
    with pytest.raises(QueryError, match="In query 'q1'"):
        compile_workload("PATTERN SEQ(A, B) RETURN COUNT(*)\n---\nPATTERN SEQ(A, RETURN COUNT(*)")
    with pytest.raises(QueryError, match="two queries 'x'"):
        split_workload("-- name: x\nPATTERN A RETURN COUNT(*)\n---\n-- name: x\nPATTERN B RETURN COUNT(*)")


def test_cli_explain_and_run(tmp_path, capsys):
    wl = tmp_path / "w.cepq"
    wl.write_text(TEXT)
    ev = tmp_path / "e.csv"
    ev.write_text("type,ts\nA,1\nB,2\nA,3\nC,4\nB,5\nC,6\n")
    assert main(["explain", str(wl)]) == 0
    out = capsys.readouterr().out
    assert "-- first: engine aseq (shared plan)" in out and "not aseq:" in out and "unit 0 (PreTree" in out
    assert main(["run", str(wl), "--events", str(ev)]) == 0
    out = capsys.readouterr().out
    assert out.index("== first") < out.index("== q1") < out.index("== kleene")
    assert main(["run", str(wl), "--events", str(ev), "--out", str(tmp_path / "r.csv")]) == 0
    assert (tmp_path / "r.first.csv").read_text().splitlines() == ["COUNT(*)", "3"]
    assert (tmp_path / "r.kleene.csv").exists()


@pytest.mark.parametrize("text, message", [
    ("-- name: lost\n---\nRETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 5", "names a query 'lost' but its block holds no"),
    ("-- name: a\n-- name: b\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5\n---\n"
     "RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 5", "names one query twice: 'a' and 'b'"),
])
def test_a_name_without_its_query_or_a_second_name_is_an_error(text, message):
    """The named query was skipped (its name lost, or the next block's position taken) or
    the second name dropped, silently."""
    with pytest.raises(QueryError, match=message):
        split_workload(text)


@pytest.mark.parametrize("names, message", [
    (("Up", "up"), "names two queries 'Up' and 'up'"),
    (("a/b", "c"), "query name 'a/b' cannot name a file"),
    (("..", "c"), "query name '..' cannot name a file"),
    (("x:y", "c"), "query name 'x:y' cannot name a file"),
    (("rise 1", "c"), "query name 'rise 1' cannot name a file"),
])
def test_names_that_would_clash_or_escape_as_output_files_are_refused(names, message):
    """A query's name names its output file: two names differing only in case would share one
    file on a case-insensitive file system, and a slash would write outside the directory."""
    text = "\n---\n".join(f"-- name: {n}\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5" for n in names)
    with pytest.raises(QueryError, match=message):
        split_workload(text)


def test_names_with_dots_and_dashes_are_accepted():
    text = ("-- name: rise_1.b\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5\n---\n"
            "-- name: Rise-2\nPATTERN A RETURN COUNT(*)")
    assert [n for n, _ in split_workload(text)] == ["rise_1.b", "Rise-2"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_error_gives_its_line_in_the_workload_file(newline):
    """The position of a query's error is the line of the file (a query's own line 2 on the
    file's line 8 was reported as line 2), with that line and a caret under the problem."""
    text = newline.join(["-- name: good", "PATTERN SEQ(A a, B b) WITHIN 10 ms RETURN COUNT(*)", "---",
                         "-- a comment", "", "-- name: bad", "PATTERN SEQ(A a, B b)",
                         "  WHERE a.x > NEXT(b).x", "  WITHIN 10 ms RETURN COUNT(*)", ""])
    with pytest.raises(QueryError) as e:
        compile_workload(text)
    assert e.value.line == 8 and e.value.column == 15
    assert str(e.value).splitlines() == [
        "In query 'bad': NEXT(b) is only meaningful for a variable inside a Kleene pattern (b+). Line 8, Col 15.",
        "    WHERE a.x > NEXT(b).x", "                ^^^^^^^^^"]
