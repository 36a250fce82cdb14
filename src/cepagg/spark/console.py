"""What Spark's processes print on the user's terminal: pyspark's worker chatter kept out.

pyspark's streaming driver worker (the Python process that sets up
``transformWithStateInPandas``) prints lines such as "Streaming TransformWithStateInPandas
Python worker ... Received UDF from JVM: <bound method ...>" with ``print``; the JVM copies
them to its own stderr, which is the terminal of the process that started it. They say nothing
to a user, on every run. :func:`quiet_worker_lines` starts the JVM with a stderr that passes
through a filter dropping exactly those lines (and the blank line each is followed by); every
other line (Spark's warnings and errors, Python tracebacks from the workers) goes through
unchanged. Nothing is filtered with ``--verbose``.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

#: a line pyspark's streaming driver worker prints for itself
WORKER_LINE = re.compile(rb"^(Starting )?Streaming \w+ Python worker\b")


class LineFilter:
    """Bytes in, bytes out, whole lines only: worker lines dropped, with the empty line that
    follows each (pyspark prints them with a trailing newline of their own)."""

    def __init__(self) -> None:
        self._partial = b""
        self._after_worker_line = False

    def feed(self, data: bytes) -> bytes:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        return b"".join(self._keep(line) for line in lines)

    def close(self) -> bytes:
        rest, self._partial = self._partial, b""
        return self._keep(rest, newline=False) if rest else b""

    def _keep(self, line: bytes, newline: bool = True) -> bytes:
        if WORKER_LINE.match(line):
            self._after_worker_line = True
            return b""
        if self._after_worker_line and not line.strip():
            self._after_worker_line = False
            return b""
        self._after_worker_line = False
        return line + (b"\n" if newline else b"")


def _pump(read_fd: int, write_fd: int) -> None:
    keep = LineFilter()
    with os.fdopen(read_fd, "rb", buffering=0) as pipe:
        while True:
            data = pipe.read(65536)
            if not data:
                break
            out = keep.feed(data)
            if out:
                os.write(write_fd, out)
    out = keep.close()
    if out:
        os.write(write_fd, out)


@contextmanager
def quiet_worker_lines(active: bool = True) -> Iterator[None]:
    """Processes started inside this block (the JVM, when it starts the Spark session) write
    their stderr through :class:`LineFilter` to this process's stderr; this process's own
    stderr is itself again when the block ends. A no-op when not ``active``."""
    if not active:
        yield
        return
    sys.stderr.flush()
    terminal = os.dup(2)
    read_fd, write_fd = os.pipe()
    threading.Thread(target=_pump, args=(read_fd, terminal), daemon=True, name="cepagg-stderr").start()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(terminal, 2)
