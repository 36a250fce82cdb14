"""The ``neel`` engine: nested queries as exact combinations of flat queries on aseq and greta."""

from .engine import Neel
from .terms import NotDecomposable, decompose

__all__ = ["Neel", "decompose", "NotDecomposable"]
