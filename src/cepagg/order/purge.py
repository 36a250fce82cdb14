"""Punctuation-triggered purge (Algorithms 1 and 2 of Mo Liu, "Extending Event Sequence Processing:
New Models and Optimization Techniques", PhD dissertation, WPI, 2012, §3.6.1).

A buffered positive event is *purgeable* when no match can ever contain it: some type the
pattern needs before (or after) it has no event in the places the window leaves, and a
punctuation says none will come there. The conservative strategy drops such events from its
buffer when punctuations arrive (state is purged on punctuations, never on tuple arrival).

Adapted to cepagg's semantics (docs/semantics.md): the window is strict (a match spans less
than ``w``) and the order is strict, so for an event at ``ts`` the types before it must lie in
``[ts - w + 1, ts - 1]`` and the types after it in ``[ts + 1, ts + w - 1]``; a punctuation
covers a range once it reaches the range's end (the chapter's ``>`` tests are off by one,
§2.5 "Fix: use >="). Types without a punctuation are skipped, which is safe.

Only flat patterns qualify (:func:`sequence_of`): a top-level SEQ of single typed events and
negated single events, ``skip-till-any-match``, a time window, WITHIN alone or SLIDE (under
EMIT ON CHANGE every event is also an instant, so none may be dropped), and only events of a
type that is never negated.
"""

from __future__ import annotations

import bisect
from typing import Mapping, Sequence

from ..lang.model import Atom, NotP, Query, SeqP

NEG = -(2**62)


def sequence_of(query: Query) -> list[str] | None:
    """The positive types of a flat SEQ query in order, or None when purging does not apply."""
    root = query.pattern
    if not isinstance(root, SeqP) or query.strategy != "skip-till-any-match" or query.within is None \
            or query.mode == "emit":
        return None
    seq: list[str] = []
    for item in root.items:
        if isinstance(item, Atom) and item.type is not None:
            seq.append(item.type)
        elif isinstance(item, NotP) and isinstance(item.body, Atom) and item.body.type is not None:
            continue
        else:
            return None
    return seq


def negated_types(query: Query) -> set[str]:
    return {n.body.type for n in query.pattern.walk() if isinstance(n, NotP) and isinstance(n.body, Atom)}


def _any_in(times: Sequence[int], lo: int, hi: int) -> int | None:
    """The earliest time in the sorted ``times`` within [lo, hi], or None."""
    i = bisect.bisect_left(times, lo)
    return times[i] if i < len(times) and times[i] <= hi else None


def singleton_purgeable(seq: Sequence[str], pos: int, ts: int, punct_type: str, punct_t: int,
                        present: Mapping[str, Sequence[int]], w: int) -> bool:
    """Algorithm 1: can the event at position ``pos`` (time ``ts``) be purged because of the
    single punctuation (``punct_type``, ``punct_t``)? ``present``: sorted times per type."""
    if punct_type == seq[pos]:
        return False
    if punct_type in seq[pos + 1:]:
        if punct_t < ts + w - 1:  # a later event of that type may still fall in the window
            return False
        return _any_in(present.get(punct_type, ()), ts + 1, ts + w - 1) is None
    if punct_type in seq[:pos]:
        if punct_t < ts - 1:
            return False
        return _any_in(present.get(punct_type, ()), ts - w + 1, ts - 1) is None
    return False


def set_purgeable(seq: Sequence[str], pos: int, ts: int, closed: Mapping[str, int],
                  present: Mapping[str, Sequence[int]], w: int) -> bool:
    """Algorithm 2: purge with every punctuation at once (``closed``: type -> punctuation).

    The positions before ``pos`` are walked in order with a cursor: each must have an event
    after the previous one's earliest candidate; likewise after ``pos``.
    """
    checking = ts - w + 1
    for t in seq[:pos]:
        if closed.get(t, NEG) >= ts - 1:
            first = _any_in(present.get(t, ()), checking, ts - 1)
            if first is None:
                return True
            checking = first + 1
    checking = ts + 1
    for t in seq[pos + 1:]:
        if closed.get(t, NEG) >= ts + w - 1:
            first = _any_in(present.get(t, ()), checking, ts + w - 1)
            if first is None:
                return True
            checking = first + 1
    return False


def purgeable(seq: Sequence[str], typ: str, ts: int, closed: Mapping[str, int],
              present: Mapping[str, Sequence[int]], w: int) -> bool:
    """An event of ``typ`` is purgeable when it is so at every position of its type."""
    places = [i for i, t in enumerate(seq) if t == typ]
    return bool(places) and all(set_purgeable(seq, i, ts, closed, present, w) for i in places)
