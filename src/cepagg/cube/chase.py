"""Choosing how to compute every query of a cube: the reuse graph and the four strategies.

The reuse graph (E-Cube's Definition 9) has a vertex per query and a *ground* vertex; an edge
ground -> q is q computed alone, an edge p -> q is q computed from p (:mod:`.reuse`), each
weighted by its estimated cost. A plan picks one incoming edge per query without cycles -- an
arborescence rooted at the ground -- and costs the sum of its edges (Eq. 4.1):

* ``independent``: every query alone;
* ``top-down``: each query from the cheapest more general query it can reuse (general to
  specific), alone where there is none;
* ``bottom-up``: the same from more specific queries (specific to general);
* ``chase``: the minimum-cost arborescence (Theorem 4.1), found with Edmonds' algorithm
  (networkx's ``minimum_spanning_arborescence``; the chapter uses Gabow et al.'s variant, which
  finds the same optimum faster).

Queries whose results are already known (a cube extended by a drill-down or roll-up after it was
evaluated) enter with a free ground edge, so new queries reuse them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnsupportedQuery
from ..plan import plan
from .lattice import Edge
from .matches import join_applies, projection_applies, projection_delta, reusable
from .reuse import Costs, Reuse, concept_positions, deltas

STRATEGIES = ("independent", "top-down", "bottom-up", "chase")
REUSES = ("shared", "roll-up", "drill-down", "concept filter", "concept union", "pattern join",
          "pattern projection")
GROUND = "(ground)"


@dataclass
class CubePlan:
    strategy: str
    chosen: dict[str, Reuse]  # per query, its incoming edge
    candidates: list[Reuse] = field(default_factory=list)
    #: what the costs were estimated from (:class:`cepagg.cube.adapt.Statistics`; None: uniform)
    statistics: object = None

    @property
    def cost(self) -> float:
        return sum(r.cost for r in self.chosen.values())

    def order(self) -> list[str]:
        """Queries with every source before the queries computed from it."""
        done: list[str] = []
        seen: set[str] = set()

        def visit(n: str) -> None:
            if n in seen:
                return
            seen.add(n)
            src = self.chosen[n].src
            if src is not None:
                visit(src)
            done.append(n)

        for n in self.chosen:
            visit(n)
        return done

    def explain(self) -> str:
        lines = [f"strategy {self.strategy}: estimated cost {self.cost:,.0f} (event-position updates)"]
        stats = self.statistics
        lines.append("  statistics: " + (stats.text() if stats is not None else
                                         "none measured (every type counts one event, no match counts)"))
        for n in self.order():
            r = self.chosen[n]
            lines.append(f"  {GROUND if r.src is None else r.src} -> {n}: {r.kind}, cost {r.cost:,.0f}")
        return "\n".join(lines)


def candidates(cube, costs: Costs) -> list[Reuse]:
    """Every edge of the reuse graph."""
    out = []
    aseq = {}
    for n, q in cube.queries.items():
        aseq[n] = plan(q).engine == "aseq"
        if n in cube.results:
            out.append(Reuse(None, n, "known", 0.0))
        else:
            length = len(cube.shapes[n])
            out.append(Reuse(None, n, "alone", costs.alone(q, length) + costs.rows(n, length)))
    for e in cube.edges:
        _edge_reuses(cube, e, costs, aseq, out)
    return out


def _edge_reuses(cube, e: Edge, costs: Costs, aseq: dict, out: list[Reuse]) -> None:
    c, f = e.coarse, e.fine
    qc, qf = cube.queries[c], cube.queries[f]
    sc, sf = cube.shapes[c], cube.shapes[f]
    if aseq[c] and aseq[f]:  # (a shared A-Seq plan is exact for any queries; refinement makes it pay)
        out.append(Reuse(c, f, "shared", costs.shared(sc, sf, qf)))
        out.append(Reuse(f, c, "shared", costs.shared(sf, sc, qc)))
    if reusable(qc, sc) and reusable(qf, sf) and qc.within == qf.within:
        _match_reuses(c, f, qc, qf, sc, sf, e.label, costs, out)
        return
    if e.label == "concept":
        diff = concept_positions(sc, sf, qc, qf)
        if diff is None:
            return
        ds = deltas(qc, sc, sf, diff)
        delta_cost = sum(costs.alone(d, len(sc)) for d in ds) + 1
        out.append(Reuse(f, c, "roll-up", delta_cost))
        if all(a.func == "COUNT" for a in qc.aggregates):
            out.append(Reuse(c, f, "drill-down", delta_cost))


#: A match row read or written by a reuse, against one an engine enumerates. One constant for
#: reading and writing, though they differ: joins that read many matches and write none (the
#: first half of ``cepagg bench ecube --drift``, where the added tickers are absent) cost about
#: twice the evaluations they replace, as 0.4 predicts; joins that write about ten rows per row
#: they read (workload 2 of ``cepagg bench ecube --results matches``) cost a small fraction of
#: them, less than 0.4 predicts.
REUSE_ROW = 0.4


def _match_reuses(c, f, qc, qf, sc, sf, label: str, costs: Costs, out: list[Reuse]) -> None:
    """Edges for queries returning matches (:mod:`.matches`): a reuse is costed by the rows it
    reads and writes (:data:`REUSE_ROW` each), a delta as an evaluation."""
    rc, rf = REUSE_ROW * costs.rows(c, len(sc)), REUSE_ROW * costs.rows(f, len(sf))
    if label == "concept":
        out.append(Reuse(c, f, "concept filter", rc + rf + 1))
        if all(a.type == b.type for a, b in zip(sc.items, sf.items) if a.negated):
            diff = [k for k, (a, b) in enumerate(zip(sc.items, sf.items)) if a.type != b.type]
            ds = deltas(qc, sc, sf, diff)
            out.append(Reuse(f, c, "concept union", sum(costs.alone(d, len(sc)) for d in ds) + rc + 1))
    elif label == "pattern":
        if join_applies(sc, sf) is not None:
            out.append(Reuse(c, f, "pattern join", rc + rf + 1))
        extra = projection_applies(sc, sf)
        if extra is not None:
            delta = projection_delta(qc, sc, sf, extra)
            out.append(Reuse(f, c, "pattern projection", costs.alone(delta, len(sf)) + rf + rc + 1))


def choose(cube, strategy: str, costs: Costs, reuses: tuple[str, ...] = REUSES) -> CubePlan:
    """The plan of ``strategy`` (module docstring), using only the kinds of reuse in ``reuses``."""
    if strategy not in STRATEGIES:
        raise UnsupportedQuery("cube", f"no strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    cands = [r for r in candidates(cube, costs) if r.src is None or r.kind in reuses]
    ground = {r.dst: r for r in cands if r.src is None}
    known = {n for n, r in ground.items() if r.kind == "known"}
    chosen: dict[str, Reuse] = {}
    if strategy == "independent":
        chosen = dict(ground)
    elif strategy in ("top-down", "bottom-up"):
        coarse = {(e.coarse, e.fine) for e in cube.edges}
        for n in cube.queries:
            if n in known:
                chosen[n] = ground[n]
                continue
            ok = [r for r in cands if r.dst == n and r.src is not None and (
                (r.src, n) in coarse if strategy == "top-down" else (n, r.src) in coarse)]
            chosen[n] = min(ok, key=lambda r: r.cost) if ok else ground[n]
    else:
        chosen = _arborescence(cube, cands)
    return CubePlan(strategy, {n: chosen[n] for n in cube.queries}, cands)


def _arborescence(cube, cands: list[Reuse]) -> dict[str, Reuse]:
    try:
        import networkx as nx
        from networkx.algorithms.tree.branchings import minimum_spanning_arborescence
    except ImportError:  # (a dependency of cepagg; an environment installed before it lacks it)
        raise UnsupportedQuery("cube", "the chase strategy needs networkx: pip install networkx") from None

    g = nx.DiGraph()
    best: dict[tuple[str, str], Reuse] = {}
    for r in cands:
        key = (r.src or GROUND, r.dst)
        if key not in best or r.cost < best[key].cost:
            best[key] = r
    for (u, v), r in best.items():
        g.add_edge(u, v, weight=r.cost)
    tree = minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
    return {v: best[(u, v)] for u, v in tree.edges()}
