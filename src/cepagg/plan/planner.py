"""The physical plan of a query: its engine, how its evaluation splits, and why.

Engines are tried in order of preference (fastest first); each either accepts the query or
refuses it with a reason. The reference evaluator accepts every valid query, so there is
always a plan; ``explain`` shows the refusals, which tell a user what to change to reach a
faster engine.

The plan also carries the numeric mode (``numbers``: "exact", the default, or "float", where
COUNT, SUM and AVG come out as float64; :mod:`cepagg.engines.floats`): an engine that computes
in float64 itself is built so, any other is wrapped to convert its exact rows, so that every
driver gets the same result shape. And it carries the decisions every driver needs
(:mod:`.split`): how a batch evaluation splits into tasks, which attributes pick a streaming
state bucket, and, for a workload, which queries share one evaluation. The drivers (:mod:`cepagg.runner`,
:mod:`cepagg.spark`, :mod:`cepagg.order`) carry the plan out and decide none of this.
This module does not import pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engines import ENGINES, Engine
from ..engines.base import check_numbers
from ..engines.floats import FLOAT_FUNCS, FloatRows, FloatWorkload, affected
from ..errors import UnsupportedQuery, UsageError
from ..lang.model import Query
from ..lang.printer import duration_text
from .matches import MATCHERS
from .matches import choose as choose_matcher
from .nested import explain_lines as nested_lines
from .nested_terms import NestedTerms, nested_terms
from .split import Split, bucket_keys, order_lanes, split_of

#: Engines tried by ``auto``, fastest first. ``neel`` takes nested patterns that aseq and GRETA
#: refuse, when their normal form runs on them (it plans its flat terms with this list).
PREFERENCE = ("aseq", "greta", "neel", "rcep", "reference")


@dataclass
class Plan:
    query: Query
    engine: str
    refusals: dict[str, str] = field(default_factory=dict)
    why: str = ""  # the reason for choosing between engines that all accept the query
    numbers: str = "exact"  # "exact" | "float" (cepagg.engines.base.NUMBERS)

    def build(self, **options) -> Engine | FloatRows:
        """The engine, built; ``options`` are the protocol's (``partial``, ``start_range``).

        In float mode, an engine with ``float_native`` is built with ``numbers="float"``; any
        other is built exact and wrapped in :class:`~cepagg.engines.floats.FloatRows`. A query
        float mode does not change (matches; only MIN and MAX) gets the exact engine."""
        cls = ENGINES[self.engine]
        if not self.floats:
            return cls(self.query, **options)
        if cls.float_native:
            return cls(self.query, numbers="float", **options)
        return FloatRows(cls(self.query, **options))

    build_with = build

    @property
    def floats(self) -> bool:
        """Float mode changes this query's result: COUNT, SUM or AVG in float64."""
        return self.numbers == "float" and affected(self.query)

    @property
    def split(self) -> Split:
        """How a batch evaluation of the query splits into independent tasks."""
        return split_of(self.query)

    @property
    def bucket_keys(self) -> tuple[str, ...]:
        """The attributes whose hash picks the query's streaming state bucket."""
        return bucket_keys(self.query)

    @property
    def order_lanes(self) -> tuple[str, ...]:
        """The attributes whose values pick the ordering layer's lane (and streaming bucket)."""
        return order_lanes(self.query)

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
        if self.numbers == "float":
            lines.append(numbers_line(q, self.engine))
        if self.engine == "aseq":
            from ..engines.aseq.plan import explain_lines

            lines += explain_lines(q)
        if self.engine == "greta":
            from ..engines.greta.plan import path_rule

            lines += [line for line in [path_rule(q)] if line]
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
        lanes = ", ".join(self.order_lanes)
        lines.append("ordering layer (--order): " + (f"a lane per value of {lanes}" if lanes else "one lane")
                     + ", each with its own clock")
        return "\n".join(lines)


def numbers_line(q: Query, engine: str) -> str:
    """What ``explain`` says of float mode for ``q`` run on ``engine``."""
    if q.returns_matches:
        return "numbers: float has no effect: the query returns matches, not aggregates"
    cols = [a.column for a in q.aggregates if a.func in FLOAT_FUNCS]
    if not cols:
        return "numbers: float has no effect: MIN and MAX are exact in either mode"
    how = (f"computed in float64 by the {engine} engine" if ENGINES[engine].float_native else
           f"computed exactly by the {engine} engine, which has no float64 mode, and converted to float64")
    return f"numbers: float64, approximate values for {', '.join(cols)}; {how}"


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


#: how ``cepagg stream`` runs a workload: the sharing above is for batch runs (in-process and
#: Spark jobs); a stream keeps each query's state and timers in a streaming query of its own
STREAMING_APART = ("streaming (cepagg stream): one streaming query per query, each with its own state, "
                   "all reading the same source (the shared plans are for batch runs)")


@dataclass
class WorkloadPlan:
    """Several queries run together: those aseq accepts as one shared aseq plan (PreTree,
    Chop-Connect), joined by the terms of nested queries on neel that fit it
    (:mod:`.nested_terms`); the others each with its own engine."""

    names: list[str]
    plans: list[Plan]
    shared: list[int]  # indices of flat queries run in the shared aseq workload
    numbers: str = "exact"  # every plan's numeric mode
    nested: dict[int, NestedTerms] = field(default_factory=dict)  # per query on neel, its terms' sharing

    @property
    def shared_terms(self) -> list[tuple[int, int]]:
        """(query, term) of the nested terms in the shared aseq plan."""
        return [(i, k) for i, n in self.nested.items() for k in n.shared]

    def groups(self) -> list[list[int]]:
        """The queries evaluated together, each group by one :func:`workload_evaluator`: the flat
        queries aseq accepts and the nested queries whose terms join them; with such terms, the
        plan holds partial rows, which a flat query under EMIT ON CHANGE has not: those form a
        second group."""
        nested = sorted({i for i, _ in self.shared_terms})
        if not nested:
            return [self.shared] if self.shared else []
        apart = [i for i in self.shared if self.plans[i].query.mode == "emit"]
        joint = sorted([i for i in self.shared if i not in apart] + nested)
        return [joint] + ([apart] if apart else [])

    def shared_jobs(self) -> list[tuple[Split, list[int]]]:
        """Each group split into jobs whose queries can see the same partitions: one job per
        distinct (split kind, keys, partial), in order of first appearance. The split's reason
        is the first member's."""
        out = []
        for group in self.groups():
            jobs: dict[tuple, tuple[Split, list[int]]] = {}
            for i in group:
                split = self.plans[i].split
                jobs.setdefault(split[:3], (split, []))[1].append(i)
            out += list(jobs.values())
        return out

    def explain(self) -> str:
        """Each query's engine and refusals, the shared plans, the Spark jobs of a batch run,
        and how a stream runs the workload (:data:`STREAMING_APART`)."""
        lines = []
        for i, (name, p) in enumerate(zip(self.names, self.plans)):
            lines.append(f"-- {name}: engine {p.engine}" + (" (shared plan)" if p.engine == "aseq" else ""))
            for eng, reason in p.refusals.items():
                lines.append(f"     not {eng}: {reason}")
            if self.numbers == "float":
                lines.append("     " + numbers_line(p.query, p.engine))
            if i in self.nested:
                lines += self.nested[i].lines()
        for group in self.groups():
            wl = workload_evaluator([self.plans[i].query for i in group], self.numbers)
            lines.append("")
            with_terms = any(i in self.nested for i in group)
            lines.append("shared aseq plan" + (
                " (partial rows: nested terms are combined from them):" if with_terms else
                " of EMIT ON CHANGE queries (no partial rows, so apart from nested terms):" if self.shared_terms
                else ":"))
            text = wl.explain()
            members = getattr(wl, "members", [(j, None) for j in range(len(group))])
            for m, (j, k) in sorted(enumerate(members), reverse=True):
                name = self.names[group[j]]
                text = text.replace(f"q{m}", f"<{name}>" if k is None else f"<{name}.t{k}>")
            lines += ["  " + line for line in text.splitlines()]
        for split, members in self.shared_jobs():
            names = ", ".join(self.names[i] for i in members)
            lines.append(f"on Spark, one job for {names}: {split.why}")
        if len(self.plans) > 1:
            lines.append(STREAMING_APART)
        return "\n".join(lines)

    def run(self, batch):
        """One Result per query, in order."""
        results: list = [None] * len(self.plans)
        for group in self.groups():
            wl = workload_evaluator([self.plans[i].query for i in group], self.numbers)
            for i, r in zip(group, wl.run(batch)):
                results[i] = r
        for i, p in enumerate(self.plans):
            if results[i] is None:
                results[i] = p.build().run(batch)
        return results


def workload_evaluator(queries: list[Query], numbers: str = "exact", **options):
    """The evaluator of one group of a workload (:meth:`WorkloadPlan.groups`): rows tagged by
    query index; ``options`` are the protocol's (``partial``, ``start_range``). Flat queries
    only: :func:`shared_evaluator`. With nested queries (those aseq refuses, planned on neel):
    their terms that fit the shared plan (:mod:`.nested_terms`) join it
    (:class:`~cepagg.engines.neel.workload.SharedWorkload`)."""
    terms = {j: nested_terms(q, numbers).shared for j, q in enumerate(queries)
             if ENGINES["aseq"].refusal(q) is not None}
    if not terms:
        return shared_evaluator(queries, numbers, **options)
    if numbers != "exact":  # (WorkloadPlan.groups holds no nested query then)
        raise UsageError("a workload's nested queries share its aseq plan in exact mode only")
    from ..engines.neel.workload import SharedWorkload

    return SharedWorkload(queries, terms, **options)


def shared_evaluator(queries: list[Query], numbers: str = "exact", **options):
    """The evaluator of queries that share one aseq plan (rows tagged by query index);
    ``options`` are the protocol's (``partial``, ``start_range``). In float mode the workload
    is wrapped (:class:`~cepagg.engines.floats.FloatWorkload`) and, where aseq computes in
    float64 itself, built so."""
    from ..engines.aseq.workload import Workload

    if check_numbers(numbers) == "exact":
        return Workload(queries, **options)
    native = ENGINES["aseq"].float_native
    return FloatWorkload(Workload(queries, numbers="float" if native else "exact", **options))


def plan_workload(queries: list[Query], names: list[str] | None = None, engine: str = "auto",
                  numbers: str = "exact") -> WorkloadPlan:
    """Plan every query; with ``auto`` those aseq accepts share one aseq plan, with the terms of
    nested queries on neel that fit it (:mod:`.nested_terms`)."""
    names = names or [f"q{i}" for i in range(len(queries))]
    plans = []
    for name, q in zip(names, queries):
        try:
            plans.append(plan(q, engine, numbers))
        except UnsupportedQuery as e:  # (the named engine refuses one query: say which)
            raise UnsupportedQuery(e.engine, f"{e.reason} (query {name})") from None
    shared = [i for i, p in enumerate(plans) if p.engine == "aseq"]
    nested = {i: nested_terms(p.query, numbers) for i, p in enumerate(plans)
              if engine == "auto" and p.engine == "neel"}
    return WorkloadPlan(names, plans, shared, numbers, nested)


def plan(query: Query, engine: str = "auto", numbers: str = "exact") -> Plan:
    """The engine to run ``query``: the named one (refusing loudly) or the fastest that accepts;
    ``numbers``: the numeric mode, "exact" or "float" (see the module docstring)."""
    try:
        check_numbers(numbers)
    except ValueError as e:
        raise UsageError(str(e)) from None
    chosen = _choose(query, engine)
    chosen.numbers = numbers
    return chosen


def _choose(query: Query, engine: str) -> Plan:
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
