"""`cepagg cube`, `cepagg explain --cube` and `--hierarchy` on the command line (in-process)."""

from __future__ import annotations

import json

from cepagg.cli import main

HIER = {"TX": ["D", "A", "G"], "D": ["DBusStation", "DHospital"], "OK": ["T", "O"]}
WORKLOAD = ("-- name: tx_ok\nRETURN COUNT(*) PATTERN SEQ(TX, OK) WITHIN 10\n---\n"
            "-- name: d_t\nRETURN COUNT(*) PATTERN SEQ(D, T) WITHIN 10\n---\n"
            "-- name: g_a_t\nRETURN COUNT(*) PATTERN SEQ(G, A, T) WITHIN 10")
EVENTS = "type,ts\nDBusStation,1\nA,2\nT,3\nG,4\nA,5\nO,6\nDHospital,7\nT,8\n"


def _files(tmp_path):
    (tmp_path / "h.json").write_text(json.dumps(HIER))
    (tmp_path / "w.cep").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_text(EVENTS)
    return str(tmp_path / "w.cep"), str(tmp_path / "h.json"), str(tmp_path / "e.csv")


def test_cube_prints_a_table_per_query_the_hierarchy_and_the_plan(tmp_path, capsys):
    w, h, e = _files(tmp_path)
    assert main(["cube", w, "--hierarchy", h, "--events", e, "--strategy", "bottom-up"]) == 0
    out = capsys.readouterr().out
    assert "== tx_ok: SEQ(TX, OK)" in out and "== g_a_t: SEQ(G, A, T)" in out
    assert "tx_ok > d_t  (concept)" in out and "tx_ok > g_a_t  (both)" in out
    assert "strategy bottom-up" in out
    # SEQ(D, T) within 10: (DBusStation1, T3), (DBusStation1, T8), (DHospital7, T8)
    assert out.split("== d_t")[1].split("(1 row)")[0].split()[-1] == "3"


def test_cube_writes_a_file_per_query(tmp_path, capsys):
    w, h, e = _files(tmp_path)
    assert main(["cube", w, "--hierarchy", h, "--events", e, "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["d_t.csv", "g_a_t.csv", "tx_ok.csv"]


def test_explain_cube_shows_the_reuse_graph_and_the_arborescence(tmp_path, capsys):
    w, h, _ = _files(tmp_path)
    assert main(["explain", w, "--hierarchy", h, "--cube"]) == 0
    out = capsys.readouterr().out
    assert "d_t -> tx_ok: roll-up (cost" in out and "strategy chase: estimated cost" in out


def test_hierarchy_errors_are_one_line(tmp_path, capsys):
    w, _, e = _files(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"TX": ["D"], "D": ["TX"]}')
    assert main(["cube", w, "--hierarchy", str(bad), "--events", e]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has a cycle" in err
    (tmp_path / "typed.csv").write_text("type,ts\nD,1\nT,2\n")
    assert main(["run", "--no-spark", "-q", "RETURN COUNT(*) PATTERN SEQ(D, T) WITHIN 5", "--hierarchy",
                 str(tmp_path / "h.json"), "--events", str(tmp_path / "typed.csv")]) == 1
    assert "'D' is a concept of the hierarchy" in capsys.readouterr().err


def test_cube_refuses_outputs_and_slices_before_any_work(tmp_path, capsys):
    """An output file of the cube that is an input (a query named like the events file), --out
    onto a file, --slice without --plot, an unknown slice and a query a slice cannot draw: exit 2,
    the inputs untouched."""
    w, h, e = _files(tmp_path)
    (tmp_path / "w2.cep").write_text(WORKLOAD.replace("name: tx_ok", "name: e"))
    before = (tmp_path / "e.csv").read_text()
    assert main(["cube", str(tmp_path / "w2.cep"), "--hierarchy", h, "--events", e, "--out", str(tmp_path)]) == 2
    assert (tmp_path / "e.csv").read_text() == before
    assert "is an input" in capsys.readouterr().err
    assert main(["cube", w, "--hierarchy", h, "--events", e, "--out", w]) == 2
    assert main(["cube", w, "--hierarchy", h, "--events", e, "--slice", "d_t"]) == 2
    png = str(tmp_path / "s.png")
    assert main(["cube", w, "--hierarchy", h, "--events", e, "--plot", png, "--slice", "nosuch"]) == 2
    assert "no such query; it has tx_ok, d_t, g_a_t" in capsys.readouterr().err
    (tmp_path / "m.cep").write_text("-- name: m\nPATTERN SEQ(D d, T t) WITHIN 10 RETURN d, t")
    assert main(["cube", str(tmp_path / "m.cep"), "--hierarchy", h, "--events", e, "--plot", png]) == 2
    assert not (tmp_path / "s.png").exists()
