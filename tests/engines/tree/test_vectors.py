"""The condensation paper's examples, the merge hazard of its pointer chains, the choice of the
join tree and of condensation, and the refusals."""

from __future__ import annotations

import random

from cepagg.engines import ENGINES
from cepagg.engines.tree import Tree, switch
from cepagg.engines.tree.cost import Stats, choose_tree
from cepagg.engines.tree.plan import all_trees, compile_tree, left_deep
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from helpers import match_sets

QUERY_1 = ("PATTERN SEQ(t1, t2, t3) WHERE t1.name = t3.name AND t2.name = 'Google' "
           "AND t1.price >= t2.price + 2.0 AND t3.price < t2.price WITHIN 500")
QUERY_1P = ("PATTERN SEQ(t1, t2, t3, t4) WHERE t1.name = t3.name AND t2.name = 'Google' "
            "AND t1.price >= t2.price + 2.0 AND t3.price < t2.price AND t3.price > t4.price WITHIN 500")


def _stock(ticks):
    return [{"type": "S", "ts": ts, "name": n, "price": p} for ts, n, p in ticks]


def _matches(text, rows, **options) -> set:
    q = compile_query(text)
    res = ENGINES["tree"](q, **options).run(EventBatch.from_rows(rows))
    return {frozenset((v, e) for (v, _, e) in m) for (_, m) in match_sets(res)}


def test_query_1_terms_of_the_left_deep_plan():
    """A stored node condenses on what its parent's conditions read from it: leaf t1 on price
    (the t1;t2 node checks ``t1.price >= t2.price + 2.0``), the t1;t2 node on t1.name and
    t2.price (read by the root). ``t2.name = 'Google'`` is t2's own filter."""
    shape = Tree(compile_query(QUERY_1)).shape
    plan = compile_tree(shape, left_deep(3))
    t1, t12 = plan.nodes[0], plan.root.left
    assert t1.terms == ((0, "price"),)
    assert t12.terms == ((0, "name"), (1, "price"))
    assert [c.condition.text for c in plan.root.checks] == ["t1.name = t3.name", "t3.price < t2.price"]


def test_vector_b3_query_1():
    """Stream e1..e8 of the paper's Figs. 4-5 and one more IBM tick: four matches."""
    rows = _stock([(1, "IBM", 6), (2, "Sun", 7), (3, "IBM", 6), (4, "IBM", 4), (5, "Google", 4),
                   (7, "Google", 4), (8, "IBM", 3)])
    ids = {r["ts"]: i for i, r in enumerate(rows)}
    want = {frozenset({("t1", ids[a]), ("t2", ids[b]), ("t3", ids[c])})
            for a, b, c in [(1, 5, 8), (1, 7, 8), (3, 5, 8), (3, 7, 8)]}
    for tree in all_trees(0, 2):
        for policy in ("on", "off"):
            assert _matches(QUERY_1, rows, tree=tree, condense=policy) == want


def test_merged_groups_enumerate_only_checked_combinations():
    """Query 1' over x, y, p, r, s, t4: the t1;t2;t3 node groups x;p;r and y;p;s together
    (both have t3.price 3). Enumerating the merged group by per-event successors (x->p, y->p,
    p->{r, s}) would also give x;p;s;t4 and y;p;r;t4, which break t1.name = t3.name; only the
    two checked combinations are matches."""
    rows = _stock([(10, "IBM", 7), (12, "Sun", 8), (20, "Google", 4), (30, "IBM", 3), (31, "Sun", 3),
                   (40, "Any", 2)])
    x, y, p, r, s, t4 = range(6)
    want = {frozenset({("t1", x), ("t2", p), ("t3", r), ("t4", t4)}),
            frozenset({("t1", y), ("t2", p), ("t3", s), ("t4", t4)})}
    q = compile_query(QUERY_1P)
    eng = ENGINES["tree"](q, tree=left_deep(4), condense="on")
    state = eng.new_state()
    eng.process(state, EventBatch.from_rows(rows[:5]))
    (part,) = state.partitions.values()
    store = part.stores[compile_tree(eng.shape, left_deep(4)).root.left.id]
    assert [len(g.items) for g in store.groups.values() if g.items] == [2]  # merged
    for tree in all_trees(0, 3):
        assert _matches(QUERY_1P, rows, tree=tree, condense="on") == want


def test_vector_b4_query_1p_one_group():
    """Fig. 6: twelve composites of t1;t2;t3 in one group (t3.price 3.05)."""
    rows = _stock([(15, "Sun", 6.15), (16, "Sun", 6.20), (18, "Sun", 6.20), (20, "Sun", 6.12),
                   (25, "Google", 3.50), (35, "Google", 3.10), (40, "Google", 3.18), (60, "Sun", 3.05)])
    q = compile_query(QUERY_1P)
    eng = ENGINES["tree"](q, tree=left_deep(4), condense="on")
    state = eng.new_state()
    eng.process(state, EventBatch.from_rows(rows))
    (part,) = state.partitions.values()
    store = part.stores[compile_tree(eng.shape, left_deep(4)).root.left.id]
    assert store.size == 12 and len(store.groups) == 1


def test_cost_model_starts_from_the_rare_end():
    """SEQ(a, b, c) with a rare: joining a with b first keeps few composites (left-deep);
    with c rare, b with c first (right-deep)."""
    shape = Tree(compile_query("PATTERN SEQ(A a, B b, C c) WITHIN 10")).shape
    assert choose_tree(shape, Stats((1.0, 50.0, 50.0), ()))[0] == ((0, 1), 2)
    assert choose_tree(shape, Stats((50.0, 50.0, 1.0), ()))[0] == (0, (1, 2))


def test_cost_model_measures_selectivity():
    """Equal rates; a selective condition between a and b makes the a;b node small."""
    q = compile_query("PATTERN SEQ(A a, B b, C c) WHERE a.x = b.x WITHIN 100")
    rows = [{"type": "ABC"[i % 3], "ts": i, "x": i % 50} for i in range(300)]
    eng = Tree(q)
    eng.run(EventBatch.from_rows(rows))
    assert eng.forced is None and eng.chosen_cost is not None
    state = eng.new_state()
    eng.process(state, EventBatch.from_rows(rows).sorted())
    assert state.tree == ((0, 1), 2)


def test_auto_condenses_where_it_pays_only():
    """Few distinct values read above a store: it condenses; all distinct: it stays plain."""
    q = compile_query("PATTERN SEQ(A a, B b) WHERE a.x > b.x WITHIN 400")
    rng = random.Random(1)
    for values, condensed in ((3, True), (10**9, False)):
        rows = [{"type": "AB"[i % 2], "ts": i, "x": rng.randrange(values)} for i in range(600)]
        eng = Tree(q, tree=(0, 1), condense="auto")
        state = eng.new_state()
        eng.process(state, EventBatch.from_rows(rows))
        (part,) = state.partitions.values()
        assert part.stores[0].condensed is condensed


def test_refusals():
    assert "Kleene" in Tree.refusal(compile_query("PATTERN SEQ(A a, B b+) WITHIN 5"))
    assert "strategy" in Tree.refusal(compile_query("PATTERN SEQ(A a, B b) WITHIN 5 STRATEGY skip-till-next-match"))
    assert Tree.refusal(compile_query("PATTERN SEQ(A a, B b)"))


def test_stores_forget_what_the_window_left_behind():
    """A store keeps about a window of composites, whatever the stream's length (a review that
    never came back once the store had grown kept all 500 A events)."""
    q = compile_query("PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 20")
    rows = [{"type": "ABC"[i % 3], "ts": i // 3, "x": i % 7} for i in range(1500)]
    for policy in ("on", "off", "auto"):
        eng = Tree(q, tree=((0, 1), 2), condense=policy)
        state = eng.new_state()
        eng.process(state, EventBatch.from_rows(rows))
        (part,) = state.partitions.values()
        a, ab = part.stores[0], part.stores[3]
        # reviewed after max(REVIEW, what it held) inserts: at most that many more than a window
        assert a.size <= switch.REVIEW + 2 * 20 and ab.size <= switch.REVIEW + 2 * 20 * 20, \
            (policy, a.size, ab.size)
