"""What GRETA accepts, what it refuses and why, and which path each transition takes."""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES
from cepagg.engines.greta.plan import compile_plan, refusal
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan


@pytest.mark.parametrize("text, path", [
    ("PATTERN Stock S+ WHERE S.price > NEXT(S).price", ["index"]),
    ("PATTERN Stock S+ WHERE S.price * 1.05 < NEXT(S).price", ["index"]),
    ("PATTERN Stock S+ WHERE NEXT(S).price + 1 >= S.price", ["index"]),
    ("PATTERN Stock S+ WHERE S.price = NEXT(S).price", ["index"]),
    ("PATTERN Stock S+ WHERE S.price - NEXT(S).price > 3", ["scan"]),
    ("PATTERN Stock S+ WHERE S.price > NEXT(S).price AND S.volume < NEXT(S).volume", ["scan"]),
    ("PATTERN Stock S+", ["total"]),
    ("PATTERN SEQ(A, NOT N, B)", ["scan"]),
    ("PATTERN SEQ(A, B) STRATEGY contiguous", ["scan"]),
])
def test_paths(text, path):
    q = compile_query("RETURN COUNT(*) " + text)
    assert refusal(q) is None
    assert [t.path for t in compile_plan(q).graphs[0].transitions] == path


def _chosen_path(q, batch) -> list[str]:
    """The paths of the positive graph's transitions the engine chose from its first batch
    (for the partition, where it chooses per partition)."""
    from cepagg.engines.greta.engine import Greta

    engine = Greta(q)
    state = engine.new_state()
    engine.process(state, batch)
    layout = state.layout
    subs = [sub for part in state.partitions.values() for sub in part.subs.values()]
    if engine.router is not None and subs:  # (each partition's path)
        (sub,) = subs
        layout = engine.router.layout_of(layout, sub.state)
    return [t.path for t in layout.positive.plan.transitions]


@pytest.mark.parametrize("window, gap_ms, n, path", [
    ("WITHIN 10 s", 1000, 2000, "scan"),        # 10 events per window: the scan
    ("WITHIN 10 s", 10, 2000, "index"),         # 1,000 events per window: the index
    ("WITHIN 10 s EMIT ON CHANGE", 1000, 2000, "scan"),
    ("WITHIN 10 s SLIDE 1 s", 1000, 2000, "scan"),   # 10 events per window: the scan's plain loop
    ("WITHIN 10 s SLIDE 1 s", 10, 2000, "index"),    # 1,000: the index's O(log n) per bucket
    ("WITHIN 10 s", 10, 100, "index"),               # 100 events in 1 s: 1,000 per window
    ("WITHIN 10 s SLIDE 1 s", 10, 100, "index"),     # a batch shorter than the window
    ("WITHIN 10 s", 1000, 5, "scan"),                # 5 events in 4 s: sparse
    ("WITHIN 10 s SLIDE 1 s", 1000, 5, "index"),     # but under SLIDE only a whole window convinces
    ("", 1000, 2000, "index"),
])
def test_first_batch_chooses_index_or_scan(window, gap_ms, n, path):
    """Under WITHIN alone every start time is its own bucket, Theta(events in window) per event
    on both paths; the scan does less per bucket, so sparse partitions scan (plan.prefers_scan).
    With SLIDE the index scales, but at a few events per window the scan's plain loop wins."""
    from cepagg.engines.greta.engine import Greta

    q = compile_query(f"RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price {window}")
    assert [t.path for t in compile_plan(q).graphs[0].transitions] == ["index"]
    assert [t.path for t in compile_plan(q, paths="no-index").graphs[0].transitions] == ["scan"]
    batch = EventBatch.from_rows([{"ts": i * gap_ms, "type": "Stock", "price": float(i % 7)} for i in range(n)])
    assert _chosen_path(q, batch) == [path]
    assert not ENGINES["reference"](q).run(batch.slice(0, 60)).diff(Greta(q).run(batch.slice(0, 60)))
    with pytest.raises(ValueError, match="paths"):
        compile_plan(q, paths="fast")
    with pytest.raises(ValueError, match="paths"):
        Greta(q, paths="fast")


SLIDE_QUERY = "RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price WITHIN 10 s SLIDE 1 s"


def test_a_first_batch_without_the_querys_events_keeps_the_index():
    """Nothing to judge the density by: the index, whose cost does not grow with the window."""
    news = EventBatch.from_rows([{"ts": i * 1000, "type": "News", "price": 1.0} for i in range(50)])
    assert _chosen_path(compile_query(SLIDE_QUERY), news) == ["index"]


def test_the_density_is_judged_by_the_querys_own_events():
    """One Stock event among News events spanning windows says nothing of Stock's density."""
    rows = [{"ts": i * 1000, "type": "News", "price": 1.0} for i in range(30)]
    rows[3] = {"ts": 3000, "type": "Stock", "price": 2.0}
    assert _chosen_path(compile_query(SLIDE_QUERY), EventBatch.from_rows(rows)) == ["index"]


@pytest.mark.parametrize("text, reason", [
    ("PATTERN SEQ(A, B)", "returning the matches"),
    ("RETURN COUNT(*) PATTERN SEQ(A, A)", "appears twice"),
    ("RETURN COUNT(*) PATTERN AND(A, B)", "not supported"),
    ("RETURN COUNT(*) PATTERN OR(A, B)", "not supported"),
    ("RETURN COUNT(*) PATTERN SEQ(A, EXISTS B, C)", "not supported"),
    ("RETURN COUNT(*) PATTERN SEQ(a, b+)", "untyped"),
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b+) WHERE a.x < b.x", "relates two pattern variables"),
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b+) WHERE b.x < FIRST(b).x", "FIRST/LAST"),
    ("RETURN COUNT(*) PATTERN (SEQ(A, B))+ WHERE B.x < NEXT(B).x", "Kleene plus is on B itself"),
    ("RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(NOT E, C), B)", "edge of the negated"),
    ("RETURN COUNT(*) PATTERN SEQ(A a, NOT (B b, b.x > a.x), C)", "relates two pattern variables"),
    ("RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [A.x]", None),  # a single event: vacuous
    ("RETURN COUNT(*) PATTERN (SEQ(A, B+))+ WHERE [B.x]", "ties only some"),
    ("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 3 EVENTS", "count windows"),
])
def test_refusals(text, reason):
    r = refusal(compile_query(text))
    if reason is None:
        assert r is None
    else:
        assert r is not None and reason in r, r


def test_planner_prefers_greta_for_kleene_and_explains_refusals():
    q = compile_query("RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price")
    assert plan(q).engine == "greta"
    q2 = compile_query("PATTERN SEQ(A, B+)")
    p = plan(q2)
    assert p.engine == "reference" and "returning the matches" in p.explain()


def test_split_reports_previous_and_following():
    q = compile_query("RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+")
    text = compile_plan(q).describe()
    assert "previous A, following B" in text and "previous C, following D" in text
