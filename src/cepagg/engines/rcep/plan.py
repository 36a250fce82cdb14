"""The join order of one recomputation and where each condition and negation is checked.

When an event that can bind the last variable arrives, the matches ending there are found by
binding the variables one after the other (a left-deep join whose first relation is the trigger
event). The order is chosen per trigger from one statistic, the number of buffered events each
variable could take inside the window: the trigger's position first, then the singleton
variables from the smallest buffer to the largest, then the Kleene variables likewise. Small
buffers first keeps the fan-out of the early levels low; Kleene variables come last because a
Kleene variable between two bound neighbours is expanded only over the events between them (and
its expansion is exponential). Ties go to the position nearer the trigger, so with equal sizes
the join runs backwards from the trigger. The rule is deliberately simple: no cost model, no
selectivity estimate of the conditions.

Every binding respects the time order of the positions already bound: a variable takes events
strictly after its nearest bound neighbour on the left and strictly before its nearest bound
neighbour on the right. A condition is checked as soon as every variable it reads is bound
(at the step of the last of them); a negation as soon as its two neighbours and the variables
its conditions read are bound. A Kleene variable is expanded backwards from its last event, so
conditions on it are checked event by event while the run grows (NEXT on each new pair, plain
references on each new event), except those reading FIRST or LAST of it, which are checked once
the run is complete.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang.model import Condition
from ..reference.conditions import Check
from .shape import Shape, refs_to


@dataclass(frozen=True)
class Step:
    pos: int
    var: str
    kleene: bool
    left: int | None  # nearest position bound before this step, on the left (None: none)
    right: int | None  # same on the right (None only for the trigger's step)
    on_complete: tuple[Check, ...]  # checked once the variable is bound (its run complete)
    per_event: tuple[Check, ...]  # Kleene: checked for each event added to the run
    negations: tuple[int, ...]  # indexes into Shape.negations, checked once bound
    same: tuple[str, ...]  # Kleene: attributes every event of the run shares (equivalences)


def choose_order(shape: Shape, sizes: list[int]) -> tuple[int, ...]:
    """Positions in binding order: the trigger's (last) first, then by (Kleene, buffer size,
    distance from the trigger)."""
    k = len(shape.positions)
    rest = sorted(range(k - 1), key=lambda p: (shape.positions[p].kleene, sizes[p], -p))
    return (k - 1, *rest)


def compile_steps(shape: Shape, order: tuple[int, ...], trailing_needs_first: bool) -> tuple[Step, ...]:
    """The steps of ``order``. ``trailing_needs_first``: the end of a trailing negation's gap
    depends on the match's first event (WITHIN alone: first + w)."""
    k = len(shape.positions)
    step_of = {p: j for j, p in enumerate(order)}
    var_pos = {p.var: p.index for p in shape.positions}

    def last_step(positions) -> int:
        return max(step_of[p] for p in positions)

    on_complete: dict[int, list[Condition]] = {j: [] for j in range(k)}
    per_event: dict[int, list[Condition]] = {j: [] for j in range(k)}
    for c in shape.cross:
        j = last_step(var_pos[v] for v in c.vars)
        pos = shape.positions[order[j]]
        if pos.kleene and not refs_to(c, pos.var):
            per_event[j].append(c)
        else:
            on_complete[j].append(c)
    negs: dict[int, list[int]] = {j: [] for j in range(k)}
    for i, n in enumerate(shape.negations):
        needed = {p for p in (n.gap - 1, n.gap) if 0 <= p < k} | {var_pos[v] for v in n.mentions}
        if n.gap == k and trailing_needs_first:
            needed.add(0)
        negs[last_step(needed)].append(i)
    steps = []
    for j, p in enumerate(order):
        bound = order[:j]
        left = max((q for q in bound if q < p), default=None)
        right = min((q for q in bound if q > p), default=None)
        pos = shape.positions[p]
        steps.append(Step(p, pos.var, pos.kleene, left, right, tuple(map(Check, on_complete[j])),
                          tuple(map(Check, per_event[j])), tuple(negs[j]),
                          shape.same.get(pos.var, ()) if pos.kleene else ()))
    return tuple(steps)
