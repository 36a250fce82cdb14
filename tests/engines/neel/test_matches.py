"""``neel`` returns the matches of a nested query as the union of its disjuncts' matches, found
by the match engines: the same match set as the reference on random nested queries and streams,
whatever the batching, watermarks and snapshots; rows handed on as found (spill) with the rows
of a match together; the seen set of overlapping disjuncts pruned by watermarks. The generator
is biased to what neel accepts, and the test checks that most queries are accepted.
"""

from __future__ import annotations

import random

import pytest
from nested_queries import ATTRS, TYPES, accepted_queries, random_match_query

from cepagg.engines import ENGINES
from cepagg.errors import QueryError
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan
from cepagg.result import Result
from generators import cases, random_stream, seeded
from helpers import match_sets, matches, ms, run_in_pieces, stream

N = cases(150, 5000)


def _accepted(rng: random.Random) -> tuple[str, object]:
    while True:
        text = random_match_query(rng)
        try:
            q = compile_query(text)
        except QueryError:
            continue
        if ENGINES["neel"].refusal(q) is None:
            return text, q


def _same(q, expected: Result, rows: list[tuple]) -> bool:
    return match_sets(expected) == match_sets(Result(expected.columns, rows, expected.kinds))


def test_random_nested_match_queries_equal_the_reference():
    rng = seeded("neel matches")
    for text, q in accepted_queries(rng, random_match_query, N):
        for _ in range(3):
            batch = EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 14), max_gap=2, attrs=ATTRS))
            expected = ENGINES["reference"](q).run(batch)
            got = ENGINES["neel"](q).run(batch)
            assert _same(q, expected, got.rows), (text, batch.table.to_pylist())


def test_batches_watermarks_and_snapshots():
    rng = seeded("neel matches in pieces")
    for _ in range(cases(100, 3000)):
        text, q = _accepted(rng)
        batch = EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 16), max_gap=2, attrs=ATTRS)).sorted()
        expected = ENGINES["reference"](q).run(batch)
        cuts, out = run_in_pieces(ENGINES["neel"](q), batch, rng)
        assert _same(q, expected, out), (text, cuts, batch.table.to_pylist())


def test_time_slices_add_up_to_the_whole():
    """``start_range`` slices (as Spark's batch driver cuts time): each match in exactly one."""
    rng = seeded("neel matches sliced")
    for _ in range(cases(60, 2000)):
        text, q = _accepted(rng)
        batch = EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 14), max_gap=2, attrs=ATTRS)).sorted()
        expected = ENGINES["reference"](q).run(batch)
        width = rng.randint(1, 5)
        m = q.output_columns.index("match")
        out = []
        for n, a in enumerate(range(-10, int(batch.table.column("ts").to_pylist()[-1]) + width + 1, width)):
            eng = ENGINES["neel"](q, start_range=(a, a + width))
            state = eng.new_state()
            got = eng.process(state, batch) + eng.finish(state)
            out += [r[:m] + ((n, r[m]),) + r[m + 1:] for r in got]  # (numbers restart per slice)
        assert _same(q, expected, out), (text, width, batch.table.to_pylist())


def test_rows_are_spilled_as_found_and_matches_never_split():
    """With a spill of one row, every match comes in its own piece, numbered once."""
    rng = seeded("neel matches spilled")
    for _ in range(cases(40, 1000)):
        text, q = _accepted(rng)
        batch = EventBatch.from_rows(random_stream(rng, TYPES, n=14, max_gap=1, attrs=ATTRS)).sorted()
        eng = ENGINES["neel"](q)
        pieces: list[list] = []
        eng.spill, eng.spill_rows = pieces.append, 1
        state = eng.new_state()
        pieces.append(eng.process(state, batch))
        pieces.append(eng.finish(state))
        m = q.output_columns.index("match")
        numbers = [sorted({r[m] for r in p}) for p in pieces if p]
        flat = [n for p in numbers for n in p]
        assert len(flat) == len(set(flat)), (text, numbers)
        expected = ENGINES["reference"](q).run(batch)
        assert _same(q, expected, [r for p in pieces for r in p]), text


@pytest.mark.parametrize("groups", [[(0,), (1,)], [(0, 1)]])
def test_the_seen_set_and_the_event_index_hold_about_one_window(groups):
    """Overlapping disjuncts (same variables) run alone pass a seen set; bit-marked together,
    their matches are tested on an index of events. Watermarks empty both behind the window,
    so over a long stream they stay small."""
    q = compile_query("PATTERN SEQ(A a, NOT AND(B, C), D d) WITHIN 5")
    eng = ENGINES["neel"](q, match_groups=groups)
    assert len(eng.plan.units) == len(groups)
    assert all(u.shared for u in eng.plan.units) == (len(groups) == 2)
    rng = random.Random(3)
    batch = EventBatch.from_rows(random_stream(rng, "ABCD", n=3000, max_gap=1, attrs={})).sorted()
    state = eng.new_state()
    ts = batch.table.column("ts").to_pylist()
    rows, biggest = [], 0
    for i in range(0, len(batch), 20):
        rows += eng.process(state, batch.slice(i, 20))
        rows += eng.advance(state, ts[min(i + 20, len(ts)) - 1] - 1)
        biggest = max(biggest, len(state.seen) if len(groups) == 2 else len(state.index))
    rows += eng.finish(state)
    expected = ENGINES["reference"](q).run(batch)
    assert _same(q, expected, rows)
    total = len(match_sets(expected))
    assert total > 1000 and 0 < biggest < 100, (total, biggest)


@pytest.mark.parametrize("pattern", [
    "SEQ(A a, NOT AND(B, C), D d)", "SEQ(A a, NOT AND(B, C), D d, NOT AND(B, E))",
    "OR(SEQ(A a, B b), SEQ(A a, NOT C, B b))", "SEQ(A a, OR(B b, C c), NOT AND(D, E))",
    "SEQ(A a, NOT SEQ(B, C), D d)", "SEQ(A a, EXISTS SEQ(B, C), NOT E, D d)", "SEQ(A a, AND(B b, C c), D d)",
    "SEQ(A a, NOT AND(B, C), AND(D d, E e))", "SEQ(NOT AND(B, C), A a, D d)", "SEQ(A a, D d, NOT AND(B, C))",
])
@pytest.mark.parametrize("clauses", ["WHERE [g] WITHIN 6", "WITHIN 5 SLIDE 2", "WITHIN 4"])
@pytest.mark.parametrize("returns", ["", "RETURN a "])
def test_fixed_nested_match_queries(pattern, clauses, returns):
    """Disjuncts that overlap (NOT AND, an OR whose alternatives bind the same variables),
    witnesses, interleavings with ties, leading and trailing negation; dense streams with ties."""
    text = f"{returns}PATTERN {pattern} {clauses}"
    q = compile_query(text)
    assert ENGINES["neel"].refusal(q) is None, ENGINES["neel"].refusal(q)
    rng = seeded(text)
    for _ in range(25):
        batch = EventBatch.from_rows(random_stream(rng, "ABCDE", n=rng.randint(5, 14), max_gap=1, attrs=ATTRS)).sorted()
        expected = ENGINES["reference"](q).run(batch)
        assert _same(q, expected, ENGINES["neel"](q).run(batch).rows), (text, batch.table.to_pylist())
        cuts, out = run_in_pieces(ENGINES["neel"](q), batch, rng)
        assert _same(q, expected, out), (text, cuts, batch.table.to_pylist())


Q1 = "PATTERN SEQ(Recycle r, Washing w, NOT SEQ(Sharpening s, Disinfection d, Checking c), Operating o) WITHIN 100"


@pytest.mark.parametrize("events,expected", [
    ("recycle1 washing5 disinfection6 checking16 operating20", {ms("recycle1", "washing5", "operating20")}),
    ("recycle1 washing2 sharpening3 disinfection4 checking5 operating6", set()),
    ("recycle1 washing2 sharpening3 checking4 disinfection5 operating6", {ms("recycle1", "washing2", "operating6")}),
    ("recycle1 washing2 sharpening3 operating4 disinfection5 checking6 operating7",
     {ms("recycle1", "washing2", "operating4")}),
    ("recycle1 recycle2 washing3 sharpening4 operating5 disinfection6 checking7 operating8 washing9 operating10",
     {ms("recycle1", "washing3", "operating5"), ms("recycle2", "washing3", "operating5"),
      ms("recycle1", "washing9", "operating10"), ms("recycle2", "washing9", "operating10")}),
])
def test_q1_of_the_dissertation(events, expected):
    """Mo Liu's Q1 ("Extending Event Sequence Processing", WPI 2012, §5.1): a tool used again
    without being sharpened, disinfected and checked in that order; the matches, by neel."""
    rows = [dict(r, type=r["type"].capitalize()) for r in stream(events)]
    assert matches(Q1, rows, "neel") == expected == matches(Q1, rows, "reference")


def test_a_nested_match_query_is_planned_on_neel_and_explained():
    q = compile_query("PATTERN SEQ(A a, NOT SEQ(B, C), D d) WHERE [g] WITHIN 5")
    p = plan(q)
    assert p.engine == "neel"
    text = p.explain()
    assert "d0: SEQ(A a, NOT C, D d)" in text and "d1: SEQ(A a, EXISTS SEQ(NOT B, C, NOT C), D d)" in text
    assert "u0: d0, d1 bit-marked: the matches of SEQ(A a, D d) [rcep]" in text
    assert "no two units find the same match" in text
    assert "Plan-Finder for d0, d1 (same positive events)" in text and "(assumed, not measured)" in text
    assert "  {d0, d1}: " in text and "<- chosen" in text
    alone = ENGINES["neel"](q, match_groups=[(0,), (1,)]).explain_lines()
    assert "  u1: d1 [rcep, with witness events of C]" in alone
    q = compile_query("PATTERN SEQ(A a, NOT AND(B, C), D d) WITHIN 5")
    text = "\n".join(ENGINES["neel"](q, match_groups=[(0,), (1,)]).explain_lines())
    assert "u0, u1 may find the same match as another unit" in text


@pytest.mark.parametrize("text,why", [
    ("PATTERN SEQ(A a, OR(B b, C c), D d)", "window"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", "flat"),
    ("PATTERN SEQ(A a, NOT SEQ(B, NOT C, D), E e) WITHIN 5", "no normal form"),
])
def test_refusals_say_why(text, why):
    reason = ENGINES["neel"].refusal(compile_query(text))
    assert reason is not None and why in reason, reason
