"""rcep's compiled path (patterns enumerated by a numba kernel, conditions checked as a match
grows, matches handed over as blocks of arrays or folded into aggregates) returns the
reference's result: as the protocol's tuples, as blocks through the writer (long and wide form,
blocks far smaller than one trigger's matches, ``max_matches``), as aggregates, compiled and as
the kernel's Python twin."""

from __future__ import annotations

import random

import pytest
from queries import ATTRS, NEG_TYPES, TYPES, differences, random_query, sliced_rows

import cepagg.engines.rcep.compiled as compiled
import cepagg.runner as runner
from cepagg.engines import ENGINES, kernels
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import cases, random_stream
from helpers import match_sets, run_in_pieces


def compiled_case(seed: int, max_events: int = 16, matches: bool = False) -> tuple[str, list[dict]]:
    """A random query that takes the compiled path (returning events or aggregates; events only
    where ``matches``), and a random stream."""
    rng = random.Random(seed)
    while True:
        text = random_query(rng)
        q = compile_query(text)
        if ENGINES["rcep"].refusal(q) is None and ENGINES["rcep"](q).compiled_refusal is None \
                and (q.returns_matches or not matches):
            break
    rows = random_stream(rng, 3 * TYPES + NEG_TYPES, n=rng.randint(6, max_events), max_gap=2, attrs=ATTRS)
    return text, rows


@pytest.mark.parametrize("block", range(2))
def test_tuples_equal_the_reference(block):
    for k in range(cases(150, 3000)):
        text, rows = compiled_case(10_000 * block + k)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        problems = differences(q, expected, ENGINES["rcep"](q).run(batch).rows)
        assert not problems, "\n".join([text, str(rows)] + problems)


def test_batches_watermarks_and_snapshots():
    for k in range(cases(150, 3000)):
        text, rows = compiled_case(40_000 + k)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        cuts, out = run_in_pieces(ENGINES["rcep"](q), batch, random.Random(k))
        problems = differences(q, expected, out)
        assert not problems, "\n".join([text, str(cuts), str(rows)] + problems)


def test_time_slices_equal_the_reference():
    """``start_range`` slices (Spark's batch driver): each match in exactly one slice."""
    for k in range(cases(150, 3000)):
        text, rows = compiled_case(30_000 + k)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        top = max(r["ts"] for r in rows) + 1
        width = random.Random(k).randint(1, 5)
        out = sliced_rows(lambda **o: ENGINES["rcep"](q, **o), q, top, width, batch)
        problems = differences(q, expected, out)
        assert not problems, "\n".join([text, str(rows)] + problems)


def _long(text: str, batch: EventBatch, engine: str, **kw) -> Result:
    return runner.run(text, batch, engine=engine, match_format="long", **kw)


def test_blocks_through_the_writer_equal_the_reference(monkeypatch):
    """Blocks of 5 rows: one trigger's matches fill many blocks, the kernel resumes."""
    monkeypatch.setattr(runner, "PIECE_ROWS", 5)
    for k in range(cases(150, 3000)):
        text, rows = compiled_case(50_000 + k, matches=True)
        batch = EventBatch.from_rows(rows)
        expected, got = _long(text, batch, "reference"), _long(text, batch, "rcep")
        assert match_sets(expected) == match_sets(got), "\n".join([text, str(rows)])
        assert _without_numbers(expected) == _without_numbers(got), text  # (attributes, cells)


def test_wide_blocks_equal_the_python_join(monkeypatch):
    monkeypatch.setattr(runner, "PIECE_ROWS", 7)
    for k in range(cases(60, 1000)):
        text, rows = compiled_case(70_000 + k, matches=True)
        batch = EventBatch.from_rows(rows)
        got = runner.run(text, batch, engine="rcep", match_format="wide")
        expected = runner.run(text, batch, engine="reference", match_format="wide")
        assert _without_numbers(got) == _without_numbers(expected), text


def _without_numbers(result: Result) -> list[str]:
    """The rows without their match numbers (which follow the order of discovery), sorted."""
    m = list(result.columns).index("match")
    return sorted(repr(r[:m] + r[m + 1:]) for r in result.rows)


def test_max_matches_cuts_a_block(monkeypatch):
    text = "PATTERN SEQ(A a, B b+, C c) WITHIN 50 RETURN a, b, c"
    rng = random.Random(5)
    batch = EventBatch.from_rows(random_stream(rng, "ABC", n=30, max_gap=2))
    every = match_sets(_long(text, batch, "reference"))
    assert sum(every.values()) > 40
    for n in (1, 7, 40):
        got = _long(text, batch, "rcep", max_matches=n)
        found = match_sets(got)
        assert sum(found.values()) == n
        assert not (found - every)


def test_the_twin_gives_the_same_matches(monkeypatch):
    """The kernel's Python twin (the same source, uncompiled) finds what the compiled kernel
    finds, in the same order."""
    twin = kernels.twin("cepagg.engines.rcep._kernels")
    for k in range(cases(40, 400)):
        text, rows = compiled_case(90_000 + k, max_events=12)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        fast = ENGINES["rcep"](q).run(batch).rows
        monkeypatch.setattr(compiled, "_kernel", lambda: twin.enumerate_triggers)
        slow = ENGINES["rcep"](q).run(batch).rows
        monkeypatch.undo()
        assert fast == slow, text


def test_which_queries_take_the_compiled_path():
    def reason(text: str) -> str | None:
        return ENGINES["rcep"](compile_query(text)).compiled_refusal

    assert reason("PATTERN SEQ(A a, B b+, c) WHERE [g] AND a.x > 1 AND [b.h] WITHIN 5 RETURN a, c") \
        == "an equivalence on a Kleene variable is checked by the Python join"
    assert reason("PATTERN SEQ(A a, B b+, c) WHERE [g] AND a.x > 1 AND [a.h] WITHIN 5 SLIDE 2 RETURN a, c") is None
    assert reason("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 5") is None
    assert reason("PATTERN SEQ(A a, B b+) WHERE b.x < NEXT(b).x - 1 AND 2 - FIRST(b).x < a.x WITHIN 5") is None
    assert reason("PATTERN SEQ(A a, B b) WHERE a.x < b.x OR a.x > 3 WITHIN 5") is None
    assert reason("PATTERN SEQ(A a, B b+) WHERE NOT (a.x - b.x < 3 AND b.x * 2 / a.x > 1) WITHIN 5") is None
    assert reason("PATTERN SEQ(A a, B b+) WHERE b.x < NEXT(b).x OR NOT b.x > 2 WITHIN 5") is None
    assert "two Kleene runs" in reason("PATTERN SEQ(A a+, B b+) WHERE a.x < b.x WITHIN 5")
    assert "two Kleene runs" in reason("PATTERN SEQ(A a+, B b+) WHERE a.x < 1 OR b.x > 2 WITHIN 5")
    assert "event types" in reason("PATTERN SEQ(A a, B b) WHERE a.type = b.type WITHIN 5")
    assert "compares strings" in reason("PATTERN SEQ(A a, B b) WHERE a.x < b.x OR a.h = 'p' WITHIN 5")
    assert "beyond 2^52" in reason(f"PATTERN SEQ(A a, B b) WHERE a.x < b.x + {2**53} WITHIN 5")
    assert "after the run" in reason("PATTERN SEQ(A a, B b+, C c, D d) WHERE b.x < NEXT(b).x OR c.x > 1 WITHIN 5")
    assert reason("PATTERN SEQ(A a, NOT C n, B b) WITHIN 5") is not None
    assert reason("RETURN COUNT(*), SUM(b.x) PATTERN SEQ(A a, B b+) WHERE a.x < b.x OR a.x > 1 WITHIN 5") is None
    assert "GROUP BY a variable" in reason("RETURN a.h, COUNT(*) PATTERN SEQ(A a, B b) GROUP BY a.h WITHIN 5")
    assert ENGINES["tree"](compile_query("PATTERN SEQ(A a, B b) WITHIN 5")).compiled_refusal is not None


def test_kleene_vectors():
    """Kleene first, last and alone: every non-empty subset, the trigger last."""
    batch = EventBatch.from_rows([{"type": t, "ts": i} for i, t in enumerate("BBAB")])
    for text, n in [("PATTERN B b+ WITHIN 10", 1 + 2 + 4), ("PATTERN SEQ(B b+, A a) WITHIN 10", 3),
                    ("PATTERN SEQ(A a, B b+) WITHIN 10", 1), ("PATTERN SEQ(B x, B b+) WITHIN 10", 1 + 3)]:
        q = compile_query(text)
        assert ENGINES["rcep"](q).compiled_refusal is None
        got = match_sets(ENGINES["rcep"](q).run(batch))
        assert sum(got.values()) == n, text
        assert got == match_sets(ENGINES["reference"](q).run(batch)), text


def test_explain_says_which_join():
    from cepagg.plan import plan

    fast = plan(compile_query("PATTERN SEQ(A a, B b+, C c) WHERE [g] WITHIN 5 RETURN a, b, c"), "auto")
    slow = plan(compile_query("PATTERN SEQ(A a, NOT D d, B b+, C c) WHERE b.x < NEXT(b).x WITHIN 5 RETURN a, c"),
                "auto")
    assert fast.engine == slow.engine == "rcep"
    assert "join: compiled" in fast.explain()
    assert "join: compiled" in plan(compile_query(
        "PATTERN SEQ(A a, B b+, C c) WHERE a.x * 2 < b.x OR NOT c.x - a.x > 1 WITHIN 5 RETURN a, c"), "auto").explain()
    assert "join: Python (condition 'a.type = c.type' compares event types" in plan(compile_query(
        "PATTERN SEQ(A a, B b+, C c) WHERE a.type = c.type WITHIN 5 RETURN a, c"), "auto").explain()
    assert "join: Python (NOT and EXISTS" in slow.explain()
    folded = plan(compile_query("RETURN COUNT(*), SUM(b.x) PATTERN SEQ(A a, B b+, C c) WHERE a.x < b.x OR c.x > 1 "
                                "WITHIN 5"), "rcep").explain()
    assert "join: compiled" in folded and "no match is materialised" in folded


def test_a_snapshot_of_buffers_is_restored_on_the_compiled_path():
    """A state written when every query kept per-position buffers of events (no store) restores
    on the compiled path."""
    import pickle

    from cepagg.engines.base import STATE_FORMAT

    rows = [{"type": t, "ts": i, "x": i % 3, "g": "uv"[i % 2]} for i, t in enumerate("ABCABBCAAC")]
    batch = EventBatch.from_rows(rows).sorted()
    for text in ["PATTERN SEQ(A a, B b+, c) WHERE [g] WITHIN 10 RETURN a, b, c",
                 "PATTERN SEQ(a, B b) WITHIN 3 SLIDE 2 RETURN a, b"]:
        q = compile_query(text)
        expected = match_sets(ENGINES["reference"](q).run(batch))
        old = ENGINES["rcep"](q)
        old._compiled = None  # (the Python join: per-position buffers of events)
        state = old.new_state()
        out = old.process(state, batch.slice(0, 5))
        eng = ENGINES["rcep"](q)
        assert eng.compiled_refusal is None
        restored = eng.restore(pickle.dumps((STATE_FORMAT, "rcep", state), protocol=5))
        out += eng.process(restored, batch.slice(5)) + eng.finish(restored)
        assert match_sets(Result(q.output_columns, out)) == expected, text


def comparison_query(rng: random.Random) -> str:
    """A random RETURN-of-events query whose conditions compare numeric attributes of its
    variables (plain, FIRST, LAST, NEXT, plus or minus a number, chains, constants): the forms
    the compiled join checks as a match grows."""
    k = rng.choice([2, 2, 3, 3, 3, 4])
    kleene = [rng.random() < 0.5 for _ in range(k)]
    items = [(f"p{i}" if rng.random() < 0.4 else f"{rng.choice(TYPES)} p{i}") + ("+" if kleene[i] else "")
             for i in range(k)]

    def side(i: int) -> str:
        ref = f"p{i}.x"
        if kleene[i]:
            ref = rng.choice([ref, ref, f"FIRST(p{i}).x", f"LAST(p{i}).x"])
        r = rng.random()
        if r < 0.15:
            return f"{ref} + {rng.choice(['1', '0.5', '-2'])}"
        if r < 0.25:
            return f"{ref} - {rng.choice(['1', '0.3'])}"
        if r < 0.3:
            return f"4 - {ref}"
        return ref

    conds = []
    for _ in range(rng.randint(1, 3)):
        i, j = rng.sample(range(k), 2)
        if kleene[i] and kleene[j]:  # (two runs compared event by event: the Python join's)
            j = rng.choice([x for x in range(k) if x != i and not kleene[x]] or [i])
            if j == i:
                continue
        op = rng.choice(["<", "<=", ">", ">=", "=", "!="])
        if rng.random() < 0.15:
            conds.append(f"{rng.randint(0, 2)} {rng.choice(['<', '<='])} {side(i)} {op} {side(j)}")
        else:
            conds.append(f"{side(i)} {op} {side(j)}")
    if not conds:
        return comparison_query(rng)
    for i in range(k):
        if kleene[i] and rng.random() < 0.4:
            nxt = rng.choice([f"NEXT(p{i}).x", f"NEXT(p{i}).x - 1"])
            conds.append(f"p{i}.x {rng.choice(['<', '<=', '>=', '!='])} {nxt}")
        if rng.random() < 0.15:
            conds.append(f"p{i}.x {rng.choice(['>', '<='])} {rng.randint(0, 4)}")
    if rng.random() < 0.5:
        conds.insert(0, "[g]")
    window = f"WITHIN {rng.randint(3, 9)}"
    if rng.random() < 0.3:
        window += f" SLIDE {rng.randint(1, 3)}"
    ret = ", ".join(f"p{i}" for i in sorted(rng.sample(range(k), rng.randint(1, k))))
    return f"PATTERN SEQ({', '.join(items)}) WHERE {' AND '.join(conds)} {window} RETURN {ret}"


@pytest.mark.parametrize("block", range(4))
def test_comparisons_on_both_joins_equal_the_reference(block):
    """Random comparisons between variables (nulls among the values): the compiled join and
    the Python join (the same engine with its compiled join taken away) each return the
    reference's matches."""
    attrs = {"x": [0, 1, 1.5, 2, 3, 4, None], "g": ["u", "v"]}
    n_cases = cases(500, 5000)
    for k in range(n_cases):
        rng = random.Random(200_000 + block * 100_000 + k)
        text = comparison_query(rng)
        q = compile_query(text)
        eng = ENGINES["rcep"](q)
        assert eng.compiled_refusal is None, text
        rows = random_stream(rng, TYPES, n=rng.randint(6, 16), max_gap=2, attrs=attrs)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        python = ENGINES["rcep"](q)
        python._compiled = None
        for got in (eng.run(batch), python.run(batch)):
            problems = differences(q, expected, got.rows)
            assert not problems, "\n".join([text, str(rows)] + problems)


def test_query1_takes_the_compiled_join():
    from cepagg.bench.matches import QUERIES
    from cepagg.plan import plan

    for name in ("query1", "query1-any"):
        p = plan(compile_query(QUERIES[name].format(w=500)), "auto")
        assert p.engine == "rcep"
        assert "join: compiled" in p.explain(), name


def test_values_other_than_numbers_move_to_the_python_join():
    """Strings, booleans, integers beyond 2^52 and NaN are compared as the reference compares them:
    the engine moves to the Python join (also in the middle of a stream, its stored events
    carried over)."""
    text = "PATTERN SEQ(A a, B b+, C c) WHERE a.x < b.x AND c.x < FIRST(b).x WITHIN 20 RETURN a, b, c"
    q = compile_query(text)
    types = "ABCBBCABC"
    for values in (["b", "c", "a", "d", "e", "a", "b", "c", "a"], [t == "B" for t in types],
                   [2**60 + i for i in (1, 3, 0, 4, 5, 0, 1, 4, 0)], [1.0, 5.0, 0.5, float("nan"), 6, 0.2, 1, 7, 0.1]):
        rows = [{"type": t, "ts": i, "x": v} for i, (t, v) in enumerate(zip(types, values))]
        batch = EventBatch.from_rows(rows)
        expected = match_sets(ENGINES["reference"](q).run(batch))
        assert sum(expected.values()) > 0, values
        eng = ENGINES["rcep"](q)
        assert match_sets(eng.run(batch)) == expected, values
        assert eng._compiled is None and "other than numbers" in eng.compiled_refusal
    first = EventBatch.from_rows([{"type": t, "ts": i, "x": v} for i, (t, v) in enumerate(zip("ABB", (1, 5, 7)))])
    later = EventBatch.from_rows([{"type": "C", "ts": 3, "x": 2**60}, {"type": "C", "ts": 4, "x": 3}], ids=[3, 4])
    eng = ENGINES["rcep"](q)
    state = eng.new_state()
    out = eng.process(state, first)
    assert eng._compiled is not None
    out += eng.process(state, later) + eng.finish(state)
    whole = EventBatch.from_rows(first.table.to_pylist() + later.table.to_pylist())
    assert len(out) > 0
    assert match_sets(Result(q.output_columns, out)) == match_sets(ENGINES["reference"](q).run(whole))


def test_the_twin_of_the_trigger_loop_gives_the_same_blocks(monkeypatch):
    """Blocks through the writer (a partition's triggers in one kernel call, blocks of 5 rows
    resumed): the Python twin writes what the compiled kernel writes."""
    monkeypatch.setattr(runner, "PIECE_ROWS", 5)
    twin = kernels.twin("cepagg.engines.rcep._kernels")
    for k in range(cases(30, 300)):
        text, rows = compiled_case(95_000 + k, max_events=12, matches=True)
        batch = EventBatch.from_rows(rows)
        fast = _long(text, batch, "rcep").rows
        with monkeypatch.context() as m:
            m.setattr(compiled, "_kernel", lambda: twin.enumerate_triggers)
            slow = _long(text, batch, "rcep").rows
        assert fast == slow, text


def test_a_snapshot_of_a_store_without_values_is_restored():
    """A state whose stores were written before stores kept the compared attributes (a
    condition-free query: none to keep) restores and goes on."""
    import pickle

    from cepagg.engines.base import STATE_FORMAT

    text = "PATTERN SEQ(A a, B b+, c) WHERE [g] WITHIN 10 RETURN a, b, c"
    q = compile_query(text)
    rows = [{"type": t, "ts": i, "x": i % 3, "g": "uv"[i % 2]} for i, t in enumerate("ABCABBCAAC")]
    batch = EventBatch.from_rows(rows).sorted()
    eng = ENGINES["rcep"](q)
    state = eng.new_state()
    out = eng.process(state, batch.slice(0, 5))
    for part in state.partitions.values():
        del part.store.vals
    later = ENGINES["rcep"](q)
    restored = later.restore(pickle.dumps((STATE_FORMAT, "rcep", state), protocol=5))
    out += later.process(restored, batch.slice(5)) + later.finish(restored)
    assert match_sets(Result(q.output_columns, out)) == match_sets(ENGINES["reference"](q).run(batch))


def test_keys_of_every_kind_partition_as_the_reference_does():
    """Keys of integers, strings (with nulls: no partition), two attributes, floats and
    booleans (grouped row by row), an absent attribute (no partition): the reference's matches."""
    rng = random.Random(11)
    kinds = {"i": [1, 2, 3], "s": ["u", "v", None], "f": [0.5, 1.0, None], "b": [True, False]}
    for text in ["PATTERN SEQ(A a, B b+, C c) WHERE [i] AND a.x < b.x WITHIN 8 RETURN a, b, c",
                 "PATTERN SEQ(A a, B b+, C c) WHERE [s] WITHIN 8 RETURN a, b, c",
                 "PATTERN SEQ(A a, B b, C c) WHERE [i, s] AND c.x >= a.x WITHIN 8 RETURN a, c",
                 "PATTERN SEQ(A a, B b+, C c) WHERE [f] WITHIN 8 RETURN a, b, c",
                 "PATTERN SEQ(A a, B b+, C c) WHERE [b] WITHIN 8 RETURN a, b, c",
                 "PATTERN SEQ(A a, B b+, C c) WHERE [nowhere] WITHIN 8 RETURN a, b, c"]:
        q = compile_query(text)
        assert ENGINES["rcep"](q).compiled_refusal is None, text
        for _ in range(30):
            rows = [{"type": rng.choice("ABC"), "ts": t, "x": rng.randint(0, 4),
                     **{a: rng.choice(v) for a, v in kinds.items()}} for t in sorted(rng.choices(range(20), k=16))]
            batch = EventBatch.from_rows(rows)
            expected = ENGINES["reference"](q).run(batch)
            assert match_sets(ENGINES["rcep"](q).run(batch)) == match_sets(expected), "\n".join([text, str(rows)])
            if "nowhere" not in text:  # (the runner refuses a query naming an attribute the input lacks)
                assert match_sets(_long(text, batch, "rcep")) == match_sets(_long(text, batch, "reference")), text


def boolean_query(rng: random.Random, aggregates: bool = False) -> str:
    """A random query whose conditions combine comparisons by AND, OR and NOT, their sides
    arithmetic (``+ - * /``, between attributes or with constants) of plain, FIRST, LAST and
    NEXT references: the forms the compiled join runs as programs. A disjunction reads plain
    events of at most one Kleene variable (two runs compared event by event stay on the Python
    join). It returns events, or with ``aggregates`` COUNT(*) and COUNT, SUM, AVG, MIN, MAX of
    variables' ``x`` (floats) and ``y`` (integers), grouped by the key or not."""
    k = rng.choice([2, 2, 3, 3, 3, 4])
    kleene = [rng.random() < 0.5 for _ in range(k)]
    items = [(f"p{i}" if rng.random() < 0.4 else f"{rng.choice(TYPES)} p{i}") + ("+" if kleene[i] else "")
             for i in range(k)]
    singles = [i for i in range(k) if not kleene[i]]

    def ref(i: int, plain: set) -> str:
        if kleene[i] and rng.random() < 0.5:
            return f"{rng.choice(['FIRST', 'LAST'])}(p{i}).x"
        if kleene[i]:
            plain.add(i)
        return f"p{i}.x"

    def side(i: int, plain: set) -> str:
        r = rng.random()
        if r < 0.15:
            return f"{ref(i, plain)} {rng.choice(['*', '/'])} {rng.choice(['2', '0.5', '-1', '0'])}"
        if r < 0.3 and singles:
            return f"{ref(i, plain)} {rng.choice(['+', '-', '*', '/'])} p{rng.choice(singles)}.x"
        if r < 0.4:
            return f"-{ref(i, plain)} + {rng.choice(['1', '2.5'])}"
        return ref(i, plain)

    def comparison() -> tuple[str, set]:
        plain: set = set()
        i, j = rng.sample(range(k), 2)
        if rng.random() < 0.2:
            text = f"{side(i, plain)} {rng.choice(['<', '>=', '!='])} {rng.randint(0, 4)}"
        else:
            text = f"{side(i, plain)} {rng.choice(['<', '<=', '>', '>=', '=', '!='])} {side(j, plain)}"
        return text, plain

    conds = []
    for _ in range(rng.randint(1, 3)):
        text, plain = comparison()
        while len(plain) > 1:
            text, plain = comparison()
        r = rng.random()
        if r < 0.45:
            other, more = comparison()
            if len(plain | more) <= 1:
                text = f"({text} {rng.choice(['OR', 'OR', 'AND'])} {other})"
        if rng.random() < 0.3:
            text = f"NOT {text}" if text.startswith("(") else f"NOT ({text})"
        conds.append(text)
    for i in range(k):
        if kleene[i] and rng.random() < 0.4:
            pair = f"p{i}.x {rng.choice(['<', '<=', '>='])} NEXT(p{i}).x {rng.choice(['', '* 2', '- 1'])}"
            r = rng.random()
            if r < 0.3:
                pair = f"({pair} OR p{i}.x {rng.choice(['>', '=', '<'])} {rng.randint(0, 4)})"
            elif r < 0.5:
                pair = f"NOT ({pair} AND FIRST(p{i}).x != {rng.randint(0, 4)})"
            conds.append(pair)
    keyed = rng.random() < 0.5
    if keyed:
        conds.insert(0, "[g]")
    window = f"WITHIN {rng.randint(3, 9)}"
    if rng.random() < 0.3:
        window += f" SLIDE {rng.randint(1, 3)}"
    where = f"WHERE {' AND '.join(conds)}"
    if aggregates:
        aggs = ["COUNT(*)"] if rng.random() < 0.7 else []
        for _ in range(rng.randint(0 if aggs else 1, 3)):
            v = f"p{rng.randrange(k)}"
            aggs.append(rng.choice([f"SUM({v}.x)", f"SUM({v}.y)", f"AVG({v}.x)", f"AVG({v}.y)", f"MIN({v}.x)",
                                    f"MAX({v}.y)", f"MIN({v}.y)", f"MAX({v}.x)", f"COUNT({v})"]))
        aggs = list(dict.fromkeys(aggs))
        if keyed and rng.random() < 0.5:
            return f"RETURN g, {', '.join(aggs)} PATTERN SEQ({', '.join(items)}) {where} GROUP BY g {window}"
        return f"RETURN {', '.join(aggs)} PATTERN SEQ({', '.join(items)}) {where} {window}"
    ret = ", ".join(f"p{i}" for i in sorted(rng.sample(range(k), rng.randint(1, k))))
    return f"PATTERN SEQ({', '.join(items)}) {where} {window} RETURN {ret}"


@pytest.mark.parametrize("block", range(2))
def test_boolean_conditions_on_both_joins_equal_the_reference(block):
    """Random AND/OR/NOT combinations of comparisons with arithmetic (nulls and zeros among the
    values: unknown comparisons, division by zero), keyed and keyless, WITHIN and SLIDE: the
    compiled join and the Python join each return the reference's matches."""
    attrs = {"x": [0, 1, 1.5, 2, 3, 4, None], "g": ["u", "v"]}
    for k in range(cases(500, 5000)):
        rng = random.Random(700_000 + block * 100_000 + k)
        text = boolean_query(rng)
        q = compile_query(text)
        eng = ENGINES["rcep"](q)
        assert eng.compiled_refusal is None, text
        rows = random_stream(rng, TYPES, n=rng.randint(6, 16), max_gap=2, attrs=attrs)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        python = ENGINES["rcep"](q)
        python._compiled = None
        for got in (eng.run(batch), python.run(batch)):
            problems = differences(q, expected, got.rows)
            assert not problems, "\n".join([text, str(rows)] + problems)


@pytest.mark.parametrize("block", range(2))
def test_aggregates_on_both_joins_equal_the_reference(block):
    """Random aggregate queries (the conditions of :func:`boolean_query`; COUNT, SUM, AVG, MIN,
    MAX of floats and integers, of singletons and Kleene variables, grouped by the key or not,
    WITHIN and SLIDE): the compiled join, which folds them in the kernel, and the Python join
    each return the reference's rows."""
    attrs = {"x": [0, 1, 1.5, 2, 3, 4, None], "y": (-3, 9, 0.2), "g": ["u", "v"]}
    for k in range(cases(500, 5000)):
        rng = random.Random(800_000 + block * 100_000 + k)
        text = boolean_query(rng, aggregates=True)
        q = compile_query(text)
        eng = ENGINES["rcep"](q)
        assert eng.compiled_refusal is None, text
        rows = random_stream(rng, TYPES, n=rng.randint(6, 16), max_gap=2, attrs=attrs)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        python = ENGINES["rcep"](q)
        python._compiled = None
        for got in (eng.run(batch), python.run(batch)):
            problems = differences(q, expected, got.rows)
            assert not problems, "\n".join([text, str(rows)] + problems)
        assert eng._compiled is not None, text


def test_aggregates_past_64_bits_stay_exact():
    """4,095 matches (every subset of 12 b's) whose sums of integers near 2^52 pass 2^64, and of
    floats whose exact sum a float64 sum would round: the kernel counts, Python adds exactly."""
    text = ("RETURN COUNT(*), SUM(b.y), AVG(b.y), SUM(b.x), AVG(b.x), MIN(b.x), MAX(b.y), COUNT(b) "
            "PATTERN SEQ(A a, B b+) WITHIN 100")
    rows = [{"type": "A", "ts": 0, "x": 0.0, "y": 0}]
    rows += [{"type": "B", "ts": i, "x": 0.1 * i, "y": 2**52 - i} for i in range(1, 13)]
    batch = EventBatch.from_rows(rows)
    q = compile_query(text)
    eng = ENGINES["rcep"](q)
    got = eng.run(batch).rows
    assert eng._compiled is not None
    assert got == ENGINES["reference"](q).run(batch).rows
    count, total = got[0][0], got[0][1]
    assert count == 2**12 - 1 and total > 2**64 and isinstance(total, int)
    assert isinstance(got[0][3], float) and isinstance(got[0][6], int)


def test_aggregates_keep_the_kind_of_their_values():
    """An aggregated attribute whose column turns from integers to floats from one batch to the
    next moves the engine to the Python join (the store keeps float64: it would return 3.0 for
    the 3 the reference returns); its counts so far are kept."""
    text = "RETURN COUNT(*), SUM(b.y), MAX(b.y) PATTERN SEQ(A a, B b+) WITHIN 10"
    q = compile_query(text)
    first = EventBatch.from_rows([{"type": t, "ts": i, "y": i} for i, t in enumerate("ABB")])
    later = EventBatch.from_rows([{"type": "B", "ts": 3, "y": 2.5}], ids=[3])
    eng = ENGINES["rcep"](q)
    state = eng.new_state()
    out = eng.process(state, first)
    assert eng._compiled is not None
    out += eng.process(state, later) + eng.finish(state)
    assert eng._compiled is None
    whole = EventBatch.from_rows(first.table.to_pylist() + later.table.to_pylist())
    assert out == ENGINES["reference"](q).run(whole).rows


def test_integer_arithmetic_stays_exact():
    """``a.x * b.x + c.x`` is exact in float64 for integers up to 2^26: larger ones move the
    engine to the Python join, which computes with Python's integers, as the reference does."""
    text = "PATTERN SEQ(A a, B b, C c) WHERE a.x * b.x != a.x * b.x + c.x WITHIN 10 RETURN a, b, c"
    q = compile_query(text)
    assert ENGINES["rcep"](q)._compiled.limit == 2**26
    for v, compiled_after in ((2**26, True), (2**27 + 1, False)):  # (float64: (2^27 + 1)^2 + 1 == (2^27 + 1)^2)
        batch = EventBatch.from_rows([{"type": t, "ts": i, "x": x} for i, (t, x) in enumerate(zip("ABC", (v, v, 1)))])
        eng = ENGINES["rcep"](q)
        got = match_sets(eng.run(batch))
        assert got == match_sets(ENGINES["reference"](q).run(batch))
        assert sum(got.values()) == 1
        assert (eng._compiled is not None) == compiled_after


def test_a_fold_resumes_after_its_counts_are_taken(monkeypatch):
    """The kernel stops counting before its counts could overflow and resumes once the caller
    has taken them: with the twin stopping every 3 matches, the aggregates are the reference's."""
    twin = kernels.twin("cepagg.engines.rcep._kernels")
    monkeypatch.setattr(twin, "FOLD_MAX", 3)
    monkeypatch.setattr(compiled, "_kernel", lambda: twin.enumerate_triggers)
    attrs = {"x": [0, 1, 1.5, 2, 3, 4, None], "y": (-3, 9, 0.2), "g": ["u", "v"]}
    for k in range(cases(60, 600)):
        rng = random.Random(880_000 + k)
        text = boolean_query(rng, aggregates=True)
        q = compile_query(text)
        batch = EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 16), max_gap=2, attrs=attrs))
        problems = differences(q, ENGINES["reference"](q).run(batch), ENGINES["rcep"](q).run(batch).rows)
        assert not problems, "\n".join([text] + problems)


def test_conditions_and_aggregates_in_batches_snapshots_and_slices():
    """Boolean conditions and aggregates (:func:`boolean_query`) fed in random batches with
    watermarks and snapshots in between, and split into ``start_range`` slices (partial
    aggregates merged): the reference's result."""
    attrs = {"x": [0, 1, 1.5, 2, 3, 4, None], "y": (-3, 9, 0.2), "g": ["u", "v"]}
    for k in range(cases(150, 3000)):
        rng = random.Random(950_000 + k)
        text = boolean_query(rng, aggregates=rng.random() < 0.5)
        q = compile_query(text)
        batch = EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 16), max_gap=2, attrs=attrs)).sorted()
        expected = ENGINES["reference"](q).run(batch)
        cuts, out = run_in_pieces(ENGINES["rcep"](q), batch, random.Random(k))
        problems = differences(q, expected, out)
        assert not problems, "\n".join([text, str(cuts)] + problems)
        top = int(max(batch.table.column("ts").to_pylist())) + 1
        out = sliced_rows(lambda **o: ENGINES["rcep"](q, **o), q, top, rng.randint(1, 5), batch)
        problems = differences(q, expected, out)
        assert not problems, "\n".join([text, "slices"] + problems)


def test_the_twin_runs_the_programs_as_compiled(monkeypatch):
    """Boolean conditions and folded aggregates: the kernel's Python twin returns what the
    compiled kernel returns."""
    twin = kernels.twin("cepagg.engines.rcep._kernels")
    attrs = {"x": [0, 1, 1.5, 2, 3, 4, None], "y": (-3, 9, 0.2), "g": ["u", "v"]}
    for k in range(cases(40, 400)):
        rng = random.Random(990_000 + k)
        text = boolean_query(rng, aggregates=rng.random() < 0.5)
        q = compile_query(text)
        batch = EventBatch.from_rows(random_stream(rng, TYPES, n=rng.randint(6, 12), max_gap=2, attrs=attrs))
        fast = ENGINES["rcep"](q).run(batch).rows
        with monkeypatch.context() as m:
            m.setattr(compiled, "_kernel", lambda: twin.enumerate_triggers)
            slow = ENGINES["rcep"](q).run(batch).rows
        assert fast == slow, text
