"""Partition keys and the slots of stacked partitions.

The stacked partitions of A-Seq (:class:`cepagg.engines.aseq.counters.PartPool`) and GRETA
(:class:`cepagg.engines.greta.pool.GraphPool`) give each partition key a *slot*, a row of
their column-wise state. Where the key is one integer attribute, a batch's keys are an int64
array (:class:`IntKeys`) and the slots are found by sorted search (:class:`IntIndex`): a batch
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
    """The slots of stacked partitions whose key is one integer attribute: the keys in
    increasing order beside their slots, searched with ``np.searchsorted``; ``find`` and
    ``add`` take :class:`IntKeys`."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, np.int64)
        self.slots = np.zeros(0, np.int64)
        self.key_at = np.zeros(0, np.int64)  # the key of each slot (while it is taken)

    def __len__(self) -> int:
        return len(self.keys)

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
        i = int(np.searchsorted(self.keys, v))
        return int(self.slots[i]) if i < len(self.keys) and self.keys[i] == v else -1

    def keys_at(self, slots: np.ndarray) -> list[tuple]:
        """The keys of ``slots`` (each taken)."""
        return list(zip(self.key_at[slots].tolist()))

    def find(self, keys) -> np.ndarray:
        return self.locate(keys)[0]

    def locate(self, keys) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`find`, and for each key the number of keys held below it (where it goes:
        :meth:`add` takes these for the new keys, not searching again)."""
        ints = keys.ints
        before = np.searchsorted(self.keys, ints)
        if not len(self.keys):
            return np.full(len(ints), -1, np.int64), before
        at = np.minimum(before, len(self.keys) - 1)
        return np.where(self.keys[at] == ints, self.slots[at], -1), before

    def add(self, keys, slots: np.ndarray, before: np.ndarray | None = None) -> None:
        """Keys ``keys`` (distinct, none known) hold ``slots``: merged into the sorted keys in
        one pass, each old key moved by the number of new keys before it (a new array of
        each, written once; ``np.insert`` sorts its positions and builds a mask per array).
        ``before``: of each key, the number of keys held below it (:meth:`locate`), where the
        caller has them."""
        ints = np.asarray(keys.ints, dtype=np.int64)
        slots = np.asarray(slots, dtype=np.int64)
        self.key_at[slots] = ints
        if len(ints) > 1 and not (ints[1:] > ints[:-1]).all():
            # (new keys come in the order of a batch's sorted keys, or as a few increasing
            # runs, which numpy's stable sort merges in linear time)
            order = np.argsort(ints, kind="stable")
            ints, slots = ints[order], slots[order]
            before = None if before is None else before[order]
        n, m = len(self.keys), len(ints)
        if not n:
            self.keys, self.slots = ints.copy(), slots.copy()
            return
        if before is None:
            before = np.searchsorted(self.keys, ints)  # old keys before each new one
        at = before + np.arange(m)  # where each new key goes
        moved = np.arange(n) + np.cumsum(np.bincount(before, minlength=n + 1)[:n])
        merged_keys, merged_slots = np.empty(n + m, np.int64), np.empty(n + m, np.int64)
        merged_keys[at], merged_slots[at] = ints, slots
        merged_keys[moved], merged_slots[moved] = self.keys, self.slots
        self.keys, self.slots = merged_keys, merged_slots

    def remove(self, slots: np.ndarray) -> None:
        pos = np.searchsorted(self.keys, self.key_at[slots])
        self.keys = np.delete(self.keys, pos)
        self.slots = np.delete(self.slots, pos)

    def as_dict(self) -> DictKeys:
        d = DictKeys()
        d.grow(len(self.key_at))
        d.slot_of = dict(self.items())
        d.key_of[self.slots] = np.fromiter(d.slot_of, object, len(d.slot_of))
        return d
