"""The planner's choice between rcep and tree for queries aseq and greta refuse, and its reason."""

from __future__ import annotations

from cepagg.lang import compile_query
from cepagg.plan import plan


def _plan(text: str):
    return plan(compile_query(text))


def test_a_condition_between_variables_goes_to_a_tree():
    p = _plan("PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x < c.x WITHIN 10 s")
    assert p.engine == "tree"
    assert "why: a join tree rather than recomputation" in p.explain()
    assert "a.x < c.x" in p.why


def test_no_condition_between_variables_goes_to_recomputation():
    p = _plan("PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x > 3 WITHIN 10 s")
    assert p.engine == "rcep"
    assert "why: recomputation rather than a join tree" in p.explain()


def test_kleene_goes_to_rcep_with_the_tree_refusal():
    p = _plan("PATTERN SEQ(A a, B b+, C c) WHERE a.x < c.x WITHIN 10 s")
    assert p.engine == "rcep"
    assert "not tree: Kleene plus (b)" in p.explain()


def test_aggregates_aseq_and_greta_refuse_go_to_a_tree():
    p = _plan("RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE a.x != b.y WITHIN 10 s")
    assert p.engine == "tree" and "not aseq" in p.explain() and "not greta" in p.explain()


def test_the_reference_stays_the_fallback():
    assert _plan("PATTERN SEQ(A a, B b) WHERE a.x < b.x").engine == "reference"  # no window
