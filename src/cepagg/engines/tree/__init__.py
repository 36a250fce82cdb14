"""tree: join-tree plans with condensed composition (ZStream-style trees; Li, Wang, Feng, Xue,
"Accelerating Sequence Event Detection through Condensed Composition", about 2010)."""

from .engine import Tree

__all__ = ["Tree"]
