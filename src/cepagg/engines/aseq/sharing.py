"""Multi-query sharing: PreTree units, Chop-Connect, and the optimizer that picks between them.

**Prefix sharing** (paper §4.1): queries that agree on routing (partition key, stream filters),
window, result mode and START share one unit whose nodes form a PreTree (:mod:`.counters`):
a common prefix is counted once. With the two-stacks windows (:mod:`.windows`) this sharing is
free: a unit's cost grows with its number of nodes, not with its number of queries.

**Chop-Connect** (paper §4.2, :mod:`.chop`) shares a sub-pattern at any position, at the price
of SEM-style per-START items and one snapshot row per active START at every CNET event.

**The optimizer** chooses chop points from event statistics with this cost model (cost per unit
of time, in nanoseconds, constants measured on the benchmark machine, docs/benchmarks.md):

* a unit of ``N`` nodes (``W = N + 1`` columns, ``C`` counted components) costs, per event that
  extends or resets one of its nodes, ``2·W·C·ROW`` (the aggregate's row and the newest item's),
  and per START ``FLIP·N³/6 + PUSH·N·W`` (one flip composition, push, pop); plus ``EVENT`` per
  event the unit reads;
* a chopped query's pieces cost, per event of a piece's type, ``SEM`` per active item of the
  piece (``rate(START of the piece) × w`` items), per CNET ``SNAP`` per active item of the
  previous piece, and per result read (EMIT instant, expiring START) ``SNAP`` per item of its
  last piece.

A candidate chop — cut every query containing a common sub-pattern ``s`` (length >= 2, at a
non-prefix position in at least one of them) around ``s`` — is taken when the chopped plan is
cheaper than the units it replaces; candidates are tried greedily, the most shared first. With
two-stacks units a unit event costs a few row operations while a chopped piece pays per active
item, so chops win only with small windows or rare CNET types — which is what the model says,
and what ``cepagg explain`` shows.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §4 (PreTree §4.1, Chop-Connect §4.2, the optimizer is "assumed to
exist").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ...errors import UnsupportedQuery
from ...events import EventBatch
from .chop import ChopRun, chop_refusal, pieces_of
from .counters import Unit, build_unit, unit_key
from .plan import SeqPlan
from .runtime import UnitRun

# Cost constants, ns (see the module docstring), fitted to measurements on the benchmark machine
# (docs/benchmarks.md, "A-Seq engine"): a length-5 unit at 1,000 events per window costs about
# 350 ns per event; a Python Chop-Connect item update about 700 ns, a snapshot row about 300 ns.
ROW = 20.0
FLIP = 30.0
PUSH = 20.0
EVENT = 65.0
SEM = 700.0
SNAP = 300.0


@dataclass
class Stats:
    """Event rates per type, per unit of time (all partitions together)."""

    rates: dict[str, float] = field(default_factory=dict)
    default: float = 0.1

    @staticmethod
    def from_batch(batch: EventBatch) -> "Stats":
        ts = batch.table.column("ts").to_pylist()
        span = max(1, (max(ts) - min(ts) + 1) if ts else 1)
        counts: dict[str, int] = {}
        for t in batch.table.column("type").to_pylist():
            counts[t] = counts.get(t, 0) + 1
        return Stats({t: c / span for t, c in counts.items()})

    def rate(self, type_: str | frozenset[str] | None) -> float:
        """Events per unit of time of a type, or of a set of types (a concept's members)."""
        if type_ is None:
            return sum(self.rates.values()) or self.default
        if not isinstance(type_, str):
            return sum(self.rate(t) for t in type_)
        return self.rates.get(type_, self.default if not self.rates else 0.0)


def unit_cost(unit: Unit, stats: Stats) -> float:
    N = unit.n_nodes
    W = N + 1
    C = len(unit.comps)
    types: set = set()
    cost = 0.0
    for j, f in enumerate(unit.node_feed):
        cost += stats.rate(f.members) * 2 * W * C * ROW
        types |= f.members or {None}
        for g in unit.node_reset[j]:
            cost += stats.rate(g.members) * 2 * W * C * ROW
            types |= g.members or {None}
    cost += stats.rate(unit.node_feed[0].members) * (FLIP * N**3 / 6 + PUSH * N * W) * C
    cost += sum(stats.rate(t) for t in types) * EVENT
    return cost


def chop_cost(plans: list[SeqPlan], chops: list[tuple[int, ...]], stats: Stats) -> float:
    w = plans[0].within or 0
    seen: dict[tuple, float] = {}
    cost = 0.0
    for plan, ch in zip(plans, chops):
        pieces = pieces_of(plan, ch)
        prev_items = 0.0
        for j, p in enumerate(pieces):
            items = stats.rate(p.feeds[0].members) * w
            if p.key not in seen:
                c = sum(stats.rate(f.members) for f in p.feeds) * items * SEM
                c += sum(stats.rate(g.members) for gap in p.gaps for g in gap) * items * SEM
                seen[p.key] = c
                cost += c
            if j:
                cost += stats.rate(p.feeds[0].members) * prev_items * SNAP * j
            prev_items = items
        reads = stats.rate(pieces[0].feeds[0].members) if plan.mode == "total" else sum(
            stats.rate(t) for t in (plan.query.event_types or ())) or stats.rate(None)
        cost += reads * prev_items * SNAP
    return cost


@dataclass
class SharingPlan:
    """Units (PreTrees) and Chop-Connect groups, with the optimizer's decisions."""

    units: list[Unit] = field(default_factory=list)
    chopped: list[tuple[list[SeqPlan], list[int], list[tuple[int, ...]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    costs: dict[str, float] = field(default_factory=dict)

    def runners(self, partial: bool = False, start_range=None, numbers: str = "exact") -> list:
        out: list = [UnitRun(u, partial, start_range, numbers) for u in self.units]
        out += [ChopRun(p, i, c, partial, start_range) for p, i, c in self.chopped]
        return out

    def explain(self, queries) -> str:
        lines = []
        for k, u in enumerate(self.units):
            qs = ", ".join(f"q{o.index}" for o in u.outputs)
            lines.append(f"unit {k} (PreTree, {u.n_nodes} nodes, {len(u.comps)} counter(s) per node; {qs}); "
                         f"est. {self.costs.get(f'unit {k}', 0):.0f} ns per time unit")
            lines += ["  " + line for line in u.describe()]
        for k, (plans, idx, chops) in enumerate(self.chopped):
            run = ChopRun(plans, idx, chops)
            lines.append(f"chop-connect {k} ({', '.join(f'q{i}' for i in idx)}); "
                         f"est. {self.costs.get(f'chop {k}', 0):.0f} ns per time unit")
            lines += ["  " + line for line in run.describe()]
        lines += [f"optimizer: {n}" for n in self.notes]
        return "\n".join(lines)


def plan_workload(plans: Sequence[SeqPlan], share: bool = True, stats: Stats | None = None,
                  chops: dict[int, Sequence[int]] | None = None) -> SharingPlan:
    """Group ``plans`` into PreTree units, chop where the cost model says it pays (or where
    ``chops`` says so), and return the plan."""
    stats = stats or Stats()
    plans = list(plans)
    forced = {i: tuple(sorted(c)) for i, c in (chops or {}).items()}
    for i, c in forced.items():
        why = chop_refusal(plans[i])
        if why or not c or c[0] < 1 or c[-1] >= plans[i].length:
            raise UnsupportedQuery("aseq", f"query {i} cannot be chopped at {list(c)}: {why or 'bad positions'}")
    notes: list[str] = []
    chosen = dict(forced)
    if share and not forced:
        chosen = _optimize(plans, stats, notes)
    rest = [i for i in range(len(plans)) if i not in chosen]
    groups: dict = {}
    for i in rest:
        key = unit_key(plans[i]) if share else ("alone", i)
        groups.setdefault(key, []).append(i)
    sp = SharingPlan(notes=notes)
    for idx in groups.values():
        unit = build_unit([plans[i] for i in idx], idx)
        sp.costs[f"unit {len(sp.units)}"] = unit_cost(unit, stats)
        sp.units.append(unit)
    cgroups: dict = {}
    for i, c in sorted(chosen.items()):
        p = plans[i]
        key = (p.partition_attrs, tuple(f.text for f in p.query.stream_filters), p.within, p.mode, p.slide)
        cgroups.setdefault(key, []).append(i)
    for idx in cgroups.values():
        ps, cs = [plans[i] for i in idx], [chosen[i] for i in idx]
        sp.costs[f"chop {len(sp.chopped)}"] = chop_cost(ps, cs, stats)
        sp.chopped.append((ps, idx, cs))
    return sp


def _optimize(plans: list[SeqPlan], stats: Stats, notes: list[str]) -> dict[int, tuple[int, ...]]:
    """Greedy chop choice (see the module docstring)."""
    chosen: dict[int, tuple[int, ...]] = {}
    candidates: dict[tuple, list[tuple[int, int]]] = {}
    for i, p in enumerate(plans):
        if chop_refusal(p):
            continue
        for a in range(p.length):
            for b in range(a + 2, p.length + 1):
                sub = tuple(f.key for f in p.feeds[a:b]) + (p.partition_attrs, p.within, p.mode, p.slide)
                candidates.setdefault(sub, []).append((i, a))
    ranked = sorted(candidates.items(), key=lambda kv: (-len({i for i, _ in kv[1]}), -len(kv[0])))
    for sub, occ in ranked:
        users = {}
        for i, a in occ:
            users.setdefault(i, a)
        if len(users) < 2 or all(a == 0 for a in users.values()) or any(i in chosen for i in users):
            continue
        length = len(sub) - 4
        trial = {}
        for i, a in users.items():
            cuts = tuple(c for c in (a, a + length) if 0 < c < plans[i].length)
            if cuts:
                trial[i] = cuts
        if len(trial) < 2:
            continue
        idx = sorted(trial)
        before = sum(unit_cost(build_unit([plans[i]], [i]), stats) for i in idx)
        after = chop_cost([plans[i] for i in idx], [trial[i] for i in idx], stats)
        verdict = "chop" if after < before else "keep"
        notes.append(f"{verdict} {', '.join(f'q{i} at {list(trial[i])}' for i in idx)} around "
                     f"{length} shared events: {after:.0f} vs {before:.0f} ns per time unit unshared")
        if after < before:
            chosen.update(trial)
    if not notes:
        notes.append("no sub-pattern shared at a non-prefix position: prefix sharing only")
    return chosen


# Reference: A-Seq (SIGMOD 2014) §4.1 (PreTree), §4.2 (Chop-Connect, SnapShot, the optimizer left
# open).
