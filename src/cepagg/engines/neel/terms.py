"""A nested query as signed flat terms whose aggregates add up to the query's.

The normal form (:mod:`cepagg.lang.neel`) is a union of flat sequences -- the *disjuncts*. A
match of the query is a match of at least one disjunct (docs/semantics.md §3: a match is the
events bound to each variable, so OR is a set union). The count of a union is the sum of the
disjuncts' counts when they are disjoint; two disjuncts are disjoint when their positive items
differ: other variables, or the same variables in another order (SEQ orders are strict) -- a
match binds exactly the positive variables of its disjunct. Disjuncts with the *same* positive
items (what negation push-down produces: ``SEQ(A, !C, D) ∪ SEQ(A, ∃SEQ(!B, C, !C), D)``) may
share matches; their union is computed by inclusion-exclusion over their intersections, which
are flat sequences again (same positive items, every NOT/EXISTS item of both in the same
gaps, every condition of both). So:

* COUNT, SUM and AVG's (sum, n): the signed sum over the terms, exact;
* MIN and MAX: the min/max over the disjuncts alone (a min over a union is the min of the
  mins whatever the overlap); intersection terms carry no MIN/MAX.

An AND of events inside the top-level SEQ is first split into interleavings
(:mod:`.interleave`), which are disjoint by construction; each is normalised on its own.

>>> from cepagg.lang import compile_query
>>> plan = decompose(compile_query("RETURN COUNT(*) PATTERN SEQ(A a, NOT AND(B, C), D d) WITHIN 10"))
>>> [(t.sign, t.text) for t in plan.terms]
[(1, 'SEQ(A a, NOT B, D d)'), (-1, 'SEQ(A a, NOT B, NOT C, D d)'), (1, 'SEQ(A a, NOT C, D d)')]

An intersection that cannot match is left out (a gap with ``NOT C`` and an EXISTS of a C):

>>> plan = decompose(compile_query("RETURN COUNT(*) PATTERN SEQ(A a, NOT SEQ(B b, C c), D d) WITHIN 10"))
>>> [(t.sign, t.text) for t in plan.terms]
[(1, 'SEQ(A a, NOT C c2, D d)'), (1, 'SEQ(A a, EXISTS SEQ(NOT B b, C c, NOT C c3), D d)')]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from ...errors import QueryError
from ...lang import ast
from ...lang.analyze import analyze
from ...lang.model import Query
from ...lang.neel import NotNormalisable, normalize, top_scope_is_wide
from ...lang.neel.terms import declared_vars, expr_vars, is_boolean, is_positive_or
from ...lang.neel.text import pattern_text
from . import interleave, witness

#: at most this many inclusion-exclusion terms (intersections that can match) per query
MAX_TERMS = 64


class NotDecomposable(Exception):
    """The query cannot be evaluated as signed flat terms; ``str()`` says why."""


@dataclass
class Term:
    """One flat query of the decomposition.

    Attributes:
        query: the flat query (same clauses; WHERE conjuncts and aggregates of variables it does
            not bind dropped: such conditions hold vacuously and such aggregates are empty).
        text: its pattern as text.
        sign: +1 or -1 (inclusion-exclusion).
        size: how many disjuncts it intersects (1 for a disjunct).
        cells: for each aggregate of the whole query, the index of its cell in this term's rows,
            or None when the term does not bind its variables (an empty cell).
        offsets: per-type time offsets (:mod:`.interleave`), empty when times are used as they are.
        scale: the time scale K of the offsets (1 when none).
        witnesses: witness type -> (the type whose events it stands for, types whose events at
            a time exclude a witness there) (:mod:`.witness`).
    """

    query: Query
    text: str
    sign: int
    size: int
    cells: tuple[int | None, ...]
    offsets: dict[str, int] = field(default_factory=dict)
    scale: int = 1
    witnesses: dict[str, tuple] = field(default_factory=dict)


@dataclass
class Decomposition:
    terms: list[Term]
    interleavings: list[str]  # the interleavings of an AND (empty when none)
    steps: list[str]          # rewrite steps of the normal form, as ``rule: after``
    disjoint_note: list[str]  # how the disjuncts combine, for explain


def decompose(query: Query) -> Decomposition:
    """The signed flat terms of ``query``; raises :class:`NotDecomposable`. A query that
    returns matches has no signed terms: its plan is the union of its disjuncts
    (:func:`cepagg.engines.neel.union.match_plan`)."""
    if query.returns_matches:
        from .union import match_plan

        return match_plan(query)
    if query.mode == "emit":
        raise NotDecomposable("EMIT ON CHANGE: the rows of the flat patterns change at different "
                              "instants and carry no partial cells to add up")
    alts, steps, interleavings = disjuncts(query)
    terms: list[Term] = []
    notes: list[str] = []
    patterns = [a for a, _ in alts]
    clusters = _clusters(patterns)
    only_extremes = all(a.func in ("MIN", "MAX") for a in query.aggregates)
    for cluster in clusters:
        found = _intersections(cluster, patterns, 1 if only_extremes else len(cluster))
        if len(cluster) > 1:
            shared = sum(1 for subset, _ in found if len(subset) > 1)
            notes.append((f"overlapping (same positive events), by inclusion-exclusion over {shared} "
                          "intersection(s) that can match: " if shared else
                          "pairwise contradictory, so disjoint: ")
                         + " ∪ ".join(pattern_text(patterns[i]) for i in cluster))
        for subset, p in found:
            ties = frozenset.intersection(*(alts[i][1] for i in subset))
            terms.append(_term(query, p, 1 if len(subset) % 2 else -1, len(subset), ties))
            if len(terms) > MAX_TERMS:
                raise NotDecomposable(f"more than {MAX_TERMS} inclusion-exclusion terms")
    if len(clusters) > 1:
        notes.append(("disjoint" if not notes else "the groups of disjuncts are disjoint")
                     + " (different positive events or orders): rows add up")
    return Decomposition(terms, interleavings, steps, notes)


def disjuncts(query: Query) -> tuple[list[tuple[ast.Pattern, frozenset]], list[str], list[str]]:
    """The flat disjuncts of ``query``'s pattern -- the alternatives of its normal form, an AND
    inside the top-level SEQ split into its interleavings -- each with its tie pairs
    (:mod:`.interleave`); the rewrite steps; the interleavings as text. Raises
    :class:`NotDecomposable` when there are none, or when the pattern is flat already."""
    if query.strategy != "skip-till-any-match":
        raise NotDecomposable(f"{query.strategy}: the normal form is a union of matches under "
                              "skip-till-any-match only")
    if query.within_events is not None:
        raise NotDecomposable("WITHIN n EVENTS")
    root = query.syntax.pattern
    wide = top_scope_is_wide(query)
    steps: list[str] = []
    interleavings: list[str] = []
    try:
        normal, done = normalize(root, top_wide=wide)
        steps = [f"{s.rule}: {s.after}" for s in done]
        alts = [(a, frozenset()) for a in _alternatives(normal)]
    except NotNormalisable as e:
        if not interleave.has_and_in_seq(root):
            raise NotDecomposable(f"no normal form: {e}") from None
        alts = []
        for p, ties in _interleavings(root, interleavings, f"no normal form ({e}), and "):
            try:
                normal, _ = normalize(p, top_wide=wide)
            except NotNormalisable as e2:
                raise NotDecomposable(f"interleaving {pattern_text(p)} has no normal form: {e2}") from None
            alts += [(a, ties) for a in _alternatives(normal)]
    if any(isinstance(a, ast.AndPattern) for a, _ in alts):
        flat = []
        for a, ties in alts:
            flat += _interleavings(a, interleavings, "") if isinstance(a, ast.AndPattern) else [(a, ties)]
        alts = flat
    if interleavings and query.concept_types:  # (ties are ordered by the events' own types)
        raise NotDecomposable("an AND inside a SEQ over concept types (" + ", ".join(sorted(query.concept_types))
                              + "): its interleavings order tied events by their types")
    if not steps and not interleavings and len(alts) == 1 and not any(
            isinstance(x, ast.Exists) for x in alts[0][0].walk()):
        raise NotDecomposable("the pattern is flat: nothing to decompose")
    return alts, steps, interleavings


def _intersections(cluster: list[int], patterns: list[ast.Pattern], most: int) -> list[tuple[list[int], ast.Pattern]]:
    """Every non-empty subset of ``cluster`` (up to ``most`` members) whose intersection can
    match, with that intersection; a subset that cannot match is not extended (its supersets
    cannot either)."""
    out: list[tuple[list[int], ast.Pattern]] = []

    def grow(start: int, subset: list[int], p: ast.Pattern | None) -> None:
        for j in range(start, len(cluster)):
            i = cluster[j]
            q = patterns[i] if p is None else _intersection([p, patterns[i]])
            if q is None:
                continue  # contradictory: no match
            out.append((subset + [i], q))
            if len(out) > MAX_TERMS:
                raise NotDecomposable(f"more than {MAX_TERMS} inclusion-exclusion terms")
            if len(subset) + 1 < most:
                grow(j + 1, subset + [i], q)

    grow(0, [], None)
    return out


def _interleavings(p: ast.Pattern, shown: list[str], why: str) -> list[tuple[ast.Pattern, frozenset]]:
    try:
        expanded = interleave.expand(p)
    except interleave.CannotInterleave as e:
        raise NotDecomposable(f"{why}{e}") from None
    for x, ties in expanded:
        shown.append(pattern_text(x) + (" (ties: " + ", ".join(f"{a} <= {b}" for a, b in sorted(ties))
                                        + ")" if ties else ""))
    return expanded


def _alternatives(p: ast.Pattern) -> list[ast.Pattern]:
    return list(p.items) if is_positive_or(p) else [p]


def _skeleton(p: ast.Pattern) -> tuple:
    """The positive items of a flat conjunct, without conditions: what a match binds."""
    items = p.items if isinstance(p, ast.Seq) else (p,)
    out = []
    for x in items:
        if is_boolean(x):
            continue
        kleene = isinstance(x, ast.Kleene)
        body = x.body if kleene else x
        body = body.body if isinstance(body, ast.Qualified) else body
        if not isinstance(body, ast.EventPattern):
            raise NotDecomposable(f"{pattern_text(x)} is not an event")
        out.append((body.var or body.type, body.type, kleene))
    if isinstance(p, ast.AndPattern):
        raise NotDecomposable(f"{pattern_text(p)}: an AND conjunct (no flat engine evaluates AND)")
    return tuple(out)


def _clusters(alts: list[ast.Pattern]) -> list[list[int]]:
    """Indices of the disjuncts grouped by skeleton; raises when two groups might overlap."""
    by: dict[tuple, list[int]] = {}
    for i, p in enumerate(alts):
        by.setdefault(_skeleton(p), []).append(i)
    keys = list(by)
    for k1, k2 in itertools.combinations(keys, 2):
        if any(kl for *_, kl in k1 + k2) and {v for v, *_ in k1} == {v for v, *_ in k2}:
            raise NotDecomposable(f"{pattern_text(alts[by[k1][0]])} and {pattern_text(alts[by[k2][0]])} "
                                  "bind the same variables with Kleene runs split differently: "
                                  "their overlap is not a flat pattern")
    return list(by.values())


def gaps_of(p: ast.Pattern) -> tuple[list[ast.Pattern], list[list[ast.Pattern]]]:
    """Positive items of a flat SEQ and the boolean items of each gap (before, between, after them)."""
    items = p.items if isinstance(p, ast.Seq) else (p,)
    pos, gaps = [], [[]]
    for x in items:
        if is_boolean(x):
            gaps[-1].append(x)
        else:
            pos.append(x)
            gaps.append([])
    return pos, gaps


def _intersection(ps: list[ast.Pattern]) -> ast.Pattern | None:
    """The flat pattern whose matches are in every one of ``ps`` (same skeleton), or None when
    it can have none."""
    if len(ps) == 1:
        return ps[0]
    pos, gaps = gaps_of(ps[0])
    quals = list(ps[0].quals) if isinstance(ps[0], ast.Seq) else []
    for other in ps[1:]:
        opos, ogaps = gaps_of(other)
        pos = [_merge_positive(a, b) for a, b in zip(pos, opos)]
        for g, extra in zip(gaps, ogaps):
            g += [x for x in extra if pattern_text(x) not in {pattern_text(y) for y in g}]
        if isinstance(other, ast.Seq):
            quals += [q for q in other.quals if q not in quals]
    for g in gaps:
        if _contradicts(g) or witness.contradicts(g):
            return None
    items: list[ast.Pattern] = list(gaps[0])
    for x, g in zip(pos, gaps[1:]):
        items += [x] + list(g)
    return ast.Seq(tuple(items), tuple(quals))


def _merge_positive(a: ast.Pattern, b: ast.Pattern) -> ast.Pattern:
    if pattern_text(a) == pattern_text(b):
        return a
    qa = a.quals if isinstance(a, ast.Qualified) else ()
    qb = b.quals if isinstance(b, ast.Qualified) else ()
    body = a.body if isinstance(a, ast.Qualified) else a
    return ast.Qualified(body, tuple(qa) + tuple(q for q in qb if q not in qa))


def _contradicts(gap: list[ast.Pattern]) -> bool:
    """A gap with ``NOT T`` (no conditions) and an EXISTS that needs a T event in the same gap."""
    banned = {x.body.type for x in gap if isinstance(x, ast.Not) and isinstance(x.body, ast.EventPattern)
              and x.body.type is not None}
    for x in gap:
        if isinstance(x, ast.Exists):
            body = x.body.items if isinstance(x.body, (ast.Seq, ast.AndPattern)) else (x.body,)
            for item in body:
                inner = item.body if isinstance(item, ast.Qualified) else item
                if isinstance(inner, ast.EventPattern) and inner.type in banned:
                    return True
    return False


# ----------------------------------------------------------------------------------------------
# The flat query of a term


def _term(query: Query, p: ast.Pattern, sign: int, size: int, ties: frozenset) -> Term:
    syntax = query.syntax
    names = declared_vars(p)
    cells: list[int | None] = []
    returns, agg = [], []
    n = 0
    for src, dst in ((syntax.returns, returns), (syntax.agg, agg)):
        for item in src:
            if isinstance(item.expr, ast.AggCall):
                if item.expr.var is not None and item.expr.var not in names:
                    cells.append(None)
                    continue
                cells.append(n)
                n += 1
            dst.append(item)
    if n == 0:  # the term binds none of the aggregated variables: count its rows anyway
        returns.append(ast.ReturnItem(ast.AggCall("COUNT", None, None), None, "COUNT(*)"))
    flat, offsets, scale, witnesses = flat_query(query, p, tuple(returns), tuple(agg), ties, names)
    return Term(flat, pattern_text(p), sign, size, tuple(cells), offsets, scale, witnesses)


def flat_query(query: Query, p: ast.Pattern, returns: tuple, agg: tuple, ties: frozenset,
               taken: set[str]) -> tuple[Query, dict[str, int], int, dict[str, tuple]]:
    """The flat disjunct ``p`` as a query of its own with the given RETURN and AGG items, the
    query's other clauses (WHERE conjuncts of variables it does not bind dropped), its EXISTS
    items as witness events (:mod:`.witness`, their variables named apart from ``taken``) and
    its tie pairs as a time transform (:mod:`.interleave`): ``(query, offsets, scale,
    witnesses)``. Raises :class:`NotDecomposable`."""
    syntax = query.syntax
    try:
        run, witnesses = witness.inline(p, taken)
    except witness.NoWitness as e:
        raise NotDecomposable(f"{pattern_text(p)}: {e}") from None
    sub = replace(syntax, pattern=run, where=_where(syntax.where, declared_vars(p)), returns=returns, agg=agg)
    try:
        flat = replace(analyze(sub, query.text, time_unit=query.time_unit), hierarchy=query.hierarchy)
    except QueryError as e:
        raise NotDecomposable(f"the flat pattern {pattern_text(p)} is not a query of its own: {e}") from None
    untyped = [v.name for v in flat.variables.values() if v.type is None and not v.negated]
    if witnesses and untyped:
        raise NotDecomposable(f"{pattern_text(p)}: the untyped variable {untyped[0]} would bind the witness "
                              "events an EXISTS is evaluated with")
    if witnesses and (flat.equivalences or flat.stream_filters):
        raise NotDecomposable(f"{pattern_text(p)}: witness events of an EXISTS carry only the partition "
                              "attributes; the query also constrains other attributes of every event")
    offsets: dict[str, int] = {}
    scale = 1
    if ties:
        try:
            offsets = interleave.offsets(run, ties)
        except interleave.CannotInterleave as e:
            raise NotDecomposable(str(e)) from None
        scale = max(offsets.values()) + 1
        if scale == 1:
            offsets = {}
        else:
            flat = _scaled(flat, run, offsets, scale)
    return flat, offsets, scale, witnesses


def _where(where: ast.Expr | None, names: set[str]) -> ast.Expr | None:
    """The WHERE conjuncts that mention only variables of the term (the others hold vacuously:
    docs/semantics.md §5)."""
    if where is None:
        return None
    parts = where.operands if isinstance(where, ast.BoolOp) and where.op == "and" else (where,)
    kept = []
    for c in parts:
        if isinstance(c, ast.Equivalence):
            attrs = tuple(a for a in c.attrs if a.var is None or a.var in names)
            if attrs:
                kept.append(replace(c, attrs=attrs))
        elif expr_vars(c) <= names:
            kept.append(c)
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ast.BoolOp("and", tuple(kept))


def _scaled(flat: Query, p: ast.Pattern, offsets: dict[str, int], k: int) -> Query:
    """The term's query over times ``k*t + offsets[type]``."""
    if "ts" in flat.attributes:
        raise NotDecomposable("the query reads the attribute ts, which the tie transform of an AND "
                              "changes")
    items = p.items if isinstance(p, ast.Seq) else (p,)
    if flat.mode == "slide":
        return replace(flat, within=flat.within * k, slide=flat.slide * k)
    if is_boolean(items[0]) or is_boolean(items[-1]):
        raise NotDecomposable(f"{pattern_text(p)}: a NOT/EXISTS before the first or after the last event "
                              "under WITHIN alone looks one window from the match, which the tie "
                              "transform of an AND does not keep")
    if flat.within is None:
        return flat
    first = _skeleton(p)[0][1]
    last = _skeleton(p)[-1][1]
    return replace(flat, within=k * (flat.within - 1) + offsets[last] - offsets[first] + 1)


def interleaving_lines(interleavings) -> list[str]:
    """What ``explain`` says of an AND inside a SEQ (aggregates and matches alike)."""
    if not interleavings:
        return []
    return ["AND inside SEQ: the union of its interleavings (disjoint; tied events in the AND's written order "
            "only)"] + [f"  {x}" for x in interleavings]
