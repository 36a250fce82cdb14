"""Exact integers in int64 limbs, and order codes for MIN/MAX.

Records (:mod:`._records`) hold integers as ``L`` limbs: 32 bits in each lower limb, the
signed rest in the top one. :func:`widen` adds a limb without changing any value (the top
limb is split); :func:`to_ints` reads values back as Python integers of any size.

MIN and MAX keep an int64 *order code* of the attribute: the integer itself, 0/1 for a
boolean, and for a float the IEEE bits with the lower 63 bits of negative numbers flipped, so
that integer order is float order and the value decodes exactly.

>>> import numpy as np
>>> a = np.array([[2**61 + 5]], dtype=np.int64)
>>> w = widen(a, 1, 1)
>>> w.tolist(), to_ints(w, 0, 2).tolist()
([[5, 536870912]], [2305843009213693957])
>>> codes = float_codes(np.array([-2.5, -0.0, 0.0, 1.5]))
>>> bool(np.all(np.diff(codes) > 0)), decode_floats(codes).tolist()
(True, [-2.5, -0.0, 0.0, 1.5])
"""

from __future__ import annotations

import numpy as np

MASK = 0xFFFFFFFF
_FLIP = np.int64(0x7FFFFFFFFFFFFFFF)


def widen(a: np.ndarray, fields: int, limbs: int, extra: int = 1) -> np.ndarray:
    """``a`` (rows x fields*limbs) with ``extra`` more limbs per field; values unchanged (the
    top limb is split into 32-bit pieces)."""
    rows = a.shape[0]
    v = a.reshape(rows, fields, limbs)
    out = np.zeros((rows, fields, limbs + extra), dtype=np.int64)
    out[:, :, : limbs - 1] = v[:, :, : limbs - 1]
    top = v[:, :, limbs - 1].copy()
    for j in range(extra):
        out[:, :, limbs - 1 + j] = top & MASK
        top >>= 32
    out[:, :, limbs - 1 + extra] = top
    return out.reshape(rows, fields * (limbs + extra))


def to_ints(a: np.ndarray, field: int, limbs: int) -> np.ndarray:
    """Field ``field`` of every row as Python integers (an object array)."""
    off = field * limbs
    if a.dtype == object:
        return a[:, off].copy()
    out = a[:, off + limbs - 1].astype(object)
    for j in range(limbs - 2, -1, -1):
        out = (out << 32) + a[:, off + j].astype(object)
    return out


def to_exact(a: np.ndarray, fields: int, limbs: int) -> np.ndarray:
    """The same values as an object array of Python integers with one limb per field."""
    out = np.empty((a.shape[0], fields), dtype=object)
    for f in range(fields):
        out[:, f] = to_ints(a, f, limbs)
    return out


def python_ints(a: np.ndarray) -> np.ndarray:
    """``a`` as an object array of Python integers (itself when it is one already). Exact
    records hold Python integers; an int64 value combined with one is a numpy scalar whose
    sums and products wrap at 2**63 (or fail on assignment), so every integer an exact graph
    takes in goes through here."""
    return a if a.dtype == object else a.astype(object)


def float_codes(x: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits >= 0, bits, bits ^ _FLIP)


def key_codes(x: np.ndarray) -> np.ndarray:
    """Order codes of numbers compared as floats in an edge condition: -0.0 is 0.0 there."""
    return float_codes(x.astype(np.float64) + 0.0)


def decode_floats(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    bits = np.where(codes >= 0, codes, codes ^ _FLIP)
    return bits.view(np.float64)


# Reference: docs/semantics.md §8 (exact counts, "they never wrap"): the count of A+ over n events
# is 2**n - 1, beyond any fixed width.
