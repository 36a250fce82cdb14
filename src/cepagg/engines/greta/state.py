"""The runtime graph of one partition: arrays, and how they grow.

A :class:`PosState` is the positive GRETA graph of one partition (or sub-partition): stored
vertices (each event once, with one record per start bucket), the ring of start buckets,
running totals per state, the ordered indexes, window results, trailing-negation records and
output buffers -- the record the kernel :func:`._kernels.pos_one` takes, in its order. A
:class:`NegState` is a negative sub-pattern's graph. Both are plain numpy arrays, so the state
pickles (Spark keeps it in its state store) and nothing per event is a Python object.

Arrays grow by doubling when the kernel asks (vertex store, bucket ring, records, outputs),
and integers widen by one limb when a value approaches 2**61 (:mod:`.numbers`).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

import numpy as np

from ...lang.expr import ConditionTypeError
from ..kernels import twin as _twin
from . import _kernels as K
from . import _records
from . import index as _index
from .index import EMPTY_KEY
from .kernel_args import NegArrays, NegScratch, PosArrays, PosScratch
from .layout import DataKindError
from .numbers import key_codes, to_exact, widen

EXACT_FLOAT = 2**53
BULK = 8  # a batch's keys are inserted all at once when there are at least 1/BULK as many as slots
RING0 = 16  # start buckets of a WITHIN-alone ring at first; it doubles when full (tests shrink it)


def _float_keys(vals: np.ndarray) -> np.ndarray:
    """Order codes of numbers compared as floats (integers beyond 2**53 would not be exact)."""
    if vals.dtype.kind in "iub":
        if len(vals) and np.abs(vals.astype(np.int64)).max() > EXACT_FLOAT:
            raise DataKindError("integer key beyond 2**53 compared with floats in an edge condition")
    return key_codes(vals)

G_NAMES = PosArrays._fields


def leaf_tags(sizes: list[int]) -> np.ndarray:
    """The leaf tags ``LT`` of indexes of ``sizes`` slots, one after the other: no leaf holds a
    bucket, and each slot holds the leaf of its own number (column :data:`.index.LEAF`, counted
    from its index's first)."""
    LT = np.zeros((sum(sizes), 3), dtype=np.int64)
    LT[:, 1] = -1
    LT[:, _index.LEAF] = np.concatenate([np.arange(n, dtype=np.int64) for n in sizes]) if sizes else 0
    return LT


def _tags_by_leaf(a: dict) -> None:
    """A state pickled while leaves sat at their slots' rows (``LT`` of two columns) in the
    layout where each slot names its leaf: every slot names its own row's."""
    LT = a.get("LT")
    if LT is None or LT.shape[1] != 2:
        return
    sizes = [int(n) for n in a["IDX"][:, K.IX_N]] if len(LT) else []
    new = leaf_tags(sizes)
    new[:, :2] = LT
    a["LT"] = new

# record triples (int, float, min/max) and the length of their "entity" axis
_RECORDS = ("T", "N", "L", "V", "W", "X", "A", "R", "O", "last")


class _Arrays(dict):
    """A state's arrays by name, keeping the kernel's argument tuple until an array is replaced
    (growth, widening): building the 46-tuple was a tenth of a small batch's Python time."""

    def __init__(self) -> None:
        super().__init__()
        self.cached: tuple | None = None

    def __setitem__(self, key: str, value: np.ndarray) -> None:
        super().__setitem__(key, value)
        self.cached = None

    def __reduce__(self):  # pickled without the cached tuple (Spark keeps states between batches)
        return _arrays_of, (dict(self),)


def _arrays_of(items: dict) -> _Arrays:
    a = _Arrays()
    dict.update(a, items)
    return a


def _argument_record(arrays: list[np.ndarray]) -> tuple[PosArrays, np.ndarray]:
    """The kernel's record of a graph's arrays, and their lengths (the graph alone in a stack)."""
    return PosArrays._make(arrays), np.array([x.shape[0] for x in arrays], dtype=np.int64)


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


class PosState:
    """Arrays of one positive graph (see :data:`G_NAMES` for the kernel's order)."""

    def __init__(self, layout, negM: np.ndarray, windows: int, pure: bool = False,
                 floats: bool = False, vcap: int = 64, ring: int = RING0, ocap: int = 32,
                 slide_ring: int | None = None):
        """``floats``: COUNT(*), COUNT(E), integer sums and non-null counts are float64 (one
        field each, never widened): the engine's ``numbers="float"``. ``vcap``, ``ring`` and
        ``ocap``: the first capacities of the vertex store, the start buckets of a WITHIN-alone
        ring and the outputs (each doubles when the kernel asks). ``slide_ring``: under SLIDE,
        at most this many start buckets at first (by default one per window of an event and
        one more, twice that with a leading negation: enough for any stream, never grown);
        fewer make a small graph for a partition with few starts, doubled when the kernel
        asks."""
        lay = layout
        self.pure = pure
        self.floats = floats
        pk = lay.positive.kernel_plan
        q = lay.plan.query
        self.S = int(pk.pi.view(K.PLAN_SCALARS)[0]["ns"])
        self.FI, self.FF, self.FM = lay.FI, lay.FF, lay.FM
        self.mmin = lay.mmin
        self.L = 1
        self.exact = False
        self.mode = q.mode
        if q.mode == "slide":
            self.R = _pow2(windows + 1) * (2 if lay.lead else 1)
            if slide_ring is not None:
                self.R = min(self.R, _pow2(slide_ring))
            self.RW = _pow2(windows + 1)
        elif q.within is not None:
            self.R, self.RW = ring, 1
        else:
            self.R, self.RW = 1, 1
        # small at first (a partition of a stream over many keys holds a few events), doubled
        # when the kernel asks
        self.vcap = vcap
        self.rcap = 16 if lay.trail else 1
        self.ocap = ocap
        self.NIX = len(lay.positive.index_specs)
        self.C = len(lay.positive.programs.slots)
        self.vkind: list[str | None] = [None] * self.NIX  # kind of the keys (Vec.kind)
        self.nkind: list[str | None] = [None] * self.NIX  # numbers: "int" or "float" codes
        self.vocab: list[np.ndarray | None] = [None] * self.NIX  # strings: sorted vocabulary
        G = len(negM)
        a = _Arrays()
        sc = np.zeros(1, dtype=K.STATE_SCALARS)
        sc["now"] = K.NEG_INF
        sc["bhi"] = -1
        sc["wlo"] = K.POS_INF
        sc["whi"] = K.NEG_INF
        sc["tlast"] = K.NEG_INF
        a["sc"] = sc.view(np.int64)
        a["negM"] = negM.copy()
        a["gdone"] = np.full(G, K.NEG_INF, dtype=np.int64)
        a["grptr"] = np.zeros(G, dtype=np.int64)
        B = np.zeros((self.R, 5), dtype=np.int64)
        B[:, K.B_SEQ] = -1
        a["B"] = B
        self.a = a
        self._records("T", self.S * self.R)
        IDX = np.zeros((self.NIX, 5), dtype=np.int64)
        for ix, spec in enumerate(lay.positive.index_specs):
            IDX[ix, K.IX_POINT] = 1 if spec.op == "=" else 0
            IDX[ix, K.IX_SRC] = lay.positive.index_src[ix]
        IDX[:, K.IX_OFF] = np.arange(self.NIX)
        a["IDX"] = IDX
        self._records("N", self.NIX * self.R)
        self._records("L", 0)
        a["NT"] = np.zeros((self.NIX, 2), dtype=np.int64)
        a["NT"][:, 1] = -1
        a["LT"] = leaf_tags([])
        a["KS"] = np.zeros(0, dtype=np.int64)
        a["KO"] = np.zeros(0, dtype=np.int64)
        a["V"] = np.zeros((self.vcap, 6), dtype=np.int64)
        a["v_irank"] = np.zeros((self.vcap, self.NIX), dtype=np.int64)
        a["v_col"] = np.zeros((self.vcap, self.C), dtype=np.float64)
        a["v_colv"] = np.zeros((self.vcap, self.C), dtype=np.bool_)
        self._records("V", self.vcap * self.R)
        a["w_k"] = np.full(self.RW, K.NEG_INF, dtype=np.int64)
        self._records("W", self.RW)
        self._records("X", 1)
        self._records("A", self.R if self.mode == "emit" else 0)
        a["REC"] = np.zeros((self.rcap, 7), dtype=np.int64)
        a["r_bkey"] = np.zeros((self.rcap, self.R if self.mode != "slide" else 1), dtype=np.int64)
        self._records("R", self.rcap * self.RX)
        a["o_k"] = np.zeros(self.ocap, dtype=np.int64)
        self._records("O", self.ocap)
        self._records("last", 1)
        self._scratch()

    # -- layout helpers -----------------------------------------------------------------------

    @property
    def RX(self) -> int:
        return self.RW if self.mode == "slide" else self.R

    @property
    def _idt(self):
        """The dtype of the integer fields: Python integers, int64 limbs, or float64."""
        return object if self.exact else np.float64 if self.floats else np.int64

    def _records(self, name: str, rows: int) -> None:
        idt = self._idt
        fdt = object if self.exact else np.float64
        width = self.FI * (1 if self.exact else self.L)
        I = np.zeros((rows, width), dtype=idt)
        if self.exact:
            I[:] = 0
        F = np.zeros((rows, self.FF), dtype=fdt)
        if self.exact and self.FF:
            F[:] = 0.0
        M = np.empty((rows, self.FM), dtype=np.int64)
        for j, is_min in enumerate(self.mmin):
            M[:, j] = _records.MIN_EMPTY if is_min else _records.MAX_EMPTY
        self.a[name + "I" if name != "last" else "lastI"] = I
        self.a[name + "F" if name != "last" else "lastF"] = F
        self.a[name + "M" if name != "last" else "lastM"] = M

    def clear_records(self, name: str) -> None:
        """Reset the records ``name`` in place (the kernel's argument tuple stays valid)."""
        I, F, M = (self.a[k] for k in self._triple(name))
        I[:] = 0
        F[:] = 0.0
        for j, is_min in enumerate(self.mmin):
            M[:, j] = _records.MIN_EMPTY if is_min else _records.MAX_EMPTY

    def copy(self, negM: np.ndarray) -> "PosState":
        """A copy of this state (its own arrays) whose latest negative starts are ``negM``:
        copying a new state's arrays costs a fraction of allocating and filling them anew."""
        new = object.__new__(PosState)
        new.__dict__.update(self.__dict__)
        new.vkind, new.nkind, new.vocab = list(self.vkind), list(self.nkind), list(self.vocab)
        own = self.a
        arrays = [negM.copy() if k == "negM" else own[k].copy() for k in G_NAMES]
        a = _Arrays()
        dict.update(a, zip(G_NAMES, arrays))
        dict.update(a, {k: v.copy() for k, v in own.items() if k not in a})  # the index keys
        a.cached = _argument_record(arrays)  # the kernel's argument record, built here at once
        new.a = a
        new.X = PosScratch(*(x.copy() for x in self.X))
        return new

    def _triple(self, name: str) -> tuple[str, str, str]:
        if name == "last":
            return "lastI", "lastF", "lastM"
        return name + "I", name + "F", name + "M"

    def _scratch(self) -> None:
        rows = self.R + self.RW + 2
        idt = self._idt
        width = self.FI * (1 if self.exact else self.L)
        tI = np.zeros((rows, width), dtype=idt)
        if self.exact:
            tI[:] = 0
        tF = np.zeros((rows, self.FF), dtype=object if self.exact else np.float64)
        tM = np.zeros((rows, self.FM), dtype=np.int64)
        nder = 0
        self.X = PosScratch(tI, tF, tM, np.zeros(self.L + 2, dtype=object if self.exact else np.int64),
                            np.zeros(64, dtype=np.float64),
                            np.zeros(64, dtype=np.int64), np.zeros(self.R, dtype=np.int64),
                            np.zeros(max(nder, 64), dtype=np.int64))

    def scratch(self, n_derivations: int) -> PosScratch:
        if self.X.thr.shape[0] < n_derivations:
            self.X = self.X._replace(thr=np.zeros(n_derivations, dtype=np.int64))
        return self.X

    def args(self) -> PosArrays:
        a = self.a
        if a.cached is None:
            a.cached = _argument_record([a[n] for n in G_NAMES])
        return a.cached[0]

    @property
    def idx_n(self) -> np.ndarray:
        return self.a["IDX"][:, K.IX_N]

    @property
    def sc(self) -> np.void:
        """The graph's scalars, a record (:data:`._kernels.STATE_SCALARS`) viewing its int64 array."""
        return self.a["sc"].view(K.STATE_SCALARS)[0]

    # -- growth -------------------------------------------------------------------------------

    def _resize_rows(self, name: str, per: int, old_n: int, new_n: int) -> None:
        for key in self._triple(name):
            arr = self.a[key]
            width = arr.shape[1]
            new = np.zeros((new_n * per, width), dtype=arr.dtype)
            if arr.dtype == object:
                new[:] = 0 if key.endswith("I") else 0.0
            if key.endswith("M"):
                for j, is_min in enumerate(self.mmin):
                    new[:, j] = _records.MIN_EMPTY if is_min else _records.MAX_EMPTY
            new[: old_n * per] = arr[: old_n * per]
            self.a[key] = new

    def grow_vertices(self) -> None:
        old, new = self.vcap, self.vcap * 2
        for n in ("V", "v_irank", "v_col", "v_colv"):
            arr = self.a[n]
            self.a[n] = np.concatenate([arr, np.zeros((old, arr.shape[1]), dtype=arr.dtype)])
        self._resize_rows("V", self.R, old, new)
        self.vcap = new

    def grow_records(self) -> None:
        old, new = self.rcap, self.rcap * 2
        for n in ("REC", "r_bkey"):
            arr = self.a[n]
            self.a[n] = np.concatenate([arr, np.zeros((old, arr.shape[1]), dtype=np.int64)])
        self._resize_rows("R", self.RX, old, new)
        self.rcap = new

    def grow_outputs(self) -> None:
        old, new = self.ocap, self.ocap * 2
        self.a["o_k"] = np.concatenate([self.a["o_k"], np.zeros(old, dtype=np.int64)])
        self._resize_rows("O", 1, old, new)
        self.ocap = new

    def grow_ring(self) -> None:
        """Double the number of start buckets (slots are remapped by sequence number)."""
        R, R2 = self.R, self.R * 2
        sc = self.sc
        # Index nodes and leaves forget expired buckets lazily (index.clean): a slot may still
        # hold an expired bucket's value, harmless while that bucket and the live one sharing
        # its slot are R apart, wrong once the slot moves with the live bucket. Forget first.
        kern = self._kernels_index()
        for name, tags in (("N", "NT"), ("L", "LT")):
            I, F, M = (self.a[k] for k in self._triple(name))
            T = self.a[tags]
            for node in np.flatnonzero((T[:, 0] < sc["blo"]) & (T[:, 0] <= T[:, 1])):
                kern.clean(I, F, M, T, int(node), int(node) * R, int(sc["blo"]), R, self.mmin)
        alive = list(range(int(sc["blo"]), int(sc["bhi"]) + 1))
        old_slots = np.array([s & (R - 1) for s in alive], dtype=np.int64)
        new_slots = np.array([s & (R2 - 1) for s in alive], dtype=np.int64)
        B = np.zeros((R2, 5), dtype=np.int64)
        B[:, K.B_SEQ] = -1
        B[new_slots] = self.a["B"][old_slots]
        self.a["B"] = B

        def remap(name: str, entities: int) -> None:
            for key in self._triple(name):
                arr = self.a[key]
                width = arr.shape[1]
                v = arr.reshape(entities, R, width)
                new = np.zeros((entities, R2, width), dtype=arr.dtype)
                if arr.dtype == object:
                    new[:] = 0 if key.endswith("I") else 0.0
                if key.endswith("M"):
                    for j, is_min in enumerate(self.mmin):
                        new[:, :, j] = _records.MIN_EMPTY if is_min else _records.MAX_EMPTY
                new[:, new_slots, :] = v[:, old_slots, :]
                self.a[key] = new.reshape(entities * R2, width)

        remap("T", self.S)
        remap("V", self.vcap)
        nodes = int(sum(self.idx_n)) + self.NIX
        remap("N", nodes)
        remap("L", int(sum(self.idx_n)))
        if self.mode == "emit":
            remap("A", 1)
        if self.mode != "slide":
            # records are indexed by bucket order, not slot: pad
            for key in self._triple("R"):
                arr = self.a[key]
                width = arr.shape[1]
                v = arr.reshape(self.rcap, R, width)
                new = np.zeros((self.rcap, R2, width), dtype=arr.dtype)
                if arr.dtype == object:
                    new[:] = 0 if key.endswith("I") else 0.0
                new[:, :R, :] = v
                self.a[key] = new.reshape(self.rcap * R2, width)
            bk = self.a["r_bkey"]
            self.a["r_bkey"] = np.concatenate([bk, np.zeros((self.rcap, R), dtype=np.int64)], axis=1)
        self.R = R2
        self._scratch()

    def widen(self) -> None:
        """More limbs for every integer field, values unchanged: one, or half as many again
        once there are several (counts that keep growing need few reallocations)."""
        extra = max(1, self.L // 2)
        for name in _RECORDS:
            key = self._triple(name)[0]
            self.a[key] = widen(self.a[key], self.FI, self.L, extra)
        self.L += extra
        self._scratch()

    def make_exact(self) -> None:
        """Switch to Python integers (the twin kernels): a value needs more than int64 limbs
        can multiply (an integer attribute beyond 2**31 in a SUM). Float records need not."""
        if self.exact or self.floats:
            return
        from fractions import Fraction

        for name in _RECORDS:
            ki, kf, _ = self._triple(name)
            self.a[ki] = to_exact(self.a[ki], self.FI, self.L)
            f = self.a[kf].astype(object)
            for idx in np.ndindex(f.shape):
                f[idx] = Fraction(float(f[idx]))
            self.a[kf] = f
        self.exact = True
        self.L = 1
        self._scratch()

    # -- ordered indexes: keys get slots that never shift (:mod:`.index`) ---------------------

    def _kernels_index(self):
        return _twin(_index.__name__) if (self.exact or self.pure) else _index

    def slot_keys(self, ix: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Index ``ix``'s slot keys and occupancy (views) and its number of slots."""
        IDX = self.a["IDX"]
        lo, C = int(IDX[ix, K.IX_LOFF]), int(IDX[ix, K.IX_N])
        return self.a["KS"][lo: lo + C], self.a["KO"][lo: lo + C], C

    def _pending(self) -> tuple[int, int, np.ndarray]:
        """The vertices not yet committed (they hold slots), and scratch for their keys."""
        sc = self.sc
        p0, p1 = int(sc["pcommit"]), int(sc["nv"])
        return p0, p1, np.zeros(max(1, p1 - p0), dtype=np.int64)

    def insert_keys(self, ix: int, keys: np.ndarray) -> None:
        """Give every key of ``keys`` (sorted, distinct codes) a slot in index ``ix``: one by
        one in free slots (:func:`.index.insert_keys`), or, when the batch brings many keys
        for the index's size (at least 1/BULK of its slots), all at once by re-spreading the
        index with them (:func:`.index.respread`, one pass over the slots)."""
        if len(keys) and len(keys) * BULK >= int(self.a["IDX"][ix, K.IX_N]):
            self._grow_index(ix, self._live_keys(ix, keys) + len(keys), keys)  # places them all
            return
        kern = self._kernels_index()
        done = 0
        while done < len(keys):
            IDX = self.a["IDX"]
            C = int(IDX[ix, K.IX_N])
            p0, p1, pkeys = self._pending()
            a = self.a
            sc = self.sc
            if C:
                done = int(kern.insert_keys(
                    a["KS"], a["KO"], a["LI"], a["LF"], a["LM"], a["LT"], a["NI"], a["NF"], a["NM"],
                    a["NT"], int(IDX[ix, K.IX_LOFF]), int(IDX[ix, K.IX_OFF]), C,
                    int(IDX[ix, K.IX_POINT]), self.R, 1 if self.exact else self.L, self.mmin,
                    int(sc["blo"]), int(sc["bhi"]), keys, done, a["v_irank"], ix, p0, p1,
                    pkeys, np.empty(C, dtype=np.int64)))
                if done == len(keys):
                    break
            self._grow_index(ix, self._live_keys(ix, keys) + len(keys) - done, keys)

    def _live_keys(self, ix: int, keys: np.ndarray) -> int:
        """Keys of index ``ix`` still in use (those of ``keys`` present included)."""
        a = self.a
        IDX = a["IDX"]
        C = int(IDX[ix, K.IX_N])
        if C == 0:
            return 0
        p0, p1, _ = self._pending()
        return int(self._kernels_index().live_count(
            a["KS"], a["KO"], a["LI"], a["LF"], a["LM"], a["LT"], int(IDX[ix, K.IX_LOFF]), C, self.R,
            self.mmin, int(self.sc["blo"]), a["v_irank"], ix, p0, p1, keys))

    def _grow_index(self, ix: int, need: int, keys: np.ndarray) -> None:
        """Re-spread index ``ix`` over ``C`` slots, at most 2/3 full with ``need`` keys."""
        a = self.a
        R = self.R
        IDX = a["IDX"]
        C = max(16, _pow2(-(-3 * need // 2)))
        if C == int(IDX[ix, K.IX_N]):
            self._respread_in_place(ix, keys)
            return
        old_idx = IDX.copy()
        sizes = [int(x) for x in IDX[:, K.IX_N]]
        sizes[ix] = C
        nleaf = sum(sizes)
        old = {k: a[k] for k in ("LI", "LF", "LM", "LT", "KS", "KO", "NI", "NF", "NM", "NT")}
        self._records("L", nleaf * R)
        self._records("N", (nleaf + self.NIX) * R)
        a["LT"] = leaf_tags(sizes)
        a["NT"] = np.zeros((nleaf + self.NIX, 2), dtype=np.int64)
        a["NT"][:, 1] = -1
        a["KS"] = np.full(nleaf, EMPTY_KEY, dtype=np.int64)
        a["KO"] = np.zeros(nleaf, dtype=np.int64)
        loff, off = 0, 0
        for j in range(self.NIX):
            IDX[j, K.IX_LOFF] = loff
            IDX[j, K.IX_OFF] = off
            IDX[j, K.IX_N] = sizes[j]
            if j != ix:
                ol, oo, n = int(old_idx[j, K.IX_LOFF]), int(old_idx[j, K.IX_OFF]), sizes[j]
                for k in ("LI", "LF", "LM"):
                    a[k][loff * R: (loff + n) * R] = old[k][ol * R: (ol + n) * R]
                for k in ("LT", "KS", "KO"):
                    a[k][loff: loff + n] = old[k][ol: ol + n]
                for k in ("NI", "NF", "NM"):
                    a[k][off * R: (off + n + 1) * R] = old[k][oo * R: (oo + n + 1) * R]
                a["NT"][off: off + n + 1] = old["NT"][oo: oo + n + 1]
            loff += sizes[j]
            off += sizes[j] + 1
        oC = int(old_idx[ix, K.IX_N])
        if oC or len(keys):
            self._respread(ix, old, int(old_idx[ix, K.IX_LOFF]), oC, keys)

    def _respread_in_place(self, ix: int, keys: np.ndarray) -> None:
        """Re-spread index ``ix`` over the slots it has (a bulk merge that needs no more):
        its leaves are copied out and merged back, the other arrays stay. A batch's keys
        merge this way on nearly every batch of a small window, where re-allocating and
        copying every index array took two thirds of a merge."""
        a = self.a
        R = self.R
        IDX = a["IDX"]
        lo, C = int(IDX[ix, K.IX_LOFF]), int(IDX[ix, K.IX_N])
        leaves, rows = slice(lo, lo + C), slice(lo * R, (lo + C) * R)
        old = {k: a[k][leaves].copy() for k in ("KS", "KO", "LT")}
        old.update({k: a[k][rows].copy() for k in ("LI", "LF", "LM")})
        a["KS"][leaves] = EMPTY_KEY
        a["KO"][leaves] = 0
        a["LT"][leaves] = leaf_tags([C])
        a["LI"][rows] = 0
        a["LF"][rows] = 0.0
        for j, is_min in enumerate(self.mmin):
            a["LM"][rows, j] = _records.MIN_EMPTY if is_min else _records.MAX_EMPTY
        self._respread(ix, old, 0, C, keys)

    def _respread(self, ix: int, old: dict, oloff: int, oC: int, keys: np.ndarray) -> None:
        """Merge index ``ix``'s live keys from the leaf arrays ``old`` (its ``oC`` slots from
        ``oloff``) and the new ``keys`` into its slots of the state's arrays (empty), and build
        its tree (:func:`.index.respread`)."""
        a = self.a
        IDX = a["IDX"]
        sc = self.sc
        p0, p1, pkeys = self._pending()
        self._kernels_index().respread(
            old["KS"], old["KO"], old["LI"], old["LF"], old["LM"], old["LT"], oloff, oC, a["KS"],
            a["KO"], a["LI"], a["LF"], a["LM"], a["LT"], int(IDX[ix, K.IX_LOFF]), int(IDX[ix, K.IX_N]),
            a["NI"], a["NF"], a["NM"], a["NT"], int(IDX[ix, K.IX_OFF]), int(IDX[ix, K.IX_POINT]), self.R,
            1 if self.exact else self.L, self.mmin, int(sc["blo"]), int(sc["bhi"]), a["v_irank"],
            ix, p0, p1, pkeys, keys)

    def key_codes(self, ix: int, parts: list, reverse: bool) -> list[np.ndarray]:
        """int64 order codes of index ``ix``'s keys: ``parts`` are (Vec, rows) pairs. Integers
        are their own codes, floats the order codes of :mod:`.numbers` (integers beside them are
        converted, exactly up to 2**53), strings their rank in a vocabulary that grows (the
        stored codes are renumbered, in order, when it does); ``reverse`` flips the order
        (``>`` and ``>=`` become prefixes)."""
        parts = [(v, r) for v, r in parts if len(r)]
        if not parts:
            return []
        vkinds = {v.kind for v, _ in parts}
        if self.vkind[ix] is not None:
            vkinds.add(self.vkind[ix])
        if len(vkinds) > 1:
            a, b = sorted(vkinds)
            raise ConditionTypeError(f"cannot compare {a} with {b} in an edge condition")
        self.vkind[ix] = vkinds.pop()
        if self.vkind[ix] == "string":
            strings = np.unique(np.concatenate([v.values[r].astype(str) for v, r in parts]))
            self._vocabulary(ix, strings, reverse)
            out = [np.searchsorted(self.vocab[ix], v.values[r].astype(str)).astype(np.int64)
                   for v, r in parts]
        else:
            floats = any(v.values.dtype.kind == "f" for v, _ in parts)
            if floats and self.nkind[ix] == "int":
                self._recode_floats(ix, reverse)
            if self.nkind[ix] is None:
                self.nkind[ix] = "float" if floats else "int"
            out = []
            for v, r in parts:
                if self.nkind[ix] == "int":
                    out.append(v.values[r].astype(np.int64))
                elif v.values.dtype.kind == "f":
                    out.append(v.float_codes()[r])
                else:
                    out.append(_float_keys(v.values[r]))
        return [~c if reverse else c for c in out]

    def _vocabulary(self, ix: int, strings: np.ndarray, reverse: bool) -> None:
        old = self.vocab[ix]
        if old is not None and np.isin(strings, old).all():
            return
        new = strings if old is None else np.union1d(old, strings)
        if old is not None:
            ks, ko, C = self.slot_keys(ix)
            used = ks != EMPTY_KEY
            c = ~ks[used] if reverse else ks[used]
            c = np.searchsorted(new, old[c]).astype(np.int64)
            ks[used] = ~c if reverse else c
        self.vocab[ix] = new

    def _recode_floats(self, ix: int, reverse: bool) -> None:
        ks, ko, C = self.slot_keys(ix)
        used = ks != EMPTY_KEY
        c = ~ks[used] if reverse else ks[used]
        c = _float_keys(c)
        ks[used] = ~c if reverse else c
        self.nkind[ix] = "float"

    # -- bookkeeping --------------------------------------------------------------------------

    def empty(self) -> bool:
        """Nothing left that a later event or window could use (the partition can go)."""
        sc = self.sc
        return (sc["nv"] == 0 and sc["blo"] > sc["bhi"] and sc["wlo"] > sc["whi"]
                and sc["nrec"] - sc["rstart"] == 0 and sc["outn"] == 0)

    def starts_before(self, limit: int) -> bool:
        """Every start bucket (the start of every trend the graph holds) is earlier than
        ``limit``, or there is none."""
        sc, B = self.sc, self.a["B"]
        hi = int(sc["bhi"])
        return int(sc["blo"]) > hi or int(B[hi & (B.shape[0] - 1), K.B_KEY]) < limit

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("X", None)
        return d

    def __setstate__(self, d):
        d.setdefault("floats", False)
        if "a" in d:
            _tags_by_leaf(d["a"])
        self.__dict__.update(d)
        self._scratch()

    def shell(self) -> dict:
        """What pickles of this state besides its arrays (:meth:`restored` takes both)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("a", "X")}

    @classmethod
    def restored(cls, shell: dict, arrays: dict) -> "PosState":
        st = object.__new__(cls)
        st.__setstate__(dict(shell, a=_arrays_of(arrays)))
        return st


def grow(st: PosState, status: int) -> None:
    """Grow (or widen) graph ``st`` as the kernel's ``status`` asks."""
    if status == K.WIDEN:
        st.widen()
    elif status == K.GROW_V:
        st.grow_vertices()
    elif status == K.GROW_R:
        st.grow_ring()
    elif status == K.GROW_REC:
        st.grow_records()
    elif status == K.OUT_FULL:
        st.grow_outputs()


@contextmanager
def gc_paused():
    """No cyclic garbage collection inside: packing or unpacking the state of many partitions
    makes hundreds of thousands of small objects, none of them garbage, and the collector,
    run every few hundred allocations, would walk a heap that large each time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def pack_arrays(dicts: list[dict]) -> dict:
    """The arrays of many states (dicts of the same names) as one flat array per name and a
    table of shapes: pickled, a state of many partitions is a few large arrays instead of some
    fifty small ones per partition, whose pickling per array took most of a snapshot's time.
    Object arrays (exact numbers as Python integers), and names whose dtypes or ranks differ
    between states, stay lists of arrays."""
    out: dict = {}
    if not dicts:
        return out
    names = list(dicts[0])
    if any(d.keys() != dicts[0].keys() for d in dicts):  # (names differ: nothing packed)
        return {"": dicts}
    for name in names:
        arrs = [d[name] for d in dicts]
        dt, nd = arrs[0].dtype, arrs[0].ndim
        if dt.hasobject or nd == 0 or any(a.dtype != dt or a.ndim != nd for a in arrs):
            out[name] = arrs
            continue
        shapes = np.array([a.shape for a in arrs], dtype=np.int64).reshape(len(arrs), nd)
        out[name] = (packed_zeros(np.concatenate([a.reshape(-1) for a in arrs])), shapes)
    return out


def packed_zeros(flat: np.ndarray):
    """``flat``, or where most of it is zero (buffers sized for growth, most of their rows
    unused) its length, the places of its nonzero values and those values."""
    nz = np.flatnonzero(flat)
    if 4 * len(nz) > len(flat):
        return flat
    return len(flat), nz, flat[nz]


def unpacked_zeros(v, dtype) -> np.ndarray:
    """The array :func:`packed_zeros` packed, writeable."""
    if isinstance(v, np.ndarray):
        return v if v.flags.writeable else v.copy()
    n, nz, values = v
    flat = np.zeros(n, dtype=dtype)  # pages of zeros are mapped as the kernels write to them
    flat[nz] = values
    return flat


def unpack_arrays(packed: dict, n: int) -> list[dict]:
    """The ``n`` dicts of arrays :func:`pack_arrays` packed; each array a view of its name's
    flat array (one copy per name at most, where the unpickled buffer is read-only)."""
    if "" in packed:
        return packed[""]
    out: list[dict] = [{} for _ in range(n)]
    for name, v in packed.items():
        if isinstance(v, list):
            for d, a in zip(out, v):
                d[name] = a
            continue
        flat, shapes = v
        flat = unpacked_zeros(flat, flat.dtype if isinstance(flat, np.ndarray) else flat[2].dtype)
        sizes = shapes.prod(axis=1)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        for d, a, b, shape in zip(out, bounds, bounds[1:], map(tuple, shapes.tolist())):
            d[name] = flat[a:b].reshape(shape)
    return out


class NegState:
    """A negative sub-pattern's graph in one partition."""

    def __init__(self, n_cols: int, G: int):
        self.cap = 16
        self.ocap = 64
        sc = np.zeros(1, dtype=K.NEG_STATE_SCALARS)
        sc["now"] = K.NEG_INF
        sc["maxls"] = K.NEG_INF
        self.a = {
            "sc": sc.view(np.int64),
            "negM": np.full(G, K.NEG_INF, dtype=np.int64),
            "V3": np.zeros((self.cap, 3), dtype=np.int64),
            "v_col": np.zeros((self.cap, n_cols), dtype=np.float64),
            "v_colv": np.zeros((self.cap, n_cols), dtype=np.bool_),
            "o_t": np.zeros(self.ocap, dtype=np.int64),
            "o_ls": np.zeros(self.ocap, dtype=np.int64),
        }
        self.X = _neg_scratch()

    def args(self) -> NegArrays:
        return NegArrays(*(self.a[n] for n in NegArrays._fields))

    def grow_vertices(self) -> None:
        for n in ("V3", "v_col", "v_colv"):
            arr = self.a[n]
            pad = np.zeros((self.cap,) + arr.shape[1:], dtype=arr.dtype)
            self.a[n] = np.concatenate([arr, pad])
        self.cap *= 2

    def grow_outputs(self) -> None:
        for n in ("o_t", "o_ls"):
            self.a[n] = np.concatenate([self.a[n], np.zeros(self.ocap, dtype=np.int64)])
        self.ocap *= 2

    def scratch(self, n_derivations: int) -> NegScratch:
        if self.X.thr.shape[0] < n_derivations:
            self.X = self.X._replace(thr=np.zeros(n_derivations, dtype=np.int64))
        return self.X

    def drain(self) -> tuple[np.ndarray, np.ndarray]:
        sc = self.a["sc"].view(K.NEG_STATE_SCALARS)[0]
        n = int(sc["outn"])
        out = self.a["o_t"][:n].copy(), self.a["o_ls"][:n].copy()
        sc["outn"] = 0
        return out

    def empty(self) -> bool:
        return int(self.a["sc"].view(K.NEG_STATE_SCALARS)[0]["nv"]) == 0

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("X", None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self.X = _neg_scratch()


def _neg_scratch() -> NegScratch:
    return NegScratch(np.zeros(64, dtype=np.float64), np.zeros(64, dtype=np.int64), np.zeros(64, dtype=np.int64))


# Reference: GRETA (PVLDB 2017) Section 7 "GRETA Runtime Data Structures"
# (time panes, vertex trees, window hash tables, results hash table) and Theorem 4 (O(nk) space).
