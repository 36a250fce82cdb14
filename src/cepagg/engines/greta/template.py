"""The GRETA template: which event type may follow which in a trend (Algorithm 1).

GRETA compiles a positive Kleene pattern into a finite automaton whose states are the
pattern's event types (each type appears once, so a state *is* a type) and whose transitions
say which event may be adjacent to which in a trend: ``SEQ(Pi, Pj)`` adds
``end(Pi) -> start(Pj)`` and ``Pi+`` adds ``end(Pi) -> start(Pi)``. Every path from a START
to an END event of the runtime graph is then one trend (Theorem 1).

Two things are added to the paper's Algorithm 1 because docs/semantics.md needs them:

* **Which negations a transition crosses.** A ``NOT N`` item of a SEQ constrains the open gap
  between its positive neighbours; when it has no neighbour on one side its scope extends to
  the SEQ's own scope, which for a Kleene body is the previous/next iteration and for the
  whole pattern is the window (leading/trailing negation). Following the Glushkov
  construction, each transition ``x -> y`` is derived at one operator, and the gap between an
  ``x`` event and the next ``y`` event is exactly the scope of the NOT items met between
  ``x``'s atom and ``y``'s atom on the way through that operator: the items trailing every
  SEQ that ``x`` ends, the items between the two SEQ items, the items leading every SEQ that
  ``y`` starts. START states record the negations that reach the pattern's left edge (leading
  negation), END states those reaching its right edge (trailing negation).
* **Derivations.** The same pair of states can be derived at two operators (``x`` ends both
  an inner and an outer Kleene), with different negations and NEXT conditions. A pair of
  events is adjacent when *some* derivation allows it: the match is the same either way
  (match identity is the events in their roles), so the transition keeps every derivation
  and the runtime takes their disjunction.

>>> from cepagg.lang import compile_query
>>> t = build(compile_query("RETURN COUNT(*) PATTERN (SEQ(A+, B))+").pattern)
>>> [s.type for s in t.states], sorted(t.start), sorted(t.end)
(['A', 'B'], [0], [1])
>>> sorted((tr.src, tr.dst, tr.derivations[0].label) for tr in t.transitions)
[(0, 0, '+'), (0, 1, 'SEQ'), (1, 0, '+')]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang.model import Atom, KleeneP, NotP, PNode, SeqP, is_positive_item
from ...lang.printer import pattern_text


class TemplateError(ValueError):
    """The pattern is outside what the template can express (the message says why)."""


@dataclass(frozen=True)
class State:
    """A template state: one atom (event type) of the pattern."""

    index: int
    atom: int
    var: str
    type: str


@dataclass(frozen=True)
class Derivation:
    """One reason why ``src -> dst`` is a transition.

    Attributes:
        label: "SEQ" or "+" (the operator that derives it, as in the paper's Figure 3).
        operator: id of that SeqP/KleeneP node.
        crossed: ids of the NOT items whose scope is the gap between the two events.
        loop_var: X when this is the self-loop of ``X+`` (an atom Kleene): the NEXT(X)
            conditions hold on exactly these pairs of events.
    """

    label: str
    operator: int
    crossed: frozenset[int]
    loop_var: str | None


@dataclass(frozen=True)
class Transition:
    src: int
    dst: int
    derivations: tuple[Derivation, ...]


@dataclass(frozen=True)
class Template:
    """States, transitions and the START/END states of one (sub-)pattern.

    ``start`` maps each START state to the NOT ids reaching the pattern's left edge from it
    (leading negation), ``end`` each END state to those reaching the right edge (trailing).
    """

    states: tuple[State, ...]
    transitions: tuple[Transition, ...]
    start: dict[int, frozenset[int]]
    end: dict[int, frozenset[int]]

    def into(self, state: int) -> list[Transition]:
        return [t for t in self.transitions if t.dst == state]

    def state_of_var(self, var: str) -> State | None:
        for s in self.states:
            if s.var == var:
                return s
        return None

    @property
    def negations(self) -> frozenset[int]:
        """Every NOT id this template refers to (crossed, leading or trailing)."""
        out: set[int] = set()
        for t in self.transitions:
            for d in t.derivations:
                out |= d.crossed
        for s in (self.start, self.end):
            for ids in s.values():
                out |= ids
        return frozenset(out)


# ----------------------------------------------------------------------------------------------


def _nots(items: tuple[PNode, ...]) -> frozenset[int]:
    for i in items:
        if not isinstance(i, NotP):
            raise TemplateError(f"{type(i).__name__} items are not supported by GRETA")
    return frozenset(i.id for i in items)


class _Builder:
    def __init__(self) -> None:
        self.states: list[State] = []
        self.by_atom: dict[int, int] = {}
        self.pairs: dict[tuple[int, int], list[Derivation]] = {}

    def atom(self, a: Atom) -> int:
        if a.type is None:
            raise TemplateError(f"untyped variable {a.var}: GRETA needs typed events")
        for s in self.states:
            if s.type == a.type:
                raise TemplateError(f"event type {a.type} appears twice in one (sub-)pattern; "
                                    "GRETA's template needs each type once")
        s = State(len(self.states), a.id, a.var, a.type)
        self.states.append(s)
        self.by_atom[a.id] = s.index
        return s.index

    def add(self, x: int, y: int, d: Derivation) -> None:
        self.pairs.setdefault((x, y), []).append(d)

    def walk(self, node: PNode) -> tuple[list[tuple[int, frozenset[int]]], list[tuple[int, frozenset[int]]]]:
        """(first, last): states that can start/end ``node`` with the NOTs reaching its edge."""
        if isinstance(node, Atom):
            s = self.atom(node)
            return [(s, frozenset())], [(s, frozenset())]
        if isinstance(node, SeqP):
            groups: list[tuple[PNode | None, tuple[PNode, ...]]] = []
            pending: list[PNode] = []
            for item in node.items:
                if is_positive_item(item):
                    groups.append((item, tuple(pending)))
                    pending = []
                else:
                    pending.append(item)
            if not groups:
                raise TemplateError("a SEQ with only negated items")
            trailing = _nots(tuple(pending))
            parts = []
            for item, before in groups:
                parts.append((self.walk(item), _nots(before)))
            (first0, _), lead = parts[0]
            first = [(s, n | lead) for s, n in first0]
            for ((_, last_i), _), ((first_j, _), mid) in zip(parts, parts[1:]):
                for x, tx in last_i:
                    for y, ly in first_j:
                        self.add(x, y, Derivation("SEQ", node.id, tx | mid | ly, None))
            (_, lastm), _ = parts[-1]
            last = [(s, n | trailing) for s, n in lastm]
            return first, last
        if isinstance(node, KleeneP):
            first, last = self.walk(node.body)
            loop_var = node.body.var if isinstance(node.body, Atom) else None
            for x, tx in last:
                for y, ly in first:
                    self.add(x, y, Derivation("+", node.id, tx | ly, loop_var))
            return first, last
        raise TemplateError(f"{pattern_text(node)} is not supported by GRETA "
                            "(Kleene plus, SEQ and NOT only)")


def build(pattern: PNode) -> Template:
    """Algorithm 1 for ``pattern`` (a positive pattern whose SEQs may hold NOT items).

    NOT items are not entered: each is a sub-pattern of its own (:mod:`.split`); here they
    are only recorded on the transitions whose gap they constrain.
    """
    b = _Builder()
    first, last = b.walk(pattern)
    start: dict[int, frozenset[int]] = {}
    for s, n in first:
        start[s] = start.get(s, frozenset()) | n
    end: dict[int, frozenset[int]] = {}
    for s, n in last:
        end[s] = end.get(s, frozenset()) | n
    transitions = tuple(Transition(x, y, tuple(ds)) for (x, y), ds in sorted(b.pairs.items()))
    return Template(tuple(b.states), transitions, start, end)


# Reference: Poppe et al., "GRETA: Graph-based Real-time Event Trend Aggregation", PVLDB 11(1),
# 2017, Section 4.1 "GRETA Template", Algorithm 1;
# Section 2 Definition 1 (adjacency); negation scopes from docs/semantics.md §4.
