"""The tree engine: join-tree plans with condensed composition behind cepagg's engine protocol.

A flat ``SEQ`` of single-event variables is evaluated by a join tree (:mod:`.plan`): left-deep,
right-deep or bushy, chosen by a cost model from statistics of the first batch (:mod:`.cost`)
or forced with ``tree=``. Each left child keeps its composites in a store (:mod:`.stores`);
when an event binds a position, the composites it completes are formed up to the next store
(:meth:`.join.TreeJoin.materialise`); when it binds the last position it is a trigger and the
root's chain forms the matches that end at it (:meth:`.join.TreeJoin.run`). Conditions are
checked at the lowest node that binds their variables, negations at the lowest node that binds
their gap (leading and trailing ones with the matches).

Stores condense (Li, Wang, Feng, Xue, "Accelerating Sequence Event Detection through Condensed
Composition", about 2010): ``condense="auto"`` switches each store on or off by the paper's
benefit-cost rule on its measured condensation degree (:mod:`.switch`); ``"on"`` and ``"off"``
force it.

Everything about triggers (partitions, windows under WITHIN alone and SLIDE, triggers held back
until a trailing negation's scope has passed, time slices, grouping, match rows and aggregate
folding) is rcep's (:class:`cepagg.engines.rcep.engine.Rcep`): only the join differs. Accepted:
rcep's queries without Kleene plus (:func:`.shape.refusal`). Results equal the reference
evaluator's; match numbers follow the order of discovery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...events import EventBatch
from ...lang.model import Query
from ..rcep.buffers import Buffer
from ..rcep.engine import Rcep, RcepState
from ..reference.evaluate import partition_key
from . import switch
from .cost import SAMPLE, choose_tree, measure
from .join import TreeJoin
from .plan import compile_tree, describe, named_tree
from .shape import refusal
from .stores import Store

NEG_INF = -(2**62)
POLICIES = ("auto", "on", "off")


@dataclass
class TreePartition:
    stores: list  # per plan node: Store (stored nodes) or None
    negs: list  # per negation: Buffer
    last_ts: int = NEG_INF
    pending: list = field(default_factory=list)  # heap (deadline, seq, trigger, window start)

    @property
    def buffers(self) -> list:
        """What rcep's trigger handling hands to the join: here the node stores."""
        return self.stores


@dataclass
class TreeState(RcepState):
    tree: Any = None  # the join tree, chosen at the first batch unless forced


class Tree(Rcep):
    name = "tree"
    compiles = False  # (its own enumeration, not rcep's compiled join)

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        return refusal(query)

    def __init__(self, query: Query, *, tree=None, condense: str = "auto", **kw: Any):
        super().__init__(query, **kw)
        if condense not in POLICIES:
            raise ValueError(f"condense must be one of {', '.join(POLICIES)}, not {condense!r}")
        self.condense = condense
        k = len(self.shape.positions)
        self.forced = None if tree is None or tree == "auto" else named_tree(tree, k)
        self._joins: dict = {}
        self.chosen_cost: float | None = None

    # -- the plan ---------------------------------------------------------------------------

    def join_for(self, tree) -> TreeJoin:
        j = self._joins.get(tree)
        if j is None:
            j = self._joins[tree] = TreeJoin(self.shape, compile_tree(self.shape, tree), self.w)
        return j

    def _choose(self, events: list):
        if self.forced is not None:
            return self.forced
        q = self.query
        stats = measure(self.shape, events, self._fits_pos, lambda e: partition_key(q, e), self.w)
        tree, self.chosen_cost = choose_tree(self.shape, stats, self.condense != "off")
        return tree

    def describe(self, tree) -> str:
        return describe(tree, [p.var.split("@")[0] for p in self.shape.positions])

    @property
    def evaluations(self) -> int:
        """Condition evaluations on candidate pairs so far (all trees this engine ran)."""
        return sum(j.evaluations for j in self._joins.values())

    # -- protocol -----------------------------------------------------------------------------

    def new_state(self) -> TreeState:
        return TreeState()

    def _new_partition(self, join: TreeJoin) -> TreePartition:
        force = self.condense == "on"
        stores = [Store(n.terms, condensed=force) if n.stored else None for n in join.plan.nodes]
        return TreePartition(stores, [Buffer() for _ in self.shape.negations])

    def process(self, state: TreeState, batch: EventBatch) -> list[tuple]:
        out: list[tuple] = []
        q = self.query
        k = len(self.shape.positions)
        events = batch.events()
        if state.tree is None:
            if not events:
                return out
            state.tree = self._choose(events[:SAMPLE])
        join = self.join_for(state.tree)
        plan = join.plan
        tops = [plan.top(p) for p in range(k)]
        policy = self.condense
        for e in events:
            key = partition_key(q, e)
            if key is None:
                continue
            part = state.partitions.get(key)
            if part is None:
                part = state.partitions[key] = self._new_partition(join)
            if not self._admit(state, key, part, e, out):
                continue
            trigger = False
            for p, fits in enumerate(self._fits_pos):
                if not fits(e):
                    continue
                if p == k - 1:
                    trigger = True
                    continue
                store = join.materialise(part.stores, part.negs, e, p, max(e.ts - self.w + 1, self.lo))
                if store is not None and switch.due(store):
                    switch.review(store, e.ts - self.keep + 1, policy, bool(tops[p].parent.checks))
            if trigger:
                self._trigger(state, key, part, e, out)
        return out

    def _expire(self, part: TreePartition, horizon: int) -> None:
        """Drop negation events before ``horizon`` (the stores drop theirs when reviewed)."""
        for b in part.negs:
            b.drop_before(horizon)

    # rcep's _recompute calls ``self.join.run(part.buffers, part.negs, trigger, steps, ...)``:
    # here the join is the state's tree, and a partition's ``buffers`` are its node stores

    def _recompute(self, state: TreeState, key: tuple, part: TreePartition, e, wlo, out: list) -> None:
        self.join = self.join_for(state.tree)
        super()._recompute(state, key, part, e, wlo, out)

    def _steps_for(self, part, lo: int, hi: int) -> None:
        return None  # the tree's join has no per-trigger steps
