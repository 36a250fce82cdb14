"""Time units: one table of their names and sizes, for query text, command-line options and files.

>>> unit_name("minutes"), unit_name("m"), UNIT_NS["min"] // UNIT_NS["s"]
('min', 'min', 60)
"""

from __future__ import annotations

#: nanoseconds per unit, by canonical name
UNIT_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9, "h": 3600 * 10**9,
           "d": 86400 * 10**9}

#: milliseconds per unit of query time, by canonical name: the units a stream's integer
#: timestamps can be in (``--time-unit``), the millisecond and above
TIME_UNITS_MS = {name: ns // UNIT_NS["ms"] for name, ns in UNIT_NS.items() if ns >= UNIT_NS["ms"]}

#: every accepted spelling -> canonical name
UNIT_NAMES = {
    "ns": "ns", "nsec": "ns", "nanos": "ns", "nanosecond": "ns", "nanoseconds": "ns",
    "us": "us", "usec": "us", "micros": "us", "microsecond": "us", "microseconds": "us",
    "ms": "ms", "msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
}


def unit_name(text: str) -> str | None:
    """The canonical name of a unit spelling (case-insensitive), None if it is not one."""
    return UNIT_NAMES.get(text.strip().lower())
