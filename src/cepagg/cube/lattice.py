"""The E-Cube hierarchy of a workload (Definition 5): every pair of queries where one refines the
other, labelled concept, pattern or both.

The chapter leaves open whether the hierarchy holds every comparable pair or only the covering
pairs; it holds every comparable pair here, so that the optimizer (:mod:`.chase`) sees every
reuse the refinement allows.
"""

from __future__ import annotations

from dataclasses import dataclass

from .refine import coarser
from .shape import Shape


@dataclass(frozen=True)
class Edge:
    """``coarse`` is coarser than ``fine`` (``coarse >_label fine``)."""

    coarse: str
    fine: str
    label: str  # "concept" | "pattern" | "both"


def hierarchy_edges(shapes: dict[str, Shape], h) -> list[Edge]:
    """Every comparable pair of the named shapes, coarser first (names in workload order)."""
    names = list(shapes)
    out = []
    for a in names:
        for b in names:
            if a != b:
                label = coarser(shapes[a], shapes[b], h)
                if label:
                    out.append(Edge(a, b, label))
    return out


def hierarchy_text(shapes: dict[str, Shape], edges: list[Edge]) -> str:
    """The hierarchy as lines: each query with its pattern, then each edge."""
    width = max((len(n) for n in shapes), default=0)
    lines = [f"{n:<{width}}  {s.text()}" for n, s in shapes.items()]
    lines += [f"{e.coarse} > {e.fine}  ({e.label})" for e in edges] or ["(no query refines another)"]
    return "\n".join(lines)
