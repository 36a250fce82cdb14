"""Aggregate records and exact integers in int64 limbs (kernel code; see :mod:`..kernels`).

Every GRETA vertex, running total, index node and result holds one *record* per start
bucket: the fields of the query's aggregates (:mod:`.plan`). A record is a row of three
arrays:

* ``I`` (int64): integer fields -- COUNT(*) first, then COUNT(E), exact sums of integer
  attributes, numbers of non-null values -- each ``L`` limbs wide, the value being
  ``sum(limb[j] * 2**(32*j))``. A vertex's own value is *normalised* (lower limbs in
  ``[0, 2**32)``, the signed rest in the top limb, so ``L == 1`` is a plain int64); stored
  sums (running totals, index nodes, results) add limbs one by one without carrying, which
  cannot wrap as long as every normalised value has a top limb below :func:`limit`. Trend
  counts grow like ``2**n``; when a vertex value reaches the limit the engine widens every
  array by limbs (:func:`.numbers.widen`) and recomputes the event: nothing ever wraps.
* ``F`` (float64): sums of floating-point attributes (compared to a relative 1e-9, as the
  reference allows).
* ``M`` (int64): MIN/MAX as order-preserving codes of the attribute (:mod:`.numbers`),
  ``MIN_EMPTY``/``MAX_EMPTY`` when there is no value.

The twin runs these functions on object arrays of Python integers with ``L == 1`` and
``hard == 0`` (no limit): the exact fallback. Float mode (``numbers="float"``) runs the
compiled functions on ``I`` arrays of float64, also with ``L == 1`` and ``hard == 0``: numba
compiles that copy on its first use, and the limb code it types but never runs casts with
``int()`` so that it types for floats.
"""

from __future__ import annotations

from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
inline = kernels.jit(_TWIN, inline=True, python=False)  # small helpers of the per-event path

MASK = 0xFFFFFFFF
MIN_EMPTY = (1 << 63) - 1
MAX_EMPTY = -(1 << 63)
HARD = 1  # "not exact": limbs are checked (the exact twin passes 0)


@inline
def limit(n_terms, n_buckets):
    """Largest top limb a *normalised* vertex value may have when stored values are sums of at
    most ``n_terms`` of them (over at most ``n_buckets`` buckets): every sum stays below 2**62,
    with a factor 16 to spare for values stored while fewer terms were live."""
    return (1 << 58) // ((n_terms + 2) * (n_buckets + 2))


@inline
def norm(I, row, off, L):
    """Propagate carries of the field at ``I[row, off:off+L]`` (lower limbs into [0, 2**32))."""
    c = 0
    for j in range(L - 1):
        v = int(I[row, off + j]) + c  # int(): the float records' copy is typed, never run
        I[row, off + j] = v & MASK
        c = v >> 32
    I[row, off + L - 1] += c


@inline
def normalize(I, row, L, top_limit):
    """Normalise every integer field of a row; True when a top limb reaches ``top_limit``
    (the caller widens the arrays by a limb and retries)."""
    over = False
    for f in range(I.shape[1] // L):
        off = f * L
        if L > 1:
            norm(I, row, off, L)
        if top_limit > 0:
            top = I[row, off + L - 1]
            if top >= top_limit or top <= -top_limit:
                over = True
    return over


@inline
def clear(I, F, M, row, mmin):
    for j in range(I.shape[1]):
        I[row, j] = 0
    for j in range(F.shape[1]):
        F[row, j] = 0.0
    for j in range(M.shape[1]):
        M[row, j] = MIN_EMPTY if mmin[j] else MAX_EMPTY


@inline
def add(dI, dF, dM, drow, sI, sF, sM, srow, L, mmin, hard):
    """Record ``d[drow] += s[srow]`` (min/max for M). Limbs are added one by one without
    carrying: a stored value is a sum of normalised values, each limb far below 2**63
    (:func:`limit`), and carries are propagated only when a vertex's own value is formed.
    Returns False (kept for the callers' uniform shape)."""
    for j in range(dI.shape[1]):
        dI[drow, j] += sI[srow, j]
    for j in range(dF.shape[1]):
        dF[drow, j] += sF[srow, j]
    for j in range(dM.shape[1]):
        v = sM[srow, j]
        if mmin[j]:
            if v < dM[drow, j]:
                dM[drow, j] = v
        elif v > dM[drow, j]:
            dM[drow, j] = v
    return False


@inline
def add_flat(d, d0, s, s0, n):
    """Rows ``d0 .. d0+n-1`` of ``d`` += rows ``s0 .. s0+n-1`` of ``s`` (two C-ordered arrays of
    one width). The rows of a block are one contiguous run of ``n * width`` words: compiled,
    word ``k`` of the run is addressed as ``d[d0, k]``, which numba (no bounds checks in kernels;
    every record array is C-ordered, rows one after the other) turns into the run's word, so
    the loop is one flat loop that LLVM vectorises whatever the width. A loop over rows and
    then columns is not vectorised (the row stride is a value read from the array), and a
    flat view (``reshape``) costs a helper call per block: with the loop over rows, exact Q1 at
    10^4 events per window spent 1.6 times as long making room in its indexes and 1.4 times as
    long in the per-event kernel (docs/benchmarks.md, "Float mode"). The twin, whose numpy
    arrays check bounds, loops over rows."""
    w = d.shape[1]
    if _TWIN:
        for r in range(n):
            for j in range(w):
                d[d0 + r, j] += s[s0 + r, j]
    else:
        for k in range(n * w):
            d[d0, k] += s[s0, k]


@inline
def copy_flat(d, d0, s, s0, n):
    """Rows ``d0 .. d0+n-1`` of ``d`` = rows ``s0 .. s0+n-1`` of ``s`` (one flat loop: see
    :func:`add_flat`)."""
    w = d.shape[1]
    if _TWIN:
        for r in range(n):
            for j in range(w):
                d[d0 + r, j] = s[s0 + r, j]
    else:
        for k in range(n * w):
            d[d0, k] = s[s0, k]


@inline
def fill_flat(d, d0, n, x):
    """Rows ``d0 .. d0+n-1`` of ``d`` = ``x`` (one flat loop: see :func:`add_flat`)."""
    w = d.shape[1]
    if _TWIN:
        for r in range(n):
            for j in range(w):
                d[d0 + r, j] = x
    else:
        for k in range(n * w):
            d[d0, k] = x


@inline
def add_rows(dI, dF, dM, d0, sI, sF, sM, s0, n, mmin):
    """Rows ``d0 .. d0+n-1`` += rows ``s0 .. s0+n-1``: the integer and float fields as flat
    runs (:func:`add_flat`), MIN/MAX codes row by row. No flat views: a ``reshape`` costs a
    helper call and reference counting on every call."""
    add_flat(dI, d0, sI, s0, n)
    add_flat(dF, d0, sF, s0, n)
    mw = dM.shape[1]
    if mw > 0:
        for r in range(n):
            for j in range(mw):
                v = sM[s0 + r, j]
                if mmin[j]:
                    if v < dM[d0 + r, j]:
                        dM[d0 + r, j] = v
                elif v > dM[d0 + r, j]:
                    dM[d0 + r, j] = v


@inline
def copy_rows(dI, dF, dM, d0, sI, sF, sM, s0, n):
    """Rows ``d0 .. d0+n-1`` = rows ``s0 .. s0+n-1`` (flat runs: :func:`add_flat`)."""
    copy_flat(dI, d0, sI, s0, n)
    copy_flat(dF, d0, sF, s0, n)
    copy_flat(dM, d0, sM, s0, n)


@inline
def clear_rows(I, F, M, r0, n, mmin):
    """Rows ``r0 .. r0+n-1`` emptied."""
    fill_flat(I, r0, n, 0)
    fill_flat(F, r0, n, 0.0)
    if M.shape[1] > 0:
        for r in range(r0, r0 + n):
            for j in range(M.shape[1]):
                M[r, j] = MIN_EMPTY if mmin[j] else MAX_EMPTY


@inline
def add_from_ring(dI, dF, dM, d0, sI, sF, sM, sbase, s0, n, R, mmin):
    """Linear rows ``d0..`` += the ring rows ``sbase + slot`` for slots ``s0, s0+1, ...``
    (modulo R): at most two contiguous blocks."""
    n1 = R - s0
    if n1 > n:
        n1 = n
    add_rows(dI, dF, dM, d0, sI, sF, sM, sbase + s0, n1, mmin)
    if n > n1:
        add_rows(dI, dF, dM, d0 + n1, sI, sF, sM, sbase, n - n1, mmin)


@inline
def add_ring_to_ring(dI, dF, dM, dbase, sI, sF, sM, sbase, s0, n, R, mmin):
    """Ring rows ``dbase + slot`` += ring rows ``sbase + slot`` for ``n`` slots from ``s0``."""
    n1 = R - s0
    if n1 > n:
        n1 = n
    add_rows(dI, dF, dM, dbase + s0, sI, sF, sM, sbase + s0, n1, mmin)
    if n > n1:
        add_rows(dI, dF, dM, dbase, sI, sF, sM, sbase, n - n1, mmin)


@inline
def add_to_ring(dI, dF, dM, dbase, sI, sF, sM, s_lin0, s0, n, R, mmin):
    """Ring rows ``dbase + slot`` (slots from ``s0``) += linear rows ``s_lin0..``: at most two
    contiguous blocks."""
    n1 = R - s0
    if n1 > n:
        n1 = n
    add_rows(dI, dF, dM, dbase + s0, sI, sF, sM, s_lin0, n1, mmin)
    if n > n1:
        add_rows(dI, dF, dM, dbase, sI, sF, sM, s_lin0 + n1, n - n1, mmin)


@inline
def copy_to_ring(dI, dF, dM, dbase, sI, sF, sM, s_lin0, s0, n, R):
    """Ring rows ``dbase + slot`` (slots from ``s0``) = linear rows ``s_lin0..``: at most two
    contiguous blocks."""
    n1 = R - s0
    if n1 > n:
        n1 = n
    copy_rows(dI, dF, dM, dbase + s0, sI, sF, sM, s_lin0, n1)
    if n > n1:
        copy_rows(dI, dF, dM, dbase, sI, sF, sM, s_lin0 + n1, n - n1)


@inline
def sub(dI, dF, drow, sI, sF, srow, L):
    """Record ``d[drow] -= s[srow]`` for the integer and float fields (not M); limb by limb,
    so subtracting a value that was added restores the limbs exactly."""
    for j in range(dI.shape[1]):
        dI[drow, j] -= sI[srow, j]
    for j in range(dF.shape[1]):
        dF[drow, j] -= sF[srow, j]


@inline
def copy(dI, dF, dM, drow, sI, sF, sM, srow):
    for j in range(dI.shape[1]):
        dI[drow, j] = sI[srow, j]
    for j in range(dF.shape[1]):
        dF[drow, j] = sF[srow, j]
    for j in range(dM.shape[1]):
        dM[drow, j] = sM[srow, j]


@inline
def nonzero(I, row, field, L):
    """Is the field nonzero? (Sums of counts have no negative limbs, so a zero count has
    only zero limbs.)"""
    off = field * L
    for j in range(L):
        if I[row, off + j] != 0:
            return True
    return False


@inline
def any_count(I, row0, nrows, L):
    """Is COUNT(*) nonzero in any of the rows ``row0 .. row0+nrows-1``?"""
    for r in range(row0, row0 + nrows):
        for j in range(L):
            if I[r, j] != 0:
                return True
    return False


@inline
def inc(I, row, field, L, hard):
    """``field += 1``."""
    I[row, field * L] += 1
    return False


@inline
def add_field(I, row, dst, src, L, hard):
    """``I[row].dst += I[row].src`` (an event's own contribution: COUNT(E) += count)."""
    d = dst * L
    s = src * L
    for j in range(L):
        I[row, d + j] += I[row, s + j]
    return False


@inline
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


@inline
def mul_add(I, row, dst, src, a, L, hard, tmp):
    """``I[row].dst += a * I[row].src`` for an integer ``|a| < 2**31`` and a normalised
    source; ``tmp`` is scratch of at least ``L + 2`` int64. Returns False when the product
    does not fit the current limbs (the caller widens and retries); True otherwise."""
    d = dst * L
    s = src * L
    if hard == 0:  # exact twin: Python integers
        I[row, d] += a * I[row, s]
        return True
    # split every limb, the signed top included, into 32-bit pieces, multiply, carry
    for j in range(L + 2):
        tmp[j] = 0
    for j in range(L - 1):
        tmp[j] = int(I[row, s + j]) * a  # int(): the float records' copy is typed, never run
    top = int(I[row, s + L - 1])
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
    return True


# Reference: exact counts "of any size" (docs/semantics.md §8 Exactness): the count of A+ over n
# events is 2**n - 1.
