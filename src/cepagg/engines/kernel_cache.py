"""Numba's on-disk cache, kept honest for kernels that span several files.

Numba checks a cached function against its own source file only. Kernels that inline functions
from sibling files (aseq's ``run`` calls ``_algebra``, ``windows`` and ``_expiry``; GRETA's
``pos_run`` calls ``_records``, ``index`` and ``_program``) would keep stale inlined code after
a change to a sibling. :func:`drop_stale` hashes the files of one package's kernels together and
drops all their cached machine code when the hash changes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def drop_stale(package_dir: Path, names: tuple[str, ...], stamp_name: str, also: tuple[str, ...] = ()) -> None:
    """Delete the cached kernels of modules ``names`` in ``package_dir`` unless their sources,
    and those of the modules ``also`` (how they are compiled), are unchanged since the stamp
    ``__pycache__/<stamp_name>`` was written."""
    sources = b"".join((package_dir / f"{n}.py").read_bytes() for n in names + also)
    digest = hashlib.sha256(sources).hexdigest()
    cache = package_dir / "__pycache__"
    stamp = cache / stamp_name
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for f in cache.iterdir():
            if f.suffix in (".nbi", ".nbc") and f.name.split(".")[0] in names:
                f.unlink()
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then does not cache either
        pass
