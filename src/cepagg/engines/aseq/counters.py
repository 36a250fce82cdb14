"""Prefix counters laid out for the kernels: PreTree nodes, components, event classes, state.

A *unit* is what one set of prefix counters serves: one query, or several that share a START
(prefix sharing, paper §4.1). Its nodes form a PreTree: node 0 is the START, every other node
extends its parent by one event type; a query reads its result at its last node. Two queries
share a node when they agree on everything that node's counter depends on — the path to it,
the type and local conditions of each event, and the negations of the gap that *follows* it
(the Recounting Rule resets a node when an event of that gap arrives, so a node followed by
``!C`` in one query and by nothing in another cannot be shared).

*Components* are what is counted per node: comp 0 of the integer family is the number of
prefix matches; further ones are COUNT(E), SUM and its non-null count (for AVG and null
results), MIN and MAX, in the integer or floating family by the attribute's type.

Events are encoded per batch into *classes*: the set of roles (feeds) an event can take; each
class lists its actions on nodes (extend, reset the gap after, leading negation).

This module also chooses the implementation (:mod:`..kernels`): :data:`KERNELS` is the compiled
kernel module (its twin with ``CEPAGG_TWINS=1``), :func:`wide_kernels` the same compiled for
128-bit integers (:mod:`.wide`) once a partition outgrows int64, :data:`TWIN` the same source
run as Python (exact, on object arrays).

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §4.1 (PreTree, Example 7), §5 (aggregates).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import kernels
from ..keys import DictKeys, IntIndex, IntKeys, take_keys
from . import _algebra, _kernels, windows
from .layout import AT, counters, new_counters, segment_sizes, stacked_counters
from .plan import Feed, SeqPlan
from .wide import Wide, fits_int64, limbs_of, to_object

LIN, MAX, MIN = _algebra.LIN, _algebra.MAX, _algebra.MIN


KERNELS = kernels.flavour(_kernels.__name__, False)
TWIN = kernels.twin(_kernels.__name__)
KERNELS_ARE_TWINS = KERNELS is TWIN


def wide_kernels():
    """The kernels compiled for 128-bit integers (:mod:`.wide`), loaded (and compiled, once per
    install) when a partition first outgrows int64: a query whose counts fit never loads them."""
    return kernels.wide(_kernels.__name__)
TWIN_ALGEBRA = kernels.twin(_algebra.__name__)
ALGEBRA = _algebra
WINDOWS = windows


# ----------------------------------------------------------------------------------------------
# Components


@dataclass(frozen=True)
class Comp:
    """One counted quantity. ``source``: ("one",) 1 per event, ("attr", a) the value of a,
    ("nonnull", a) 1 when a is not null; ``nodes``: the nodes whose events contribute."""

    kind: int  # LIN, MAX, MIN
    source: tuple
    nodes: frozenset[int]


@dataclass
class AggSlot:
    """Where an aggregate of a query reads its cells: (family, comp) of value and count."""

    func: str
    value: tuple[str, int] | None  # ("I"|"F", index); None for COUNT(*)
    nonnull: tuple[str, int] | None  # for SUM/AVG


@dataclass
class Output:
    """A query's result node in a unit."""

    index: int  # position of the query in the workload
    plan: SeqPlan
    node: int
    gated: bool
    aggs: list[AggSlot] = field(default_factory=list)


@dataclass
class Unit:
    """Prefix counters shared by queries with one START (a PreTree, a chain for one query)."""

    plans: list[SeqPlan]
    parent: list[int]
    node_feed: list[Feed]
    node_reset: list[tuple[Feed, ...]]
    lead: tuple[Feed, ...]
    outputs: list[Output]
    comps: list[Comp]
    within: int | None
    slide: int | None
    mode: str
    gated_total: bool

    @property
    def n_nodes(self) -> int:
        return len(self.parent)

    def describe(self) -> list[str]:
        """The PreTree, one line per node (for ``explain``)."""
        lines = []
        depth = [0] * self.n_nodes
        for j in range(self.n_nodes):
            depth[j] = 0 if self.parent[j] < 0 else depth[self.parent[j]] + 1
            reads = [f"q{o.index}" for o in self.outputs if o.node == j]
            resets = "".join(f" !{f.text()}" for f in self.node_reset[j])
            lines.append("  " * depth[j] + f"[{j}] {self.node_feed[j].text()}{resets}"
                         + (f"  -> {', '.join(reads)}" if reads else ""))
        return lines


def unit_key(plan: SeqPlan) -> tuple:
    """Queries with equal keys can share one unit (same START, routing, window and mode)."""
    q = plan.query
    first_gap = plan.gaps[1] if plan.length > 1 else plan.trailing
    return (
        plan.partition_attrs, tuple(f.text for f in q.stream_filters), plan.within, plan.slide, plan.mode,
        tuple(sorted(f.key for f in plan.leading)), plan.feeds[0].key,
        tuple(sorted(f.key for f in first_gap)),
        id(plan) if plan.leading and plan.mode == "total" and plan.length == 1 else None,  # gated START
    )


def build_unit(plans: list[SeqPlan], indices: list[int]) -> Unit:
    """The PreTree of ``plans`` (all with one :func:`unit_key`), outputs tagged by ``indices``."""
    p0 = plans[0]
    parent: list[int] = []
    node_feed: list[Feed] = []
    node_reset: list[tuple[Feed, ...]] = []
    keys: dict[tuple, int] = {}
    outputs: list[Output] = []
    gated_total = bool(p0.leading) and p0.mode == "total"
    for plan, qi in zip(plans, indices):
        prev = -1
        path = []
        for i, feed in enumerate(plan.feeds):
            gap_after = plan.gaps[i + 1]
            last = i == plan.length - 1
            gated = gated_total and last
            key = (prev, feed.key, tuple(sorted(f.key for f in gap_after)), ("gate", qi) if gated else None)
            if key not in keys:
                keys[key] = len(parent)
                parent.append(prev)
                node_feed.append(feed)
                node_reset.append(tuple(gap_after))
            prev = keys[key]
            path.append(prev)
        outputs.append(Output(qi, plan, prev, gated_total))
    unit = Unit(plans, parent, node_feed, node_reset, p0.leading, outputs, [], p0.within, p0.slide,
                p0.mode, gated_total)
    _comps(unit)
    return unit


def _comps(unit: Unit) -> None:
    comps: list[Comp] = [Comp(LIN, ("count",), frozenset())]
    index: dict[Comp, int] = {comps[0]: 0}

    def add(c: Comp) -> int:
        if c not in index:
            index[c] = len(comps)
            comps.append(c)
        return index[c]

    for out in unit.outputs:
        plan = out.plan
        path = _path(unit, out.node)
        for agg in plan.aggregates:
            if agg.is_count_star:
                out.aggs.append(AggSlot("COUNT", None, None))
                continue
            nodes = frozenset(path[i] for i in plan.nodes_of(agg.vars))
            if agg.func == "COUNT":
                out.aggs.append(AggSlot("COUNT", ("C", add(Comp(LIN, ("one",), nodes))), None))
            elif agg.func in ("SUM", "AVG"):
                v = add(Comp(LIN, ("attr", agg.attr), nodes))
                n = add(Comp(LIN, ("nonnull", agg.attr), nodes))
                out.aggs.append(AggSlot(agg.func, ("C", v), ("C", n)))
            else:
                kind = MAX if agg.func == "MAX" else MIN
                out.aggs.append(AggSlot(agg.func, ("C", add(Comp(kind, ("attr", agg.attr), nodes))), None))
    unit.comps = comps


def _path(unit: Unit, node: int) -> list[int]:
    path = []
    while node >= 0:
        path.append(node)
        node = unit.parent[node]
    return path[::-1]


# ----------------------------------------------------------------------------------------------
# Families: which components are integers and which floats (known once column types are)


@dataclass
class Families:
    """Component ``i`` of the unit lives at ``where[i] = (family, index)``."""

    where: list[tuple[str, int]]
    kindI: np.ndarray
    kindF: np.ndarray
    maskI: np.ndarray
    maskF: np.ndarray
    srcI: list[tuple]
    srcF: list[tuple]
    python_values: bool  # some extreme is over non-numbers: run on the exact twin only


def families(unit: Unit, kinds: dict[str, str]) -> Families:
    """Place each component in the integer or float family by its attribute's kind."""
    where = []
    kI, kF, mI, mF, sI, sF = [], [], [], [], [], []
    python_values = False
    N = unit.n_nodes
    for c in unit.comps:
        src = c.source
        fam = "I"
        if src[0] == "attr":
            k = kinds.get(src[1], "int") if src[1] != "ts" else "int"
            if k == "float":
                fam = "F"
            elif k not in ("int", "bool", "null"):
                if c.kind == LIN:
                    from ...lang.expr import ConditionTypeError

                    raise ConditionTypeError(f"cannot add {k} values of '{src[1]}'")
                python_values = True
        mask = np.zeros(N, dtype=np.uint8)
        for j in c.nodes:
            mask[j] = 1
        if fam == "I":
            where.append(("I", len(kI)))
            kI.append(c.kind)
            mI.append(mask)
            sI.append(src)
        else:
            where.append(("F", len(kF)))
            kF.append(c.kind)
            mF.append(mask)
            sF.append(src)
    return Families(where, np.array(kI, np.int64), np.array(kF, np.int64),
                    np.array(mI, np.uint8).reshape(len(kI), N), np.array(mF, np.uint8).reshape(len(kF), N),
                    sI, sF, python_values)


# ----------------------------------------------------------------------------------------------
# Per-partition state


Segment = windows.Segment

STATE_FIELDS = ("aggI0", "aggF0", "bI0", "bF0", "bm0", "fI0", "fF0", "fm0",
                "aggI1", "aggF1", "bI1", "bF1", "bm1", "fI1", "fF1", "fm1",
                "ctr", "pk", "pVI", "pVF", "pres", "totI", "totF", "lastI", "lastF")
#: the fields of the integer family (counts, COUNT(E), SUM and MIN/MAX of integers): int64,
#: two-limb (wide) or Python ints as the partition's numbers require
INT_FIELDS = ("aggI0", "bI0", "fI0", "aggI1", "bI1", "fI1", "pk", "pVI", "totI", "lastI")


class PartState:
    """The counters of one unit in one partition: two window segments, the pending group,
    totals and last reported values. Picklable (numpy arrays); ``exact`` when its integers are
    Python ints (object arrays) after an int64 overflow; with ``floats`` (float mode) the
    integer family is float64 instead."""

    nosums = False  # (states pickled before the attribute existed)
    #: the integer family as 128-bit integers (:mod:`.wide`: int64 arrays with a last axis of
    #: two limbs) after an int64 overflow, run by the wide kernels (:func:`wide_kernels`)
    wide = False

    def __init__(self, N: int, CI: int, CF: int, O: int, windowed: bool, use_k: bool, fam: Families,
                 exact: bool = False, floats: bool = False):
        self.exact = exact
        self.nosums = False  # window sums left out (WITHIN alone, after they outgrew int64)
        self.N, self.CI, self.CF, self.O = N, CI, CF, O
        W = N + 1 if windowed else 1
        self.W = W
        it = object if exact else np.float64 if floats else np.int64
        for s, on in ((0, True), (1, use_k)):
            cap = 4 if (windowed and on) else 0
            setattr(self, f"aggI{s}", np.zeros((CI, N, W), it))
            setattr(self, f"aggF{s}", np.zeros((CF, N, W), np.float64))
            setattr(self, f"bI{s}", np.zeros((cap, CI, N, W), it))
            setattr(self, f"bF{s}", np.zeros((cap, CF, N, W), np.float64))
            setattr(self, f"bm{s}", np.zeros((cap, 2), np.int64))
            setattr(self, f"fI{s}", np.zeros((cap, 2, CI, N), it))
            setattr(self, f"fF{s}", np.zeros((cap, 2, CF, N), np.float64))
            setattr(self, f"fm{s}", np.zeros((cap, 2), np.int64))
            alg = TWIN_ALGEBRA if exact else _algebra
            if windowed:
                alg.identity(getattr(self, f"aggI{s}"), getattr(self, f"aggF{s}"), fam.kindI, fam.kindF)
            else:
                for j in range(N):
                    alg.zero_row(getattr(self, f"aggI{s}"), getattr(self, f"aggF{s}"), fam.kindI, fam.kindF, j, 0)
        self.ctr = new_counters()  # the kernels' counters (.layout.COUNTERS)
        self.pk = np.zeros(N, it)
        self.pVI = np.zeros((CI, N), it)
        self.pVF = np.zeros((CF, N), np.float64)
        self.pres = np.zeros(N, np.uint8)
        (TWIN if exact else _kernels).reset_pending(self.pk, self.pVI, self.pVF, self.pres, counters(self.ctr, exact),
                                                    fam.kindI, fam.kindF)
        self.totI = np.zeros((O, CI), it)
        self.totF = np.zeros((O, CF), np.float64)
        self.lastI = np.zeros((O, CI), it)
        self.lastF = np.zeros((O, CF), np.float64)
        empty_cells(self.totI, self.totF, fam)
        empty_cells(self.lastI, self.lastF, fam)
        self.last_final: dict[int, tuple] = {}  # EMIT ON CHANGE: last row per output (finalised)

    def copy(self) -> "PartState":
        """An independent copy (a new partition starts as a copy of a fresh one: cheaper than
        building its 25 arrays anew, which showed with 10^4 keys per micro-batch)."""
        p = PartState.__new__(PartState)
        p.__dict__.update({k: v.copy() if isinstance(v, (np.ndarray, dict)) else v for k, v in vars(self).items()})
        return p

    # -- segments ------------------------------------------------------------------------------

    def seg(self, s: int) -> "Segment":
        """Segment ``s`` as the kernels take it (a wide partition's integers as :class:`.wide.Wide`)."""
        if self.wide:
            return Segment(*(Wide(a) if f"{n}{s}" in INT_FIELDS else a
                             for n, a in ((n, getattr(self, f"{n}{s}")) for n in Segment._fields)))
        return Segment(*(getattr(self, f"{n}{s}") for n in Segment._fields))

    def ints(self) -> tuple:
        """``pk``, ``pVI``, ``totI``, ``lastI`` as the kernels take them."""
        if self.wide:
            return Wide(self.pk), Wide(self.pVI), Wide(self.totI), Wide(self.lastI)
        return self.pk, self.pVI, self.totI, self.lastI

    def items(self, s: int) -> int:
        back, front = segment_sizes(self.ctr, s)
        return back + front

    def empty(self) -> bool:
        """Nothing in the window (without a window the counts never leave: never empty)."""
        return self.W > 1 and self.items(0) == 0 and self.items(1) == 0 and not self.ctr[AT["pending"]]

    def reserve(self, s: int, extra: int) -> None:
        """Make room for ``extra`` more items in segment ``s`` (front and back alike)."""
        cap = getattr(self, f"bm{s}").shape[0]
        need = self.items(s) + extra
        if need <= cap and not (cap > 64 and need * 4 < cap):
            return
        new = max(4, 2 * need)
        for n in ("bI", "bF", "bm", "fI", "fF", "fm"):
            old = getattr(self, f"{n}{s}")
            arr = np.zeros((new,) + old.shape[1:], old.dtype)
            keep = segment_sizes(self.ctr, s)[0 if n[0] == "b" else 1]
            arr[:keep] = old[:keep]
            setattr(self, f"{n}{s}", arr)

    def to_wide(self) -> None:
        """128-bit integers from now on (after an int64 overflow): each int64 of the integer
        family becomes two limbs, the arrays keep their shapes otherwise."""
        if self.wide or self.exact:
            return
        for n in INT_FIELDS:
            setattr(self, n, limbs_of(getattr(self, n)))
        self.wide = True

    def to_exact(self) -> None:
        """Python integers from now on (after an overflow of int64, or of 128 bits)."""
        if self.exact:
            return
        if self.wide:
            for n in INT_FIELDS:
                setattr(self, n, to_object(getattr(self, n)))
            self.wide = False
            self.exact = True
            return
        for n in STATE_FIELDS:
            a = getattr(self, n)
            if a.dtype == np.int64 and n not in ("ctr", "bm0", "bm1", "fm0", "fm1"):
                setattr(self, n, _to_object(a))
        self.exact = True

    def drop_sums(self, fam: Families) -> None:
        """Leave the window sums out from now on (:func:`.windows.push`): the aggregates'
        integer affine columns become zero and stay so."""
        for s in (0, 1):
            agg = getattr(self, f"aggI{s}")
            for c, k in enumerate(fam.kindI):
                if k == LIN:
                    agg[c, :, self.W - 1] = 0
        self.nosums = True

    def try_int64(self, fam: Families) -> None:
        """Back to int64 once every integer is small again (windows forget old counts)."""
        if self.wide:  # (segment items past their counts are never read: not checked)
            (b0, f0), (b1, f1) = segment_sizes(self.ctr, 0), segment_sizes(self.ctr, 1)
            live = {"bI0": b0, "fI0": f0, "bI1": b1, "fI1": f1}
            if all(fits_int64(getattr(self, n)[:live[n]] if n in live else getattr(self, n)) for n in INT_FIELDS):
                for n in INT_FIELDS:
                    setattr(self, n, np.ascontiguousarray(getattr(self, n)[..., 0]))
                self.wide = False
            return
        if not self.exact or fam.python_values:
            return
        arrays = {n: getattr(self, n) for n in STATE_FIELDS if getattr(self, n).dtype == object}
        for a in arrays.values():
            for v in a.flat:
                if abs(v) >= 2**61:
                    return
        for n, a in arrays.items():
            setattr(self, n, a.astype(np.int64))
        self.exact = False


def pack_parts(parts: dict) -> tuple:
    """Partition states as a few large arrays, for pickling.

    Pickled one by one, 10^4 partitions are 2.5 * 10^5 small arrays, each with its own header:
    0.75 s per streaming micro-batch of 10^4 keys. Partitions with the same array shapes (most
    of them) are stacked field by field instead; exact ones (object arrays) go as they are.
    """
    groups: dict[tuple, list] = {}
    exact = {}
    for key, p in parts.items():
        if p.exact:
            exact[key] = p
            continue
        layout = tuple(getattr(p, n).shape for n in STATE_FIELDS)
        groups.setdefault(layout, []).append((key, p))
    stacked = []
    for members in groups.values():
        fields = {n: np.stack([getattr(p, n) for _, p in members]) for n in STATE_FIELDS}
        others = [(key, {k: v for k, v in vars(p).items() if k not in fields}) for key, p in members]
        stacked.append((fields, others))
    return list(parts), stacked, exact


def unpack_parts(packed: tuple) -> dict:
    """The partition states :func:`pack_parts` packed, in their order; each array is a view of
    its stacked field (the kernels update it in place; a growing one gets its own array)."""
    order, stacked, exact = packed
    found = dict(exact)
    for fields, others in stacked:
        for i, (key, attrs) in enumerate(others):
            p = PartState.__new__(PartState)
            p.__dict__.update(attrs)
            for n, a in fields.items():
                setattr(p, n, a[i])
            found[key] = p
    return {key: found[key] for key in order}


def _to_object(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape, object)
    flat = out.reshape(-1) if out.size else out
    if a.size:
        flat[:] = [int(v) for v in a.reshape(-1)]
    return out


def empty_cells(XI: np.ndarray, XF: np.ndarray, fam: Families) -> None:
    """Rows of an (outputs, comps) table set to the empty aggregate."""
    for c, k in enumerate(fam.kindI):
        XI[:, c] = 0 if k == LIN else (_algebra.I_NEG if k == MAX else _algebra.I_POS)
    for c, k in enumerate(fam.kindF):
        XF[:, c] = 0.0 if k == LIN else (-np.inf if k == MAX else np.inf)


# Reference: A-Seq (SIGMOD 2014) §4.1 (PreTree, Fig. 9, Example 7; queries of one tree share the
# START type), §5 (aggregates).


#: the fields a stacked partition is reset to when its slot is freed (the segments' items are
#: read only below their counts in ``ctr``)
TEMPLATE_FIELDS = ("aggI0", "aggF0", "aggI1", "aggF1", "ctr", "pk", "pVI", "pVF", "pres", "totI", "totF",
                   "lastI", "lastF")


#: segment items a stacked partition holds (STARTs in its window) at first, and at most: a
#: partition with more goes on alone. The items are most of a slot's bytes, and a stack of 10^5
#: slots is grown (copied) and first touched as it fills: with 10^6 keys a partition rarely holds
#: more than one START, with 10^4 (one event per key and window) a few percent hold three, and a
#: stack where many partitions outgrow their slots widens them (:meth:`PartPool.adapt`).
POOL_CAP, POOL_MAX_CAP = 2, 4


#: the fields of segment items (their first axis: the items a segment holds)
ITEM_FIELDS = tuple(f"{n}{s}" for s in (0, 1) for n in ("bI", "bF", "bm", "fI", "fF", "fm"))


class PartPool:
    """The partitions of one unit stacked column-wise: field ``n`` of :data:`STATE_FIELDS` is
    one array whose first axis is the partition's *slot*, so one kernel call
    (:func:`._kernels.run_pool`) serves every partition of a batch. Slots of partitions whose
    window emptied are reused. Segments hold :data:`POOL_CAP` STARTs: a partition with more in
    its window goes on alone (:meth:`detach`) -- with few keys every partition does, and the
    stack serves many keys with few events each.

    Keys are found by :class:`IntIndex` while every batch's keys are :class:`cepagg.engines.keys.IntKeys`
    (one integer attribute), by :class:`DictKeys` from the first batch whose keys are not."""

    overflows = 0  # partitions of the current batch that outgrew their slots (:meth:`widen`)
    ready = 0  # slots below hold a partition's state or the template; the others are zeros

    def __init__(self, fresh: PartState):
        self.fresh = fresh
        self.index: IntIndex | DictKeys = IntIndex()
        self.free = np.zeros(0, np.int64)  # free slots, the next one last
        self.fields = {n: np.zeros((0,) + _pool_shape(n, getattr(fresh, n)), getattr(fresh, n).dtype)
                       for n in STATE_FIELDS}
        self.gI, self.gF = fresh.totI.copy(), fresh.totF.copy()  # the group's totals (without GROUP BY)
        self.template = tuple(getattr(fresh, n) for n in TEMPLATE_FIELDS)

    def __getstate__(self) -> dict:
        """Without the slots never taken (zeros: :meth:`_grow` may have made up to three times
        as many as are taken)."""
        d = dict(self.__dict__)
        r = self.ready
        d["fields"] = {n: a[:r] for n, a in self.fields.items()}
        d["free"] = self.free[self.free < r]
        return d

    def __setstate__(self, d: dict) -> None:
        if "index" not in d:  # (a snapshot of an older format: a dictionary, its keys a list)
            keys = DictKeys()
            keys.slot_of = d.pop("slot_of")
            key_of = d.pop("key_of")
            keys.key_of = np.fromiter(key_of, object, len(key_of)) if isinstance(key_of, list) else key_of
            d["index"] = keys
            d["free"] = np.array(d["free"], np.int64)
        d.setdefault("ready", d["fields"]["ctr"].shape[0])  # (every slot was filled when it grew)
        self.__dict__.update(d)

    @property
    def slots(self) -> int:
        return self.fields["ctr"].shape[0]

    @property
    def slot_of(self) -> dict:
        """Key tuple -> slot of every stacked partition."""
        return dict(self.index.items())

    def __len__(self) -> int:
        return len(self.index)

    def items(self):
        """(key tuple, slot) of every stacked partition."""
        return self.index.items()

    def live(self) -> tuple:
        """The keys of the stacked partitions (a sequence, as a batch's keys) and their slots."""

        if isinstance(self.index, IntIndex):
            return IntKeys(self.index.keys.copy()), self.index.slots.copy()
        keys = list(self.index.slot_of)
        return keys, np.fromiter(self.index.slot_of.values(), np.int64, len(keys))

    def slots_of(self, keys) -> np.ndarray:
        """The slot of each of ``keys`` (distinct), fresh ones for new keys."""

        if isinstance(self.index, IntIndex) and not isinstance(keys, IntKeys):
            self.index = self.index.as_dict()
        slots = self.index.find(keys)
        new = np.flatnonzero(slots < 0)
        m = len(new)
        if m:
            got = self._take(m)
            fresh = take_keys(keys, new)
            self.index.add(fresh, got)
            slots[new] = got
        return slots

    def _take(self, m: int) -> np.ndarray:
        """``m`` free slots, each holding a new partition's state (the template)."""
        while len(self.free) < m:
            self._grow(max(64, 4 * self.slots))
        rest = len(self.free) - m
        got = self.free[rest:][::-1].copy()  # lowest slot first: keys in order get slots in order
        self.free = self.free[:rest]
        # slots from ``ready`` on are taken in increasing order (:meth:`_grow` lists them so)
        new = got[got >= self.ready]
        if len(new):
            for n in TEMPLATE_FIELDS:
                self.fields[n][new] = getattr(self.fresh, n)
            self.ready = int(new.max()) + 1
        return got

    def release(self, slots: np.ndarray) -> None:
        """``slots`` are fresh again (the kernel reset them) and their keys forgotten."""
        if not len(slots):
            return
        self.index.remove(slots)
        self.free = np.concatenate([self.free, slots])

    def _grow(self, n: int) -> None:
        """Room for ``n`` slots. The new ones are left as ``np.zeros`` gives them (pages the
        process has not touched yet) until they are taken (:meth:`_take`), and only the slots
        taken so far are copied: a stack of 10^5 slots grows without writing its free part."""
        old = self.slots
        for name, a in self.fields.items():
            new = np.zeros((n,) + a.shape[1:], a.dtype)
            new[:self.ready] = a[:self.ready]
            self.fields[name] = new
        self.index.grow(n)
        self.free = np.concatenate([np.arange(n - 1, old - 1, -1, dtype=np.int64), self.free])

    def detach(self, s: int) -> PartState:
        """Slot ``s`` as a :class:`PartState` of its own (copies); the slot is released."""
        p = PartState.__new__(PartState)
        p.__dict__.update({k: v for k, v in vars(self.fresh).items() if k not in STATE_FIELDS})
        p.last_final = {}
        for n in STATE_FIELDS:
            setattr(p, n, self.fields[n][s].copy())
        self.reset(s)
        self.release(np.array([s], np.int64))
        return p

    def attach(self, key, p: PartState) -> bool:
        """Partition ``p`` (key ``key``) back into the stack if its state fits a slot with room
        for one more START (the kernel asks for room when a START would make a window's items,
        back and front together, more than a slot holds: a partition attached without that room
        would go on alone again at its next START); False if it does not."""
        if (p.exact or p.wide or p.nosums or p.items(0) >= self.cap or p.items(1)
                or any(getattr(p, n).shape[1:] != self.fields[n].shape[2:] for n in ("bI0", "fI0", "bF0", "fF0"))):
            return False

        if isinstance(self.index, IntIndex) and not (len(key) == 1 and type(key[0]) is int):
            self.index = self.index.as_dict()
        s = int(self._take(1)[0])
        self.index.add(IntKeys(np.array([key[0]], np.int64)) if isinstance(self.index, IntIndex) else [key],
                       np.array([s], np.int64))
        f = self.fields
        for n in STATE_FIELDS:
            a = getattr(p, n)
            if n[:2] in ("bI", "bF", "bm", "fI", "fF", "fm"):  # the items of a back or front stack
                k = segment_sizes(p.ctr, int(n[-1]))[0 if n[0] == "b" else 1]
                f[n][s, :k] = a[:k]
            else:
                f[n][s] = a
        return True

    @property
    def cap(self) -> int:
        return self.fields["bm0"].shape[1]

    def widen(self, partitions: int) -> bool:
        """A partition of a batch of ``partitions`` outgrew its slot. If more than a few did
        (counted in :attr:`overflows`, zeroed per kernel run of a batch), every slot now holds
        twice the items (up to :data:`POOL_MAX_CAP`): True. Else the partition goes on alone."""
        self.overflows += 1
        if self.overflows <= 2 + partitions // 4096 or not 0 < self.cap < POOL_MAX_CAP:
            return False
        cap = min(2 * self.cap, POOL_MAX_CAP)
        for n in ITEM_FIELDS:
            a = self.fields[n]
            if a.shape[1]:
                new = np.zeros((a.shape[0], cap) + a.shape[2:], a.dtype)
                new[:self.ready, :a.shape[1]] = a[:self.ready]
                self.fields[n] = new
        self.overflows = 0
        return True

    def reset(self, s) -> None:
        """Slot ``s`` (or an array of slots) as a new partition's (its key is kept until
        :meth:`release`)."""
        for n in TEMPLATE_FIELDS:
            self.fields[n][s] = getattr(self.fresh, n)

    def args(self) -> tuple:
        f = self.fields
        template = tuple(counters(t) if n == "ctr" else t for n, t in zip(TEMPLATE_FIELDS, self.template))
        return (tuple(f[n] for n in STATE_FIELDS[:16]), stacked_counters(f["ctr"]), f["pk"], f["pVI"], f["pVF"],
                f["pres"], f["totI"], f["totF"], f["lastI"], f["lastF"], template)


def _pool_shape(name: str, a: np.ndarray) -> tuple:
    """The shape of field ``name`` in a :class:`PartPool` slot: segment items (the fields whose
    first axis is the capacity) hold :data:`POOL_CAP`."""
    if name in ITEM_FIELDS and a.shape[0]:
        return (POOL_CAP,) + a.shape[1:]
    return a.shape
