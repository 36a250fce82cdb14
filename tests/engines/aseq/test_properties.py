"""Property tests: aseq returns exactly the reference's rows on random queries and streams.

Queries come from :mod:`querygen` (types, negation in every gap, windows, the three result
modes, local predicates, stream filters, partitions, equality chains, groups, every aggregate);
streams from :func:`generators.random_stream` (ties on purpose, nulls). ``CEPAGG_NIGHTLY=1``
runs many more cases.
"""

from __future__ import annotations

import random

import pytest
from querygen import random_query

from cepagg.engines import ENGINES
from cepagg.engines.aggregates import combine_rows, drop_unchanged
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import cases, compare, random_stream

CHUNKS = 20
PER_CHUNK = cases(100, 2000)


def _check(seed: int, n_cases: int, **query_opts) -> None:
    rng = random.Random(seed)
    for _ in range(n_cases):
        q = random_query(rng, **query_opts)
        rows = random_stream(rng, "ABCD", n=rng.randint(0, 14), max_gap=rng.choice([1, 2, 3]),
                             attrs={"x": (0, 5, 0.2), "g": ["u", "v", "w"]})
        problems = compare(q, rows, "aseq")
        assert not problems, "\n".join(problems)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_queries_match_reference(chunk):
    _check(1000 + chunk, PER_CHUNK)


@pytest.mark.parametrize("chunk", range(4))
def test_long_patterns_and_windows(chunk):
    rng_seed = 5000 + chunk
    _check(rng_seed, cases(50, 500), max_len=6, types="ABC", negation=0.3)


def test_twin_engine_agrees(monkeypatch):
    """The exact Python twin of the kernels gives the same rows (it is the overflow path)."""
    from cepagg.engines.aseq import counters, runtime

    monkeypatch.setattr(runtime, "KERNELS", counters.TWIN)
    _check(77, cases(150, 1500))


def _batched(q, batch, rng):
    """Rows of aseq fed in random batches, with a snapshot round trip between batches."""
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    out, a = [], 0
    while a < len(batch):
        n = rng.randint(1, 6)
        out += eng.process(st, batch.slice(a, n))
        if rng.random() < 0.5:
            out += eng.advance(st, batch.table.column("ts")[min(a + n, len(batch)) - 1].as_py() - rng.randint(1, 3))
        st = eng.restore(eng.snapshot(st))
        a += n
    return out + eng.finish(st)


def _sliced(q, batch, width):
    """Rows of aseq evaluated per time slice and merged (the protocol's start_range)."""
    top = (batch.table.column("ts").to_pylist() or [0])[-1] + 1
    parts = []
    for a in range(-10, top + width, width):
        eng = ENGINES["aseq"](q, partial=q.mode != "emit", start_range=(a, a + width))
        st = eng.new_state()
        parts += eng.process(st, batch) + eng.finish(st)
    return drop_unchanged(q, parts) if q.mode == "emit" else combine_rows(q, parts)


@pytest.mark.parametrize("chunk", range(6))
def test_batches_snapshots_and_slices_agree(chunk):
    rng = random.Random(9000 + chunk)
    for _ in range(cases(60, 600)):
        text = random_query(rng)
        q = compile_query(text)
        rows = random_stream(rng, "ABCD", n=rng.randint(0, 16), attrs={"x": (0, 5, 0.2), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        whole = ENGINES["reference"](q).run(batch)
        got = Result(whole.columns, _batched(q, batch, rng), whole.kinds).sorted()
        assert not whole.diff(got), (text, rows, "batched", whole.diff(got))
        if q.mode == "emit" and any(g.var is not None for g in q.group_by):
            continue  # instants per slice are defined for unqualified groups only
        got = Result(whole.columns, _sliced(q, batch, rng.randint(2, 6)), whole.kinds).sorted()
        assert not whole.diff(got), (text, rows, "sliced", whole.diff(got))
