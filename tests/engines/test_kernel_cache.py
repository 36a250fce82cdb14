"""Cached kernels are dropped when any file they are built from changes (numba checks only
the file of each function)."""

from __future__ import annotations

import pytest

from cepagg.engines.kernels import drop_stale


def test_cached_kernels_are_dropped_when_a_sibling_or_the_options_change(tmp_path):
    for name in ("_kernels", "_records", "_jit"):
        (tmp_path / f"{name}.py").write_text(f"# {name}\n")
    cache = tmp_path / "__pycache__"

    def cached() -> list[str]:
        return sorted(f.name for f in cache.iterdir() if f.suffix in (".nbi", ".nbc"))

    def put() -> None:
        for f in ("_kernels.run-10.py311.nbi", "_kernels.run-10.py311.1.nbc", "_records.add-5.py311.nbi",
                  "other.f-1.py311.nbi"):
            (cache / f).write_bytes(b"")

    drop_stale(tmp_path, ("_kernels", "_records"), "k.sha256", also=(tmp_path / "_jit.py",))  # first run: stamp
    put()
    drop_stale(tmp_path, ("_kernels", "_records"), "k.sha256", also=(tmp_path / "_jit.py",))
    assert len(cached()) == 4  # nothing changed: the cache stays
    (tmp_path / "_records.py").write_text("# changed\n")
    drop_stale(tmp_path, ("_kernels", "_records"), "k.sha256", also=(tmp_path / "_jit.py",))
    assert cached() == ["other.f-1.py311.nbi"]  # another module's kernels are not ours
    put()
    (tmp_path / "_jit.py").write_text("# other options\n")
    drop_stale(tmp_path, ("_kernels", "_records"), "k.sha256", also=(tmp_path / "_jit.py",))
    assert cached() == ["other.f-1.py311.nbi"]


def test_compilations_are_counted_so_that_a_benchmark_can_measure_again():
    """A benchmark whose timed run compiled a kernel counted the compiling as the engine's time."""
    import numba

    from cepagg.engines import kernels
    from cepagg.engines.aseq import _kernels  # noqa: F401  (its kernels register the listener)

    if kernels.TWINS_ONLY:
        pytest.skip("kernels run as their twins: nothing compiles")
    before = kernels.compilations()
    numba.njit(lambda x: x + 1)(1)
    assert kernels.compilations() == before + 1
