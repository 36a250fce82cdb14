"""E-Cube: pattern queries at several concept and pattern levels, computed with reuse.

Mo Liu, "Extending Event Sequence Processing: New Models and Optimization Techniques", PhD
dissertation, WPI, 2012, ch. 4. :class:`Cube` holds the queries, their refinement hierarchy and
results; :mod:`.chase` chooses how each query is computed; docs/cube.md is the manual.
"""

from .chase import STRATEGIES, CubePlan
from .cube import Cube
from .shape import CubeError

__all__ = ["Cube", "CubePlan", "CubeError", "STRATEGIES"]
