"""Plan adaptation (E-Cube's §4.5): the cube runs over the stream batch by batch, measures the
statistics its cost model reads, and re-plans when they drift.

Statistics per batch: the rate of each event type (events per second of stream time) and, for
queries returning matches, the rate of their matches (measured on the previous batch: each
batch's matches are counted as they are found; counted afresh, without enumerating them, for a
batch whose event rates drifted). When some rate differs from the one the current plan was
chosen with by more than the *drift* threshold θ (relative to the larger of the two: 0.5 means
doubled or halved), the strategy chooses again with the new statistics; the new plan is installed when the cost model
predicts it cheaper than the current plan, under the new statistics, by more than the *gain*
threshold γ. Either way the new statistics become the basis later batches are compared with.

The chapter switches plans between two events by discarding the cached intermediate results and
rebuilding them "as if it were the first round"; here every batch is evaluated from scratch
over its *context*, so a switch between batches discards nothing and no result changes. Batch
``k`` (its events have times in ``[start, end]``; equal times never straddle two batches) owns
the matches whose last event lies in it. Those matches lie in the context ``(start - w, end]``
(``w`` the largest window), and so do their negated gaps (the cube's patterns begin and end with
a positive event). Hence:

* a query returning matches keeps the matches of the context whose last event is at ``start``
  or later;
* an aggregate query takes the cells of the context minus the cells of the context's part
  before ``start`` (the matches lying wholly before it are matches of both, with the same
  gaps): COUNT and SUM of integers subtract exactly; a cell whose count drops to 0 had no match
  in the batch and contributes nothing.

What this needs of each query (:func:`refusal`): a WITHIN window of time, skip-till-any-match,
no negation first or last; for aggregates COUNT and SUM of integer attributes only, with a
COUNT among them when there is a SUM or the result has groups or windows (to tell a cell without
matches), no EMIT ON CHANGE; for matches no GROUP BY or SLIDE.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedQuery
from ..events import EventBatch
from ..result import Result
from ..units import UNIT_NS
from .chase import CubePlan, choose
from .reuse import Costs


@dataclass(frozen=True)
class Adaptation:
    """How the cube adapts: ``batch`` events per batch (extended so that equal times stay in one
    batch), re-plan when a rate drifts by more than ``drift`` (θ, :func:`drift`), install a new plan
    when its predicted cost is lower by more than ``gain`` (γ, relative). A rate is compared only
    where the old or the new batch counts at least ``min_count`` events or matches of it (below,
    its relative change is mostly noise)."""

    batch: int = 5000
    drift: float = 0.5
    gain: float = 0.1
    min_count: int = 20

    def __post_init__(self):
        if self.batch < 1:
            raise UnsupportedQuery("cube", f"a batch of {self.batch} events: give at least 1")
        if not 0 <= self.drift or not 0 <= self.gain < 1:
            raise UnsupportedQuery("cube", "the drift threshold must be at least 0 and the gain threshold in [0, 1)")


@dataclass
class Statistics:
    """What one batch measured: events per type, matches per query, over ``span`` seconds."""

    span: float  # seconds of stream time the batch covers
    counts: dict[str, int]
    matches: dict[str, int] = field(default_factory=dict)

    def costs(self) -> Costs:
        return Costs(dict(self.counts), dict(self.matches))

    def rates(self) -> dict[tuple[str, str], tuple[float, int]]:
        """Per statistic (("events", type) or ("matches", query)), its rate and count."""
        out = {("events", t): (c / self.span, c) for t, c in self.counts.items()}
        out.update({("matches", n): (c / self.span, c) for n, c in self.matches.items()})
        return out

    def text(self) -> str:
        parts = [f"{t} {c / self.span:,.1f}/s" for t, c in sorted(self.counts.items())]
        line = "events per second: " + (", ".join(parts) or "none")
        if self.matches:
            line += "; matches per second: " + ", ".join(
                f"{n} {c / self.span:,.1f}" for n, c in self.matches.items())
        return line


def drift(old: Statistics, new: Statistics, min_count: int = 20) -> tuple[float, str]:
    """The largest change of a rate from ``old`` to ``new`` relative to the larger of the two (0:
    equal, 0.5: doubled or halved, 1: appeared or vanished), and which one (text)."""
    a, b = old.rates(), new.rates()
    worst, why = 0.0, ""
    for key in sorted(set(a) | set(b)):
        ra, ca = a.get(key, (0.0, 0))
        rb, cb = b.get(key, (0.0, 0))
        if max(ca, cb) < min_count:
            continue
        d = abs(rb - ra) / max(ra, rb)
        if d > worst:
            worst = d
            what = f"{key[1]}'s events" if key[0] == "events" else f"{key[1]}'s matches"
            why = f"the rate of {what} went from {ra:,.1f}/s to {rb:,.1f}/s, a change of {d:.0%}"
    return worst, why


@dataclass
class Replan:
    """One re-planning: before batch ``batch`` (starting at time ``ts``), why, the current plan's
    and the new plan's estimated costs under the new statistics, and whether it was installed."""

    batch: int
    ts: int
    reason: str
    old_cost: float
    new_cost: float
    installed: bool
    plan: str = ""  # the installed plan's edges, in one line

    def text(self) -> str:
        verdict = "installed the new plan" if self.installed else "kept the plan (gain below the threshold)"
        return (f"before batch {self.batch} (ts {self.ts}): {self.reason}; re-planned: estimated cost "
                f"{self.old_cost:,.0f} (current plan) vs {self.new_cost:,.0f} (new plan): {verdict}"
                + (f" -- {self.plan}" if self.installed and self.plan else ""))


def refusal(cube, events: EventBatch) -> str | None:
    """Why the cube's queries cannot be evaluated batch by batch (module docstring), or None."""
    kinds = {**events.attribute_kinds(), "ts": "int"}
    for n, q in cube.queries.items():
        s = cube.shapes[n]
        where = f"query {n!r}"
        if q.within is None or q.within_events is not None:
            return f"{where} has no WITHIN window of time: its matches are not bounded by a batch"
        if q.strategy != "skip-till-any-match":
            return f"{where} uses {q.strategy}: adaptation takes skip-till-any-match queries"
        if s.items[0].negated or s.items[-1].negated:
            return f"{where} begins or ends with a negation: its scope reaches outside its matches"
        if q.returns_matches:
            if q.group_by or q.mode != "total":
                return f"{where} returns matches with GROUP BY or SLIDE"
            continue
        if q.mode == "emit":
            return f"{where} uses EMIT ON CHANGE"
        for a in q.aggregates:
            if a.func not in ("COUNT", "SUM"):
                return f"{where} has {a.column}: batches combine COUNT and SUM only (by subtraction)"
            if a.func == "SUM" and kinds.get(a.attr) != "int":
                return f"{where} has {a.column} over a non-integer attribute (subtraction could round)"
        if not any(a.func == "COUNT" for a in q.aggregates) and (q.group_by or q.mode == "slide" or
                                                                 any(a.func == "SUM" for a in q.aggregates)):
            return f"{where} needs a COUNT among its aggregates (to tell a cell without matches)"
    return None


def batch_bounds(ts: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Row ranges of about ``size`` events each; a range never splits one timestamp."""
    out, a, n = [], 0, len(ts)
    while a < n:
        b = min(a + size, n)
        if b < n:
            b = int(np.searchsorted(ts, ts[b - 1], side="right"))
        out.append((a, b))
        a = b
    return out


def _seconds(q) -> float:
    return UNIT_NS[q.time_unit] / UNIT_NS["s"]


class _Cells:
    """An aggregate query's cells summed over batches (module docstring)."""

    def __init__(self, q):
        self.q = q
        self.width = len(q.output_columns) - len(q.aggregates)
        self.funcs = [a.func for a in q.aggregates]
        self.count = next((i for i, f in enumerate(self.funcs) if f == "COUNT"), None)
        self.cells: dict[tuple, list] = {}
        self.kinds: tuple = ()

    def add(self, context: Result, before: Result | None) -> None:
        self.kinds = self.kinds or context.kinds
        w = self.width
        sub = {r[:w]: r[w:] for r in before.rows} if before is not None else {}
        for row in context.rows:
            key, vals = row[:w], list(row[w:])
            old = sub.get(key)
            if old is not None:
                vals = [_minus(v, o) for v, o in zip(vals, old)]
            if self.count is not None and not vals[self.count]:
                continue  # no match of this cell ends in the batch
            cur = self.cells.get(key)
            self.cells[key] = vals if cur is None else [_plus(a, b) for a, b in zip(cur, vals)]

    def result(self, empty: Result) -> Result:
        rows = [k + tuple(v) for k, v in self.cells.items()]
        if not rows and not self.width:
            rows = list(empty.rows)
        return Result(self.q.output_columns, rows, self.kinds or empty.kinds).sorted()


def _minus(a, b):
    if b is None:
        return a
    return -b if a is None else a - b


def _plus(a, b):
    if b is None:
        return a
    return b if a is None else a + b


def evaluate_adaptive(cube, events: EventBatch, strategy: str, reuses: tuple[str, ...],
                      adapt: Adaptation) -> tuple[dict[str, Result], list[tuple[int, CubePlan]], list[Replan]]:
    """Every query's result over ``events``, batch by batch, re-planning as the module says.
    Returns the results, the plans used (first batch index, plan) and the re-plannings."""
    from ..plan import plan as plan_query
    from .execute import evaluate_plan
    from .matches import result_of

    why = refusal(cube, events)
    if why:
        raise UnsupportedQuery("cube", f"plan adaptation: {why}")
    events = events.sorted()
    ts = events.table.column("ts").to_numpy()
    types = np.asarray(events.table.column("type").to_pylist(), dtype=object)
    w = max(q.within for q in cube.queries.values())
    unit = _seconds(next(iter(cube.queries.values())))
    names = list(cube.queries)
    aggregate = [n for n in names if not cube.queries[n].returns_matches]
    cells = {n: _Cells(cube.queries[n]) for n in aggregate}
    found: dict[str, set] = {n: set() for n in names if cube.queries[n].returns_matches}
    kinds: dict[str, tuple] = {}
    plans: list[tuple[int, CubePlan]] = []
    replans: list[Replan] = []
    current: CubePlan | None = None
    basis: Statistics | None = None
    measured: dict[str, int] | None = None
    for k, (a, b) in enumerate(batch_bounds(ts, adapt.batch)):
        start = int(ts[a])
        c0 = int(np.searchsorted(ts, start - w, side="right"))
        context = events.slice(c0, b - c0)
        stats = _batch_statistics(ts, types, a, b, unit)
        recount = (lambda a=a, b=b: _counted(cube, events.slice(a, b - a), found)) if found else None
        if found:
            stats.matches = measured if measured is not None else recount()
        if current is None:
            current, basis = choose(cube, strategy, stats.costs(), reuses), stats
            current.statistics = stats
            plans.append((k, current))
        else:
            chosen, replan = _replan(cube, strategy, reuses, adapt, current, basis, stats, k, start, recount)
            if replan is not None:
                replans.append(replan)
                if replan.installed:
                    current = chosen
                    plans.append((k, current))
                basis = stats
        batch_matches: dict[str, list] = {}
        results, _ = evaluate_plan(cube, current, context, known={}, matches=batch_matches)
        before = None
        if aggregate and c0 < a:
            sub = CubePlan(current.strategy, {n: current.chosen[n] for n in aggregate})
            before, _ = evaluate_plan(cube, sub, events.slice(c0, a - c0), known={})
        measured = {}
        for n in names:
            r = results[n]
            if r is not None:
                kinds.setdefault("matches" if n in found else n, r.kinds)
            if n in cells:
                cells[n].add(r, before[n] if before is not None else None)
                continue
            mine = [m for m in batch_matches[n] if m[-1][2] >= start]
            found[n].update(mine)
            measured[n] = len(mine)
    empty = events.slice(0, 0)
    out = {}
    for n in names:
        q = cube.queries[n]
        if n in cells:
            out[n] = cells[n].result(plan_query(q).build().run(empty))
        else:
            out[n] = result_of(q, cube.shapes[n], found[n], kinds.get("matches", ()))
    return out, plans, replans


def _batch_statistics(ts, types, a: int, b: int, unit: float) -> Statistics:
    """The statistics of the events ``a`` to ``b`` (times ``ts``, types ``types``): their span
    in seconds and the count of each type."""
    span = max(float(ts[b - 1] - ts[a]), 1.0) * unit
    uniq, cnt = np.unique(types[a:b], return_counts=True)
    return Statistics(span, dict(zip(uniq.tolist(), cnt.tolist())))


def _replan(cube, strategy: str, reuses: tuple[str, ...], adapt: Adaptation, current: CubePlan,
            basis: Statistics, stats: Statistics, k: int, start: int, recount) -> tuple[CubePlan, Replan | None]:
    """(plan, re-planning) after batch ``k`` (first event time ``start``), whose statistics
    ``stats`` are compared with those the current plan was chosen on (``basis``): no
    re-planning below the drift threshold; above it a plan chosen on ``stats`` (the matches
    counted again by ``recount()``, when given: those measured on the last batch predate the
    drift), installed when its gain over the current plan passes ``adapt.gain``."""
    d, reason = drift(basis, stats, adapt.min_count)
    if d <= adapt.drift:
        return current, None
    if recount is not None:
        stats.matches = recount()
    new = choose(cube, strategy, stats.costs(), reuses)
    old_cost = _recost(current, new)
    gain = (old_cost - new.cost) / old_cost if old_cost > 0 else 0.0
    new.statistics = stats
    replan = Replan(k, start, f"{reason} (threshold {adapt.drift:.0%})", old_cost, new.cost, gain > adapt.gain,
                    _one_line(new))
    return (new if replan.installed else current), replan


def _counted(cube, events: EventBatch, found) -> dict[str, int]:
    """The matches of each query returning matches in ``events``, counted (not enumerated)."""
    from .cube import match_counts

    return {n: c for n, c in match_counts(cube, events).items() if n in found}


def _recost(current: CubePlan, new: CubePlan) -> float:
    """The current plan's cost under the statistics ``new`` was chosen with (its edges, re-costed)."""
    costs = {(r.src, r.dst, r.kind): r.cost for r in new.candidates}
    return sum(costs.get((r.src, r.dst, r.kind), r.cost) for r in current.chosen.values())


def _one_line(p: CubePlan) -> str:
    return "; ".join(f"{r.src or 'ground'} -> {n} {r.kind}" for n in p.order() for r in (p.chosen[n],))
