"""cepagg bench matches: its queries are rcep's and nfa's, a measurement counts what it wrote,
the table flags counts that differ, and the peers run the pattern of each workload."""

from __future__ import annotations

import json

import pytest

from cepagg.bench import matches as bench
from cepagg.engines import ENGINES
from cepagg.io import read_events
from cepagg.lang import compile_query
from cepagg.runner import run


def test_the_queries_are_evaluated_by_rcep_and_nfa():
    for name, text in bench.QUERIES.items():
        q = compile_query(text.format(w=100))
        assert q.returns_matches == (name != "query1-agg")
        assert ENGINES["rcep"].refusal(q) is None and ENGINES["nfa"].refusal(q) is None
        assert ENGINES["rcep"](q).compiled_refusal is None, name


def test_an_aggregate_measurement_counts_the_matches_it_folded(tmp_path, capsys, monkeypatch):
    """query1-agg: the count is the sum of COUNT(*) over the keys, the same for rcep, its Python
    join (rcep-python) and the reference."""
    from cepagg.engines.rcep.engine import Rcep

    monkeypatch.setattr(Rcep, "compiles", Rcep.compiles)  # (rcep-python switches it off: restored after)
    csv, _ = bench._data("query1-agg", 300, tmp_path)
    query = bench.QUERIES["query1-agg"].format(w=300)
    counts = []
    for engine in ("rcep", "reference", "rcep-python"):
        assert bench.child(engine, str(csv), query, str(tmp_path / "m.parquet")) == 0
        line = capsys.readouterr().out.strip().splitlines()[-1]
        counts.append(json.loads(line[len(bench.MARK):])["count"])
    assert counts[0] == counts[1] == counts[2] > 0


def test_a_measurement_counts_the_matches_it_wrote(tmp_path, capsys):
    csv, _ = bench._data("seq3", 300, tmp_path)
    query = bench.QUERIES["seq3"].format(w=400)
    assert bench.child("nfa", str(csv), query, str(tmp_path / "m.parquet")) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(line[len(bench.MARK):])
    batch = read_events(str(csv)).batch
    assert result["count"] == len(set(run(query, batch, engine="rcep").column("match"))) > 0
    assert not (tmp_path / "m.parquet").exists()


@pytest.mark.parametrize("name, n, window", [("seq3", 400, 300), ("kleene", 400, 600),
                                             ("query1", 300, 300), ("query1-any", 300, 300)])
def test_the_peers_count_the_pattern_of_each_workload(tmp_path, name, n, window):
    """Each peer workload (keyed, skip-till-any-match) is the COUNT(*) of the bench's query of
    that name on the same file: the peers' texts are checked against this one query."""
    wl = bench.peer_workload(name, n)
    csv, spec = bench._data(name, n, tmp_path)
    assert spec == wl.data
    batch = read_events(str(csv)).batch
    counted = run(wl.cepagg_query(window, "skip-till-any-match", True), batch).rows[0][0]
    matches = run(bench.QUERIES[name].format(w=window), batch, engine="rcep")
    assert counted == len(set(matches.column("match"))) > 0


def test_core_cannot_state_query1_and_flink_cep_reads_the_partial_match():
    for name in ("query1", "query1-any"):
        wl = bench.peer_workload(name, 100)
        assert "syntax error" in wl.ceql(100, "skip-till-any-match", True).reason
    assert bench.peer_workload("query1", 100).flink_cep_spec("skip-till-any-match") == (
        "*;*+@price>v0.price,price>prev.price;*@price<first(v1).price", "any")
    assert bench.peer_workload("query1-any", 100).flink_cep_spec("skip-till-any-match") == (
        "*;*+@price>v0.price;*@price<first(v1).price", "any")


def test_the_table_flags_counts_that_differ():
    ok = {"status": "ok", "count": 5, "seconds": 1.0, "peak_rss_mb": 100.0}
    rows = [{"workload": "seq3", "window_ms": 10, "runs": {"rcep": ok, "core": dict(ok, count=6)}},
            {"workload": "seq3", "window_ms": 20, "runs": {"rcep": ok, "nfa": ok}}]
    for r in rows:
        r["agree"] = bench._agree(r["runs"])
    rows[1]["runs"]["core"] = {"status": "inexpressible", "detail": "unary filters"}
    table = bench.markdown(rows)
    assert "counts differ" in table.splitlines()[2] and "counts differ" not in table.splitlines()[3]
    assert table.splitlines()[3].endswith("| cannot express |")
