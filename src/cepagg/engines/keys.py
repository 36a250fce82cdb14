"""Partition keys and the slots of stacked partitions.

The stacked partitions of A-Seq (:class:`cepagg.engines.aseq.counters.PartPool`) and GRETA
(:class:`cepagg.engines.greta.pool.GraphPool`) give each partition key a *slot*, a row of
their column-wise state. Where the key is one integer attribute, a batch's keys are an int64
array (:class:`IntKeys`) and the slots are found in a table indexed by the integer, or by
sorted search where the keys spread wide (:class:`IntIndex`): a batch
over many keys (10^6 in a stream of 2*10^5 events) would otherwise build a Python tuple per
key and hash it three times (look-up, insertion, deletion), which cost more per partition than
the kernels' work on its events. Other keys go through a dictionary of key tuples
(:class:`DictKeys`), which an index of integers turns into when a batch brings other keys.

>>> index = IntIndex()
>>> index.grow(4)
>>> index.add(IntKeys(np.array([7, 2])), np.array([0, 1]))
>>> index.get((7,)), index.get((7.0,)), index.get((7.5,)), index.get(("7",)), index.get((None,))
(0, 0, -1, -1, -1)
>>> keys = IntKeys(np.array([3, 5, 9]))
>>> len(keys), keys[1], list(keys), keys[1:], list(take_keys(keys, np.array([2, 0])))
(3, (5,), [(3,), (5,), (9,)], [(5,), (9,)], [(9,), (3,)])
"""

from __future__ import annotations

from collections import deque
from itertools import repeat

import numpy as np


class IntKeys:
    """The key tuples ``(value,)`` of an int64 array, made when read."""

    __slots__ = ("ints",)

    def __init__(self, ints: np.ndarray):
        self.ints = ints

    def __len__(self) -> int:
        return len(self.ints)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(zip(self.ints[i].tolist()))
        return (int(self.ints[i]),)

    def __iter__(self):
        return zip(self.ints.tolist())

    def take(self, idx: np.ndarray) -> "IntKeys":
        return IntKeys(self.ints[idx])


def take_keys(keys: "list[tuple] | IntKeys", idx: np.ndarray) -> "list[tuple] | IntKeys":
    """The keys at positions ``idx``, of the same kind."""
    if isinstance(keys, IntKeys):
        return keys.take(idx)
    return list(map(keys.__getitem__, idx.tolist()))


class DictKeys:
    """The slots of stacked partitions by key: a dictionary from key tuple to slot."""

    def __init__(self) -> None:
        self.slot_of: dict[tuple, int] = {}
        self.key_of = np.empty(0, object)  # the key of each slot (None: free)

    def __len__(self) -> int:
        return len(self.slot_of)

    def items(self):
        return self.slot_of.items()

    def grow(self, n: int) -> None:
        if len(self.key_of) >= n:  # (a restored stack: its slots never taken were left out)
            return
        key_of = np.empty(n, object)
        key_of[:len(self.key_of)] = self.key_of
        self.key_of = key_of

    def get(self, key: tuple) -> int:
        """The slot of ``key``, -1 where it has none."""
        return self.slot_of.get(key, -1)

    def keys_at(self, slots: np.ndarray) -> list[tuple]:
        """The keys of ``slots`` (each taken)."""
        return self.key_of[slots].tolist()

    def find(self, keys) -> np.ndarray:
        """The slot of each key, -1 for unknown ones (``map`` over the dictionary's own
        methods: C loops, no Python bytecode per key)."""
        n = len(keys)
        return np.fromiter(map(self.slot_of.get, keys, repeat(-1, n)), np.int64, n)

    def add(self, keys, slots: np.ndarray) -> None:
        fresh = list(keys)
        self.slot_of.update(zip(fresh, slots.tolist()))
        self.key_of[slots] = np.fromiter(fresh, object, len(fresh))

    def remove(self, slots: np.ndarray) -> None:
        deque(map(self.slot_of.__delitem__, self.key_of[slots]), 0)
        self.key_of[slots] = None


class IntIndex:
    """The slots of stacked partitions whose key is one integer attribute; ``find`` and ``add``
    take :class:`IntKeys`. Keys within a span of at most :data:`DENSE_SPAN` times their number
    (the keys of a stream's partitions mostly are) are found in a table of each integer's slot
    (``table[key - lo]``: slot + 1, 0 for none; int32): a look-up or an insertion is one gather
    or one scatter of a batch's keys. Keys spread wider go to sorted arrays, ``keys`` beside their
    ``slots``, searched with ``np.searchsorted`` and merged with each batch's new keys (for
    good: the table is not made again)."""

    def __init__(self) -> None:
        self._keys = np.zeros(0, np.int64)
        self._slots = np.zeros(0, np.int64)
        self.key_at = np.zeros(0, np.int64)  # the key of each slot (while it is taken)
        self.table: np.ndarray | None = np.zeros(0, np.int32)  # None: sorted arrays
        self.lo = 0  # the key of the table's first entry
        self.n = 0  # keys held in the table

    def __len__(self) -> int:
        return self.n if self.table is not None else len(self._keys)

    @property
    def keys(self) -> np.ndarray:
        """The keys held, in increasing order."""
        if self.table is None:
            return self._keys
        return np.flatnonzero(self.table) + self.lo

    @property
    def slots(self) -> np.ndarray:
        """The slots of :attr:`keys`."""
        if self.table is None:
            return self._slots
        t = self.table
        return t[t != 0].astype(np.int64) - 1

    def items(self):
        return zip(zip(self.keys.tolist()), self.slots.tolist())

    def grow(self, n: int) -> None:
        if len(self.key_at) >= n:  # (a restored stack: its slots never taken were left out)
            return
        key_at = np.zeros(n, np.int64)
        key_at[:len(self.key_at)] = self.key_at
        self.key_at = key_at

    def get(self, key: tuple) -> int:
        """The slot of ``key``, -1 where it has none. A key equal to an integer (``(1.0,)``,
        ``(True,)``) is that integer's, as in a dictionary of key tuples: the partitions of a
        stream whose key column is typed differently from batch to batch stay one."""
        if len(key) != 1:
            return -1
        try:
            v = int(key[0])
        except (TypeError, ValueError, OverflowError):
            return -1
        if v != key[0] or not -2**63 <= v < 2**63:
            return -1
        if self.table is not None:
            return int(self.table[v - self.lo]) - 1 if 0 <= v - self.lo < len(self.table) else -1
        i = int(np.searchsorted(self._keys, v))
        return int(self._slots[i]) if i < len(self._keys) and self._keys[i] == v else -1

    def keys_at(self, slots: np.ndarray) -> list[tuple]:
        """The keys of ``slots`` (each taken)."""
        return list(zip(self.key_at[slots].tolist()))

    def find(self, keys) -> np.ndarray:
        return self.locate(keys)[0]

    def locate(self, keys) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`find`, and for each key the number of keys held below it (where it goes:
        :meth:`add` takes these for the new keys, not searching again), None where the keys
        are in the table."""
        ints = keys.ints
        if self.table is not None:
            if not len(ints):
                return np.zeros(0, np.int64), None
            at = ints - self.lo  # (wraps, negative, only for keys far beyond the table)
            inside = (ints >= self.lo) & (at >= 0) & (at < len(self.table))
            if inside.all():
                return self.table[at].astype(np.int64) - 1, None
            out = np.full(len(ints), -1, np.int64)
            out[inside] = self.table[at[inside]] - 1
            return out, None
        before = np.searchsorted(self._keys, ints)
        if not len(self._keys):
            return np.full(len(ints), -1, np.int64), before
        at = np.minimum(before, len(self._keys) - 1)
        return np.where(self._keys[at] == ints, self._slots[at], -1), before

    def add(self, keys, slots: np.ndarray, before: np.ndarray | None = None) -> None:
        """Keys ``keys`` (distinct, none known) hold ``slots``. In the table, written where
        they fall (the table grown to hold them while the span allows); in sorted arrays,
        merged into them in one pass, each old key moved by the number of new keys before it
        (a new array of each, written once; ``np.insert`` sorts its positions and builds a mask
        per array). ``before``: of each key, the number of keys held below it
        (:meth:`locate`), where the caller has them."""
        ints = np.asarray(keys.ints, dtype=np.int64)
        slots = np.asarray(slots, dtype=np.int64)
        if not len(ints):
            return
        self.key_at[slots] = ints
        if self.table is not None and int(slots.max()) < 2**31 - 1 and self._into_table(ints):
            self.table[ints - self.lo] = slots + 1
            self.n += len(ints)
            return
        if self.table is not None:  # (keys too spread for a table: sorted from now on)
            self._keys, self._slots = self.keys, self.slots
            self.table = None
            before = None
        self._merge(ints, slots, before)

    #: a table of slots spans at most this many integers per key held (4 bytes each)
    DENSE_SPAN = 64

    def _into_table(self, ints: np.ndarray) -> bool:
        """Whether the table can hold ``ints`` too (made anew where they fall outside it, with
        room beyond: zero pages until written); False where the span of the keys would exceed
        :data:`DENSE_SPAN` per key."""
        lo, hi = int(ints.min()), int(ints.max())
        end = self.lo + len(self.table)  # (past the table)
        if self.n:
            lo, hi = min(lo, self.lo), max(hi, end - 1)
        span = hi - lo + 1
        limit = self.DENSE_SPAN * max(self.n + len(ints), 1024)
        if span > limit:
            return False
        if not self.n or lo < self.lo or hi >= end:
            if 0 < lo < span and hi + 1 <= limit:
                lo, span = 0, hi + 1  # (keys counted from 0: none will come below it)
            table = np.zeros(max(span, min(2 * span, limit)), np.int32)
            if self.n:
                table[self.lo - lo:end - lo] = self.table
            self.table, self.lo = table, lo
        return True

    def _merge(self, ints: np.ndarray, slots: np.ndarray, before: np.ndarray | None) -> None:
        if len(ints) > 1 and not (ints[1:] > ints[:-1]).all():
            # (new keys come in the order of a batch's sorted keys, or as a few increasing
            # runs, which numpy's stable sort merges in linear time)
            order = np.argsort(ints, kind="stable")
            ints, slots = ints[order], slots[order]
            before = None if before is None else before[order]
        n, m = len(self._keys), len(ints)
        if not n:
            self._keys, self._slots = ints.copy(), slots.copy()
            return
        if before is None:
            before = np.searchsorted(self._keys, ints)  # old keys before each new one
        at = before + np.arange(m)  # where each new key goes
        moved = np.arange(n) + np.cumsum(np.bincount(before, minlength=n + 1)[:n])
        merged_keys, merged_slots = np.empty(n + m, np.int64), np.empty(n + m, np.int64)
        merged_keys[at], merged_slots[at] = ints, slots
        merged_keys[moved], merged_slots[moved] = self._keys, self._slots
        self._keys, self._slots = merged_keys, merged_slots

    def remove(self, slots: np.ndarray) -> None:
        if self.table is not None:
            self.table[self.key_at[slots] - self.lo] = 0
            self.n -= len(slots)
            return
        pos = np.searchsorted(self._keys, self.key_at[slots])
        self._keys = np.delete(self._keys, pos)
        self._slots = np.delete(self._slots, pos)

    def __getstate__(self):
        """Pickled with the keys held as sorted arrays (a table is mostly zeros)."""
        state = dict(self.__dict__)
        if self.table is not None:
            state.update(_keys=self.keys, _slots=self.slots, table=None, n=0)
            state["dense"] = True
        return state

    def __setstate__(self, state):
        dense = state.pop("dense", False)
        if "keys" in state:  # (an index pickled with its sorted arrays only)
            state = dict(state, _keys=state.pop("keys"), _slots=state.pop("slots"), table=None, lo=0, n=0)
        self.__dict__.update(state)
        if dense:
            self.table, self.n = np.zeros(0, np.int32), 0
            keys, slots = self._keys, self._slots
            self._keys, self._slots = np.zeros(0, np.int64), np.zeros(0, np.int64)
            self.add(IntKeys(keys), slots)

    def as_dict(self) -> DictKeys:
        d = DictKeys()
        d.grow(len(self.key_at))
        d.slot_of = dict(self.items())
        d.key_of[self.slots] = np.fromiter(d.slot_of, object, len(d.slot_of))
        return d
