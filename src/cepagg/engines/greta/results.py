"""SLIDE results of every (sub-)partition, merged per (group, window) a column at a time.

Each drain of a sub-partition hands over the records its kernel run emitted, one per window
it added to: the window's index ``k`` (it starts at ``k * SLIDE``), the exact integer fields
(COUNT(*), COUNT(E), SUM numerators, non-null counts; Python integers, as counts outgrow 64
bits), the float sums, and the MIN/MAX order codes (:mod:`.numbers`). A group's window is
the sum of its partitions' records (GROUP BY sector over ``[company]``), and records of one
partition for one window arrive in several drains. Q1 (61 windows per event) emits more such
records than it reads events: merged one by one in a dict of tuples they took a third of its
time at small windows. Here they stay in arrays until the watermark passes a window's end,
then are merged by sorting on (window, group) and reducing each run of equal keys.
"""

from __future__ import annotations

import numpy as np

#: Order codes of an empty MIN / MAX (:mod:`.numbers`): the identities of minimum / maximum.
EMPTY_MIN = np.iinfo(np.int64).max
EMPTY_MAX = np.iinfo(np.int64).min


class WindowResults:
    """Pending window records of one query run: ``add`` per drain, ``pop`` per watermark."""

    def __init__(self, FI: int, FF: int, minmax: list[str]):
        """``FI`` integer fields, ``FF`` float fields, and per MIN/MAX field its function."""
        self.FI, self.FF, self.minmax = FI, FF, list(minmax)
        self.groups: dict[tuple, int] = {}  # group -> id, in order of first appearance
        self.names: list[tuple] = []
        self.chunks: list[tuple] = []  # (group id, k, ints, floats, codes) per drain
        self.merged = self._empty()

    @classmethod
    def of(cls, layout) -> "WindowResults":
        """For the record fields of ``layout`` (:class:`.layout.Layout`)."""
        minmax = sorted((a for a in layout.aggs if a.func in ("MIN", "MAX")), key=lambda a: a.field)
        return cls(layout.FI, layout.FF, [a.func for a in minmax])

    def _empty(self) -> tuple:
        z = np.zeros(0, dtype=np.int64)
        return (z, z, np.zeros((0, self.FI), dtype=object), np.zeros((0, self.FF)),
                np.zeros((0, len(self.minmax)), dtype=np.int64))

    def __len__(self) -> int:
        return len(self.merged[0]) + sum(len(c[1]) for c in self.chunks)

    def add(self, group: tuple, k: np.ndarray, ints: np.ndarray, floats: np.ndarray,
            codes: np.ndarray) -> None:
        """Records of ``group`` for windows ``k``: ``ints`` an object array (rows x FI) of
        Python integers, ``floats`` (rows x FF), ``codes`` (rows x MIN/MAX fields). Copied."""
        gid = self.groups.get(group)
        if gid is None:
            gid = self.groups[group] = len(self.names)
            self.names.append(group)
        self.chunks.append((np.full(len(k), gid, dtype=np.int64), np.array(k, dtype=np.int64),
                            ints, np.array(floats), np.array(codes, dtype=np.int64)))

    def pop(self, last: int) -> tuple[list[tuple], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The merged records of windows ``k <= last``, ordered by window then group: (groups,
        k, ints, floats, codes). Later windows stay, merged."""
        self._merge()
        g, k, ints, floats, codes = self.merged
        n = int(np.searchsorted(k, last, side="right"))  # sorted by k
        self.merged = (g[n:], k[n:], ints[n:], floats[n:], codes[n:])
        return [self.names[i] for i in g[:n].tolist()], k[:n], ints[:n], floats[:n], codes[:n]

    def _merge(self) -> None:
        if not self.chunks:
            return
        parts = [self.merged] + self.chunks
        self.chunks = []
        g, k, ints, floats, codes = (np.concatenate([p[i] for p in parts]) for i in range(5))
        order = np.lexsort((g, k))
        g, k, ints, floats, codes = g[order], k[order], ints[order], floats[order], codes[order]
        first = np.ones(len(k), dtype=bool)
        first[1:] = (g[1:] != g[:-1]) | (k[1:] != k[:-1])
        starts = np.flatnonzero(first)
        if len(starts) < len(k):
            ints = np.add.reduceat(ints, starts, axis=0) if self.FI else ints[starts]
            floats = np.add.reduceat(floats, starts, axis=0) if self.FF else floats[starts]
            out = codes[starts].copy()
            for j, func in enumerate(self.minmax):
                op = np.minimum if func == "MIN" else np.maximum
                out[:, j] = op.reduceat(codes[:, j], starts)
            codes, g, k = out, g[starts], k[starts]
        self.merged = (g, k, ints, floats, codes)


# Reference: GRETA (PVLDB 2017) Section 5 (shared sliding windows: a
# trend's aggregate counts in every window holding it, emitted when the window closes).
