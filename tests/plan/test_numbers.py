"""Float mode (``numbers="float"``): every engine, the A-Seq workload and the in-process drivers
give COUNT, SUM and AVG as floats within 1e-9 relative of exact mode, on random queries and
streams, for whole runs, runs fed in pieces, and partial rows merged afterwards."""

from __future__ import annotations

import math

import pytest

from cepagg.engines import ENGINES, Evaluator
from cepagg.engines.floats import FloatRows, FloatWorkload, final_result, float_row, float_rows, to_float
from cepagg.errors import UsageError
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan, plan_workload, shared_evaluator
from cepagg.plan.split import split_of
from cepagg.runner import run, run_chunks, run_workload
from generators import cases, random_stream, seeded
from helpers import run_in_pieces

QUERIES = [
    "RETURN COUNT(*), SUM(B.x), AVG(A.x), MAX(C.x) PATTERN SEQ(A, B, !D, C) WITHIN 6",
    "RETURN COUNT(*), MIN(A.x), SUM(A.x) PATTERN SEQ(A+, B) WITHIN 5 SLIDE 2",
    "RETURN g, COUNT(*), AVG(C.x) PATTERN SEQ(A, C) WHERE [g] GROUP BY g WITHIN 4 SLIDE 3",
    "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WITHIN 5 EMIT ON CHANGE",
    "RETURN COUNT(*) PATTERN SEQ(NOT D, A, B, NOT C) WITHIN 5",
    "RETURN COUNT(*), SUM(c.x), MAX(b.x) PATTERN SEQ(A a, B b, !D, C c) WHERE a.x < c.x WITHIN 6 SLIDE 2",
    "RETURN COUNT(*), SUM(b.x), MAX(c.x) PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 6",
    "RETURN g, COUNT(*), AVG(a.x) PATTERN SEQ(A a, AND(B b, C c), D d) WHERE [g] GROUP BY g WITHIN 5 SLIDE 2",
    "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B+, C)",
    "RETURN g, COUNT(*), AVG(B.x) PATTERN SEQ(A, B) WHERE [h] GROUP BY g WITHIN 6",
]
ATTRS = {"x": (0, 9, 0.1), "g": ["u", "v"], "h": ["p", "q", "r"]}
FLOAT_FUNCS = ("COUNT", "SUM", "AVG")


def _engines(query):
    return [name for name, cls in ENGINES.items() if cls.refusal(query) is None]


def _check_floats(query, rows, partial=False):
    """Every COUNT, SUM and AVG cell is a float (or None), MIN and MAX are not converted."""
    width = len(rows[0]) - len(query.aggregates) if rows else 0
    for row in rows:
        for a, cell in zip(query.aggregates, row[width:]):
            parts = cell if partial and a.func in ("SUM", "AVG") else (cell,)
            for x in parts:
                if a.func in FLOAT_FUNCS:
                    assert x is None or isinstance(x, float), (a.column, row)
                else:
                    assert not isinstance(x, float), (a.column, row)


@pytest.mark.parametrize("text", QUERIES)
def test_float_mode_equals_exact_on_every_engine(text):
    rng = seeded(text)
    q = compile_query(text)
    engines = _engines(q)
    assert engines
    for _ in range(cases(6, 60)):
        batch = EventBatch.from_rows(random_stream(rng, "ABCD", n=14, attrs=ATTRS))
        for name in engines:
            exact = plan(q, name).build().run(batch)
            got = plan(q, name, "float").build().run(batch)
            assert got.kinds == tuple("float" if k in [a.column for a in q.aggregates if a.func in FLOAT_FUNCS]
                                      else kind for k, kind in zip(q.output_columns, exact.kinds))
            _check_floats(q, got.rows)
            assert not exact.diff(got, rel=1e-9), (name, exact.diff(got))


@pytest.mark.parametrize("text", [t for t in QUERIES if "EMIT" not in t])
def test_float_partial_rows_fed_in_pieces_merge_to_exact(text):
    """As Spark's drivers run an engine: partial rows, in pieces with ``advance``; merged
    afterwards they equal exact mode."""
    rng = seeded(text)
    q = compile_query(text)
    for _ in range(cases(4, 40)):
        batch = EventBatch.from_rows(random_stream(rng, "ABCD", n=14, attrs=ATTRS))
        for name in _engines(q):
            exact = plan(q, name).build().run(batch)
            eng = plan(q, name, "float").build(partial=True)
            assert eng.numbers == "float" and eng.partial
            _, rows = run_in_pieces(eng, batch.sorted(), rng)
            _check_floats(q, rows, partial=True)
            merged = final_result(q, rows, True, batch)
            _check_floats(q, merged.rows)
            assert not exact.diff(merged), name


def test_engines_without_float_kernels_are_wrapped_and_the_others_built_float():
    q = compile_query(QUERIES[0])
    for name in _engines(q):
        eng = plan(q, name, "float").build()
        if ENGINES[name].float_native:
            assert isinstance(eng, ENGINES[name]) and eng.numbers == "float"
        else:
            assert isinstance(eng, FloatRows) and eng.engine.numbers == "exact"


def test_float_mode_leaves_matches_and_min_max_alone():
    rows = random_stream(seeded("matches"), "AB", n=10, attrs={"x": (0, 5)})
    batch = EventBatch.from_rows(rows)
    text = "RETURN a, b PATTERN SEQ(A a, B b) WITHIN 4"
    assert run(text, batch, numbers="float").rows == run(text, batch).rows
    text = "RETURN MIN(A.x), MAX(B.x) PATTERN SEQ(A, B) WITHIN 4"
    exact, got = run(text, batch), run(text, batch, numbers="float")
    assert got.rows == exact.rows and got.kinds == exact.kinds
    assert not isinstance(plan(compile_query(text), numbers="float").build(), FloatRows)


def test_no_match_gives_a_float_zero():
    batch = EventBatch.from_rows([{"type": "A", "ts": 1}])
    for engine in ("aseq", "reference"):
        assert run("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", batch, engine, numbers="float").rows == [(0.0,)]
        got = run("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", batch, engine, numbers="float").rows[0][0]
        assert isinstance(got, float)


def test_a_count_beyond_64_bits_is_close_in_float_mode():
    """2^80 - 1 trends: exact keeps every digit, float the magnitude to 1e-9."""
    rows = [{"type": "A", "ts": i} for i in range(80)] + [{"type": "B", "ts": 80}]
    batch = EventBatch.from_rows(rows)
    text = "RETURN COUNT(*) PATTERN SEQ(A+, B)"
    exact = run(text, batch).rows[0][0]
    got = run(text, batch, numbers="float").rows[0][0]
    assert exact == 2**80 - 1 and isinstance(got, float)
    assert math.isclose(got, exact, rel_tol=1e-9)


def test_conversion_of_cells():
    q = compile_query("RETURN g, COUNT(*), SUM(A.x), MIN(A.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 5")
    assert float_row(q, ("u", 2, (7, 2), 1), partial=True) == ("u", 2.0, (7.0, 2.0), 1)
    assert float_row(q, ("u", 2, None, None), partial=False) == ("u", 2.0, None, None)
    assert to_float(-(10**400)) == -math.inf and to_float(None) is None


@pytest.mark.parametrize("partial", [False, True])
def test_workload_in_float_mode(partial):
    texts = ["RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WITHIN 5 SLIDE 2",
             "RETURN COUNT(*), AVG(C.x), MAX(C.x) PATTERN SEQ(A, B, C) WITHIN 5 SLIDE 2",
             "RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 3 SLIDE 2"]
    qs = [compile_query(t) for t in texts]
    rng = seeded("workload")
    for _ in range(cases(4, 40)):
        batch = EventBatch.from_rows(random_stream(rng, "ABCD", n=16, attrs=ATTRS))
        wl = shared_evaluator(qs, numbers="float", partial=partial)
        assert isinstance(wl, FloatWorkload) and wl.numbers == "float"
        results = wl.run(batch)
        for q, got in zip(qs, results):
            exact = plan(q, "reference").build().run(batch)
            _check_floats(q, got.rows)
            assert not exact.diff(got), exact.diff(got)
        if partial:
            _, tagged = run_in_pieces(wl, batch.sorted(), rng)
            for i, q in enumerate(qs):
                _check_floats(q, [r for k, r in tagged if k == i], partial=True)


def test_runner_workload_and_chunks_in_float_mode():
    rows = random_stream(seeded("runner"), "ABC", n=30, attrs={"x": (0, 9)})
    batch = EventBatch.from_rows(rows)
    text = ("RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B) WITHIN 5\n---\n"
            "RETURN COUNT(*), AVG(A.x) PATTERN SEQ(A+, C) WITHIN 4 SLIDE 2")
    exact, got = run_workload(text, batch), run_workload(text, batch, numbers="float")
    for name in exact:
        assert all(isinstance(v, float) for v in got[name].column("COUNT(*)")) and got[name].rows
        assert not exact[name].diff(got[name])
    query = "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B) WITHIN 5 SLIDE 3"
    chunks = [batch.slice(0, 12), batch.slice(12, 18)]
    result, n, _engine = run_chunks(query, chunks, numbers="float")
    assert n == 30 and result.kinds == ("int", "int", "float", "float")
    assert not run(query, batch).diff(result)
    assert result.rows == run(query, batch, numbers="float").rows


def test_bad_numbers_value_is_a_one_line_error():
    with pytest.raises(UsageError, match="numbers='double': expected 'exact' or 'float'"):
        plan(compile_query("RETURN COUNT(*) PATTERN SEQ(A, B)"), numbers="double")
    with pytest.raises(ValueError, match="expected 'exact' or 'float'"):
        shared_evaluator([compile_query("RETURN COUNT(*) PATTERN SEQ(A, B)")], numbers="double")


def test_explain_says_float_values_are_approximate_and_who_computes_them():
    q = compile_query("RETURN COUNT(*), MAX(B.x) PATTERN SEQ(A, B) WITHIN 5")
    text = plan(q, "reference", "float").explain()
    assert ("numbers: float64, approximate values for COUNT(*); computed exactly by the reference engine, "
            "which has no float64 mode, and converted to float64") in text
    assert "numbers" not in plan(q, "reference").explain()
    matches = compile_query("RETURN a PATTERN SEQ(A a, B b) WITHIN 5")
    assert "numbers: float has no effect: the query returns matches" in plan(matches, numbers="float").explain()
    wp = plan_workload([q, matches], ["counts", "pairs"], numbers="float")
    assert wp.explain().count("numbers:") == 2
    assert split_of(q) == plan(q, numbers="float").split  # the split does not depend on the mode


class _NativeReference(ENGINES["reference"]):
    """A stand-in for an engine with float64 kernels: the reference, its rows made floats."""

    name = "native"
    float_native = True

    def evaluate(self, events):
        rows = super().evaluate(events)
        return float_rows(self.query, rows, self.partial) if self.numbers == "float" else rows


def test_a_float_native_engine_is_built_float_and_not_wrapped(monkeypatch):
    monkeypatch.setitem(ENGINES, "native", _NativeReference)
    q = compile_query(QUERIES[0])
    eng = plan(q, "native", "float").build()
    assert type(eng) is _NativeReference and eng.numbers == "float" and isinstance(eng, Evaluator)
    assert "computed in float64 by the native engine" in plan(q, "native", "float").explain()
    batch = EventBatch.from_rows(random_stream(seeded("native"), "ABCD", n=14, attrs=ATTRS))
    got, exact = eng.run(batch), plan(q, "reference").build().run(batch)
    assert got.kinds[:3] == ("float", "float", "float") and not exact.diff(got)
    _check_floats(q, got.rows)
    empty = plan(q, "native", "float").build(partial=True).run(EventBatch.from_rows([{"type": "A", "ts": 0}]))
    assert empty.rows == [(0.0, None, None, None)] and isinstance(empty.rows[0][0], float)


def test_wrapped_engines_and_workloads_follow_the_protocol(monkeypatch):
    q = compile_query(QUERIES[0])
    assert isinstance(plan(q, "reference", "float").build(), Evaluator)
    assert isinstance(shared_evaluator([q], numbers="float"), Evaluator)
    monkeypatch.setattr(ENGINES["aseq"], "float_native", True)  # the workload is then built float
    wl = shared_evaluator([q], numbers="float")
    assert wl.workload.numbers == "float"
    batch = EventBatch.from_rows(random_stream(seeded("wl"), "ABCD", n=14, attrs=ATTRS))
    assert not plan(q, "reference").build().run(batch).diff(wl.run(batch)[0])
