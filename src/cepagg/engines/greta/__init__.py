"""GRETA: aggregation of Kleene event trends on a graph, without constructing the trends.

Modules (one job each): :mod:`.template` (Algorithm 1), :mod:`.split` (Algorithm 3),
:mod:`.plan` (refusals, predicate classes, aggregation paths), :mod:`.layout` (plan as kernel
arrays), :mod:`.vector` and :mod:`.encode` (vertex predicates and columns per batch),
:mod:`._kernels`, :mod:`._records`, :mod:`.index`, :mod:`._program` (compiled loops, each
with a pure-Python twin, :mod:`..kernels`), :mod:`.numbers` (exact integers in limbs),
:mod:`.state` (the runtime graph's arrays, a ring of start buckets shared by all windows),
:mod:`.results` (window results merged across partitions), :mod:`.engine` (the protocol).
"""

from .engine import Greta

__all__ = ["Greta"]
