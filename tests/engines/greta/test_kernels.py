"""The compiled kernels and their pure-Python twins (same source, cepagg.engines.kernels)
agree, and the small pieces they are built from are right."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from patterns import random_query

from cepagg.engines.greta import Greta, _program, _records, index
from cepagg.engines.greta.layout import Programs
from cepagg.engines.greta.numbers import to_ints, widen
from cepagg.engines.greta.vector import Vec, holds_mask
from cepagg.engines.kernels import twin as _twin
from cepagg.events import EventBatch
from cepagg.lang import ast, compile_query
from generators import cases, random_stream
from helpers import run_in_pieces


def _from_python(f):
    """Kernel function ``f`` callable from a test: a compiled function without a CPython wrapper
    (``kernels.jit(python=False)``) is called through a compiled caller; a twin as it is."""
    if not hasattr(f, "py_func"):
        return f
    import numba

    return numba.njit(lambda *a: f(*a))


def test_engine_twin_and_compiled_agree_row_for_row():
    for k in range(cases(60, 600)):
        rng = random.Random(k)
        text, types = random_query(rng, depth=3)
        rows = random_stream(rng, types, n=rng.randint(6, 13), attrs={"x": (0, 5, 0.1), "g": ["u", "v"]})
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        a = Greta(q).run(batch)
        b = Greta(q, pure=True).run(batch)
        assert a.rows == b.rows, (text, rows)


@pytest.mark.parametrize("module", ["compiled", "twin"])
def test_limbs_add_and_multiply_exactly(module):
    rec = _records if module == "compiled" else _twin(_records.__name__)
    add, normalize, mul_add = _from_python(rec.add), _from_python(rec.normalize), _from_python(rec.mul_add)
    rng = random.Random(3)
    for _ in range(200):
        L = rng.randint(1, 4)
        values = [rng.randint(-(2**(32 * L - 4)), 2**(32 * L - 4)) for _ in range(2)]
        a = rng.randint(-(2**31) + 1, 2**31 - 1)
        I = np.zeros((2, 2 * L), dtype=np.int64)
        for row, v in enumerate(values):
            for j in range(L - 1):
                I[row, j] = (v >> (32 * j)) & 0xFFFFFFFF
            I[row, L - 1] = v >> (32 * (L - 1))
        F = np.zeros((2, 0))
        M = np.zeros((2, 0), dtype=np.int64)
        add(I, F, M, 0, I, F, M, 1, L, np.zeros(0, np.int64), _records.HARD)
        total = values[0] + values[1]
        assert int(to_ints(I, 0, L)[0]) == total  # limb by limb, not carried yet
        limit = 2**40
        over = normalize(I, 0, L, limit)
        assert int(to_ints(I, 0, L)[0]) == total
        assert over == (abs(total >> (32 * (L - 1))) >= limit)
        ok = mul_add(I, 1, 1, 0, a, L, _records.HARD, np.zeros(L + 2, dtype=np.int64))
        if ok:
            assert int(to_ints(I, 1, L)[1]) == a * values[1]
    w = widen(np.array([[2**61 + 7, -(2**62)]], dtype=np.int64), 2, 1)
    assert to_ints(w, 0, 2).tolist() == [2**61 + 7] and to_ints(w, 1, 2).tolist() == [-(2**62)]


@pytest.mark.parametrize("module", ["compiled", "twin"])
def test_fenwick_prefix_sums_minima_and_expiry(module):
    """A Fenwick tree of records over 2 bucket slots, as the kernel uses it: inserts along the
    update path, prefix queries, and buckets expiring through the nodes' held ranges."""
    rec = _records if module == "compiled" else _twin(_records.__name__)
    ix = index if module == "compiled" else _twin(index.__name__)
    add_ring_to_ring, add_from_ring = _from_python(rec.add_ring_to_ring), _from_python(rec.add_from_ring)
    rng = random.Random(5)
    n, R = 17, 2
    NI = np.zeros(((n + 1) * R, 1), dtype=np.int64)
    NF = np.zeros(((n + 1) * R, 0))
    NM = np.full(((n + 1) * R, 1), _records.MIN_EMPTY, dtype=np.int64)
    NT = np.zeros((n + 1, 2), dtype=np.int64)
    NT[:, 1] = -1
    mmin = np.ones(1, dtype=np.int64)
    alive = 0  # buckets alive..alive+1 are live; inserting into bucket alive+1 and alive
    points = {}
    for step in range(80):
        if step % 20 == 19:
            alive += 1  # the oldest bucket expires
            points = {k: v for k, v in points.items() if k[1] >= alive}
        rank = rng.randrange(n)
        sI = np.array([[rng.randint(1, 9)], [rng.randint(1, 9)]], dtype=np.int64)
        sM = np.array([[rng.randint(-9, 9)], [rng.randint(-9, 9)]], dtype=np.int64)
        src = np.zeros((R, 1), dtype=np.int64)
        srcM = np.full((R, 1), _records.MIN_EMPTY, dtype=np.int64)
        for k, seq in enumerate((alive, alive + 1)):
            src[seq & 1] = sI[k]
            srcM[seq & 1] = sM[k]
            old = points.get((rank, seq), (0, _records.MIN_EMPTY))
            points[(rank, seq)] = (old[0] + int(sI[k, 0]), min(old[1], int(sM[k, 0])))
        j = rank + 1
        while j <= n:
            ix.clean(NI, NF, NM, NT, j, j * R, alive, R, mmin)
            add_ring_to_ring(NI, NF, NM, j * R, src, np.zeros((R, 0)), srcM, 0, alive & 1, 2, R, mmin)
            ix.held(NT, j, alive, alive + 1)
            j += j & (-j)
        length = rng.randint(0, n)
        dI = np.zeros((2, 1), dtype=np.int64)
        dM = np.full((2, 1), _records.MIN_EMPTY, dtype=np.int64)
        j = length
        while j > 0:
            ix.clean(NI, NF, NM, NT, j, j * R, alive, R, mmin)
            add_from_ring(dI, np.zeros((2, 0)), dM, 0, NI, NF, NM, j * R, alive & 1, 2, R, mmin)
            j -= j & (-j)
        for k, seq in enumerate((alive, alive + 1)):
            want = [v for (r, q), v in points.items() if r < length and q == seq]
            assert dI[k, 0] == sum(c for c, _ in want)
            assert dM[k, 0] == min((m for _, m in want), default=_records.MIN_EMPTY)


@pytest.mark.parametrize("module", ["compiled", "twin"])
def test_blocks_of_rows_add_copy_and_clear_as_row_by_row(module):
    """The block operations (flat runs of words when compiled) on records of several fields:
    integer limbs, floats and MIN/MAX codes, blocks anywhere in the arrays."""
    rec = _records if module == "compiled" else _twin(_records.__name__)
    add_rows, copy_rows = _from_python(rec.add_rows), _from_python(rec.copy_rows)
    clear_rows = _from_python(rec.clear_rows)
    rng = np.random.default_rng(11)
    mmin = np.array([1, 0], dtype=np.int64)
    for _ in range(60):
        wi, wf = int(rng.integers(1, 7)), int(rng.integers(0, 3))
        rows = 12
        I = rng.integers(-99, 99, (rows, wi)).astype(np.int64)
        F = rng.random((rows, wf))
        M = rng.integers(-99, 99, (rows, 2)).astype(np.int64)
        d0, s0 = int(rng.integers(0, 6)), int(rng.integers(0, 6))
        n = int(rng.integers(0, 7))
        want_I, want_F, want_M = I.copy(), F.copy(), M.copy()
        op = int(rng.integers(0, 3))
        if op == 0:
            want_I[d0:d0 + n] += I[s0:s0 + n]
            want_F[d0:d0 + n] += F[s0:s0 + n]
            want_M[d0:d0 + n, 0] = np.minimum(M[d0:d0 + n, 0], M[s0:s0 + n, 0])
            want_M[d0:d0 + n, 1] = np.maximum(M[d0:d0 + n, 1], M[s0:s0 + n, 1])
            if abs(d0 - s0) < n:  # overlapping blocks: row by row, as the kernels never do
                continue
            add_rows(I, F, M, d0, I, F, M, s0, n, mmin)
        elif op == 1:
            if abs(d0 - s0) < n:
                continue
            want_I[d0:d0 + n], want_F[d0:d0 + n], want_M[d0:d0 + n] = I[s0:s0 + n], F[s0:s0 + n], M[s0:s0 + n]
            copy_rows(I, F, M, d0, I, F, M, s0, n)
        else:
            want_I[d0:d0 + n], want_F[d0:d0 + n] = 0, 0.0
            want_M[d0:d0 + n] = [_records.MIN_EMPTY, _records.MAX_EMPTY]
            clear_rows(I, F, M, d0, n, mmin)
        assert (I == want_I).all() and (F == want_F).all() and (M == want_M).all()


@pytest.mark.parametrize("module", ["compiled", "twin"])
def test_cleaning_a_node_forgets_exactly_its_expired_buckets(module):
    """``index.clean`` clears the ring slots of the buckets that expired since the node was
    last touched (a run that may wrap around the ring, or all of it), and no other."""
    ix = index if module == "compiled" else _twin(index.__name__)
    rng = random.Random(13)
    R = 8
    mmin = np.array([1], dtype=np.int64)
    for _ in range(200):
        lo = rng.randint(0, 40)
        hi = lo + rng.randint(-1, R - 1)  # a node holds at most R buckets (-1: none)
        alive = lo + rng.randint(0, 2 * R + 2)
        node = 2
        I = np.arange(1, 4 * R * 3 + 1, dtype=np.int64).reshape(4 * R, 3)
        F = np.ones((4 * R, 1))
        M = np.zeros((4 * R, 1), dtype=np.int64)
        T = np.zeros((4, 2), dtype=np.int64)
        T[node] = lo, hi
        want = I.copy()
        if lo < alive:
            for seq in range(lo, min(hi, alive - 1) + 1):
                want[node * R + (seq & (R - 1))] = 0
        ix.clean(I, F, M, T, node, node * R, alive, R, mmin)
        assert (I == want).all(), (lo, hi, alive)
        cleared = (want[:, 0] == 0)
        assert (F[cleared] == 0).all() and (F[~cleared] == 1).all()
        assert (M[cleared] == _records.MIN_EMPTY).all() and (M[~cleared] == 0).all()
        if lo < alive:
            assert T[node, 0] == alive and T[node, 1] == (alive - 1 if hi < alive else hi)


def _expr(rng: random.Random, depth: int = 2) -> ast.Expr:
    def val(d):
        r = rng.random()
        if d == 0 or r < 0.3:
            return rng.choice([ast.Attr("X", "a"), ast.Ref("NEXT", "X", "a"), ast.Attr("X", "b"),
                               ast.Ref("NEXT", "X", "b"), ast.Literal(rng.randint(-2, 3))])
        if r < 0.4:
            return ast.Negate(val(d - 1))
        return ast.Arith(rng.choice("+-*/"), val(d - 1), val(d - 1))

    def cond(d):
        r = rng.random()
        if d == 0 or r < 0.5:
            k = rng.randint(1, 2)
            ops = tuple(rng.choice(["=", "!=", "<", "<=", ">", ">="]) for _ in range(k))
            return ast.Compare(ops, tuple(val(1) for _ in range(k + 1)))
        if r < 0.8:
            return ast.BoolOp(rng.choice(["and", "or"]), (cond(d - 1), cond(d - 1)))
        return ast.NotExpr(cond(d - 1))

    return cond(depth)


@pytest.mark.parametrize("module", ["compiled", "twin"])
def test_edge_programs_match_the_vectorised_evaluator(module):
    run = _from_python((_program if module == "compiled" else _twin(_program.__name__)).run)
    rng = random.Random(11)
    n = 40
    cols = {name: (np.array([rng.randint(-3, 3) for _ in range(n)], dtype=np.float64),
                   np.array([rng.random() > 0.15 for _ in range(n)])) for name in ("a", "b")}
    for _ in range(cases(150, 2000)):
        e = _expr(rng)
        progs = Programs()
        p = progs.add([e], {})
        off, code, vals = progs.arrays()
        slots = progs.slots
        col = np.stack([cols[s][0] for s in slots], axis=1) if slots else np.zeros((n, 0))
        ok = np.stack([cols[s][1] for s in slots], axis=1) if slots else np.zeros((n, 0), dtype=bool)
        # predecessor row i, event row (i + 1) % n
        got = np.array([run(code, vals, off[p], off[p + 1], col, ok, i, col, ok, (i + 1) % n,
                                 np.zeros(64), np.zeros(64, dtype=np.int64)) == 1 for i in range(n)])

        def lookup(node):
            values, valid = cols[node.name]
            if isinstance(node, ast.Ref):
                values, valid = np.roll(values, -1), np.roll(valid, -1)
            return Vec("number", values, valid)

        assert got.tolist() == holds_mask(e, lookup, n).tolist(), e


def test_a_kernel_helper_called_from_python_is_refused_instead_of_crashing():
    """Helpers compiled without an entry for Python (kernels.jit, python=False) refuse a call
    from Python: run, they would read Python objects as native arguments."""
    from cepagg.engines.greta import _kernels as K

    if K._TWIN:
        pytest.skip("the twin's helpers are plain Python")
    scalars = np.zeros(K.STATE_SCALARS.itemsize // 8, dtype=np.int64)
    with pytest.raises(TypeError, match="called by kernels only"):
        K.state_scalars(scalars)
    with pytest.raises(TypeError, match="called by kernels only"):
        _records.copy_rows(scalars, scalars)




def _array_layouts(ty):
    """The layouts of the arrays in numba type ``ty`` (an array, or a tuple of them)."""
    from numba.core import types

    if isinstance(ty, types.Array):
        return [ty.layout]
    if isinstance(ty, types.BaseTuple):
        return [lay for t in ty.types for lay in _array_layouts(t)]
    return []


@pytest.mark.skipif(os.environ.get("CEPAGG_TWINS") == "1", reason="no compiled kernels under CEPAGG_TWINS=1")
def test_kernels_are_only_ever_given_c_ordered_arrays():
    """The kernels add, copy and clear a block of record rows as one run of words
    (``_records.add_flat``), right only where the rows lie one after the other: every array a
    GRETA kernel was compiled for, over the index, the scan, stacked partitions, negation and
    restored snapshots, is C-ordered (an array cut by columns would compile a variant that
    writes in the wrong places)."""
    rng = random.Random(5)
    rows = [{"type": rng.choice("ABC"), "ts": t, "x": rng.randint(0, 30), "y": rng.randint(0, 9),
             "g": rng.randint(0, 99)} for t in range(600)]
    batch = EventBatch.from_rows(rows)
    for text in ["RETURN COUNT(*), SUM(B.x), MAX(B.x) PATTERN B+ WHERE B.x < NEXT(B).x WITHIN 40 SLIDE 4",
                 "RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] AND B.x >= NEXT(B).x GROUP BY g WITHIN 40",
                 "RETURN COUNT(*) PATTERN SEQ(A, NOT C, B+) WHERE B.x <= NEXT(B).x WITHIN 40 SLIDE 4",
                 "RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE [g] WITHIN 30 SLIDE 5"]:
        for numbers in ("exact", "float"):
            run_in_pieces(Greta(compile_query(text), numbers=numbers), batch, random.Random(3))
    import importlib

    seen = 0
    for name in ("_kernels", "index", "_records"):
        module = importlib.import_module(f"cepagg.engines.greta.{name}")
        for attr, f in vars(module).items():
            for sig in getattr(f, "signatures", None) or []:
                seen += 1
                bad = [lay for ty in sig for lay in _array_layouts(ty) if lay != "C"]
                assert not bad, (name, attr, sig)
    assert seen > 5
