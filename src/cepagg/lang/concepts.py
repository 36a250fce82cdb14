"""Event concept hierarchies: a tree of event types where a concept stands for every type below it.

A hierarchy is given as JSON (``{"Vehicle": ["Bus", "Taxi"], "Bus": ["CityBus", "SchoolBus"]}``:
concept -> its children) or as ``CONCEPT Vehicle = (Bus, Taxi)`` lines in a query or workload
text. A concept used as a type in a pattern matches every event whose type lies below it (Mo Liu,
"Extending Event Sequence Processing: New Models and Optimization Techniques", PhD dissertation,
WPI, 2012, ch. 4, Definition 2). Events keep their own (most specific) type; the compiled query
maps each concept it uses to the set of leaf types below it (:meth:`Hierarchy.leaves`), and the
engines test membership in that set.

The hierarchy travels inside the query text (its ``CONCEPT`` lines, :meth:`Hierarchy.lines`), so
every driver that ships a query's text to Spark workers rebuilds the same hierarchy there.

>>> h = Hierarchy.from_mapping({"Vehicle": ["Bus", "Taxi"], "Bus": ["CityBus", "SchoolBus"]})
>>> sorted(h.leaves("Vehicle")), h.finer("CityBus", "Vehicle"), h.finer("Taxi", "Bus")
(['CityBus', 'SchoolBus', 'Taxi'], True, False)
>>> text, h2 = extract_concepts("CONCEPT Vehicle = (Bus, Taxi)\\nPATTERN SEQ(Vehicle, Taxi)")
>>> h2.parent_of("Bus"), text.strip()
('Vehicle', 'PATTERN SEQ(Vehicle, Taxi)')
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Mapping

from ..errors import QueryError


class HierarchyError(QueryError):
    """A concept hierarchy that cannot be used (a cycle, a type under two concepts, a concept
    that is also an event type of the data, an unknown name); one line naming the culprit."""


_NAME = r"(?:`[^`]+`|[^\W\d]\w*)"
_CONCEPT_LINE = re.compile(r"^\s*CONCEPT\s+(?P<rest>.*)$", re.IGNORECASE)
_CONCEPT_BODY = re.compile(rf"^(?P<name>{_NAME})\s*=\s*\(\s*(?P<kids>{_NAME}(?:\s*,\s*{_NAME})*)\s*,?\s*\)"
                           r"\s*;?\s*(?:--.*)?$")  # (a comment may end the line)
_LOOKS_LIKE = re.compile(r"^\s*CONCEPT\s+(?:`[^`]*`|\S+)\s*=", re.IGNORECASE)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list) -> dict:
    """A JSON object, refusing a key given twice (JSON keeps the last silently: a lost edge)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _unquote(name: str) -> str:
    return name[1:-1] if name.startswith("`") else name


def _quote(name: str) -> str:
    return name if re.fullmatch(r"[^\W\d]\w*", name) and name.upper() != "CONCEPT" else f"`{name}`"


@dataclass(frozen=True)
class Hierarchy:
    """A forest of event types: ``edges`` holds (child, concept) pairs, each child once.

    Build it with :meth:`from_mapping` (checks every rule) rather than directly.
    """

    edges: tuple[tuple[str, str], ...] = ()

    # -- construction ---------------------------------------------------------------------------

    @staticmethod
    def from_mapping(obj: Any, where: str = "the hierarchy") -> "Hierarchy":
        """``{concept: [child, ...]}`` checked: names are non-empty strings, a concept has at
        least one child, no type lies under two concepts, no cycle."""
        if not isinstance(obj, Mapping):
            raise HierarchyError(f"{where}: a hierarchy is a JSON object of concept -> list of children")
        pairs: list[tuple[str, str]] = []
        for concept, kids in obj.items():
            if not isinstance(concept, str) or not concept.strip():
                raise HierarchyError(f"{where}: concept name {concept!r} is not a name")
            if isinstance(kids, str) or not isinstance(kids, (list, tuple)) or not kids:
                raise HierarchyError(f"{where}: concept '{concept}' needs a non-empty list of children, "
                                     f"not {kids!r}")
            for kid in kids:
                if not isinstance(kid, str) or not kid.strip():
                    raise HierarchyError(f"{where}: child {kid!r} of concept '{concept}' is not a name")
                pairs.append((kid, concept))
        return Hierarchy.of_pairs(pairs, where)

    @staticmethod
    def of_pairs(pairs: Iterable[tuple[str, str]], where: str = "the hierarchy") -> "Hierarchy":
        """From (child, concept) pairs; a pair repeated is one pair."""
        parent: dict[str, str] = {}
        for kid, concept in pairs:
            if kid == concept:
                raise HierarchyError(f"{where} has a cycle: {kid} > {kid}")
            old = parent.get(kid)
            if old is not None and old != concept:
                raise HierarchyError(f"{where}: type '{kid}' lies under two concepts, '{old}' and '{concept}'")
            parent[kid] = concept
        done: set[str] = set()  # types whose chain of concepts is known to end
        for start in parent:
            path, on_path, t = [], set(), start
            while t is not None and t not in done:
                if t in on_path:
                    cycle = path[path.index(t):] + [t]
                    raise HierarchyError(f"{where} has a cycle: {' < '.join(cycle)}")
                path.append(t)
                on_path.add(t)
                t = parent.get(t)
            done |= on_path
        return Hierarchy(tuple(sorted(parent.items())))

    @staticmethod
    def load(path: str) -> "Hierarchy":
        """A hierarchy from a JSON file (``--hierarchy FILE``)."""
        try:
            with open(path, encoding="utf-8-sig") as f:  # (a BOM, as Windows editors write, is no JSON)
                obj = json.load(f, object_pairs_hook=_unique_keys)
        except (OSError, UnicodeDecodeError) as e:
            raise HierarchyError(f"cannot read the hierarchy {path}: {e}") from None
        except json.JSONDecodeError as e:
            raise HierarchyError(f"the hierarchy {path} is not JSON: {e.msg} "
                                 f"(line {e.lineno}, col {e.colno})") from None
        except _DuplicateKey as e:
            raise HierarchyError(f"the hierarchy {path}: concept '{e}' is given twice; list all its children "
                                 "once") from None
        except RecursionError:
            raise HierarchyError(f"the hierarchy {path}: JSON nested too deeply (a hierarchy is an "
                                 "object of concept names to lists of names)") from None
        return Hierarchy.from_mapping(obj, path)

    def merged(self, other: "Hierarchy | None", where: str = "the hierarchy") -> "Hierarchy":
        """Both hierarchies' edges (checked again: the union may put a type under two concepts)."""
        if other is None or not other.edges:
            return self
        if not self.edges:
            return other
        return Hierarchy.of_pairs(self.edges + other.edges, where)

    # -- questions ------------------------------------------------------------------------------

    @cached_property
    def _parent(self) -> dict[str, str]:
        return dict(self.edges)

    @cached_property
    def _children(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for kid, concept in self.edges:
            out.setdefault(concept, []).append(kid)
        return {c: tuple(k) for c, k in out.items()}

    def __bool__(self) -> bool:
        return bool(self.edges)

    @property
    def concepts(self) -> frozenset[str]:
        """Types with children (which no event may carry)."""
        return frozenset(self._children)

    @property
    def names(self) -> frozenset[str]:
        """Every type the hierarchy names."""
        return frozenset(self._parent) | self.concepts

    def is_concept(self, t: str | None) -> bool:
        return t is not None and t in self._children

    def parent_of(self, t: str) -> str | None:
        return self._parent.get(t)

    def children(self, t: str) -> tuple[str, ...]:
        return self._children.get(t, ())

    def ancestors(self, t: str) -> list[str]:
        """The concepts above ``t``, nearest first."""
        out = []
        p = self._parent.get(t)
        while p is not None:
            out.append(p)
            p = self._parent.get(p)
        return out

    def leaves(self, t: str) -> frozenset[str]:
        """The most specific types at or below ``t`` (``{t}`` for a type that is no concept)."""
        out, todo = set(), [t]
        while todo:  # (iterative: a hierarchy may be deeper than Python's recursion limit)
            u = todo.pop()
            kids = self._children.get(u)
            if kids:
                todo.extend(kids)
            else:
                out.add(u)
        return frozenset(out)

    def finer(self, a: str, b: str) -> bool:
        """``a <_c b``: ``a`` lies strictly below ``b``."""
        return b in self.ancestors(a)

    def comparable(self, a: str, b: str) -> bool:
        """Equal, or one below the other (their leaf sets then overlap; otherwise they are disjoint)."""
        return a == b or self.finer(a, b) or self.finer(b, a)

    def level(self, t: str) -> int:
        """Distance from the top of ``t``'s tree (a root is level 0)."""
        return len(self.ancestors(t))

    def as_mapping(self) -> dict[str, list[str]]:
        return {c: list(k) for c, k in sorted(self._children.items())}

    def lines(self) -> str:
        """The hierarchy as ``CONCEPT`` lines (parsed back by :func:`extract_concepts`)."""
        return "\n".join(f"CONCEPT {_quote(c)} = ({', '.join(_quote(k) for k in kids)})"
                         for c, kids in sorted(self._children.items()))

    def check_data_types(self, types: Iterable[str], where: str = "the events") -> None:
        """Refuse events whose type is a concept: each event carries its most specific type."""
        for t in sorted(set(types) & self.concepts):
            raise HierarchyError(f"{where}: events of type '{t}', but '{t}' is a concept of the hierarchy "
                                 f"(over {', '.join(self.children(t))}); give each event its most specific type")


def extract_concepts(text: str, where: str = "the query") -> tuple[str, Hierarchy]:
    """The ``CONCEPT Name = (Child, ...)`` lines of ``text``, taken out: the text with those lines
    blanked (so positions of errors in the rest stay right) and the hierarchy they declare."""
    lines = text.split("\n")
    pairs: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        if not _LOOKS_LIKE.match(line):
            continue
        m = _CONCEPT_LINE.match(line)
        body = _CONCEPT_BODY.match(m.group("rest")) if m else None
        if body is None:
            raise HierarchyError(f"{where}, line {i + 1}: a CONCEPT line reads CONCEPT Name = (Child, Child, ...), "
                                 f"not {line.strip()!r}")
        concept = _unquote(body.group("name"))
        kids = [_unquote(k.strip()) for k in re.findall(_NAME, body.group("kids"))]
        pairs += [(k, concept) for k in kids]
        lines[i] = " " * len(line)
    if not pairs:
        return text, Hierarchy()
    return "\n".join(lines), Hierarchy.of_pairs(pairs, where)


def as_hierarchy(obj: Hierarchy | Mapping | None) -> Hierarchy | None:
    """``hierarchy=`` as Python callers give it: None, a :class:`Hierarchy`, or the mapping a
    ``--hierarchy`` file holds, ``{concept: [child, ...]}`` (checked as the file is).

    >>> as_hierarchy({"Vehicle": ["Bus", "Taxi"]}).leaves("Vehicle") == {"Bus", "Taxi"}
    True
    """
    if obj is None or isinstance(obj, Hierarchy):
        return obj
    return Hierarchy.from_mapping(obj, "hierarchy=")


def with_hierarchy(text: str, hierarchy: Hierarchy | Mapping | None) -> str:
    """``text`` carrying ``hierarchy`` as CONCEPT lines after it (after, so that positions in the
    text stay those the user wrote)."""
    hierarchy = as_hierarchy(hierarchy)
    if not hierarchy:
        return text
    return text.rstrip() + "\n" + hierarchy.lines() + "\n"


def check_types(queries: Iterable, types: Iterable[str], where: str = "the events", names: bool = True) -> None:
    """Before any work: refuse input whose events carry a concept as their type, and a query
    type that is neither a type of its hierarchy nor of the input (a misspelt name would
    otherwise match nothing). ``types``: the distinct event types of the input; an empty input
    is not checked for names."""
    types = set(types)
    for q in queries:
        h = q.hierarchy
        if not h:
            continue
        h.check_data_types(types, where)
        if not types or not names:
            continue
        for v in q.variables.values():
            if v.type is not None and v.type not in h.names and v.type not in types:
                raise HierarchyError(f"unknown type '{v.type}' in the query: neither in the hierarchy nor "
                                     f"among the types of {where}")
