"""Concept hierarchies: parsing, checks, and every engine against the reference on the query
with each concept expanded (relabelled events, or OR of the leaf types)."""

from __future__ import annotations

import json
import random

import pytest

from cepagg.engines import ENGINES
from cepagg.errors import QueryError
from cepagg.events import EventBatch
from cepagg.lang import Hierarchy, HierarchyError, compile_query
from cepagg.lang.workload import compile_workload
from cepagg.runner import run, run_workload
from generators import cases, seeded

BUS = {"Vehicle": ["Bus", "Taxi"], "Bus": ["CityBus", "SchoolBus"]}
ENGINE_NAMES = ("aseq", "greta", "rcep", "twostep", "stack")


def batch(types):
    return EventBatch.from_rows([{"type": t, "ts": i, "x": i % 3} for i, t in enumerate(types)])


def test_leaves_and_order():
    h = Hierarchy.from_mapping(BUS)
    assert h.leaves("Vehicle") == {"CityBus", "SchoolBus", "Taxi"}
    assert h.leaves("Taxi") == {"Taxi"} and h.leaves("Other") == {"Other"}
    assert h.finer("CityBus", "Vehicle") and not h.finer("Vehicle", "CityBus")
    assert h.ancestors("SchoolBus") == ["Bus", "Vehicle"]


@pytest.mark.parametrize("bad, culprit", [
    ({"A": ["B"], "B": ["A"]}, "cycle"),
    ({"A": ["A"]}, "cycle"),
    ({"A": ["C"], "B": ["C"]}, "type 'C' lies under two concepts, 'A' and 'B'"),
    ({"A": "B"}, "concept 'A' needs a non-empty list"),
    ({"A": []}, "concept 'A' needs a non-empty list"),
    ({"A": [3]}, "child 3 of concept 'A'"),
    (["A"], "JSON object"),
])
def test_bad_hierarchies_name_the_culprit(bad, culprit):
    with pytest.raises(HierarchyError) as e:
        Hierarchy.from_mapping(bad)
    assert culprit in str(e.value) and "\n" not in str(e.value)


def test_concept_lines_and_the_option_merge_and_conflict():
    q = compile_query("CONCEPT Vehicle = (Bus, Taxi)\nRETURN COUNT(*) PATTERN SEQ(Vehicle, Taxi) WITHIN 5",
                      hierarchy=Hierarchy.from_mapping({"Bus": ["CityBus", "SchoolBus"]}))
    assert q.members("Vehicle") == {"CityBus", "SchoolBus", "Taxi"}
    again = compile_query(q.text)  # the text carries the hierarchy (as Spark workers recompile it)
    assert again.hierarchy == q.hierarchy
    assert compile_query(str(q)).hierarchy == q.hierarchy  # and so does the normalised text
    with pytest.raises(HierarchyError, match="'Taxi' lies under two concepts"):
        compile_query("CONCEPT Vehicle = (Bus, Taxi)\nPATTERN SEQ(Bus, Taxi)",
                      hierarchy=Hierarchy.from_mapping({"Car": ["Taxi"]}))
    with pytest.raises(HierarchyError, match="line 2: a CONCEPT line reads"):
        compile_query("PATTERN SEQ(A, B)\nCONCEPT V = A, B")


def test_error_positions_stay_those_written():
    with pytest.raises(QueryError) as e:
        compile_query("CONCEPT V = (A, B)\nPATTERN SEQ(V, C) WHERE V.x > zz.y")
    assert e.value.line == 2


def test_workload_concept_lines_apply_to_every_query():
    named = compile_workload("CONCEPT V = (A, B)\nRETURN COUNT(*) PATTERN SEQ(V, C) WITHIN 5\n---\n"
                             "RETURN COUNT(*) PATTERN SEQ(C, V) WITHIN 5")
    assert all(q.members("V") == {"A", "B"} for _, q in named)


def test_data_checks_before_any_work():
    h = Hierarchy.from_mapping(BUS)
    with pytest.raises(HierarchyError, match="events of type 'Bus', but 'Bus' is a concept"):
        run("RETURN COUNT(*) PATTERN SEQ(Vehicle a, Taxi b) WITHIN 5", batch(["Bus", "Taxi"]), hierarchy=h)
    with pytest.raises(HierarchyError, match="unknown type 'Vehicel'"):
        run("RETURN COUNT(*) PATTERN SEQ(Vehicel a, Taxi b) WITHIN 5", batch(["CityBus", "Taxi"]), hierarchy=h)
    # without a hierarchy a type absent from the data is no error (it matches nothing)
    assert run("RETURN COUNT(*) PATTERN SEQ(Vehicel a, Taxi b) WITHIN 5", batch(["CityBus", "Taxi"])).rows == [(0,)]


def test_a_concept_matches_every_type_below_it():
    h = Hierarchy.from_mapping(BUS)
    b = batch(["CityBus", "Taxi", "SchoolBus", "Taxi", "Truck"])
    assert run("RETURN COUNT(*) PATTERN SEQ(Vehicle a, Vehicle b) WITHIN 10", b, hierarchy=h).rows == [(6,)]
    assert run("RETURN COUNT(*) PATTERN SEQ(Bus a, Taxi b) WITHIN 10", b, hierarchy=h).rows == [(3,)]
    assert run("RETURN COUNT(*) PATTERN SEQ(Bus a, !Taxi, Vehicle b) WITHIN 10", b, hierarchy=h,
               engine="reference").rows == [(2,)]  # (CityBus0, Taxi1), (SchoolBus2, Taxi3)
    res = run_workload("RETURN COUNT(*) PATTERN SEQ(Bus a, Taxi b) WITHIN 10\n---\n"
                       "RETURN COUNT(*) PATTERN SEQ(CityBus a, Taxi b) WITHIN 10", b, hierarchy=h)
    assert [r.rows for r in res.values()] == [[(3,)], [(2,)]]


def test_engines_refuse_overlapping_types_where_their_template_needs_one_state_per_type():
    h = Hierarchy.from_mapping(BUS)
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(Vehicle a, Bus b) WITHIN 10", hierarchy=h)
    assert "overlap in the concept hierarchy" in ENGINES["greta"].refusal(q)


# ----------------------------------------------------------------------------------------------
# Property: every engine on a concept query = the reference on the query with concepts expanded

LEAVES = [f"L{i}" for i in range(7)]


def random_hierarchy(rng: random.Random) -> Hierarchy:
    """A random forest over LEAVES with up to 3 levels of concepts above them."""
    level = list(LEAVES)
    rng.shuffle(level)
    pairs, k = [], 0
    for _depth in range(rng.randint(1, 3)):
        nxt, i = [], 0
        while i < len(level):
            size = rng.randint(1, 3)
            group = level[i:i + size]
            i += size
            if len(group) > 1 or rng.random() < 0.3:
                k += 1
                pairs += [(g, f"K{k}") for g in group]
                nxt.append(f"K{k}")
            else:
                nxt.extend(group)
        level = nxt
    return Hierarchy.of_pairs(pairs)


def random_query(rng: random.Random, h: Hierarchy, count_only: bool) -> tuple[str, list[tuple[str, str, bool]]]:
    """(query text, items (var, type, negated)); a negation only between positives."""
    names = sorted(h.names) + ["L0"]
    n = rng.randint(2, 4)
    items = []
    for i in range(n):
        items.append((f"v{i}", rng.choice(names), False))
    if rng.random() < 0.6:
        items.insert(rng.randint(1, n - 1), ("n0", rng.choice(names), True))
    agg = "COUNT(*)" if count_only else rng.choice(["COUNT(*)", "SUM(v0.x)", "MAX(v1.x)"])
    return agg, items


def text_of(agg, items, within, type_text) -> str:
    body = ", ".join(("!" if neg else "") + f"{type_text(t, v)}" for v, t, neg in items)
    return f"RETURN {agg} PATTERN SEQ({body}) WITHIN {within}"


def overlapping(h: Hierarchy, items) -> bool:
    types = {t for _, t, _ in items}
    return any(h.leaves(a) & h.leaves(b) for a in types for b in types if a != b)


@pytest.mark.parametrize("k", range(cases(12, 60)))
def test_engines_equal_reference_on_expanded_concepts(k):
    rng = seeded(f"concepts-{k}")
    h = random_hierarchy(rng)
    count_only = k % 2 == 1
    agg, items = random_query(rng, h, count_only)
    rows = [{"type": rng.choice(LEAVES), "ts": i + rng.randint(0, 1), "x": rng.randint(0, 4)} for i in range(14)]
    events = EventBatch.from_rows(rows).sorted()
    within = rng.randint(3, 8)
    concept_q = text_of(agg, items, within, lambda t, v: f"{t} {v}")
    if not overlapping(h, items):
        # relabel each event to the (single) query type above it; the query then needs no hierarchy
        types = {t for _, t, _ in items}
        relabel = {leaf: t for t in types for leaf in h.leaves(t)}
        plain_rows = [dict(r, type=relabel.get(r["type"], r["type"])) for r in rows]
        expected = run(concept_q, EventBatch.from_rows(plain_rows).sorted(), engine="reference")
    else:
        if agg != "COUNT(*)":
            agg, concept_q = "COUNT(*)", text_of("COUNT(*)", items, within, lambda t, v: f"{t} {v}")

        def alternatives(t, v):  # OR of the leaf types, one variable each: COUNT(*) adds them up
            leaves = sorted(h.leaves(t))
            if len(leaves) == 1:
                return f"{leaves[0]} {v}"
            return "OR(" + ", ".join(f"{leaf} {v}_{j}" for j, leaf in enumerate(leaves)) + ")"
        expected = run(text_of("COUNT(*)", items, within, alternatives), events, engine="reference")
    q = compile_query(concept_q, hierarchy=h, schema=events.attribute_kinds())
    got = {"reference": run(q, events, engine="reference").rows}
    for name in ENGINE_NAMES:
        if ENGINES[name].refusal(q) is None:
            got[name] = run(q, events, engine=name).rows
    for name, r in got.items():
        assert r == expected.rows, (name, concept_q, json.dumps(h.as_mapping()), rows)
    assert len(got) >= 2 or overlapping(h, items)  # some engine besides the reference ran


def test_deep_hierarchies_load_and_resolve(tmp_path):
    """A chain of 5,000 concepts loads in linear time and resolves without recursion; JSON nested
    deeper than Python's recursion limit is a one-line error (a HierarchyError either way)."""
    chain = {f"C{i}": [f"C{i + 1}"] for i in range(5000)}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(chain))
    h = Hierarchy.load(str(path))
    assert h.leaves("C0") == frozenset({"C5000"}) and h.level("C5000") == 5000
    path.write_text("[" * 3000 + "]" * 3000)
    with pytest.raises(HierarchyError):
        Hierarchy.load(str(path))


def test_concept_lines_take_comments_and_quoted_names_and_files_no_repeated_concept(tmp_path):
    from cepagg.lang.concepts import extract_concepts

    _, h = extract_concepts("CONCEPT A = (C) -- a comment\nCONCEPT `x y` = (D, E);\nRETURN COUNT(*) PATTERN A")
    assert h.as_mapping() == {"A": ["C"], "x y": ["D", "E"]}
    path = tmp_path / "dup.json"
    path.write_text('{"A": ["B"], "A": ["C"]}')
    with pytest.raises(HierarchyError, match="concept 'A' is given twice"):
        Hierarchy.load(str(path))
