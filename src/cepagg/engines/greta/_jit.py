"""Compiled kernels and their pure-Python twins from one source.

Each kernel module of this package (``_records``, ``index``, ``_kernels``) decorates its
functions with :func:`jit` bound to the module's ``_PURE`` flag. Imported normally, they are
numba-compiled (``cache=True``, so a second process reuses the machine code). :func:`twin`
loads a second copy of the same source with ``_PURE = True``: plain Python functions calling
plain Python functions. Tests run both on the same inputs and require the same outputs, and
the engine runs the twin on arrays of Python integers when a value cannot be held in int64
limbs (see :mod:`.numbers`). ``CEPAGG_GRETA_PURE=1`` makes the engine use the twins
everywhere (slow; for debugging).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from ..kernel_cache import drop_stale

PURE_DEFAULT = os.environ.get("CEPAGG_GRETA_PURE") == "1"

# the entry kernels inline functions of all four files, compiled with this file's options: a
# change to any of the five drops every cached kernel
drop_stale(Path(__file__).parent, ("_records", "index", "_program", "_kernels"), "greta-kernels.sha256",
           also=("_jit",))

_twins: dict[str, ModuleType] = {}


def jit(pure: bool, entry: bool = False, inline: bool = False):
    """The decorator for kernel functions of a module whose ``_PURE`` flag is ``pure``.

    ``entry`` marks the functions Python calls. ``inline`` functions are inlined into their
    callers at numba's IR level: a call between compiled functions costs ~0.3 us (reference
    counts of every array argument), so the small helpers of the per-event path are inlined;
    the rarely used ones are not, which keeps the first compilation short."""
    if pure:
        return lambda f: f
    from numba import njit

    if inline:
        return njit(cache=True, nogil=True, inline="always", _nrt=False)
    return njit(cache=True, nogil=True, _nrt=False)


def twin(name: str) -> ModuleType:
    """The pure-Python copy of kernel module ``name`` (e.g. ``"_kernels"``)."""
    if name not in _twins:
        package = __name__.rsplit(".", 1)[0]
        spec = importlib.util.find_spec(f"{package}.{name}")
        assert spec is not None and spec.origin is not None
        full = f"{package}.{name}__twin"
        copy = importlib.util.spec_from_file_location(full, spec.origin)
        assert copy is not None and copy.loader is not None
        module = importlib.util.module_from_spec(copy)
        module._PURE = True  # type: ignore[attr-defined]
        sys.modules[full] = module
        copy.loader.exec_module(module)
        _twins[name] = module
    return _twins[name]


def sibling(name: str, pure: bool) -> ModuleType:
    """Kernel module ``name`` in the same flavour (compiled or twin) as the caller."""
    if pure:
        return twin(name)
    package = __name__.rsplit(".", 1)[0]
    return importlib.import_module(f"{package}.{name}")
