"""Output files: results as CSV, JSON Lines or Parquet, written atomically (a temporary file
beside the target, renamed at the end), and the checks an output path passes before any work."""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Iterator

import pyarrow.parquet as pq

from .result import format_table

#: file name extension -> format
EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
        ".pq": "parquet"}
#: file name extension -> compression (read; an output is written plain)
COMPRESSION = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd",
               ".zip": "zip"}
_I64 = 2**63 - 1


def output_format(path: str | Path, format: str | None = None) -> str:
    """The format of an output file: ``format``, else by the extension (.csv, .jsonl/.json/.ndjson,
    .parquet/.pq).

    Raises:
        ValueError: neither says csv, jsonl or parquet (a compressed name, ``r.csv.gz``, is
            refused as such: outputs are written uncompressed).
    """
    suffix = Path(path).suffix.lower()
    if suffix in COMPRESSION:
        raise ValueError(f"{str(path)!r}: compressed output is not written ({suffix}); name the file "
                         ".csv, .jsonl or .parquet (Parquet compresses its own pages) and compress it afterwards")
    fmt = format or EXTENSIONS.get(suffix)
    if fmt not in ("csv", "jsonl", "parquet"):
        raise ValueError(f"{str(path)!r}: cannot tell the output format; name it .csv, .jsonl or .parquet")
    return fmt


def check_output_path(path: str | Path, what: str = "output") -> None:
    """Refuse, before any work, an output file that cannot be written: a directory, or in a
    directory that does not exist or is not writable (ValueError naming ``what``)."""
    if not str(path).strip():
        raise ValueError(f"{what} is empty; give a file name")
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{what} {str(path)!r} is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{what} {str(path)!r}: no directory {str(parent)!r}")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"{what} {str(path)!r}: directory {str(parent)!r} is not writable")


def same_file(a: str | Path, b: str | Path) -> bool:
    """Do two paths name one file (the same inode, or the same resolved path)?"""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed to ``path`` when the block ends
    without an error, removed when it ends with one (KeyboardInterrupt included). A run killed
    mid-write (SIGKILL) leaves the previous file intact and a hidden ``.NAME.*.tmp``, never a
    partial file under the name.

    >>> import tempfile; d = tempfile.mkdtemp()
    >>> with atomic_path(Path(d) / "r.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> sorted(p.name for p in Path(d).iterdir())
    ['r.txt']
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)  # as a file opened for writing would be (mkstemp makes it private)
    try:
        yield Path(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_result(result: Any, path: str | Path | None, format: str | None = None) -> None:
    """Write a :class:`cepagg.result.Result` as CSV, JSON Lines or Parquet (atomically:
    :func:`atomic_path`), or print it.

    Integers beyond int64 become decimal strings in CSV and JSON Lines, DECIMAL(38,0) in Parquet.

    Args:
        result: the result table.
        path: the output file; None or "-" prints ``format_table(result)`` to stdout.
        format: "csv", "jsonl" or "parquet"; None: from the extension.
    """
    if path is None or str(path) == "-":
        return print(format_table(result))
    fmt = output_format(path, format)
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            pq.write_table(result.to_arrow(), tmp)
            return
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            if fmt == "csv":
                w = csv.writer(f)
                w.writerow(result.columns)
                w.writerows([cell(v, True) for v in r] for r in result.rows)
            for r in result.rows if fmt == "jsonl" else ():
                f.write(json.dumps(dict(zip(result.columns, map(cell, r))), ensure_ascii=False) + "\n")


def cell(v: Any, text: bool = False) -> Any:
    """A value for CSV (``text``) or JSON, exact for integers of any size."""
    if isinstance(v, bool):
        return str(v).lower() if text else v
    if isinstance(v, int):
        return str(v) if text or abs(v) > _I64 else v
    if isinstance(v, float) or hasattr(v, "denominator"):
        return repr(float(v)) if text or not math.isfinite(float(v)) else float(v)
    return "" if text and v is None else v if v is None or isinstance(v, str) else str(v)


def json_safe(v: Any) -> Any:
    """A value JSON can hold exactly: non-finite floats as text ("nan", "inf"), other objects as text."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, dict):
        return {k: json_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [json_safe(x) for x in v]
    return v if v is None or isinstance(v, (bool, int, float, str)) else str(v)
