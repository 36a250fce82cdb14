"""rcep on hand-checked vectors: the situations of the RCEP paper's Fig. 1 and Fig. 3 (Kammoun
et al., EDBT 2018) rebuilt as streams, each in the typed and untyped reading, plus refusals."""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES
from cepagg.errors import UnsupportedQuery
from cepagg.events import EventBatch
from cepagg.lang import compile_query

QUERY1 = ("PATTERN SEQ({a}, {b}+, {c}) WHERE a.price < b.price AND b.price < NEXT(b.price) "
          "AND c.price < FIRST(b.price) WITHIN 31")


def _matches(text: str, ticks: list[tuple], engine: str = "rcep") -> set:
    """Matches as sets of (var, event id); ticks are (type, ts, price)."""
    q = compile_query(text)
    rows = [{"type": t, "ts": ts, "price": p} for t, ts, p in ticks]
    result = ENGINES[engine](q).run(EventBatch.from_rows(rows))
    found: dict = {}
    for r in result.as_dicts():
        found.setdefault(r["match"], set()).add((r["var"], r["event_id"]))
    return {frozenset(s) for s in found.values()}


def _m(**binding) -> frozenset:
    return frozenset((v, e) for v, evs in binding.items()
                     for e in (evs if isinstance(evs, tuple) else (evs,)))


FIG1 = [("A", 1, 10.0), ("A", 2, 11.0), ("B", 3, 12.0), ("B", 4, 13.0), ("C", 5, 11.5)]


def test_fig1_typed_six_matches():
    got = _matches(QUERY1.format(a="A a", b="B b", c="C c"), FIG1)
    want = {_m(a=a, b=bs, c=4) for a in (0, 1) for bs in ((2,), (3,), (2, 3))}
    assert got == want


def test_fig1_untyped_seven_matches():
    got = _matches(QUERY1.format(a="a", b="b", c="c"), FIG1)
    want = {_m(a=a, b=bs, c=4) for a in (0, 1) for bs in ((2,), (3,), (2, 3))} | {_m(a=2, b=3, c=4)}
    assert got == want
    assert got == _matches(QUERY1.format(a="a", b="b", c="c"), FIG1, "reference")


def test_next_prunes_and_old_events_expire():
    # e1..e5 then e6 far later: 8 matches, none with e6 (the others are out of its window)
    ticks = [("T", 1, 10.0), ("T", 2, 12.0), ("T", 3, 11.0), ("T", 4, 13.0), ("T", 5, 10.5), ("T", 40, 9.0)]
    got = _matches(QUERY1.format(a="a", b="b", c="c"), ticks)
    want = {_m(a=0, b=1, c=2), _m(a=0, b=1, c=4), _m(a=0, b=2, c=4), _m(a=0, b=3, c=4),
            _m(a=0, b=(1, 3), c=4), _m(a=0, b=(2, 3), c=4), _m(a=1, b=3, c=4), _m(a=2, b=3, c=4)}
    assert got == want


def test_kleene_last_variable_each_match_once():
    text = "PATTERN SEQ(a, b+) WHERE a.price < 100 AND b.price > 1000 WITHIN 31"
    got = _matches(text, [("T", 1, 50), ("T", 2, 2000), ("T", 3, 3000)])
    assert got == {_m(a=0, b=1), _m(a=0, b=2), _m(a=0, b=(1, 2))}


def test_three_kleene_candidates_give_seven_subsets():
    got = _matches("PATTERN SEQ(A a, B b+, C c) WITHIN 10", [("A", 1, 0), ("B", 2, 0), ("B", 3, 0),
                                                              ("B", 4, 0), ("C", 5, 0)])
    assert len(got) == 7


def test_query1_with_slide_per_window():
    text = QUERY1.format(a="a", b="b", c="c").replace("WITHIN 31", "WITHIN 4 SLIDE 2")
    q = compile_query(text)
    rows = [{"type": "T", "ts": t, "price": p} for t, p in
            [(1, 10.0), (2, 12.0), (3, 11.0), (4, 13.0), (5, 10.5), (6, 9.0), (7, 14.0), (8, 8.0)]]
    batch = EventBatch.from_rows(rows)
    ref = ENGINES["reference"](q).run(batch)
    got = ENGINES["rcep"](q).run(batch)
    def sets(res):
        out: dict = {}
        for r in res.as_dicts():
            out.setdefault((r["window_start"], r["match"]), set()).add((r["var"], r["event_id"]))
        return sorted((w, sorted(s)) for (w, _), s in out.items())
    assert sets(ref) == sets(got) and len(sets(got)) > 0


def test_aggregate_folds_match_count():
    text = "RETURN COUNT(*), SUM(b.price), MAX(c.price) " + QUERY1.format(a="a", b="b", c="c")
    q = compile_query(text)
    rows = [{"type": "T", "ts": t, "price": p} for _, t, p in FIG1]
    batch = EventBatch.from_rows(rows)
    assert ENGINES["rcep"](q).run(batch).rows == ENGINES["reference"](q).run(batch).rows
    assert ENGINES["rcep"](q).run(batch).rows[0][0] == 7


@pytest.mark.parametrize("text, reason", [
    ("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 EMIT ON CHANGE", "EMIT ON CHANGE"),
    ("PATTERN SEQ(A, B) WITHIN 5 EVENTS", "WITHIN n EVENTS"),
    ("PATTERN SEQ(A, B)", "window in time"),
    ("PATTERN SEQ(A, B) WITHIN 5 STRATEGY contiguous", "strategy contiguous"),
    ("PATTERN SEQ(A, B) WITHIN 5 STRATEGY skip-till-next-match", "strategy skip-till-next-match"),
    ("PATTERN SEQ(A, NOT SEQ(C, D), B) WITHIN 5", "negation and EXISTS of a single event"),
    ("PATTERN SEQ(A, EXISTS SEQ(C, D), B) WITHIN 5", "negation and EXISTS of a single event"),
    ("PATTERN SEQ(A, (SEQ(B, C))+) WITHIN 5", "Kleene plus of a single event"),
    ("PATTERN SEQ(A, AND(B, C)) WITHIN 5", "AND is not supported"),
    ("PATTERN SEQ(A, OR(B, C)) WITHIN 5", "OR is not supported"),
    ("PATTERN SEQ(A, A, B) WITHIN 5", "appears twice"),
])
def test_refusals_name_what_is_missing(text, reason):
    q = compile_query(text)
    assert reason in ENGINES["rcep"].refusal(q)
    with pytest.raises(UnsupportedQuery, match=reason):
        ENGINES["rcep"](q)


def test_a_partition_going_back_in_time_is_an_error():
    from cepagg.errors import InputError

    q = compile_query("PATTERN SEQ(A a, B b) WHERE [g] WITHIN 10")
    eng = ENGINES["rcep"](q)
    state = eng.new_state()
    eng.process(state, EventBatch.from_rows([{"type": "A", "ts": 5, "g": "u"},
                                             {"type": "A", "ts": 1, "g": "v"}]))
    eng.process(state, EventBatch.from_rows([{"type": "B", "ts": 5, "g": "u"}], ids=[2]))  # a tie: in order
    with pytest.raises(InputError, match=r"\('u',\) out of time order: time 4 after 5"):
        eng.process(state, EventBatch.from_rows([{"type": "B", "ts": 4, "g": "u"}], ids=[3]))


def test_buffers_hold_one_window_only():
    """Memory is the events of the window, not the stream: after 2,000 events the buffers hold
    only those of the last window."""
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b+, C c) WITHIN 10")
    eng = ENGINES["rcep"](q)
    eng._compiled = None  # (the Python join's per-variable buffers)
    state = eng.new_state()
    rows = [{"type": "ABC"[i % 3], "ts": i} for i in range(2000)]
    eng.process(state, EventBatch.from_rows(rows))
    (part,) = state.partitions.values()
    assert [len(b) for b in part.buffers] == [3, 4, 3]  # ts 1990..1999: B at 1990, 1993, 1996, 1999
    # the compiled join's store: old events leave once a window of time, before a batch's events
    eng = ENGINES["rcep"](q)
    state = eng.new_state()
    batch = EventBatch.from_rows(rows)
    for a in range(0, 2000, 50):
        eng.process(state, batch.slice(a, 50))
    (part,) = state.partitions.values()
    assert part.store is not None and len(part.store) <= 2 * 10 + 50


def test_equivalence_on_a_kleene_variable_and_group_by_its_attribute():
    # [b.v]: every b of a match has one vehicle (non-null); GROUP BY b.v reports per vehicle
    text = "RETURN b.v, COUNT(*) PATTERN SEQ(A a, B b+) WHERE [b.v] GROUP BY b.v WITHIN 10"
    rows = [{"type": "A", "ts": 1}, {"type": "B", "ts": 2, "v": 1}, {"type": "B", "ts": 3, "v": 2},
            {"type": "B", "ts": 4, "v": 1}, {"type": "B", "ts": 5}]
    q = compile_query(text)
    got = ENGINES["rcep"](q).run(EventBatch.from_rows(rows)).rows
    assert got == [(1, 3), (2, 1)]  # {b2}, {b4}, {b2, b4}; {b3}
    assert got == ENGINES["reference"](q).run(EventBatch.from_rows(rows)).rows


def test_equivalence_on_a_negated_variable_needs_a_value():
    # [n.h]: an N without h is no N for the negation
    q = compile_query("PATTERN SEQ(A a, NOT N n, B b) WHERE [n.h] WITHIN 10")
    for h in (None, "p"):
        rows = [{"type": "A", "ts": 1}, {"type": "N", "ts": 2, "h": h}, {"type": "B", "ts": 3}]
        batch = EventBatch.from_rows(rows)
        got = ENGINES["rcep"](q).run(batch).rows
        assert len(got) == (2 if h is None else 0)
        assert got == ENGINES["reference"](q).run(batch).rows
