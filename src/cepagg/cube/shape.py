"""A cube query's pattern as E-Cube sees it: a flat sequence of typed items, some negated.

E-Cube (Mo Liu, "Extending Event Sequence Processing: New Models and Optimization Techniques",
PhD dissertation, WPI, 2012, ch. 4) organises flat SEQ queries with negation; this module reads
such a pattern out of a compiled query (:func:`shape_of`) and writes a query back with other
types or items in its pattern and everything else unchanged (:func:`with_items`).

>>> from cepagg.lang import compile_query
>>> from cepagg.cube.shape import shape_of
>>> q = compile_query("RETURN COUNT(*) PATTERN SEQ(G, !D, A a, T) WITHIN 10")
>>> shape_of(q).text()
'SEQ(G, !D, A, T)'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

from ..errors import CepaggError
from ..lang import compile_query
from ..lang.concepts import Hierarchy
from ..lang.model import Atom, NotP, Query, SeqP
from ..lang.printer import pattern_text, to_text


class CubeError(CepaggError):
    """A query or operation the cube cannot take; one line naming it."""


@dataclass(frozen=True)
class Item:
    """One position of a flat SEQ: an event type, negated or not, and its variable."""

    type: str
    negated: bool
    var: str
    exists: bool = False  # (only in a delta query: the event must occur in the gap)

    def text(self) -> str:
        return ("!" if self.negated else "") + self.type


@dataclass(frozen=True)
class Shape:
    items: tuple[Item, ...]

    def text(self) -> str:
        return "SEQ(" + ", ".join(i.text() for i in self.items) + ")"

    @property
    def key(self) -> tuple[tuple[str, bool], ...]:
        """The pattern without variable names (two queries with equal keys have one pattern)."""
        return tuple((i.type, i.negated) for i in self.items)

    def __len__(self) -> int:
        return len(self.items)


def shape_of(q: Query, name: str = "the query") -> Shape:
    """The flat sequence of ``q``'s pattern; refuses what E-Cube's model has no place for."""
    p = q.pattern
    atoms = p.items if isinstance(p, SeqP) else (p,)
    items = []
    scoped = {c.scope for c in q.conditions if c.scope is not None}
    for a in atoms:
        neg = isinstance(a, NotP)
        atom = a.body if neg else a
        if not isinstance(atom, Atom) or atom.type is None:
            raise CubeError(f"{name}: the cube takes flat SEQ patterns of typed events (E-Cube's model), "
                            f"not items such as {pattern_text(a)}")
        if neg and a.id in scoped:
            raise CubeError(f"{name}: the cube takes no conditions on negated events")
        var = atom.var.split("@")[0]
        if not neg and q.variables[atom.var].multi:
            raise CubeError(f"{name}: type {atom.type} stands twice for one variable; give each an alias")
        items.append(Item(atom.type, neg, var))
    if not any(not i.negated for i in items):
        raise CubeError(f"{name}: the pattern has no positive event")
    return Shape(tuple(items))


def _pattern_text(items: Iterable[Item]) -> str:
    parts = []
    for k, i in enumerate(items):
        if i.exists:
            parts.append(f"EXISTS {_name(i.type)} n{k}__")
        else:
            parts.append(f"NOT {_name(i.type)} n{k}__" if i.negated else f"{_name(i.type)} {_name(i.var)}")
    return "PATTERN SEQ(" + ", ".join(parts) + ")"


def _name(n: str) -> str:
    import re

    return n if re.fullmatch(r"[^\W\d]\w*", n) else f"`{n}`"


def with_items(q: Query, items: Iterable[Item], hierarchy=None, name: str = "the query") -> Query:
    """``q`` with its pattern replaced by ``items`` (the other clauses as they are).

    ``hierarchy``: the type hierarchy of the new query (default ``q``'s); any object with
    ``is_concept`` and ``leaves``, e.g. :class:`TypeSets` for the delta queries of a reuse.
    """
    items = list(items)
    body = to_text(replace(q, hierarchy=Hierarchy()))
    rest = body.split("\n", 1)[1] if "\n" in body else ""
    positives = {v.split("@")[0] for v, var in q.variables.items() if not var.negated}
    if q.returns_matches and {v.split("@")[0] for v in q.return_vars} == positives and rest:
        lines = rest.split("\n")  # it returns whole matches: so does the new query (RETURN is last)
        rest = "\n".join(lines[:-1]) if lines[-1].startswith("RETURN ") else rest
    text = _pattern_text(items) + ("\n" + rest if rest else "")
    h = q.hierarchy if hierarchy is None else hierarchy
    try:
        new = compile_query(text, time_unit=q.time_unit, hierarchy=h if isinstance(h, Hierarchy) else None)
    except CepaggError as e:
        raise CubeError(f"{name}: {str(e).splitlines()[0]}") from None
    if not isinstance(h, Hierarchy):
        new = replace(new, hierarchy=h)
    return new


@dataclass(frozen=True)
class TypeSets:
    """Named sets of event types, read like a hierarchy's concepts (``Query.members``): what a
    delta query of a reuse matches at each position (e.g. the types of ``Vehicle`` not below
    ``Bus``). Not a tree, so it never leaves the process."""

    sets: tuple[tuple[str, frozenset[str]], ...]

    @staticmethod
    def of(mapping: Mapping[str, frozenset[str]]) -> "TypeSets":
        return TypeSets(tuple(sorted((k, frozenset(v)) for k, v in mapping.items())))

    def is_concept(self, t) -> bool:
        return t is not None and any(k == t for k, _ in self.sets)

    def leaves(self, t: str) -> frozenset[str]:
        return dict(self.sets).get(t, frozenset((t,)))

    def __bool__(self) -> bool:
        return bool(self.sets)

    def lines(self) -> str:
        return "\n".join(f"-- {k} = ({', '.join(sorted(v))})" for k, v in self.sets)
