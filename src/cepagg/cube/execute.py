"""Carrying out a cube plan: evaluate what is computed alone or shared, then derive the rest.

Queries joined by ``shared`` edges run as one shared A-Seq plan (a query a shared edge starts
from is added to that plan if it is itself derived: the plan needs its pattern). Derived queries
follow in the plan's order: the source's cells combined with the delta queries' cells
(:mod:`.reuse`). Cells are keyed by the result's group and window columns.
"""

from __future__ import annotations

import time
from typing import Iterable

from ..events import EventBatch
from ..plan import plan, shared_evaluator
from ..result import Result
from .chase import CubePlan
from .matches import (
    EventIndex,
    Match,
    canonical,
    concept_filter,
    join_applies,
    matches_of,
    pattern_join,
    pattern_projection,
    projection_applies,
    projection_delta,
    result_of,
    reusable,
)
from .reuse import concept_positions, deltas


def evaluate_plan(cube, cplan: CubePlan, events: EventBatch,
                  known: dict[str, Result] | None = None,
                  matches: dict | None = None) -> tuple[dict[str, Result], dict[str, float]]:
    """Results of every query of ``cplan`` not yet known, and seconds spent per step; ``known``:
    the results already known (default the cube's).

    ``matches``: a dict to fill with the matches of each query returning matches
    (:data:`~cepagg.cube.matches.Match` tuples, in no order), for a caller that reads only
    those; their results are then left as the engine numbered them, or None where derived."""
    events = events.sorted()
    results = dict(cube.results if known is None else known)
    seconds: dict[str, float] = {}
    parent = {n: n for n in cube.queries}

    def find(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    evaluated = [n for n, r in cplan.chosen.items() if r.kind in ("alone", "shared")]
    members = set(evaluated)
    for n in evaluated:
        r = cplan.chosen[n]
        if r.kind == "shared":
            members.add(r.src)
            parent[find(n)] = find(r.src)
    groups: dict[str, list[str]] = {}
    for n in cube.queries:
        if n in members:
            groups.setdefault(find(n), []).append(n)
    for names in groups.values():
        started = time.perf_counter()
        if len(names) == 1:
            out = [plan(cube.queries[names[0]]).build().run(events)]
        else:
            out = shared_evaluator([cube.queries[n] for n in names]).run(events)
        seconds["evaluate " + ", ".join(names)] = time.perf_counter() - started
        for n, r in zip(names, out):
            if n in evaluated or n not in results:
                q, s = cube.queries[n], cube.shapes[n]
                if matches is not None and q.returns_matches:
                    results[n] = r
                    matches[n] = matches_of(r, s)
                else:
                    results[n] = canonical(q, s, r) if reusable(q, s) else r
    index = None
    for n in cplan.order():
        r = cplan.chosen[n]
        if r.kind in MATCH_REUSES:
            started = time.perf_counter()
            index = index or EventIndex(events)
            cache = matches if matches is not None else {}
            if r.src not in cache:
                cache[r.src] = matches_of(results[r.src], cube.shapes[r.src])
            cache[n] = _match_reuse(cube, r, cache[r.src], events, index)
            results[n] = None if matches is not None else result_of(
                cube.queries[n], cube.shapes[n], cache[n], results[r.src].kinds)
            seconds[f"{r.kind} {r.src} -> {n}"] = time.perf_counter() - started
            continue
        if r.kind not in ("roll-up", "drill-down"):
            continue
        started = time.perf_counter()
        base = results[r.src]
        if _float_sums(cube.queries[n], base):  # adding in another order could round differently
            results[n] = plan(cube.queries[n]).build().run(events)
            seconds[f"evaluate {n} (a SUM of floats is not rolled up)"] = time.perf_counter() - started
            continue
        coarse, fine = (n, r.src) if r.kind == "roll-up" else (r.src, n)
        qc = cube.queries[coarse]
        diff = concept_positions(cube.shapes[coarse], cube.shapes[fine], qc, cube.queries[fine])
        ds = deltas(qc, cube.shapes[coarse], cube.shapes[fine], diff)
        parts = _run_all(ds, events)
        sign = 1 if r.kind == "roll-up" else -1
        results[n] = combine(cube.queries[n], base, parts, sign)
        seconds[f"{r.kind} {r.src} -> {n}"] = time.perf_counter() - started
    return results, seconds


MATCH_REUSES = ("concept filter", "concept union", "pattern join", "pattern projection")


def _match_reuse(cube, r, known: list[Match], events: EventBatch, index: EventIndex) -> list[Match]:
    """``r.dst``'s matches from ``r.src``'s (:mod:`.matches`)."""
    src, dst = r.src, r.dst
    q, s, ss = cube.queries[dst], cube.shapes[dst], cube.shapes[src]
    if r.kind == "concept filter":
        found = concept_filter(q, ss, s, known, index)
    elif r.kind == "concept union":
        diff = [k for k, (a, b) in enumerate(zip(s.items, ss.items)) if a.type != b.type]
        found = list(known)
        for d in deltas(q, s, ss, diff):
            found += matches_of(plan(d).build().run(events), s)
    elif r.kind == "pattern join":
        found = pattern_join(q, ss, s, join_applies(ss, s), known, index)
    else:
        extra = projection_applies(s, ss)
        delta = projection_delta(q, s, ss, extra)
        found = pattern_projection(q, s, ss, extra, known, matches_of(plan(delta).build().run(events), s), index)
    return found


def _float_sums(q, result: Result) -> bool:
    width = len(q.output_columns) - len(q.aggregates)
    kinds = result.kinds[width:] if result.kinds else ()
    return any(a.func == "SUM" and k != "int" for a, k in zip(q.aggregates, kinds))


def _run_all(queries: list, events: EventBatch) -> list[Result]:
    if not queries:
        return []
    if all(plan(q).engine == "aseq" for q in queries):
        return shared_evaluator(queries).run(events)
    return [plan(q).build().run(events) for q in queries]


def combine(q, base: Result, parts: Iterable[Result], sign: int) -> Result:
    """``base`` with each part's cells added (sign 1: COUNT and SUM add, MIN and MAX take the
    extreme) or subtracted (sign -1, COUNT only; a grouped or windowed cell that reaches 0 has no
    match left and no row)."""
    funcs = [a.func for a in q.aggregates]
    width = len(q.output_columns) - len(funcs)
    cells: dict[tuple, list] = {r[:width]: list(r[width:]) for r in base.rows}
    for part in parts:
        for row in part.rows:
            key, vals = row[:width], row[width:]
            cur = cells.get(key)
            if cur is None:
                cells[key] = [v if sign > 0 else -v for v in vals]
                continue
            for i, (f, v) in enumerate(zip(funcs, vals)):
                cur[i] = _merge(f, cur[i], v, sign)
    rows = [k + tuple(v) for k, v in cells.items()]
    if sign < 0 and width:
        rows = [r for r in rows if r[width] != 0]
    return Result(base.columns, rows, base.kinds).sorted()


def _merge(func: str, a, b, sign: int):
    if b is None:
        return a
    if a is None:
        return b if sign > 0 else -b
    if func in ("COUNT", "SUM"):
        return a + sign * b
    return min(a, b) if func == "MIN" else max(a, b)
