"""What GRETA can answer, and how: refusals, predicate classes, aggregation paths.

The GRETA Query Analyzer (Section 3, Figure 2) splits the pattern (:mod:`.split`), builds a
template per sub-pattern (:mod:`.template`) and classifies predicates:

* **vertex predicates** -- local conditions (one variable) and stream filters (unqualified
  attributes) -- filter events once per batch (:mod:`.vector`); unqualified equivalence
  attributes and GROUP BY attributes **partition** the stream; an equivalence that ties an
  attribute across every positive variable (``[P.vehicle]`` in Q3 with ``P`` the only one, or
  A-Seq's ``A.id = B.id = C.id``) **sub-partitions** the positive graph while negated events
  stay in the whole partition;
* **edge predicates** -- ``NEXT(X)`` conditions -- hold between consecutive events of one
  run of ``X+``, i.e. on the template's ``X -> X`` self-loop.

Each transition then gets its *aggregation path* (beyond the paper, see :mod:`.index`):

==========  ==============================================================================
``total``   no edge predicate and no negation in the gap: the predecessor sum is a
            running total per state, O(1) per event and bucket
``index``   one comparison ``f(X) θ g(NEXT(X))``, θ in ``< <= > >= =``, each side an
            expression of one event: a Fenwick tree over the ranks of ``f``, O(log n) (with a
            window in time, partitions with few events per window scan, re-chosen per
            partition and batch: :func:`prefers_scan`, :mod:`.switch`)
``scan``    anything else (other edge conditions, negation crossing the transition,
            several derivations, skip-till-next-match, contiguous): every stored
            predecessor is examined, as in the paper, with the condition compiled to a
            stack program (:mod:`._program`)
==========  ==============================================================================

What cannot be answered by a graph of adjacent events is refused with the reason
(:func:`refusal`), so the planner moves on to the reference evaluator.

>>> from cepagg.lang import compile_query
>>> q = compile_query("RETURN COUNT(*) PATTERN Stock S+ WHERE [company] AND S.price > NEXT(S).price")
>>> refusal(q) is None, [t.path for t in compile_plan(q).graphs[0].transitions]
(True, ['index'])
>>> refusal(compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b+) WHERE a.x < b.x"))
'condition a.x < b.x relates two pattern variables; GRETA keeps only adjacent-event (NEXT) conditions'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...lang import ast
from ...lang.model import Condition, Query
from .split import SubPattern, split
from .template import Template, TemplateError

INDEX_OPS = ("<", "<=", ">", ">=", "=")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
MAX_NEGATIONS = 62


@dataclass
class IndexSpec:
    """An indexed transition ``x -> x``: predecessors keyed by ``pkey``, the new event by
    ``ekey``; valid predecessors have ``pkey op ekey``."""

    op: str
    pkey: ast.Expr
    ekey: ast.Expr
    text: str


@dataclass
class TransitionPlan:
    src: int
    dst: int
    path: str  # "total" | "index" | "scan"
    # per derivation: (NOT ids crossed, conditions that must hold between the two events)
    derivations: list[tuple[frozenset[int], list[ast.Expr]]]
    index: IndexSpec | None = None


@dataclass
class GraphPlan:
    """One graph: the positive pattern (``not_id`` None) or a negative sub-pattern."""

    sub: SubPattern
    local: dict[int, list[ast.Expr]]  # state -> local conditions
    transitions: list[TransitionPlan]
    loop_conditions: dict[int, list[ast.Expr]]  # state -> its NEXT conditions (next-match)

    @property
    def template(self) -> Template:
        return self.sub.template

    @property
    def not_id(self) -> int | None:
        return self.sub.not_id


@dataclass
class GretaPlan:
    query: Query
    graphs: list[GraphPlan]  # positive first, then negatives parents first
    negations: list[int]  # NOT ids, the index is the negation's bit
    sub_partition: tuple[str, ...]  # attributes shared by every positive event
    store: bool  # the positive graph keeps its vertices (scan paths)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        lines = []
        for g in self.graphs:
            t = g.template
            head = ("positive" if g.not_id is None
                    else f"negative (previous {g.sub.previous}, following {g.sub.following})")
            lines.append(f"graph {g.sub.name}: {head}")
            for tp in g.transitions:
                a, b = t.states[tp.src].type, t.states[tp.dst].type
                extra = f" on {tp.index.text}" if tp.index else ""
                lines.append(f"  {a} -> {b}: {tp.path}{extra}")
        if self.sub_partition:
            lines.append("sub-partition by " + ", ".join(self.sub_partition))
        return "\n".join(lines + self.notes)


# ----------------------------------------------------------------------------------------------


def _positive_vars(q: Query) -> list[str]:
    return [v.name for v in q.variables.values() if not v.negated]


def _equality_chain(c: Condition) -> tuple[str, list[str]] | None:
    """``A.id = B.id (= C.id ...)``: (attribute, variables) when the condition is exactly that."""
    e = c.expr
    if not isinstance(e, ast.Compare) or any(op != "=" for op in e.ops):
        return None
    names = set()
    variables = []
    for o in e.operands:
        if not isinstance(o, ast.Attr) or o.var is None:
            return None
        names.add(o.name)
        variables.append(o.var)
    if len(names) != 1:
        return None
    return names.pop(), variables


def _shared_attributes(q: Query) -> tuple[dict[str, set[str]], list[Condition]]:
    """attribute -> positive variables tied to share it; and the conditions this consumed."""
    shared: dict[str, set[str]] = {}
    for v, a in q.equivalences:
        shared.setdefault(a, set()).add(v)
    used = []
    for c in q.conditions:
        if c.kind == "general" and c.scope is None:
            chain = _equality_chain(c)
            if chain is not None and all(not q.variables[v].negated for v in chain[1]):
                shared.setdefault(chain[0], set()).update(chain[1])
                used.append(c)
    return shared, used


def _split_sides(e: ast.Expr, var: str) -> IndexSpec | None:
    if not isinstance(e, ast.Compare) or len(e.ops) != 1 or e.ops[0] not in INDEX_OPS:
        return None
    left, right = e.operands

    def side(x: ast.Expr) -> str | None:
        kinds = set()
        for n in x.walk():
            if isinstance(n, ast.Attr):
                kinds.add("p")
            elif isinstance(n, ast.Ref):
                if n.kind != "NEXT" or n.var != var:
                    return None
                kinds.add("e")
        if len(kinds) > 1:
            return None
        return kinds.pop() if kinds else "c"

    ls, rs = side(left), side(right)
    if ls is None or rs is None:
        return None
    if ls in ("p", "c") and rs in ("e", "c") and not (ls == "c" and rs == "c"):
        return IndexSpec(e.ops[0], left, right, "")
    if ls in ("e", "c") and rs in ("p", "c"):
        return IndexSpec(_FLIP[e.ops[0]], right, left, "")
    return None


def refusal(q: Query) -> str | None:
    """Why GRETA cannot evaluate ``q`` (None when it can)."""
    try:
        _check(q)
    except _Refused as r:
        return str(r)
    return None


class _Refused(Exception):
    pass


def _check(q: Query) -> list[SubPattern]:
    if q.returns_matches:
        raise _Refused("GRETA aggregates trends without constructing them; returning the "
                       "matches themselves needs an enumerating engine")
    if q.within_events is not None:
        raise _Refused("WITHIN n EVENTS (count windows) is not supported by GRETA")
    try:
        subs = split(q.pattern)
    except TemplateError as e:
        raise _Refused(str(e)) from None
    for s in subs:
        types = [st.type for st in s.template.states]
        for i, a in enumerate(types):
            for b in types[i + 1:]:
                if q.members(a) & q.members(b):
                    raise _Refused(f"types {a} and {b} of one (sub-)pattern overlap in the concept hierarchy; "
                                   "GRETA's template needs each event type in one state")
    if len(subs) - 1 > MAX_NEGATIONS:
        raise _Refused(f"more than {MAX_NEGATIONS} negated sub-patterns")
    by_not = {s.not_id: s for s in subs}
    for s in subs[1:]:
        if any(s.template.start.values()) or any(s.template.end.values()):
            raise _Refused(f"negation at the edge of the negated sub-pattern {s.name} (its scope "
                           "would depend on the enclosing gap); only negation between positive "
                           "items is supported inside a NOT")
    shared, consumed = _shared_attributes(q)
    for c in q.conditions:
        if c in consumed:
            continue
        if c.kind == "general":
            if len(c.vars) > 1:
                raise _Refused(f"condition {c.text} relates two pattern variables; GRETA keeps "
                               "only adjacent-event (NEXT) conditions")
            raise _Refused(f"condition {c.text} uses FIRST/LAST, which is not a condition on "
                           "adjacent events")
        for v in c.vars:
            if q.variables[v].scope != c.scope:
                raise _Refused(f"condition {c.text} ties a variable to a negation it is not part of")
        if c.kind == "edge":
            sub = by_not[c.scope]
            state = sub.template.state_of_var(c.next_var)
            loops = [d for t in sub.template.transitions for d in t.derivations if d.loop_var == c.next_var]
            if state is None or not loops:
                raise _Refused(f"NEXT({c.next_var}) in {c.text}: GRETA pairs adjacent events of "
                               f"{c.next_var}+ only when the Kleene plus is on {c.next_var} itself")
    positives = set(_positive_vars(q))
    for attr, vs in shared.items():
        if any(q.variables[v].negated for v in vs):
            raise _Refused(f"equivalence on {attr} includes a negated variable")
        if vs >= positives:
            continue
        tied = vs & positives
        if len(tied) == 1:
            (v,) = tied
            var = q.variables[v]
            if not var.multi:
                continue
            if var.kleene is not None and not var.nested_kleene and \
                    q.node(var.kleene).body.id == var.atoms[0]:
                continue  # one run of X+: the same as X.a = NEXT(X).a
        raise _Refused(f"equivalence on {attr} ties only some of the pattern's variables; GRETA "
                       "can use it only when it holds across every event of a trend")
    for g in q.group_by:
        if g.var is None:
            continue
        vs = shared.get(g.attr, set()) | {g.var}
        if not (vs >= positives and (g.var in shared.get(g.attr, set()) or positives == {g.var})):
            raise _Refused(f"GROUP BY {g.var.split('@')[0]}.{g.attr}: GRETA needs every event of a "
                           f"trend to share {g.attr} (an equivalence over all pattern variables)")
    if q.strategy != "skip-till-any-match" and q.equivalences:
        raise _Refused("qualified equivalences with a selection strategy other than "
                       "skip-till-any-match")
    return subs


def _single_run_equalities(q: Query, shared: dict[str, set[str]]) -> dict[str, list[ast.Expr]]:
    """``[X.a]`` for one run of ``X+`` (and no other variable): ``X.a = NEXT(X).a``."""
    positives = set(_positive_vars(q))
    out: dict[str, list[ast.Expr]] = {}
    for attr, vs in shared.items():
        if vs >= positives:
            continue
        for v in vs & positives:
            if q.variables[v].multi:
                out.setdefault(v, []).append(
                    ast.Compare(("=",), (ast.Attr(v, attr), ast.Ref("NEXT", v, attr))))
    return out


def compile_plan(q: Query, paths: str = "index") -> GretaPlan:
    """The plan of an accepted query (call :func:`refusal` first). ``paths``: "index" as
    described above; "no-index" scans where "index" would index (the path of sparse
    partitions under a window in time, :func:`prefers_scan`, :mod:`.switch`); "scan" gives
    every transition the scan path (to test the paths against each other)."""
    if paths not in ("index", "no-index", "scan"):
        raise ValueError(f"paths={paths!r}: expected 'index', 'no-index' or 'scan'")
    subs = _check(q)
    shared, _ = _shared_attributes(q)
    positives = set(_positive_vars(q))
    sub_partition = tuple(sorted(a for a, vs in shared.items() if vs >= positives and
                                 a not in q.partition_by))
    extra_edges = _single_run_equalities(q, shared)
    for g in q.group_by:
        if g.var is not None and g.attr not in sub_partition and g.attr not in q.partition_by:
            sub_partition = tuple(sorted(set(sub_partition) | {g.attr}))
    negations = [s.not_id for s in subs[1:]]
    strategy_any = q.strategy == "skip-till-any-match"
    graphs: list[GraphPlan] = []
    store = not strategy_any
    for s in subs:
        t = s.template
        local: dict[int, list[ast.Expr]] = {st.index: [] for st in t.states}
        next_conds: dict[str, list[ast.Expr]] = {}
        for c in q.conditions:
            if c.scope != s.not_id or c.kind == "general":
                continue
            if c.kind == "local":
                (v,) = c.vars
                st = t.state_of_var(v)
                if st is not None:
                    local[st.index].append(c.expr)
            elif c.kind == "edge":
                next_conds.setdefault(c.next_var, []).append(c.expr)
        if s.not_id is None:
            for v, conds in extra_edges.items():
                next_conds.setdefault(v, []).extend(conds)
        transitions = []
        for tr in t.transitions:
            ders = []
            for d in tr.derivations:
                conds = list(next_conds.get(d.loop_var, [])) if d.loop_var else []
                ders.append((d.crossed, conds))
            path = "scan"
            spec = None
            if s.not_id is None and strategy_any and paths != "scan":
                if any(not crossed and not conds for crossed, conds in ders):
                    path = "total"
                elif len(ders) == 1 and not ders[0][0] and len(ders[0][1]) == 1:
                    spec = _split_sides(ders[0][1][0], t.states[tr.src].var)
                    if spec is not None and paths == "index":
                        spec.text = _text(q, ders[0][1][0])
                        path = "index"
            if path == "scan" and s.not_id is None:
                store = True
            transitions.append(TransitionPlan(tr.src, tr.dst, path, ders, spec))
        loop_conditions = {st.index: list(next_conds.get(st.var, [])) for st in t.states}
        graphs.append(GraphPlan(s, local, transitions, loop_conditions))
    return GretaPlan(q, graphs, negations, sub_partition, store)


#: events per window and partition below which a WITHIN-alone query scans (docs/benchmarks.md,
#: ``--only within_alone_paths``)
SPARSE = 150

#: events per window and partition below which a sliding-window query scans (docs/benchmarks.md,
#: ``--only slide_paths``: in three runs on Q1 the scan was ahead at 16 and 53 events per window
#: and company, the index at 526, and either at 158 and 316)
SPARSE_SLIDE = 200


def per_start_buckets(q: Query) -> bool:
    """WITHIN (in time) without SLIDE: every start time is its own bucket."""
    return q.within is not None and q.mode != "slide" and q.within_events is None


def may_prefer_scan(q: Query) -> bool:
    """A window in time bounds the predecessors a scan visits: for such a query a sparse
    partition may be better served by the scan (:func:`prefers_scan`)."""
    return q.within is not None and q.within_events is None


def prefers_scan(q: Query, events: int, span: int, partitions: int, threshold: float | None = None) -> bool:
    """Whether a partition of this query is better served by the scan than by the index, judged
    from a batch of ``events`` (of the query's types) over ``span`` time units in ``partitions``
    partitions: the path a new partition starts on (:class:`.switch.Router` re-chooses it at
    every batch, with ``threshold`` for the default below). Under WITHIN without SLIDE every
    start time is its own bucket, so an event costs Theta(events in window) on either path;
    below :data:`SPARSE` events per window the scan, with less work per bucket, is faster.
    With SLIDE an event costs the index O(log n) per bucket and the scan Theta(events in
    window): with few events per window and partition the scan's plain loop still wins (below
    :data:`SPARSE_SLIDE`). The risks are not alike: the index is 1.1 to 1.7 times as slow where
    the scan wins (Q1, and one company under WITHIN alone), the scan fifty times as slow at
    10^4 events per window on one partition -- so a sliding-window query starts on the scan
    only on the evidence of a batch spanning a whole window (a short micro-batch of a stream
    starts on the index).
    ``partitions`` counts partition keys, not sub-partitions. Without a window in time the
    index is the one that scales."""
    if not may_prefer_scan(q):
        return False
    sliding = not per_start_buckets(q)
    if sliding and span < q.within:
        return False
    per_window = events / max(1, partitions) * q.within / max(1, span)  # the batch's rate
    if threshold is None:
        threshold = SPARSE_SLIDE if sliding else SPARSE
    return per_window < threshold


def path_rule(q: Query) -> str | None:
    """What ``cepagg explain`` says of the choice between the index and the scan (None where
    there is none to make: no indexed transition, or no window in time)."""
    p = compile_plan(q)
    indexed = [t for t in p.graphs[0].transitions if t.path == "index"]
    if not indexed:
        return None
    on = ", ".join(t.index.text for t in indexed)
    if not may_prefer_scan(q):
        return f"predecessors: ordered index on {on} (no window in time: the index is the one that scales)"
    sliding = not per_start_buckets(q)
    t = SPARSE_SLIDE if sliding else SPARSE
    from .switch import UP  # (the rule's own module)

    first = (f"fewer than {t} events per window on a first batch spanning a window" if sliding
             else f"fewer than {t} events per window on its first batch")
    return (f"predecessors: ordered index on {on}, or a scan of the stored ones, chosen per "
            f"partition and re-chosen at every batch: a partition starts on the scan with {first}; "
            f"it moves to the index at {t * UP:g} or more events per window and back to the scan "
            f"below {t / UP:.4g} averaged over a window (once every vertex it still needs is kept)")


def _text(q: Query, e: ast.Expr) -> str:
    for c in q.conditions:
        if c.expr is e:
            return c.text
    return "an equivalence"


# Reference: GRETA (PVLDB 2017): Section 3 (Query Analyzer), Section 6
# ("Predicates": vertex and edge predicates, equivalence predicates partition the stream),
# Section 7 (Vertex Trees for range queries), Section 8 (the O(n) predecessor scan).
