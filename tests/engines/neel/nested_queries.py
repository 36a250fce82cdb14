"""Random nested queries for the neel tests: SEQ/OR/AND/NOT nestings (OR of events and of
sequences, AND of events inside a SEQ and at the top, NOT over events, OR, AND and SEQ, EXISTS,
qualifications, Kleene over events), keyed and keyless, under WITHIN alone and SLIDE; returning
aggregates or matches."""

from __future__ import annotations

import random
import re

from cepagg.engines import ENGINES
from cepagg.errors import QueryError
from cepagg.lang import compile_query

TYPES = "ABCDE"
ATTRS = {"x": (0, 5), "g": ["u", "v"]}


class _Names:
    def __init__(self):
        self.n = 0

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"


def _event(rng: random.Random, names: _Names, types: str = TYPES) -> str:
    t = rng.choice(types)
    v = names.var()
    r = rng.random()
    if r < 0.15:
        return f"({t} {v}, {v}.x > {rng.randint(0, 3)})"
    if r < 0.22:
        return f"{t} {v}+"
    return f"{t} {v}"


def _negated(rng: random.Random) -> str:
    a, b = rng.sample(TYPES, 2)
    c = rng.choice(TYPES)
    return rng.choice([f"NOT {a}", f"NOT OR({a}, {b})", f"NOT AND({a}, {b})", f"NOT SEQ({a}, {b})",
                       f"NOT SEQ({a}, {b}, {c})", f"EXISTS SEQ({a}, {b})", f"EXISTS {a}",
                       f"NOT ({a} n, n.x > 2)"])


def _item(rng: random.Random, names: _Names, depth: int) -> str:
    r = rng.random()
    if r < 0.45 or depth == 0:
        return _event(rng, names)
    if r < 0.7:
        return "OR(" + ", ".join(_item(rng, names, depth - 1) for _ in range(rng.randint(2, 3))) + ")"
    if r < 0.85:
        types = rng.sample(TYPES, rng.randint(2, 3))
        return "AND(" + ", ".join(f"{t} {names.var()}" for t in types) + ")"
    return "SEQ(" + ", ".join(_item(rng, names, depth - 1) for _ in range(2)) + ")"


def random_nested_pattern(rng: random.Random) -> str:
    names = _Names()
    if rng.random() < 0.1:
        return "AND(" + ", ".join(f"{t} {names.var()}" for t in rng.sample(TYPES, rng.randint(2, 3))) + ")"
    if rng.random() < 0.1:
        return "OR(" + ", ".join("SEQ(" + _event(rng, names) + ", " + _event(rng, names) + ")"
                                 for _ in range(2)) + ")"
    items = [_item(rng, names, 2) for _ in range(rng.randint(2, 3))]
    for k in range(1, len(items)):
        if rng.random() < 0.3:
            items.insert(k, _negated(rng))
    return "SEQ(" + ", ".join(items) + ")"


def random_nested_query(rng: random.Random) -> str:
    pattern = random_nested_pattern(rng)
    keyed = rng.random() < 0.4
    mode = rng.choice(["WITHIN 6", "WITHIN 5 SLIDE 2", "WITHIN 7"])
    where = " WHERE [g]" if keyed and rng.random() < 0.6 else ""
    group = " GROUP BY g" if keyed else ""
    agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(v1.x)", "MAX(v1.x)", "COUNT(*), MIN(v2.x), AVG(v1.x)",
                      "COUNT(v2)"])
    return f"RETURN {'g, ' if keyed else ''}{agg} PATTERN {pattern}{where}{group} {mode}"


def random_match_query(rng: random.Random) -> str:
    """A nested query returning matches: every positive variable, or some of them (a variable
    that turns out negated makes the text invalid; the caller draws again)."""
    pattern = random_nested_pattern(rng)
    keyed = rng.random() < 0.4
    mode = rng.choice(["WITHIN 6", "WITHIN 5 SLIDE 2", "WITHIN 7"])
    where = " WHERE [g]" if keyed else ""
    names = sorted(set(re.findall(r"\bv\d+\b", pattern)))
    ret = ""
    if names and rng.random() < 0.5:
        ret = "RETURN " + ", ".join(rng.sample(names, rng.randint(1, len(names)))) + " "
    return f"{ret}PATTERN {pattern}{where} {mode}"


def accepted_queries(rng: random.Random, make, n: int):
    """(text, query) of ``n`` random queries from ``make(rng)`` that neel accepts; at the end,
    checks that fewer were refused than accepted (so a test cannot pass by refusing)."""
    accepted = refused = 0
    while accepted < n:
        text = make(rng)
        try:
            q = compile_query(text)
        except QueryError:
            continue
        if ENGINES["neel"].refusal(q) is not None:
            refused += 1
            continue
        yield text, q
        accepted += 1
    assert refused < accepted, (accepted, refused)
