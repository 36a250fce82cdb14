"""The choice between the two match-enumerating engines, rcep and tree, for a query both accept.

Queries that aseq and greta refuse (RETURN of events, conditions between variables other than
equality or NEXT) are evaluated by enumerating their matches: by recomputation (rcep: no stored
partial matches, the buffers joined again at each trigger) or by a join tree (tree: left
children keep their composites, condensed where that pays). The rule, from ``cepagg bench tree``
(docs/benchmarks.md, "Tree plans and condensed composition"): with a condition between two
variables, tree was faster on every workload measured (its stores keep only composites that
passed their conditions, and a condensed store checks a condition once per group); with none,
recomputation was as fast or faster, since a tree would store composites nothing filters. A
query with Kleene plus goes to rcep, the only one of the two that takes it.
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
                        "between variables is checked once per stored composite, or once per group "
                        "of them where a store condenses (cepagg bench tree: faster on every such "
                        "workload measured)"), {}
    return "rcep", ("recomputation rather than a join tree (tree): no condition between variables, "
                    "so a tree would store composites that nothing filters (cepagg bench tree: "
                    "as fast or faster)"), {}
