"""The ``cepagg`` source following a directory (no Spark session: the reader alone): files
taken in the order they arrive, no position read twice or skipped when a new file holds older
events, a changed file and a column that does not fit refused naming the file."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadAllAvailable  # noqa: E402
from pyspark.sql.types import LongType, StringType, StructField, StructType  # noqa: E402

from cepagg.errors import InputError  # noqa: E402
from cepagg.spark.sources import CepaggStreamReader  # noqa: E402

SCHEMA = StructType([StructField("_id", LongType()), StructField("ts", LongType()), StructField("type", StringType()),
                     StructField("x", LongType())])


def _put(folder, name, rows, at):
    path = folder / name
    path.write_text("type,ts,x\n" + "".join(f"{t},{ts},{x}\n" for t, ts, x in rows))
    os.utime(path, ns=(at, at))
    return path


def _read(reader, start, end):
    return [(r["ts"], r["x"]) for p in reader.partitions({"pos": start}, {"pos": end})
            for b in reader.read(p) for r in b.to_pylist()]


def test_a_new_file_with_older_events_adds_positions_after_the_ones_read(tmp_path):
    """The directory was read as one table sorted by time: a new file's older events moved the
    positions, so events already read came again and new ones were never read."""
    _put(tmp_path, "b.csv", [("A", 10, 1), ("B", 20, 2), ("A", 30, 3)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset({"pos": 0}, ReadAllAvailable())["pos"]
    assert _read(reader, 0, first) == [(10, 1), (20, 2), (30, 3)]
    _put(tmp_path, "a.csv", [("B", 40, 5), ("B", 5, 4)], at=2_000_000_000)  # (a name sorting first)
    end = reader.latestOffset({"pos": first}, ReadAllAvailable())["pos"]
    assert _read(reader, first, end) == [(5, 4), (40, 5)]


def test_a_file_that_changes_or_does_not_fit_is_refused_naming_it(tmp_path):
    b = _put(tmp_path, "b.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    assert reader.latestOffset({"pos": 0}, ReadAllAvailable())["pos"] == 1
    bad = _put(tmp_path, "c.csv", [("A", 20, "many")], at=2_000_000_000)
    end = reader.latestOffset({"pos": 1}, ReadAllAvailable())["pos"]
    with pytest.raises(InputError, match="column 'x'") as e:
        _read(reader, 1, end)
    assert str(bad) in str(e.value)
    _put(tmp_path, "b.csv", [("A", 10, 1), ("A", 11, 1)], at=3_000_000_000)
    with pytest.raises(InputError, match="changed after the stream read it") as e:
        reader.latestOffset({"pos": 2}, ReadAllAvailable())
    assert str(b) in str(e.value)


def test_a_restarted_stream_numbers_the_files_as_the_run_before(tmp_path):
    """A file moved into the directory keeps its modification time, older than that of files read
    before it: a restarted reader sorted it first, and the checkpoint's positions pointed into
    other events."""
    _put(tmp_path, "b.csv", [("A", 10, 1), ("B", 20, 2)], at=2_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    _put(tmp_path, "a.csv", [("B", 30, 3)], at=1_000_000_000)  # (moved in: an older time)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert _read_offsets(reader, first, second) == [(30, 3)]
    restarted = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    assert _read_offsets(restarted, first, second) == [(30, 3)]
    assert restarted.latestOffset(second, ReadAllAvailable()) == second


def _read_offsets(reader, start, end):
    return [(r["ts"], r["x"]) for p in reader.partitions(start, end) for b in reader.read(p) for r in b.to_pylist()]


def test_every_bad_row_of_every_arrived_file_is_kept_once_in_the_reject_files(tmp_path):
    """Each read of an arrived file rewrote the one reject file whole, even a file without bad
    rows: it held the last file's bad rows only, and the closing line counted those."""
    import csv

    from cepagg.cli import _rows_in
    from cepagg.spark.sources import _load

    events, out = tmp_path / "in", tmp_path / "out"
    events.mkdir()
    out.mkdir()
    reject = str(out / "rejects.csv")
    _put(events, "a.csv", [("A", 10, 1), ("A", "ten", 2)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(events), "finite": "false", "reject": reject}, SCHEMA)
    first = reader.latestOffset({"pos": 0}, ReadAllAvailable())["pos"]
    _load.cache_clear()  # (a worker reads the files again, in a process of its own)
    assert _read(reader, 0, first) == [(10, 1)]
    _put(events, "b.csv", [("B", 20, 3)], at=2_000_000_000)
    _put(events, "c.csv", [("A", 30, 4), ("B", "thirty", 5)], at=3_000_000_000)
    end = reader.latestOffset({"pos": first}, ReadAllAvailable())["pos"]
    _load.cache_clear()
    assert _read(reader, first, end) == [(20, 3), (30, 4)]
    bad = sorted(row["x"] for f in sorted(out.iterdir()) for row in csv.DictReader(open(f, encoding="utf-8")))
    assert bad == ["2", "5"]  # (each once, the clean file's read wrote none)
    from cepagg.spark.sources import reject_files

    written = reject_files(str(events), "", reject)
    assert written == [str(out / "rejects.a.csv.csv"), str(out / "rejects.c.csv.csv")]
    assert sum(map(_rows_in, written)) == 2  # (the closing line's count)


def test_a_file_read_to_the_end_may_be_moved_out_before_a_restart(tmp_path):
    """The checkpoint's offsets listed every file ever read by its absolute path, and a restarted
    query refused a read file that had been moved out or deleted."""
    a = _put(tmp_path, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert _read_offsets(reader, first, second) == [(30, 3)]
    a.unlink()  # (read to the end: archived)
    restarted = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    assert _read_offsets(restarted, first, second) == [(30, 3)]
    assert restarted.latestOffset(second, ReadAllAvailable())["pos"] == second["pos"] == 3
    _put(tmp_path, "c.csv", [("B", 40, 4)], at=3_000_000_000)
    third = restarted.latestOffset(second, ReadAllAvailable())
    assert _read_offsets(restarted, second, third) == [(40, 4)]
    assert third["pos"] == 4 and third["base"] == 2
    assert [entry[:2] for entry in third["files"]] == [["b.csv", 1], ["c.csv", 1]]  # (a.csv forgotten)


def test_the_offsets_list_the_files_in_the_directory_by_name_not_every_file_ever_read(tmp_path):
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    offset = reader.initialOffset()
    for k in range(20):
        f = _put(tmp_path, f"e{k:02}.csv", [("A", 10 * k, k), ("B", 10 * k + 5, k)], at=(k + 1) * 1_000_000_000)
        end = reader.latestOffset(offset, ReadAllAvailable())
        assert _read_offsets(reader, offset, end) == [(10 * k, k), (10 * k + 5, k)]
        f.unlink()  # (each file archived once read)
        offset = end
    assert offset["pos"] == 40 and len(offset["files"]) <= 2
    assert str(tmp_path) not in str(offset)


def test_a_file_gone_before_all_its_events_were_read_is_refused_naming_it(tmp_path):
    _put(tmp_path, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    b = _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    b.unlink()  # (before the micro-batch that reads it ran)
    restarted = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    with pytest.raises(InputError, match="gone before the stream read all its events") as e:
        _read_offsets(restarted, first, second)
    assert str(b) in str(e.value)


def test_a_checkpoint_naming_files_by_absolute_path_still_restarts(tmp_path):
    """Offsets written before files were named with their counts."""
    a = _put(tmp_path, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=2_000_000_000)
    b = _put(tmp_path, "b.csv", [("A", 30, 3)], at=1_000_000_000)
    first, second = {"pos": 2, "files": [str(a)]}, {"pos": 3, "files": [str(a), str(b)]}
    restarted = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    assert _read_offsets(restarted, first, second) == [(30, 3)]


def test_an_offset_listing_a_file_this_reader_forgot_does_not_bring_it_back(tmp_path):
    a = _put(tmp_path, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    a.unlink()
    _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())  # (a.csv forgotten)
    assert second["base"] == 2
    assert reader.latestOffset(first, ReadAllAvailable()) == second  # (asked again from the older offset)
    assert _read_offsets(reader, first, second) == [(30, 3)]


def test_a_file_replaced_under_its_name_is_refused_even_with_the_same_time_and_count(tmp_path):
    """The source compared modification times alone: a file replaced by another moved in with
    the same time (``cp -p`` and ``mv`` keep a file's time) and as many events went unseen, and
    a worker read the new file's events in place of those counted."""
    from cepagg.spark.sources import _load

    events = tmp_path / "in"
    events.mkdir()
    a = _put(events, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(events), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    a.rename(tmp_path / "a.csv")
    (tmp_path / "a.csv").rename(a)  # moved out and back: the same file
    assert reader.latestOffset(first, ReadAllAvailable()) == first
    parts = reader.partitions(reader.initialOffset(), first)
    _put(tmp_path, "a.csv", [("A", 10, 7), ("B", 20, 8)], at=1_000_000_000).rename(a)  # (replaced)
    _load.cache_clear()  # (a worker reads the file in a process of its own)
    with pytest.raises(InputError, match="changed after the stream read it") as e:
        [b for p in parts for b in reader.read(p)]
    assert str(a) in str(e.value)
    with pytest.raises(InputError, match="changed after the stream read it") as e:
        reader.latestOffset(first, ReadAllAvailable())
    assert str(a) in str(e.value)


def test_a_file_back_under_the_name_of_a_forgotten_one_is_refused_naming_it(tmp_path):
    """A file read to the end, moved out (and so forgotten) and moved back in was taken for a new
    file: its events were read twice."""
    events = tmp_path / "in"
    events.mkdir()
    a = _put(events, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(events), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    a.rename(tmp_path / "a.csv")  # (read to the end: archived)
    _put(events, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert second["base"] == 2  # (a.csv forgotten)
    (tmp_path / "a.csv").rename(a)
    with pytest.raises(InputError, match="read twice") as e:
        reader.latestOffset(second, ReadAllAvailable())
    assert str(a) in str(e.value)


@pytest.mark.parametrize("signatures", [True, False], ids=["checkpoint", "checkpoint-without-signatures"])
def test_a_file_gone_at_a_restart_and_back_must_hold_the_events_the_checkpoint_counted(tmp_path, signatures):
    """A file the checkpoint lists, gone when the query restarted, was never checked once back."""
    _put(tmp_path, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    b = _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    if not signatures:  # (as an earlier version wrote it)
        second = {**second, "files": [entry[:2] for entry in second["files"]]}
    b.rename(tmp_path / "b.away")
    restarted = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    assert restarted.latestOffset(second, ReadAllAvailable())["pos"] == second["pos"]
    _put(tmp_path, "b.csv", [("A", 30, 3), ("B", 31, 4)], at=2_000_000_000)
    with pytest.raises(InputError, match="changed after the stream read it") as e:
        restarted.latestOffset(second, ReadAllAvailable())
    assert str(b) in str(e.value)


def test_a_new_file_under_the_name_of_a_forgotten_one_is_read(tmp_path):
    """A spool reusing names: batch.csv read to the end and archived, then a new batch.csv (other
    events, another time) was refused as the old file back."""
    events = tmp_path / "in"
    events.mkdir()
    batch = _put(events, "batch.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = CepaggStreamReader({"path": str(events), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert _read(reader, 0, first["pos"]) == [(10, 1), (20, 2)]
    batch.rename(tmp_path / "archived-1.csv")
    _put(events, "other.csv", [("A", 25, 9)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert second["base"] == 2  # (batch.csv forgotten)
    _put(events, "batch.csv", [("A", 30, 3), ("B", 40, 4)], at=3_000_000_000)
    third = reader.latestOffset(second, ReadAllAvailable())
    assert _read(reader, first["pos"], third["pos"]) == [(25, 9), (30, 3), (40, 4)]


def test_a_stream_remembers_a_bounded_number_of_forgotten_files(tmp_path, monkeypatch):
    monkeypatch.setattr("cepagg.spark.sources.FORGOTTEN_KEPT", 2)
    events = tmp_path / "in"
    events.mkdir()
    reader = CepaggStreamReader({"path": str(events), "finite": "false"}, SCHEMA)
    offset = reader.initialOffset()
    for k in range(4):
        f = _put(events, f"f{k}.csv", [("A", 10 * k, k)], at=(k + 1) * 1_000_000_000)
        offset = reader.latestOffset(offset, ReadAllAvailable())
        f.rename(tmp_path / f.name)
    _put(events, "last.csv", [("A", 100, 9)], at=9_000_000_000)
    reader.latestOffset(offset, ReadAllAvailable())
    assert list(reader.forgotten) == [str(events / "f2.csv"), str(events / "f3.csv")]


def test_a_file_gone_between_the_listing_and_its_look_is_not_yet_seen(tmp_path, monkeypatch):
    _put(tmp_path, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    listed = [str(tmp_path / "a.csv"), str(tmp_path / "gone.csv")]
    monkeypatch.setattr("cepagg.io.input_files", lambda path, fmt=None: listed)
    reader = CepaggStreamReader({"path": str(tmp_path), "finite": "false"}, SCHEMA)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert [entry[:2] for entry in first["files"]] == [["a.csv", 1]]


def _restarted(folder):
    return CepaggStreamReader({"path": str(folder), "finite": "false"}, SCHEMA)


def test_a_file_replaced_while_the_query_was_stopped_is_refused_saying_what_changed(tmp_path):
    """The checkpoint listed files by name and count: a file replaced while the query was stopped
    by one with as many events (same size, same time) was taken for the file read, and a worker
    read the new file's events at positions counted in the old one."""
    from cepagg.spark.sources import _load

    events = tmp_path / "in"
    events.mkdir()
    _put(events, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = _restarted(events)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    b = _put(events, "b.csv", [("A", 30, 3), ("B", 40, 4)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())  # (logged; the micro-batch not yet run)
    _put(tmp_path, "b.csv", [("A", 30, 7), ("B", 40, 8)], at=2_000_000_000).rename(b)  # (replaced)
    _load.cache_clear()
    restarted = _restarted(events)
    with pytest.raises(InputError, match="changed while the query was stopped") as e:
        _read_offsets(restarted, first, second)
    message = str(e.value)
    assert message.startswith(f"{b}: ") and "\n" not in message
    assert "another file: inode" in message and "size" not in message and "modified" not in message
    with pytest.raises(InputError, match="changed while the query was stopped"):
        _restarted(events).latestOffset(second, ReadAllAvailable())  # (read to the end: refused too)


def test_a_file_that_grew_while_the_query_was_stopped_is_refused_naming_it(tmp_path):
    """A file appended to while the query was stopped was taken with the count of the run before:
    its new events were never read."""
    a = _put(tmp_path, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = _restarted(tmp_path)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    size = a.stat().st_size
    with open(a, "a") as f:
        f.write("A,30,3\n")
    os.utime(a, ns=(1_000_000_000, 1_000_000_000))  # (even with its time kept)
    with pytest.raises(InputError, match="changed while the query was stopped") as e:
        _restarted(tmp_path).latestOffset(first, ReadAllAvailable())
    assert str(e.value).startswith(f"{a}: ")
    assert f"size {a.stat().st_size} bytes, was {size}" in str(e.value) and "inode" not in str(e.value)


def test_a_file_gone_at_a_restart_and_back_must_be_the_file_the_checkpoint_listed(tmp_path):
    """A file gone when the query restarted was checked once back by its event count alone:
    another file with as many events was read in its place."""
    from cepagg.spark.sources import _load

    _put(tmp_path, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = _restarted(tmp_path)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    b = _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    away = tmp_path / "b.away"
    b.rename(away)
    restarted = _restarted(tmp_path)
    assert restarted.latestOffset(second, ReadAllAvailable())["pos"] == second["pos"]
    away.rename(b)  # (the same file back)
    assert restarted.latestOffset(second, ReadAllAvailable())["pos"] == second["pos"]
    assert _read_offsets(restarted, first, second) == [(30, 3)]
    b.rename(away)
    restarted = _restarted(tmp_path)
    assert restarted.latestOffset(second, ReadAllAvailable())["pos"] == second["pos"]
    _put(tmp_path, "b.csv", [("A", 30, 9)], at=2_000_000_000)  # (another file, as many events)
    _load.cache_clear()
    with pytest.raises(InputError, match="changed after the stream read it") as e:
        restarted.latestOffset(second, ReadAllAvailable())
    assert str(b) in str(e.value)


def test_a_new_file_under_the_name_of_one_gone_at_a_restart_and_forgotten_is_read(tmp_path):
    """A restarted query knew a file gone when it restarted by name alone: once forgotten, any
    file under its name was refused, a spool's new file too; the file itself back is refused."""
    events = tmp_path / "in"
    events.mkdir()
    batch = _put(events, "batch.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    reader = _restarted(events)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    batch.rename(tmp_path / "archived.csv")
    restarted = _restarted(events)
    _put(events, "other.csv", [("A", 25, 9)], at=2_000_000_000)
    second = restarted.latestOffset(first, ReadAllAvailable())
    assert second["base"] == 2  # (batch.csv forgotten)
    (tmp_path / "archived.csv").rename(batch)
    with pytest.raises(InputError, match="read twice"):
        restarted.latestOffset(second, ReadAllAvailable())
    batch.rename(tmp_path / "archived.csv")
    _put(events, "batch.csv", [("A", 30, 3), ("B", 40, 4)], at=3_000_000_000)
    third = restarted.latestOffset(second, ReadAllAvailable())
    assert _read_offsets(restarted, first, third) == [(25, 9), (30, 3), (40, 4)]


def test_a_checkpoint_without_signatures_still_restarts(tmp_path):
    """Offsets written before files were listed with their signatures: the files are taken as
    they are (nothing to compare them with)."""
    _put(tmp_path, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_000_000_000)
    b = _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    first = {"pos": 2, "base": 0, "files": [["a.csv", 2]]}
    second = {"pos": 3, "base": 0, "files": [["a.csv", 2], ["b.csv", 1]]}
    _put(tmp_path, "b.away", [("A", 30, 3)], at=3_000_000_000).rename(b)
    restarted = _restarted(tmp_path)
    assert _read_offsets(restarted, first, second) == [(30, 3)]
    assert restarted.latestOffset(second, ReadAllAvailable()) == second  # (nothing to read: no micro-batch)
    _put(tmp_path, "c.csv", [("A", 40, 4)], at=4_000_000_000)
    third = restarted.latestOffset(second, ReadAllAvailable())
    assert third["pos"] == 4 and [entry[:2] for entry in third["files"]] == second["files"] + [["c.csv", 1]]
    assert all(len(entry) == 3 for entry in third["files"])  # (the next offsets carry them)


def test_the_refusal_of_a_changed_file_says_each_thing_that_changed():
    from cepagg.spark.sources import _check_listed

    _check_listed("a.csv", None, (1, 2, 3))  # (an earlier version's checkpoint: nothing to compare)
    _check_listed("a.csv", (1, 2, 3), None)  # (gone: refused when read, or checked when back)
    _check_listed("a.csv", (1, 2, 3), (1, 2, 3))
    with pytest.raises(InputError) as e:
        _check_listed("a.csv", (1, 2, 1_000_000_000), (5, 9, 1_700_000_000_000_000_001))
    assert str(e.value).startswith("a.csv: changed while the query was stopped (another file: inode 5, was 1; "
                                   "size 9 bytes, was 2; modified 2023-11-14 22:13:20.000000001 UTC, was "
                                   "1970-01-01 00:00:01.000000000 UTC); ")
    assert str(e.value).endswith("; if all its events were read, move it out of the directory")


@pytest.mark.parametrize("how", ["renamed", "hard-linked"])
def test_a_file_under_a_second_name_in_the_directory_is_refused_naming_both(tmp_path, how):
    """A file read to the end and renamed in the directory (or hard-linked) was taken for a new
    file: its events were read again, silently."""
    a = _put(tmp_path, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_700_000_000_123_456_789)
    reader = _restarted(tmp_path)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert _read_offsets(reader, reader.initialOffset(), first) == [(10, 1), (20, 2)]
    a2 = tmp_path / "a2.csv"
    if how == "renamed":
        a.rename(a2)
    else:
        os.link(a, a2)
    with pytest.raises(InputError) as e:
        reader.latestOffset(first, ReadAllAvailable())
    assert str(e.value).startswith(f"{a2}: the file {a} under another name (")
    assert "read twice" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match="under another name"):  # (also after a restart)
        _restarted(tmp_path).latestOffset(first, ReadAllAvailable())


def test_a_forgotten_file_back_under_another_name_is_refused_naming_both(tmp_path):
    events = tmp_path / "in"
    events.mkdir()
    a = _put(events, "a.csv", [("A", 10, 1), ("B", 20, 2)], at=1_700_000_000_123_456_789)
    reader = _restarted(events)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    a.rename(tmp_path / "a.csv")  # (read to the end: archived)
    _put(events, "b.csv", [("A", 30, 3)], at=1_700_000_001_000_000_001)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert second["base"] == 2  # (a.csv forgotten)
    (tmp_path / "a.csv").rename(events / "a-again.csv")
    with pytest.raises(InputError) as e:
        reader.latestOffset(second, ReadAllAvailable())
    assert str(e.value).startswith(f"{events / 'a-again.csv'}: the file {a} under another name (")


def test_a_new_file_with_the_inode_of_a_forgotten_one_is_read(tmp_path):
    """The file system gives a deleted file's inode again: only a file with the same inode, size
    and modification time is the forgotten one."""
    events = tmp_path / "in"
    events.mkdir()
    a = _put(events, "a.csv", [("A", 10, 1)], at=1_700_000_000_123_456_789)
    reader = _restarted(events)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    a.unlink()
    _put(events, "b.csv", [("A", 20, 2)], at=1_700_000_001_000_000_001)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert second["base"] == 1  # (a.csv forgotten)
    c = _put(events, "c.csv", [("A", 30, 3)], at=1_700_000_002_000_000_002)  # (often a.csv's inode again)
    ino, size, mtime = c.stat().st_ino, c.stat().st_size, c.stat().st_mtime_ns
    reader.forgotten[str(a)] = (ino, size, mtime + 1)  # (the same inode and size: another time)
    third = reader.latestOffset(second, ReadAllAvailable())
    assert _read_offsets(reader, second, third) == [(30, 3)]
    d = _put(events, "d.csv", [("A", 40, 4)], at=1_700_000_003_000_000_003)
    reader.forgotten[str(a)] = (d.stat().st_ino, d.stat().st_size + 1, d.stat().st_mtime_ns)  # (another size)
    fourth = reader.latestOffset(third, ReadAllAvailable())
    assert _read_offsets(reader, third, fourth) == [(40, 4)]


def test_a_listed_file_deleted_as_a_restarted_query_looks_at_it_is_gone_not_a_traceback(tmp_path, monkeypatch):
    from cepagg.spark import sources

    _put(tmp_path, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = _restarted(tmp_path)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    b = _put(tmp_path, "b.csv", [("A", 30, 3)], at=2_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    signature = sources._signature

    def deleted_as_looked_at(f):
        if f == str(b) and b.exists():
            b.unlink()
        return signature(f)

    monkeypatch.setattr(sources, "_signature", deleted_as_looked_at)
    restarted = _restarted(tmp_path)
    assert restarted.latestOffset(second, ReadAllAvailable()) == second  # (read to the end: gone is fine)
    with pytest.raises(InputError, match="gone before the stream read all its events") as e:
        _read_offsets(_restarted(tmp_path), first, second)
    assert str(e.value).startswith(f"{b}: ")


def test_nothing_to_read_gives_the_start_offset_itself(tmp_path):
    """Spark runs a micro-batch whenever the offset's JSON differs from the start's: a file
    without events arriving, or a restart from a checkpoint without signatures, added an empty
    micro-batch."""
    _put(tmp_path, "a.csv", [("A", 10, 1)], at=1_000_000_000)
    reader = _restarted(tmp_path)
    first = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    (tmp_path / "empty.csv").write_text("type,ts,x\n")
    assert reader.latestOffset(first, ReadAllAvailable()) == first
    _put(tmp_path, "b.csv", [("A", 20, 2)], at=3_000_000_000)
    second = reader.latestOffset(first, ReadAllAvailable())
    assert [entry[0] for entry in second["files"]] == ["a.csv", "empty.csv", "b.csv"]
    assert _read_offsets(reader, first, second) == [(20, 2)]
