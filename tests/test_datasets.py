"""The generators' promises that the benchmarks rely on."""

from __future__ import annotations

import numpy as np

from cepagg.datasets.stock import generate


def test_a_mean_reverting_walk_does_not_drift_with_the_stream_length():
    def prices(n, **kw):
        return generate(n, companies=2, tick_ms=5, seed=3, **kw).table.column("price").to_numpy()

    short, long = prices(20_000, reversion=0.01), prices(200_000, reversion=0.01)
    # spread about volatility / sqrt(2 * reversion) ~ 7, whatever the length
    assert abs(np.std(long) - np.std(short)) < 3 and np.std(long) < 15
    assert (long <= 1.0).mean() == 0.0  # never near the floor price
    drifting = prices(200_000)
    assert np.std(drifting) > 2 * np.std(long)  # the plain walk wanders off
    assert (prices(20_000, reversion=0.01) == short).all()  # the same seed, the same stream
