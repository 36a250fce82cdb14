"""Aggregate records and exact integers in int64 limbs (kernel code; see :mod:`._jit`).

Every GRETA vertex, running total, index node and result holds one *record* per start
bucket: the fields of the query's aggregates (:mod:`.plan`). A record is a row of three
arrays:

* ``I`` (int64): integer fields -- COUNT(*) first, then COUNT(E), exact sums of integer
  attributes, numbers of non-null values -- each ``L`` limbs wide. Limbs ``0 .. L-2`` hold 32
  bits each (``0 <= limb < 2**32``); the top limb ``L-1`` is signed and holds the rest, so
  ``L == 1`` is a plain int64. Trend counts grow like ``2**n``; when a top limb reaches
  ``HARD = 2**61`` the engine widens every array by one limb (:func:`.numbers.widen`) before
  anything can wrap. Additions of two values below ``HARD`` cannot wrap, so checking after
  each addition is enough.
* ``F`` (float64): sums of floating-point attributes (compared to a relative 1e-9, as the
  reference allows).
* ``M`` (int64): MIN/MAX as order-preserving codes of the attribute (:mod:`.numbers`),
  ``MIN_EMPTY``/``MAX_EMPTY`` when there is no value.

The twin runs these functions on object arrays of Python integers with ``L == 1`` and
``hard == 0`` (no limit): the exact fallback.
"""

from __future__ import annotations

from . import _jit

_PURE = globals().get("_PURE", _jit.PURE_DEFAULT)
jit = _jit.jit(_PURE)
entry = _jit.jit(_PURE, entry=True)

MASK = 0xFFFFFFFF
HARD = 1 << 61
MIN_EMPTY = (1 << 63) - 1
MAX_EMPTY = -(1 << 63)


@jit
def norm(I, row, off, L):
    """Propagate carries of the field at ``I[row, off:off+L]``."""
    c = 0
    for j in range(L - 1):
        v = I[row, off + j] + c
        I[row, off + j] = v & MASK
        c = v >> 32
    I[row, off + L - 1] += c


@jit
def clear(I, F, M, row, mmin):
    for j in range(I.shape[1]):
        I[row, j] = 0
    for j in range(F.shape[1]):
        F[row, j] = 0.0
    for j in range(M.shape[1]):
        M[row, j] = MIN_EMPTY if mmin[j] else MAX_EMPTY


@jit
def add(dI, dF, dM, drow, sI, sF, sM, srow, L, mmin, hard):
    """Record ``d[drow] += s[srow]`` (min/max for M). Returns True when a top limb reached
    ``hard`` (nothing wrapped; the caller widens)."""
    over = False
    nf = dI.shape[1] // L
    for f in range(nf):
        off = f * L
        for j in range(L):
            dI[drow, off + j] += sI[srow, off + j]
        if L > 1:
            norm(dI, drow, off, L)
        if hard > 0:
            top = dI[drow, off + L - 1]
            if top >= hard or top <= -hard:
                over = True
    for j in range(dF.shape[1]):
        dF[drow, j] += sF[srow, j]
    for j in range(dM.shape[1]):
        v = sM[srow, j]
        if mmin[j]:
            if v < dM[drow, j]:
                dM[drow, j] = v
        elif v > dM[drow, j]:
            dM[drow, j] = v
    return over


@jit
def sub(dI, dF, drow, sI, sF, srow, L):
    """Record ``d[drow] -= s[srow]`` for the integer and float fields (not M)."""
    nf = dI.shape[1] // L
    for f in range(nf):
        off = f * L
        for j in range(L):
            dI[drow, off + j] -= sI[srow, off + j]
        if L > 1:
            norm(dI, drow, off, L)
    for j in range(dF.shape[1]):
        dF[drow, j] -= sF[srow, j]


@jit
def copy(dI, dF, dM, drow, sI, sF, sM, srow):
    for j in range(dI.shape[1]):
        dI[drow, j] = sI[srow, j]
    for j in range(dF.shape[1]):
        dF[drow, j] = sF[srow, j]
    for j in range(dM.shape[1]):
        dM[drow, j] = sM[srow, j]


@jit
def nonzero(I, row, field, L):
    off = field * L
    for j in range(L):
        if I[row, off + j] != 0:
            return True
    return False


@jit
def any_count(I, row0, nrows, L):
    """Is COUNT(*) nonzero in any of the rows ``row0 .. row0+nrows-1``?"""
    for r in range(row0, row0 + nrows):
        for j in range(L):
            if I[r, j] != 0:
                return True
    return False


@jit
def inc(I, row, field, L, hard):
    """``field += 1``."""
    off = field * L
    I[row, off] += 1
    if L > 1:
        norm(I, row, off, L)
    top = I[row, off + L - 1]
    return hard > 0 and top >= hard


@jit
def add_field(I, row, dst, src, L, hard):
    """``I[row].dst += I[row].src`` (an event's own contribution: COUNT(E) += count)."""
    d = dst * L
    s = src * L
    for j in range(L):
        I[row, d + j] += I[row, s + j]
    if L > 1:
        norm(I, row, d, L)
    top = I[row, d + L - 1]
    return hard > 0 and (top >= hard or top <= -hard)


@jit
def as_float(I, row, field, L):
    """The field as a float (exact Python int in the L == 1 twin, so products stay exact)."""
    off = field * L
    if L == 1:
        return I[row, off]
    x = 0.0
    scale = 1.0
    for j in range(L):
        x += I[row, off + j] * scale
        scale *= 4294967296.0
    return x


@jit
def mul_add(I, row, dst, src, a, L, hard, tmp):
    """``I[row].dst += a * I[row].src`` for an integer ``|a| < 2**31``; ``tmp`` is scratch of
    at least ``L + 2`` int64. Returns False when the product does not fit the current limbs
    (the caller widens and retries); True otherwise."""
    d = dst * L
    s = src * L
    if hard == 0:  # exact twin: Python integers
        I[row, d] += a * I[row, s]
        return True
    # split every limb, the signed top included, into 32-bit pieces, multiply, carry
    for j in range(L + 2):
        tmp[j] = 0
    for j in range(L - 1):
        tmp[j] = I[row, s + j] * a
    top = I[row, s + L - 1]
    tmp[L - 1] = (top & MASK) * a
    tmp[L] = (top >> 32) * a
    c = 0
    for j in range(L + 1):
        v = tmp[j] + c
        tmp[j] = v & MASK
        c = v >> 32
    tmp[L + 1] = c
    hi = tmp[L + 1]
    if hi != 0 and hi != -1:
        return False
    x = hi * 4294967296 + tmp[L]
    if x >= (1 << 28) or x < -(1 << 28):
        return False
    t = x * 4294967296 + tmp[L - 1]
    for j in range(L - 1):
        I[row, d + j] += tmp[j]
    I[row, d + L - 1] += t
    if L > 1:
        norm(I, row, d, L)
    top = I[row, d + L - 1]
    return not (top >= hard or top <= -hard)


# Reference: exact counts "of any size" (docs/semantics.md §8 Exactness; notes/greta.md §7
# "Numeric types": the count of A+ over n events is 2**n - 1).
