"""Matches written as they are found (cepagg.matches, cepagg run on a RETURN-of-events query):
the streamed files hold exactly the in-memory result, the wide form regroups the long one,
--max-matches stops at N, and outputs that cannot hold the matches are refused before any work.
"""

from __future__ import annotations

import csv
import json
import random
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cepagg.runner as runner
from cepagg.cli import main
from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.matches import Layout, MatchBlock, OutputRefused, check_layout
from cepagg.output import write_result
from cepagg.runner import attach_event_columns, run, write_matches
from generators import cases, random_stream

QUERIES = [
    "PATTERN SEQ(A a, B b+, C c) WHERE [g] AND b.x < NEXT(b).x WITHIN 6 RETURN a, b, c",
    "PATTERN SEQ(a, NOT D d, b+) WHERE a.x > b.x WITHIN 5 SLIDE 2 RETURN b",
    "PATTERN SEQ(A a, C c, NOT (E e, e.x > c.x)) WHERE [g] WITHIN 4",
]
ATTRS = {"x": (0, 5), "g": ["u", "v"], "f": (0, 9, 0.3)}


def _rows_of(path) -> list[tuple]:
    """A written file's rows as tuples of text (the formats' own types compared as text)."""
    s = str(path)
    if s.endswith(".parquet"):
        t = pq.read_table(path)
        return [tuple("" if v is None else str(v) for v in r.values()) for r in t.to_pylist()]
    if s.endswith(".csv"):
        with open(path, newline="") as f:
            return [tuple(r) for r in csv.reader(f)][1:]
    return [tuple("" if v is None else str(v) for v in json.loads(line).values())
            for line in open(path).read().splitlines()]


@pytest.mark.parametrize("ext", ["csv", "jsonl", "parquet"])
def test_streamed_output_equals_the_in_memory_result(tmp_path, monkeypatch, ext):
    """rcep fed a few events at a time (so a file is written in many pieces) writes the rows
    of the whole result, the events' attributes joined."""
    monkeypatch.setattr(runner, "PIECE_EVENTS", 3)
    monkeypatch.setattr(runner, "PIECE_ROWS", 7)  # rows spilled in the middle of an engine's call
    rng = random.Random(16)
    for k in range(cases(30, 300)):
        text = QUERIES[k % len(QUERIES)]
        batch = EventBatch.from_rows(random_stream(rng, "ABCDE", n=rng.randint(5, 40), attrs=ATTRS))
        expected = attach_event_columns(ENGINES["rcep"](compile_query(text)).run(batch), batch)
        write_result(expected, tmp_path / f"e.{ext}")
        written = write_matches(text, batch, str(tmp_path / f"s.{ext}"), engine="rcep")
        got = _rows_of(tmp_path / f"s.{ext}")
        assert sorted(got) == sorted(_rows_of(tmp_path / f"e.{ext}")), text
        assert written.rows == len(expected) and not written.stopped


def test_the_wide_form_regroups_the_long_one():
    rng = random.Random(5)
    for k in range(cases(30, 300)):
        text = QUERIES[k % len(QUERIES)]
        batch = EventBatch.from_rows(random_stream(rng, "ABCDE", n=rng.randint(5, 30), attrs=ATTRS))
        long = run(text, batch, engine="rcep", match_format="long")
        wide = run(text, batch, engine="rcep", match_format="wide")
        cells = long.columns.index("match")
        assert wide.columns[:cells + 1] == long.columns[:cells + 1]
        regrouped = defaultdict(lambda: defaultdict(list))
        for r in long.rows:
            d = dict(zip(long.columns, r))
            regrouped[r[:cells + 1]][d["var"]].append(
                {"event_id": d["event_id"], "type": d["type"], "ts": d["ts"],
                 **{a: d[a] for a in batch.attribute_names}})
        assert len(wide) == len(regrouped)
        for r in wide.rows:
            for var, events in zip(wide.columns[cells + 1:], r[cells + 1:]):
                assert events == regrouped[r[:cells + 1]][var]


def _events_file(tmp_path, n=60):
    rows = "".join(f"{'ABC'[i % 3]},{i},{i % 2},{i % 5}\n" for i in range(n))
    p = tmp_path / "e.csv"
    p.write_text("type,ts,g,x\n" + rows)
    return p


def test_max_matches_stops_at_n_and_says_so(tmp_path, capsys):
    out = tmp_path / "m.parquet"
    assert main(["run", "-q", "PATTERN SEQ(A a, B b, C c) WITHIN 30", "--events", str(_events_file(tmp_path)),
                 "--no-spark", "--out", str(out), "--max-matches", "7", "--match-format", "wide"]) == 0
    table = pq.read_table(out)
    assert table.column_names == ["match", "a", "b", "c"] and table.num_rows == 7
    assert "stopped at 7 matches (--max-matches)" in capsys.readouterr().err


def test_max_matches_beyond_the_matches_writes_them_all(tmp_path, capsys):
    out = tmp_path / "m.jsonl"
    assert main(["run", "-q", "PATTERN SEQ(A a, B b) WITHIN 2", "--events", str(_events_file(tmp_path, 9)),
                 "--no-spark", "--out", str(out), "--max-matches", "100"]) == 0
    assert len({json.loads(line)["match"] for line in out.read_text().splitlines()}) == 3
    assert "stopped" not in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--match-format", "wide", "--out", "{dir}/m.csv"], "CSV cannot hold"),
    (["--max-matches", "0"], "positive number"),
    (["--max-matches", "5", "-q", "RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 3"], "returns aggregates"),
    (["--match-format", "long", "-q", "RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 3"], "returns aggregates"),
    (["--max-matches", "5", "--order", "conservative"], "without --order"),
])
def test_match_options_are_refused_before_reading(tmp_path, capsys, args, message):
    args = [a.replace("{dir}", str(tmp_path)) for a in args]
    query = [] if "-q" in args else ["-q", "PATTERN SEQ(A a, B b) WITHIN 3"]
    assert main(["run", *query, "--events", str(_events_file(tmp_path)), "--no-spark", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("query, options, message", [
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 3", {"match_format": "wide"}, "returns aggregates"),
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 3", {"max_matches": 5}, "returns aggregates"),
    ("PATTERN SEQ(A a, B b) WITHIN 3", {"max_matches": 0}, "positive number"),
    ("PATTERN SEQ(A a, B b) WITHIN 3", {"max_matches": -1}, "positive number"),
    ("PATTERN SEQ(A a, B b) WITHIN 3", {"max_matches": 1, "numbers": "bogus"}, "expected 'exact' or 'float'"),
])
def test_match_options_in_python_are_refused_like_on_the_command_line(query, options, message):
    """runner.run refuses what `cepagg run` refuses, instead of ignoring the option or returning
    no match."""
    from cepagg.errors import UsageError

    batch = EventBatch.from_rows(random_stream(random.Random(1), "AB", n=30, attrs=ATTRS))
    with pytest.raises(UsageError, match=message):
        run(query, batch, **options)
    if "max_matches" in options and "numbers" not in options and options["max_matches"] < 1:
        with pytest.raises(UsageError, match=message):
            write_matches(query, batch, "-", **options)


@pytest.mark.parametrize("how", ["workload", "workload on Spark", "order"])
def test_a_grouped_match_query_is_refused_on_every_path_not_written_with_a_column_lost(tmp_path, capsys, how,
                                                                                      monkeypatch):
    """GROUP BY a.g over events with an attribute g: the long form would hold two columns 'g'
    (b's g may differ from the group's). A workload and --order refuse it as a single query
    does, before writing anything (Parquet kept one of the two and dropped the other)."""
    events = tmp_path / "e.csv"
    events.write_text("type,ts,g\nA,1,u\nB,2,u\nA,3,v\nB,4,v\n")
    query = "RETURN a, b PATTERN SEQ(A a, B b) GROUP-BY a.g WITHIN 5"
    out = tmp_path / "m.parquet"
    if how.startswith("workload"):
        args = ["run", "-q", f"-- name: m\n{query}\n---\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5"]
    else:
        args = ["run", "-q", query, "--order", "conservative"]
    if how != "workload on Spark":
        args.append("--no-spark")
    else:  # refused before Spark starts
        import cepagg.cli as cli

        monkeypatch.setattr(cli, "spark_session", lambda args: pytest.fail("Spark started"))
    assert main([*args, "--events", str(events), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "two columns named 'g'" in err and len(err.splitlines()) == 1
    if how.startswith("workload"):  # (which query of the workload: it did not say)
        assert err.startswith("cepagg: query m: the output would have two columns named 'g'"), err
    assert not list(tmp_path.glob("m*.parquet"))


def test_an_attribute_named_like_a_result_column_is_refused_before_the_work(tmp_path, capsys):
    events = tmp_path / "e.csv"
    events.write_text("type,ts,pos\nA,1,1\nB,2,2\n")
    out = tmp_path / "m.parquet"
    assert main(["run", "-q", "PATTERN SEQ(A a, B b) WITHIN 3", "--events", str(events), "--no-spark",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "two columns named 'pos'" in err and len(err.splitlines()) == 1 and not out.exists()


def test_a_type_parquet_cannot_hold_is_refused():
    table = pa.table({"_id": pa.array([0, 1], pa.int64()), "ts": pa.array([1, 2], pa.int64()),
                      "type": ["A", "B"], "gap": pa.array([None, None], pa.month_day_nano_interval())})
    layout = Layout(compile_query("PATTERN SEQ(A a, B b) WITHIN 3"), EventBatch(table))
    with pytest.raises(OutputRefused, match="Parquet cannot hold column 'gap'"):
        check_layout(layout, "parquet")
    check_layout(layout, "jsonl")  # JSON Lines writes it as text


@pytest.mark.parametrize("engine", ["rcep", "nfa"])
def test_one_event_ending_many_matches_is_written_in_pieces(monkeypatch, engine):
    """An engine that finds matches one by one hands them over every PIECE_ROWS rows, even in
    the middle of one event (here one C ends 120 matches): no piece is much larger, and the
    pieces together are the whole result, in order (rcep hands over blocks of arrays)."""
    monkeypatch.setattr(runner, "PIECE_ROWS", 10)
    rows = [{"type": "A", "ts": t} for t in range(10)] + [{"type": "B", "ts": 10 + t} for t in range(12)]
    rows.append({"type": "C", "ts": 30})
    batch = EventBatch.from_rows(rows)
    text = "PATTERN SEQ(A a, B b, C c) WITHIN 100 RETURN a, b, c"
    pieces = []
    runner.match_feed(ENGINES[engine](compile_query(text)), batch)(pieces.append)
    assert max(len(p) for p in pieces) <= 10 + 2 and len(pieces) >= 360 // 12
    whole = ENGINES[engine](compile_query(text)).run(batch)
    assert sorted(r for p in pieces for r in _rows(p)) == sorted(r[:4] for r in whole.rows)


def _rows(piece) -> list[tuple]:
    """(match, var, pos, event_id) of each row of an engine's piece: tuples or a MatchBlock."""
    if isinstance(piece, MatchBlock):
        n = piece.rows
        return list(zip(piece.match[:n].tolist(), [piece.display[v] for v in piece.var[:n].tolist()],
                        piece.pos[:n].tolist(), piece.event[:n].tolist()))
    return [r[:4] for r in piece]


def test_one_match_is_one_match_on_stderr(tmp_path, capsys):
    """The summary said "stopped at 1 matches" and "1 matches, 1 rows"."""
    assert main(["run", "-q", "PATTERN SEQ(A a, B b, C c) WITHIN 30", "--events", str(_events_file(tmp_path)),
                 "--no-spark", "--max-matches", "1", "--match-format", "wide"]) == 0
    err = capsys.readouterr().err
    assert "stopped at 1 match (--max-matches)" in err and ", 1 match, 1 row in " in err


@pytest.mark.parametrize("out", ["-", "m.jsonl", "m.parquet"])
def test_the_wide_form_reports_one_row_per_match(tmp_path, capsys, out):
    target = out if out == "-" else str(tmp_path / out)
    assert main(["run", "-q", "PATTERN SEQ(A a, B b, C c) WITHIN 30", "--events", str(_events_file(tmp_path)),
                 "--no-spark", "--out", target, "--max-matches", "5", "--match-format", "wide"]) == 0
    captured = capsys.readouterr()
    assert "5 matches, 5 rows" in captured.err
    if out == "-":
        assert "(5 rows)" in captured.out


@pytest.mark.parametrize("how", [[], ["--order", "conservative"], ["workload"]])
def test_long_rows_grouped_by_a_partition_attribute(tmp_path, how):
    """GROUP BY g over [g]: the group column is every matched event's g, so long rows do not
    repeat it after ts (it would be a second column named g); the single query, a workload and
    the ordering layer write the same columns."""
    text = "RETURN a, b PATTERN SEQ(A a, B b) WHERE [g] GROUP BY g WITHIN 6"
    out = tmp_path / "m.csv"
    if how == ["workload"]:
        wl = tmp_path / "w.cep"
        wl.write_text(f"-- name: pairs\n{text}\n---\n-- name: count\nRETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 6\n")
        args, out = [str(wl)], tmp_path / "m.pairs.csv"
        target = tmp_path / "m.csv"
    else:
        args, target = ["-q", text, *how], out
    assert main(["run", *args, "--events", str(_events_file(tmp_path, 12)), "--no-spark", "--out", str(target)]) == 0
    header, *rows = out.read_text().splitlines()
    assert header.split(",") == ["g", "match", "var", "pos", "event_id", "type", "ts", "x"]
    assert rows and all(r.split(",")[0] in ("0", "1") for r in rows)


def test_long_rows_grouped_by_one_variables_attribute_are_refused_with_the_way_out(tmp_path, capsys):
    # GROUP BY a.g: b's g may differ from the group's, so it stays in b's row; wide keeps both
    assert main(["run", "-q", "RETURN a, b PATTERN SEQ(A a, B b) GROUP BY a.g WITHIN 6", "--events",
                 str(_events_file(tmp_path, 12)), "--no-spark", "--out", str(tmp_path / "m.csv")]) == 1
    assert "--match-format wide" in capsys.readouterr().err


@pytest.mark.parametrize("match_format", ["long", "wide"])
def test_parquet_gathers_small_blocks_into_one_row_group(tmp_path, match_format):
    """rcep hands over a block per input piece; Parquet joins consecutive blocks (each with its
    own group cells) into one row group, the rows those of the reference in the same order as
    JSON Lines writes them piece by piece; events given out of time order are sorted first."""
    rng = random.Random(5)
    rows = [{"type": rng.choice("ABC"), "ts": t, "g": rng.choice(["u", "v", "w"])} for t in range(300)]
    batch = EventBatch.from_rows(rows[::-1])  # (stream order reversed: the feed sorts it)
    text = "RETURN g, a, b, c PATTERN SEQ(A a, B b, C c) WHERE [g] GROUP BY g WITHIN 12"
    pq_out, js_out = tmp_path / "m.parquet", tmp_path / "m.jsonl"
    w = write_matches(text, batch, str(pq_out), engine="rcep", match_format=match_format)
    write_matches(text, batch, str(js_out), engine="rcep", match_format=match_format)
    assert w.engine == "rcep" and w.matches > 50
    f = pq.ParquetFile(pq_out)
    assert f.num_row_groups == 1
    table = f.read()
    lines = [json.loads(line) for line in js_out.read_text().splitlines()]
    assert table.to_pylist() == lines and table.num_rows == w.rows
    ref = write_matches(text, batch, str(tmp_path / "r.parquet"), engine="reference", match_format=match_format)
    key = "var" if match_format == "long" else "a"
    canon = sorted(json.dumps({k: v for k, v in r.items() if k != "match"}, sort_keys=True) for r in lines)
    got = sorted(json.dumps({k: v for k, v in r.items() if k != "match"}, sort_keys=True)
                 for r in pq.read_table(tmp_path / "r.parquet").to_pylist())
    assert ref.matches == w.matches and canon == got and key in table.column_names


def test_concatenated_blocks_find_the_cells_they_hold():
    """``MatchBlock.concat`` of blocks with cells: asking the joined block for a cell it holds
    gives that cell's index, not a second copy of it."""
    a, b = MatchBlock.empty(4, ["a"]), MatchBlock.empty(4, ["a"])
    a.cell_index((1,))
    b.cell_index((2,))
    joined = MatchBlock.concat([a, b])
    assert joined.cell_index((1,)) == 0 and joined.cell_index((2,)) == 1
    assert joined.cells == [(1,), (2,)]
