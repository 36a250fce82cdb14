"""The compiled path of rcep: matches of condition-free patterns enumerated by a numba kernel
and handed over column-wise.

Taken when the query returns its matches and the join has nothing to check but time order and
the window: no condition between variables (NEXT/FIRST/LAST included), no NOT or EXISTS, no
equivalence on a Kleene variable (``[b.h]`` makes a run share a value), no GROUP BY a variable's
attribute. Local conditions, stream filters, types and untyped variables, partition attributes,
equivalences on singleton variables, GROUP BY a partition attribute, WITHIN alone or with SLIDE
and ``start_range`` all stay on the compiled path: they act before the join (an event enters a
buffer or not) or are constant for one trigger (group and window cells). Every other query, and
every aggregate query, takes the Python join (:mod:`.join`); both give the reference's matches.

Per trigger, the buffers' events inside the scope are copied into arrays (the buffers keep
timestamps and ids as lists beside the events) and :func:`._kernels.enumerate_matches` writes
the matches into a :class:`~cepagg.matches.MatchBlock` of at most ``spill_rows`` rows. A driver
that takes blocks (``engine.spill_blocks``, set by :func:`cepagg.runner.match_feed`) receives
each full block through ``engine.spill`` and the last one at the end of every protocol call;
other callers get the protocol's tuples, built from the arrays.

The kernel compiles on the first query that takes this path (a few seconds, then cached on
disk beside the source); ``cepagg warmup`` does not compile it.
"""

from __future__ import annotations

import numpy as np

from ...lang.model import Query
from ...matches import MatchBlock
from .shape import Shape


def compiled_refusal(query: Query, shape: Shape) -> str | None:
    """Why the compiled enumeration does not apply to ``query`` (None: it does)."""
    if not query.returns_matches:
        return "aggregates are folded match by match in Python"
    if shape.cross:
        return "a condition between variables is checked by the Python join"
    if shape.negations:
        return "NOT and EXISTS are checked by the Python join"
    kleene = {p.var for p in shape.positions if p.kleene}
    if any(v in kleene for v in shape.same):
        return "an equivalence on a Kleene variable is checked by the Python join"
    if any(g.var is not None for g in query.group_by):
        return "GROUP BY a variable's attribute is read per match by the Python join"
    return None


def explain_lines(query: Query) -> list[str]:
    """What ``cepagg explain`` says of rcep's join for ``query``."""
    from .shape import shape_of

    reason = compiled_refusal(query, shape_of(query))
    if reason is None:
        return ["join: compiled (numba; the matches go to the output as arrays, not row objects)"]
    return [f"join: Python ({reason}; the compiled join takes condition-free patterns returning matches)"]


def _kernel():
    from . import _kernels

    return _kernels.enumerate_matches


class CompiledJoin:
    """Matches ending at a trigger, written into blocks by the compiled kernel."""

    def __init__(self, query: Query, shape: Shape):
        self.query = query
        self.k = len(shape.positions)
        var_pos = {p.var: p.index for p in shape.positions}
        self.ret_pos = np.array([var_pos[v] for v in query.return_vars], dtype=np.int64)
        self.display = [v.split("@")[0] for v in query.return_vars]
        self.kleene = np.array([p.kleene for p in shape.positions], dtype=np.bool_)
        self.start = np.zeros(self.k, dtype=np.int64)
        self.stop = np.zeros(self.k, dtype=np.int64)
        self.upper = np.zeros(self.k, dtype=np.int64)
        self.state = np.zeros(2, dtype=np.int64)
        self._stack_p = np.zeros(64, dtype=np.int64)
        self._stack_i = np.zeros(64, dtype=np.int64)
        self.block: MatchBlock | None = None
        self._enumerate = None

    def run(self, buffers: list, trigger, cand_lo: int, first_hi: int, cells: tuple, state,
            rows: int, hand_over, out: list | None = None, spill=None) -> None:
        """Write the matches ending at ``trigger`` (events from ``ts >= cand_lo``, first event
        before ``first_hi``), numbered from ``state.next_match``, with group and window
        ``cells``. ``hand_over(block)`` takes each full block of ``rows`` rows. With ``out``
        (not None) the matches are appended to it as tuples instead, and handed to
        ``spill(rows)`` (if given) whenever ``out`` holds ``rows`` of them."""
        if trigger.ts < cand_lo:
            return
        spans = [b.span(cand_lo, trigger.ts) for b in buffers]
        for i, j in spans[:-1]:
            if i == j:
                return  # a position before the trigger's has no event: no match
        n = 0
        for i, j in spans:
            n += j - i
        ts = np.empty(n + 1, dtype=np.int64)
        ids = np.empty(n + 1, dtype=np.int64)
        at = 0
        start, stop = self.start, self.stop
        for p, b in enumerate(buffers):
            i, j = spans[p]
            start[p] = at
            if j > i:
                ts[at:at + j - i] = b.ts[i:j]
                ids[at:at + j - i] = b.ids[i:j]
                at += j - i
            stop[p] = at
        ts[n] = trigger.ts
        ids[n] = trigger.id
        if self._stack_p.shape[0] < n + 2:
            self._stack_p = np.zeros(2 * (n + 2), dtype=np.int64)
            self._stack_i = np.zeros(2 * (n + 2), dtype=np.int64)
        if self._enumerate is None:
            self._enumerate = _kernel()
        self.state[:] = 0
        events = None
        if out is not None:
            types = [x for b, (i, j) in zip(buffers, spans) for x in b.events[i:j]] + [trigger.type]
            events = list(zip(ids.tolist(), types, ts.tolist()))
        while True:
            blk = self.block
            if blk is None:
                blk = self.block = MatchBlock.empty(rows, self.display)
            f0 = blk.rows
            fill, state.next_match = self._enumerate(
                ts, self.start, self.stop, self.kleene, self.upper, self.ret_pos, cand_lo, first_hi,
                self._stack_p, self._stack_i, self.state, blk.match, blk.var, blk.pos, blk.event,
                f0, blk.capacity, state.next_match)
            blk.rows = fill
            idx = blk.event[f0:fill]
            if events is not None:
                out.extend(_tuples(blk, f0, fill, events, cells, self.display))
                blk.rows = 0  # (nothing kept: the tuples are the output)
                if spill is not None and len(out) >= rows:
                    spill(out[:])
                    out.clear()
            else:
                blk.event[f0:fill] = ids[idx]
                blk.cell[f0:fill] = blk.cell_index(cells)
            if self.state[1] == 2:
                return
            # the next match does not fit: hand the block over, or (empty) make one it fits in
            if blk.rows:
                hand_over(blk)
                self.block = None
            elif fill == f0:
                self.block = MatchBlock.empty(n + 1, self.display)  # (a match has <= n + 1 rows)

    def take_block(self) -> MatchBlock | None:
        """The block being filled, if it holds rows (it is then handed over and not filled
        again)."""
        blk, self.block = self.block, None
        return blk if blk is not None and blk.rows else None


def _tuples(blk: MatchBlock, f0: int, f1: int, events: list, cells: tuple, display: list) -> list[tuple]:
    """The protocol's rows (cells, match, var, pos, event_id, type, ts) of rows f0:f1;
    ``events``: (id, type, ts) by index."""
    evs = [events[i] for i in blk.event[f0:f1].tolist()]
    return [cells + (m, display[v], pos) + e
            for m, v, pos, e in zip(blk.match[f0:f1].tolist(), blk.var[f0:f1].tolist(),
                                    blk.pos[f0:f1].tolist(), evs)]
