"""A stock-like stream: ticks of several companies, grouped in sectors, prices as random walks.

It stands in for the NYSE and WPI traces the A-Seq and GRETA papers used (neither is
available): the shape that matters to their queries is there — per-company price walks with
local fluctuations (down-trends, GRETA Q1), several tickers interleaved (sequences of tickers,
A-Seq), and sectors spanning companies (grouping).

>>> b = generate(n_events=6, companies=2, seed=1)
>>> len(b), b.attribute_names
(6, ['company', 'sector', 'price', 'volume'])
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..events import ID, EventBatch

SECTORS = ("Tech", "Finance", "Energy", "Health")


def generate(n_events: int = 1000, companies: int = 4, sectors: int = 2, tick_ms: int = 1000,
             seed: int = 7, volatility: float = 1.0, event_type: str = "Stock",
             ticker_types: bool = False) -> EventBatch:
    """Generate ``n_events`` ticks, one every ``tick_ms`` on average, round-robin over companies.

    Args:
        n_events: number of ticks.
        companies: number of companies (tickers C0, C1, ...).
        sectors: companies are assigned to sectors round-robin.
        tick_ms: mean time between ticks (exponential gaps, at least 1 ms).
        seed: random seed; the same seed gives the same stream.
        volatility: standard deviation of a price step.
        event_type: the type of every tick, unless ``ticker_types``.
        ticker_types: use the ticker (C0, C1, ...) as the event type, as A-Seq's queries do.
    """
    rng = np.random.default_rng(seed)
    company = rng.integers(0, companies, n_events)
    gaps = np.maximum(1, rng.exponential(tick_ms, n_events).astype(np.int64))
    ts = np.cumsum(gaps)
    steps = rng.normal(0.0, volatility, n_events)
    price = np.empty(n_events)
    last = 100.0 + 10.0 * rng.standard_normal(companies)
    for i in range(n_events):
        last[company[i]] = max(1.0, last[company[i]] + steps[i])
        price[i] = round(last[company[i]], 2)
    names = np.array([f"C{c}" for c in range(companies)], dtype=object)
    sector_names = np.array([SECTORS[c % sectors % len(SECTORS)] for c in range(companies)], dtype=object)
    types = names[company] if ticker_types else np.full(n_events, event_type, dtype=object)
    table = pa.table({
        ID: pa.array(np.arange(n_events, dtype=np.int64)),
        "ts": pa.array(ts),
        "type": pa.array(types.tolist(), pa.string()),
        "company": pa.array(names[company].tolist(), pa.string()),
        "sector": pa.array(sector_names[company].tolist(), pa.string()),
        "price": pa.array(price),
        "volume": pa.array(rng.integers(1, 1000, n_events)),
    })
    return EventBatch(table)
