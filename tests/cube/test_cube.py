"""E-Cube: refinement, the OLAP operations, Chase's arborescence, and every strategy against
``independent`` (which runs each query alone) on random hierarchies, workloads and streams."""

from __future__ import annotations

import random

import pytest
from cubes import LEAVES, RFID, random_hierarchy, random_workload

from cepagg.cube import STRATEGIES, Cube, CubeError
from cepagg.cube.chase import REUSES, CubePlan, _arborescence
from cepagg.cube.execute import evaluate_plan
from cepagg.cube.reuse import Reuse
from cepagg.events import EventBatch
from cepagg.lang import HierarchyError
from generators import cases, seeded


def cube_of(*patterns, agg="COUNT(*)", within=10):
    text = "\n---\n".join(f"RETURN {agg} PATTERN {p} WITHIN {within}" for p in patterns)
    return Cube.from_text(text, RFID)


def test_operations_of_example_9():
    cube = cube_of("SEQ(G, A, T)", "SEQ(G, A, D, T)", "SEQ(TX, OK)", "SEQ(D, T)")
    assert cube.shapes[cube.pattern_drill_down("q0", [("!D", 2)])].text() == "SEQ(G, !D, A, T)"
    assert cube.pattern_roll_up("q1", [("G", 1), ("A", 2)]) == "q3"  # SEQ(D, T) exists already
    n = cube.concept_drill_down("q2", [("TX", "D", 1), ("OK", "T", 2)])
    assert n == "q3"
    assert cube.concept_roll_up("q3", [("D", "TX", 1), ("T", "OK", 2)]) == "q2"


def test_operations_refuse_bad_arguments_in_one_line():
    cube = cube_of("SEQ(D, T)")
    with pytest.raises(CubeError, match="position 2 holds T, not OK"):
        cube.concept_roll_up("q0", [("OK", "TX", 2)])
    with pytest.raises(HierarchyError, match="unknown type 'Texas'"):
        cube.concept_roll_up("q0", [("D", "Texas", 1)])
    with pytest.raises(CubeError, match="'DHospital' is not above 'D'"):
        cube.concept_roll_up("q0", [("D", "DHospital", 1)])
    with pytest.raises(CubeError, match="no query named 'q9'"):
        cube.pattern_roll_up("q9", [("D", 1)])


def test_hierarchy_of_the_chapters_queries():
    cube = cube_of("SEQ(TX, OK)", "SEQ(D, T)", "SEQ(G, A, T)", "SEQ(G, !DBusStation, A, T)",
                   "SEQ(G, A, D, T)", "SEQ(G, !D, A, T)")
    edges = {(e.coarse, e.fine): e.label for e in cube.edges}
    assert edges[("q0", "q1")] == "concept"
    assert edges[("q2", "q4")] == "pattern" and edges[("q2", "q5")] == "pattern"
    assert edges[("q3", "q5")] == "concept"  # negation refines in reverse: !DBusStation above !D
    assert edges[("q0", "q2")] == "both"
    assert ("q1", "q0") not in edges and ("q5", "q3") not in edges


def test_chase_finds_the_arborescence_of_examples_10_and_11():
    w = {(None, "q1"): 10, (None, "q3"): 12, (None, "q4"): 12, (None, "q7"): 14, ("q1", "q3"): 5,
         ("q3", "q1"): 11, ("q3", "q4"): 2, ("q4", "q3"): 1, ("q3", "q7"): 3, ("q7", "q3"): 6,
         ("q4", "q7"): 4, ("q7", "q4"): 1}
    chosen = _arborescence(None, [Reuse(s, d, "x", c) for (s, d), c in w.items()])
    assert {(r.src, d) for d, r in chosen.items()} == {(None, "q1"), ("q1", "q3"), ("q3", "q7"), ("q7", "q4")}
    assert sum(r.cost for r in chosen.values()) == 19


def test_a_roll_up_and_a_drill_down_are_used_and_exact():
    cube = cube_of("SEQ(TX, OK)", "SEQ(D, T)", "SEQ(D, OK)")
    rng = random.Random(4)
    events = EventBatch.from_rows([{"type": rng.choice(["DBusStation", "DHospital", "A", "G", "T", "O"]), "ts": i}
                                   for i in range(60)])
    expected = cube_of("SEQ(TX, OK)", "SEQ(D, T)", "SEQ(D, OK)").evaluate(events, "independent")
    assert cube.evaluate(events, "bottom-up") == expected
    assert {r.kind for r in cube.last_plan.chosen.values()} >= {"roll-up"}
    assert cube_of("SEQ(TX, OK)", "SEQ(D, T)", "SEQ(D, OK)").evaluate(events, "top-down") == expected


# ----------------------------------------------------------------------------------------------
# Property: every strategy returns what `independent` returns

@pytest.mark.parametrize("k", range(cases(10, 60)))
def test_every_strategy_equals_independent(k):
    rng = seeded(f"cube-{k}")
    h = random_hierarchy(rng)
    patterns = list(dict.fromkeys(random_workload(rng, h)))
    agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(x)", "MAX(x), COUNT(*)"]) if k % 3 else "COUNT(*)"
    within = rng.randint(3, 8)
    slide = f" SLIDE {rng.randint(2, 4)}" if k % 4 == 3 else ""
    group = " WHERE [g] GROUP BY g" if k % 5 == 2 else ""
    texts = [f"RETURN {agg.replace('(x)', '(v0.x)')} PATTERN {p}{group} WITHIN {within}{slide}" for p in patterns]
    text = "\n---\n".join(texts)
    rows = [{"type": rng.choice(LEAVES), "ts": i // 2, "x": rng.randint(0, 5), "g": rng.choice("uv")}
            for i in range(50)]
    events = EventBatch.from_rows(rows)
    expected = Cube.from_text(text, h).evaluate(events, "independent")
    for strategy in STRATEGIES[1:]:
        for reuses in (REUSES, ("roll-up", "drill-down")):  # (shared plans, when allowed, are often cheaper)
            cube = Cube.from_text(text, h)
            got = cube.evaluate(events, strategy, reuses)
            assert got == expected, (strategy, text, h.as_mapping(), cube.last_plan.explain())


def test_a_drill_down_drops_windows_left_without_matches():
    text = ("RETURN COUNT(*) PATTERN SEQ(TX a, OK b) WITHIN 4 SLIDE 2\n---\n"
            "RETURN COUNT(*) PATTERN SEQ(D a, T b) WITHIN 4 SLIDE 2")
    events = EventBatch.from_rows([{"type": t, "ts": i} for i, t in enumerate(
        ["DHospital", "T", "A", "O", "G", "O", "A", "T", "DShelter", "O"])])
    expected = Cube.from_text(text, RFID).evaluate(events, "independent")
    cube = Cube.from_text(text, RFID)
    plan = CubePlan("by hand", {"q0": Reuse(None, "q0", "alone", 1), "q1": Reuse("q0", "q1", "drill-down", 1)})
    results, _ = evaluate_plan(cube, plan, events)
    assert results == expected


def test_a_slice_rolls_each_position_up_to_the_top_reusing_known_results():
    from cepagg.cube.slice import slice_levels

    cube = cube_of("SEQ(DHospital, T)")
    rng = random.Random(2)
    events = EventBatch.from_rows([{"type": rng.choice(["DBusStation", "DHospital", "A", "T", "O"]), "ts": i}
                                   for i in range(40)])
    cube.evaluate(events)
    levels = dict(slice_levels(cube, "q0"))
    direct = cube_of("SEQ(DHospital, T)", "SEQ(D, T)", "SEQ(TX, T)", "SEQ(DHospital, OK)").evaluate(events)
    assert [t for t, _ in levels[0]] == ["DHospital", "D", "TX"] and [t for t, _ in levels[1]] == ["T", "OK"]
    assert [v for _, v in levels[0]] == [direct[n].rows[0][0] for n in ("q0", "q1", "q2")]
    assert levels[1][1][1] == direct["q3"].rows[0][0]


MATCH_REUSES = ("concept filter", "concept union", "pattern join", "pattern projection")


@pytest.mark.parametrize("k", range(cases(10, 60)))
def test_every_strategy_equals_independent_on_matches(k):
    rng = seeded(f"cube-matches-{k}")
    h = random_hierarchy(rng)
    patterns = list(dict.fromkeys(random_workload(rng, h)))
    text = "\n---\n".join(f"PATTERN {p} WITHIN {rng.randint(3, 6)}" if k % 4 == 3 else f"PATTERN {p} WITHIN 5"
                          for p in patterns)
    events = EventBatch.from_rows([{"type": rng.choice(LEAVES), "ts": i // 2} for i in range(36)])
    expected = Cube.from_text(text, h).evaluate(events, "independent")
    for strategy in STRATEGIES[1:]:
        for reuses in (REUSES, MATCH_REUSES):
            cube = Cube.from_text(text, h)
            got = cube.evaluate(events, strategy, reuses)
            assert got == expected, (strategy, text, h.as_mapping(), cube.last_plan.explain())


def test_match_reuse_of_examples_13_to_15():
    events = EventBatch.from_rows([{"type": t, "ts": ts} for t, ts in [
        ("G", 1), ("A", 5), ("A", 6), ("DHospital", 8), ("DBusStation", 10), ("DShelter", 12), ("T", 15), ("O", 16)]])
    text = "\n---\n".join(f"PATTERN {p} WITHIN 20" for p in (
        "SEQ(G, A, T)", "SEQ(G, A, D, T)", "SEQ(G, !D, A, T)", "SEQ(TX, OK)", "SEQ(D, T)",
        "SEQ(G, !DBusStation, A, T)"))
    expected = Cube.from_text(text, RFID).evaluate(events, "independent")
    for strategy in ("top-down", "bottom-up", "chase"):
        cube = Cube.from_text(text, RFID)
        assert cube.evaluate(events, strategy, MATCH_REUSES) == expected
        assert any(r.kind in MATCH_REUSES for r in cube.last_plan.chosen.values())


def test_a_concept_filter_checks_the_types_a_coarser_negation_adds():
    # Example 14: q7 = SEQ(G, !D, A, T) from q4 = SEQ(G, !DBusStation, A, T): a DHospital between G and A
    events = EventBatch.from_rows([{"type": t, "ts": ts} for t, ts in [
        ("G", 1), ("DHospital", 2), ("A", 3), ("G", 4), ("A", 5), ("T", 6)]])
    text = "PATTERN SEQ(G, !DBusStation, A, T) WITHIN 20\n---\nPATTERN SEQ(G, !D, A, T) WITHIN 20"
    expected = Cube.from_text(text, RFID).evaluate(events, "independent")
    cube = Cube.from_text(text, RFID)
    assert cube.evaluate(events, "top-down", MATCH_REUSES) == expected
    assert cube.last_plan.chosen["q1"].kind == "concept filter"
    assert len(expected["q1"].rows) == 3 and len(expected["q0"].rows) == 9  # 1 match and 3, 3 rows each


def test_no_join_where_an_inserted_event_splits_a_negated_gap():
    # SEQ(A, !D, X, T) has the match (A1, X2, T4) although D3 lies between A1 and T4
    cube = cube_of("SEQ(A, !D, T)", "SEQ(A, !D, G, T)")
    assert not any(r.kind == "pattern join" for r in cube.plan("top-down").candidates)
    events = EventBatch.from_rows([{"type": t, "ts": ts} for t, ts in [
        ("A", 1), ("G", 2), ("DHospital", 3), ("T", 4)]])
    text = "PATTERN SEQ(A, !D, T) WITHIN 9\n---\nPATTERN SEQ(A, !D, G, T) WITHIN 9"
    expected = Cube.from_text(text, RFID).evaluate(events, "independent")
    assert len(expected["q1"].rows) == 3 and Cube.from_text(text, RFID).evaluate(events, "top-down") == expected


def test_match_results_carry_the_events_attributes_as_run_returns_them():
    from cepagg.runner import run

    rng = random.Random(5)
    events = EventBatch.from_rows([{"type": rng.choice(["G", "A", "T", "DHospital", "O"]), "ts": i,
                                    "price": rng.randint(1, 9), "gate": rng.choice("xy")} for i in range(40)])
    text = "PATTERN SEQ(G g, A a, T t) WITHIN 8\n---\nPATTERN SEQ(G g, A a, D d, T t) WITHIN 8"
    expected = {}
    for n, q in Cube.from_text(text, RFID).queries.items():
        r = run(q, events, match_format="long")
        expected[n] = (r.columns, _matches(r))
    for strategy in STRATEGIES:
        cube = Cube.from_text(text, RFID)
        got = cube.evaluate(events, strategy)
        for n, (columns, matches) in expected.items():
            assert got[n].columns == columns and columns[-2:] == ("price", "gate")
            assert _matches(got[n]) == matches, (strategy, n)
    assert any(r.kind == "pattern join" for r in cube.last_plan.chosen.values())


def _matches(result):
    """Each match as the set of its rows without the match number (numbers differ by engine)."""
    i = result.columns.index("match")
    by: dict = {}
    for row in result.rows:
        by.setdefault(row[i], set()).add(row[:i] + row[i + 1:])
    return sorted(sorted(m) for m in by.values())
