"""The plan as flat arrays for the kernels, and the record fields of the aggregates.

:mod:`.plan` decides *what* each transition does; this module writes it down in the arrays
:func:`._kernels.pos_one` and :func:`._kernels.neg_run` read: transitions grouped by target
state, negation bit masks, compiled edge programs, and the record layout of the aggregates.

Record fields (one record per start bucket, :mod:`._records`):

======================  ===========================================================
COUNT(*)                integer field 0: the number of trends
COUNT(X)                integer field: X events over all trends (own: += count)
SUM(X.a), AVG(X.a)      integer field (integer/boolean a) or float field (float a),
                        plus an integer field counting non-null occurrences
MIN(X.a), MAX(X.a)      an order-code field (:mod:`.numbers`)
======================  ===========================================================

The own contribution of an X event uses its complete count (the paper defers
aggregate propagation to its technical report; derived here):
``sum += a * count``, ``min = min(min, a)`` when the event ends at least one trend.

The kind of an aggregated attribute (integer or float sum, code of MIN/MAX) is taken from
the first batch that has the column and then fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import CepaggError
from ...lang import ast
from ...lang.expr import ConditionTypeError
from .. import postfix as PF
from . import _kernels as K
from . import _program as PG
from .kernel_args import NegPlan, PosPlan
from .plan import GraphPlan, GretaPlan


class DataKindError(CepaggError):
    """Input data whose kind GRETA cannot aggregate as the query asks (e.g. MIN of strings)."""


@dataclass
class AggSlot:
    """Where one aggregate lives in the record."""

    func: str
    kind: str  # "count", "int", "float", "bool" (attribute kind)
    field: int = -1  # int field (COUNT, int SUM), float field, or M field
    nnz: int = -1  # int field counting non-null values (SUM/AVG)
    attr_slot: int = -1


@dataclass
class Programs:
    """Compiled edge conditions of one graph: postfix code and the attribute slots it reads."""

    slots: list[str] = field(default_factory=list)
    off: list[int] = field(default_factory=lambda: [0])
    op: list[int] = field(default_factory=list)
    arg: list[int] = field(default_factory=list)
    val: list[float] = field(default_factory=list)
    ordered: set[int] = field(default_factory=set)  # slots compared with < <= > >=
    exprs: list[ast.Expr] = field(default_factory=list)

    def slot(self, name: str) -> int:
        if name not in self.slots:
            self.slots.append(name)
        return self.slots.index(name)

    def add(self, conds: list[ast.Expr], strings: dict[str, int]) -> int:
        if not conds:
            return -1
        for c in conds:
            self._emit(c, strings)
        if len(conds) > 1:
            self._push(PF.AND, len(conds))
        self.off.append(len(self.op))
        self.exprs.append(ast.BoolOp("and", tuple(conds)) if len(conds) > 1 else conds[0])
        return len(self.off) - 2

    def _push(self, op: int, arg: int = 0, val: float = 0.0) -> None:
        self.op.append(op)
        self.arg.append(arg)
        self.val.append(val)

    def _emit(self, e: ast.Expr, strings: dict[str, int]) -> None:
        if isinstance(e, ast.Literal):
            v = e.value
            if isinstance(v, str):
                v = strings.setdefault(v, len(strings))
            self._push(PF.CONST, 0, float(v))
        elif isinstance(e, ast.Attr):
            self._push(PG.LOAD_P, self.slot(e.name))
        elif isinstance(e, ast.Ref):
            self._push(PG.LOAD_E, self.slot(e.name))
        elif isinstance(e, ast.Arith):
            self._emit(e.left, strings)
            self._emit(e.right, strings)
            self._push({"+": PF.ADD, "-": PF.SUB, "*": PF.MUL, "/": PF.DIV}[e.op])
        elif isinstance(e, ast.Negate):
            self._emit(e.operand, strings)
            self._push(PF.NEG)
        elif isinstance(e, ast.Compare):
            for k, op in enumerate(e.ops):
                a, b = e.operands[k], e.operands[k + 1]
                self._emit(a, strings)
                self._emit(b, strings)
                self._push(PF.CMP, PF.CMP_CODES[op])
                if op not in ("=", "!="):
                    for side in (a, b):
                        for n in side.walk():
                            if isinstance(n, (ast.Attr, ast.Ref)):
                                self.ordered.add(self.slot(n.name))
            if len(e.ops) > 1:
                self._push(PF.AND, len(e.ops))
        elif isinstance(e, ast.BoolOp):
            for o in e.operands:
                self._emit(o, strings)
            self._push(PF.AND if e.op == "and" else PF.OR, len(e.operands))
        elif isinstance(e, ast.NotExpr):
            self._emit(e.operand, strings)
            self._push(PF.NOT)
        else:
            raise ConditionTypeError(f"cannot compile {type(e).__name__} in an edge condition")

    def arrays(self) -> tuple:
        code = np.zeros((len(self.op), 2), dtype=np.int64)
        code[:, 0] = self.op
        code[:, 1] = self.arg
        return (np.array(self.off, dtype=np.int64), code, np.array(self.val, dtype=np.float64))


def _mask(not_ids, bits: dict[int, int]) -> int:
    m = 0
    for n in not_ids:
        m |= 1 << bits[n]
    return m


@dataclass
class GraphLayout:
    """Arrays of one graph, shared by all its partitions."""

    plan: GraphPlan
    types: dict[str, int]  # event type -> state
    programs: Programs
    kernel_plan: PosPlan | NegPlan
    index_specs: list  # IndexSpec per index id (positive graph)
    index_src: list[int]


def _transitions(gp: GraphPlan, bits: dict[int, int], progs: Programs, strings: dict[str, int]):
    t = gp.template
    S = len(t.states)
    by_dst = sorted(gp.transitions, key=lambda tp: tp.dst)
    tr_off = np.zeros(S + 1, dtype=np.int64)
    for tp in by_dst:
        tr_off[tp.dst + 1] += 1
    tr_off = np.cumsum(tr_off)
    tr_src, tr_kind, tr_arg, der_off, der_mask, der_prog = [], [], [], [0], [], []
    specs, idx_src = [], []
    for tp in by_dst:
        tr_src.append(tp.src)
        if tp.path == "total":
            tr_kind.append(K.KIND_TOTAL)
            tr_arg.append(-1)
        elif tp.path == "index":
            tr_kind.append(K.KIND_INDEX)
            tr_arg.append(len(specs))
            specs.append(tp.index)
            idx_src.append(tp.src)
        else:
            tr_kind.append(K.KIND_SCAN)
            tr_arg.append(-1)
        for crossed, conds in tp.derivations:
            der_mask.append(_mask(crossed, bits))
            der_prog.append(progs.add(conds, strings))
        der_off.append(len(der_mask))
    TR = np.zeros((len(tr_src), 3), dtype=np.int64)
    TR[:, K.TR_SRC] = tr_src
    TR[:, K.TR_KIND] = tr_kind
    TR[:, K.TR_ARG] = tr_arg
    DER = np.zeros((len(der_mask), 2), dtype=np.int64)
    DER[:, K.D_MASK] = der_mask
    DER[:, K.D_PROG] = der_prog
    return (tr_off.astype(np.int64), TR, np.array(der_off, dtype=np.int64), DER, specs, idx_src)


def build_negative(gp: GraphPlan, bits: dict[int, int], within: int | None, members,
                   strings: dict[str, int]) -> GraphLayout:
    t = gp.template
    S = len(t.states)
    progs = Programs()
    (tr_off, TR, der_off, DER, _s, _i) = _transitions(gp, bits, progs, strings)
    st_start = np.zeros(S, dtype=np.int64)
    st_end = np.zeros(S, dtype=np.int64)
    for s in t.start:
        st_start[s] = 1
    for s in t.end:
        st_end[s] = 1
    pi = np.zeros(1, dtype=K.NEG_PLAN_SCALARS)
    pi["w"] = within or 0
    pi["ng"] = len(bits)
    kp = NegPlan(pi.view(np.int64), st_start, st_end, tr_off, TR, der_off, DER, *progs.arrays())
    types = {m: st.index for st in t.states for m in members(st.type)}
    return GraphLayout(gp, types, progs, kp, [], [])


@dataclass
class Layout:
    """Everything the kernels need that does not change per partition."""

    plan: GretaPlan
    bits: dict[int, int]  # NOT id -> bit
    positive: GraphLayout
    negatives: list[GraphLayout]  # in plan order (parents first)
    aggs: list[AggSlot]
    attr_slots: list[str]  # aggregated attributes, in slot order
    FI: int
    FF: int
    FM: int
    mmin: np.ndarray
    strings: dict[str, int]
    trail: bool
    lead: bool


def _aggregate_fields(q, t, kinds: dict[str, str]):
    """Where each aggregate of ``q`` lives in a vertex's records (:class:`AggSlot`: ``FI`` integer,
    ``FF`` float and ``FM`` MIN/MAX fields, field 0 the count), the aggregated attributes, and the
    own contributions a vertex of each state adds (rows of ``OWN``, by state from ``own_off``).
    Returns ``(aggs, attr_slots, own_off, OWN, mmin, FI, FF, FM)``."""
    S = len(t.states)
    FI, FF, FM = 1, 0, 0
    mmin: list[int] = []
    aggs: list[AggSlot] = []
    attr_slots: list[str] = []
    own: dict[int, list[tuple[int, int, int, int]]] = {s: [] for s in range(S)}

    def attr_slot(name: str) -> int:
        if name not in attr_slots:
            attr_slots.append(name)
        return attr_slots.index(name)

    for a in q.aggregates:
        states = [st.index for st in t.states if st.var in a.vars]
        if a.is_count_star:
            aggs.append(AggSlot("COUNT", "count", 0))
            continue
        if a.func == "COUNT":
            aggs.append(AggSlot("COUNT", "count", FI))
            for s in states:
                own[s].append((K.OWN_COUNT, FI, -1, -1))
            FI += 1
            continue
        kind = "int" if a.attr == "ts" else kinds.get(a.attr, "int")
        if kind == "str":
            raise DataKindError(f"{a.func}({a.vars[0].split('@')[0]}.{a.attr}): GRETA aggregates "
                                "numbers and booleans; this attribute holds strings")
        slot = attr_slot(a.attr)
        if a.func in ("SUM", "AVG"):
            if kind == "float":
                aggs.append(AggSlot(a.func, kind, FF, FI, slot))
                for s in states:
                    own[s].append((K.OWN_SUM_FLOAT, FF, FI, slot))
                FF += 1
                FI += 1
            else:
                aggs.append(AggSlot(a.func, kind, FI, FI + 1, slot))
                for s in states:
                    own[s].append((K.OWN_SUM_INT, FI, FI + 1, slot))
                FI += 2
        else:
            aggs.append(AggSlot(a.func, kind, FM, -1, slot))
            mmin.append(1 if a.func == "MIN" else 0)
            for s in states:
                own[s].append((K.OWN_MINMAX, FM, -1, slot))
            FM += 1
    own_off, own_rows = [0], []
    for s in range(S):
        for kind, dst, nnz, slot in own[s]:
            own_rows.append((kind, dst, nnz, slot))
        own_off.append(len(own_rows))
    OWN = np.array(own_rows, dtype=np.int64).reshape(len(own_rows), 4)
    return aggs, attr_slots, own_off, OWN, mmin, FI, FF, FM


def _plan_scalars(gplan: GretaPlan, S: int, start: int, end: int, negations: int, FI: int, lead: bool,
                  trail: bool, start_range: tuple[int, int] | None) -> np.ndarray:
    """The positive graph's plan scalars (:data:`._kernels.PLAN_SCALARS`, one record)."""
    q = gplan.query
    mode = {"slide": K.MODE_SLIDE, "total": K.MODE_TOTAL, "emit": K.MODE_EMIT}[q.mode]
    strat = {"skip-till-any-match": K.STRAT_ANY, "skip-till-next-match": K.STRAT_NEXT,
             "contiguous": K.STRAT_CONTIG}[q.strategy]
    slo, shi = K.NEG_INF, K.POS_INF
    if start_range is not None and q.mode == "total":
        slo, shi = start_range
    pi = np.zeros(1, dtype=K.PLAN_SCALARS)
    pi["mode"] = mode
    pi["hasw"] = 1 if q.within is not None else 0
    pi["w"] = q.within or 0
    pi["s"] = q.slide or 1
    pi["strat"] = strat
    pi["slo"] = slo
    pi["shi"] = shi
    pi["ns"] = S
    pi["ng"] = negations
    pi["fi"] = FI
    pi["store"] = 1 if gplan.store else 0
    pi["start"] = start
    pi["end"] = end
    pi["exact"] = 0
    pi["lead"] = 1 if lead else 0
    pi["trail"] = 1 if trail else 0
    pi["suffix"] = 0 if lead else 1
    return pi


def build(gplan: GretaPlan, kinds: dict[str, str], start_range: tuple[int, int] | None) -> Layout:
    """The layout for ``gplan``; ``kinds`` maps aggregated attributes to "int"/"float"/"bool"/"str"."""
    q = gplan.query
    bits = {nid: i for i, nid in enumerate(gplan.negations)}
    strings: dict[str, int] = {}
    gp = gplan.graphs[0]
    t = gp.template
    S = len(t.states)
    (start,) = t.start
    (end,) = t.end
    aggs, attr_slots, own_off, OWN, mmin, FI, FF, FM = _aggregate_fields(q, t, kinds)
    # transitions
    progs = Programs()
    (tr_off, TR, der_off, DER, specs, idx_src) = _transitions(gp, bits, progs, strings)
    ST = np.zeros((S, 4), dtype=np.int64)
    ST[start, K.ST_LEAD] = _mask(t.start[start], bits)
    ST[end, K.ST_TRAIL] = _mask(t.end[end], bits)
    for s in range(S):
        ST[s, K.ST_LOOP] = progs.add(gp.loop_conditions.get(s, []), strings)
    fol = np.zeros(S * S, dtype=np.int64)
    for tp in gp.transitions:
        fol[tp.src * S + tp.dst] = 1
        if tp.path == "total":
            ST[tp.src, K.ST_TOTAL] = 1
    lead = bool(ST[start, K.ST_LEAD])
    trail = bool(ST[end, K.ST_TRAIL])
    pi = _plan_scalars(gplan, S, start, end, len(bits), FI, lead, trail, start_range)
    kp = PosPlan(pi.view(np.int64), ST, fol, tr_off, TR, der_off, DER, np.array(own_off, dtype=np.int64), OWN,
                 np.array(mmin, dtype=np.int64), *progs.arrays())
    types = {m: st.index for st in t.states for m in q.members(st.type)}  # (a concept: its leaf types)
    positive = GraphLayout(gp, types, progs, kp, specs, idx_src)
    negatives = [build_negative(g, bits, q.within, q.members, strings) for g in gplan.graphs[1:]]
    return Layout(gplan, bits, positive, negatives, aggs, attr_slots, FI, FF, FM,
                  np.array(mmin, dtype=np.int64), strings, trail, lead)


def exact_plan(kp: PosPlan) -> PosPlan:
    """The same kernel plan with the exact flag set (object arrays, no limb limit)."""
    pi = kp.pi.copy()
    pi.view(K.PLAN_SCALARS)[0]["exact"] = 1
    return kp._replace(pi=pi)


# Reference: GRETA (PVLDB 2017) Section 3 "GRETA configuration", Section 4.1 (template), Section 6
# (predicates on transitions); aggregate propagation is derived here (the paper defers it to its
# technical report).
