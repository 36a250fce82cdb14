"""The A-Seq kernels' scalars as named fields: a unit's plan, and a partition's counters.

Each is an int64 array in storage (a partition's ``ctr`` is part of its state, so snapshots keep
that format). The compiled kernels read it through a numpy *record* view with one named int64
field per scalar (``plan.within``, ``ctr.pending_ts``, ``ctr.rows += 1``): numba compiles a
record's field to a load or store at a fixed offset, as fast as an array element, and writes
reach the array. The dtypes are *aligned* (``align=True``; every field is 8 bytes, so nothing
is padded): numba types an array of an unaligned structured dtype as an unaligned array.

A :class:`numpy.record` looks its attributes up in Python code, some thirty times slower than
an array element, which made the exact twin (the same source run as Python) four times slower.
So the runtime sets a plan's fields through another view of the same array with the same field
names, :class:`Fields` (``python=True``); the twin takes the fields copied into plain attributes
(:class:`Copied`, :func:`for_twin`), written back after it ran; and Python code that reads one
counter per partition uses :data:`AT` (a field's position in the int64 array) without a view.
"""

from __future__ import annotations

import functools
import operator

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


class Fields(np.ndarray):
    """An int64 array whose fields of a record dtype are attributes (subclasses per dtype:
    :func:`fields_class`); what Python code takes where the compiled kernels take a record."""


def fields_class(name: str, dtype: np.dtype) -> type:
    """The :class:`Fields` of ``dtype``: a scalar field reads and writes its array element, a
    nested array field is a plain array viewing its elements (made once per view)."""
    attrs: dict = {"__doc__": f"The fields of :data:`{name.upper()}` over an int64 array."}
    for field in dtype.names:
        sub, offset = dtype.fields[field][:2]
        i = offset // 8
        if sub.shape:
            n = int(np.prod(sub.shape))
            def view(a, i=i, n=n, shape=sub.shape):
                return np.asarray(a)[i:i + n].reshape(shape)

            view.__name__ = field
            attrs[field] = functools.cached_property(view)
        else:
            attrs[field] = property(operator.itemgetter(i), lambda a, v, i=i: a.__setitem__(i, v))
    return type(f"{name.title()}Fields", (Fields,), attrs)


PlanFields = fields_class("plan", PLAN)
CounterFields = fields_class("counters", COUNTERS)


class Copied:
    """The fields of a record copied out of its int64 array into attributes, for the twin: it
    reads them several times faster than through a :class:`Fields` view. A nested array field
    stays a view of the array; :meth:`store` writes the scalar fields back."""

    __slots__ = ("_array",)
    _scalars: tuple = ()  # (field, position)
    _nested: tuple = ()  # (field, position, size, shape)

    def __init__(self, a: np.ndarray):
        self._array = a
        for field, i in self._scalars:
            setattr(self, field, a[i])
        for field, i, n, shape in self._nested:
            setattr(self, field, a[i:i + n].reshape(shape))

    def store(self) -> None:
        a = self._array
        for field, i in self._scalars:
            a[i] = getattr(self, field)


def copied_class(name: str, dtype: np.dtype) -> type:
    """The :class:`Copied` of ``dtype``."""
    scalars, nested = [], []
    for field in dtype.names:
        sub, offset = dtype.fields[field][:2]
        if sub.shape:
            nested.append((field, offset // 8, int(np.prod(sub.shape)), sub.shape))
        else:
            scalars.append((field, offset // 8))
    return type(f"{name.title()}Copied", (Copied,), {"__slots__": dtype.names, "_scalars": tuple(scalars),
                                                     "_nested": tuple(nested)})


PlanCopied = copied_class("plan", PLAN)
CounterCopied = copied_class("counters", COUNTERS)


def new_plan() -> np.ndarray:
    """A plan in storage (int64; set its fields through ``plan(p, python=True)``)."""
    return np.zeros(PLAN.itemsize // 8, np.int64)


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


def plan(prm: np.ndarray, python: bool = False):
    """The view of a plan the compiled kernels take (a record), or with ``python`` the one the
    twin takes and Python code sets (:class:`PlanFields`). Writes reach ``prm``."""
    return prm.view(PlanFields) if python else prm.view(PLAN)[0]


def counters(ctr: np.ndarray, python: bool = False):
    """The view of one partition's ``ctr`` the compiled kernels take (a record), or with
    ``python`` the one the twin takes (:class:`CounterFields`). Writes reach ``ctr``."""
    return ctr.view(CounterFields) if python else ctr.view(COUNTERS)[0]


def for_twin(prm: np.ndarray, ctr: np.ndarray) -> tuple:
    """A plan and a partition's counters as the twin takes them (:class:`Copied`); call
    ``store()`` on the counters after the twin has run."""
    return PlanCopied(prm), CounterCopied(ctr)


def stacked_counters(ctrs: np.ndarray) -> np.ndarray:
    """The record view of stacked partitions' counters (one row of ``ctrs`` per partition; the
    compiled :func:`._kernels.run_pool` only)."""
    return ctrs.view(COUNTERS).reshape(ctrs.shape[0])
