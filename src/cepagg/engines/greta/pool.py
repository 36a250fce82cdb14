"""Positive graphs of many partitions stacked field by field, run by one kernel call per batch.

A stream over many keys holds many partitions with few events each. Each as its own
:class:`.state.PosState` costs a kernel call per batch it has events in (numba unboxes the 82
arrays of the call's four records, some 14 µs with no events) and some fifty arrays made per
new partition. A :class:`GraphPool` holds the graphs of one shape -- the small capacities of
a new partition -- as one array per field of :data:`.state.G_NAMES` whose rows are cut into
equal *slots*, one per partition: :func:`._kernels.pos_run` takes the stack and the batch's
slots and runs them one after the other, each graph a record of views of its slot.

A graph that must grow (vertex store, start buckets, limbs, records, outputs) leaves the stack
(:meth:`GraphPool.detach`: its slot copied into a graph of its own, which grows as any other);
its partition then runs alone. A slot freed is reset from the template when it is taken again.

A new partition's slot is written only in its scalars (``sc``: no start, no window, no vertex)
until an event of its START state comes (:meth:`GraphPool.fill`): the other events of a new
graph change nothing in it, and over many keys most partitions hold one or two events.
"""

from __future__ import annotations

import numpy as np

from ..keys import DictKeys, IntIndex, IntKeys, take_keys
from . import _kernels as K
from .kernel_args import PosArrays
from .state import G_NAMES, PosState, packed_zeros, unpacked_zeros

_SC, _B = G_NAMES.index("sc"), G_NAMES.index("B")


class GraphPool:
    """Graphs of the shape of ``fresh`` (a new graph), one slot per partition key, with each
    partition's events seen (``count``, positions for contiguous patterns) and its last time
    (``last_ts``)."""

    def __init__(self, fresh: PosState, n_derivations: int):
        self.shell = fresh.shell()  # what every graph of the stack shares besides its arrays
        self.template = [fresh.a[n] for n in G_NAMES]
        self.others = {k: v for k, v in fresh.a.items() if k not in G_NAMES}
        self.rows = np.array([t.shape[0] for t in self.template], dtype=np.int64)
        self.fields = [np.zeros((0,) + t.shape[1:], dtype=t.dtype) for t in self.template]
        # the slot of each key: sorted integers where every key is one integer (no Python
        # object per key), else a dictionary of key tuples; chosen by the first keys
        self.index: IntIndex | DictKeys | None = None
        self.alive = np.zeros(0, dtype=bool)  # the slot holds a partition
        self.free = np.zeros(0, dtype=np.int64)  # slots below ``top`` released
        self.top = 0  # slots from here on never held a graph: zero, as the stack grew
        self.blank = np.zeros(0, dtype=bool)  # new graphs written in ``sc`` only (:meth:`fill`)
        self.count = np.zeros(0, dtype=np.int64)
        self.last_ts = np.zeros(0, dtype=np.int64)
        self.scratch = fresh.scratch(n_derivations)
        self._args: PosArrays | None = None

    #: the number format of every stacked graph: limbs of int64 (one) or float64, never Python
    #: integers (a graph that needs more leaves the stack)
    exact = False
    L = 1

    @property
    def floats(self) -> bool:
        return bool(self.shell["floats"])

    @property
    def slots(self) -> int:
        return len(self.alive)

    def __len__(self) -> int:
        return len(self.index) if self.index is not None else 0

    @property
    def slot_of(self) -> dict[tuple, int]:
        """Each key's slot (a dictionary made for the caller)."""
        return dict(self.index.items()) if self.index is not None else {}

    def slot(self, key: tuple) -> int:
        """The slot of ``key``, -1 where it has none."""
        return self.index.get(key) if self.index is not None else -1

    def keys_at(self, slots: np.ndarray) -> list[tuple]:
        """The keys of ``slots`` (each holding a partition)."""
        return self.index.keys_at(slots) if self.index is not None else []

    def keys(self) -> list[tuple]:
        return self.keys_at(self.live())

    def args(self) -> PosArrays:
        """The kernel's record of the stacked fields (rebuilt when the stack grows)."""
        if self._args is None:
            self._args = PosArrays._make(self.fields)
        return self._args

    def slots_of(self, keys: list, values: np.ndarray | None = None,
                 first: np.ndarray | None = None) -> np.ndarray:
        """The slot of each of ``keys`` (distinct); new keys get slots reset to a new graph.
        ``values``: where each key is one integer, these integers (int64), looked up in the
        sorted integers (numpy, no Python object per key). ``first``: the keys whose new slots
        come first, next to each other (those the kernel will write beyond ``sc``: the pages
        it touches are fewer).

        Otherwise the look-ups run in bulk (``map`` over the dictionary's own methods: C loops,
        no Python bytecode per key). The new slots are reset one field at a time for all."""
        ints = values is not None
        if self.index is None or (not len(self) and ints != isinstance(self.index, IntIndex)):
            self.index = IntIndex() if ints else DictKeys()
            self.index.grow(self.slots)
        elif not ints and isinstance(self.index, IntIndex):  # (a batch whose keys are not all integers)
            self.index = self.index.as_dict()
        batch_keys = IntKeys(values) if isinstance(self.index, IntIndex) else keys
        if isinstance(self.index, IntIndex):
            slots, below = self.index.locate(batch_keys)
        else:
            slots, below = self.index.find(batch_keys), None
        new = np.flatnonzero(slots < 0)
        m = len(new)
        if m:
            # released slots first, then slots never used (lowest first: keys in order get
            # slots in order, and the kernel visits them in the order of memory)
            r = min(m, len(self.free))
            reused = np.sort(self.free[len(self.free) - r:])
            self.free = self.free[: len(self.free) - r]
            top = self.top + m - r
            if top > self.slots:
                # untouched capacity costs no memory (zero pages): room for 4 times as many,
                # copying less
                self._grow(max(64, 4 * self.slots, 4 * top))
            taken = np.concatenate([reused, np.arange(self.top, top, dtype=np.int64)])
            self.top = top
            got = taken  # the slot of each new key, in the batch's order of keys
            if first is not None:
                got = np.empty(m, dtype=np.int64)
                got[np.concatenate([np.flatnonzero(first[new]), np.flatnonzero(~first[new])])] = taken
            if below is None:
                self.index.add(take_keys(batch_keys, new), got)
            else:
                self.index.add(take_keys(batch_keys, new), got, below[new])
            self.alive[taken] = True
            self._reset(reused, taken[r:])
            slots[new] = got
        return slots

    def _reset(self, reused: np.ndarray, unused: np.ndarray) -> None:
        """Slots ``reused`` (released before) and ``unused`` (never used, zero) hold a new graph:
        ``reused`` set from the template field by field, ``unused`` in ``sc`` only (blank)."""
        for f, t, r in zip(self.fields, self.template, self.rows.tolist()):
            if r and len(reused):
                f.reshape((self.slots, r) + t.shape[1:])[reused] = t
        for rows in (reused, _as_range(unused)):
            self.count[rows] = 0
            self.last_ts[rows] = K.NEG_INF
        unused = _as_range(unused)
        self.field("sc")[unused] = self.template[_SC]
        self.blank[unused] = True

    def fill(self, slots: np.ndarray) -> None:
        """The blank graphs of ``slots`` written whole, for the kernel (or a copy) to read: the
        fields whose template is not zero (the others are zero since the stack grew)."""
        slots = _as_range(slots[self.blank[slots]])
        if isinstance(slots, np.ndarray) and not len(slots):
            return
        for f, t, r, zero in zip(self.fields, self.template, self.rows.tolist(), self.zero):
            if r and not zero:
                f.reshape((self.slots, r) + t.shape[1:])[slots] = t
        self.blank[slots] = False

    @property
    def zero(self) -> list[bool]:
        """Of each field: its template is all zero."""
        if getattr(self, "_zero", None) is None:
            self._zero = [not t.any() for t in self.template]
        return self._zero

    def _grow(self, n: int) -> None:
        """Room for ``n`` slots. The new rows are zeros that cost nothing until written
        (``np.zeros`` maps untouched pages of zeros): a slot is written when it is taken, and
        then only in the fields whose template is not zero."""
        top = self.top
        for i, (f, r) in enumerate(zip(self.fields, self.rows.tolist())):
            new = np.zeros((n * r,) + f.shape[1:], dtype=f.dtype)
            new[: top * r] = f[: top * r]  # (the slots above ``top`` are zero in both)
            self.fields[i] = new
        if self.index is not None:
            self.index.grow(n)
        self.alive, self.count, self.last_ts, self.blank = (
            _longer(a, n) for a in (self.alive, self.count, self.last_ts, self.blank))
        self._args = None

    def release(self, slots: np.ndarray) -> None:
        """``slots`` are free again and their keys forgotten."""
        if not len(slots):
            return
        self.alive[slots] = False
        if len(slots) == len(self):  # all of them (the end of the input)
            self.index = type(self.index)()
            self.index.grow(self.slots)
            self.free = np.arange(self.top, dtype=np.int64)
            self.blank[:] = False  # (a slot taken again is reset whole)
            return
        self.index.remove(slots)
        self.blank[slots] = False
        self.free = np.concatenate([self.free, slots])

    def detach(self, slot: int) -> PosState:
        """The graph of ``slot`` as a graph of its own (copied); the slot is released."""
        shell = {k: list(v) if isinstance(v, list) else v for k, v in self.shell.items()}
        self.fill(np.array([slot], dtype=np.int64))
        arrays = {n: f[slot * r:(slot + 1) * r].copy()
                  for n, f, r in zip(G_NAMES, self.fields, self.rows.tolist())}
        arrays.update({k: v.copy() for k, v in self.others.items()})
        self.release(np.array([slot], dtype=np.int64))
        return PosState.restored(shell, arrays)

    def live(self) -> np.ndarray:
        """The slots holding a partition."""
        return np.flatnonzero(self.alive[: self.top])

    def field(self, name: str) -> np.ndarray:
        """Field ``name`` with the slot as first axis (a view)."""
        i = G_NAMES.index(name)
        f = self.fields[i]
        return f.reshape((self.slots, int(self.rows[i])) + f.shape[1:])

    def scalars(self) -> np.ndarray:
        """Each slot's state scalars, as records (:data:`._kernels.STATE_SCALARS`; a view)."""
        return self.fields[_SC].view(K.STATE_SCALARS)

    def starts_before(self, slots: np.ndarray, limit: int) -> np.ndarray:
        """Of each of ``slots``: every start bucket of its graph is earlier than ``limit``, or
        there is none (:meth:`.state.PosState.starts_before` for many graphs)."""
        sc = self.scalars()[_in_order(slots)]
        hi = sc["bhi"]
        out = sc["blo"] > hi
        some = np.flatnonzero(~out)  # the latest bucket read only where there is one
        if len(some):
            B = self.field("B")
            out[some] = B[slots[some], hi[some] & (B.shape[1] - 1), K.B_KEY] < limit
        return out

    def empty(self, slots: np.ndarray) -> np.ndarray:
        """Of each of ``slots``: its graph holds nothing a later event or window could use
        (:meth:`.state.PosState.empty` for many graphs)."""
        sc = self.scalars()[_in_order(slots)]
        return ((sc["nv"] == 0) & (sc["blo"] > sc["bhi"]) & (sc["wlo"] > sc["whi"])
                & (sc["nrec"] == sc["rstart"]) & (sc["outn"] == 0))

    def closing(self, slots: np.ndarray, until: int, within: int, slide: int) -> np.ndarray:
        """Of each of ``slots`` (SLIDE graphs): a window it holds a record of ends by ``until``
        (window ``k`` ends at ``k * slide + within``), so moving its time there writes a result."""
        sc = self.scalars()[_in_order(slots)]
        wlo = sc["wlo"]
        return (wlo <= sc["whi"]) & (wlo <= (until - within) // slide)

    def idle(self, slots: np.ndarray, until: int, within: int, slide: int) -> np.ndarray:
        """Of each of ``slots`` (SLIDE graphs): nothing in its graph matters to a result once
        time reaches ``until`` -- no window record, no output, and every start bucket (pane)
        leaves the window there -- whether or not its time was moved to ``until``."""
        sc = self.scalars()[_in_order(slots)]
        return ((sc["wlo"] > sc["whi"]) & (sc["outn"] == 0)
                & self.starts_before(slots, (until - within) // slide + 1))

    # -- pickling: the live slots only, renumbered from 0, their buffers mostly zero packed ---

    def __reduce__(self):
        live = self.live()
        self.fill(live)  # (restored graphs are whole)
        fields = [(packed_zeros(self.field(n)[live].reshape(-1)), f.shape[1:])
                  for n, f in zip(G_NAMES, self.fields)]
        keys = self.index.key_at[live] if isinstance(self.index, IntIndex) else self.keys_at(live)
        return _restored_pool, (self.shell, self.template, self.others, self.scratch, fields,
                                keys, self.count[live], self.last_ts[live])


def _longer(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` followed by zeros to length ``n`` (pages of zeros, not written)."""
    out = np.zeros(n, dtype=a.dtype)
    out[:len(a)] = a
    return out


def _in_order(slots: np.ndarray) -> "slice | np.ndarray":
    """``slots`` as a slice where they are consecutive slots in increasing order (all of a
    stack's, as a watermark reads them), else themselves. The state scalars are records of
    120 bytes: a slice of them is a view, where ``slots`` would gather each field read (one
    pass over the records each)."""
    n = len(slots)
    if n and int(slots[-1]) - int(slots[0]) == n - 1 and (n == 1 or bool((np.diff(slots) == 1).all())):
        return slice(int(slots[0]), int(slots[0]) + n)
    return slots


def _as_range(slots: np.ndarray) -> "slice | np.ndarray":
    """Distinct ``slots`` as the slice of the same slots where they are one run of consecutive
    slots in any order (new slots are taken so), else themselves: where a value is written to
    each slot, a slice writes the rows in order, without gathering them."""
    n = len(slots)
    if n:
        lo, hi = int(slots.min()), int(slots.max())
        if hi - lo == n - 1:
            return slice(lo, hi + 1)
    return slots


def _restored_pool(shell, template, others, scratch, fields, keys, count, last_ts) -> GraphPool:
    """The pool :meth:`GraphPool.__reduce__` pickled; ``keys`` are tuples, or integers (an
    array) where every key is one."""
    pool = object.__new__(GraphPool)
    pool.shell, pool.template, pool.others, pool.scratch = shell, template, others, scratch
    pool.rows = np.array([t.shape[0] for t in template], dtype=np.int64)
    n = len(keys)
    pool.fields = [unpacked_zeros(flat, t.dtype).reshape((n * t.shape[0],) + tuple(tail))
                   for (flat, tail), t in zip(fields, template)]
    pool.alive = np.ones(n, dtype=bool)
    pool.index = IntIndex() if isinstance(keys, np.ndarray) else DictKeys()
    pool.index.grow(n)
    pool.index.add(IntKeys(np.asarray(keys, dtype=np.int64)) if isinstance(keys, np.ndarray) else keys,
                   np.arange(n, dtype=np.int64))
    pool.free = np.zeros(0, dtype=np.int64)
    pool.top = n
    pool.blank = np.zeros(n, dtype=bool)
    pool.count = np.array(count, dtype=np.int64)
    pool.last_ts = np.array(last_ts, dtype=np.int64)
    pool._args = None
    return pool


# Reference: GRETA (PVLDB 2017) Section 7 "GRETA Runtime Data Structures": one graph per
# partition; stacking them changes where the arrays live, not what the graph holds.
