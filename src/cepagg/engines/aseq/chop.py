"""Chop-Connect with SnapShots: sub-patterns shared at any position (paper §4.2).

A query ``SEQ(E1..En)`` is *chopped* into pieces ``S1 = (E1..Ec1-1)``, ``S2 = (Ec1..)``, ...;
each piece is counted once per START of the piece (SEM, one PreCntr per item) and pieces equal
across queries are counted once for all of them. Pieces are *connected* by **SnapShots**: when
the first event of ``Sj`` (the *CNET*) arrives, its new item records, for every START ``a`` of
the whole query still in the window, the number of matches of ``S1..Sj-1`` that began at ``a``
(Lemma 7, Count Attachment). For ``j = 2`` that is ``a``'s count of ``S1``; for ``j > 2``
(multi-connect) it is the sum, over the items ``x`` of ``Sj-1``, of ``x``'s snapshot row of
``a`` times ``x``'s count — so rows are always tagged by the START of the full sequence, which
expires first. The query's value is ``Σ over items d of Sr, over unexpired rows (a, c) of d's
snapshot, of c × count(d)``.

A negation in the gap between two pieces belongs to the earlier piece (its *trailing* gap: it
resets that piece's last prefix before the snapshot reads it); a negation before ``E1`` to the
first piece, as a per-START blocking time (docs/semantics.md §4). Supported: COUNT(*), the three
result modes (WITHIN alone without leading negation), groups equal to partitions for SLIDE and
EMIT ON CHANGE. This evaluator is plain Python (it exists to share work; see
:mod:`.sharing` for when it pays).

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §4.2 (Chop-Connect, Lemma 7, SnapShot, CNET, Examples 8-9 and
multi-connect).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...events import EventBatch
from .encode import column, partition_codes
from .plan import Feed, SeqPlan
from .vexpr import holds_all

NONE = -(2**63)


@dataclass(frozen=True)
class Piece:
    """A chopped sub-pattern: its events, its gaps (the last one trailing), leading negation."""

    feeds: tuple[Feed, ...]
    gaps: tuple[tuple[Feed, ...], ...]  # len(feeds) entries: gap after each event
    lead: tuple[Feed, ...]
    route: tuple  # partition attributes, stream filters, window: who may share it

    @property
    def key(self) -> tuple:
        return (tuple(f.key for f in self.feeds), tuple(tuple(sorted(g.key for g in gap)) for gap in self.gaps),
                tuple(sorted(f.key for f in self.lead)), self.route)

    def text(self) -> str:
        parts = [f"!{f.text()}" for f in self.lead]
        for f, gap in zip(self.feeds, self.gaps):
            parts.append(f.text())
            parts += [f"!{g.text()}" for g in gap]
        return "(" + ", ".join(parts) + ")"


def chop_refusal(plan: SeqPlan) -> str | None:
    """Why a query cannot be evaluated by Chop-Connect (None: it can)."""
    q = plan.query
    if any(not a.is_count_star for a in q.aggregates):
        return "Chop-Connect connects counts: COUNT(*) only"
    if plan.mode == "total" and plan.leading:
        return "leading negation under WITHIN alone blocks per START; not connected by snapshots"
    if plan.mode != "total" and (sorted(plan.group_index) != list(range(len(plan.partition_attrs)))
                                 or plan.chain_attrs):
        return "SLIDE/EMIT groups spanning partitions"
    if plan.within is None:
        return "Chop-Connect needs a window (snapshots are tagged by expiring STARTs)"
    return None


def pieces_of(plan: SeqPlan, chops: tuple[int, ...]) -> list[Piece]:
    """The pieces of ``plan`` cut before each position in ``chops`` (1..n-1, increasing)."""
    q = plan.query
    route = (plan.partition_attrs, tuple(f.text for f in q.stream_filters), plan.within)
    bounds = [0, *chops, plan.length]
    out = []
    for j in range(len(bounds) - 1):
        a, b = bounds[j], bounds[j + 1]
        out.append(Piece(plan.feeds[a:b], tuple(plan.gaps[i + 1] for i in range(a, b)),
                         plan.leading if j == 0 else (), route))
    return out


@dataclass
class Item:
    """A PreCntr of a piece: one START (or CNET) time, its prefix counts, its snapshots."""

    ts: int
    ell: int
    cnt: list[int]
    snaps: dict = field(default_factory=dict)  # (query, piece position) -> {tag ts: (ell, count)}


class ChopPartState:
    def __init__(self, n_pieces: int):
        self.items: list[list[Item]] = [[] for _ in range(n_pieces)]
        self.ell: list[int] = [NONE] * n_pieces
        self.pend_ts: int | None = None
        self.pend: dict = {}  # piece -> (k per level, resets per level), "lead": set, "inst": bool
        self.totals: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.next_k: int | None = None


class ChopState:
    def __init__(self) -> None:
        self.parts: dict[tuple, ChopPartState] = {}
        self.totals: dict[tuple, int] = {}  # (query, group) -> count (WITHIN alone)


class ChopRun:
    """Chop-Connect over a set of chopped queries sharing pieces; rows tagged by query index."""

    def __init__(self, plans: list[SeqPlan], indices: list[int], chops: list[tuple[int, ...]],
                 partial: bool = False, start_range: tuple[int, int] | None = None):
        self.plans = plans
        self.indices = indices
        self.partial = partial
        self.lo, self.hi = start_range if start_range is not None else (NONE, 2**63 - 1)
        self.every = start_range is not None
        self.pieces: list[Piece] = []
        keys: dict[tuple, int] = {}
        self.chain: list[list[int]] = []  # per query: its pieces
        for plan, ch in zip(plans, chops):
            ids = []
            for p in pieces_of(plan, ch):
                if p.key not in keys:
                    keys[p.key] = len(self.pieces)
                    self.pieces.append(p)
                ids.append(keys[p.key])
            self.chain.append(ids)
        p0 = plans[0]
        self.w = p0.within
        self.mode = p0.mode
        self.slide = p0.slide
        self.attrs = p0.partition_attrs

    def new_state(self) -> ChopState:
        return ChopState()

    def describe(self) -> list[str]:
        lines = []
        for k, p in enumerate(self.pieces):
            users = [f"q{self.indices[qi]}.{j + 1}" for qi, ch in enumerate(self.chain) for j, pid in enumerate(ch)
                     if pid == k]
            lines.append(f"piece {k} {p.text()}  used by {', '.join(users)}")
        for qi, ch in enumerate(self.chain):
            lines.append(f"q{self.indices[qi]} = " + " ⋈ ".join(f"piece {k}" for k in ch))
        return lines

    # -- input --------------------------------------------------------------------------------

    def _masks(self, batch: EventBatch):
        table = batch.table
        n = table.num_rows
        codes, keys = partition_codes(table, self.attrs)
        ok = codes >= 0
        q = self.plans[0].query
        if q.stream_filters and n:
            ok &= holds_all([f.expr for f in q.stream_filters], table)
        types = column(table, "type").to_numpy(zero_copy_only=False)
        cache: dict = {}

        def feed(f: Feed):
            if f.key not in cache:
                m = ok.copy() if f.type is None else ok & np.isin(types, list(f.members))
                if f.conds and m.any():
                    m &= holds_all(f.conds, table)
                cache[f.key] = m
            return cache[f.key]

        ext, res, lead = [], [], []
        for p in self.pieces:
            ext.append([feed(f) for f in p.feeds])
            res.append([_any([feed(g) for g in gap], n) for gap in p.gaps])
            lead.append(_any([feed(f) for f in p.lead], n))
        inst = np.zeros(n, bool)
        for plan in self.plans:
            t = plan.query.event_types
            inst |= (codes >= 0) & (np.ones(n, bool) if t is None else np.isin(types, list(t)))
        return codes, keys, ext, res, lead, inst

    def process(self, state: ChopState, batch: EventBatch) -> list[tuple[int, tuple]]:
        if len(batch) == 0:
            return []
        codes, keys, ext, res, lead, inst = self._masks(batch)
        ts = column(batch.table, "ts").to_numpy(zero_copy_only=False)
        rows: list[tuple[int, tuple]] = []
        for e in np.argsort(codes, kind="stable"):
            if codes[e] < 0:
                continue
            key = keys[codes[e]]
            st = state.parts.setdefault(key, ChopPartState(len(self.pieces)))
            t = int(ts[e])
            if st.pend_ts is not None and t != st.pend_ts:
                rows += self._apply(state, key, st)
            if st.pend_ts is None:
                st.pend_ts = t
                st.pend = {"lead": set(), "inst": False}
            for k, p in enumerate(self.pieces):
                kk, rr = st.pend.setdefault(k, ([0] * len(p.feeds), [False] * len(p.feeds)))
                for m in range(len(p.feeds)):
                    if ext[k][m][e]:
                        kk[m] += 1
                    if res[k][m][e]:
                        rr[m] = True
                if lead[k][e]:
                    st.pend["lead"].add(k)
            st.pend["inst"] |= bool(inst[e])
        return rows

    def advance(self, state: ChopState, watermark: int) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        for key, st in list(state.parts.items()):
            if st.pend_ts is not None and st.pend_ts <= watermark:
                rows += self._apply(state, key, st)
            rows += self._settle(state, key, st, watermark + 1)
            if not any(st.items) and st.pend_ts is None and not any(st.last.values()):
                self._fold(state, key, st)
                del state.parts[key]
        return rows

    def finish(self, state: ChopState) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        for key, st in list(state.parts.items()):
            if st.pend_ts is not None:
                rows += self._apply(state, key, st)
            rows += self._settle(state, key, st, 2**63 - 1)
            self._fold(state, key, st)
        state.parts.clear()
        if self.mode == "total":
            for qi, plan in enumerate(self.plans):
                found = [(g, c) for (q, g), c in state.totals.items() if q == qi and c > 0]
                if not found and not plan.query.group_by and not self.partial:
                    found = [((), 0)]
                for g, c in found:
                    rows.append((self.indices[qi], g + (c,)))
        return rows

    # -- the algorithm ----------------------------------------------------------------------------

    def _value(self, st: ChopPartState, qi: int, t: int, lo_start: int) -> int:
        """Σ_d Σ_rows c × count(d) over rows whose START is active at ``t`` (and unblocked)."""
        ch = self.chain[qi]
        last = ch[-1]
        r = len(ch) - 1
        total = 0
        for d in st.items[last]:
            c_last = d.cnt[-1]
            if not c_last:
                continue
            for tag, (ell, c) in d.snaps.get((qi, r), {}).items():
                if tag >= lo_start and (ell == NONE or ell < lo_start):
                    total += c * c_last
        return total

    def _expire(self, state: ChopState, key, st: ChopPartState, t: int) -> None:
        """Drop items with ``ts + w <= t`` oldest first; under WITHIN alone a START's matches
        are final when it leaves (read before any later item leaves)."""
        w = self.w
        while True:
            fronts = [(items[0].ts, k) for k, items in enumerate(st.items) if items and items[0].ts + w <= t]
            if not fronts:
                return
            _, k = min(fronts)
            a = st.items[k].pop(0)
            if self.mode != "total" or not self.lo <= a.ts < self.hi:
                continue
            for qi, ch in enumerate(self.chain):
                if ch[0] != k:
                    continue
                r = len(ch) - 1
                z = sum(d.snaps.get((qi, r), {}).get(a.ts, (0, 0))[1] * d.cnt[-1] for d in st.items[ch[-1]])
                if z:
                    st.totals[qi] = st.totals.get(qi, 0) + z

    def _settle(self, state: ChopState, key, st: ChopPartState, t: int) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        if self.mode == "slide":
            s, w = self.slide, self.w
            while any(st.items) and st.next_k is not None and st.next_k * s + w - 1 < t:
                k = st.next_k
                end = k * s + w - 1
                self._expire(state, key, st, end)
                for qi, plan in enumerate(self.plans):
                    v = self._value(st, qi, end, k * s)
                    if v > 0 and self.lo <= k * s < self.hi:
                        g = tuple(key[i] for i in plan.group_index)
                        rows.append((self.indices[qi], g + (k * s, k * s + w) + (v,)))
                st.next_k = k + 1
        self._expire(state, key, st, t)
        return rows

    def _apply(self, state: ChopState, key, st: ChopPartState) -> list[tuple[int, tuple]]:
        t = st.pend_ts
        rows = self._settle(state, key, st, t)
        pend = st.pend
        w = self.w
        pending = any(pend.get(k, ([0],))[0][0] for k in range(len(self.pieces)))
        if self.mode == "slide" and not any(st.items) and pending:
            first = (t - w) // self.slide + 1
            st.next_k = first if st.next_k is None else max(st.next_k, first)
        # snapshots first, from the state before this timestamp (Lemma 7)
        snaps: dict[int, dict] = {}
        for qi, ch in enumerate(self.chain):
            for j in range(1, len(ch)):
                k = ch[j]
                if k not in pend or not pend[k][0][0]:
                    continue
                prev = ch[j - 1]
                rows_ = {}
                for x in st.items[prev]:
                    cx = x.cnt[-1]
                    if not cx:
                        continue
                    if j == 1:
                        rows_[x.ts] = (x.ell, cx)
                    else:
                        for tag, (ell, c) in x.snaps.get((qi, j - 1), {}).items():
                            if tag + w > t:
                                old = rows_.get(tag, (ell, 0))[1]
                                rows_[tag] = (ell, old + c * cx)
                snaps.setdefault(k, {})[(qi, j)] = rows_
        # prefix counts (Lemma 1 and the Recounting Rule), old values only
        for k, p in enumerate(self.pieces):
            if k not in pend:
                continue
            kk, rr = pend[k]
            if not any(kk[1:]) and not any(rr):
                if kk[0]:
                    st.items[k].append(Item(t, st.ell[k], [kk[0]] + [0] * (len(p.feeds) - 1), snaps.get(k, {})))
                continue  # nothing to extend or reset in this piece
            for it in st.items[k]:
                old = it.cnt
                it.cnt = [0 if rr[0] else old[0]] + [(0 if rr[m] else old[m]) + kk[m] * old[m - 1]
                                                      for m in range(1, len(old))]
            if kk[0]:  # a START (or CNET) of this piece: a new PreCntr with its snapshots
                st.items[k].append(Item(t, st.ell[k], [kk[0]] + [0] * (len(p.feeds) - 1), snaps.get(k, {})))
        for k in pend["lead"]:
            st.ell[k] = t
        if self.mode == "emit" and pend["inst"] and self.lo <= t < self.hi:
            for qi, plan in enumerate(self.plans):
                v = self._value(st, qi, t, t - w + 1)
                if self.every or v != st.last.get(qi, 0):
                    g = tuple(key[i] for i in plan.group_index)
                    rows.append((self.indices[qi], g + (t, v)))
                    st.last[qi] = v
        st.pend_ts = None
        st.pend = {}
        return rows

    def _fold(self, state: ChopState, key, st: ChopPartState) -> None:
        for qi, c in st.totals.items():
            g = tuple(key[i] for i in self.plans[qi].group_index)
            state.totals[(qi, g)] = state.totals.get((qi, g), 0) + c
        st.totals = {}


def _any(masks: list, n: int) -> np.ndarray:
    out = np.zeros(n, bool)
    for m in masks:
        out |= m
    return out


# Reference: A-Seq (SIGMOD 2014) §4.2 (Chop-Connect, Lemma 7, SnapShot, Examples 8-9,
# multi-connect).
