"""The E-Cube: a workload of pattern queries over a concept hierarchy, their refinement
hierarchy, their results (the E-cuboids, Definition 6), and the OLAP operations that move
between them (§4.2): pattern drill-down and roll-up insert and delete items, concept drill-down
and roll-up move a position's type down and up the concept hierarchy.

>>> from cepagg.cube import Cube
>>> from cepagg.events import EventBatch
>>> from cepagg.lang import Hierarchy
>>> h = Hierarchy.from_mapping({"TX": ["D", "A", "G"], "OK": ["T", "O"]})
>>> cube = Cube.from_text("RETURN COUNT(*) PATTERN SEQ(TX, OK) WITHIN 10\\n---\\n"
...                       "RETURN COUNT(*) PATTERN SEQ(D, T) WITHIN 10", h)
>>> [(e.coarse, e.fine, e.label) for e in cube.edges]
[('q0', 'q1', 'concept')]
>>> events = EventBatch.from_rows([{"type": t, "ts": i} for i, t in enumerate("DATGO")])
>>> {n: r.rows for n, r in cube.evaluate(events, "bottom-up").items()}
{'q0': [(5,)], 'q1': [(1,)]}
>>> n = cube.pattern_drill_down("q1", [("!A", 2)])
>>> cube.shapes[n].text(), cube.results[n].rows
('SEQ(D, !A, T)', [(0,)])
"""

from __future__ import annotations

from typing import Sequence

from ..events import EventBatch
from ..lang import Hierarchy
from ..lang.concepts import HierarchyError
from ..lang.model import Query
from ..lang.workload import compile_workload
from ..result import Result
from ..units import UNIT_NS
from .adapt import Adaptation, Statistics, evaluate_adaptive
from .chase import REUSES, CubePlan, choose
from .execute import evaluate_plan
from .lattice import Edge, hierarchy_edges, hierarchy_text
from .reuse import Costs
from .shape import CubeError, Item, Shape, shape_of, with_items


class Cube:
    """Named queries, one concept hierarchy, and the results computed so far."""

    def __init__(self, queries: Sequence[tuple[str, Query]], hierarchy: Hierarchy | None = None):
        self.hierarchy = hierarchy or Hierarchy()
        for _, q in queries:
            self.hierarchy = self.hierarchy.merged(q.hierarchy)
        self.queries: dict[str, Query] = {}
        self.shapes: dict[str, Shape] = {}
        self.results: dict[str, Result] = {}
        self.last_plan: CubePlan | None = None
        self.plans: list[tuple[int, CubePlan]] = []
        self.replans: list = []
        self.seconds: dict[str, float] = {}
        for name, q in queries:
            self._add(name, q)

    @staticmethod
    def from_text(text: str, hierarchy: Hierarchy | None = None, *, time_unit: str = "ms",
                  schema=None) -> "Cube":
        """A cube of the queries of a workload text (CONCEPT lines and ``hierarchy`` merged)."""
        named = compile_workload(text, time_unit=time_unit, schema=schema, hierarchy=hierarchy)
        return Cube(named, hierarchy)

    def _add(self, name: str, q: Query) -> None:
        from dataclasses import replace

        if name in self.queries:
            raise CubeError(f"the cube already has a query named {name!r}")
        if q.hierarchy != self.hierarchy:
            q = replace(q, hierarchy=self.hierarchy, text=q.text)
        self.shapes[name] = shape_of(q, f"query {name!r}")
        self.queries[name] = q

    @property
    def edges(self) -> list[Edge]:
        """Every comparable pair (the E-Cube hierarchy, Definition 5)."""
        return hierarchy_edges(self.shapes, self.hierarchy)

    def hierarchy_text(self) -> str:
        return hierarchy_text(self.shapes, self.edges)

    # -- evaluation -------------------------------------------------------------------------------

    def plan(self, strategy: str = "chase", events: EventBatch | None = None,
             reuses: tuple[str, ...] = REUSES) -> CubePlan:
        """The plan of ``strategy``, costed with the event counts of ``events`` (uniform without),
        using only the kinds of reuse in ``reuses`` (:mod:`.reuse`)."""
        stats = _statistics(self, events)
        p = choose(self, strategy, stats.costs() if stats is not None else Costs(), reuses)
        p.statistics = stats
        return p

    def evaluate(self, events: EventBatch, strategy: str = "chase",
                 reuses: tuple[str, ...] = REUSES, adapt: Adaptation | None = None) -> dict[str, Result]:
        """Every query's result over ``events`` (each exactly what it returns alone), computed as
        ``strategy`` plans.

        ``adapt``: run batch by batch and re-plan when the measured statistics drift
        (:mod:`.adapt`); ``self.replans`` then lists each re-planning and ``self.plans`` the
        plans used (first batch, plan)."""
        from ..runner import check_concepts

        check_concepts(self.queries.values(), events)
        self.results, self.replans = {}, []
        if adapt is None:
            self.last_plan = self.plan(strategy, events, reuses)
            self.plans = [(0, self.last_plan)]
            self.results, self.seconds = evaluate_plan(self, self.last_plan, events)
        else:
            self.results, self.plans, self.replans = evaluate_adaptive(self, events, strategy, reuses, adapt)
            self.last_plan = self.plans[-1][1]
        self._with_attributes(events)
        self._events = events
        return {n: self.results[n] for n in self.queries}

    def _with_attributes(self, events: EventBatch) -> None:
        """Match results with the events' attributes after ``ts``, as ``cepagg run`` returns them
        (:class:`cepagg.matches.Layout`, long form); reuse reads only the columns before."""
        from ..matches import Layout, tuples

        for n, r in self.results.items():
            q = self.queries[n]
            if q.returns_matches and tuple(r.columns) == tuple(q.output_columns):
                layout = Layout(q, events, "long")
                self.results[n] = Result(layout.columns, tuples(layout.table(r.rows)))

    # -- OLAP operations (positions are 1-based) ----------------------------------------------------

    def pattern_drill_down(self, name: str, inserts: Sequence[tuple[str, int]], new_name: str | None = None) -> str:
        """Insert types (``"!D"`` for a negated one) at positions of the *resulting* pattern."""
        items = list(self._shape(name).items)
        for typ, pos in sorted(inserts, key=lambda x: x[1]):
            neg = typ.startswith("!")
            t = typ[1:].strip() if neg else typ
            if not 1 <= pos <= len(items) + 1:
                raise CubeError(f"pattern-drill-down of {name}: position {pos} is outside 1..{len(items) + 1}")
            items.insert(pos - 1, Item(t, neg, self._fresh(items, t)))
        return self._derive(name, items, new_name, "pattern-drill-down")

    def pattern_roll_up(self, name: str, deletes: Sequence[tuple[str, int]], new_name: str | None = None) -> str:
        """Delete the items at positions of the *original* pattern (each named by its type)."""
        items = list(self._shape(name).items)
        for typ, pos in sorted(deletes, key=lambda x: -x[1]):
            self._check_at(name, items, typ, pos, "pattern-roll-up")
            del items[pos - 1]
        if not items:
            raise CubeError(f"pattern-roll-up of {name}: nothing would be left of the pattern")
        return self._derive(name, items, new_name, "pattern-roll-up")

    def concept_drill_down(self, name: str, moves: Sequence[tuple[str, str, int]], new_name: str | None = None) -> str:
        """Move the type at each position from a concept to a type below it."""
        return self._move(name, moves, new_name, down=True)

    def concept_roll_up(self, name: str, moves: Sequence[tuple[str, str, int]], new_name: str | None = None) -> str:
        """Move the type at each position from a type to a concept above it."""
        return self._move(name, moves, new_name, down=False)

    def _move(self, name, moves, new_name, down: bool) -> str:
        op = "concept-drill-down" if down else "concept-roll-up"
        items = list(self._shape(name).items)
        h = self.hierarchy
        for old, new, pos in moves:
            self._check_at(name, items, old, pos, op)
            if new not in h.names:
                raise HierarchyError(f"{op} of {name}: unknown type '{new}' (not in the concept hierarchy)")
            if not (h.finer(new, old) if down else h.finer(old, new)):
                raise CubeError(f"{op} of {name}: '{new}' is not {'below' if down else 'above'} '{old}' "
                                "in the concept hierarchy")
            it = items[pos - 1]
            items[pos - 1] = Item(new, it.negated, it.var)
        return self._derive(name, items, new_name, op)

    def _shape(self, name: str) -> Shape:
        if name not in self.shapes:
            raise CubeError(f"the cube has no query named {name!r}")
        return self.shapes[name]

    @staticmethod
    def _check_at(name, items, typ, pos, op) -> None:
        t = typ.lstrip("!").strip()
        if not 1 <= pos <= len(items) or items[pos - 1].type != t:
            found = items[pos - 1].text() if 1 <= pos <= len(items) else "nothing"
            raise CubeError(f"{op} of {name}: position {pos} holds {found}, not {typ}")

    @staticmethod
    def _fresh(items, t: str) -> str:
        taken = {i.var for i in items}
        base = t if t not in taken else f"{t}_"
        k = 1
        name = base
        while name in taken:
            k += 1
            name = f"{base}{k}"
        return name

    def _derive(self, name: str, items: list[Item], new_name: str | None, op: str) -> str:
        q = with_items(self.queries[name], items, name=f"{op} of {name}")
        key = tuple((i.type, i.negated) for i in items)
        for n, s in self.shapes.items():  # the cuboid exists already
            if s.key == key and self.queries[n].output_columns == q.output_columns and new_name is None:
                return n
        new = new_name or f"{name}.{len(self.queries)}"
        self._add(new, q)
        if self.results:  # evaluated: compute the new cuboid, reusing the known ones
            self.last_plan = self.plan("chase", self._events)
            self.results, seconds = evaluate_plan(self, self.last_plan, self._events)
            self.seconds.update(seconds)
            self._with_attributes(self._events)
        return new


def _statistics(cube: Cube, events: EventBatch | None) -> Statistics | None:
    """Event counts per type, and the number of matches of each query returning matches (counted
    by one shared A-Seq plan of their COUNT(*) versions: far cheaper than enumerating them);
    None without events."""
    if events is None or not len(events):
        return None
    import pyarrow.compute as pc

    vc = pc.value_counts(events.table.column("type")).to_pylist()
    t = pc.min_max(events.table.column("ts")).as_py()
    unit = UNIT_NS[next(iter(cube.queries.values())).time_unit] / UNIT_NS["s"] if cube.queries else 1.0
    span = max(float(t["max"] - t["min"]), 1.0) * unit
    return Statistics(span, {d["values"]: d["counts"] for d in vc}, match_counts(cube, events))


def match_counts(cube: Cube, events: EventBatch) -> dict[str, int]:
    from dataclasses import replace

    from ..lang import compile_query
    from ..lang.printer import to_text
    from ..plan import plan, shared_evaluator
    from .matches import reusable

    names, counts = [], []
    for n, q in cube.queries.items():
        if n in cube.results or not reusable(q, cube.shapes[n]):
            continue
        lines = to_text(replace(q, hierarchy=Hierarchy())).split("\n")
        text = "\n".join(lines[:-1] + ["RETURN COUNT(*)"])  # (the RETURN clause is last)
        cq = compile_query(text, time_unit=q.time_unit)
        cq = replace(cq, hierarchy=q.hierarchy)
        if plan(cq).engine == "aseq":
            names.append(n)
            counts.append(cq)
    if not counts:
        return {}
    return {n: r.rows[0][0] for n, r in zip(names, shared_evaluator(counts).run(events.sorted()))}
