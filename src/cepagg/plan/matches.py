"""The choice between the two match-enumerating engines, rcep and tree, for a query both accept.

Queries that aseq and greta refuse (RETURN of events, conditions between variables other than
equality or NEXT) are evaluated by enumerating their matches: by recomputation (rcep: no stored
partial matches, the buffers joined again at each trigger) or by a join tree (tree: left
children keep their composites, condensed where that pays).

The rule, from ``cepagg bench tree`` (docs/benchmarks.md, "Tree plans and condensed
composition"): on queries with a condition between two variables, tree was faster than rcep in
14 of 16 runs (its stores keep only composites that passed their conditions, and a condensed
store checks a condition once per group), and slower by 15-18% in the other two (a negation
inside the span of the condition). Without such a condition neither engine was clearly faster
(a tree then has nothing to filter or condense, and one that stored composites would keep every
partial match), so such queries go to rcep, which keeps only the events of a window. A query with
Kleene plus goes to rcep, the only one of the two that takes it.
"""

from __future__ import annotations

from ..engines import ENGINES
from ..lang.model import Query

MATCHERS = ("rcep", "tree")


def choose(query: Query) -> tuple[str, str, dict[str, str]]:
    """(engine, why, refusals) among rcep and tree, for a query rcep accepts."""
    tree = ENGINES.get("tree")
    if tree is None:
        return "rcep", "", {}
    reason = tree.refusal(query)
    if reason is not None:
        return "rcep", "", {"tree": reason}
    cross = [c.text for c in query.conditions
             if c.kind != "local" and c.scope is None and c.next_var is None]
    if cross:
        return "tree", (f"a join tree rather than recomputation (rcep): the condition {cross[0]} "
                        "between variables filters the stored composites and is checked once per "
                        "group where a store condenses (a rule measured by cepagg bench tree)"), {}
    return "rcep", ("recomputation rather than a join tree (tree): no condition between variables, "
                    "so a join tree has nothing to filter or condense, and recomputation keeps only "
                    "one window of events (a rule measured by cepagg bench tree)"), {}
