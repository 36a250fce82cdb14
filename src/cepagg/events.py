"""Events in memory: a columnar batch (an Arrow table) and, for the reference evaluator, rows.

Every event has an identity ``_id`` (its position in the input, which also orders events with
equal timestamps), an integer ``ts`` in the stream's time unit, a ``type`` and attributes. The
identity column is ``_id`` so that ``id``, a common attribute name, stays free for users. The batch is
the unit engines consume; columns are Arrow arrays, convertible to numpy without copies for
numeric columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from .errors import InputError

ID = "_id"
RESERVED = (ID, "ts", "type")


@dataclass(frozen=True, slots=True)
class Event:
    """One event as Python values (the reference evaluator's view)."""

    id: int
    ts: int
    type: str
    attrs: Mapping[str, Any]

    def get(self, name: str) -> Any:
        if name == "ts":
            return self.ts
        if name == "type":
            return self.type
        return self.attrs.get(name)


def arrow_kind(t: pa.DataType) -> str:
    """The kind of an Arrow type, as queries see it: int, float, str, bool, timestamp (else the
    type's name). The one map from Arrow types to kinds (readers and result writers use it)."""
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
        return "str"
    if pa.types.is_timestamp(t):
        return "timestamp"
    return str(t)


class EventBatch:
    """Events as an Arrow table with columns ``_id``, ``ts``, ``type`` and attributes.

    >>> b = EventBatch.from_rows([{"type": "A", "ts": 1, "x": 5}, {"type": "B", "ts": 2, "x": 7}])
    >>> len(b), b.attribute_kinds()
    (2, {'x': 'int'})
    """

    def __init__(self, table: pa.Table, time_unit: str = "ms"):
        for name in RESERVED:
            if name not in table.column_names:
                raise ValueError(f"an event table needs a column {name!r}")
        self.table = table
        self.time_unit = time_unit

    @staticmethod
    def from_rows(rows: Iterable[Mapping[str, Any]], time_unit: str = "ms",
                  ids: Sequence[int] | None = None) -> "EventBatch":
        """Build a batch from dicts with ``type``, ``ts`` (an integer) and attributes (ids: input
        order).

        Raises:
            ValueError: naming the row (0-based) without a type or an integer time, or the
                attribute whose values are of kinds one column cannot hold (1 and "x").
        """
        rows = list(rows)
        names: list[str] = []
        for r in rows:
            for k in r:
                if k not in names and k not in RESERVED:
                    names.append(k)
        cols: dict[str, Any] = {
            ID: pa.array(list(ids) if ids is not None else range(len(rows)), pa.int64()),
            "ts": pa.array([_row_time(i, r) for i, r in enumerate(rows)], pa.int64()),
            "type": pa.array([_row_type(i, r) for i, r in enumerate(rows)], pa.string()),
        }
        for n in names:
            values = [r.get(n) for r in rows]
            try:
                cols[n] = pa.array(values)
            except OverflowError:
                # pyarrow holds integers up to 64 bits; a wider one is refused, never rounded
                at = next(i for i, v in enumerate(values) if isinstance(v, int) and not -2**63 <= v < 2**63)
                raise InputError(f"row {at}: attribute '{n}': {values[at]} is not a 64-bit integer "
                                 f"(give it as a float to have it rounded)", row=at) from None
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                raise ValueError(f"attribute {n!r}: values one column cannot hold together ({e})") from None
        return EventBatch(pa.table(cols), time_unit)

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def attribute_names(self) -> list[str]:
        return [c for c in self.table.column_names if c not in RESERVED]

    def attribute_kinds(self) -> dict[str, str]:
        return {f.name: arrow_kind(f.type) for f in self.table.schema if f.name not in RESERVED}

    def column(self, name: str) -> np.ndarray:
        """A column as numpy (nulls become NaN for numbers, None for objects)."""
        col = self.table.column(name)
        if col.null_count and pa.types.is_integer(col.type):
            return col.cast(pa.float64()).to_numpy()
        return col.to_numpy(zero_copy_only=False)

    def events(self) -> list[Event]:
        """The events as Python objects, in table order."""
        names = self.attribute_names
        cols = {n: self.table.column(n).to_pylist() for n in names}
        ids = self.table.column(ID).to_pylist()
        ts = self.table.column("ts").to_pylist()
        types = self.table.column("type").to_pylist()
        return [Event(ids[i], ts[i], types[i], {n: cols[n][i] for n in names}) for i in range(len(ids))]

    def sorted(self) -> "EventBatch":
        """Sorted by (ts, id): the stream order every engine assumes."""
        idx = pa.compute.sort_indices(self.table, sort_keys=[("ts", "ascending"), (ID, "ascending")])
        return EventBatch(self.table.take(idx), self.time_unit)

    def slice(self, offset: int, length: int | None = None) -> "EventBatch":
        return EventBatch(self.table.slice(offset, length), self.time_unit)


def _row_time(i: int, row: Mapping[str, Any]) -> int:
    """The ``ts`` of row ``i`` of :meth:`EventBatch.from_rows` as an integer (not truncated)."""
    if not isinstance(row, Mapping):
        raise ValueError(f"row {i}: a mapping with 'type' and 'ts', not {type(row).__name__}")
    if row.get("ts") is None:
        raise ValueError(f"row {i}: no 'ts' (the event's time, an integer)")
    ts = row["ts"]
    try:
        whole = int(ts)
        exact = not isinstance(ts, (bool, str)) and whole == ts
    except (TypeError, ValueError, OverflowError):
        exact = False
    if not exact:
        raise ValueError(f"row {i}: 'ts' {ts!r} is not an integer time")
    return whole


def _row_type(i: int, row: Mapping[str, Any]) -> str:
    """The ``type`` of row ``i`` of :meth:`EventBatch.from_rows`."""
    if row.get("type") is None:
        raise ValueError(f"row {i}: no 'type'")
    return str(row["type"])


import pyarrow.compute  # noqa: E402  (pa.compute is a submodule)
