"""The index or the scan, re-chosen per (sub-)partition at every batch boundary.

Under a window in time a transition with one comparison ``f(X) θ g(NEXT(X))`` can sum its
predecessors from the ordered index (:mod:`.index`, O(log n) per start bucket and event) or by
scanning the stored vertices (Θ(events in the window)); the scan is the cheaper one at a few
events per window, the index beyond (:func:`.plan.prefers_scan`). A stream's density changes,
so the choice is re-made as it goes.

**Per (sub-)partition, not per engine.** Every (sub-)partition's graph is its own
:class:`.state.PosState`, run by its own kernel calls with the kernel plan it is handed; the
two paths differ only in the plan's transition kinds and in arrays the graph owns (the index
keys, leaves and Fenwick nodes, and each vertex's key slot). Everything shared between
partitions -- record layout, condition columns, negative graphs, window results -- is the same
for both plans (:class:`Router` checks it). So a hot key can run on the index beside thousands
of sparse keys on the scan, which one choice per engine could not serve.

**Evidence and hysteresis.** Each graph counts its own events since the start of its current
evidence period (:class:`Evidence`, kept on the graph and so in snapshots). It moves

* to the index once the period holds at least ``UP`` times the threshold of
  :func:`.plan.prefers_scan` (:data:`.plan.SPARSE`, :data:`.plan.SPARSE_SLIDE`) events per
  window: at once when that many arrive within one window's time, else judged when the
  period spans a window;
* towards the scan once a period spanning at least a window averages fewer than the
  threshold divided by ``UP``.

Between the two bounds nothing changes, so a stream near the threshold keeps its path; the
bounds are a factor ``UP**2`` apart. The risks are not alike (the scan is fifty times as slow
at 10^4 events per window on one partition, the index 1.1 to 1.7 times where the scan wins:
docs/benchmarks.md), so the move to the index is the quick one. A new graph starts where
:func:`.plan.prefers_scan` puts its first batch.

**Conversions, at a batch boundary.** Scan to index (:func:`to_index`): the scan keeps every
vertex whose start buckets are alive; their keys are computed from the condition columns the
vertices hold, inserted into a new index, and the vertices already committed are added to its
leaves and nodes (:func:`._kernels.commit`, with the running totals left alone: they hold the
vertices already); the vertices of the last timestamp stay pending with their key slots, as on
the index path. Index to scan: the index path keeps no vertex unless it has to, so a graph
headed for the scan first *keeps* its vertices (the index plan run with its store flag set)
until every vertex it dropped has left the window -- the lowest live start bucket above the
highest one when keeping began -- and then :func:`to_scan` drops the index's arrays. A graph
whose evidence turns dense while keeping stops keeping.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...lang import ast
from ..kernels import twin as _twin
from . import _kernels as K
from . import layout as lay
from . import plan as pl
from .state import PosState, leaf_tags
from .vector import Vec, value

#: the hysteresis factor: to the index at UP x the threshold, towards the scan below 1/UP of it
UP = 1.5

#: version of the evidence kept on each graph (``PosState.evidence``)
EVIDENCE_VERSION = 1

NO_KEEP = K.NEG_INF  # Evidence.keep_from of a graph that is not keeping its vertices


@dataclass(frozen=True)
class Evidence:
    """A graph's count of its events since ``since`` and, on the index path, the highest start
    bucket it had when it began keeping its vertices (``NO_KEEP``: it is not keeping them).
    Pickled with the graph, as a versioned tuple (:meth:`pack`)."""

    events: int = 0
    since: int = K.NEG_INF  # NEG_INF: no period open
    keep_from: int = NO_KEEP

    def pack(self) -> tuple:
        return (EVIDENCE_VERSION, self.events, self.since, self.keep_from)

    @classmethod
    def of(cls, st: PosState) -> "Evidence | None":
        """The graph's evidence, or None for a graph that has none (new, or restored from a
        snapshot whose graphs hold no evidence)."""
        got = getattr(st, "evidence", None)
        if not got or got[0] != EVIDENCE_VERSION:
            return None
        return cls(*got[1:])


def on_index(st: PosState) -> bool:
    """Whether the graph is on the index path (it owns index arrays)."""
    return st.NIX > 0


def keeping(st: PosState) -> bool:
    ev = getattr(st, "evidence", None)
    return bool(ev) and ev[0] == EVIDENCE_VERSION and ev[3] != NO_KEEP


class Router:
    """The path of each (sub-)partition of one engine in ``paths="auto"``: the layouts of the
    two plans, each graph's layout, and the choice made before a graph runs a batch."""

    def __init__(self, query, index_plan: pl.GretaPlan, scan_plan: pl.GretaPlan,
                 start_range: tuple[int, int] | None):
        self.query = query
        self.index_plan = index_plan
        self.scan_plan = scan_plan
        self.start_range = start_range
        self.sliding = not pl.per_start_buckets(query)
        self.threshold = pl.SPARSE_SLIDE if self.sliding else pl.SPARSE
        self._layouts: tuple | None = None  # (the state's layout, index, keeping, scan)
        self.switches = {"index": 0, "scan": 0}  # conversions made to each path (tests, benchmarks)

    # -- layouts ------------------------------------------------------------------------------

    def layouts(self, primary: lay.Layout) -> tuple[lay.Layout, lay.Layout, lay.Layout]:
        """(index, index keeping its vertices, scan) layouts beside the state's ``primary``
        layout (one of the two; a snapshot of an engine whose first batch chose the path for good
        holds that one). Built with the record kinds ``primary`` was built with, and
        sharing its string codes (condition columns are encoded once per batch with them)."""
        got = self._layouts
        if got is not None and got[0] is primary:
            return got[1:]
        kinds = {primary.attr_slots[a.attr_slot]: a.kind for a in primary.aggs if a.attr_slot >= 0}
        if primary.positive.index_specs:
            index = primary
            scan = lay.build(self.scan_plan, kinds, self.start_range)
        else:
            scan = primary
            index = lay.build(self.index_plan, kinds, self.start_range)
        other = scan if index is primary else index
        if (other.FI, other.FF, other.FM, other.attr_slots) != (primary.FI, primary.FF, primary.FM,
                                                                primary.attr_slots) or \
                other.positive.programs.slots != primary.positive.programs.slots:
            raise AssertionError("the index and scan plans differ beyond their paths")
        other.strings = primary.strings
        kp = index.positive.kernel_plan
        if kp.pi.view(K.PLAN_SCALARS)[0]["store"]:
            keep = index
        else:
            pi = kp.pi.copy()
            pi.view(K.PLAN_SCALARS)[0]["store"] = 1
            keep = replace(index, positive=replace(index.positive, kernel_plan=kp._replace(pi=pi)))
        self._layouts = (primary, index, keep, scan)
        return index, keep, scan

    def layout_of(self, primary: lay.Layout, st: PosState) -> lay.Layout:
        """The layout a graph runs with: the scan's, the index's, or the index's keeping its
        vertices (on its way to the scan)."""
        index, keep, scan = self.layouts(primary)
        if not on_index(st):
            return scan
        return keep if keeping(st) else index

    # -- the choice ---------------------------------------------------------------------------

    def choose(self, primary: lay.Layout, st: PosState, ts: np.ndarray, batch_span: int,
               columns) -> lay.Layout:
        """Before a graph runs a batch of its events (times ``ts``, in order): count them as
        evidence, convert the graph if the evidence says so, and return the layout to run it
        with. ``batch_span``: the time the batch's events of the query's types span (the first
        batch's rule); ``columns(names)``: the kinds of those attributes in the batch, for
        keys computed from a scan's vertices (:func:`to_index`)."""
        index, keep, scan = self.layouts(primary)
        n = len(ts)
        ev = Evidence.of(st)
        if ev is None:
            if int(st.sc["now"]) == K.NEG_INF and n:  # a new graph: the first batch's rule
                scan_first = pl.prefers_scan(self.query, n, batch_span, 1, self.threshold)
                if scan_first and on_index(st):
                    to_scan(st)
                elif not scan_first and not on_index(st):
                    to_index(st, index, columns)
            ev = Evidence()
        if n == 0:
            st.evidence = ev.pack()
            return self.layout_of(primary, st)
        since = ev.since if ev.since != K.NEG_INF else int(ts[0])
        events = ev.events + n
        elapsed = int(ts[-1]) - since + 1
        W = self.query.within
        dense = sparse = False
        if elapsed <= W:
            dense = events >= UP * self.threshold
        else:
            per_window = events * W / elapsed
            dense = per_window >= UP * self.threshold
            sparse = per_window < self.threshold / UP
        judged = dense or elapsed > W
        keep_from = ev.keep_from
        if on_index(st):
            if keep_from != NO_KEEP and judged and not sparse:
                keep_from = NO_KEEP  # no longer sparse: stop keeping (the next commit drops them)
            elif keep_from == NO_KEEP and sparse:
                keep_from = int(st.sc["bhi"])  # every vertex dropped so far: buckets <= this
            if keep_from != NO_KEEP and int(st.sc["blo"]) > keep_from:
                to_scan(st)
                self.switches["scan"] += 1
                keep_from = NO_KEEP
        elif dense and to_index(st, index, columns):
            self.switches["index"] += 1
        if judged:
            events, since = 0, int(ts[-1]) + 1
        st.evidence = Evidence(events, since, keep_from).pack()
        return self.layout_of(primary, st)


# ----------------------------------------------------------------------------------------------
# conversions


def to_scan(st: PosState) -> None:
    """Index path to scan path, in place: the index's keys, leaves, nodes and the vertices' key
    slots go. The graph must hold every vertex a later event may use (a new graph, or one that
    kept its vertices long enough: :class:`Router`)."""
    a = st.a
    st.NIX = 0
    st.vkind, st.nkind, st.vocab = [], [], []
    a["IDX"] = np.zeros((0, 5), dtype=np.int64)
    st._records("N", 0)
    st._records("L", 0)
    a["NT"] = np.zeros((0, 2), dtype=np.int64)
    a["LT"] = leaf_tags([])
    a["KS"] = np.zeros(0, dtype=np.int64)
    a["KO"] = np.zeros(0, dtype=np.int64)
    a["v_irank"] = np.zeros((st.vcap, 0), dtype=np.int64)


def to_index(st: PosState, index: lay.Layout, columns) -> bool:
    """Scan path to index path, in place (``index``: the index plan's layout): each index gets
    the keys of the stored vertices of its source state, computed from their condition
    columns, and the committed ones' records in its leaves and nodes. Returns False, leaving
    the graph as it was, where a key's kind cannot be told from the batch (``columns``: the
    kinds of attributes in it; an attribute without a value in the batch says nothing)."""
    specs = index.positive.index_specs
    slots = index.positive.programs.slots
    names = sorted({n.name for sp in specs for n in sp.pkey.walk() if isinstance(n, ast.Attr)})
    kinds = columns(names)
    if any(kinds.get(nm) is None for nm in names):
        return False
    a = st.a
    sc = st.sc
    R = st.R
    NIX = len(specs)
    st.NIX = NIX
    st.vkind, st.nkind, st.vocab = [None] * NIX, [None] * NIX, [None] * NIX
    IDX = np.zeros((NIX, 5), dtype=np.int64)
    for ix, spec in enumerate(specs):
        IDX[ix, K.IX_POINT] = 1 if spec.op == "=" else 0
        IDX[ix, K.IX_SRC] = index.positive.index_src[ix]
    IDX[:, K.IX_OFF] = np.arange(NIX)
    a["IDX"] = IDX
    st._records("N", NIX * R)
    st._records("L", 0)
    a["NT"] = np.zeros((NIX, 2), dtype=np.int64)
    a["NT"][:, 1] = -1
    a["LT"] = leaf_tags([])
    a["KS"] = np.zeros(0, dtype=np.int64)
    a["KO"] = np.zeros(0, dtype=np.int64)
    a["v_irank"] = np.full((st.vcap, NIX), -1, dtype=np.int64)
    lo, nv, pc = int(sc["vstart"]), int(sc["nv"]), int(sc["pcommit"])
    V = a["V"]
    decode = {code: s for s, code in index.strings.items()}
    for ix, spec in enumerate(specs):
        verts = np.arange(lo, nv)[V[lo:nv, K.V_STATE] == index.positive.index_src[ix]]
        if not len(verts):
            continue
        key = value(spec.pkey, _vertex_columns(a, verts, slots, kinds, decode), len(verts))
        ok = np.flatnonzero(key.valid)
        if not len(ok):
            continue
        (codes,) = st.key_codes(ix, [(key, ok)], spec.op in (">", ">="))
        st.insert_keys(ix, np.unique(codes))
        KS, KO, C = st.slot_keys(ix)
        slot = np.empty(len(codes), dtype=np.int64)
        st._kernels_index().find_many(KS, KO, 0, C, codes, slot)
        a["v_irank"][verts[ok], ix] = slot
    _commit_stored(st, index, lo, pc)
    return True


def _vertex_columns(a: dict, verts: np.ndarray, slots: list[str], kinds: dict, decode: dict):
    """A lookup of attributes (``ast.Attr``) over the stored vertices ``verts``: their condition
    columns as the batch encoder would have read them (numbers integral where they are,
    booleans, strings from their codes)."""
    def lookup(node) -> Vec:
        j = slots.index(node.name)
        vals = a["v_col"][verts, j]
        valid = a["v_colv"][verts, j].copy()
        kind = kinds[node.name]
        if kind == "string":
            out = np.array([decode.get(int(c), "") if m else "" for c, m in zip(vals.tolist(), valid.tolist())],
                           dtype=object)
            return Vec("string", out, valid)
        if kind == "bool":
            return Vec("bool", vals != 0, valid)
        if kind == "int" and np.all(vals[valid] == np.round(vals[valid])):
            return Vec("number", vals.astype(np.int64), valid)
        return Vec("number", vals, valid)
    return lookup


def _commit_stored(st: PosState, index: lay.Layout, lo: int, hi: int) -> None:
    """Add the records of the committed vertices ``lo..hi-1`` that still hold a live start
    bucket to the leaves and nodes of the indexes (their key slots set): the kernel's commit of
    a timestamp's vertices, on copies clamped to the live buckets (a slot of an expired bucket
    may hold a live one now) and with the running totals left out."""
    a = st.a
    sc = st.sc
    R = st.R
    blo = int(sc["blo"])
    V = a["V"]
    sel = np.arange(lo, hi)
    sel = sel[V[sel, K.V_BHI] >= blo]
    if not len(sel) or not st.NIX:
        return
    Vc = V[sel].copy()
    Vc[:, K.V_BLO] = np.maximum(Vc[:, K.V_BLO], blo)
    rows = (sel[:, None] * R + np.arange(R)[None, :]).reshape(-1)
    VI, VF, VM = a["VI"][rows], a["VF"][rows], a["VM"][rows]
    own = st.a["sc"].copy()  # the commit's own scalars (it moves them)
    sc2 = own.view(K.STATE_SCALARS)[0]
    sc2["pcommit"] = 0
    sc2["nv"] = len(sel)
    kp = index.positive.kernel_plan
    ST = kp.ST.copy()
    ST[:, K.ST_TOTAL] = 0
    kern = _twin(K.__name__) if (st.exact or st.pure) else K
    L = a["TI"].shape[1] // st.FI
    hard = 0 if (st.exact or st.floats) else K.HARD
    # (compiled, the record view of the array: the kernels' own binder has no Python wrapper)
    scalars = kern.state_scalars(own) if kern._TWIN else own.view(K.STATE_SCALARS)[0]
    kern.commit(scalars, Vc, np.ascontiguousarray(a["v_irank"][sel]), VI, VF, VM,
                a["TI"], a["TF"], a["TM"], ST,
                a["IDX"], a["NI"], a["NF"], a["NM"], a["NT"], a["LI"], a["LF"], a["LM"], a["LT"], R, L,
                st.mmin, hard, 1)


# Reference: GRETA (PVLDB 2017) Section 7 (Vertex Trees over the stored vertices) and Section 8
# (the predecessor scan); the choice between them per partition and batch is this engine's own.
