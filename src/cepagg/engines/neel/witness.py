"""EXISTS items of the normal form as flat sequences, counted once.

Negation push-down (NEEL's NPDR1, Mo Liu's dissertation §5.2.5) turns ``NOT SEQ(B, C)`` into
``NOT C ∨ EXISTS SEQ(NOT B, C, NOT C)``: "the last C of the gap has no B before it". aseq and
GRETA have no EXISTS. But such an EXISTS is a **chain**: every event of its body is followed by
a NOT of its own type, so its events are determined -- the last C of the gap, the last B
before it, and so on. Written as positive items of the outer SEQ, ``SEQ(A, NOT B, C w, NOT C, D)``
has exactly one match per match of ``SEQ(A, EXISTS SEQ(NOT B, C, NOT C), D)`` -- provided no two
C events share a time (both would be "last"). The witness therefore binds a **witness event**:
one per partition and time at which a C occurs, of the synthetic type ``C'`` (written
``__w_C``), which :func:`witness_events` adds to the stream. NOTs keep reading the real C events.

A user's ``EXISTS SEQ(B, C)`` (no NOT inside) becomes the first such chain: the first B of the
gap, then the first C after it (``SEQ(A, NOT B, B' w1, NOT C, C' w2, D)``).

A NOT that spans a witness -- ``NOT E`` next to the EXISTS, which must hold in the whole gap --
is written in the sub-gaps on both sides of it, which leave out the witness's own time. So the
witness events of such a position are made only at times without an E event (of the same
partition): a match through a time with an E is not one of the query. Their type names the
excluded types: ``__w_C__not_E``.

Several chains in one gap (intersections of disjuncts) are merged when one is a right part of
the other; they contradict when the shorter one forbids the type at which the longer one
continues -- which is what makes NPDR1's disjuncts disjoint (:func:`contradicts`).

>>> from cepagg.lang.neel.rules.base import pattern
>>> from cepagg.lang.neel.text import pattern_text
>>> p, w = inline(pattern("SEQ(A a, EXISTS SEQ(NOT B, C, NOT C), NOT E, D d)"), set())
>>> pattern_text(p), w
('SEQ(A a, NOT B, NOT E, __w_C__not_E c2, NOT C, NOT E, D d)', {'__w_C__not_E': ('C', ('E',))})
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang import ast
from ...lang.neel.terms import fresh_var, is_boolean
from ...lang.neel.text import pattern_text

PREFIX = "__w_"


class NoWitness(Exception):
    """An EXISTS item that is not a chain; ``str()`` says why."""


@dataclass
class Chain:
    """A body's events, left to right, and the boolean items before, between and after them
    (``gaps`` has one more entry than ``types``)."""

    types: list[str]
    gaps: list[list[ast.Pattern]]
    last: bool  # each event followed by NOT of its type (else: a NOT-free body, first-chain)

    def stops(self) -> set[str]:
        return {t for t in _plain_not_types(self.gaps[0])}


def _plain(p: ast.Pattern) -> str | None:
    """The type of an unqualified typed event, else None."""
    return p.type if isinstance(p, ast.EventPattern) and p.type is not None else None


def _plain_not_types(items: list[ast.Pattern]) -> list[str]:
    return [t for x in items if isinstance(x, ast.Not) and (t := _plain(x.body)) is not None]


def chain_of(item: ast.Exists) -> Chain:
    body = item.body
    items = list(body.items) if isinstance(body, ast.Seq) and not body.quals else [body]
    types: list[str] = []
    gaps: list[list[ast.Pattern]] = [[]]
    for x in items:
        if is_boolean(x):
            if not isinstance(x, ast.Not):
                raise NoWitness(f"{pattern_text(item)} holds {pattern_text(x)}")
            gaps[-1].append(x)
            continue
        t = _plain(x)
        if t is None:
            raise NoWitness(f"{pattern_text(item)}: {pattern_text(x)} is not an event without conditions")
        types.append(t)
        gaps.append([])
    if not types:
        raise NoWitness(f"{pattern_text(item)} has no event")
    last = all(t in _plain_not_types(g) for t, g in zip(types, gaps[1:]))
    if not last and any(gaps):
        raise NoWitness(f"{pattern_text(item)}: its events are not each followed by a NOT of their type, "
                        "so more than one choice of its events may satisfy it")
    return Chain(types, gaps, last)


def contradicts(gap: list[ast.Pattern]) -> bool:
    """Two items of one gap that cannot both hold: ``NOT T`` (or a chain that stops at T) and a
    last-chain that needs a T just before the part they share."""
    chains: list[tuple[list[str], set[str]]] = [([], {t}) for t in _plain_not_types(gap)]
    for x in gap:
        if isinstance(x, ast.Exists):
            try:
                c = chain_of(x)
            except NoWitness:
                continue
            if c.last:
                chains.append((c.types[::-1], c.stops()))
    for s, stop in chains:
        for t, _ in chains:
            if len(s) < len(t) and t[:len(s)] == s and t[len(s)] in stop:
                return True
    return False


def inline(p: ast.Pattern, taken: set[str]) -> tuple[ast.Pattern, dict[str, tuple[str, tuple[str, ...]]]]:
    """``p`` with every EXISTS item replaced by witness events; ``(pattern, witness type ->
    (type, types whose events exclude a time))``. Raises :class:`NoWitness`."""
    if not isinstance(p, ast.Seq) or not any(isinstance(x, ast.Exists) for x in p.items):
        return p, {}
    taken = set(taken) | {n.var for n in p.walk() if isinstance(n, ast.EventPattern) and n.var}
    taken |= {n.type for n in p.walk() if isinstance(n, ast.EventPattern) and n.type}
    out: list[ast.Pattern] = []
    gap: list[ast.Pattern] = []
    witnesses: dict[str, tuple[str, tuple[str, ...]]] = {}
    seen_positive = False
    for x in list(p.items) + [None]:
        if x is not None and is_boolean(x):
            gap.append(x)
            continue
        if any(isinstance(g, ast.Exists) for g in gap):
            if not seen_positive or x is None:
                raise NoWitness("an EXISTS before the first or after the last event of the pattern "
                                "looks up to one window from the match")
            out += _inline_gap(gap, taken, witnesses)
        else:
            out += gap
        gap = []
        if x is not None:
            out.append(x)
            seen_positive = True
    return ast.Seq(tuple(out), p.quals), witnesses


def _inline_gap(gap: list[ast.Pattern], taken: set[str], witnesses: dict) -> list[ast.Pattern]:
    wide = [x for x in gap if not isinstance(x, ast.Exists)]
    if len(_plain_not_types(wide)) < len(wide):
        raise NoWitness(f"{' '.join(pattern_text(x) for x in wide)} next to an EXISTS: only NOT of an event "
                        "without conditions")
    chains = [chain_of(x) for x in gap if isinstance(x, ast.Exists)]
    if len(chains) > 1 and not all(c.last for c in chains):
        raise NoWitness("several EXISTS in one gap, not each a chain of last events")
    longest = max(chains, key=lambda c: len(c.types))
    n = len(longest.types)
    sub: list[list[ast.Pattern]] = [list(g) for g in longest.gaps]
    excluded: list[set[str]] = [set(_plain_not_types(wide)) for _ in longest.types]
    if not longest.last:  # first-chain: the first event of each type after the previous one
        for k, t in enumerate(longest.types):
            sub[k].append(ast.Not(ast.EventPattern(t, None)))
    for c in chains:
        if c is longest:
            continue
        d = len(c.types)
        if longest.types[n - d:] != c.types:
            raise NoWitness("two EXISTS in one gap whose events do not end alike")
        first = n - d  # index in the longest chain of c's first event
        if len(_plain_not_types(c.gaps[0])) < len(c.gaps[0]):
            raise NoWitness("an EXISTS spans a NOT with conditions")
        for k in range(first + 1):
            sub[k] += c.gaps[0]
        for k in range(first):
            excluded[k] |= set(_plain_not_types(c.gaps[0]))
        for j in range(1, d + 1):
            sub[first + j] += c.gaps[j]
    for g in sub:
        g += wide
    out: list[ast.Pattern] = list(_dedup(sub[0]))
    for t, g, ex in zip(longest.types, sub[1:], excluded):
        wtype = PREFIX + t + ("__not_" + "_".join(sorted(ex)) if ex else "")
        witnesses[wtype] = (t, tuple(sorted(ex)))
        out.append(ast.EventPattern(wtype, fresh_var(t, taken)))
        out += _dedup(g)
    return out


def _dedup(items: list[ast.Pattern]) -> list[ast.Pattern]:
    seen, out = set(), []
    for x in items:
        key = pattern_text(x)
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out
