"""Matches written as they are found, in bounded memory.

A RETURN-of-events query may have millions of matches; an engine that produces them as it goes
(rcep, nfa) hands over the rows of a few hundred events' matches at a time, and this module
turns each such piece into output rows and writes them at once: CSV and JSON Lines line by
line, Parquet by row groups. Memory holds the events, the engine's state and one piece, never
the list of matches. Output goes through :func:`cepagg.output.atomic_path`, so an interrupted
run leaves no file under the target's name.

Two layouts (``match_format``):

* ``long`` (the result form of docs/semantics.md §10): one row per (match, returned event) --
  group and window cells, ``match``, ``var``, ``pos``, ``event_id``, ``type``, ``ts``, then the
  event's attributes.
* ``wide``: one row per match -- group and window cells, ``match``, then one column per returned
  variable holding the list of its events in time order, each event a record
  (``event_id``, ``type``, ``ts``, attributes). CSV has no list type, so wide output is JSON
  Lines or Parquet (refused for CSV before any work).

What the output cannot hold is refused before the engine runs (:func:`check_layout`): two
columns of one name (an attribute called ``match``, say) and types Parquet cannot store.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Callable, Iterable, Union

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import CepaggError
from .events import ID, EventBatch
from .lang.model import Query
from .output import atomic_path, cell, output_format
from .result import Result, format_table

MATCH_FORMATS = ("long", "wide")
#: rows a Parquet row group gathers before it is written
ROW_GROUP_ROWS = 1 << 16


class OutputRefused(CepaggError):
    """The chosen output cannot hold the matches (said before any work)."""


@dataclass
class Written:
    """What a run wrote: matches, output rows, whether ``max_matches`` stopped it, the engine."""

    matches: int
    rows: int
    stopped: bool
    engine: str = ""


class MatchBlock:
    """Matches handed over column-wise: the long form's rows as arrays, the rows of a match
    consecutive and its number the same on each. An engine that enumerates matches in compiled
    code (rcep's compiled path, :mod:`cepagg.engines.rcep.compiled`) fills one block at a time
    instead of building a tuple per row; :meth:`Layout.table` turns it into the output's columns
    without a Python object per row.

    ``match``, ``var`` (index into ``display``, the returned variables), ``pos``, ``event``
    (event ids) and ``cell`` (index into ``cells``, the distinct group and window cells) hold
    ``rows`` rows; the arrays may be longer (``capacity``).
    """

    def __init__(self, match, var, pos, event, cell, display: list[str], rows: int, cells: list[tuple],
                 cell_ids: dict | None = None):
        self.match, self.var, self.pos, self.event, self.cell = match, var, pos, event, cell
        self.display = display
        self.rows = rows
        self.cells = cells
        self._cell_ids = cell_ids if cell_ids is not None else {c: i for i, c in enumerate(cells)}

    @classmethod
    def empty(cls, capacity: int, display: list[str]) -> "MatchBlock":
        return cls(np.empty(capacity, np.int64), np.empty(capacity, np.int8), np.empty(capacity, np.int32),
                   np.empty(capacity, np.int64), np.empty(capacity, np.int32), display, 0, [])

    @property
    def capacity(self) -> int:
        return self.match.shape[0]

    def __len__(self) -> int:
        return self.rows

    def cell_index(self, cells: tuple) -> int:
        """The index of ``cells`` in :attr:`cells` (added if new)."""
        i = self._cell_ids.get(cells)
        if i is None:
            i = self._cell_ids[cells] = len(self.cells)
            self.cells.append(cells)
        return i

    def starts(self) -> np.ndarray:
        """The first row of every match."""
        m = self.match[:self.rows]
        if not self.rows:
            return np.zeros(0, np.int64)
        return np.flatnonzero(np.concatenate(([True], m[1:] != m[:-1])))

    def copy(self) -> "MatchBlock":
        """The block's rows in arrays of their own, no longer than the rows (a block kept while
        others are filled holds memory for its rows, not its capacity)."""
        n = self.rows
        return MatchBlock(self.match[:n].copy(), self.var[:n].copy(), self.pos[:n].copy(), self.event[:n].copy(),
                          self.cell[:n].copy(), self.display, n, list(self.cells))

    @classmethod
    def concat(cls, blocks: list["MatchBlock"]) -> "MatchBlock":
        """One block of the rows of ``blocks`` in order (one ``display``); each block's cell
        indexes are moved past the cells of the blocks before it."""
        if len(blocks) == 1:
            return blocks[0]
        cells: list[tuple] = []
        moved = []
        for b in blocks:
            moved.append(b.cell[:b.rows] + np.int32(len(cells)))
            cells.extend(b.cells)

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(b, name)[:b.rows] for b in blocks])
        return cls(joined("match"), joined("var"), joined("pos"), joined("event"), np.concatenate(moved),
                   blocks[0].display, sum(b.rows for b in blocks), cells)

    def head(self, matches: int) -> "MatchBlock":
        """The block of the first ``matches`` matches (sharing the arrays)."""
        starts = self.starts()
        rows = int(starts[matches]) if matches < len(starts) else self.rows
        return MatchBlock(self.match, self.var, self.pos, self.event, self.cell, self.display, rows,
                          self.cells, self._cell_ids)


class Layout:
    """The output columns of a RETURN-of-events query over one input, and its Arrow schema."""

    def __init__(self, query: Query, batch: EventBatch, match_format: str = "long"):
        if match_format not in MATCH_FORMATS:
            raise OutputRefused(f"match format {match_format!r}: choose long or wide")
        self.query = query
        self.match_format = match_format
        cols = query.output_columns
        self.key_width = cols.index("match") + 1  # group and window cells, then match
        self.cells = cols[:self.key_width - 1]
        self.attrs = batch.attribute_names
        schema = batch.table.schema
        self.attr_fields = [schema.field(a) for a in self.attrs]
        self.vars = [v.split("@")[0] for v in query.return_vars]
        cell_fields = [pa.field(c, _cell_type(query, c, schema)) for c in self.cells]
        self.row_attrs = row_attributes(query, self.attrs)
        self.event_type = pa.struct([pa.field("event_id", pa.int64()), pa.field("type", pa.string()),
                                     pa.field("ts", pa.int64()), *self.attr_fields])
        if match_format == "long":
            self.schema = pa.schema([*cell_fields, pa.field("match", pa.int64()), pa.field("var", pa.string()),
                                     pa.field("pos", pa.int64()), pa.field("event_id", pa.int64()),
                                     pa.field("type", pa.string()), pa.field("ts", pa.int64()),
                                     *(schema.field(a) for a in self.row_attrs)])
        else:
            self.schema = pa.schema([*cell_fields, pa.field("match", pa.int64()),
                                     *(pa.field(v, pa.list_(self.event_type)) for v in self.vars)])
        self.columns = tuple(self.schema.names)
        self.checked: set[str] = set()  # formats :func:`check_layout` found able to hold the matches
        self._events = batch.table.select([ID, "type", "ts", *self.attrs])
        ids = batch.table.column(ID).to_numpy()
        self._dense = len(ids) == 0 or (ids[0] == 0 and bool(np.all(np.diff(ids) == 1)))
        if not self._dense:
            self._order = np.argsort(ids, kind="stable")
            self._sorted_ids = ids[self._order]

    def _rows_of(self, event_ids: list[int]) -> np.ndarray:
        ids = np.asarray(event_ids, dtype=np.int64)
        if self._dense:
            return ids
        return self._order[np.searchsorted(self._sorted_ids, ids)]

    def table(self, rows: list[tuple] | MatchBlock) -> pa.Table:
        """Engine rows (long form without attributes; the rows of a match together), or a
        :class:`MatchBlock`, as a table in this layout."""
        k = self.key_width
        if not len(rows):
            return self.schema.empty_table()
        if isinstance(rows, MatchBlock):
            return self._block_table(rows)
        def col(i: int) -> list:  # (not zip(*rows): ten times slower on 10^5 rows)
            return list(map(itemgetter(i), rows))

        events = self._events.take(pa.array(self._rows_of(col(k + 2))))
        if self.match_format == "long":
            arrays = [pa.array(col(i), type=self.schema.field(i).type) for i in range(k + 1)]
            arrays += [pa.array(col(k + 1), pa.int64()), events.column(ID).cast(pa.int64()),
                       events.column("type").cast(pa.string()), events.column("ts").cast(pa.int64())]
            arrays += [events.column(a) for a in self.row_attrs]
            return pa.Table.from_arrays([a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
                                         for a in arrays], schema=self.schema)
        return self._wide(rows, events)

    def _wide(self, rows: list[tuple], events: pa.Table) -> pa.Table:
        k = self.key_width
        record = self._records(events)
        var_index = {v: i for i, v in enumerate(self.vars)}
        heads: list[tuple] = []
        taken: list[list[int]] = [[] for _ in self.vars]
        offsets: list[list[int]] = [[0] for _ in self.vars]
        last = None
        for n, r in enumerate(rows):
            head = r[:k]
            if head != last:
                if last is not None:
                    for t, o in zip(taken, offsets):
                        o.append(len(t))
                heads.append(head)
                last = head
            taken[var_index[r[k]]].append(n)
        for t, o in zip(taken, offsets):
            o.append(len(t))
        arrays = [pa.array(list(map(itemgetter(i), heads)), type=self.schema.field(i).type) for i in range(k)]
        for t, o in zip(taken, offsets):
            arrays.append(pa.ListArray.from_arrays(pa.array(o, pa.int32()), record.take(pa.array(t, pa.int64())),
                                                   type=pa.list_(self.event_type)))
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _block_table(self, blk: MatchBlock) -> pa.Table:
        k, n = self.key_width, blk.rows
        cell = pa.array(blk.cell[:n])
        if self.match_format == "wide":
            starts = blk.starts()
            cell = pa.array(blk.cell[:n][starts])
        cells = [pa.array([c[i] for c in blk.cells], type=self.schema.field(i).type).take(cell)
                 for i in range(k - 1)]
        events = self._events.take(pa.array(self._rows_of(blk.event[:n])))
        if self.match_format == "long":
            names = pa.array(blk.display, pa.string())
            arrays = [*cells, pa.array(blk.match[:n]), names.take(pa.array(blk.var[:n])),
                      pa.array(blk.pos[:n].astype(np.int64)), events.column(ID).cast(pa.int64()),
                      events.column("type").cast(pa.string()), events.column("ts").cast(pa.int64()),
                      *(events.column(a) for a in self.row_attrs)]
            return pa.Table.from_arrays([a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
                                         for a in arrays], schema=self.schema)
        record = self._records(events)
        match_of_row = np.cumsum(np.concatenate(([True], blk.match[1:n] != blk.match[:n - 1]))) - 1
        arrays = [*cells, pa.array(blk.match[:n][starts])]
        var = blk.var[:n]
        for v in self.vars:
            mine = var == blk.display.index(v)
            counts = np.bincount(match_of_row[mine], minlength=len(starts))
            offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
            arrays.append(pa.ListArray.from_arrays(pa.array(offsets), record.take(pa.array(np.flatnonzero(mine))),
                                                   type=pa.list_(self.event_type)))
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _records(self, events: pa.Table) -> pa.StructArray:
        return pa.StructArray.from_arrays(
            [events.column(ID).cast(pa.int64()).combine_chunks(),
             events.column("type").cast(pa.string()).combine_chunks(),
             events.column("ts").cast(pa.int64()).combine_chunks(),
             *(events.column(a).combine_chunks() for a in self.attrs)],
            fields=list(self.event_type))


def row_attributes(query: Query, names) -> list[str]:
    """The event attributes written after ``ts`` in a long match row: all of ``names`` but a
    partition attribute that is also a group column (every event of a match holds the group's
    value, which that column already shows)."""
    shared = {g.column for g in query.group_by if g.var is None and g.attr in query.partition_by}
    return [a for a in names if a not in shared]


def check_attribute_names(columns, attributes) -> None:
    """Refuse (OutputRefused) to join event ``attributes`` to result ``columns`` that already
    hold one of their names: the table would have two columns of that name (Spark could not
    tell them apart; Parquet, JSON Lines and rows keyed by name keep only one)."""
    columns = set(columns)
    for n in attributes:
        if n in columns:
            raise OutputRefused(f"the output would have two columns named {n!r} (an attribute of the events "
                                "has the name of a result column); rename the attribute")


def _cell_type(query: Query, column: str, schema: pa.Schema) -> pa.DataType:
    """The type of a group or window column: the grouped attribute's, int64 for window bounds."""
    for g in query.group_by:
        if g.column == column:
            return schema.field(g.attr).type if g.attr in schema.names else pa.null()
    return pa.int64()


def check_layout(layout: Layout, fmt: str) -> None:
    """Refuse, before any work, an output that cannot hold the matches (OutputRefused)."""
    if fmt == "csv" and layout.match_format == "wide":
        raise OutputRefused("--match-format wide writes a list of events per variable, which CSV cannot "
                            "hold: write .jsonl or .parquet, or use --match-format long")
    for names, where in [(layout.columns, "the output"), (layout.event_type.names, "an event record")]:
        seen = set()
        for n in names:
            if n in seen:
                raise OutputRefused(f"{where} would have two columns named {n!r} (an attribute of the events "
                                    "has the name of a result column); rename the attribute"
                                    + (", or use --match-format wide (attributes inside each event's record)"
                                       if layout.match_format == "long" else ""))
            seen.add(n)
    if fmt == "parquet" and fmt not in layout.checked:
        if not _parquet_holds(layout.schema):  # (then find the column to name, one at a time)
            for f in layout.schema:
                try:
                    with pq.ParquetWriter(pa.BufferOutputStream(), pa.schema([f])) as w:
                        w.write_table(pa.schema([f]).empty_table())
                except (pa.ArrowException, ValueError) as e:
                    raise OutputRefused(f"Parquet cannot hold column {f.name!r} of type {f.type} ({e}); "
                                        "write .csv or .jsonl") from None
    layout.checked.add(fmt)


@lru_cache(maxsize=64)
def _parquet_holds(schema: pa.Schema) -> bool:
    """Whether Parquet can store every column of ``schema`` (one trial write in memory, once
    per schema in a process: a program writing matches again pays it once)."""
    try:
        with pq.ParquetWriter(pa.BufferOutputStream(), schema) as w:
            w.write_table(schema.empty_table())
    except (pa.ArrowException, ValueError):
        return False
    return True


class Sink:
    """Writes tables of one layout to a file of one format: an open text file (CSV, JSON Lines)
    or a path (Parquet)."""

    def __init__(self, layout: Layout, fmt: str, f):
        self.layout, self.fmt, self.f = layout, fmt, f
        self.rows = 0
        self._pending: list[pa.Table | MatchBlock] = []
        self._pending_rows = 0
        if fmt == "parquet":
            self._writer = pq.ParquetWriter(f, layout.schema)
        elif fmt == "csv":
            self._csv = csv.writer(f)
            self._csv.writerow(layout.columns)

    def add(self, rows: list | MatchBlock) -> None:
        """Write engine rows or a :class:`MatchBlock`. Parquet gathers them until a row group
        holds :data:`ROW_GROUP_ROWS` engine rows; consecutive blocks become one table there (one
        Arrow ``take`` of the events' columns, one row group), however small each block is."""
        if self.fmt != "parquet":
            self.write(self.layout.table(rows))
            return
        if isinstance(rows, MatchBlock):
            self._pending.append(rows.copy())
        else:
            self._pending.append(self.layout.table(rows))
        self._pending_rows += len(rows)
        if self._pending_rows >= ROW_GROUP_ROWS:
            self._flush()

    def write(self, table: pa.Table) -> None:
        """Write ``table`` to the text file (CSV, JSON Lines); Parquet gathers rows in :meth:`add`."""
        self.rows += table.num_rows
        names = self.layout.columns
        if self.fmt == "csv":
            self._csv.writerows([cell(v, True) for v in r] for r in tuples(table))
        else:
            self.f.write("".join(json.dumps(dict(zip(names, map(_json_cell, r))), ensure_ascii=False) + "\n"
                                 for r in tuples(table)))

    def _flush(self) -> None:
        if not self._pending:
            return
        tables: list[pa.Table] = []
        blocks: list[MatchBlock] = []
        for piece in self._pending + [None]:  # (None: the end, where the last blocks join)
            if isinstance(piece, MatchBlock) and (not blocks or piece.display == blocks[0].display):
                blocks.append(piece)
                continue
            if blocks:
                tables.append(self.layout.table(MatchBlock.concat(blocks)))
            blocks = [piece] if isinstance(piece, MatchBlock) else []
            if isinstance(piece, pa.Table):
                tables.append(piece)
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        self.rows += table.num_rows
        self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self._pending, self._pending_rows = [], 0

    def close(self) -> None:
        if self.fmt == "parquet":
            self._flush()
            self._writer.close()


def tuples(table: pa.Table) -> list[tuple]:
    """The rows of a table as tuples (lists and records as Python lists and dicts)."""
    return list(zip(*(c.to_pylist() for c in table.columns))) if table.num_columns else []


def _json_cell(v):
    if isinstance(v, list):
        return [_json_cell(x) for x in v]
    if isinstance(v, dict):
        return {k: _json_cell(x) for k, x in v.items()}
    return cell(v)


#: where rows come from (lists of engine rows, or blocks: :class:`MatchBlock`): pieces to
#: iterate, or a function that hands each piece to the callback it is given (an engine spilling
#: rows in the middle of a call: :func:`cepagg.runner.match_feed`)
Source = Union[Iterable[list], Callable[[Callable[[list], None]], None]]


class _Stopped(Exception):
    """``max_matches`` reached: unwinds the engine that was producing rows."""


def _drive(source: Source, key_width: int, max_matches: int | None, counter: Written,
           consume: Callable[[list], None]) -> None:
    """Hand every piece of ``source`` to ``consume``, cut after ``max_matches`` matches (the rows
    of one match are consecutive); count matches and rows into ``counter``, set ``stopped``."""
    def accept(rows: list | MatchBlock) -> None:
        if not len(rows):
            return
        if isinstance(rows, MatchBlock):
            m = len(rows.starts())
            if max_matches is not None and counter.matches + m > max_matches:
                m = max_matches - counter.matches
                rows = rows.head(m)
                counter.stopped = True
            counter.matches += m
            counter.rows += rows.rows
            if rows.rows:
                consume(rows)
            if counter.stopped:
                raise _Stopped
            return
        n, last, cut = counter.matches, None, len(rows)
        for i, r in enumerate(rows):
            head = r[:key_width]
            if head != last:
                if max_matches is not None and n >= max_matches:
                    cut = i
                    counter.stopped = True
                    break
                n += 1
                last = head
        counter.matches = n
        counter.rows += cut
        if cut:
            consume(rows[:cut] if cut < len(rows) else rows)
        if counter.stopped:
            raise _Stopped

    try:
        if callable(source):
            source(accept)
        else:
            for piece in source:
                accept(piece)
    except _Stopped:
        pass


def write(source: Source, layout: Layout, path: str, format: str | None = None,
          max_matches: int | None = None) -> Written:
    """Write the engine rows of ``source`` to ``path`` (``-``: a table on stdout, its first 50
    rows) as they come; stop after ``max_matches`` matches."""
    counter = Written(0, 0, False)
    if path is None or str(path) == "-":
        check_layout(layout, "table")
        shown: list[tuple] = []

        def show(rows: list | MatchBlock) -> None:
            if len(shown) < 50:
                if isinstance(rows, MatchBlock):
                    shown.extend(tuples(layout.table(rows).slice(0, 50 - len(shown))))
                else:
                    shown.extend(tuples(layout.table(rows[:50 - len(shown)])))

        _drive(source, layout.key_width, max_matches, counter, show)
        if layout.match_format == "wide":  # (one output row per match; the engine's rows are long)
            counter.rows = counter.matches
        print(format_table(Result(layout.columns, shown), total=counter.rows))
        return counter
    fmt = output_format(path, format)
    check_layout(layout, fmt)
    with atomic_path(path) as tmp:
        if fmt == "parquet":  # (Arrow writes the file itself, a row group at a time)
            sink = Sink(layout, fmt, str(tmp))
            try:
                _drive(source, layout.key_width, max_matches, counter, sink.add)
            finally:
                sink.close()
            counter.rows = sink.rows
            return counter
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            sink = Sink(layout, fmt, f)
            _drive(source, layout.key_width, max_matches, counter, lambda rows: sink.write(layout.table(rows)))
            sink.close()
    counter.rows = sink.rows  # (output rows: one per match in the wide form)
    return counter


def as_result(source: Source, layout: Layout, max_matches: int | None = None) -> tuple[Result, Written]:
    """The rows of ``source`` gathered in memory as a :class:`~cepagg.result.Result` in the
    layout's columns (for the Python API; files are written by :func:`write`)."""
    counter = Written(0, 0, False)
    out: list[tuple] = []
    _drive(source, layout.key_width, max_matches, counter, lambda rows: out.extend(tuples(layout.table(rows))))
    counter.rows = len(out)
    return Result(layout.columns, out), counter
