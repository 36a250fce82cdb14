"""NEEL's normal form: nested patterns rewritten to a union of flat patterns.

Mo Liu, "Extending Event Sequence Processing: New Models and Optimization Techniques", PhD
dissertation, WPI, 2012, chapter 5 (published as "High-performance nested CEP query processing
over event streams", ICDE 2011). The rules of §5.2 are modules of :mod:`.rules`, applied in the
order of :data:`.normalize.RULES`; :func:`normalize` returns the normal form of a pattern and
the steps, :func:`normal_query` the same for a bound query, or they raise
:class:`NotNormalisable` with the reason.
"""

from .normal_form import is_normal_form, why_not_normal
from .normalize import RULES, NotNormalisable, Step, normal_query, normalize, top_scope_is_wide

__all__ = ["normalize", "normal_query", "top_scope_is_wide", "is_normal_form", "why_not_normal",
           "NotNormalisable", "Step", "RULES"]
