"""rcep's compiled path (condition-free patterns enumerated by a numba kernel, handed over as
blocks of arrays) returns the reference's matches: as the protocol's tuples, as blocks through
the writer (long and wide form, blocks far smaller than one trigger's matches, ``max_matches``),
compiled and as the kernel's Python twin."""

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


def compiled_case(seed: int, max_events: int = 16) -> tuple[str, list[dict]]:
    """A random RETURN-of-events query that takes the compiled path, and a random stream."""
    rng = random.Random(seed)
    while True:
        text = random_query(rng)
        q = compile_query(text)
        if ENGINES["rcep"].refusal(q) is None and ENGINES["rcep"](q).compiled_refusal is None:
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
        text, rows = compiled_case(50_000 + k)
        batch = EventBatch.from_rows(rows)
        expected, got = _long(text, batch, "reference"), _long(text, batch, "rcep")
        assert match_sets(expected) == match_sets(got), "\n".join([text, str(rows)])
        assert _without_numbers(expected) == _without_numbers(got), text  # (attributes, cells)


def test_wide_blocks_equal_the_python_join(monkeypatch):
    monkeypatch.setattr(runner, "PIECE_ROWS", 7)
    for k in range(cases(60, 1000)):
        text, rows = compiled_case(70_000 + k)
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
        monkeypatch.setattr(compiled, "_kernel", lambda: twin.enumerate_matches)
        slow = ENGINES["rcep"](q).run(batch).rows
        monkeypatch.undo()
        assert fast == slow, text


def test_which_queries_take_the_compiled_path():
    def reason(text: str) -> str | None:
        return ENGINES["rcep"](compile_query(text)).compiled_refusal

    assert reason("PATTERN SEQ(A a, B b+, c) WHERE [g] AND a.x > 1 AND [b.h] WITHIN 5 RETURN a, c") \
        == "an equivalence on a Kleene variable is checked by the Python join"
    assert reason("PATTERN SEQ(A a, B b+, c) WHERE [g] AND a.x > 1 AND [a.h] WITHIN 5 SLIDE 2 RETURN a, c") is None
    assert reason("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 5") is not None
    assert reason("PATTERN SEQ(A a, B b+) WHERE b.x < NEXT(b).x WITHIN 5") is not None
    assert reason("PATTERN SEQ(A a, NOT C n, B b) WITHIN 5") is not None
    assert reason("RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 5") is not None
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
    slow = plan(compile_query("PATTERN SEQ(A a, B b+, C c) WHERE b.x < NEXT(b).x WITHIN 5 RETURN a, c"), "auto")
    assert fast.engine == slow.engine == "rcep"
    assert "join: compiled" in fast.explain()
    assert "join: Python (a condition between variables" in slow.explain()


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
