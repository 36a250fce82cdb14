"""The A-Seq kernels' scalars as named fields: a unit's plan, and a partition's counters.

Each is an int64 array in storage (a partition's ``ctr`` is part of its state, so snapshots keep
that format), and the kernels read it through a numpy *record* view with one named int64 field
per scalar: ``plan.within``, ``ctr.pending_ts``, ``ctr.rows += 1``. Numba compiles a record's
field to a load or store at a fixed offset, as fast as an array element; the twin (the same
source run as Python) reads the same fields of a :class:`numpy.record` view, whose writes reach
the array as the compiled kernel's do.

The dtypes are *aligned* (``align=True``; every field is 8 bytes, so nothing is padded): numba
types an array of an unaligned structured dtype as an unaligned array.

Python code outside the kernels, on paths run per partition, reads a partition's counters by
:data:`AT` (a field's position in the int64 array) without a view, and a plan's fields by item
(``plan["flush"]``): a :class:`numpy.record` looks its attributes up in Python code, some
four times slower than its items, which are some ten times slower than an array element.
"""

from __future__ import annotations

import numpy as np

from ._expiry import NONE


def _record(fields: list[tuple]) -> np.dtype:
    base = np.dtype([(name, np.int64, *shape) for name, *shape in fields], align=True)
    assert base.itemsize == 8 * sum(int(np.prod(s[0])) if s else 1 for _, *s in fields), "padded"
    return np.dtype((np.record, base))


#: a unit's plan, read-only for the kernels (the runtime sets ``flush``, ``checked`` and ``sums``
#: per call)
PLAN = _record([
    ("mode", ),          # TOTAL, EMIT, RECORD or SLIDE (:mod:`._expiry`)
    ("within", ),        # the window in time units; -1 without WITHIN
    ("slide", ),         # SLIDE's step (0 without)
    ("lo", ),            # only instants (STARTs, windows, EMIT rows) in [lo, hi) are reported
    ("hi", ),
    ("every", ),         # EMIT every instant, not only on a change (time slices)
    ("lead", ),          # a leading negation: STARTs it blocks wait in segment 1
    ("gated", ),         # WITHIN alone with a leading negation (blocked single-event matches)
    ("checked", ),       # check int64 overflow (not in float mode or on Python integers)
    ("flush", ),         # bring the partition to this time after its events (NONE: no)
    ("sums", ),          # window sums are kept (else a partition under WITHIN alone leaves them out)
    ("grouped", ),       # run_pool: each partition's totals are its own groups' (GROUP BY)
])

#: a partition's counters (its ``ctr``, part of its state)
COUNTERS = _record([
    ("items", (2, 2)),       # items[s, 0], items[s, 1]: back and front sizes of window segment s
    ("pending", ),           # a pending group (events of one time, not yet applied)
    ("pending_ts", ),        # its time
    ("lead_ts", ),           # the time of the last leading negative event (NONE: none)
    ("next_window", ),       # SLIDE: the next window to report, k of [k·s, k·s+w) (NONE: none yet)
    ("rows", ),              # output rows written by this kernel call
    ("pending_lead", ),      # the pending group holds a leading negative event
    ("pending_instants", ),  # EMIT: bit o set if the pending group has an event of output o
    ("stage", ),             # 1: the pending group is applied, its instants not yet reported
])

#: the position of each field of :data:`COUNTERS` in a partition's int64 ``ctr`` (the first,
#: for ``items``)
AT = {name: COUNTERS.fields[name][1] // 8 for name in COUNTERS.names}


def new_plan() -> np.ndarray:
    """A plan in storage: one record (``plan[0]`` is what the kernels take)."""
    return np.zeros(1, PLAN)


def new_counters() -> np.ndarray:
    """A new partition's counters: empty segments, no pending group, no leading negation."""
    ctr = np.zeros(COUNTERS.itemsize // 8, np.int64)
    ctr[AT["lead_ts"]] = NONE
    ctr[AT["next_window"]] = NONE
    return ctr


def segment_sizes(ctr: np.ndarray, s: int) -> tuple[int, int]:
    """The back and front sizes of window segment ``s`` in a partition's ``ctr``."""
    i = AT["items"] + 2 * s
    return int(ctr[i]), int(ctr[i + 1])


def counters(ctr: np.ndarray) -> np.record:
    """The record view of one partition's ``ctr`` (writes reach the array)."""
    return ctr.view(COUNTERS)[0]


def stacked_counters(ctrs: np.ndarray) -> np.ndarray:
    """The record view of stacked partitions' counters (one row of ``ctrs`` per partition)."""
    return ctrs.view(COUNTERS).reshape(ctrs.shape[0])
