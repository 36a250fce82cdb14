"""When a store condenses: the condensation paper's benefit-cost rule, measured per store.

The paper (Sec. IV) weighs, for a sequence node, ``benefit = a * size_L * size_R * (1 - d_L *
d_R)`` (its text has ``size_L * size_L``, a typo for the number of uncondensed pairs) against
``cost = b * (size_L + size_R)``, and switches condensed composition on or off per buffer when
the ratio crosses a threshold; it leaves ``a``, ``b``, the threshold and the cadence open.

Here a store is reviewed each time it has received as many composites as it held at the last
review (at least ``REVIEW``): expired composites are dropped, and the decision is taken. A
review looks at every composite held, so it costs O(1) per insert. Over the period since the
last review, ``size_L`` is the composites held, ``size_R`` the right composites that probed the
store (``d_R`` is 1: right composites are joined as they come), and ``size_L + size_R`` the
inserts and probes, which cost a hash or a group scan more in condensed mode. ``a`` is one
condition evaluation, ``b`` = :data:`B` of them: a condensed insert costs about a fifth of an
evaluation more than a plain one (``cepagg bench tree --costs``, docs/benchmarks.md), so B = 1
errs on the side of staying plain. Condensation switches on when the benefit exceeds ``ON``
times the cost and off below ``OFF`` times (hysteresis, so a store does not flip on noise); a
store whose parent has no condition has nothing to save and stays plain.
"""

from __future__ import annotations

from .stores import Store

REVIEW = 64
B = 1.0
ON = 2.0
OFF = 1.0


def due(store: Store) -> bool:
    return store.inserted >= store.review_at


def review(store: Store, horizon: int, policy: str, has_checks: bool) -> None:
    """Drop expired composites; under ``auto`` decide whether the store condenses."""
    store.purge(horizon)
    if policy == "auto" and has_checks:
        size_l, size_r = store.size, store.probes
        d = store.degree()
        benefit = size_l * size_r * (1.0 - d)
        cost = B * (store.inserted + size_r)
        if not store.condensed and benefit > ON * cost:
            store.set_condensed(True)
        elif store.condensed and benefit < OFF * cost:
            store.set_condensed(False)
    store.inserted = store.probes = store.scanned = 0
    store.review_at = max(REVIEW, store.size)
