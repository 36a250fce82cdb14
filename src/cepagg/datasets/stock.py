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

SECTORS = ("Tech", "Finance", "Energy", "Health", "Industrials", "Utilities", "Materials",
           "Consumer", "Telecom", "RealEstate")


def generate(n_events: int = 1000, companies: int = 4, sectors: int = 2, tick_ms: int = 1000,
             seed: int = 7, volatility: float = 1.0, event_type: str = "Stock",
             ticker_types: bool = False, reversion: float = 0.0) -> EventBatch:
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
        reversion: pull of each price back to its start per step (0: a plain random walk, which
            wanders off and sits at the floor price for long stretches of a long stream; e.g.
            0.001: a stationary walk whose spread, about ``volatility / sqrt(2 * reversion)``,
            does not depend on the stream's length -- what a sweep over lengths needs).
    """
    rng = np.random.default_rng(seed)
    company = rng.integers(0, companies, n_events)
    gaps = np.maximum(1, rng.exponential(tick_ms, n_events).astype(np.int64))
    ts = np.cumsum(gaps)
    steps = rng.normal(0.0, volatility, n_events)
    start = 100.0 + 10.0 * rng.standard_normal(companies)
    # one random walk per company: cumulative sums within each company's events, vectorised
    order = np.argsort(company, kind="stable")
    walk = np.cumsum(steps[order])
    firsts = np.searchsorted(company[order], np.arange(companies))
    offset = np.concatenate(([0.0], walk))[firsts]  # the sum before each company's first event
    walk -= np.repeat(offset, np.diff(np.append(firsts, n_events)))
    price = np.empty(n_events)
    if reversion:
        walk = _reverting(steps[order], company[order], start, reversion)
        price[order] = np.round(np.maximum(1.0, walk), 2)
    else:
        price[order] = np.round(np.maximum(1.0, start[company[order]] + walk), 2)
    names = pa.array([f"C{c}" for c in range(companies)], pa.string())
    sector_names = pa.array([SECTORS[c % sectors % len(SECTORS)] for c in range(companies)], pa.string())
    by_company = pa.array(company.astype(np.int32))

    def labels(dictionary: pa.Array) -> pa.Array:
        return pa.DictionaryArray.from_arrays(by_company, dictionary).cast(pa.string())

    one_type = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n_events, np.int32)), pa.array([event_type]))
    types = labels(names) if ticker_types else one_type.cast(pa.string())
    table = pa.table({
        ID: pa.array(np.arange(n_events, dtype=np.int64)),
        "ts": pa.array(ts),
        "type": types,
        "company": labels(names),
        "sector": labels(sector_names),
        "price": pa.array(price),
        "volume": pa.array(rng.integers(1, 1000, n_events)),
    })
    return EventBatch(table)


def _reverting(steps: np.ndarray, company: np.ndarray, start: np.ndarray, pull: float) -> np.ndarray:
    """x[i] = x[i-1] + pull * (start - x[i-1]) + steps[i] within each company's run (``company``
    sorted): an AR(1) walk around the start price. A loop: the recursion does not vectorise."""
    out = np.empty(len(steps))
    c_prev, x = -1, 0.0
    keep = 1.0 - pull
    for i, (c, e) in enumerate(zip(company.tolist(), steps.tolist())):
        if c != c_prev:
            c_prev, x, mean = c, float(start[c]), float(start[c])
        x = mean + keep * (x - mean) + e
        out[i] = x
    return out
