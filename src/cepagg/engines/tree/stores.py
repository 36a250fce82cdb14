"""The composites a stored node keeps: a list in time order, or condensed into groups.

A store holds the composites (tuples of events, one per position of the node) that may still
join a later right-hand side: those ending at most ``keep - 1`` before the newest one. They are
appended in the order they end, so a plain store answers "the composites ending in ``[lo, s)``"
by bisection.

Condensed (the condensation paper's "condensed events", Sec. III): composites that agree on the
node's condensation terms (:attr:`.plan.Node.terms`) share one group, keyed by those values
(the paper's "condensation term value list"); a join evaluates its conditions once per group and
then takes the group's members in time order. A group's members stay the explicit composites
(each already checked below), so enumerating them is exact: the paper's pointer chains, merged
across groups, enumerate combinations that were never checked together (a wrong extra match
when two merged composites differ on an attribute a higher condition compares), which this
representation cannot do.

A store measures its condensation degree ``d`` = groups / composites (the paper's ``size1 /
size2``) and the work a join did on it, so the engine can switch condensation on or off per store
(:mod:`.switch`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

_COMPACT = 256


@dataclass
class Group:
    items: list = field(default_factory=list)  # composites, by end time
    ends: list = field(default_factory=list)


@dataclass
class Store:
    terms: tuple  # (index in the composite, attribute)
    condensed: bool = False
    items: list = field(default_factory=list)  # plain: composites by end time
    ends: list = field(default_factory=list)
    head: int = 0  # plain: items[:head] have expired
    groups: dict = field(default_factory=dict)  # condensed: key -> Group
    size: int = 0  # composites held (expired ones included until compaction)
    inserted: int = 0  # since the last review
    probes: int = 0  # right-hand composites joined against the store since the last review
    scanned: int = 0  # composites a plain probe looked at since the last review
    review_at: int = 0  # inserts before the next review (:mod:`.switch`; the first: at once)

    def key(self, comp: tuple) -> tuple:
        return tuple([comp[i].get(a) for i, a in self.terms])

    def insert(self, comp: tuple) -> None:
        end = comp[-1].ts
        self.inserted += 1
        self.size += 1
        if self.condensed:
            k = tuple([comp[i].get(a) for i, a in self.terms])
            g = self.groups.get(k)
            if g is None:
                g = self.groups[k] = Group()
            g.items.append(comp)
            g.ends.append(end)
        else:
            self.items.append(comp)
            self.ends.append(end)

    def span(self, lo: int, hi: int) -> list:
        """Plain store: the composites ending in ``[lo, hi)``."""
        ends = self.ends
        a = bisect.bisect_left(ends, lo, self.head)
        b = bisect.bisect_left(ends, hi, a)
        return self.items[a:b]

    def purge(self, horizon: int) -> None:
        """Forget the composites ending before ``horizon`` (they start no later)."""
        if self.condensed:
            kept = 0
            for k in list(self.groups):
                g = self.groups[k]
                i = bisect.bisect_left(g.ends, horizon)
                if i == len(g.ends):
                    del self.groups[k]
                    continue
                if i:
                    del g.items[:i]
                    del g.ends[:i]
                kept += len(g.ends)
            self.size = kept
        else:
            self.head = bisect.bisect_left(self.ends, horizon, self.head)
            if self.head >= _COMPACT and 2 * self.head >= len(self.ends):
                del self.items[:self.head]
                del self.ends[:self.head]
                self.head = 0
            self.size = len(self.ends) - self.head

    def live(self) -> list:
        """Every composite held, by end time."""
        if not self.condensed:
            return self.items[self.head:]
        out = [c for g in self.groups.values() for c in g.items]
        out.sort(key=lambda c: c[-1].ts)
        return out

    def degree(self) -> float:
        """Condensation degree ``d``: distinct term values / composites (1: nothing condenses)."""
        if self.condensed:
            return len(self.groups) / max(1, self.size)
        n = len(self.ends) - self.head
        if not n:
            return 1.0
        return len({self.key(c) for c in self.items[self.head:]}) / n

    def set_condensed(self, on: bool) -> None:
        """Regroup (or flatten) the composites held."""
        if on == self.condensed:
            return
        comps = self.live()
        self.items, self.ends, self.head, self.groups = [], [], 0, {}
        self.condensed = on
        self.size = 0
        for c in comps:
            self.insert(c)
        self.inserted -= len(comps)
