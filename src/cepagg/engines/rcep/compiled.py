"""The compiled path of rcep: matches enumerated by a numba kernel, handed over column-wise or
folded into aggregates.

Taken when the join has nothing to check but time order, the window and conditions on numbers
between variables (:mod:`.comparisons`: comparisons combined by AND, OR and NOT, of arithmetic
on attributes, plain or FIRST/LAST/NEXT, and constants): no NOT or EXISTS in the pattern, no
equivalence on a Kleene variable (``[b.h]`` makes a run share a value), no GROUP BY a
variable's attribute. Local conditions, stream filters, types and untyped variables, partition
attributes, equivalences on singleton variables, GROUP BY a partition attribute, WITHIN alone or
with SLIDE and ``start_range`` all stay on the compiled path: they act before the join (which
positions an event may bind) or are constant for one trigger (group and window cells). Every
other query takes the Python join (:mod:`.join`); both give the reference's result. The
attributes the conditions and aggregates read are kept in the store as float64 (NaN for a
null); a batch whose values for them are not numbers (strings, booleans, integers beyond the
programs' exact limit, 2^52 or less, NaN; for an aggregated attribute also infinities and a
change of kind, integer or float, from one batch to another) moves the engine to the Python
join for good (:meth:`Store.to_buffers`), which compares any values as the reference does.

A partition's events live in one :class:`Store` (arrays of times, ids, the positions each event
may bind and the values read); one call of :func:`._kernels.enumerate_triggers` takes a list of
triggers (a partition's triggers of one input batch where the matches go out as blocks, or are
folded, under WITHIN alone; otherwise one trigger, once per window): for each it gathers each
position's events inside the scope and writes the matches into a
:class:`~cepagg.matches.MatchBlock` of at most ``spill_rows`` rows. A driver that takes blocks
(``engine.spill_blocks``, set by :func:`cepagg.runner.match_feed`) receives each full block
through ``engine.spill`` and the last one at the end of every protocol call; other callers get
the protocol's tuples, built from the arrays. An aggregate query writes no row: the kernel
counts the matches, and for each stored event and position the matches that bind it there, and
:meth:`CompiledJoin.fold_into` adds the aggregates those counts give to the reference's
accumulators (exact: Python integers and fractions), so no match is materialised.

The kernel compiles on the first query that takes this path (about three seconds of CPU, then
cached on disk beside the source; ``cepagg bench matches --compile`` times it); ``cepagg
warmup`` does not compile it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...events import Event
from ...lang.model import Query
from ...matches import MatchBlock
from ..reference.evaluate import Acc
from .buffers import Buffer
from .comparisons import EXACT, NotCompiled, compile_conditions
from .shape import Shape


def compiled_refusal(query: Query, shape: Shape) -> str | None:
    """Why the compiled enumeration does not apply to ``query`` (None: it does)."""
    try:
        compile_conditions(shape)
    except NotCompiled as e:
        return f"{e}: the Python join checks it"
    if shape.negations:
        return "NOT and EXISTS are checked by the Python join"
    kleene = {p.var for p in shape.positions if p.kleene}
    if any(v in kleene for v in shape.same):
        return "an equivalence on a Kleene variable is checked by the Python join"
    if any(g.var is not None for g in query.group_by):
        return "GROUP BY a variable's attribute is read per match by the Python join"
    return None


def explain_lines(query: Query) -> list[str]:
    """What ``cepagg explain`` says of rcep's join for ``query``."""
    from .shape import shape_of

    shape = shape_of(query)
    reason = compiled_refusal(query, shape)
    if reason is None:
        join = CompiledJoin(query, shape)
        slots, limit = join.slots, join.limit
        within = f" (integers within 2^{limit.bit_length() - 1})" if limit < EXACT else ""
        numbers = (f", while the attributes it reads ({', '.join(slots)}) hold numbers{within}"
                   + (" of one kind, integer or float" if join.agg_slots else "")
                   + ", else the Python join from then on") if slots else ""
        out = ("the aggregates are computed from per-event counts of the matches, no match is materialised"
               if join.fold else "the matches go to the output as arrays, not row objects")
        return [f"join: compiled (numba; conditions checked as a match grows{numbers}; {out})"]
    return [f"join: Python ({reason}; the compiled join takes patterns whose conditions between variables "
            "compute on numbers)"]


def _kernel():
    from . import _kernels

    return _kernels.enumerate_triggers


_COMPACT = 512


def numeric(v, limit: int = EXACT) -> bool:
    """Whether the compiled join compares ``v`` as the reference does (None, a float but NaN,
    an integer within ``limit``, :attr:`~.comparisons.Compiled.limit`): NaN stands for a null
    in the join."""
    if v is None:
        return True
    if isinstance(v, float):
        return v == v
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) <= limit


class Store:
    """A partition's events on the compiled path, in stream order: time, id and the positions
    each may bind (bit ``p``: position ``p``), in arrays grown by doubling, the values of the
    attributes the comparisons read (``vals[slot]``, float64, NaN for a null), and the type
    beside them (for the protocol's tuples). Events before ``head`` have expired; they leave
    the arrays in chunks (amortised O(1)). The join reads the arrays as they are: nothing is
    copied per event or per trigger in Python."""

    def __init__(self, slots: int = 0) -> None:
        self.ts = np.empty(64, dtype=np.int64)
        self.ids = np.empty(64, dtype=np.int64)
        self.bits = np.empty(64, dtype=np.int64)
        self.vals = np.empty((slots, 64), dtype=np.float64)
        self.types: list = []
        self.head = 0
        self.n = 0

    def append(self, id_: int, ts: int, bits: int, type_, vals=None) -> None:
        """Add an event (``vals``: its values of the slots, where there are slots)."""
        n = self.n
        if n == self.ts.shape[0]:
            self.ts, self.ids, self.bits = (np.concatenate((x, np.empty_like(x)))
                                            for x in (self.ts, self.ids, self.bits))
            self.vals = np.concatenate((self.vals, np.empty_like(self.vals)), axis=1)
        self.ts[n] = ts
        self.ids[n] = id_
        self.bits[n] = bits
        if vals is not None:
            self.vals[:, n] = vals
        self.types.append(type_)
        self.n = n + 1

    def extend(self, ids: np.ndarray, ts: np.ndarray, bits: np.ndarray, types: list, vals=None) -> None:
        """Add events (arrays of one length; ``vals``: their values of the slots, one row per
        slot, where there are slots)."""
        n, m = self.n, ts.shape[0]
        size = self.ts.shape[0]
        if n + m > size:
            while n + m > size:
                size *= 2
            self.ts, self.ids, self.bits = (np.concatenate((x, np.empty(size - x.shape[0], dtype=x.dtype)))
                                            for x in (self.ts, self.ids, self.bits))
            self.vals = np.concatenate((self.vals, np.empty((self.vals.shape[0], size - self.vals.shape[1]))), axis=1)
        self.ts[n:n + m] = ts
        self.ids[n:n + m] = ids
        self.bits[n:n + m] = bits
        if vals is not None:
            self.vals[:, n:n + m] = vals
        self.types.extend(types)
        self.n = n + m

    def drop_before(self, t: int) -> None:
        """Forget the events with ``ts < t``."""
        h = self.head + int(np.searchsorted(self.ts[self.head:self.n], t))
        self.head = h
        if h >= _COMPACT and 2 * h >= self.n:
            m = self.n - h
            for x in (self.ts, self.ids, self.bits):
                x[:m] = x[h:self.n]
            self.vals[:, :m] = self.vals[:, h:self.n]
            del self.types[:h]
            self.n, self.head = m, 0

    def __len__(self) -> int:
        return self.n - self.head

    @classmethod
    def of_buffers(cls, buffers: list, slots: tuple[str, ...] = (), limit: int = EXACT) -> "Store | None":
        """The store of per-position buffers of events (the Python join's state: a snapshot of an
        engine that moved to the Python join, or of the older format without stores); None when
        a value of a slot is not :func:`numeric`."""
        found: dict = {}
        for p, b in enumerate(buffers):
            for e in b.events[b.head:]:
                found.setdefault(e.id, [e, 0])[1] |= 1 << p
        store = cls(len(slots))
        for e, bits in sorted(found.values(), key=lambda x: (x[0].ts, x[0].id)):
            values = [e.get(a) for a in slots]
            if not all(numeric(v, limit) for v in values):
                return None
            store.append(e.id, e.ts, bits, e.type, [np.nan if v is None else float(v) for v in values])
        return store

    def to_buffers(self, k: int, slots: tuple[str, ...], kinds: dict | None = None) -> list[Buffer]:
        """The Python join's per-position buffers of these events (attributes: the slots' values,
        which the Python join compares as it would the events' own; integers where ``kinds``
        says a slot's values are, as aggregates return them)."""
        buffers = [Buffer() for _ in range(k)]
        make = [int if (kinds or {}).get(a) == "int" else float for a in slots]
        for i in range(self.head, self.n):
            attrs = {a: None if np.isnan(self.vals[s, i]) else make[s](self.vals[s, i]) for s, a in enumerate(slots)}
            e = Event(int(self.ids[i]), int(self.ts[i]), self.types[i], attrs)
            bits = int(self.bits[i])
            for p in range(k):
                if bits >> p & 1:
                    buffers[p].append(e)
        return buffers


class CompiledJoin:
    """Matches ending at a trigger, written into blocks by the compiled kernel."""

    def __init__(self, query: Query, shape: Shape):
        self.query = query
        self.k = len(shape.positions)
        var_pos = {p.var: p.index for p in shape.positions}
        self.ret_pos = np.array([var_pos[v] for v in query.return_vars], dtype=np.int64)
        self.display = [v.split("@")[0] for v in query.return_vars]
        # bit 0: Kleene plus; bit 1: an aggregate reads the position's events
        self.flags = np.array([int(p.kleene) for p in shape.positions], dtype=np.int64)
        conditions = compile_conditions(shape)
        self.cond, self.code, self.consts = conditions.table, conditions.code, conditions.consts
        self.limit = conditions.limit
        # aggregates: what each reads (the positions of its variables, the slot of its attribute)
        self.fold = not query.returns_matches
        slots = dict.fromkeys(conditions.slots)
        self.agg_pos = np.zeros(self.k, dtype=np.bool_)  # (an aggregate reads the position's events)
        self._aggs = []
        for a in query.aggregates if self.fold else ():
            rows = [var_pos[v] for v in a.vars if v in var_pos]
            self.agg_pos[rows] = True
            if a.attr is not None:
                slots.setdefault(a.attr)
            self._aggs.append((a, np.array(rows, dtype=np.int64)))
        self.flags |= self.agg_pos.astype(np.int64) << 1
        self.slots = tuple(slots)
        #: the slots aggregates read (their values' kind, integer or float, must not change)
        self.agg_slots = frozenset(a.attr for a, _ in self._aggs if a.attr is not None)
        self.mult = np.zeros((self.k, 0), dtype=np.int64)
        self.agg = np.array([0, _NO_EVENT, -1, int(self.fold)], dtype=np.int64)  # count, least, greatest, fold
        self._none = MatchBlock.empty(0, [])  # (fold: no rows; the same array types, so no second compilation)
        self._sv = np.zeros(conditions.depth, dtype=np.float64)  # (the programs' stack: values)
        self._sk = np.zeros(conditions.depth, dtype=np.int64)  # (validity or truth)
        self.first = np.zeros(self.k, dtype=np.int64)
        self.start = np.zeros(self.k, dtype=np.int64)
        self.stop = np.zeros(self.k, dtype=np.int64)
        self.upper = np.zeros(self.k, dtype=np.int64)
        self.state = np.zeros(2, dtype=np.int64)
        self.tstate = np.zeros(2, dtype=np.int64)
        self._stack_p = np.zeros(64, dtype=np.int64)
        self._stack_i = np.zeros(64, dtype=np.int64)
        self._ts = np.zeros(64, dtype=np.int64)
        self._ref = np.zeros(64, dtype=np.int64)
        self._six = np.zeros(64, dtype=np.int64)
        self.block: MatchBlock | None = None
        self._enumerate = None

    def run(self, store: Store, tixs: np.ndarray, lo: int, first_hi: int, w: int, cells: tuple, state,
            rows: int, hand_over, out: list | None = None, spill=None) -> None:
        """Write the matches ending at each trigger, the events at ``tixs`` in ``store`` (in
        order; a trigger at ``t`` takes events from ``max(t - w + 1, lo)`` on, and the match's
        first event is before ``first_hi``), numbered from ``state.next_match``, with group and
        window ``cells``: one kernel call for all of them, and one more per block handed over.
        ``hand_over(block)`` takes each full block of ``rows`` rows. With ``out`` (not None) the
        matches are appended to it as tuples instead, and handed to ``spill(rows)`` (if given)
        whenever ``out`` holds ``rows`` of them."""
        if self._enumerate is None:
            self._enumerate = _kernel()
        self._room(store)
        tuples = out is not None
        self.tstate[0] = self.tstate[1] = 0
        while True:
            blk = self.block
            if blk is None:
                blk = self.block = MatchBlock.empty(rows, self.display)
            f0 = blk.rows
            fill, state.next_match = self._enumerate(
                store.ts, store.ids, store.bits, store.head, tixs, lo, first_hi, w, not tuples, self.tstate,
                self._ts, self._ref, self._six, self.start, self.stop, self.flags, self.upper, self.first,
                self.ret_pos, self.cond, self.code, self.consts, self._sv, self._sk, store.vals, self._stack_p,
                self._stack_i, self.state, blk.match, blk.var, blk.pos, blk.event, f0, blk.capacity, state.next_match,
                self.mult, self.agg)
            blk.rows = fill
            if tuples:
                out.extend(_tuples(blk, f0, fill, store, cells, self.display))
                blk.rows = 0  # (nothing kept: the tuples are the output)
                if spill is not None and len(out) >= rows:
                    spill(out[:])
                    out.clear()
            elif fill > f0:
                blk.cell[f0:fill] = blk.cell_index(cells)
            if self.tstate[0] == tixs.shape[0]:
                return
            # the next match does not fit: hand the block over, or (empty) make one it fits in
            if blk.rows:
                hand_over(blk)
                self.block = None
            elif fill == f0:
                self.block = MatchBlock.empty(int(self.tstate[1]), self.display)  # (a match has at most m rows)

    def fold_into(self, store: Store, tixs: np.ndarray, lo: int, first_hi: int, w: int, key: tuple, accs: dict,
                  kinds: dict) -> None:
        """Fold the matches ending at each trigger (as :meth:`run` finds them) into the
        aggregates of ``accs[key]`` (the reference's accumulator), without writing a row: the
        kernel counts the matches and, per stored event and position, the matches binding it
        there; the aggregates are computed from those counts (:meth:`_take`). ``kinds``: the
        kind of each aggregated attribute's values (``"int"`` or ``"float"``)."""
        if self._enumerate is None:
            self._enumerate = _kernel()
        self._room(store)
        if self.agg_pos.any() and self.mult.shape[1] < store.ts.shape[0]:
            self.mult = np.zeros((self.k, store.ts.shape[0]), dtype=np.int64)
        self.tstate[0] = self.tstate[1] = 0
        no = self._none
        while True:
            self._enumerate(
                store.ts, store.ids, store.bits, store.head, tixs, lo, first_hi, w, False, self.tstate,
                self._ts, self._ref, self._six, self.start, self.stop, self.flags, self.upper, self.first,
                self.ret_pos, self.cond, self.code, self.consts, self._sv, self._sk, store.vals, self._stack_p,
                self._stack_i, self.state, no.match, no.var, no.pos, no.event, 0, 0, 0, self.mult, self.agg)
            self._take(store, key, accs, kinds)
            if self.tstate[0] == tixs.shape[0]:
                return

    def _take(self, store: Store, key: tuple, accs: dict, kinds: dict) -> None:
        """Add the kernel's counts to ``accs[key]`` exactly, then zero them. With ``m[e]`` the
        matches binding event ``e`` at an aggregate's positions: COUNT(X) adds the sum of
        ``m``, SUM and AVG add ``m[e] * value`` (Python integers, or fractions for floats: the
        reference's exact sums) and ``m[e]`` over the non-null values, MIN and MAX take the
        values with ``m[e] > 0``."""
        n = int(self.agg[0])
        if n == 0:
            return
        lo, hi = int(self.agg[1]), int(self.agg[2]) + 1
        self.agg[0], self.agg[1], self.agg[2] = 0, _NO_EVENT, -1
        acc = accs.get(key)
        if acc is None:
            acc = accs[key] = Acc(self.query.aggregates)
        acc.count += n
        if hi <= lo:
            return
        block = self.mult[:, lo:hi]
        for i, (a, rows) in enumerate(self._aggs):
            if a.is_count_star or not rows.size:
                continue
            m = block[rows].sum(axis=0)  # (at most k * FOLD_MAX each)
            bound = n * rows.size
            if a.func == "COUNT":
                acc.values[i] += _sum(m, bound)
                continue
            v = store.vals[self.slots.index(a.attr), lo:hi]
            has = (m > 0) & ~np.isnan(v)
            if not has.any():
                continue
            m, v = m[has], v[has]
            if a.func in ("SUM", "AVG"):
                total, count = acc.values[i]
                acc.values[i] = (total + _weighted(m, v, bound, kinds.get(a.attr) == "int"), count + _sum(m, bound))
            else:
                x = v.min() if a.func == "MIN" else v.max()
                x = int(x) if kinds.get(a.attr) == "int" else float(x)
                cur = acc.values[i]
                acc.values[i] = x if cur is None else (min(cur, x) if a.func == "MIN" else max(cur, x))
        block[:] = 0

    def _room(self, store: Store) -> None:
        """Make the gather's arrays and the stack large enough for ``store``."""
        room = self.k * len(store) + 1
        if self._ts.shape[0] < room:
            self._ts = np.zeros(2 * room, dtype=np.int64)
            self._ref = np.zeros(2 * room, dtype=np.int64)
            self._six = np.zeros(2 * room, dtype=np.int64)
            self._stack_p = np.zeros(2 * room + 2, dtype=np.int64)
            self._stack_i = np.zeros(2 * room + 2, dtype=np.int64)

    def take_block(self) -> MatchBlock | None:
        """The block being filled, if it holds rows (it is then handed over and not filled
        again)."""
        blk, self.block = self.block, None
        return blk if blk is not None and blk.rows else None


_NO_EVENT = 2**62  # (agg[1] before any event is counted)


def _sum(m: np.ndarray, bound: int) -> int:
    """The exact sum of ``m`` (non-negative integers, each at most ``bound``)."""
    if bound * m.shape[0] < 2**63:
        return int(m.sum())
    return sum(m.tolist())


def _weighted(m: np.ndarray, v: np.ndarray, bound: int, ints: bool):
    """The exact sum of ``m[e] * v[e]`` (``m``: counts, each at most ``bound``; ``v``: float64
    values, integers within 2^52 where ``ints``): a Python integer for integers, a fraction
    for floats (as the reference adds ``Fraction(value)``)."""
    if ints:
        if bound * m.shape[0] * EXACT < 2**63:
            return int(np.dot(m, v.astype(np.int64)))
        return sum(a * b for a, b in zip(m.tolist(), v.astype(np.int64).tolist()))
    mant, exp = np.frexp(v)  # v = mant * 2^exp exactly, 0.5 <= |mant| < 1
    ints_ = (mant * 2.0**53).astype(np.int64).tolist()
    shift = (exp - 53).tolist()
    low = min(shift)
    total = sum(a * b << (e - low) for a, b, e in zip(m.tolist(), ints_, shift))
    return Fraction(total, 1 << -low) if low < 0 else Fraction(total << low)


def _tuples(blk: MatchBlock, f0: int, f1: int, store: Store, cells: tuple, display: list) -> list[tuple]:
    """The protocol's rows (cells, match, var, pos, event_id, type, ts) of rows f0:f1, whose
    events are given by their index in ``store``."""
    idx = blk.event[f0:f1]
    ids, ts = store.ids[idx].tolist(), store.ts[idx].tolist()
    types = [store.types[i] for i in idx.tolist()]
    return [cells + (m, display[v], pos, i, t, s)
            for m, v, pos, i, t, s in zip(blk.match[f0:f1].tolist(), blk.var[f0:f1].tolist(),
                                          blk.pos[f0:f1].tolist(), ids, types, ts)]
