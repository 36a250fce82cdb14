"""The queries tree plans evaluate, and a refusal for the others.

A tree plan joins the buffers of a flat ``SEQ`` of single-event variables: rcep's query class
(:mod:`cepagg.engines.rcep.shape`) without Kleene plus. A Kleene variable binds a set of events
whose subsets a join node would have to expand and store; recomputation (rcep) evaluates those
without storing them, so a tree plan refuses them and the planner sends such queries to rcep.
"""

from __future__ import annotations

from ...lang.model import Query
from ..rcep.shape import refusal as rcep_refusal


def refusal(query: Query) -> str | None:
    """Why a tree plan cannot evaluate ``query`` (None when it can)."""
    reason = rcep_refusal(query)
    if reason:
        return reason
    kleene = [v.name.split("@")[0] for v in query.variables.values() if v.kleene is not None]
    if kleene:
        return (f"Kleene plus ({', '.join(kleene)}) is not supported by tree plans "
                "(the rcep engine evaluates it)")
    return None
