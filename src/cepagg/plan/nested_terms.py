"""Which flat terms of a workload's nested queries join the workload's shared aseq plan.

Engine ``neel`` runs a nested aggregate query as signed flat terms (:mod:`cepagg.engines.neel.terms`)
combined exactly. In a workload, the terms that read the workload's events as they are -- on
aseq, times unscaled, no witness events -- join the flat queries in one shared aseq plan
(PreTree prefixes, Chop-Connect where the optimizer chooses it), so a prefix common to a flat
query and a term, or to terms of two nested queries, is counted once. The others (an AND's
interleavings read scaled times, a negated sequence reads witness events, GRETA terms) run in
the query's own neel engine; ``explain`` says why. The nested query's result is then combined
from all its terms' rows as neel combines them (:meth:`cepagg.engines.neel.engine.Neel.run_with`).

The shared plan then holds partial rows (terms are combined from partial cells), so a flat
query that has no partial rows (EMIT ON CHANGE) runs in a second shared plan of its own kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lang.model import Query


@dataclass
class NestedTerms:
    """A nested query's terms in a workload: ``shared`` join the shared aseq plan, ``alone``
    (term -> reason) run in the query's own engine; ``why`` says why none may join."""

    texts: list[str]  # "+ SEQ(A a, B b)" per term
    queries: list[Query] = field(default_factory=list)  # the flat query of each term
    shared: list[int] = field(default_factory=list)
    alone: dict[int, str] = field(default_factory=dict)
    why: str = ""

    def lines(self) -> list[str]:
        """What ``explain`` prints under the query."""
        if self.why:
            return [f"     terms run alone: {self.why}"]
        out = []
        for k, text in enumerate(self.texts):
            where = "in the shared aseq plan" if k in self.shared else f"alone: {self.alone[k]}"
            out.append(f"     t{k}: {text} -- {where}")
        return out


def nested_terms(query: Query, numbers: str) -> NestedTerms:
    """The sharing of ``query``'s terms (``query`` is planned on neel)."""
    from ..engines.neel.engine import shared_term_refusal
    from ..engines.neel.terms import decompose

    if query.returns_matches:
        return NestedTerms([], why="the query returns matches (a union of match engines)")
    terms = decompose(query).terms
    texts = [("+ " if t.sign > 0 else "- ") + t.text for t in terms]
    if numbers != "exact":
        return NestedTerms(texts, why="in float mode terms join no shared plan (neel combines them exactly)")
    out = NestedTerms(texts, [t.query for t in terms])
    for k, t in enumerate(terms):
        reason = shared_term_refusal(t)
        if reason is None:
            out.shared.append(k)
        else:
            out.alone[k] = reason
    return out
