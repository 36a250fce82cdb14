"""Reuse of *match* results between cube queries (the chapter's §4.4, for queries returning
matches), each exact:

* **concept filter** (general to specific, §4.4.2): a finer query's matches are the coarser
  query's matches whose events have the finer types, re-interpreted position by position; where a
  negated type is coarser in the finer query, the extra types below it must be absent from the
  gap (Example 14).
* **concept union** (specific to general, §4.4.5): a coarser query's matches are the finer
  query's plus those of the delta queries (:func:`cepagg.cube.reuse.deltas`; disjoint).
* **pattern join** (general to specific, §4.4.1): a longer query's matches extend the shorter
  query's matches with events of the inserted positive types in their gaps, checked against the
  window and every negation (Fig. 4.6). Offered only when no inserted positive splits a gap the
  shorter query negates: otherwise a longer query's match need not extend a shorter query's
  match, and the join would miss it.
* **pattern projection** (specific to general, §4.4.4): a query one item shorter takes the
  longer query's matches without the extra event, de-duplicated (Example 15), kept where its own
  negations hold, plus the *delta*: the query with the extra positive item negated (matches with
  no such event in the gap, ComputeDeltaResults made exact), or, when the extra item is a
  negation, the query with it required (``EXISTS``).

Matches are compared as tuples of event ids by position; every match result of the cube is
numbered in that order (:func:`canonical`), so each strategy's rows equal ``independent``'s.
Reuse applies to flat queries returning whole matches under WITHIN alone, with negations between
positive items, no conditions, keys or groups (:func:`reusable`).
"""

from __future__ import annotations

import bisect
from typing import Iterable

from ..events import EventBatch
from ..lang.model import Query
from ..result import Result
from .shape import Item, Shape, with_items

Match = tuple[tuple[int, str, int], ...]  # per positive position: (event id, type, ts)


def reusable(q: Query, s: Shape) -> bool:
    positives = {i.var for i in s.items if not i.negated}
    return (q.returns_matches and q.mode == "total" and q.within is not None and q.within_events is None
            and q.strategy == "skip-till-any-match" and not q.conditions and not q.stream_filters
            and not q.partition_by and not q.equivalences and not q.group_by
            and {v.split("@")[0] for v in q.return_vars} == positives
            and not s.items[0].negated and not s.items[-1].negated)


class EventIndex:
    """The events of each type in time order, for gap and join look-ups."""

    def __init__(self, events: EventBatch):
        t = events.table
        self.by_type: dict[str, tuple[list[int], list[int]]] = {}
        for i, ty, ts in sorted(zip(t.column("_id").to_pylist(), t.column("type").to_pylist(),
                                    t.column("ts").to_pylist()), key=lambda r: (r[2], r[0])):
            ids, times = self.by_type.setdefault(ty, ([], []))
            ids.append(i)
            times.append(ts)

    def between(self, types: Iterable[str], lo: int, hi: int) -> list[tuple[int, str, int]]:
        """Events of ``types`` with lo < ts < hi."""
        out = []
        for ty in types:
            ids, times = self.by_type.get(ty, ((), ()))
            a, b = bisect.bisect_right(times, lo), bisect.bisect_left(times, hi)
            out += [(ids[k], ty, times[k]) for k in range(a, b)]
        return out

    def any_between(self, types: Iterable[str], lo: int, hi: int) -> bool:
        for ty in types:
            _ids, times = self.by_type.get(ty, ((), ()))
            a = bisect.bisect_right(times, lo)
            if a < len(times) and times[a] < hi:
                return True
        return False


def matches_of(result: Result, s: Shape) -> list[Match]:
    """The matches of a match result, each as its events in positive-position order."""
    cols = result.columns
    i_m, i_var, i_id, i_ty, i_ts = (cols.index(c) for c in ("match", "var", "event_id", "type", "ts"))
    order = {i.var: k for k, i in enumerate(i for i in s.items if not i.negated)}
    found: dict = {}
    for r in result.rows:
        found.setdefault(r[i_m], {})[order[r[i_var]]] = (r[i_id], r[i_ty], r[i_ts])
    return [tuple(m[k] for k in range(len(order))) for m in found.values()]


def result_of(q: Query, s: Shape, matches: Iterable[Match], kinds=()) -> Result:
    """Rows of ``matches`` for ``q``, numbered by their event ids (:func:`canonical`)."""
    names = [i.var for i in s.items if not i.negated]
    by_name = sorted(range(len(names)), key=lambda k: names[k])
    rows = []
    for n, m in enumerate(sorted(set(matches), key=lambda m: tuple(e[0] for e in m)), start=1):
        rows += [(n, names[k], 0, m[k][0], m[k][1], m[k][2]) for k in by_name]
    return Result(q.output_columns, rows, kinds)  # (in Result.sorted()'s order: by match, then variable)


def canonical(q: Query, s: Shape, result: Result) -> Result:
    """A match result numbered by its matches' event ids (the same matches, the same rows)."""
    return result_of(q, s, matches_of(result, s), result.kinds)


def _negations_hold(q: Query, s: Shape, m: Match, index: EventIndex, only: set[int] | None = None) -> bool:
    """Every negated item of ``s`` (or those at positions ``only``) has no event in its gap."""
    k = -1  # positive positions seen
    for p, item in enumerate(s.items):
        if not item.negated:
            k += 1
            continue
        if only is not None and p not in only:
            continue
        if index.any_between(q.members(item.type), m[k][2], m[k + 1][2]):
            return False
    return True


def concept_filter(qf: Query, sc: Shape, sf: Shape, matches: list[Match], index: EventIndex) -> list[Match]:
    """The finer query's matches among the coarser query's (concept refinement, same length)."""
    pos = [k for k, i in enumerate(sf.items) if not i.negated]
    extra_neg = {p for p, (a, b) in enumerate(zip(sc.items, sf.items)) if a.negated and a.type != b.type}
    members = [qf.members(sf.items[p].type) for p in pos]
    out = []
    for m in matches:
        if all(e[1] in ms for e, ms in zip(m, members)) and _negations_hold(qf, sf, m, index, extra_neg):
            out.append(m)
    return out


def embedding(sc: Shape, sf: Shape) -> list[int] | None:
    """Positions of ``sf`` holding ``sc``'s items (equal types and signs), the leftmost fit."""
    out, at = [], 0
    for item in sc.items:
        while at < len(sf.items) and sf.key[at] != (item.type, item.negated):
            at += 1
        if at == len(sf.items):
            return None
        out.append(at)
        at += 1
    return out


def join_applies(sc: Shape, sf: Shape) -> list[int] | None:
    """The embedding a pattern join uses, or None when an inserted positive splits a negated gap
    of the shorter query (module docstring)."""
    emb = embedding(sc, sf)
    if emb is None:
        return None
    for a, item in enumerate(sc.items):
        if not item.negated:
            continue
        lo = max(emb[b] for b in range(a) if not sc.items[b].negated)
        hi = min(emb[b] for b in range(a + 1, len(sc.items)) if not sc.items[b].negated)
        if any(not sf.items[p].negated and p not in emb for p in range(lo + 1, hi)):
            return None
    return emb


def pattern_join(qf: Query, sc: Shape, sf: Shape, emb: list[int], matches: list[Match],
                 index: EventIndex) -> list[Match]:
    """The longer query's matches, extending each of the shorter query's matches."""
    fixed = {}  # position in sf -> index of the positive in sc's match
    k = 0
    for a, item in enumerate(sc.items):
        if not item.negated:
            fixed[emb[a]] = k
            k += 1
    slots = [p for p, i in enumerate(sf.items) if not i.negated]
    w = qf.within
    out = []
    for m in matches:
        def go(j: int, chosen: list) -> None:
            if j == len(slots):
                cand = tuple(chosen)
                if cand[-1][2] - cand[0][2] < w and _negations_hold(qf, sf, cand, index):
                    out.append(cand)
                return
            p = slots[j]
            if p in fixed:
                e = m[fixed[p]]
                if not chosen or chosen[-1][2] < e[2]:
                    go(j + 1, chosen + [e])
                return
            lo = chosen[-1][2] if chosen else m[-1][2] - w
            nxt = next((m[fixed[q]][2] for q in slots[j + 1:] if q in fixed), m[0][2] + w)
            for e in index.between(qf.members(sf.items[p].type), lo, nxt):
                go(j + 1, chosen + [e])

        go(0, [])
    return out


def projection_applies(sc: Shape, sf: Shape) -> int | None:
    """The position of the one extra item of ``sf`` over ``sc`` (interior), or None."""
    if len(sf) != len(sc) + 1:
        return None
    emb = embedding(sc, sf)
    if emb is None:
        return None
    extra = next(p for p in range(len(sf)) if p not in emb)
    if extra == 0 or extra == len(sf) - 1:
        return None
    return extra


def projection_delta(qc: Query, sc: Shape, sf: Shape, extra: int) -> Query:
    """The coarser query's matches a projection cannot give: the extra positive item negated in
    its gap, or the extra negated item required."""
    item = sf.items[extra]
    items = list(sc.items)  # (every item of sf before ``extra`` is one of sc's)
    items.insert(extra, Item(item.type, True, item.var, exists=item.negated))
    return with_items(qc, items, name="a projection's delta")


def pattern_projection(qc: Query, sc: Shape, sf: Shape, extra: int, matches: list[Match],
                       delta: list[Match], index: EventIndex) -> list[Match]:
    """The shorter query's matches from the longer query's (one extra item at ``extra``)."""
    item = sf.items[extra]
    if item.negated:
        return list(matches) + list(delta)
    k = sum(1 for p in range(extra) if not sf.items[p].negated)  # the extra event's index in a match
    projected = {m[:k] + m[k + 1:] for m in matches}
    return [m for m in projected if _negations_hold(qc, sc, m, index)] + list(delta)
