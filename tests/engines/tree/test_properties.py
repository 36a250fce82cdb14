"""The tree engine returns exactly what the reference returns, on random streams and random
queries (rcep's query generator, the Kleene-free ones: typed and untyped variables, negation and
EXISTS leading, between and trailing with conditions, keyed and keyless, WITHIN and SLIDE,
matches and aggregates), whatever the join tree (each forced in turn), with condensation forced
on, forced off or switched by the engine, and whatever the batching, watermarks, snapshots and
time slices. Matches are compared as sets (match numbers follow the order of discovery).

``CEPAGG_NIGHTLY=1`` runs many more cases (tests/generators.py:cases).
"""

from __future__ import annotations

import random

import pytest
from queries import ATTRS, NEG_TYPES, TYPES, differences, random_case, random_query, sliced_rows

from cepagg.engines import ENGINES
from cepagg.engines.tree.plan import all_trees
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases, random_stream
from helpers import run_in_pieces

POLICIES = ("on", "off", "auto")



def _case(seed: int) -> tuple[str, list[dict]]:
    return random_case("tree", seed, 16)


_same = differences


def _k(q) -> int:
    return sum(1 for v in q.variables.values() if not v.negated)


@pytest.mark.parametrize("block", range(4))
def test_every_tree_and_policy_equals_the_reference(block):
    for n in range(cases(250, 5000)):
        text, rows = _case(100_000 * block + n)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        for tree in all_trees(0, _k(q) - 1):
            for policy in POLICIES:
                got = ENGINES["tree"](q, tree=tree, condense=policy).run(batch)
                problems = _same(q, expected, got.rows)
                assert not problems, "\n".join([text, f"tree {tree} condense {policy}", str(rows)] + problems)


@pytest.mark.parametrize("block", range(2))
def test_batches_watermarks_and_snapshots(block):
    for n in range(cases(250, 5000)):
        seed = 500_000 + 100_000 * block + n
        text, rows = _case(seed)
        rng = random.Random(seed * 7)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        tree = rng.choice(all_trees(0, _k(q) - 1) + ("auto",))
        eng = ENGINES["tree"](q, tree=tree, condense=rng.choice(POLICIES))
        cuts, out = run_in_pieces(eng, batch, rng)
        problems = _same(q, expected, out)
        assert not problems, "\n".join([text, str(tree), str(cuts), str(rows)] + problems)


def test_time_slices_merge_to_the_whole():
    """``start_range`` slices (as Spark's batch driver uses them) add up to the whole result."""
    for n in range(cases(250, 5000)):
        seed = 900_000 + n
        text, rows = _case(seed)
        rng = random.Random(seed)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        top = max(r["ts"] for r in rows) + 1
        width = rng.randint(1, 5)
        tree, policy = rng.choice(all_trees(0, _k(q) - 1)), rng.choice(POLICIES)
        out = sliced_rows(lambda **o: ENGINES["tree"](q, tree=tree, condense=policy, **o), q, top, width, batch)
        problems = _same(q, expected, out)
        assert not problems, "\n".join([text, str(rows)] + problems)


PRICE_QUERIES = [
    # the condensation paper's Query 2 (4 classes) and Query 3, on price walks
    "PATTERN SEQ(T a, T b, T c, T d) WHERE a.x > b.x AND a.x > c.x AND a.x > d.x AND a.n = 1 "
    "AND b.n = 2 AND c.n = 3 AND d.n = 4 WITHIN 12",
    "PATTERN SEQ(T a, T b, T c, T d) WHERE a.n = c.n AND b.n = d.n AND b.n = 2 AND a.x < b.x - 1 "
    "AND c.x > d.x + 1 WITHIN 10",
    "RETURN COUNT(*), SUM(c.x) PATTERN SEQ(T a, T b, NOT (T z, z.x > a.x), T c) WHERE a.x >= b.x + 1 "
    "AND c.x < b.x WITHIN 9 SLIDE 4",
    "PATTERN SEQ(a, b, c, EXISTS e) WHERE [g] AND a.x > b.x AND c.x > a.x WITHIN 8",
]


@pytest.mark.parametrize("text", PRICE_QUERIES)
def test_condensing_queries_on_price_walks(text):
    """Few distinct prices, many matches: the stores really condense (groups hold several
    composites) and every tree still returns the reference's matches."""
    q = compile_query(text)
    condensed_somewhere = False
    for n in range(cases(12, 200)):
        rng = random.Random(n)
        rows, ts, price = [], 0, {1: 3, 2: 3, 3: 3, 4: 3}
        for _ in range(rng.randint(16, 28)):
            ts += rng.randint(0, 1)
            name = rng.randint(1, 4)
            price[name] = max(0, min(6, price[name] + rng.choice((-1, 0, 1))))
            rows.append({"type": "T", "ts": ts, "n": name, "g": rng.choice("uv"), "x": price[name]})
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        for tree in all_trees(0, _k(q) - 1):
            eng = ENGINES["tree"](q, tree=tree, condense="on")
            state = eng.new_state()
            out = eng.process(state, batch.sorted())
            for part in state.partitions.values():
                for s in part.stores:
                    if s is not None and s.condensed and s.size > len(s.groups):
                        condensed_somewhere = True
            out += eng.finish(state)
            problems = _same(q, expected, out)
            assert not problems, "\n".join([text, str(tree), str(rows)] + problems)
    assert condensed_somewhere


def test_reviews_and_mode_changes_in_the_middle_of_a_stream(monkeypatch):
    """Stores reviewed after every insert (expired composites dropped) and flipped between
    plain and condensed at random at each review: still the reference's result, on streams
    long enough for the window to move on."""
    from cepagg.engines.tree import switch

    rng = random.Random(5)
    review = switch.review

    def flipping(store, horizon, policy, has_checks):
        review(store, horizon, policy, has_checks)
        if rng.random() < 0.5:
            store.set_condensed(not store.condensed)

    monkeypatch.setattr(switch, "REVIEW", 1)
    monkeypatch.setattr(switch, "review", flipping)
    for n in range(cases(150, 3000)):
        seed = 1_700_000 + n
        crng = random.Random(seed)
        while True:
            text = random_query(crng)
            if ENGINES["tree"].refusal(compile_query(text)) is None:
                break
        rows = random_stream(crng, 3 * TYPES + NEG_TYPES, n=crng.randint(20, 40), max_gap=2, attrs=ATTRS)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        tree = crng.choice(all_trees(0, _k(q) - 1))
        got = ENGINES["tree"](q, tree=tree, condense=crng.choice(POLICIES)).run(batch)
        problems = _same(q, expected, got.rows)
        assert not problems, "\n".join([text, str(tree), str(rows)] + problems)
