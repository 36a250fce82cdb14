"""A join tree over the positions of a flat SEQ, and where each condition and negation is checked.

A tree is written as nested pairs of positions: ``((0, 1), 2)`` is the left-deep plan of three
variables, ``(0, (1, 2))`` the right-deep one, ``((0, 1), (2, 3))`` a bushy one. Every node
covers a contiguous run of positions, so a node's left child always ends before its right child
begins in time.

In stream order a node's new composites come only from new composites of its right child (they
end at the newest event) joined with the stored composites of its left child (ZStream, Mei and
Madden, SIGMOD 2009; the condensed-composition paper's batch-iterator model with batch size 1).
So only left children keep a store; a right child's composites are joined the moment they are
formed and then dropped. The nodes whose right end is the last position form the root's chain:
it runs when an event binds the last variable (a trigger), and its composites are the matches.

A condition is checked at the lowest node whose subtree binds every variable it reads; a
negation between positions ``g - 1`` and ``g`` at the lowest node binding both and the
variables its conditions read (its gap lies between them, so every event it looks for has
already arrived). A leading or trailing negation depends on the match's window, so it is
checked with the matches, at the root.

The condensation terms of a stored node are the attributes its parent's conditions read from
it: the stored composites that agree on them pass or fail the parent's conditions together.
The paper takes the attributes read anywhere above the node, because its condensed composites
are themselves condensed again higher up; here the members of a group are explicit composites,
so the parent alone decides (the paper's suggested refinement, Sec. VI).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ...lang import ast
from ...lang.expr import holds
from ...lang.model import Condition
from ..rcep.shape import Shape

Tree = object  # an int (a position) or a pair of trees


@dataclass(frozen=True)
class PairCheck:
    """A condition between singleton variables, ready for a composite (a tuple of events).

    With one event per variable, the reference's check (every combination of the bound events,
    :class:`cepagg.engines.reference.conditions.Check`) is one evaluation of the expression
    (NEXT, FIRST and LAST apply to Kleene variables only, which tree plans refuse)."""

    condition: Condition
    slots: tuple  # (var, index into the composite) for every variable it reads

    def holds(self, comp: tuple) -> bool:
        ev = {v: comp[i] for v, i in self.slots}
        return holds(self.condition.expr, lambda n: ev[n.var].get(n.name))


@dataclass
class Node:
    id: int
    lo: int  # first position covered
    hi: int  # last position covered
    left: "Node | None" = None
    right: "Node | None" = None
    parent: "Node | None" = None
    checks: tuple = ()  # PairChecks on the joined composite (indexes relative to ``lo``)
    negations: tuple = ()  # indexes into Shape.negations checked on the joined composite
    terms: tuple = ()  # stored nodes: (index relative to lo, attribute) the parent's checks read
    read: frozenset = frozenset()  # attributes (position, attribute) its checks read

    @property
    def stored(self) -> bool:
        return self.parent is not None and self.parent.left is self

    @property
    def leaf(self) -> bool:
        return self.left is None


@dataclass
class TreePlan:
    tree: Tree
    nodes: list = field(default_factory=list)
    root: Node | None = None
    chains: list = field(default_factory=list)  # per position: internal nodes from it upwards
    edge_negations: tuple = ()  # leading and trailing negations, checked on each match

    def top(self, pos: int) -> Node:
        """The stored node an event of ``pos`` ends up in (the root for the last position)."""
        chain = self.chains[pos]
        return chain[-1] if chain else self.nodes[pos]


def positions_of(tree) -> list[int]:
    return [tree] if isinstance(tree, int) else positions_of(tree[0]) + positions_of(tree[1])


def valid(tree, k: int) -> bool:
    """``tree`` covers 0..k-1 in order, each node a contiguous run."""
    try:
        return positions_of(tree) == list(range(k)) and _wellformed(tree)
    except TypeError:
        return False


def _wellformed(tree) -> bool:
    if isinstance(tree, int):
        return True
    return isinstance(tree, tuple) and len(tree) == 2 and all(_wellformed(t) for t in tree)


@lru_cache(maxsize=None)
def all_trees(lo: int, hi: int) -> tuple:
    """Every binary tree over positions lo..hi."""
    if lo == hi:
        return (lo,)
    return tuple((a, b) for m in range(lo, hi) for a in all_trees(lo, m) for b in all_trees(m + 1, hi))


def left_deep(k: int):
    t = 0
    for p in range(1, k):
        t = (t, p)
    return t


def right_deep(k: int):
    t = k - 1
    for p in range(k - 2, -1, -1):
        t = (p, t)
    return t


def bushy(lo: int, hi: int):
    """The balanced tree: halves joined at each level."""
    if lo == hi:
        return lo
    m = (lo + hi) // 2
    return (bushy(lo, m), bushy(m + 1, hi))


def named_tree(name, k: int):
    """A tree from an option: ``left``, ``right``, ``bushy`` or an explicit nested pair."""
    if name == "left":
        return left_deep(k)
    if name == "right":
        return right_deep(k)
    if name == "bushy":
        return bushy(0, k - 1)
    if not valid(name, k):
        raise ValueError(f"{name!r} is not a join tree over positions 0..{k - 1}")
    return name


def compile_tree(shape: Shape, tree) -> TreePlan:
    k = len(shape.positions)
    plan = TreePlan(tree)
    leaves = [Node(p, p, p) for p in range(k)]
    plan.nodes.extend(leaves)

    def build(t) -> Node:
        if isinstance(t, int):
            return leaves[t]
        left, right = build(t[0]), build(t[1])
        n = Node(len(plan.nodes), left.lo, right.hi, left, right)
        left.parent = right.parent = n
        plan.nodes.append(n)
        return n

    plan.root = build(tree)
    var_pos = {p.var: p.index for p in shape.positions}

    def lowest(positions: set[int]) -> Node:
        n = leaves[min(positions)]
        while not (n.lo <= min(positions) and max(positions) <= n.hi):
            n = n.parent
        return n

    checks: dict[int, list] = {}
    for c in shape.cross:
        n = lowest({var_pos[v] for v in c.vars})
        checks.setdefault(n.id, []).append(c)
    negs: dict[int, list] = {}
    edge = []
    for i, neg in enumerate(shape.negations):
        if neg.gap in (0, k):
            edge.append(i)
            continue
        n = lowest({neg.gap - 1, neg.gap} | {var_pos[v] for v in neg.mentions})
        negs.setdefault(n.id, []).append(i)
    plan.edge_negations = tuple(edge)
    for n in plan.nodes:
        cs = checks.get(n.id, ())
        n.checks = tuple(PairCheck(c, tuple((v, var_pos[v] - n.lo) for v in sorted(c.vars)))
                         for c in cs)
        n.negations = tuple(negs.get(n.id, ()))
        n.read = frozenset((var_pos[x.var], x.name) for c in cs for x in c.expr.walk()
                           if isinstance(x, ast.Attr) and x.var is not None)
    for n in plan.nodes:
        if n.stored:
            n.terms = tuple(sorted((p - n.lo, a) for p, a in n.parent.read if n.lo <= p <= n.hi))
    for p in range(k):
        chain, n = [], leaves[p]
        while n.parent is not None and n.parent.right is n:
            n = n.parent
            chain.append(n)
        plan.chains.append(chain)
    return plan


def describe(tree, names: list[str]) -> str:
    """``((0, 1), 2)`` with the variables' names: ``((a b) c)``."""
    if isinstance(tree, int):
        return names[tree]
    return f"({describe(tree[0], names)} {describe(tree[1], names)})"
