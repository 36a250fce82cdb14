"""Plan-Finder and bit-marking on queries returning matches: every plan Plan-Finder may choose
among -- each partition of the disjuncts with the same positive events into bit-marked groups
and disjuncts run alone -- returns the reference's matches, on random nested queries and
streams, whole and in pieces; the choice follows the cost model, which ``explain`` shows."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from nested_queries import ATTRS, TYPES, accepted_queries, random_match_query

from cepagg.engines import ENGINES
from cepagg.engines.neel.plan_finder import alone_cost, group_cost, partitions
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import cases, random_stream, seeded
from helpers import match_sets, run_in_pieces

N = cases(60, 2000)


def _same(expected: Result, rows: list[tuple]) -> bool:
    return match_sets(expected) == match_sets(Result(expected.columns, rows, expected.kinds))


def plans_of(plan, most: int = 6) -> list[list[tuple[int, ...]]]:
    """Partitions of the disjuncts the engine can run: per Plan-Finder cluster, every partition
    whose groups of two or more are of markable disjuncts; the other disjuncts alone."""
    per_cluster = []
    in_cluster = set()
    for p, notes in plan.finder:
        bad = {i for i in p.members if any(n.startswith(plan.terms[i].text + ":") for n in notes)}
        options = [g for g in partitions(p.members) if all(len(x) == 1 or not set(x) & bad for x in g)]
        per_cluster.append(options)
        in_cluster |= set(p.members)
    alone = [(i,) for i in range(len(plan.terms)) if i not in in_cluster]
    out = []
    for combo in itertools.product(*per_cluster):
        out.append([g for part in combo for g in part] + alone)
        if len(out) >= most:
            break
    return out


def test_every_plan_returns_the_reference_matches():
    rng = seeded("neel plan finder")
    marked = chosen_marked = chosen_alone = 0
    for text, q in accepted_queries(rng, random_match_query, N):
        density = rng.choice([1.0, 4.0, 30.0])
        eng = ENGINES["neel"](q, density=density)
        if not eng.plan.finder:
            continue
        for p, _ in eng.plan.finder:
            best = min(c for _, c in p.candidates)
            assert math.isclose(p.cost, best), (text, p)
            chosen_marked += any(len(g) > 1 for g in p.chosen)
            chosen_alone += all(len(g) == 1 for g in p.chosen)
        batches = [EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 14), max_gap=1,
                                                      attrs=ATTRS)).sorted() for _ in range(2)]
        expected = [ENGINES["reference"](q).run(b) for b in batches]
        for groups in plans_of(eng.plan):
            e = ENGINES["neel"](q, match_groups=groups)
            marked += sum(1 for u in e.plan.units if u.emap is not None)
            for b, exp in zip(batches, expected):
                assert _same(exp, e.run(b).rows), (text, groups, b.table.to_pylist())
            cuts, out = run_in_pieces(ENGINES["neel"](q, match_groups=groups), batches[0], rng)
            assert _same(expected[0], out), (text, groups, cuts, batches[0].table.to_pylist())
    # the bit-marked path ran, and the cost model chose both ways
    assert marked > 10 and chosen_marked > 3 and chosen_alone > 0, (marked, chosen_marked, chosen_alone)


@pytest.mark.parametrize("pattern", [
    "SEQ(A a, NOT SEQ(B b, C c), D d)", "SEQ(A a, NOT AND(B, C), D d)", "SEQ(A a, NOT SEQ(B, C, E), D d)",
    "SEQ(A a, NOT AND(B, C), D d, NOT AND(B, E), E e)", "SEQ(A a, NOT OR(SEQ(B, C), E), D d)",
    "SEQ(A a, EXISTS SEQ(B, C), NOT AND(E, D), D d)",
])
@pytest.mark.parametrize("clauses", ["WHERE [g] WITHIN 6", "WITHIN 5 SLIDE 2"])
def test_fixed_bit_marked_groups(pattern, clauses):
    """Negation push-down's groups, every partition, dense streams with ties."""
    text = f"PATTERN {pattern} {clauses}"
    q = compile_query(text)
    plans = plans_of(ENGINES["neel"](q).plan, most=20)
    assert any(any(len(g) > 1 for g in groups) for groups in plans), plans
    rng = seeded(text)
    for _ in range(8):
        batch = EventBatch.from_rows(random_stream(rng, "ABCDE", n=rng.randint(5, 16), max_gap=1, attrs=ATTRS)).sorted()
        expected = ENGINES["reference"](q).run(batch)
        for groups in plans:
            got = ENGINES["neel"](q, match_groups=groups).run(batch)
            assert _same(expected, got.rows), (text, groups, batch.table.to_pylist())


def test_a_group_must_share_its_positive_events():
    q = compile_query("PATTERN OR(SEQ(A a, NOT C, B b), SEQ(A a, B b, NOT C, D d)) WITHIN 5")
    with pytest.raises(ValueError, match="cannot be bit-marked together"):
        ENGINES["neel"](q, match_groups=[(0, 1)])


def test_explain_shows_the_priced_plans_and_the_choice():
    q = compile_query("PATTERN SEQ(A a, NOT AND(B, C), D d) WITHIN 5")
    sparse = ENGINES["neel"](q, density=4.0)
    lines = sparse.explain_lines()
    text = "\n".join(lines)
    d = [("", 2, [(1, ("not", "B"))], {"A", "B", "D"}, 0), ("", 2, [(1, ("not", "C"))], {"A", "C", "D"}, 0)]
    together, alone = group_cost(d, 4.0, False), sum(alone_cost(x, 4.0, True) for x in d)
    assert together < alone
    assert "Plan-Finder for d0, d1 (same positive events)" in text
    assert f"  {{d0, d1}}: {together:,.1f}  <- chosen" in lines
    assert f"  {{d0}} {{d1}}: {alone:,.1f}" in lines
    assert "u0: d0, d1 bit-marked: the matches of SEQ(A a, D d) [rcep]" in text
    assert "    EMap: row 0 = c0, row 1 = c1" in lines
    # dense streams and a NOT early in a longer pattern: each disjunct's flat query prunes its
    # partial matches at the first gap, so alone is cheaper than building every match
    q = compile_query("PATTERN SEQ(A a, NOT AND(B, C), D d, E e, F f) WITHIN 5")
    d = [("", 4, [(1, ("not", t))], {"A", t, "D", "E", "F"}, 0) for t in "BC"]
    for density, chosen in ((1.0, "{d0, d1}"), (30.0, "{d0} {d1}")):
        together, alone = group_cost(d, density, False), sum(alone_cost(x, density, True) for x in d)
        assert (together < alone) == (chosen == "{d0, d1}")
        lines = ENGINES["neel"](q, density=density).explain_lines()
        assert f"  {chosen}: {min(together, alone):,.1f}  <- chosen" in lines, lines
        assert f"{density:g} events of each type per window" in "\n".join(lines)
    assert "  u0: d0 [rcep]" in lines and "  u1: d1 [rcep]" in lines


def test_unmarkable_disjuncts_are_said_and_run_alone():
    q = compile_query("PATTERN SEQ(A a, NOT SEQ(B b, C c), D d) WHERE b.x > 1 WITHIN 5")
    eng = ENGINES["neel"](q)
    text = "\n".join(eng.explain_lines())
    assert "not bit-marked, a condition reads an event of a NOT/EXISTS" in text
    assert all(u.emap is None for u in eng.plan.units)
    rng = random.Random(5)
    for _ in range(10):
        batch = EventBatch.from_rows(random_stream(rng, "ABCD", n=12, max_gap=1, attrs=ATTRS)).sorted()
        assert _same(ENGINES["reference"](q).run(batch), eng.run(batch).rows)
