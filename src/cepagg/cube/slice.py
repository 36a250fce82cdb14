"""A cube slice: one query's result at every concept level of each of its positions.

For each positive position of the query, the type is rolled up step by step to the top of its
tree (:meth:`Cube.concept_roll_up`, so each level reuses the results the cube knows); the first
aggregate at each level is drawn as a bar, one panel per position (``cepagg cube --plot``).
"""

from __future__ import annotations

from ..errors import UnsupportedQuery
from .shape import CubeError


def slice_levels(cube, name: str) -> list[tuple[int, list[tuple[str, object]]]]:
    """Per positive position (0-based), ``[(type, value)]`` from the query's own type to the top.

    Needs an evaluated cube and a query with one result row (no GROUP BY, no SLIDE, no EMIT)."""
    if name not in cube.queries:
        raise CubeError(f"the cube has no query named {name!r}")
    q = cube.queries[name]
    if q.returns_matches or q.group_by or q.mode != "total":
        raise UnsupportedQuery("cube slice", "a slice plots one value per level: the query needs aggregates "
                               "without GROUP BY, SLIDE or EMIT ON CHANGE")
    out = []
    for k, item in enumerate(cube.shapes[name].items):
        if item.negated:
            continue
        levels = [(item.type, cube.results[name].rows[0][0])]
        current, t = name, item.type
        for up in cube.hierarchy.ancestors(t):
            current = cube.concept_roll_up(current, [(t, up, k + 1)])
            levels.append((up, cube.results[current].rows[0][0]))
            t = up
        out.append((k, levels))
    return out


def plot_slice(cube, name: str, path: str) -> None:
    """Draw :func:`slice_levels` of ``name`` into ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = slice_levels(cube, name)
    column = cube.queries[name].aggregates[0].column
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2), squeeze=False)
    for ax, (k, levels) in zip(axes[0], panels):
        ax.bar([t for t, _ in levels], [v or 0 for _, v in levels], color="#4477aa")
        ax.set_title(f"position {k + 1}", fontsize=9)
        ax.set_ylabel(column if k == panels[0][0] else "")
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.suptitle(f"{name}: {cube.shapes[name].text()}, rolled up one position at a time", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
