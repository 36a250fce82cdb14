"""Event files (CSV, JSON Lines, Parquet; CSV and JSON Lines also gzip, bzip2, xz or zstd compressed)
to :class:`EventBatch` objects, column-wise with pyarrow, whole or in chunks (results are written
by :mod:`cepagg.output`)."""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import json
import lzma
import os
import zoneinfo
from bisect import bisect_right
from collections import namedtuple
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.json as pjson
import pyarrow.parquet as pq

from .errors import InputError
from .events import ID, RESERVED, EventBatch
from .output import (
    COMPRESSION,
    EXTENSIONS,
    atomic_path,
    cell,
    json_safe,
    write_result,  # noqa: F401  (results were written by cepagg.io.write_result: kept there)
)
from .units import UNIT_NS

KINDS = ("int", "float", "str", "bool")
_ARROW = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
_KIND_OF = {t: k for k, t in _ARROW.items()}
_NUMBER_RE = {"int": r"^[+-]?\d+$", "float": r"(?i)^[+-]?((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|inf|infinity|nan)$"}
_OFFSET_RE = r"[T ]\d{1,2}(:\d{2}){0,2}(\.\d+)?\s*([Zz]|[+-]\d{2}(:?\d{2})?)$"
_I64 = 2**63 - 1
_BAD = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError)
#: bytes of input per chunk in :class:`EventChunks` (a chunk of stock ticks: about 200,000 events)
CHUNK_BYTES = 8 << 20


@dataclass
class ReadReport:
    """What :func:`read_events` read.

    Attributes:
        batch: the good events, sorted by (ts, _id).
        rows_read: data rows in the input, good and bad.
        rejected: bad rows written to the reject file (0 in "error" mode).
        reject_path: the reject file written (None in "error" mode).
        warnings: things a user should know that are not errors (an input without events).
    """

    batch: EventBatch
    rows_read: int
    rejected: int
    reject_path: str | None
    warnings: list[str] = field(default_factory=list)


class NotChunkable(Exception):
    """The input cannot be read chunk by chunk with the result of a whole read (it is not in time
    order, a column's kind changes, records span lines): read it whole instead."""


# A file's raw columns (unreadable records: null rows) with reading errors, records the table lacks and lines.
_Part = namedtuple("_Part", "source n table errors originals lines")
# A file to read: its path, format and compression (None: plain).
_File = namedtuple("_File", "path format compression")


@cache
def _known_zone(name: str) -> bool:
    """An IANA zone name (the list is read from disk once: it took 17 ms per call)."""
    return name in zoneinfo.available_timezones()


def parse_schema(text: str) -> dict[str, str]:
    """Parse declared kinds: ``"price:float, company:str"`` -> ``{"price": "float", ...}``.

    Raises:
        ValueError: an entry is not ``name:kind``, its kind is not int, float, str or bool, or a
            name is declared twice.
    """
    pairs = [(n.strip(), k.strip()) for n, _, k in (e.partition(":") for e in text.split(",") if e.strip())]
    for name, kind in (p for p in pairs if not p[0] or p[1] not in KINDS):
        raise ValueError(f"bad schema entry {name + ':' + kind!r}: expected name:kind with kind in "
                         f"{', '.join(KINDS)}")
    names = [n for n, _ in pairs]
    for name in (n for n in names if names.count(n) > 1):
        raise ValueError(f"schema declares {name!r} twice; give each attribute one kind")
    return dict(pairs)


def check_read_options(*, time_unit: str = "ms", input_time_unit: str | None = None, timezone: str = "UTC",
                       schema: Mapping[str, str] | None = None, on_bad_row: str = "error") -> None:
    """Raise ValueError naming the first bad option of :func:`read_events` (callers check before work)."""
    for what, unit in (("time unit", time_unit), ("input time unit", input_time_unit or time_unit)):
        if unit not in UNIT_NS:
            raise ValueError(f"unknown {what} {unit!r}: expected one of {', '.join(UNIT_NS)}")
    if not _known_zone(timezone):
        raise ValueError(f"unknown time zone {timezone!r}: expected an IANA zone such as UTC or Europe/Paris")
    for name, kind in (schema or {}).items():
        if kind not in KINDS:
            raise ValueError(f"schema: {name}:{kind}: expected a kind in {', '.join(KINDS)}")
    if on_bad_row not in ("error", "reject"):
        raise ValueError(f"on_bad_row={on_bad_row!r}: expected 'error' or 'reject'")


def read_events(path: str | Path | Sequence[str | Path], *, format: str | None = None,
                type_column: str = "type", time_column: str = "ts", time_unit: str = "ms",
                input_time_unit: str | None = None, timezone: str = "UTC",
                schema: Mapping[str, str] | None = None, constant_type: str | None = None,
                on_bad_row: str = "error", reject_path: str | Path | None = None) -> ReadReport:
    """Read events from files into an :class:`EventBatch` sorted by (ts, _id).

    Every row becomes an event or a bad row (an error, or a reject-file line), never dropped;
    rows read plus rows rejected are the records of the input, checked (an unterminated quote in
    a CSV is an error naming the line where the quoted field starts, not the silent end of the
    file). ``_id`` is a row's 0-based position among the data rows of all files, bad rows
    included. An attribute with a reserved name (``_id``, ``ts``, ``type``) gets ``_`` appended
    until the name is free (``ts`` read with ``time_column="time"`` becomes ``ts_``). Empty
    strings, JSON nulls and missing keys are nulls; nested JSON values are JSON text. Times
    convert exactly or not at all; a naive time in a DST overlap is the earlier instant, in a gap
    a bad row. Bad rows are numbered from 1: by line in CSV (header = 1) and JSON Lines, by row in
    Parquet. CSV and JSON Lines files may be compressed (``.gz``, ``.bz2``, ``.xz``, ``.zst``);
    ``.zip`` archives are refused.

    Args:
        path: a file, a directory (its files of the format by name, but ``_*`` and ``.*``) or a list.
        format: "csv", "jsonl" or "parquet"; None: from each file's extension.
        type_column: the column of event types (null or empty: bad row).
        time_column: the column of times: integers, ISO-8601 strings or Arrow timestamps.
        time_unit: unit of the output ``ts`` (:data:`cepagg.units.UNIT_NS`: ns, us, ms, s, min, h, d).
        input_time_unit: unit of integer times in the input (default: ``time_unit``).
        timezone: IANA zone of naive timestamps.
        schema: declared kinds (int, float, str, bool), as a mapping or as ``--schema`` text
            (``"price:float,company:str"``); else inferred (a column mostly of numbers is numeric,
            its other values bad values: docs/semantics.md §1).
        constant_type: the type of every event, for input without a column ``type_column`` (with
            one, an error: to keep such a column as an attribute, name another ``type_column``).
        on_bad_row: "error" raises InputError for the first bad row; "reject" writes the bad rows,
            every field and an ``_error`` column, to the reject file (its format by its extension,
            .csv or .jsonl; without one CSV for CSV input, else JSON Lines).
        reject_path: the reject file, always written in "reject" mode; default
            ``<dir>/_rejects.<ext>`` for a directory, ``<parent>/_<stem>.rejects.<ext>`` for a file.

    Raises:
        InputError: a bad row in "error" mode, or input that cannot be read at all.
        ValueError: a bad argument.
    """
    reader = _Reader(path, format=format, type_column=type_column, time_column=time_column, time_unit=time_unit,
                     input_time_unit=input_time_unit, timezone=timezone, schema=schema,
                     constant_type=constant_type, on_bad_row=on_bad_row, reject_path=reject_path)
    parts = []
    for f in reader.files:
        parts += (mine := list(_raw_parts(f, None)))
        reader.note_empty(f, sum(p.n for p in mine))
    table = reader.convert(parts)
    reader.finish()
    ts_np, batch = table.column("ts").to_numpy(), EventBatch(table, time_unit)
    return ReadReport(batch if bool(np.all(ts_np[1:] >= ts_np[:-1])) else batch.sorted(), reader.rows,
                      len(reader.rejects) if reader.written else 0, reader.written, reader.warnings)


class EventChunks:
    """The events of :func:`read_events`, in chunks of about ``chunk_bytes`` of input, each an
    :class:`EventBatch` sorted by (ts, _id), the chunks in time order: what an engine consumes
    batch by batch, so that reading holds one chunk at a time, not the file.

    The chunks hold exactly the events of :func:`read_events` with the same arguments (the same
    ``_id``, values and kinds) or iteration raises :class:`NotChunkable` (the input is not in time
    order, a column's inferred kind changes along the file, a CSV value holds a quote or a line
    break): the caller then reads the input whole. Bad rows raise at once ("error") or are
    collected and written to the reject file at the end of the iteration ("reject"); after it,
    ``rows_read``, ``rejected``, ``reject_path`` and ``warnings`` are those of the whole read. An
    instance is iterated once.

    Args:
        path: as :func:`read_events`, and every keyword of it.
        chunk_bytes: bytes of CSV or JSON Lines per chunk (Parquet: about ``chunk_bytes / 64`` rows).
    """

    def __init__(self, path: str | Path | Sequence[str | Path], *, chunk_bytes: int = CHUNK_BYTES, **options):
        self._reader = _Reader(path, **options)
        self.chunk_bytes = chunk_bytes
        self.time_unit = self._reader.time_unit
        self.rows_read = self.rejected = 0
        self.reject_path: str | None = None
        self.warnings: list[str] = []

    def __iter__(self) -> Iterator[EventBatch]:
        r = self._reader
        types = undecided = None  # the first chunk's Arrow type per attribute, and its empty columns
        before = []  # parts of bad rows alone, read before the kinds were learnt (their values count too)
        last = None  # the latest time so far
        for f in r.files:
            rows = r.rows
            for part in _raw_parts(f, self.chunk_bytes, chunked=True):
                if types is None:
                    table = r.convert([part])
                    if table.num_rows == 0:  # (a header alone, or only bad rows: nothing to learn kinds from)
                        before.append(part)
                        continue
                    types = {name: table.schema.field(out).type for name, out in r.out_names.items()}
                    undecided = {name for name, out in r.out_names.items()
                                 if name not in r.declared and table.column(out).null_count == table.num_rows}
                    columns, first_names = table.column_names, dict(r.out_names)
                    texts = {name: [0, 0] for name, t in types.items()  # (numbers, values) of inferred text columns
                             if t == pa.string() and name not in r.declared and name not in undecided}
                    for name in (n for n in types if n not in r.declared and before):  # (their values count too)
                        try:
                            text = pa.concat_arrays([pc.cast(p.table.column(name).combine_chunks(), pa.string())
                                                     for p in [*before, part] if name in p.table.column_names])
                        except _BAD:  # (lists, structs, bytes: of a kind no value changes)
                            continue
                        if _attribute(text, None)[0].type not in (types[name], pa.null()):
                            raise NotChunkable(f"{part.source}: column {name!r} reads as another kind with the values "
                                               "of the bad rows before it")
                else:
                    if extra := sorted(r.attributes(part) - types.keys()):
                        raise NotChunkable(f"{part.source}: column {extra[0]!r} is not in the first rows")
                    declared = {c: _KIND_OF[t] for c, t in types.items() if t in _KIND_OF and c not in undecided}
                    table = r.convert([part], {**declared, **r.declared}, types)
                    for name, out in r.out_names.items():
                        if name in undecided and table.column(out).null_count < table.num_rows:
                            raise NotChunkable(f"{part.source}: column {name!r} is empty in the first rows only")
                    for name, out in first_names.items():  # (JSON Lines: keys no record of the chunk has)
                        if out not in table.column_names:
                            table = table.append_column(out, pa.nulls(table.num_rows, types[name]))
                    table = table.select(columns)
                for earlier in [*before, part]:  # (a whole read's kind may be numeric)
                    for name in (n for n in texts if n in earlier.table.column_names):
                        texts[name] = [a + b for a, b in zip(texts[name], _number_count(earlier.table.column(name)))]
                        if _mostly_numbers(*texts[name]):
                            raise NotChunkable(f"{part.source}: column {name!r} is mostly numbers, text in the first "
                                               "rows")
                before = []
                if table.num_rows == 0:
                    continue
                ts = table.column("ts")
                low, high = (s.as_py() for s in pc.min_max(ts).values())
                if last is not None and low < last:
                    raise NotChunkable(f"{part.source}: not in time order (time {low} after {last})")
                last = high
                batch = EventBatch(table, self.time_unit)
                ts_np = ts.to_numpy()
                yield batch if bool(np.all(ts_np[1:] >= ts_np[:-1])) else batch.sorted()
            r.note_empty(f, r.rows - rows)
        r.finish()
        self.rows_read, self.rejected, self.reject_path = r.rows, len(r.rejects) if r.written else 0, r.written
        self.warnings = r.warnings


class _Reader:
    """The conversion of raw parts to events, shared by a whole read and a chunked one: options
    checked, files resolved, ``_id`` counted across parts, bad rows raised or collected."""

    def __init__(self, path, *, format=None, type_column="type", time_column="ts", time_unit="ms",
                 input_time_unit=None, timezone="UTC", schema=None, constant_type=None, on_bad_row="error",
                 reject_path=None):
        if isinstance(schema, str):  # ("price:float,company:str", as --schema takes it)
            schema = parse_schema(schema)
        check_read_options(time_unit=time_unit, input_time_unit=input_time_unit, timezone=timezone, schema=schema,
                           on_bad_row=on_bad_row)
        self.path, self.type_column, self.time_column, self.time_unit = path, type_column, time_column, time_unit
        self.in_unit, self.zone = input_time_unit or time_unit, zoneinfo.ZoneInfo(timezone)
        self.declared, self.constant_type, self.on_bad_row = dict(schema or {}), constant_type, on_bad_row
        self.files = list(_resolve(path, format))
        self.reject_format = _reject_format(reject_path, self.files) if on_bad_row == "reject" else None
        self.reject_path = reject_path
        self.rows, self.rejects, self.header, self.written, self.warnings = 0, [], {}, None, []

    def convert(self, parts: list[_Part], declared: Mapping[str, str] | None = None,
                types: Mapping[str, pa.DataType] | None = None) -> pa.Table:
        """The good events of ``parts`` (``_id`` counted on from earlier calls); bad rows raised or
        kept for the reject file. ``types``: the first chunk's Arrow types, which a later chunk
        keeps (``declared`` holds their kinds) or raises :class:`NotChunkable`, as it does when a
        value does not fit a kind that was inferred, not declared by the caller."""
        declared = self.declared if declared is None else declared
        for p in parts:
            self.header.update(dict.fromkeys(p.table.column_names))
        used = {self.time_column} if self.constant_type is not None else {self.time_column, self.type_column}
        for p in (p for p in parts if p.table.num_columns and not used <= set(p.table.column_names)):
            missing = min(used - set(p.table.column_names))
            raise InputError(f"no column {missing!r} (columns: {', '.join(p.table.column_names)})" + (
                "; for input of one event type, give it with constant_type (--constant-type)"
                if missing == self.type_column else ""), p.source)
        for p in (p for p in parts if self.constant_type is not None and self.type_column in p.table.column_names):
            raise InputError(f"column {self.type_column!r} holds the events' types, and constant_type "
                             f"(--constant-type) gives every event the type {self.constant_type!r}: give one of "
                             f"them (to read the column as an attribute, name a type column the input lacks, "
                             f"such as --type-column none)", p.source)
        offsets, total, cols = np.cumsum([0] + [p.n for p in parts])[:-1].tolist(), sum(p.n for p in parts), {}
        for name in dict.fromkeys(n for p in parts for n in p.table.column_names):
            arrays = [p.table.column(name).combine_chunks() if name in p.table.column_names else pa.nulls(p.n)
                      for p in parts]
            kinds = {a.type for a in arrays} - {pa.null()}  # files disagreeing on a type meet as strings
            target = kinds.pop() if len(kinds) == 1 else pa.string()
            cols[name] = pa.concat_arrays([pc.cast(a, target) for a in arrays])
        ts, problems = _times(cols.pop(self.time_column, pa.nulls(total)), self.time_column, self.in_unit,
                              self.time_unit, self.zone)
        errors = {i: [msg] for i, msg in problems.items()}  # unreadable rows are among them: their time is null
        types_col = pc.cast(cols.pop(self.type_column, pa.nulls(total)), pa.string()) if self.constant_type is None \
            else pa.array([self.constant_type] * total, pa.string())
        for i in np.flatnonzero(np.asarray(pc.fill_null(pc.equal(pc.utf8_trim_whitespace(types_col), ""), True))):
            errors.setdefault(int(i), []).append(f"type column {self.type_column!r} is empty")
        if missing := sorted(self.declared.keys() - cols.keys()):
            raise InputError(f"schema declares {missing}, not attribute columns of the input",
                             parts[0].source if parts else str(self.files[0].path))
        table = {ID: pa.array(np.arange(self.rows, self.rows + total, dtype=np.int64)), "ts": ts, "type": types_col}
        taken, self.out_names = set(cols) - set(RESERVED), {}
        for name, arr in cols.items():
            out = name
            while out in RESERVED or (out != name and out in taken):
                out += "_"
            taken.add(out)
            self.out_names[name] = out
            table[out], bad = _attribute(arr, declared.get(name))
            if types and name in types and table[out].type != types[name]:
                if table[out].null_count < len(table[out]):
                    raise NotChunkable(f"column {name!r} reads as {types[name]} in the first rows, later as "
                                       f"{table[out].type}")
                table[out] = pa.nulls(len(table[out]), types[name])
            if bad and types is not None and name not in self.declared:
                raise NotChunkable(f"{parts[0].source}: column {name!r} changes kind along the input")
            for i in bad:
                errors.setdefault(i, []).append(_bad_value(name, arr[i].as_py(), declared.get(name)))
            if pa.types.is_floating(table[out].type):  # NaN and infinities: no engine adds or orders them exactly
                for i in np.flatnonzero(np.asarray(pc.fill_null(pc.invert(pc.is_finite(table[out])), False))):
                    errors.setdefault(int(i), []).append(f"column {name!r}: {table[out][i].as_py()!r} is not a "
                                                         "finite number (leave a missing value empty)")

        def problem(i: int) -> tuple[InputError, Any]:
            k = bisect_right(offsets, i) - 1  # the last part starting at or before i is not empty
            part, j = parts[k], i - offsets[k]
            why = part.errors.get(j) or "; ".join(errors[i])  # a reading error is the only message
            error = InputError(why, part.source, part.lines()[j] if part.lines else j + 1)
            return error, part.originals[j] if j in part.originals else part.table.slice(j, 1).to_pylist()[0]

        if self.on_bad_row == "error" and errors:
            raise problem(min(errors))[0]
        self.rejects += [problem(i) for i in sorted(errors)]
        self.rows += total
        result = pa.table(table)
        return result.filter(pa.array(~np.isin(np.arange(total), list(errors)))) if errors else result

    def attributes(self, part: _Part) -> set[str]:
        """The input columns of a part that become attributes."""
        return set(part.table.column_names) - {self.time_column} - (
            {self.type_column} if self.constant_type is None else set())

    def note_empty(self, f: _File, rows: int) -> None:
        """A warning for a file without rows (not an error: a run over it reports 0 events)."""
        if rows == 0:
            self.warnings.append(f"{f.path}: no events" + (" (0 bytes)" if _empty(str(f.path)) else ""))

    def finish(self) -> None:
        """Write the reject file ("reject" mode), atomically."""
        if self.on_bad_row != "reject":
            return
        first = Path(self.path[0] if isinstance(self.path, (list, tuple)) else self.path)
        fmt = self.reject_format
        self.written = str(self.reject_path or (first / f"_rejects.{fmt}" if first.is_dir()
                                                else first.parent / f"_{first.stem}.rejects.{fmt}"))
        _write_rejects(self.written, fmt, list(self.header), self.rejects)


def _empty(source: str) -> bool:
    try:
        return os.path.getsize(source) == 0
    except OSError:
        return False


def _reject_format(reject_path: str | Path | None, files: list[_File]) -> str:
    """The reject file's format: by its extension, else CSV for CSV input and JSON Lines otherwise."""
    ext = EXTENSIONS.get(Path(reject_path).suffix.lower()) if reject_path is not None else None
    if ext == "parquet":
        raise ValueError(f"reject file {str(reject_path)!r}: reject files are CSV or JSON Lines (.csv, .jsonl)")
    return ext or ("csv" if all(f.format == "csv" for f in files) else "jsonl")


def _write_rejects(path: str, fmt: str, header: list[str], rows: list[tuple[InputError, Any]]) -> None:
    """Bad rows with every field they had and their error, valid CSV or JSON Lines (no bare NaN)."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        if fmt == "csv":
            extra = any(not isinstance(r, dict) or r.keys() - set(header) for _, r in rows)
            w = csv.writer(f)
            w.writerow([*header, "_error"] + (["_raw"] if extra else []))
            for e, r in rows:
                r = r if isinstance(r, dict) else {"_raw": r}
                more = {k: v for k, v in r.items() if k not in header}
                w.writerow([cell(r.get(c), True) for c in header] + [str(e)] + (
                    [_raw_text(more.pop("_raw", None), more)] if extra else []))
        else:
            for e, r in rows:
                r = r if isinstance(r, dict) else {"_raw": r}
                f.write(json.dumps({**{k: json_safe(v) for k, v in r.items()}, "_error": str(e)},
                                   ensure_ascii=False, allow_nan=False) + "\n")


def _raw_text(raw: Any, more: Mapping[str, Any]) -> str:
    """The fields of a bad row that have no column: its raw text, or its extra fields as JSON."""
    if raw is not None:
        return str(raw)
    return json.dumps({k: json_safe(v) for k, v in more.items()}, ensure_ascii=False, allow_nan=False) \
        if more else ""


def input_files(path: str | Path | Sequence[str | Path], format: str | None = None) -> list[Path]:
    """The files :func:`read_events` would read (for checking outputs against them)."""
    return [f.path for f in _resolve(path, format)]


def _resolve(path: Any, format: str | None) -> Iterator[_File]:
    """The files to read, in order, with their formats and compressions."""
    if format not in (None, "csv", "jsonl", "parquet"):
        raise ValueError(f"format must be csv, jsonl or parquet, not {format!r}")
    for p in map(Path, path if isinstance(path, (list, tuple)) else [path]):
        if not p.exists():
            raise InputError("no such file or directory", str(p))
        kids = sorted(c for c in p.iterdir() if c.is_file() and not c.name.startswith((".", "_"))) \
            if p.is_dir() else [p]
        found = []
        for c in kids:
            named, compression = _named_format(c)
            f = format or named
            if f and (p.is_file() or named == f):
                if compression == "zip":
                    raise InputError("a zip archive: unzip it, or compress the file with gzip, bzip2, xz or zstd",
                                     str(c))
                if compression and f == "parquet":
                    raise InputError("a compressed Parquet file: Parquet compresses its own pages; decompress it",
                                     str(c))
                if compression == "zstd" and not pa.Codec.is_available("zstd"):
                    raise InputError("zstd is not available in this pyarrow; decompress the file", str(c))
                found.append(_File(c, f, compression))
        if not found:
            raise InputError("no file of a known format: .csv, .jsonl or .parquet (CSV and JSON Lines also "
                             ".gz, .bz2, .xz or .zst), or name the format", str(p))
        yield from found


def _named_format(path: Path) -> tuple[str | None, str | None]:
    """The format and compression a file's name says: ``e.csv.gz`` -> ("csv", "gzip")."""
    compression = COMPRESSION.get(path.suffix.lower())
    inner = Path(path.stem).suffix.lower() if compression else path.suffix.lower()
    return EXTENSIONS.get(inner), compression


def _open(f: _File):
    """The file's bytes, decompressed."""
    if f.compression == "zstd":
        return pa.input_stream(str(f.path), compression="zstd")
    return {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(f.compression, open)(f.path, "rb")


def _raw_parts(f: _File, chunk_bytes: int | None, chunked: bool = False) -> Iterator[_Part]:
    """A file's raw columns: whole (``chunk_bytes`` None) or in parts of about ``chunk_bytes``.
    ``chunked``: a CSV value holding a quote or a line break raises :class:`NotChunkable` (the
    cut between parts is only known to be right without them)."""
    src = str(f.path)
    if f.format == "parquet":
        try:
            if chunk_bytes is None:
                table = pq.read_table(f.path)
                yield _Part(src, table.num_rows, table, {}, {}, None)
                return
            start = 0
            for rb in pq.ParquetFile(f.path).iter_batches(batch_size=max(1, chunk_bytes // 64)):
                table = pa.Table.from_batches([rb])
                yield _Part(src, table.num_rows, table, {}, {}, (lambda s, n: lambda: range(s + 1, s + n + 1))(
                    start, table.num_rows))
                start += table.num_rows
        except (pa.ArrowInvalid, OSError) as e:
            raise InputError(f"unreadable Parquet: {e}", src) from e
        return
    try:
        if chunk_bytes is None:  # pyarrow reads the file (not a copy of its bytes held here)
            yield _csv_whole(f) if f.format == "csv" else _jsonl_part(src, f, 0)
            return
        with _open(f) as stream:
            yield from (_csv_parts if f.format == "csv" else _jsonl_parts)(src, stream, chunk_bytes, chunked)
    except (OSError, EOFError, lzma.LZMAError) as e:  # a damaged compressed file
        raise InputError(f"unreadable {f.compression or f.format} data: {e}", src) from e


def _whole(f: _File):
    """What pyarrow reads a whole file from: its path, or a stream of its decompressed bytes."""
    if f.compression is None:
        return str(f.path)
    stream = _open(f)
    return stream if isinstance(stream, pa.NativeFile) else pa.PythonFile(stream, mode="r")


def _contents(data: bytes | _File) -> bytes:
    """A block's bytes, or a file's, decompressed."""
    if isinstance(data, bytes):
        return data
    with _open(data) as stream:
        return stream.read()


def _blocks(stream, chunk_bytes: int, quotes: bool) -> Iterator[bytes]:
    """The stream's bytes in blocks of about ``chunk_bytes`` that end at the end of a line
    (outside double quotes, for CSV)."""
    rest = b""
    while True:
        data = stream.read(chunk_bytes)
        if not data:
            if rest:
                yield rest
            return
        buf = rest + data
        cut = _line_end(buf, quotes, last=True)
        buf, rest = (buf[:cut], buf[cut:]) if cut else (b"", buf)
        if buf:
            yield buf


def _line_end(buf: bytes, quotes: bool, last: bool) -> int:
    """The position after the last (or first) line break of ``buf`` outside double quotes (0: none);
    doubled quotes inside quoted fields keep the count even."""
    if not quotes or b'"' not in buf:
        return buf.rfind(b"\n") + 1 if last else buf.find(b"\n") + 1
    a = np.frombuffer(buf, np.uint8)
    inside = np.cumsum(a == 34, dtype=np.uint8) & 1  # (wraps at 256: the parity is all that counts)
    ends = np.flatnonzero((a == 10) & (inside == 0))
    return int(ends[-1 if last else 0]) + 1 if len(ends) else 0


def _header(src: str, head: bytes) -> list[str]:
    """The column names of a CSV file's first record."""
    try:
        header = next(csv.reader(io.StringIO(head.removeprefix(codecs.BOM_UTF8).decode("utf-8"), newline="")), [])
    except (UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"unreadable CSV header: {e}", src, 1) from e
    if len(set(header)) < len(header):
        raise InputError(f"duplicate column names in header {header}", src, 1)
    return header


def _csv_whole(f: _File) -> _Part:
    """A whole CSV file as strings, by pyarrow."""
    head, alone = b"", False  # alone: the header is all the file holds, without a line break
    with _open(f) as stream:  # the header: the first record
        while not (end := _line_end(head, True, last=False)):
            more = stream.read(1 << 16)
            if not more:
                end, alone = len(head), True
                break
            head += more
    header = _header(str(f.path), head[:end])
    if alone or not header:  # (pyarrow finds no line to count the columns by)
        return _Part(str(f.path), 0, pa.table({h: pa.array([], pa.string()) for h in header}), {}, {}, None)
    return _csv_part(str(f.path), header, f, 0, False)


def _csv_parts(src: str, stream, chunk_bytes: int, chunked: bool) -> Iterator[_Part]:
    """Every column as strings, by pyarrow, a part per block; the header is read from the first."""
    header = head = None
    line = 1  # the file line where the next block starts
    for block in _blocks(stream, chunk_bytes, True):
        body = block
        if header is None:
            block = block.removeprefix(codecs.BOM_UTF8)
            end = _line_end(block, True, last=False) or len(block)
            head, body = block[:end], block[end:]
            header = _header(src, head)
            line = 1 + head.count(b"\n")
            if not head.endswith(b"\n"):
                head += b"\n"
            if not header:
                break
        part = _csv_part(src, header, head + body, line - head.count(b"\n") - 1, chunked)
        line += body.count(b"\n")
        yield part
    if header is None or not header:
        yield _Part(src, 0, pa.table({}), {}, {}, None)


def _csv_part(src: str, header: list[str], data: bytes | _File, shift: int, chunked: bool) -> _Part:
    """One block (the header, then records) or a whole file, as strings; ``shift`` added to a
    block's line number gives the file's. Records with a wrong field count become null rows."""
    errors, originals, invalid, spans = {}, {}, [], []

    @cache
    def numbered() -> list[int]:  # a row per non-empty line, unless records span lines: then ask csv
        text = _contents(data).decode("utf-8", "replace")
        lines = [k + shift for k, t in enumerate(text.split("\n"), 1) if t.strip("\r")][1:]
        if len(lines) == len(table) and not spans:  # (a quote left open on the last line spans no line count)
            return lines
        for strict in (True, False):  # strict: an unterminated quote is an error (else the file's end closes it)
            reader, starts, prev = csv.reader(io.StringIO(text, newline=""), strict=strict), [], 0
            try:
                for fields in reader:
                    starts += [prev + 1 + shift] if fields else []
                    prev = reader.line_num
                break
            except csv.Error as e:
                if "unexpected end of data" in str(e):
                    raise InputError("a quoted field starting on this line is not closed before the end of the "
                                     "file (an unterminated \")", src, prev + 1 + shift) from None
        if len(starts) - 1 != len(table):
            raise InputError(f"{len(table)} records read, but the file holds {len(starts) - 1}", src)
        return starts[1:]

    def read(threads: bool) -> pa.Table:  # with threads, pyarrow does not number the invalid rows
        parse = pcsv.ParseOptions(newlines_in_values=True, invalid_row_handler=lambda r: invalid.append(r) or "skip")
        return pcsv.read_csv(io.BytesIO(data) if isinstance(data, bytes) else _whole(data),
                             read_options=pcsv.ReadOptions(use_threads=threads),
                             parse_options=parse, convert_options=pcsv.ConvertOptions(
                                 column_types=dict.fromkeys(header, pa.string()), strings_can_be_null=False))
    try:
        # threads pay off on large blocks; on small ones their start-up costs more than the parse
        table = read((len(data) if isinstance(data, bytes) else os.path.getsize(data.path)) > 1 << 22)
        if invalid:  # read again serially, to learn where the invalid records are, and put null rows there
            invalid.clear()
            table = read(False)
            for r in invalid:
                errors[r.number - 2] = f"expected {len(header)} fields, found {r.actual_columns}: {r.text!r}"
                originals[r.number - 2] = dict(zip(header, fields := next(csv.reader([r.text]), [])))
                if len(fields) > len(header):
                    originals[r.number - 2]["_raw"] = r.text
            rows = np.full(len(table) + len(errors), -1)
            rows[np.setdiff1d(np.arange(len(rows)), list(errors))] = np.arange(len(table))
            table = table.take(pa.array(rows, mask=rows < 0))
    except (pa.ArrowInvalid, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"unreadable CSV: {e}", src) from e
    marks = ["\n", '"'] if chunked else ["\n"]
    spans = [c for c in table.columns for m in marks if pc.any(pc.match_substring(c, m)).as_py()]
    if spans and chunked:
        raise NotChunkable(f"{src}: a value holds a quote or a line break")
    if spans:  # records span lines: count them with the csv module, which names an unterminated quote
        numbered()
    return _Part(src, table.num_rows, table, errors, originals, numbered)


def _jsonl_parts(src: str, stream, chunk_bytes: int | None, chunked: bool) -> Iterator[_Part]:
    """A part per block of lines."""
    line = 1
    for block in _blocks(stream, chunk_bytes, False):
        yield _jsonl_part(src, block, line - 1)
        line += block.count(b"\n")


def _jsonl_part(src: str, data: bytes | _File, shift: int) -> _Part:
    """A block of lines, or a whole file: typed columns by pyarrow; row by row on bad JSON, type
    conflicts, nesting, huge integers or a count of records that is not the count of lines."""
    errors, originals = {}, {}
    lines = cache(lambda: [(no + shift, t) for no, t in enumerate(
        _contents(data).decode("utf-8", "replace").split("\n"), 1) if t.strip()])  # (number, text), not blank
    source = (lambda: io.BytesIO(data)) if isinstance(data, bytes) else (lambda: _whole(data))
    try:
        table = pjson.read_json(source()) if _line_breaks(data)[1] else pa.table({})
        stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
        if stamps:  # Arrow infers timestamps, dropping offsets: read those columns as text
            table = pjson.read_json(source(), parse_options=pjson.ParseOptions(
                explicit_schema=pa.schema([(n, pa.string()) for n in stamps]), unexpected_field_behavior="infer"))
        n = None if any(pa.types.is_nested(c.type) or pa.types.is_timestamp(c.type) or pa.types.is_floating(
            c.type) and pc.any(pc.and_(pc.greater_equal(pc.abs(c), 2.0**53), pc.equal(c, pc.floor(c)))).as_py()
            for c in table.columns) else table.num_rows  # (integers that Arrow made inexact doubles)
        if n is not None and n != _line_breaks(data)[0] and n != len(lines()):  # (lines(): when some are blank)
            n = None
    except _BAD:
        n = None
    if n is None:
        records = []
        for k, (_, line) in enumerate(lines()):
            try:
                originals[k] = obj = json.loads(line, object_pairs_hook=_unique_keys)
                if not isinstance(obj, dict):
                    raise ValueError(f"not a JSON object but a {type(obj).__name__}")
            except ValueError as e:
                errors[k], originals[k], obj = f"bad JSON: {e}", originals.get(k, line.rstrip("\r")), {}
            records.append(obj)
        n, table = len(records), pa.table({c: _py_column([r.get(c) for r in records])
                                           for c in dict.fromkeys(c for r in records for c in r)})
    return _Part(src, n, table, errors, originals, cache(lambda: [no for no, _ in lines()]))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (json keeps the last of repeated keys silently)."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        raise ValueError(f"key {next(k for k, _ in pairs if sum(1 for j, _ in pairs if j == k) > 1)!r} appears "
                         "twice in the record")
    return obj


def _line_breaks(data: bytes | _File) -> tuple[int, bool]:
    """The number of lines of a block or a file (the last may lack its line break), and whether
    it holds anything but white space; a file is read in blocks, not held."""
    if isinstance(data, bytes):
        return data.count(b"\n") + (not data.endswith(b"\n") and bool(data)), bool(data.strip())
    count, text, last = 0, False, b"\n"
    with _open(data) as stream:
        while block := stream.read(1 << 20):
            count, text, last = count + block.count(b"\n"), text or bool(block.strip()), block[-1:]
    return count + (last != b"\n"), text


def _py_column(values: list[Any]) -> pa.Array:
    """JSON values as an Arrow column: typed if their types agree (ints and floats: float), else text."""
    kinds = {type(v) for v in values} - {type(None)}
    if kinds in ({bool}, {str}) or kinds <= {int, float} and all(abs(v) <= _I64 for v in values if type(v) is int):
        return pa.array(values)
    return pa.array([v if v is None or type(v) is str else str(v) if type(v) in (int, float) else json.dumps(v)
                     for v in values], pa.string())


def _cast_locate(arr: pa.Array, typ: pa.DataType, convert: Any = pc.cast) -> tuple[pa.Array, list[int]]:
    """Convert; on failure find by bisection the elements that do not convert (they become null)."""
    try:
        return convert(arr, typ), []
    except _BAD:
        if len(arr) <= 1:
            return pa.nulls(len(arr), typ), list(range(len(arr)))
        mid = len(arr) // 2
        (left, lb), (right, rb) = (_cast_locate(arr.slice(a, b), typ, convert) for a, b in ((0, mid), (mid, None)))
        return pa.concat_arrays([left, right]), lb + [mid + i for i in rb]


def _plain(s: pa.Array, kind: str) -> pa.Array | None:
    """Strings cast at once if every value is plain: digits after an optional ``-`` (and, for
    floats, at most one ``.``), no space, no null. None otherwise, and the regular expressions of
    :func:`_parse` decide row by row. The common case costs a few cheap kernels instead of trimming
    and two regular expressions (31 of the 46 ms a 50,000-row CSV took); the values are the
    same, cast by the same function."""
    if s.null_count:
        return None
    digits = pc.utf8_ltrim(s, "-")
    if kind == "float":
        digits = pc.replace_substring(digits, ".", "", max_replacements=1)
    if not pc.all(pc.ascii_is_decimal(digits)).as_py():
        return None
    try:
        return pc.cast(s, _ARROW[kind])
    except _BAD:  # out of range, or a form like "--5": the slow path finds and names it
        return None


def _parse(s: pa.Array, kind: str) -> tuple[pa.Array, list[int]]:
    """Trimmed strings (null for empty) as int or float, and the indices of those that are not."""
    ok = pc.match_substring_regex(s, _NUMBER_RE[kind])
    bad = np.flatnonzero(np.asarray(pc.invert(pc.fill_null(ok, True)))).tolist()
    if kind == "int" and pc.any(pc.starts_with(s, "+")).as_py():
        s = pc.replace_substring_regex(s, r"^\+", "")
    col, more = _cast_locate(pc.if_else(ok, s, None) if bad else s, _ARROW[kind])
    return col, sorted(set(bad + more))


def _number_kinds(kind: str | None) -> list[str]:
    """The number kinds to try for a declared kind, in order (None: infer, int before float)."""
    return [kind] if kind in ("int", "float") else ["int", "float"] if kind is None else []


def _attribute(arr: pa.Array, kind: str | None) -> tuple[pa.Array, list[int]]:
    """An attribute column in its declared (or inferred) kind, and the indices of bad values."""
    natural = {pa.int64(): "int", pa.float64(): "float", pa.bool_(): "bool"}.get(arr.type)
    if kind in ("int", "float") and natural in ("int", "float"):  # floats with a fraction do not cast
        return _cast_locate(arr, _ARROW[kind])
    if kind in (None, natural) and (natural or arr.type not in (pa.string(), pa.null())):
        return arr, []
    text = pc.cast(arr, pa.string())  # other conversions, and null columns, go through text
    for k in _number_kinds(kind) if len(text) else []:
        if (plain := _plain(text, k)) is not None:
            return plain, []
        if k == "int" and not text.null_count and pc.all(pc.ascii_is_decimal(pc.utf8_ltrim(text, "-"))).as_py():
            break  # plain integers beyond 64 bits: the slow path names them (read as floats, they were rounded)
    s = pc.utf8_trim_whitespace(text)
    s = pc.if_else(pc.equal(s, ""), None, s)
    kind = kind or (None if s.null_count < len(s) else "str")
    numbers = None  # (inferring: which values read as numbers)
    for k in _number_kinds(kind):
        match = None if kind else pc.match_substring_regex(s, _NUMBER_RE[k])
        numbers = match if k == "float" else numbers
        if kind or pc.all(match).as_py():
            col, bad = _parse(s, k)
            if kind or not bad or k == "int":  # (an integer beyond 64 bits: a bad value, never rounded to a float)
                return col, bad
    if numbers is not None and _mostly_numbers(pc.sum(pc.cast(numbers, pa.int64())).as_py() or 0,
                                               len(s) - s.null_count):  # the other values are bad values
        ints = pc.fill_null(pc.match_substring_regex(s, _NUMBER_RE["int"]), False)
        return _parse(s, "int" if pc.all(pc.equal(pc.fill_null(numbers, False), ints)).as_py() else "float")
    low = pc.utf8_lower(s)
    bad = pc.and_(pc.is_valid(low), pc.invert(pc.is_in(low, pa.array(["true", "false"]))))
    if kind == "bool" or kind is None and not pc.any(bad).as_py():
        return pc.if_else(bad, None, pc.equal(low, "true")), np.flatnonzero(np.asarray(bad)).tolist()
    return pc.if_else(pc.equal(text, ""), None, text), []


#: the first characters of a value that may read as a number or be blank (non-ASCII ones too: Unicode spaces)
_NUMBER_STARTS = pa.array(list("0123456789+-.iInN \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"))


def _number_count(arr: pa.Array) -> tuple[int, int]:
    """How many values of a column read as numbers, and how many are not empty (as
    :func:`_attribute` trims them). Only values whose first character may start a number or
    a blank are tested: the regular expression over every value of a text column cost more
    than the rest of reading it."""
    s = pc.cast(arr, pa.string())
    first = pc.utf8_slice_codeunits(s, 0, 1)
    some = s.filter(pc.fill_null(pc.or_(pc.is_in(first, value_set=_NUMBER_STARTS),
                                        pc.invert(pc.string_is_ascii(first))), False))
    some = pc.utf8_trim_whitespace(some)
    count = lambda mask: pc.sum(pc.cast(mask, pa.int64())).as_py() or 0  # noqa: E731
    numbers = count(pc.match_substring_regex(some, _NUMBER_RE["float"]))
    return numbers, len(s) - s.null_count - count(pc.equal(s, "")) - count(pc.equal(some, ""))


def _mostly_numbers(numbers: int, values: int) -> bool:
    """The rule that makes an undeclared column numeric: more than half of its values are numbers
    (the others are then bad values, not a reason to compare the numbers as text)."""
    return 2 * numbers > values


def _bad_value(name: str, value: Any, declared: str | None) -> str:
    """Why a value of an attribute column is bad: not of the declared kind, or, in an inferred
    numeric column, not a number or an integer beyond 64 bits."""
    if declared:
        return f"column {name!r}: {value!r} is not a valid {declared}"
    if isinstance(value, str) and pc.match_substring_regex(pa.array([value.strip()]), _NUMBER_RE["int"])[0].as_py():
        return (f"column {name!r}: {value!r} is not a valid 64-bit integer: declare the column float "
                f"(--schema {name}:float) to read it rounded")
    return f"column {name!r}: {value!r} is not a number, as most values of the column are (leave a missing " \
           f"value empty, or declare the column text with --schema {name}:str)"


def _times(arr: pa.Array, name: str, in_unit: str, unit: str, zone: zoneinfo.ZoneInfo) -> tuple[pa.Array, dict]:
    """Times as int64 counts of ``unit`` since the epoch (null where bad), a message per bad row."""
    if not (pa.types.is_timestamp(arr.type) or pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        arr = pc.cast(arr, pa.string())  # dictionary, large or null strings, dates, booleans...
    n, t = len(arr), arr.type
    groups = []  # (rows, their int64 values, null where they do not parse, and unit)
    if pa.types.is_string(t) and (plain := _plain(arr, "int")) is not None:
        groups.append((np.ones(n, bool), plain, in_unit))
    elif pa.types.is_string(t):
        s = pc.utf8_trim_whitespace(arr)
        is_int, iso, off = (np.asarray(pc.fill_null(pc.match_substring_regex(s, r), False))
                            for r in (_NUMBER_RE["int"], r"^\d{4}-\d\d-\d\d", _OFFSET_RE))
        groups.append((is_int, _parse(s.filter(is_int), "int")[0], in_unit))
        for mask, typ in ((iso & off, pa.timestamp("ns", "UTC")), (iso & ~off, pa.timestamp("ns"))):
            vals = _cast_locate(s.filter(mask), typ)[0]
            groups.append((mask, pc.cast(vals, pa.int64()) if typ.tz else _localize(vals, zone), "ns"))
    else:  # integers, timestamps, or floats (those with a fraction do not cast)
        vals = _localize(arr, zone) if pa.types.is_timestamp(t) and not t.tz else _cast_locate(arr, pa.int64())[0]
        groups.append((np.ones(n, bool), vals, t.unit if pa.types.is_timestamp(t) else in_unit))
    res, ok, errs, out_per = np.zeros(n, np.int64), np.zeros(n, bool), {}, UNIT_NS[unit]
    for mask, vals, vunit in groups:
        idx, valid, per = np.flatnonzero(mask), np.asarray(vals.is_valid()), UNIT_NS[vunit]
        vals = np.asarray(pc.fill_null(vals, 0))
        if per >= out_per:
            lim = _I64 // (per // out_per)
            fail, out, why = np.abs(vals) > lim, np.clip(vals, -lim, lim) * (per // out_per), "out of range in"
        else:
            fail, out, why = vals % (out_per // per) != 0, vals // (out_per // per), "not a whole number of"
        for i in idx[valid & fail]:
            errs[int(i)] = f"time column {name!r}: {arr[int(i)].as_py()!r} ({vunit}) is {why} {unit}"
        res[idx[valid & ~fail]], ok[idx[valid & ~fail]] = out[valid & ~fail], True
    for i in np.flatnonzero(~ok):
        v = arr[int(i)].as_py()
        errs.setdefault(int(i), f"time column {name!r} is empty" if v is None or str(v).strip() == "" else
                        f"time column {name!r}: {v!r} is neither an integer nor an ISO-8601 time in {zone.key}")
    return pa.array(res, pa.int64(), mask=~ok), errs


def _localize(ts: pa.Array, zone: zoneinfo.ZoneInfo) -> pa.Array:
    """Naive local timestamps in ``zone`` as int64 UTC counts of their unit; null for times in a DST gap."""
    return pc.cast(ts, pa.int64()) if zone.key == "UTC" else _cast_locate(ts, pa.int64(), lambda a, t: pc.cast(
        pc.assume_timezone(a, zone.key, ambiguous="earliest", nonexistent="raise"), t))[0]
