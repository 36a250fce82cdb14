"""How one evaluation is cut into independent parts: by key, by time slice, or not at all.

The decision depends on the query alone, so it lives with the planner: the Spark drivers
(batch, workload, streaming) only carry it out, and ``cepagg explain`` shows it without
pyspark installed.

* ``key`` -- queries with a partition key (GROUP BY or equivalence attributes): one engine
  state per key. Where several partitions feed one result group, the engine emits partial
  aggregates and the driver merges them.
* ``time`` -- queries with a time window and no key: slices of time, each evaluated with the
  engine's ``start_range`` option (every match, window or instant is counted by exactly one
  slice), partial aggregates merged.
* ``single`` -- one task sees the whole stream (no window, tuple-count windows, EMIT ON CHANGE
  with groups known only from the matches).

>>> from cepagg.lang import compile_query
>>> split_of(compile_query("RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 5")).kind
'key'
>>> split_of(compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5")).partial
True
>>> split_of(compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [k] WITHIN 5 EMIT ON CHANGE")).why[:36]
'split by time slices, not by k: EMIT'
"""

from __future__ import annotations

from typing import NamedTuple

from ..lang.model import Query


class Split(NamedTuple):
    """The split of a query: its kind, key columns, whether aggregates are partial, and why."""

    kind: str  # "key" | "time" | "single"
    keys: tuple[str, ...]
    partial: bool
    why: str


def split_of(query: Query) -> Split:
    """The split of ``query`` (see the module docstring)."""
    unqualified_groups = tuple(g.attr for g in query.group_by if g.var is None)
    if query.mode == "emit":
        # an instant's value needs every partition of the group at once
        if unqualified_groups:
            return Split("key", unqualified_groups, False, "EMIT ON CHANGE: one task per group")
        keys: tuple[str, ...] = ()
    else:
        keys = query.partition_by
    if keys:
        merge = not set(keys) <= set(unqualified_groups)
        why = "partitioned by " + ", ".join(keys)
        if merge and not query.returns_matches:
            why += "; several partitions feed a group, their partial aggregates are merged"
        return Split("key", keys, merge and not query.returns_matches, why)
    if query.within is None and query.within_events is None:
        return Split("single", (), False, "no window and no partition key: one task sees the whole stream")
    if query.within_events is not None:
        return Split("single", (), False, "tuple-count windows cannot be cut by time: one task")
    if query.mode == "emit" and any(g.var is not None for g in query.group_by):
        return Split("single", (), False, "EMIT ON CHANGE with GROUP BY X.a cannot be cut by time: one task")
    partial = not query.returns_matches and query.mode != "emit"
    if query.mode == "emit" and query.partition_by:
        why = (f"split by time slices, not by {', '.join(query.partition_by)}: EMIT ON CHANGE reports the "
               "value of the whole group at each instant, which needs every partition at once; the slices "
               "overlap by the window and each reports the instants it starts")
    else:
        why = "no partition key: time slices overlapping by the window" + (", merged" if partial else "")
    return Split("time", (), partial, why)


def bucket_keys(query: Query) -> tuple[str, ...]:
    """Attributes whose hash picks a streaming state bucket.

    Every row of a result group must come out of one bucket, so that no group is reported
    twice. That is the partition key when each group is one partition, the group attributes
    when several partitions feed a group (GROUP BY sector with [company, sector]), and nothing
    (one bucket) when a group is only known from the matches (GROUP BY X.a) or the query has
    no groups at all but several partitions.
    """
    groups = tuple(g.attr for g in query.group_by if g.var is None)
    if query.mode != "emit" and set(query.partition_by) <= set(groups) and len(groups) == len(query.group_by):
        return tuple(query.partition_by)
    if len(groups) == len(query.group_by):
        return groups
    return ()


def order_lanes(query: Query) -> tuple[str, ...]:
    """Attributes whose values pick the ordering layer's lane (one in-order engine state per
    lane, with its own clock), and so its streaming bucket: for matches the partition key; for
    aggregates the unqualified GROUP BY attributes, so that no output row ever combines lanes
    and a lane's clock alone can decide when its rows are final (none: one lane).

    >>> from cepagg.lang import compile_query
    >>> order_lanes(compile_query("RETURN g, COUNT(*) PATTERN SEQ(A a, B b) WHERE [k, g] GROUP BY g WITHIN 5"))
    ('g',)
    """
    if query.returns_matches:
        return tuple(query.partition_by)
    return tuple(g.attr for g in query.group_by if g.var is None)


def time_slices(lo: int, hi: int, within: int, tasks: int) -> tuple[int, int]:
    """``(t0, width)``: the time slices of a ``time`` split over events from ``lo`` to ``hi``.

    About four slices per task (so that a slow slice does not hold up the job), and never
    narrower than the window: an event is copied to every slice whose matches it may belong
    to, one window either side, and narrower slices would copy it to more than three.

    >>> time_slices(0, 999, 10, 2)
    (0, 125)
    """
    return lo, int(max(within, -(-(hi - lo + 1) // (4 * tasks))))
