"""What a match becomes as soon as it is found: result rows, or a step of an aggregate fold.

Match rows have the reference's long form (group and window cells, then ``match``, ``var``,
``pos``, ``event_id``, ``type``, ``ts``). Matches are numbered 1, 2, ... in the order this engine
finds them: by partition in the order their events arrive, by trigger event in stream order,
then by window; the reference numbers them after sorting all matches, which a streaming engine
cannot do, so results are compared as sets of matches. On the Python join aggregates are
folded one match at a time into the reference's accumulator (its cells are the mergeable partial
cells of :mod:`cepagg.engines.aggregates`), so the list of matches never exists; the compiled
join adds whole counts to the same accumulators (:meth:`.compiled.CompiledJoin.fold_into`).
"""

from __future__ import annotations

from ...lang.model import Query
from ..reference.evaluate import Acc


class MatchRows:
    """The rows of one match, in the order of the returned variables and of their events."""

    def __init__(self, query: Query):
        self.returned = [(var, var.split("@")[0]) for var in query.return_vars]

    def add(self, out: list, cells: tuple, number: int, env: dict) -> None:
        """Append the match's rows to ``out`` (``cells``: group and window columns)."""
        for var, display in self.returned:
            runs = env.get(var)
            if not runs:
                continue
            events = runs[0] if len(runs) == 1 else [e for run in runs for e in run]
            head = cells + (number, display)
            out.extend([head + (pos, e.id, e.type, e.ts) for pos, e in enumerate(events)])


def fold(accs: dict, query: Query, key: tuple, env: dict) -> None:
    """Add one match to the aggregate of ``key``."""
    acc = accs.get(key)
    if acc is None:
        acc = accs[key] = Acc(query.aggregates)
    acc.add(env)


def final_rows(accs: dict, keys, partial: bool) -> list[tuple]:
    """Rows of the given keys, partial cells or finished values."""
    return [k + (accs[k].partial() if partial else accs[k].result()) for k in keys]
