"""Event files (CSV, JSON Lines, Parquet) to an :class:`EventBatch`, column-wise with pyarrow; results to files."""

from __future__ import annotations

import csv
import json
import math
import zoneinfo
from bisect import bisect_right
from collections import namedtuple
from dataclasses import dataclass
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
from .result import format_table

KINDS = ("int", "float", "str", "bool")
_EXT = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
        ".pq": "parquet"}
_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_ARROW = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
_NUMBER_RE = {"int": r"^[+-]?\d+$", "float": r"(?i)^[+-]?((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|inf|infinity|nan)$"}
_OFFSET_RE = r"[T ]\d{1,2}(:\d{2}){0,2}(\.\d+)?\s*([Zz]|[+-]\d{2}(:?\d{2})?)$"
_I64 = 2**63 - 1
_BAD = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError)


@dataclass
class ReadReport:
    """What :func:`read_events` read.

    Attributes:
        batch: the good events, sorted by (ts, _id).
        rows_read: data rows in the input, good and bad.
        rejected: bad rows written to the reject file (0 in "error" mode).
        reject_path: the reject file written (None in "error" mode).
    """

    batch: EventBatch
    rows_read: int
    rejected: int
    reject_path: str | None


# A file's raw columns (unreadable records: null rows) with reading errors, records the table lacks and lines.
_Part = namedtuple("_Part", "source n table errors originals lines")


@cache
def _known_zone(name: str) -> bool:
    """An IANA zone name (the list is read from disk once: it took 17 ms per call)."""
    return name in zoneinfo.available_timezones()


def parse_schema(text: str) -> dict[str, str]:
    """Parse declared kinds: ``"price:float, company:str"`` -> ``{"price": "float", ...}``.

    Raises:
        ValueError: an entry is not ``name:kind`` or its kind is not int, float, str or bool.
    """
    pairs = [(n.strip(), k.strip()) for n, _, k in (e.partition(":") for e in text.split(",") if e.strip())]
    for name, kind in (p for p in pairs if not p[0] or p[1] not in KINDS):
        raise ValueError(f"bad schema entry {name + ':' + kind!r}: expected name:kind with kind in {KINDS}")
    return dict(pairs)


def read_events(path: str | Path | Sequence[str | Path], *, format: str | None = None,
                type_column: str = "type", time_column: str = "ts", time_unit: str = "ms",
                input_time_unit: str | None = None, timezone: str = "UTC",
                schema: Mapping[str, str] | None = None, constant_type: str | None = None,
                on_bad_row: str = "error", reject_path: str | Path | None = None) -> ReadReport:
    """Read events from files into an :class:`EventBatch` sorted by (ts, _id).

    Every row becomes an event or a bad row (an error, or a reject-file line), never dropped.
    ``_id`` is a row's 0-based position among the data rows of all files, bad rows included. An
    attribute with a reserved name (``_id``, ``ts``, ``type``) gets ``_`` appended until the name
    is free (``ts`` read with ``time_column="time"`` becomes ``ts_``). Empty strings, JSON nulls and
    missing keys are nulls; nested JSON values are JSON text. Times convert exactly or not at all;
    a naive time in a DST overlap is the earlier instant, in a gap a bad row. Bad rows are numbered
    from 1: by line in CSV (header = 1) and JSON Lines, by row in Parquet.

    Args:
        path: a file, a directory (its files of the format by name, but ``_*`` and ``.*``) or a list.
        format: "csv", "jsonl" or "parquet"; None: from each file's extension.
        type_column: the column of event types (null or empty: bad row).
        time_column: the column of times: integers, ISO-8601 strings or Arrow timestamps.
        time_unit: unit of the output ``ts``: "s", "ms", "us" or "ns".
        input_time_unit: unit of integer times in the input (default: ``time_unit``).
        timezone: IANA zone of naive timestamps.
        schema: declared kinds (int, float, str, bool); else int, float, bool (true/false) or str.
        constant_type: the type of every event; a type column, if any, is then an attribute.
        on_bad_row: "error" raises InputError for the first bad row; "reject" writes the bad rows
            with an ``_error`` column to the reject file (CSV for CSV input, else JSON Lines).
        reject_path: the reject file, always written in "reject" mode; default
            ``<dir>/_rejects.<ext>`` for a directory, ``<parent>/_<stem>.rejects.<ext>`` for a file.

    Raises:
        InputError: a bad row in "error" mode, or input that cannot be read at all.
        ValueError: a bad argument.
    """
    in_unit, declared = input_time_unit or time_unit, dict(schema or {})
    if on_bad_row not in ("error", "reject") or {time_unit, in_unit} - _UNIT_NS.keys() or \
            not _known_zone(timezone) or not set(declared.values()) <= set(KINDS):
        raise ValueError(f"on_bad_row={on_bad_row!r}, time units {time_unit!r}/{in_unit!r}, timezone={timezone!r}, "
                         f"schema={declared}: expected 'error' or 'reject', s, ms, us or ns, an IANA zone, {KINDS}")
    zone, files = zoneinfo.ZoneInfo(timezone), list(_resolve(path, format))
    parts = [{"csv": _read_csv, "jsonl": _read_jsonl, "parquet": _read_parquet}[f](p) for p, f in files]
    used = {time_column} if constant_type is not None else {time_column, type_column}
    for p in (p for p in parts if p.table.num_columns and not used <= set(p.table.column_names)):
        missing = min(used - set(p.table.column_names))
        raise InputError(f"no column {missing!r} (columns: {', '.join(p.table.column_names)})" + (
            "; pass constant_type for single-stream data" if missing == type_column else ""), p.source)
    offsets, total, cols = np.cumsum([0] + [p.n for p in parts])[:-1].tolist(), sum(p.n for p in parts), {}
    for name in dict.fromkeys(n for p in parts for n in p.table.column_names):
        arrays = [p.table.column(name).combine_chunks() if name in p.table.column_names else pa.nulls(p.n)
                  for p in parts]
        types = {a.type for a in arrays} - {pa.null()}  # files disagreeing on a type meet as strings
        target = types.pop() if len(types) == 1 else pa.string()
        cols[name] = pa.concat_arrays([pc.cast(a, target) for a in arrays])
    ts, problems = _times(cols.pop(time_column, pa.nulls(total)), time_column, in_unit, time_unit, zone)
    errors = {i: [msg] for i, msg in problems.items()}  # unreadable rows are among them: their time is null
    types = pc.cast(cols.pop(type_column, pa.nulls(total)), pa.string()) if constant_type is None else \
        pa.array([constant_type] * total, pa.string())
    for i in np.flatnonzero(np.asarray(pc.fill_null(pc.equal(pc.utf8_trim_whitespace(types), ""), True))):
        errors.setdefault(int(i), []).append(f"type column {type_column!r} is empty")
    if missing := sorted(declared.keys() - cols.keys()):
        raise InputError(f"schema declares {missing}, not attribute columns of the input", str(files[0][0]))
    table = {ID: pa.array(np.arange(total, dtype=np.int64)), "ts": ts, "type": types}
    taken = set(cols) - set(RESERVED)
    for name, arr in cols.items():
        out = name
        while out in RESERVED or (out != name and out in taken):
            out += "_"
        taken.add(out)
        table[out], bad = _attribute(arr, declared.get(name))
        for i in bad:
            errors.setdefault(i, []).append(f"column {name!r}: {arr[i].as_py()!r} is not a valid {declared[name]}")

    def problem(i: int) -> tuple[InputError, Any]:
        k = bisect_right(offsets, i) - 1  # the last part starting at or before i is not empty
        part, j = parts[k], i - offsets[k]
        why = part.errors.get(j) or "; ".join(errors[i])  # a reading error is the only message
        error = InputError(why, part.source, part.lines()[j] if part.lines else j + 1)
        return error, part.originals[j] if j in part.originals else part.table.slice(j, 1).to_pylist()[0]

    if on_bad_row == "error" and errors:
        raise problem(min(errors))[0]
    written = None
    if on_bad_row == "reject":
        fmt = "csv" if all(f == "csv" for _, f in files) else "jsonl"
        first = Path(path[0] if isinstance(path, (list, tuple)) else path)
        written = str(reject_path or (first / f"_rejects.{fmt}" if first.is_dir()
                                      else first.parent / f"_{first.stem}.rejects.{fmt}"))
        header = list(dict.fromkeys(n for p in parts for n in p.table.column_names))
        rows = [problem(i) for i in sorted(errors)]
        with open(written, "w", newline="", encoding="utf-8") as f:
            if fmt == "csv":
                csv.writer(f).writerows([[*header, "_error"], *([*map(r.get, header), e] for e, r in rows)])
            for e, r in rows if fmt != "csv" else ():
                r = {c: v for c, v in r.items() if v is not None} if isinstance(r, dict) else {"_raw": r}
                f.write(json.dumps({**r, "_error": str(e)}, default=str, ensure_ascii=False) + "\n")
    result = pa.table(table).filter(pa.array(~np.isin(np.arange(total), list(errors))))
    ts_np, batch = result.column("ts").to_numpy(), EventBatch(result, time_unit)
    return ReadReport(batch if bool(np.all(ts_np[1:] >= ts_np[:-1])) else batch.sorted(), total,
                      len(errors) if written else 0, written)


def _resolve(path: Any, format: str | None) -> Iterator[tuple[Path, str]]:
    """The files to read, in order, with their formats."""
    if format not in (None, "csv", "jsonl", "parquet"):
        raise ValueError(f"format must be csv, jsonl or parquet, not {format!r}")
    for p in map(Path, path if isinstance(path, (list, tuple)) else [path]):
        if not p.exists():
            raise InputError("no such file or directory", str(p))
        kids = sorted(c for c in p.iterdir() if c.is_file() and not c.name.startswith((".", "_"))) \
            if p.is_dir() else [p]
        found = [(c, f) for c in kids if (f := format or _EXT.get(c.suffix.lower()))
                 and (p.is_file() or _EXT.get(c.suffix.lower()) == f)]
        if not found:
            raise InputError("no file of a known format (pass format=)", str(p))
        yield from found


def _read_csv(path: Path) -> _Part:
    """Every column as strings, by pyarrow; records with a wrong field count become null rows."""
    src, errors, originals, invalid = str(path), {}, {}, []

    @cache
    def numbered() -> list[int]:  # a row per non-empty line, unless records span lines: then ask csv
        lines = [k for k, t in enumerate(path.read_text("utf-8-sig").split("\n"), 1) if t.strip("\r")][1:]
        if len(lines) == len(table):
            return lines
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader, starts, prev = csv.reader(f), [], 0
            for fields in reader:
                starts += [prev + 1] if fields else []
                prev = reader.line_num
            return starts[1:]

    def read(threads: bool) -> pa.Table:  # with threads, pyarrow does not number the invalid rows
        parse = pcsv.ParseOptions(newlines_in_values=True, invalid_row_handler=lambda r: invalid.append(r) or "skip")
        return pcsv.read_csv(path, read_options=pcsv.ReadOptions(use_threads=threads), parse_options=parse,
                             convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(header, pa.string()),
                                                                 strings_can_be_null=False))
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader(f), [])
        if len(set(header)) < len(header):
            raise InputError(f"duplicate column names in header {header}", src, 1)
        # threads pay off on large files; on small ones their start-up costs more than the parse
        table = read(path.stat().st_size > 1 << 22) if header else pa.table({})
        if invalid:  # read again serially, to learn where the invalid records are, and put null rows there
            invalid.clear()
            table = read(False)
            for r in invalid:
                errors[r.number - 2] = f"expected {len(header)} fields, found {r.actual_columns}: {r.text!r}"
                originals[r.number - 2] = dict(zip(header, next(csv.reader([r.text]))))
            rows = np.full(len(table) + len(errors), -1)
            rows[np.setdiff1d(np.arange(len(rows)), list(errors))] = np.arange(len(table))
            table = table.take(pa.array(rows, mask=rows < 0))
    except (pa.ArrowInvalid, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"unreadable CSV: {e}", src) from e
    return _Part(src, table.num_rows, table, errors, originals, numbered)


def _read_jsonl(path: Path) -> _Part:
    """Typed columns by pyarrow; row by row on bad JSON, type conflicts, nesting or huge integers."""
    src, errors, originals = str(path), {}, {}
    lines = cache(lambda: [(no, t) for no, t in enumerate(path.read_text("utf-8", "replace").split("\n"), 1)
                           if t.strip()])  # (line number, text) of the non-blank lines
    try:
        table = pjson.read_json(path)
        stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
        if stamps:  # Arrow infers timestamps, dropping offsets: read those columns as text
            table = pjson.read_json(path, parse_options=pjson.ParseOptions(
                explicit_schema=pa.schema([(n, pa.string()) for n in stamps]), unexpected_field_behavior="infer"))
        n = None if any(pa.types.is_nested(c.type) or pa.types.is_timestamp(c.type) or pa.types.is_floating(
            c.type) and pc.any(pc.and_(pc.greater_equal(pc.abs(c), 2.0**53), pc.equal(c, pc.floor(c)))).as_py()
            for c in table.columns) else table.num_rows  # (integers that Arrow made inexact doubles)
    except _BAD:
        n = None
    if n is None:
        records = []
        for k, (_, line) in enumerate(lines()):
            try:
                originals[k] = obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError(f"not a JSON object but a {type(obj).__name__}")
            except ValueError as e:
                errors[k], originals[k], obj = f"bad JSON: {e}", originals.get(k, line.rstrip("\r")), {}
            records.append(obj)
        n, table = len(records), pa.table({c: _py_column([r.get(c) for r in records])
                                           for c in dict.fromkeys(c for r in records for c in r)})
    return _Part(src, n, table, errors, originals, cache(lambda: [no for no, _ in lines()]))


def _py_column(values: list[Any]) -> pa.Array:
    """JSON values as an Arrow column: typed if their types agree (ints and floats: float), else text."""
    kinds = {type(v) for v in values} - {type(None)}
    if kinds in ({bool}, {str}) or kinds <= {int, float} and all(abs(v) <= _I64 for v in values if type(v) is int):
        return pa.array(values)
    return pa.array([v if v is None or type(v) is str else str(v) if type(v) in (int, float) else json.dumps(v)
                     for v in values], pa.string())


def _read_parquet(path: Path) -> _Part:
    """The table as it is stored, Arrow types and all."""
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"unreadable Parquet: {e}", str(path)) from e
    return _Part(str(path), table.num_rows, table, {}, {}, None)


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
    s = pc.utf8_trim_whitespace(text)
    s = pc.if_else(pc.equal(s, ""), None, s)
    kind = kind or (None if s.null_count < len(s) else "str")
    for k in _number_kinds(kind):
        if kind or pc.all(pc.match_substring_regex(s, _NUMBER_RE[k])).as_py():
            col, bad = _parse(s, k)
            if kind or not bad:
                return col, bad
    low = pc.utf8_lower(s)
    bad = pc.and_(pc.is_valid(low), pc.invert(pc.is_in(low, pa.array(["true", "false"]))))
    if kind == "bool" or kind is None and not pc.any(bad).as_py():
        return pc.if_else(bad, None, pc.equal(low, "true")), np.flatnonzero(np.asarray(bad)).tolist()
    return pc.if_else(pc.equal(text, ""), None, text), []


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
    res, ok, errs, out_per = np.zeros(n, np.int64), np.zeros(n, bool), {}, _UNIT_NS[unit]
    for mask, vals, vunit in groups:
        idx, valid, per = np.flatnonzero(mask), np.asarray(vals.is_valid()), _UNIT_NS[vunit]
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


def write_result(result: Any, path: str | Path | None, format: str | None = None) -> None:
    """Write a :class:`cepagg.result.Result` as CSV, JSON Lines or Parquet, or print it.

    Integers beyond int64 become decimal strings in CSV and JSON Lines, DECIMAL(38,0) in Parquet.

    Args:
        result: the result table.
        path: the output file; None or "-" prints ``format_table(result)`` to stdout.
        format: "csv", "jsonl" or "parquet"; None: from the extension.
    """
    if path is None or str(path) == "-":
        return print(format_table(result))
    fmt = format or _EXT.get(Path(path).suffix.lower())
    if fmt == "parquet":
        return pq.write_table(result.to_arrow(), path)
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"cannot tell the output format of {str(path)!r}; pass format=")
    with open(path, "w", newline="", encoding="utf-8") as f:
        if fmt == "csv":
            csv.writer(f).writerows([result.columns, *([_cell(v, True) for v in r] for r in result.rows)])
        for r in result.rows if fmt == "jsonl" else ():
            f.write(json.dumps(dict(zip(result.columns, map(_cell, r))), ensure_ascii=False) + "\n")


def _cell(v: Any, text: bool = False) -> Any:
    """A value for CSV (``text``) or JSON, exact for integers of any size."""
    if isinstance(v, bool):
        return str(v).lower() if text else v
    if isinstance(v, int):
        return str(v) if text or abs(v) > _I64 else v
    if isinstance(v, float) or hasattr(v, "denominator"):
        return repr(float(v)) if text or not math.isfinite(float(v)) else float(v)
    return "" if text and v is None else v if v is None or isinstance(v, str) else str(v)
