"""The ``cepagg`` Python data source: event files as a stream, optionally replayed at a rate.

``spark.readStream.format("cepagg").option("path", ...).load()`` reads CSV, JSON Lines or
Parquet with :func:`cepagg.io.read_events` (so a bad row is reported exactly as in batch),
and streams the events in time order:

* ``rate`` (events per second of wall time) replays the file at that pace; without it every
  event is available at once (and ``maxEventsPerBatch`` can cut micro-batches);
* ``finite=true`` appends one end-of-stream event (type ``__end__``, a far-future time) after
  the last event: it moves the watermark past every window, so the last windows close and are
  emitted. Spark's own file source cannot do that (its watermark stops at the last event).

Offsets are event positions, so a restarted query re-reads exactly the events of its
unfinished micro-batch: recovery repeats nothing and loses nothing.

A stream that runs on (``finite`` false) over a directory takes files as they arrive: the files
in the order they appeared (modification time, then name), each file's events in time order, so
a new file adds positions after the ones read and never moves them (a file with events older
than those read brings late events, which the watermark or the ordering layer handles). A file
must be complete when it appears (write it elsewhere on the same file system, then move it in:
a rename, so the file appears whole): one that changes after
it was read is refused. A name stands for one file (its inode, size and modification time tell
which, :func:`_signature`): a file replaced under a known name, even by one with the same size
and time, is refused, and so is one back under the name of a file this run forgot (read to the
end and gone: its events would be read twice) with that file's size and modification time; a
new file under a forgotten name (other size or time: a spool reusing names) is read. A file
stands for one name: one the stream knows or forgot under a new name (renamed in the directory,
hard-linked, moved back under another name: the same inode, size and modification time) is
refused naming both; a new file given a deleted file's inode differs in size or time. The run
remembers the last 10,000 files it forgot (:data:`FORGOTTEN_KEPT`). The offsets (kept in the
checkpoint) list the files by name with their event counts and signatures: a restarted query
numbers the positions as the run before without reading the files again, and takes a listed
file only as the file the checkpoint saw, as a running query does: one replaced or changed while
the query was stopped is refused naming it and what changed (:func:`_check_listed`), also one
that only grew (a file's events are numbered in time order: appended ones would move the
positions read) and one whose events were all read; a copy of the directory (other inodes) is
other files. A file read to the end may be moved out or deleted, while the query runs or while
it is stopped -- it is then forgotten (its events still count in the numbering), so the offsets
list the files in the directory plus those not yet read to the end; a file gone before all its
events were read is refused naming it (a listed file gone when the query restarts and back later
must be the file listed). A restarted query knows the files its checkpoint lists: a file
forgotten before the restart is not known after it. A checkpoint of an earlier version lists
no signatures: its files are taken as they are, and of one gone at the restart only the name
is known once forgotten (a file back under it is refused whatever its size and time). Its columns
are cast to the stream's, fixed when the stream starts (a missing one is null; one that does
not fit is refused naming the file).
With a reject file ``R`` (``reject`` option), each file's bad rows go to a reject file of its
own, ``R`` named after it (:func:`reject_file`): a file is read more than once (on the driver
to count its events, in a worker to stream them), and each read writes the same file whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from functools import lru_cache

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

END_TYPE = "__end__"
END_TS_MS = 9_000_000_000_000  # year 2255: beyond real event times, inside every time type

#: how many forgotten files a stream remembers (by name and signature), to refuse one of them
#: back in the directory: one entry per file read to the end and gone, so bounded
FORGOTTEN_KEPT = 10_000


@lru_cache(maxsize=4)
def _load(path: str, fmt: str, options_json: str, stamp: float):
    """The events of a file, sorted, as an Arrow table with the source's column types (cached
    per worker process). Micro-batches are handed to Spark as Arrow batches: as Python rows,
    10^5 events took about 0.3 s per micro-batch."""
    from ..io import parse_schema, read_events

    opts = json.loads(options_json)
    report = read_events(path, format=fmt or None, type_column=opts.get("type_column", "type"),
                         time_column=opts.get("time_column", "ts"), time_unit=opts.get("time_unit", "ms"),
                         input_time_unit=opts.get("input_time_unit") or None,
                         schema=parse_schema(opts["schema"]) if opts.get("schema") else None,
                         constant_type=opts.get("constant_type") or None, timezone=opts.get("timezone") or "UTC",
                         on_bad_row="reject" if opts.get("reject") else "error", reject_path=opts.get("reject") or None)
    table = report.batch.table
    return table.schema, table.cast(_arrow_types(table.schema)), report.rejected


def _stamp(path: str) -> float:
    """The modification time of a file, or the latest of a directory's files: a finite
    stream's file read again after it changed is not taken from :func:`_load`'s cache."""
    p = path
    if os.path.isdir(p):
        return max((os.path.getmtime(os.path.join(p, f)) for f in os.listdir(p)), default=0.0)
    return os.path.getmtime(p)


def _signature(path: str) -> tuple[int, int, int]:
    """Which file a name stands for now: its inode, size and modification time (ns). A file
    replaced under its name has another, also one moved in with the modification time of the
    file it replaces (``cp -p``, ``mv`` keep a file's time), or rewritten within a second."""
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


class _Partition(InputPartition):
    def __init__(self, start: int, end: int, slices: list | None = None):
        self.start, self.end = start, end
        self.slices = slices  # arriving files: (file, signature, events, first row, end row) per file read


def _arrived(path: str, fmt: str) -> list[str]:
    """The event files under ``path`` in the order they appeared (modification time, then
    name); an empty directory has none yet, and a file gone since the listing is left out (as
    if not yet seen)."""

    from ..errors import InputError
    from ..io import input_files

    try:
        files = [os.path.abspath(f) for f in input_files(path, fmt or None)]
    except InputError:
        if os.path.isdir(path):
            return []
        raise
    arrived = []
    for f in files:
        try:
            arrived.append((os.stat(f).st_mtime_ns, f))
        except FileNotFoundError:
            continue
    return [f for _, f in sorted(arrived)]


def _arrow_target(schema):
    """The stream's Arrow schema from its Spark schema (the types :func:`_ddl` gives)."""
    import pyarrow as pa

    types = {"long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string()}
    return pa.schema([pa.field(f.name, types[f.dataType.typeName()]) for f in schema.fields])


def _conform(table, target, file: str):
    """``table`` (one file's events) with the stream's columns and types."""
    import pyarrow as pa

    from ..errors import InputError

    columns = []
    for f in target:
        if f.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, f.type))
            continue
        col = table.column(f.name)
        try:
            columns.append(col if col.type == f.type else col.cast(f.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(f"column {f.name!r} ({col.type}) does not fit the stream's type {f.type}", file) from None
    return pa.Table.from_arrays(columns, schema=target)


class CepaggStreamReader(DataSourceStreamReader):
    def __init__(self, options: dict, schema):
        options = {k.lower(): v for k, v in options.items()}  # Spark may lower-case option names
        self.options = options
        self.path = options["path"]
        self.fmt = options.get("format", "")
        self.rate = float(options["rate"]) if options.get("rate") else None
        self.finite = options.get("finite", "false").lower() == "true"
        self.max_batch = int(options["maxeventsperbatch"]) if options.get("maxeventsperbatch") else None
        self._last_call = time.monotonic()
        self.target = _arrow_target(schema)
        #: arriving files: (file, signature, events), in arrival order (a file gone when a restarted
        #: query took it from its checkpoint has the checkpoint's signature, None when the checkpoint
        #: gave none); ``base`` events of forgotten files before
        self.index: list[tuple[str, tuple | None, int]] = []
        self.base = 0
        #: files forgotten in this run (read to the end, then gone from the directory): name ->
        #: signature, None when unknown; the last FORGOTTEN_KEPT only, oldest first
        self.forgotten: dict[str, tuple[int, int, int] | None] = {}
        path = os.path.abspath(self.path)
        self.root = path if os.path.isdir(path) else os.path.dirname(path)  # (offsets name files in it)

    def _refresh(self) -> None:
        """Index the files that arrived since the last look (a stream that runs on). A name
        stands for one file for as long as the stream knows it: a known file that is now
        another (replaced, or gone and back as another file) is refused, and so is a file
        back under the name of one this run forgot with its size and modification time (its
        events would be read twice; another file under that name is new). A file stands under
        one name: a new name for a file the stream knows or forgot (renamed in the directory,
        hard-linked, moved back under another name: the same inode, size and modification
        time) is refused, its events would be read twice; an inode the file system gives again
        after a deletion is another file (its size or modification time differs)."""
        known = {f: signature for f, signature, _ in self.index}
        named = None  # (signature -> name of the files known or forgotten: built at the first new name)
        for f in _arrived(self.path, self.fmt):
            try:
                signature = _signature(f)
            except FileNotFoundError:  # (gone since the listing: as if not yet seen)
                continue
            if f in known:
                if known[f] is None:  # gone when the query restarted from a checkpoint without signatures, back
                    self._identify(f, signature)
                elif signature != known[f]:
                    raise _changed(f)
                continue
            if f in self.forgotten and (self.forgotten[f] is None or self.forgotten[f][1:] == signature[1:]):
                raise _back(f)
            if named is None:
                named = self._names_by_signature()
            if signature in named:
                raise _renamed(f, named[signature])
            self.forgotten.pop(f, None)  # (a new file under a reused name)
            self.index.append((f, signature, self._file_events(f, signature).num_rows))
            known[f], named[signature] = signature, f

    def _names_by_signature(self) -> dict[tuple, str]:
        """The files the stream knows or forgot, by signature (an indexed file gone when a
        restarted query took it from its checkpoint by the checkpoint's)."""
        named = {tuple(signature): f for f, signature in self.forgotten.items() if signature}
        named.update((tuple(signature), f) for f, signature, _ in self.index if signature)
        return named

    def _identify(self, f: str, signature: tuple) -> None:
        """Take the signature of ``f``, listed without one by a restarted query's checkpoint (of
        an earlier version) and gone when it restarted, now back: it must hold as many events as
        the checkpoint counted."""
        k = next(k for k, (g, _, _) in enumerate(self.index) if g == f)
        n = self.index[k][2]
        if self._file_events(f, signature).num_rows != n:
            raise _changed(f)
        self.index[k] = (f, signature, n)

    def _file_events(self, f: str, signature: tuple):
        """The events of the arrived file ``f``, its bad rows in its own reject file (none for a
        file without bad rows)."""
        options = _read_options(self.options, f)
        _, events, rejected = _load(f, self.fmt, options, signature)
        if not rejected and self.options.get("reject"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(json.loads(options)["reject"])
        return events

    def _events(self):
        return _load(self.path, self.fmt, _read_options(self.options), _stamp(self.path))[1]

    def _total(self) -> int:
        if not self.finite:
            self._refresh()
            return self.base + sum(n for _, _, n in self.index)
        return self._events().num_rows + 1

    def _offset(self, pos: int) -> dict:
        """An offset: the position, and for arriving files the files in their order with their
        event counts and signatures (:func:`_listing`: names in the directory), numbered from
        ``base``, so that a query restarted from its checkpoint numbers the positions as the run
        before did (a file moved in keeps an older modification time than files read before it)
        and knows a file replaced while it was stopped."""
        if self.finite:
            return {"pos": pos}
        return {"pos": pos, "base": self.base, "files": [_listing(f, signature, n) for f, signature, n in self.index]}

    def _seed(self, offset: dict) -> None:
        """Take the file order of ``offset`` (a restarted query's) before any file arrived since.
        A listed file must be the file the offset saw (:func:`_check_listed`); one that is gone
        is kept with its count and signature: only reading its events refuses it, and back in
        the directory it is taken only as the same file (as in a running query)."""
        files = offset.get("files")
        if files is None:
            return
        at = offset.get("base", 0)
        if not self.index:
            self.base = at
        known = {f: (signature, n) for f, signature, n in self.index}
        for entry in files:
            if isinstance(entry, str):  # (an absolute path without a count: a checkpoint of an earlier version)
                f, n, listed = entry, known.get(entry, (None, None))[1], None
            else:
                f, n, listed = os.path.join(self.root, entry[0]), entry[1], _listed_signature(entry)
            if f in known:
                if n is not None and at + n > self.base:
                    _check_listed(f, listed, known[f][0])
            else:
                try:
                    signature = _signature(f)
                except FileNotFoundError:  # (gone, also between a look and the next)
                    signature = None
                if n is None:
                    if signature is None:
                        raise _gone(f)
                    n = self._file_events(f, signature).num_rows
                if at + n > self.base:  # (not forgotten by this reader)
                    _check_listed(f, listed, signature)
                    self.index.append((f, signature or listed, n))
                    known[f] = (signature or listed, n)
            at += n

    def _forget(self, pos: int) -> None:
        """Drop from the index's front the files read to the end before ``pos`` that are gone
        from the directory; their events still count (``base``)."""
        while self.index and self.base + self.index[0][2] <= pos and not os.path.exists(self.index[0][0]):
            f, signature, n = self.index.pop(0)
            self.base += n
            self.forgotten.pop(f, None)
            self.forgotten[f] = tuple(signature) if signature else None
            if len(self.forgotten) > FORGOTTEN_KEPT:
                del self.forgotten[next(iter(self.forgotten))]

    def initialOffset(self) -> dict:
        return self._offset(0)

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.max_batch) if self.max_batch else ReadAllAvailable()

    def latestOffset(self, start: dict, limit) -> dict:
        self._seed(start)
        pos = start["pos"]
        end = self._total()
        if self.rate is not None:
            now = time.monotonic()
            end = min(end, pos + max(1, int(self.rate * (now - self._last_call))))
            self._last_call = now
        # Spark 4.3 passes ReadAllAvailable to Python sources whatever the trigger, so the
        # source's own maxEventsPerBatch is applied here too: it is what cuts micro-batches.
        cap = limit.max_rows if isinstance(limit, ReadMaxRows) else self.max_batch
        if cap:
            end = min(end, pos + cap)
        if end == pos:
            # Spark runs a micro-batch when the offset's JSON differs from the start's, even by
            # a listing alone (a file without events arrived, a checkpoint of an earlier version
            # listed no signatures): nothing to read, the start is the offset
            return start
        self._forget(pos)  # (the position changes anyway: forgetting adds no micro-batch)
        return self._offset(end)

    def reportLatestOffset(self):
        return self._offset(self._total())

    def partitions(self, start: dict, end: dict):
        if end["pos"] <= start["pos"]:
            return []
        if self.finite:
            return [_Partition(start["pos"], end["pos"])]
        self._seed(end)
        self._refresh()
        slices, at = [], self.base
        for f, signature, n in self.index:
            lo, hi = max(start["pos"], at), min(end["pos"], at + n)
            if lo < hi:
                if signature is None or not os.path.exists(f):  # (None: gone at the restart, not back)
                    raise _gone(f)
                slices.append((f, signature, n, lo - at, hi - at))
            at += n
        return [_Partition(start["pos"], end["pos"], slices)]

    def read(self, partition: _Partition):
        import pyarrow as pa

        if partition.slices is not None:
            for f, signature, n, lo, hi in partition.slices:
                if _current(f) != signature:  # (another file than the driver counted, before or while read)
                    raise _changed(f)
                events = self._file_events(f, signature)
                if events.num_rows != n or _current(f) != signature:
                    raise _changed(f)
                yield from _conform(events, self.target, f).slice(lo, hi - lo).to_batches()
            return
        events = self._events()
        n = events.num_rows
        if partition.start < n:
            yield from events.slice(partition.start, min(partition.end, n) - partition.start).to_batches()
        if self.finite and partition.end > n:
            from ..lang.model import TIME_UNITS_MS

            unit = TIME_UNITS_MS[self.options.get("time_unit") or "ms"]
            yield pa.RecordBatch.from_pylist([_end_row(events.schema, END_TS_MS // unit)], schema=events.schema)

    def commit(self, end: dict) -> None:
        pass


def _changed(file: str):
    from ..errors import InputError

    return InputError("changed after the stream read it; put complete files into the directory (write them "
                      "elsewhere on the same file system, then move them in)", file)


def _listing(file: str, signature: tuple | None, n: int) -> list:
    """A file as an offset lists it: its name in the directory, its event count and its
    signature (:func:`_signature`; left out when unknown, for a file an earlier version's
    checkpoint listed that was gone when the query restarted)."""
    return [os.path.basename(file), n] + ([list(signature)] if signature else [])


def _listed_signature(entry: list) -> tuple[int, int, int] | None:
    """The signature an offset's entry ``[name, count, signature]`` gives its file; None for an
    entry of an earlier version's checkpoint, ``[name, count]``."""
    return tuple(entry[2]) if len(entry) > 2 and entry[2] else None


def _check_listed(file: str, listed: tuple | None, now: tuple | None) -> None:
    """Refuse ``file`` when its signature ``now`` is not the one its checkpoint ``listed``: the
    file was replaced or changed while the query was stopped, so the checkpoint's positions do
    not count its events. As in a running query, a file that grew is refused too: a file's
    events are numbered in time order, so appended ones would move the positions read. Nothing
    to compare (an earlier version's checkpoint, or a file gone) passes: a gone file is checked
    when read, or when back."""
    if listed is not None and now is not None and tuple(now) != tuple(listed):
        raise _replaced(file, listed, now)


def _replaced(file: str, listed: tuple, now: tuple):
    """The one-line refusal of a file changed while the query was stopped, saying what changed."""
    from ..errors import InputError

    (ino0, size0, time0), (ino1, size1, time1) = listed, now
    changed = []
    if ino1 != ino0:
        changed.append(f"another file: inode {ino1}, was {ino0}")
    if size1 != size0:
        changed.append(f"size {size1} bytes, was {size0}")
    if time1 != time0:
        changed.append(f"modified {_when(time1)}, was {_when(time0)}")
    return InputError(f"changed while the query was stopped ({'; '.join(changed)}); the checkpoint counted the "
                      "events of the file it read: put new events into a new file under a new name (write it "
                      "elsewhere on the same file system, then move it in); if all its events were read, move it "
                      "out of the directory", file)


def _when(ns: int) -> str:
    """A modification time (ns since the epoch) as UTC, to the nanosecond."""
    import datetime

    at = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return f"{at:%Y-%m-%d %H:%M:%S}.{ns % 10**9:09d} UTC"


def _current(file: str) -> tuple[int, int, int]:
    """The signature of an indexed file as a worker reads it (refused naming it when gone)."""
    try:
        return _signature(file)
    except FileNotFoundError:
        raise _gone(file) from None


def _renamed(file: str, known: str):
    from ..errors import InputError

    return InputError(f"the file {known} under another name (renamed or hard-linked: the same inode, size and "
                      "modification time); its events would be read twice: move it out of the directory, or back "
                      "under its name if not all its events were read", file)


def _back(file: str):
    from ..errors import InputError

    return InputError("back under the name of a file the stream read to the end and saw gone; its events would "
                      "be read twice: give every new file a new name", file)


def _gone(file: str):
    from ..errors import InputError

    return InputError("gone before the stream read all its events (the checkpoint's positions need them); move or "
                      "delete a file only once it is read", file)


def _end_row(schema, ts: int) -> dict:
    """The end-of-stream event: type ``__end__``, id -1, no attributes."""
    from ..events import ID

    return {**dict.fromkeys(schema.names), ID: -1, "ts": ts, "type": END_TYPE}


class CepaggSource(DataSource):
    """``format("cepagg")``: options path, format, type_column, time_column, time_unit,
    input_time_unit, schema, constant_type, rate, maxEventsPerBatch, finite."""

    @classmethod
    def name(cls) -> str:
        return "cepagg"

    def schema(self):
        from .schema import spark_kind  # noqa: F401  (pyspark available here)

        options = {k.lower(): v for k, v in self.options.items()}
        if options.get("reject") and options.get("finite", "false").lower() != "true":
            # the files' bad rows are written by the stream's reads, one reject file per file
            # (:func:`reject_file`); this read of them all sets its own aside
            with tempfile.TemporaryDirectory() as tmp:
                options["reject"] = os.path.join(tmp, os.path.basename(options["reject"]))
                arrow_schema = _load(options["path"], options.get("format", ""), _read_options(options),
                                     _stamp(options["path"]))[0]
        else:
            arrow_schema = _load(options["path"], options.get("format", ""), _read_options(options),
                                 _stamp(options["path"]))[0]
        return _ddl(arrow_schema)

    def streamReader(self, schema):
        return CepaggStreamReader(dict(self.options), schema)


_READ_OPTIONS = ("type_column", "time_column", "time_unit", "input_time_unit", "schema", "constant_type", "timezone",
                 "reject")


def _read_options(options: dict, file: str | None = None) -> str:
    """The read options as a key of :func:`_load`; for the arrived ``file`` of a stream that
    runs on, the reject file is that file's own (:func:`reject_file`)."""
    chosen = {k: options[k] for k in _READ_OPTIONS if options.get(k)}
    if file is not None and "reject" in chosen:
        chosen["reject"] = reject_file(chosen["reject"], file)
    return json.dumps(chosen, sort_keys=True)


def reject_file(reject: str, file: str) -> str:
    """The reject file of the input ``file`` of a stream that runs on, given the stream's reject
    path ``reject``: ``R.csv`` and ``a.csv`` give ``R.a.csv.csv``, beside ``R.csv`` (the
    format is ``reject``'s, by its extension)."""
    root, ext = os.path.splitext(reject)
    return f"{root}.{os.path.basename(file)}{ext}"


def reject_files(path: str, fmt: str, reject: str) -> list[str]:
    """The reject files a stream that runs on over ``path`` wrote (:func:`reject_file`): those of
    the files that had bad rows, in the order the files arrived."""
    return [r for r in (reject_file(reject, f) for f in _arrived(path, fmt)) if os.path.exists(r)]


def _arrow_types(arrow_schema):
    """The schema with each column's type as Spark receives it (see :func:`_ddl`)."""
    import pyarrow as pa

    def kind(t):
        if pa.types.is_integer(t):
            return pa.int64()
        if pa.types.is_floating(t):
            return pa.float64()
        return pa.bool_() if pa.types.is_boolean(t) else pa.string()
    return pa.schema([pa.field(f.name, kind(f.type)) for f in arrow_schema])


def _ddl(arrow_schema) -> str:
    import pyarrow as pa

    from .schema import quoted

    names = {pa.int64(): "bigint", pa.float64(): "double", pa.bool_(): "boolean", pa.string(): "string"}
    return ", ".join(f"{quoted(f.name)} {names[f.type]}" for f in _arrow_types(arrow_schema))


def register(spark) -> None:
    """Make ``format("cepagg")`` available to ``spark`` (a SparkSession)."""
    spark.dataSource.register(CepaggSource)
