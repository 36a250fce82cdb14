"""Exact counts past 64 bits, and the compiled kernels against their Python twin.

A stream of ``n`` events of each of the ``L`` types, type after type, has exactly ``n**L``
matches of ``SEQ(T1, ..., TL)``: with n = 250 and L = 8 that is 1.5e19 > 2**63. The same
stream with n = 3 is small enough for the reference, and the closed form covers both.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from cepagg.engines.aseq import counters
from helpers import run

TYPES = "ABCDEFGH"


def blocks(n: int, length: int, value: int = 1) -> list[dict]:
    return [{"type": t, "ts": i * n + k, "x": value} for i, t in enumerate(TYPES[:length]) for k in range(n)]


QUERIES = [
    "PATTERN SEQ({p}) RETURN COUNT(*), COUNT(B), SUM(A.x), MAX(B.x)",
    "PATTERN SEQ({p}) RETURN COUNT(*), SUM(A.x) WITHIN 100000",
    "PATTERN SEQ({p}) RETURN COUNT(*), SUM(H.x) WITHIN 100000 SLIDE 100000",
]


@pytest.mark.parametrize("query", QUERIES)
def test_small_analogue_matches_reference(query):
    q = query.format(p=", ".join(TYPES))
    rows = blocks(3, 8, value=5)
    assert run(q, rows, "aseq").rows == run(q, rows, "reference").rows


def test_counts_past_int64_are_exact():
    n, L, v = 250, 8, 10**17
    p = ", ".join(TYPES)
    rows = blocks(n, L, v)
    assert n**L > 2**63
    assert run(QUERIES[0].format(p=p), rows, "aseq").rows == [(n**L, n**L, n**L * v, v)]
    assert run(QUERIES[1].format(p=p), rows, "aseq").rows == [(n**L, n**L * v)]
    assert run(QUERIES[2].format(p=p), rows, "aseq").rows == [(0, 100000, n**L, n**L * v)]


def test_emit_counts_past_int64():
    n, L = 250, 8
    q = f"PATTERN SEQ({', '.join(TYPES)}) RETURN COUNT(*) WITHIN 100000 EMIT ON CHANGE"
    rows = run(q, blocks(n, L), "aseq").rows
    assert rows[-1] == ((L - 1) * n + n - 1, n**L)
    assert [r[1] for r in rows] == [n ** (L - 1) * k for k in range(1, n + 1)]


# ---------------------------------------------------------------------------------------------
# Kernels and twin on random maps


def _random_map(rng, N, CI, CF, kindI, kindF, exact, big=False):
    it = object if exact else np.int64
    XI = np.zeros((CI, N, N + 1), it)
    XF = np.zeros((CF, N, N + 1))
    algebra = counters.TWIN_ALGEBRA if exact else counters.ALGEBRA
    algebra.identity(XI, XF, kindI, kindF)
    top = 2**40 if big else 5
    for j in range(N):
        for i in range(j + 1):
            XI[0, j, i] = rng.randint(0, top)
            for c in range(1, CI):
                XI[c, j, i] = rng.randint(-top, top) if kindI[c] == 0 else rng.randint(-9, 9)
            for c in range(CF):
                XF[c, j, i] = rng.uniform(-3, 3)
        XI[0, j, N] = rng.randint(0, top)
    return XI, XF


@pytest.mark.parametrize("seed", range(8))
def test_compose_and_apply_agree_with_twin(seed):
    rng = random.Random(seed)
    N = rng.randint(1, 6)
    kindI = np.array([0] + [rng.choice([0, 1, 2]) for _ in range(rng.randint(0, 3))], np.int64)
    kindF = np.array([rng.choice([0, 1, 2]) for _ in range(rng.randint(0, 2))], np.int64)
    CI, CF = len(kindI), len(kindF)
    for big in (False, True):
        A = _random_map(rng, N, CI, CF, kindI, kindF, False, big)
        B = _random_map(rng, N, CI, CF, kindI, kindF, False, big)
        out = []
        for alg, conv in ((counters.ALGEBRA, lambda a: a), (counters.TWIN_ALGEBRA, lambda a: a.astype(object)
                                                             if a.dtype == np.int64 else a.copy())):
            AI, AF, BI, BF = conv(A[0]), conv(A[1]), conv(B[0]), conv(B[1])
            NI = np.zeros_like(AI)
            NF = np.zeros_like(AF)
            anc_ptr = np.array([j * (j + 1) // 2 for j in range(N + 1)], np.int64)  # a chain: 0..j
            anc_idx = np.array([i for j in range(N) for i in range(j + 1)], np.int64)
            ok1 = alg.compose(AI, AF, BI, BF, NI, NF, kindI, kindF, True, anc_ptr, anc_idx)
            vI = np.zeros((CI, N), AI.dtype)
            vF = np.zeros((CF, N))
            ok2 = alg.apply_rows(AI, AF, BI[:, :, N].copy(), BF[:, :, N].copy(), vI, vF, 0, N, True, kindI, kindF, True,
                                 anc_ptr, anc_idx)
            out.append((ok1, ok2, NI[:, :, :N].tolist(), NF[:, :, :N].tolist(), vI.tolist(), vF.tolist()))
        (c_ok1, c_ok2, cNI, cNF, cvI, cvF), (t_ok1, t_ok2, tNI, tNF, tvI, tvF) = out
        if c_ok1 and c_ok2:  # no overflow flagged: identical results
            assert cNI == tNI and cvI == tvI
            assert np.allclose(cNF, tNF) and np.allclose(cvF, tvF)
        else:  # big values: the compiled kernel must have flagged what the twin computes exactly
            assert max(abs(v) for row in tNI for r in row for v in r) > 2**60 or \
                max(abs(v) for row in tvI for v in row) > 2**60


def test_window_sums_past_int64_stay_compiled(monkeypatch):
    """WITHIN alone reads each START's own counts, never the window's sum over STARTs: with
    n = 7000 events per type, one START has n**4 < 2**63 matches and the window n**5 > 2**63,
    and the partition stays on the int64 kernels (its totals go to Python integers)."""
    n, L, v = 7000, 5, 3

    def refuse(self):
        raise AssertionError("a partition left the compiled kernels")

    monkeypatch.setattr(counters.PartState, "to_exact", refuse)
    q = f"PATTERN SEQ({', '.join(TYPES[:L])}) RETURN COUNT(*), SUM(A.x), COUNT(E) WITHIN 1000000"
    assert n ** (L - 1) < 2**62 < 2**63 < n**L
    assert run(q, blocks(n, L, v), "aseq").rows == [(n**L, n**L * v, n**L)]
