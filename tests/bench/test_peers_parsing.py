"""The peer runner without the peers: parsing recorded outputs, the workload translations,
the subprocess mechanics and the report. Nothing here installs or runs Flink or CORE."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cepagg.bench.peers import core as core_script
from cepagg.bench.peers import report
from cepagg.bench.peers.environments import compile_cep, default_cache
from cepagg.bench.peers.runner import (
    Outcome,
    ParseError,
    Runner,
    engine_ms,
    parse_result,
    run_limited,
    with_rss,
)
from cepagg.bench.peers.workloads import DataSpec, Inexpressible, by_name, query1, workloads, write_data
from cepagg.lang import compile_query

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


# ------------------------------------------------------------------ recorded outputs

def test_flink_cep_output():
    r = parse_result(sample("flink_cep.stdout"))
    assert r["count"] == 14 and r["peer"] == "flink-cep"
    assert engine_ms(r) == 3021  # the job's net run time, not the MiniCluster start


def test_flink_sql_output():
    r = parse_result(sample("flink_sql.stdout"))
    assert r["count"] == 1
    assert engine_ms(r) == 2456


def test_core_output_and_its_complex_events():
    r = parse_result(sample("core.stdout"))
    assert r["count"] == 14 and engine_ms(r) == pytest.approx(102.229)
    # CORE's get_output text: one line per complex event, "[start,end], (...)".
    assert core_script.count_complex_events(sample("core_get_output.txt")) == 14
    assert core_script.count_complex_events("") == 0


def test_cepagg_outputs():
    r = parse_result(sample("cepagg.stdout"))
    assert r["count"] == 14 and r["engine"] == "reference"
    u = parse_result(sample("cepagg_spark_unavailable.stdout"))
    assert "not available yet" in u["unavailable"]


def test_parse_errors():
    with pytest.raises(ParseError):
        parse_result("Exception in thread main java.lang.OutOfMemoryError\n")
    with pytest.raises(ParseError):
        parse_result("PEER-RESULT {not json\n")
    with pytest.raises(ParseError):
        parse_result('PEER-RESULT {"elapsed_ms": 3}\n')
    # the last result line wins; log noise around it is ignored
    assert parse_result('x\nPEER-RESULT {"count": 1}\nlog\nPEER-RESULT {"count": 2}\n')["count"] == 2


# ------------------------------------------------------------------ translations

W = by_name("tiny")


def test_cepagg_queries_compile():
    for wl in workloads("tiny"):
        for st in wl.strategies:
            for keyed in (False, True):
                compile_query(wl.cepagg_query(100, st, keyed), schema={"key": "str", "price": "float"})


def test_cepagg_query_text():
    assert W["neg"].cepagg_query(20, "skip-till-any-match", True) == \
        "RETURN COUNT(*) PATTERN SEQ(A, !N, B, C) WHERE [key] WITHIN 20 ms"
    assert W["downtrend"].cepagg_query(50, "skip-till-next-match", False) == \
        "RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price WITHIN 50 ms " \
        "STRATEGY skip-till-next-match"


def test_flink_cep_specs():
    assert W["seq5"].flink_cep_spec("skip-till-any-match") == ("A;B;C;D;E", "any")
    assert W["neg"].flink_cep_spec("skip-till-next-match") == ("A;!N;B;C", "next")
    assert W["kleene"].flink_cep_spec("contiguous") == ("A;B+;C", "strict")
    assert W["downtrend"].flink_cep_spec("skip-till-any-match") == ("Stock+<price", "any")


def test_conditions_between_variables():
    """RCEP's Query 1: untyped variables, conditions on another variable, FIRST and NEXT."""
    q1 = query1(DataSpec("stock", "stock", 100, 2, ("Stock",), seed=7), (100,))
    assert q1.cepagg_query(100, "skip-till-any-match", True) == (
        "RETURN COUNT(*) PATTERN SEQ(a, b+, c) WHERE [key] AND b.price > a.price AND "
        "b.price < NEXT(b).price AND c.price < FIRST(b).price WITHIN 100 ms")
    assert q1.flink_cep_spec("skip-till-any-match") == (
        "*;*+@price>v0.price,price>prev.price;*@price<first(v1).price", "any")
    assert isinstance(q1.ceql(100, "skip-till-any-match", True), Inexpressible)
    assert isinstance(q1.flink_sql(100, "skip-till-any-match", True), Inexpressible)


def test_flink_sql_text():
    assert W["kleene"].flink_sql(100, "contiguous", True) == (
        "SELECT COUNT(*) AS n FROM events MATCH_RECOGNIZE (PARTITION BY `key` ORDER BY rt "
        "MEASURES FIRST(V0.ts) AS t0 ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW "
        "PATTERN (V0 V1+ V2) WITHIN INTERVAL '0.100' SECOND "
        "DEFINE V0 AS V0.`type` = 'A', V1 AS V1.`type` = 'B', V2 AS V2.`type` = 'C') AS m")
    assert W["neg"].flink_sql(20, "skip-till-next-match", False) == (
        "SELECT COUNT(*) AS n FROM events MATCH_RECOGNIZE (ORDER BY rt "
        "MEASURES FIRST(V0.ts) AS t0 ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW "
        "PATTERN (V0 Z0*? V1 Z1*? V2) WITHIN INTERVAL '0.020' SECOND "
        "DEFINE V0 AS V0.`type` = 'A', Z0 AS Z0.`type` NOT IN ('B', 'N'), "
        "V1 AS V1.`type` = 'B', Z1 AS Z1.`type` NOT IN ('C'), V2 AS V2.`type` = 'C') AS m")
    for name, st in (("seq3", "skip-till-any-match"), ("kleene", "skip-till-next-match"),
                     ("downtrend", "contiguous")):
        t = W[name].flink_sql(100, st, False)
        assert isinstance(t, Inexpressible) and t.reason


def test_ceql_text():
    assert W["kleene"].ceql(100, "skip-till-any-match", True) == \
        "SELECT ALL * FROM S WHERE (A ; B+ ; C) PARTITION BY [key] WITHIN 100 [ts] CONSUME BY NONE"
    assert W["kleene"].ceql(20, "contiguous", False) == \
        "SELECT ALL * FROM S WHERE (A : B:+ : C) WITHIN 20 [ts] CONSUME BY NONE"
    assert W["seq3"].ceql_declaration().startswith(
        "CREATE STREAM S { EVENT A { key:string, ts:int, price:double }, EVENT B {")
    assert W["neg"].ceql(20, "contiguous", True) == \
        "SELECT ALL * FROM S WHERE (A : B : C) PARTITION BY [key] WITHIN 20 [ts] CONSUME BY NONE"
    for name, st in (("neg", "skip-till-any-match"), ("downtrend", "skip-till-any-match"),
                     ("seq3", "skip-till-next-match")):
        assert isinstance(W[name].ceql(100, st, False), Inexpressible)


def test_generated_data_is_fixed_and_has_distinct_times(tmp_path):
    spec = DataSpec("t", "types", 300, 3, ("A", "B", "C"), seed=5)
    p = write_data(spec, tmp_path)
    lines = p.read_text().splitlines()
    assert lines[0] == "ts,type,key,price" and len(lines) == 301
    ts = [int(x.split(",")[0]) for x in lines[1:]]
    assert all(a < b for a, b in zip(ts, ts[1:]))
    again = write_data(spec, tmp_path / "again")
    assert again.read_text() == p.read_text()
    s = write_data(DataSpec("s", "stock", 50, 2, ("Stock",), seed=1), tmp_path)
    assert s.read_text().splitlines()[1].split(",")[1] == "Stock"


# ------------------------------------------------------------------ mechanics

def test_run_limited_result_rss_and_timeout():
    out, rc, wall, peak, _ = run_limited(with_rss([sys.executable, "-c",
                                                   "print('PEER-RESULT {\"count\": 5}')"]), 30)
    assert rc == 0 and parse_result(out)["count"] == 5 and peak and peak > 1
    out, rc, wall, peak, _ = run_limited(with_rss([sys.executable, "-c", "import time; time.sleep(30)"]), 0.5)
    assert rc is None and wall < 10


def test_cepagg_side_counts_as_the_runner_and_times_reading_and_evaluating(tmp_path):
    """cepagg's own measurement (in this process): the same count as cepagg.runner.run on the
    whole file, and short runs repeated to an odd count (the median run kept)."""
    from cepagg.bench.peers.cepagg_run import SCHEMA, run_inprocess
    from cepagg.io import read_events
    from cepagg.runner import run

    p = write_data(DataSpec("t", "types", 3000, 3, ("A", "B", "C"), seed=5), tmp_path)
    query = W["seq3"].cepagg_query(40, "skip-till-any-match", True)
    got = run_inprocess(str(p), query, "auto")
    whole = run(query, read_events(p, schema=SCHEMA).batch)
    assert got["count"] == whole.rows[0][0] > 0 and got["events"] == 3000
    assert got["runs"] in (3, 5)  # milliseconds each: repeated, to an odd count


def test_runner_reports_inexpressible_and_unavailable(tmp_path):
    r = Runner(None, tmp_path, 5)
    o = r.run("flink-cep", W["seq3"], "skip-till-any-match", False, 20)
    assert o.status == "unavailable"
    cmd = r.command("cepagg", W["seq3"], "contiguous", True, 20, tmp_path / "x.csv")
    assert "--query" in cmd and cmd[cmd.index("--query") + 1].endswith("STRATEGY contiguous")


def test_cache_location(monkeypatch, tmp_path):
    monkeypatch.setenv("CEPAGG_PEERS_CACHE", str(tmp_path))
    assert default_cache() == tmp_path
    assert callable(compile_cep)


# ------------------------------------------------------------------ report

def _o(engine, window, count, secs, status="ok", **kw):
    return Outcome(engine=engine, workload="seq3", strategy="skip-till-any-match", keyed=False,
                   window_ms=window, status=status, count=count, engine_s=secs, wall_s=secs,
                   peak_rss_mb=100.0, events=1000, **kw)


def test_report_ratios_agreement_and_the_ends_of_each_series(tmp_path):
    outs = [_o("cepagg", 20, 10, 0.01), _o("flink-cep", 20, 10, 2.0), _o("core", 20, 11, 0.5),
            _o("cepagg", 100, 2_000_000, 0.02), _o("flink-cep", 100, 2_000_000, 30.0),
            _o("core", 100, 2_000_000, 1.0),
            _o("cepagg", 500, 9, 0.05), _o("flink-cep", 500, None, None, status="timeout")]
    comps = report.comparisons(outs)
    assert {(c.peer, c.window_ms): round(c.speedup) for c in comps} == \
        {("flink-cep", 20): 200, ("core", 20): 50, ("flink-cep", 100): 1500, ("core", 100): 50}
    assert [(c.peer, c.peer_count) for c in report.disagreements(outs)] == [("core", 11)]
    assert report.end_ratios(outs) == [
        ("seq3/any/nokey: vs Flink CEP at the smallest window (20 ms)", "200×"),
        ("seq3/any/nokey: vs Flink CEP at the largest window Flink CEP finishes (100 ms)", "1,500×"),
        ("lowest vs CORE where it enumerates >10⁶ matches (1 points)", "50× at seq3/any/nokey/100 ms")]
    md = report.markdown(outs, by_name("tiny"))
    assert "| 20 ms | 10 |" in md and "**≠ 11**" in md and "timeout" in md
    f = tmp_path / "results.jsonl"
    f.write_text("".join(o.to_json() + "\n" for o in outs))
    assert [o.count for o in report.load(f)] == [o.count for o in outs]
    doc = tmp_path / "peers.md"
    doc.write_text(f"intro\n{report.START}\nold\n{report.END}\noutro\n")
    report.update_docs(doc, "new body")
    assert doc.read_text() == f"intro\n{report.START}\nnew body\n{report.END}\noutro\n"
    assert json.loads(outs[0].to_json())["engine"] == "cepagg"


def test_probes_are_valid_queries():
    from cepagg.bench.peers.probes import PROBES

    for p in PROBES:
        compile_query(p.workload.cepagg_query(p.window_ms, p.strategy, False),
                      schema={"key": "str", "price": "float"})
        assert p.rows and all(isinstance(r[0], int) for r in p.rows)
    edge = next(p for p in PROBES if p.name == "window-edge-contiguous")
    assert "WITHIN INTERVAL '0.010' SECOND" in edge.workload.flink_sql(10, "contiguous", False)


# ------------------------------------------------------------------ refining a peer's limit

class _LimitRunner:
    """Stands in for the Runner: the peer finishes windows below ``limit`` ms, cepagg all."""

    def __init__(self, limit: int):
        self.limit, self.ran = limit, []

    def run(self, engine, wl, strategy, keyed, window):
        self.ran.append((engine, window))
        ok = engine == "cepagg" or window < self.limit
        return Outcome(engine, wl.name, strategy, keyed, window, "ok" if ok else "timeout",
                       count=1 if ok else None, engine_s=0.01 if ok else None,
                       wall_s=1.0)


def test_refine_bisects_between_the_last_window_finished_and_the_first_not():
    from cepagg.bench.peers import _refine, nice_window

    wl = by_name("tiny")["seq3"]
    st = "skip-till-any-match"
    seen = [Outcome(e, wl.name, st, False, w, s) for e, w, s in
            [("cepagg", 100, "ok"), ("flink-cep", 100, "ok"), ("cepagg", 200, "ok"),
             ("flink-cep", 200, "timeout"), ("flink-cep", 500, "skipped")]]
    runner = _LimitRunner(limit=150)
    new = list(_refine(runner, wl, st, False, "flink-cep", seen, steps=3))
    # 100..200 -> 140 (finished) -> 140..200 -> 170 (not) -> 140..170 -> 150 (not, at the limit)
    assert runner.ran == [("cepagg", 140), ("flink-cep", 140), ("cepagg", 170), ("flink-cep", 170),
                          ("cepagg", 150), ("flink-cep", 150)]
    assert [o.status for o in new if o.engine == "flink-cep"] == ["ok", "timeout", "timeout"]
    # the ratio at the peer's limit moves to the refined window, with cepagg measured there
    at_limit = [g for g in report.end_ratios(seen + new) if "largest" in g[0]]
    assert "(140 ms)" in at_limit[0][0]
    # nothing to refine: the peer never timed out, or never finished
    assert list(_refine(runner, wl, st, False, "flink-cep", seen[:3], steps=3)) == []
    assert nice_window(149.9) == 150 and nice_window(7.4) == 7
