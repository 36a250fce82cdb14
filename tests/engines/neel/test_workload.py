"""Workloads mixing nested and flat queries: the terms of nested queries join the flat queries'
shared aseq plan (:mod:`cepagg.plan.nested_terms`), and every query still returns what the
reference returns. The test checks that most workloads do share terms, so it cannot pass by
running every nested query alone."""

from __future__ import annotations

import random

from nested_queries import ATTRS, TYPES, accepted_queries, random_nested_query

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan_workload
from generators import cases, random_stream, seeded

N = cases(60, 2000)


def _flat_query(rng: random.Random) -> str:
    """A flat query aseq accepts, over the nested queries' types, windows and keys, so that it
    shares prefixes with their terms."""
    n = rng.randint(2, 3)
    pattern = "SEQ(" + ", ".join(f"{rng.choice(TYPES)} v{k + 1}" for k in range(n)) + ")"
    keyed = rng.random() < 0.4
    mode = rng.choice(["WITHIN 6", "WITHIN 5 SLIDE 2", "WITHIN 7", "WITHIN 6 EMIT ON CHANGE"])
    agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(v1.x)", "MAX(v2.x)"])
    where = " WHERE [g] GROUP BY g" if keyed else ""
    return f"RETURN {'g, ' if keyed else ''}{agg} PATTERN {pattern}{where} {mode}"


def _workloads(rng: random.Random, n: int):
    nested = accepted_queries(rng, random_nested_query, n * 3)
    for _ in range(n):
        texts = [next(nested)[0] for _ in range(rng.randint(1, 3))]
        texts += [_flat_query(rng) for _ in range(rng.randint(0, 2))]
        rng.shuffle(texts)
        yield texts


def test_mixed_workloads_equal_the_reference_per_query():
    rng = seeded("neel-workload")
    sharing = 0
    for texts in _workloads(rng, N):
        queries = [compile_query(t) for t in texts]
        wp = plan_workload(queries)
        sharing += bool(wp.shared_terms)
        for _ in range(2):
            rows = random_stream(rng, TYPES, n=rng.randint(6, 13), max_gap=2, attrs=ATTRS)
            batch = EventBatch.from_rows(rows)
            for text, q, got in zip(texts, queries, wp.run(batch)):
                problems = ENGINES["reference"](q).run(batch).diff(got)
                assert not problems, "\n".join([f"query: {text}", f"workload: {texts}", f"stream: {rows}",
                                                *problems])
    assert sharing > N // 2, (sharing, N)


WORKLOAD = """-- name: flat
RETURN g, COUNT(*) PATTERN SEQ(A a, B b, D d) WHERE [g] GROUP BY g WITHIN 6
---
-- name: orq
RETURN g, COUNT(*), SUM(a.x) PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [g] GROUP BY g WITHIN 6
---
-- name: negq
RETURN COUNT(*) PATTERN SEQ(A a, NOT SEQ(B, C), D d) WHERE [g] WITHIN 6
"""


def test_explain_shows_which_terms_share():
    from cepagg.lang.workload import compile_workload

    named = compile_workload(WORKLOAD)
    wp = plan_workload([q for _, q in named], [n for n, _ in named])
    text = wp.explain()
    assert "t0: + SEQ(A a, B b, D d) -- in the shared aseq plan" in text
    assert "[2] D  -> <flat>, <orq.t0>" in text  # one PreTree node for the flat query and a term
    assert wp.shared_terms[:2] == [(1, 0), (1, 1)]
    if wp.plans[2].engine == "neel":  # a negated sequence reads witness events: its terms run alone
        assert "alone: reads witness events" in text


def test_a_nested_query_shares_with_another_nested_query():
    """Two nested queries whose terms have a common prefix: one PreTree holds both."""
    texts = ["RETURN COUNT(*) PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 6",
             "RETURN COUNT(*) PATTERN SEQ(A a, OR(B b, E e)) WITHIN 6"]
    wp = plan_workload([compile_query(t) for t in texts], ["x", "y"])
    assert wp.groups() == [[0, 1]]
    assert "[0] A" in wp.explain() and wp.explain().count("unit ") == 1
    rng = seeded("two nested")
    for _ in range(30):
        batch = EventBatch.from_rows(random_stream(rng, "ABCDE", n=12, max_gap=1, attrs=ATTRS))
        for text, got in zip(texts, wp.run(batch)):
            assert not ENGINES["reference"](compile_query(text)).run(batch).diff(got)


def _chunks(batch: EventBatch, rng: random.Random) -> list[tuple[EventBatch, int]]:
    """The batch cut at 1-2 random times: (events, the last time of the chunk), each chunk's
    events all later than the one before's."""
    ts = batch.table.column("ts").to_pylist()
    cuts = sorted(rng.sample(sorted(set(ts)), min(2, len(set(ts)))))
    out, lo = [], 0
    for t in cuts + [ts[-1]]:
        hi = max((i + 1 for i, x in enumerate(ts) if x <= t), default=lo)
        if hi > lo:
            out.append((EventBatch(batch.table.slice(lo, hi - lo), batch.time_unit), t))
        lo = hi
    return out


def test_mixed_workloads_partial_and_in_chunks_equal_the_reference():
    """The shared evaluator as the drivers use it: with partial rows (Spark's time slices,
    merged here), and fed batch by batch with ``advance`` between (SLIDE windows released)."""
    from cepagg.engines.aggregates import combine_rows
    from cepagg.plan import workload_evaluator

    rng = seeded("neel-workload-partial")
    for texts in _workloads(rng, N // 2):
        queries = [compile_query(t) for t in texts]
        wp = plan_workload(queries)
        rows = random_stream(rng, TYPES, n=rng.randint(6, 13), max_gap=2, attrs=ATTRS)
        batch = EventBatch.from_rows(rows).sorted()
        expected = [ENGINES["reference"](q).run(batch) for q in queries]
        for group in wp.groups():
            qs = [queries[i] for i in group]
            for partial in (True, False) if all(q.mode != "emit" for q in qs) else (False,):
                wl = workload_evaluator(qs, partial=partial)
                state = wl.new_state()
                tagged = []
                for chunk, last in _chunks(batch, rng):
                    tagged += wl.process(state, chunk)
                    tagged += wl.advance(state, last)
                    state = wl.restore(wl.snapshot(state))  # (a checkpoint between batches)
                tagged += wl.finish(state)
                for j, i in enumerate(group):
                    got = [r for qj, r in tagged if qj == j]
                    got = combine_rows(queries[i], got) if partial else got
                    problems = expected[i].diff(expected[i].__class__(expected[i].columns, got))
                    assert not problems, "\n".join([f"query: {texts[i]}", f"partial: {partial}",
                                                    f"stream: {rows}", *problems])
