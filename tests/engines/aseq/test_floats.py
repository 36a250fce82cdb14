"""Float mode (``numbers="float"``): COUNT, SUM and AVG computed in float64, MIN and MAX exact.

Every random query of :mod:`querygen` is run in both modes on the same stream (in random
batches with snapshots, and per time slice with partial rows): the float rows must have the
exact rows' keys, Python floats in their COUNT/SUM/AVG cells, values within 1e-9 relative,
and MIN/MAX cells equal.
"""

from __future__ import annotations

import math
import random

import pytest
from querygen import random_query
from test_exact import TYPES, blocks

from cepagg.engines import ENGINES
from cepagg.engines.aggregates import key_width
from cepagg.errors import CepaggError
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases, random_stream

FLOAT_FUNCS = ("COUNT", "SUM", "AVG")


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_rows(q, exact: list, floats: list, partial: bool) -> None:
    width = key_width(q)
    assert len(exact) == len(floats), (exact, floats)
    for e, f in zip(sorted(exact, key=repr), sorted(floats, key=lambda r: repr(r[:width]))):
        assert e[:width] == f[:width], (e, f)
        for a, x, y in zip(q.aggregates, e[width:], f[width:]):
            if a.func not in FLOAT_FUNCS:
                assert x == y and type(x) is type(y), (a.func, e, f)
            elif partial and a.func != "COUNT":
                assert all(isinstance(v, float) for v in y), (e, f)
                assert _close(x[0], y[0]) and _close(x[1], y[1]), (e, f)
            else:
                assert y is None or isinstance(y, float), (e, f)
                assert _close(x, y), (e, f)


def _rows(q, batch, numbers, pieces, partial=False, start_range=None):
    eng = ENGINES["aseq"](q, numbers=numbers, partial=partial, start_range=start_range)
    st = eng.new_state()
    out = []
    for a, b in zip(pieces, pieces[1:]):
        out += eng.process(st, batch.slice(a, b - a))
        st = eng.restore(eng.snapshot(st))
    return out + eng.finish(st)


def test_aseq_is_float_native():
    assert ENGINES["aseq"].float_native


@pytest.mark.parametrize("chunk", range(6))
def test_float_rows_match_exact_rows(chunk):
    rng = random.Random(4400 + chunk)
    for _ in range(cases(60, 600)):
        text = random_query(rng)
        q = compile_query(text)
        rows = random_stream(rng, "ABCD", n=rng.randint(0, 16), attrs={"x": (0, 5, 0.2), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        n = len(batch)
        cuts = sorted({0, n, *(rng.randint(0, n) for _ in range(3))})
        check_rows(q, _rows(q, batch, "exact", [0, n]), _rows(q, batch, "float", cuts), False)
        if q.mode != "emit":
            rng_ = (rng.randint(-2, 8), rng.randint(8, 20))
            check_rows(q, _rows(q, batch, "exact", [0, n], True, rng_), _rows(q, batch, "float", [0, n], True, rng_),
                       True)


def test_float_counts_past_int64():
    """Where exact counts leave int64 the float ones go on, within 1e-9 of the exact value."""
    n, L, v = 250, 8, 10**6
    p = ", ".join(TYPES)
    batch = EventBatch.from_rows(blocks(n, L, v)).sorted()
    for text in ("PATTERN SEQ({p}) RETURN COUNT(*), COUNT(B), SUM(A.x), MAX(B.x)",
                 "PATTERN SEQ({p}) RETURN COUNT(*), AVG(H.x), MIN(H.x) WITHIN 100000 SLIDE 100000"):
        q = compile_query(text.format(p=p))
        exact = _rows(q, batch, "exact", [0, len(batch)])
        floats = _rows(q, batch, "float", [0, len(batch)])
        check_rows(q, exact, floats, False)
        assert n**L > 2**63 and any(c == n**L for c in exact[0])


def test_float_mode_refuses_extremes_beyond_2_53():
    q = compile_query("PATTERN SEQ(A a, B b) RETURN COUNT(*), MAX(b.x)")
    batch = EventBatch.from_rows([{"type": "A", "ts": 0, "x": 1}, {"type": "B", "ts": 1, "x": 2**60 + 1}])
    assert ENGINES["aseq"](q).run(batch).rows == [(1, 2**60 + 1)]
    with pytest.raises(CepaggError, match="2\\*\\*53"):
        ENGINES["aseq"](q, numbers="float").run(batch)


def test_workload_float_rows_of_shared_and_chopped_pieces():
    """Float mode covers every piece of a sharing plan: PreTree units (float kernels) and
    Chop-Connect pieces (exact counts, rounded once)."""
    from cepagg.engines.aseq import Workload

    texts = ("PATTERN SEQ(X, Y, A, B) RETURN COUNT(*) WITHIN 10",
             "PATTERN SEQ(A, B, C) RETURN COUNT(*) WITHIN 10 EMIT ON CHANGE",
             "PATTERN SEQ(A, B) RETURN COUNT(*), AVG(B.x) WITHIN 10 SLIDE 5")
    qs = [compile_query(t) for t in texts]
    rng = random.Random(11)
    rows = random_stream(rng, "XYABC", n=60, attrs={"x": (0, 5, 0.0)})
    batch = EventBatch.from_rows(rows).sorted()
    for chops in ({0: [2], 1: [2]}, None):
        exact = Workload(qs, chops=chops).run(batch)
        floats = Workload(qs, chops=chops, numbers="float").run(batch)
        for q, e, f in zip(qs, exact, floats):
            check_rows(q, e.rows, f.rows, False)
            assert any(isinstance(v, float) for r in f.rows for v in r)
