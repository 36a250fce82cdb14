"""Random GRETA queries: nested Kleene patterns, negation inside and around, edge
predicates, groups, windows, every aggregate. Used by the property tests."""

from __future__ import annotations

import random

from generators import random_stream

#: attributes of the random streams: a number (with nulls) and a string
ATTRS = {"x": (0, 5, 0.1), "g": ["u", "v"]}

OPS = ["<", "<=", ">", ">=", "="]
POOL = "ABCDFGHJKM"  # no letter of SEQ / NOT


class _Types:
    def __init__(self, rng: random.Random, pool: str):
        self.rng = rng
        self.free = list(pool)
        rng.shuffle(self.free)

    def take(self) -> str:
        return self.free.pop()


def _positive(rng: random.Random, types: _Types, depth: int, kleene_atoms: list[str],
              negs: list[tuple], budget: list[int]) -> str:
    """A positive pattern; may put NOT items into its SEQs (recorded in ``negs``)."""
    r = rng.random()
    if depth <= 0 or budget[0] <= 1 or r < 0.25:
        t = types.take()
        budget[0] -= 1
        if rng.random() < 0.5:
            kleene_atoms.append(t)
            return f"{t}+"
        return t
    if r < 0.55 and depth >= 1:
        inner = _seq(rng, types, depth - 1, kleene_atoms, negs, budget)
        return f"({inner})+"
    return _seq(rng, types, depth - 1, kleene_atoms, negs, budget)


def _seq(rng, types, depth, kleene_atoms, negs, budget) -> str:
    n = rng.randint(1 if depth > 0 else 2, 3)
    items = []
    for _ in range(n):
        if budget[0] <= 0:
            break
        items.append(_positive(rng, types, depth, kleene_atoms, negs, budget))
    if not items:
        items.append(types.take())
    # negation slots: leading, between, trailing
    out = []
    for k, it in enumerate(items):
        if rng.random() < 0.2 and types.free:
            out.append("NOT " + _negative(rng, types))
        out.append(it)
    if rng.random() < 0.15 and types.free:
        out.append("NOT " + _negative(rng, types))
    if len(out) == 1:
        return out[0]
    return "SEQ(" + ", ".join(out) + ")"


def _negative(rng: random.Random, types: _Types) -> str:
    r = rng.random()
    a = types.take()
    if r < 0.55 or len(types.free) < 2:
        return a
    b = types.take()
    if r < 0.75:
        return f"SEQ({a}, {b})"
    if r < 0.85 and types.free:
        c = types.take()
        return f"SEQ({a}, NOT {c}, {b})"
    return f"SEQ({a}+, {b})"


def random_query(rng: random.Random, *, modes=("total", "within", "slide", "emit"),
                 depth: int = 2, groups: bool = True, strategy: str | None = None) -> tuple[str, str]:
    """(query text, the event types it mentions)."""
    while True:
        types = _Types(rng, POOL)
        kleene: list[str] = []
        negs: list = []
        try:
            pattern = _positive(rng, types, depth, kleene, negs, [rng.randint(2, 5)])
            break
        except IndexError:  # ran out of types: draw again
            continue
    if not any(p in pattern for p in "+") and rng.random() < 0.7:
        pattern = f"({pattern})+" if not pattern.endswith("+") else pattern
    used = sorted({c for c in pattern if c in POOL})
    positive_types = _positive_types(pattern)
    where = []
    for t in kleene:
        if rng.random() < 0.5:
            op = rng.choice(OPS + ["!="])
            form = rng.random()
            if form < 0.6:
                where.append(f"{t}.x {op} NEXT({t}).x")
            elif form < 0.8:
                where.append(f"{t}.x * 2 {op} NEXT({t}).x + 1")
            else:
                where.append(f"{t}.x - NEXT({t}).x {op} 1")
    for t in used:
        if rng.random() < 0.15:
            where.append(f"{t}.x {rng.choice(OPS)} {rng.randint(0, 5)}")
    grouped = groups and rng.random() < 0.35
    if grouped:
        where.insert(0, "[g]")
    aggs = ["COUNT(*)"]
    for _ in range(rng.randint(0, 3)):
        t = rng.choice(positive_types)
        aggs.append(rng.choice([f"COUNT({t})", f"SUM({t}.x)", f"AVG({t}.x)", f"MIN({t}.x)",
                                f"MAX({t}.x)"]))
    aggs = list(dict.fromkeys(aggs))
    rng.shuffle(aggs)
    ret = (["g"] if grouped and rng.random() < 0.7 else []) + aggs
    text = f"RETURN {', '.join(ret)} PATTERN {pattern}"
    if where:
        text += " WHERE " + " AND ".join(where)
    if ret[0] == "g":
        text += " GROUP BY g"
    mode = rng.choice(modes)
    w = rng.randint(3, 9)
    if mode == "within":
        text += f" WITHIN {w}"
    elif mode == "slide":
        text += f" WITHIN {w} SLIDE {rng.randint(1, w)}"
    elif mode == "emit":
        text += f" WITHIN {w} EMIT ON CHANGE" if rng.random() < 0.8 else " EMIT ON CHANGE"
    if strategy:
        text += f" STRATEGY {strategy}"
    return text, "".join(used)


def keyed(text: str) -> str:
    """``text`` partitioned by ``k`` as well: ``[k]`` added to (or opening) its WHERE."""
    if " WHERE [g]" in text:
        return text.replace(" WHERE [g]", " WHERE [g, k]", 1)
    if " WHERE " in text:
        return text.replace(" WHERE ", " WHERE [k] AND ", 1)
    cut = min([i for i in (text.find(c) for c in (" GROUP BY", " WITHIN", " EMIT", " STRATEGY")) if i >= 0],
              default=len(text))
    return text[:cut] + " WHERE [k]" + text[cut:]


def _positive_types(pattern: str) -> list[str]:
    """Types of the positive pattern (outside NOT bodies)."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("NOT ", i):
            # skip the negated item: a type, or SEQ(...) with balanced parentheses
            j = i + 4
            if pattern.startswith("SEQ(", j):
                d = 0
                while True:
                    if pattern[j] == "(":
                        d += 1
                    elif pattern[j] == ")":
                        d -= 1
                        if d == 0:
                            break
                    j += 1
                i = j + 1
            else:
                i = j + 1
            continue
        c = pattern[i]
        if c in POOL:
            out.append(c)
        i += 1
    return sorted(set(out)) or ["A"]


def random_case(seed: int, **kw) -> tuple[str, list[dict]]:
    """A random query (:func:`random_query`, depth 3) and a short random stream of its types."""
    rng = random.Random(seed)
    text, types = random_query(rng, depth=3, **kw)
    rows = random_stream(rng, types, n=rng.randint(6, 13), max_gap=2, attrs=ATTRS)
    return text, rows
