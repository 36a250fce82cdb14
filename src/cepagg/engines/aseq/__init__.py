"""A-Seq: aggregates of fixed-length sequence patterns without constructing matches.

Modules, in the order data flows through them:

* :mod:`.plan` — what a query compiles to (positions, negation gaps, partition key), refusals;
* :mod:`.vexpr`, :mod:`.encode` — conditions over columns; batches to integer arrays;
* :mod:`.counters` — PreTree units, counted components, per-partition state (alone or stacked
  column-wise), kernel/twin switch;
* :mod:`._algebra`, :mod:`.windows`, :mod:`._kernels` — compiled kernels (and their Python
  twin): prefix counters as linear maps, two-stacks windows, the per-partition loop;
* :mod:`.runtime`, :mod:`.merge` — partitions, rows per group, groups spanning partitions;
* :mod:`.chop`, :mod:`.sharing` — Chop-Connect with snapshots, the sharing optimizer;
* :mod:`.workload`, :mod:`.engine` — the workload API and the ``aseq`` engine.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014.
"""

from .engine import Aseq
from .workload import Workload

__all__ = ["Aseq", "Workload"]
