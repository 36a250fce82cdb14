"""``neel-iterative``: NEEL's iterative top-down nested execution, the baseline of its chapter.

Mo Liu, "Extending Event Sequence Processing: New Models and Optimization Techniques", PhD
dissertation, WPI, 2012, §5.1.4 (after nested SQL execution): the outer query is evaluated
first; for every outer partial result -- an assignment of events to the outer SEQ's positive
*events* -- a constrained window, the gap between the positive neighbours, is passed down to
each sub-query, which computes all of its results in that window, recursively at any depth; the
outer result is joined with the results of generating sub-queries and dropped when a ``!`` child
returned something or an ``∃`` child nothing. Its two costs, which the normal form removes, are
kept on purpose: outer candidates are built before the children filter them, and every child is
recomputed, in full, for every outer candidate (no caching across candidates, no early stop on
the first match of a negated child).

It runs every query the language accepts (nested or not, in or out of the rewritable class), so
it is the engine for queries that cannot be normalised. The semantics are those of
docs/semantics.md: it shares the reference evaluator's scopes, conditions, windows, result modes
and aggregation, and differs only in how matches are searched, so it returns exactly what the
reference returns (tests/engines/test_neel_iterative.py). Like the reference it keeps every
event and recomputes: for tests, baselines and small inputs.
"""

from __future__ import annotations

import itertools
from typing import Iterator

from ..lang.model import Atom, ExistsP, NotP, PNode, SeqP, is_positive_item
from .base import Recomputing
from .reference.evaluate import Evaluation
from .reference.matches import M, Matcher, events_of


class IterativeMatcher(Matcher):
    """Matches found top-down: outer events first, sub-patterns inside the gaps they leave."""

    def gen(self, node: PNode, lo: int, hi: int) -> tuple[M, ...]:
        # no memo: a sub-query is recomputed for every outer candidate (the baseline's cost)
        return tuple(self._gen(node, lo, hi))

    def _gen(self, node: PNode, lo: int, hi: int) -> Iterator[M]:
        if isinstance(node, SeqP) and lo < hi:
            yield from self._seq(node, lo, hi)
        else:
            yield from super()._gen(node, lo, hi)

    def _seq(self, node: SeqP, lo: int, hi: int) -> Iterator[M]:
        items = [i for i in node.items if is_positive_item(i)]
        outer = [k for k, i in enumerate(items) if isinstance(i, Atom)]
        for events in self._outer(items, outer, 0, lo, hi):
            # the constrained window of each run of sub-patterns: between its outer neighbours
            chosen = dict(zip(outer, events))
            runs, k = [], 0
            while k < len(items):
                if k in chosen:
                    runs.append([chosen[k]])
                    k += 1
                    continue
                j = k
                while j < len(items) and j not in chosen:
                    j += 1
                g_lo = chosen[k - 1].end + 1 if k > 0 else lo
                g_hi = chosen[j].start if j < len(items) else hi
                runs.append(list(self._chain(items[k:j], 0, g_lo, g_hi)))
                k = j
            for combo in itertools.product(*runs):
                parts = tuple(p for part in combo for p in (part if isinstance(part, tuple) else (part,)))
                yield M(node, parts[0].start, parts[-1].end, parts)

    def _outer(self, items: list[PNode], outer: list[int], n: int, lo: int, hi: int
               ) -> Iterator[tuple[M, ...]]:
        """Events for the outer SEQ's positive event items, in order, leaving at least one time
        unit for each sub-pattern between two of them."""
        if n == len(outer):
            yield ()
            return
        k = outer[n]
        before = k - (outer[n - 1] + 1 if n > 0 else 0)  # sub-patterns between the previous one and k
        for m in super()._gen(items[k], lo + before, hi):
            for rest in self._outer(items, outer, n + 1, m.end + 1, hi):
                yield (m,) + rest

    def exists(self, item: NotP | ExistsP, lo: int, hi: int, env) -> bool:
        """Compute every result of the child in the window, then test (no early stop)."""
        found = 0
        for n in self.gen(item.body, lo, hi):
            if self._child_result(item, n, lo, hi, env):
                found += 1
        return found > 0

    def _child_result(self, item, n: M, lo: int, hi: int, env) -> bool:
        w = self.q.within
        if w is not None and n.end - n.start >= w:
            return False
        if self.q.within_events is not None:
            evs = events_of(n)
            if self.position[evs[-1].id] - self.position[evs[0].id] >= self.q.within_events:
                return False
        env2 = self.binding(n, env)
        return self.conditions_hold(item.id, env2) and self.valid(n, lo, hi, env2)


class IterativeEvaluation(Evaluation):
    def __init__(self, query, events, partial=False, start_range=None):
        super().__init__(query, events, partial=partial, start_range=start_range)
        self.matchers = {k: IterativeMatcher(query, evs) for k, evs in self.partitions.items()}


class NeelIterative(Recomputing):
    name = "neel-iterative"

    def evaluate(self, events: list) -> list[tuple]:
        return IterativeEvaluation(self.query, events, partial=self.partial,
                                   start_range=self.start_range).rows()


__all__ = ["NeelIterative", "IterativeMatcher"]
