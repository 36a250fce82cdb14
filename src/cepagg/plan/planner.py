"""The physical plan of a query: its engine, how its evaluation splits, and why.

Engines are tried in order of preference (fastest first); each either accepts the query or
refuses it with a reason. The reference evaluator accepts every valid query, so there is
always a plan; ``explain`` shows the refusals, which tell a user what to change to reach a
faster engine.

The plan also carries the decisions every driver needs (:mod:`.split`): how a batch
evaluation splits into tasks, which attributes pick a streaming state bucket, and, for a
workload, which queries share one evaluation. The drivers (:mod:`cepagg.runner`,
:mod:`cepagg.spark`, :mod:`cepagg.order`) carry the plan out and decide none of this.
This module does not import pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engines import ENGINES, Engine
from ..errors import UnsupportedQuery, UsageError
from ..lang.model import Query
from ..lang.printer import duration_text
from .matches import MATCHERS
from .matches import choose as choose_matcher
from .nested import explain_lines as nested_lines
from .split import Split, bucket_keys, split_of

#: Engines tried by ``auto``, fastest first. ``neel`` takes nested patterns that aseq and GRETA
#: refuse, when their normal form runs on them (it plans its flat terms with this list).
PREFERENCE = ("aseq", "greta", "neel", "rcep", "reference")


@dataclass
class Plan:
    query: Query
    engine: str
    refusals: dict[str, str] = field(default_factory=dict)
    why: str = ""  # the reason for choosing between engines that all accept the query

    def build(self, **options) -> Engine:
        """The engine, built; ``options`` are the protocol's (``partial``, ``start_range``)."""
        return ENGINES[self.engine](self.query, **options)

    build_with = build

    @property
    def split(self) -> Split:
        """How a batch evaluation of the query splits into independent tasks."""
        return split_of(self.query)

    @property
    def bucket_keys(self) -> tuple[str, ...]:
        """The attributes whose hash picks the query's streaming state bucket."""
        return bucket_keys(self.query)

    def explain(self) -> str:
        q = self.query
        lines = [f"engine: {self.engine}"]
        for name, reason in self.refusals.items():
            lines.append(f"  not {name}: {reason}")
        if self.why:
            lines.append(f"  why: {self.why}")
        lines.append(f"mode: {_mode(q)}")
        lines.append("partition by: " + (", ".join(q.partition_by) if q.partition_by else
                                          "nothing (one partition)"))
        if q.group_by:
            lines.append("groups: " + ", ".join(g.column for g in q.group_by))
        lines.append("variables: " + ", ".join(_var(v) for v in q.variables.values()))
        for c in sorted(q.concept_types):
            lines.append(f"concept {c}: matches events of type {', '.join(sorted(q.members(c)))}")
        for f in q.stream_filters:
            lines.append(f"stream filter: {f.text}")
        for c in q.conditions:
            where = "" if c.scope is None else " (inside a negation)"
            lines.append(f"condition [{c.kind}]{where}: {c.text}")
        if q.strategy != "skip-till-any-match":
            lines.append(f"selection: {q.strategy}")
        lines.append("returns: " + (", ".join(a.column for a in q.aggregates) if q.aggregates
                                     else "matches of " + ", ".join(v.split('@')[0] for v in q.return_vars)))
        if self.engine == "aseq":
            from ..engines.aseq.plan import explain_lines

            lines += explain_lines(q)
        if self.engine == "rcep":
            from ..engines.rcep.compiled import explain_lines as rcep_lines

            lines += rcep_lines(q)
        lines += nested_lines(q)
        if self.engine == "neel":
            from ..engines.neel.engine import explain_lines as neel_lines
            from ..engines.neel.terms import decompose

            lines += neel_lines(decompose(q))
        lines.append(f"on Spark: {self.split.why}")
        buckets = ", ".join(self.bucket_keys)
        lines.append("streaming: " + (f"state in buckets hashed on {buckets}" if buckets else "state in one bucket")
                     + f", each the {self.engine} engine's versioned snapshot")
        return "\n".join(lines)


def _mode(q: Query) -> str:
    if q.within_events is not None:
        return f"all matches within {q.within_events} events"
    if q.within is None:
        return "all matches (no window)" + (", emitted on change" if q.emit_on_change else "")
    w = duration_text(q.within, q.time_unit)
    if q.mode == "slide":
        return f"windows of {w} sliding by {duration_text(q.slide, q.time_unit)}"
    if q.mode == "emit":
        return f"sliding window of {w}, a row whenever the value changes"
    return f"all matches spanning less than {w}"


def _var(v) -> str:
    name = v.name.split("@")[0]
    kind = v.type or "any type"
    flags = [f for f, on in (("Kleene", v.kleene is not None), ("negated", v.negated),
                             ("optional", v.optional)) if on]
    return f"{name}: {kind}" + (f" ({', '.join(flags)})" if flags else "")


@dataclass
class WorkloadPlan:
    """Several queries run together: those aseq accepts as one shared aseq plan (PreTree,
    Chop-Connect), the others each with its own engine."""

    names: list[str]
    plans: list[Plan]
    shared: list[int]  # indices run in the shared aseq workload

    def build_shared(self):
        return shared_evaluator([self.plans[i].query for i in self.shared]) if self.shared else None

    def shared_jobs(self) -> list[tuple[Split, list[int]]]:
        """The shared queries grouped into jobs that can see the same partitions: one job per
        distinct (split kind, keys, partial), in order of first appearance. The split's reason
        is the first member's."""
        jobs: dict[tuple, tuple[Split, list[int]]] = {}
        for i in self.shared:
            split = self.plans[i].split
            jobs.setdefault(split[:3], (split, []))[1].append(i)
        return list(jobs.values())

    def explain(self) -> str:
        lines = []
        for name, p in zip(self.names, self.plans):
            lines.append(f"-- {name}: engine {p.engine}" + (" (shared plan)" if p.engine == "aseq" else ""))
            for eng, reason in p.refusals.items():
                lines.append(f"     not {eng}: {reason}")
        wl = self.build_shared()
        if wl is not None:
            lines.append("")
            lines.append("shared aseq plan:")
            text = wl.explain()
            for k, i in sorted(enumerate(self.shared), reverse=True):
                text = text.replace(f"q{k}", f"<{self.names[i]}>")
            lines += ["  " + line for line in text.splitlines()]
            for split, members in self.shared_jobs():
                names = ", ".join(self.names[i] for i in members)
                lines.append(f"on Spark, one job for {names}: {split.why}")
        return "\n".join(lines)

    def run(self, batch):
        """One Result per query, in order."""
        results: list = [None] * len(self.plans)
        wl = self.build_shared()
        if wl is not None:
            for i, r in zip(self.shared, wl.run(batch)):
                results[i] = r
        for i, p in enumerate(self.plans):
            if results[i] is None:
                results[i] = p.build().run(batch)
        return results


def shared_evaluator(queries: list[Query], **options):
    """The evaluator of queries that share one aseq plan (rows tagged by query index);
    ``options`` are the protocol's (``partial``, ``start_range``)."""
    from ..engines.aseq.workload import Workload

    return Workload(queries, **options)


def plan_workload(queries: list[Query], names: list[str] | None = None, engine: str = "auto") -> WorkloadPlan:
    """Plan every query; with ``auto`` those aseq accepts share one aseq plan."""
    names = names or [f"q{i}" for i in range(len(queries))]
    plans = [plan(q, engine) for q in queries]
    shared = [i for i, p in enumerate(plans) if p.engine == "aseq"]
    return WorkloadPlan(names, plans, shared)


def plan(query: Query, engine: str = "auto") -> Plan:
    """The engine to run ``query``: the named one (refusing loudly) or the fastest that accepts."""
    if engine != "auto":
        if engine not in ENGINES:
            raise UsageError(f"engine {engine!r}: no such engine; available: {', '.join(ENGINES)}")
        reason = ENGINES[engine].refusal(query)
        if reason:
            raise UnsupportedQuery(engine, reason)
        return Plan(query, engine)
    refusals: dict[str, str] = {}
    for name in PREFERENCE:
        if name not in ENGINES:
            continue
        reason = ENGINES[name].refusal(query)
        if reason is None and name in MATCHERS:  # rcep or tree (plan/matches.py)
            name, why, more = choose_matcher(query)
            return Plan(query, name, {**refusals, **more}, why)
        if reason is None:
            return Plan(query, name, refusals)
        refusals[name] = reason
    raise AssertionError("the reference engine accepts every query")
