"""rcep: recomputation-based complex event processing (Kammoun et al., EDBT 2018)."""

from .engine import Rcep

__all__ = ["Rcep"]
