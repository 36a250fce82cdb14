"""Bounded memory in-process: events read and fed to the engine chunk by chunk (cepagg.io.EventChunks,
cepagg.runner.run_chunks) give exactly the whole read's events and result, or say why they cannot."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pyarrow.parquet as pq
import pytest

from cepagg.cli import main
from cepagg.datasets.stock import generate
from cepagg.errors import InputError
from cepagg.io import EventChunks, NotChunkable, read_events
from cepagg.result import Result
from cepagg.runner import run, run_chunks
from helpers import cli_run, write_file


def _stock_csv(tmp_path, n=400, name="s.csv"):
    t = generate(n, companies=4, sectors=2, ticker_types=True, seed=5).table
    p = tmp_path / name
    pa.csv.write_csv(t.select(["type", "ts", "sector", "price"]), p)
    return p


@pytest.mark.parametrize("engine", ["reference", "greta", "aseq"])
def test_chunks_give_the_whole_read_result(tmp_path, engine):
    p = _stock_csv(tmp_path)
    q = "RETURN sector, COUNT(*), SUM(b.price) PATTERN SEQ(C0 a, C2 b) WHERE [sector] GROUP BY sector " \
        "WITHIN 5 s SLIDE 5 s" if engine != "greta" else \
        "RETURN COUNT(*) PATTERN SEQ(C0 a, C1 b) WITHIN 5 s"
    whole = run(q, read_events(p).batch, engine=engine)
    chunks = EventChunks(p, chunk_bytes=512)
    got, events, _ = run_chunks(q, chunks, engine)
    assert events == 400 and chunks.rows_read == 400 and got.equals(whole), got.diff(whole)
    assert not whole.equals(Result(whole.columns, [], whole.kinds))  # (the query matches something)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_chunks_are_the_events_of_a_whole_read(tmp_path, fmt):
    t = generate(300, companies=3, ticker_types=True, seed=2).table.select(["type", "ts", "company", "price"])
    p = tmp_path / f"s.{fmt}"
    if fmt == "csv":
        pa.csv.write_csv(t, p)
    elif fmt == "jsonl":
        p.write_text("".join(json.dumps(r) + "\n" for r in t.to_pylist()))
    else:
        pq.write_table(t, p)
    whole = read_events(p).batch.table
    for size in (700, 40):  # (40 bytes: the first chunk of a CSV file is its header alone)
        parts = list(EventChunks(p, chunk_bytes=size))
        assert len(parts) > 3
        assert pa.concat_tables([b.table for b in parts]).equals(whole)


@pytest.mark.parametrize("text, why", [
    ("type,ts,x\nA,5,1\nB,6,1\nA,1,1\nB,2,1\n", "not in time order"),
    ("type,ts,x\nA,1,1\nB,2,1\nA,3,1.5\nB,4,1\n", "changes kind"),
])
def test_what_chunks_cannot_read_is_read_whole(tmp_path, capsys, text, why):
    p = write_file(tmp_path, text)
    with pytest.raises(NotChunkable, match=why):
        list(EventChunks(p, chunk_bytes=16))
    os.environ["CEPAGG_CHUNK_BYTES"] = "16"
    try:
        assert main(["run", "-q", "RETURN COUNT(*), SUM(a.x) PATTERN SEQ(A a, B b) WITHIN 10", "--events", str(p),
                     "--no-spark", "--engine", "reference"]) == 0
    finally:
        del os.environ["CEPAGG_CHUNK_BYTES"]
    captured = capsys.readouterr()
    assert f"read whole, not in chunks ({p}: " in captured.err and "cepagg: 4 events, engine" in captured.err


def test_a_column_of_text_in_the_first_rows_and_numbers_after_is_not_chunked(tmp_path):
    """Read whole, the column is mostly numbers, so numeric ('u' a bad value); its first chunk alone is text."""
    p = write_file(tmp_path, "type,ts,x\nA,1,u\nB,2,1\nA,3,2\nB,4,3\n")
    assert read_events(p, on_bad_row="reject").batch.attribute_kinds() == {"x": "int"}
    with pytest.raises(NotChunkable, match="column 'x' is mostly numbers"):
        list(EventChunks(p, chunk_bytes=16, on_bad_row="reject"))


def test_values_of_bad_rows_before_the_first_event_count_for_the_kind(tmp_path):
    """Chunks of bad rows alone were skipped before the kinds were learnt: their numbers were not
    counted, and the chunks read 'u' and 'v' as text where the whole read has them bad values."""
    p = write_file(tmp_path, "type,ts,x\nA,bad,1\nA,bad,2\nA,bad,3\nA,4,u\nB,5,v\n")
    whole = read_events(p, on_bad_row="reject", reject_path=tmp_path / "w.csv")
    assert whole.rejected == 5 and len(whole.batch) == 0
    with pytest.raises(NotChunkable, match="column 'x' reads as another kind"):
        list(EventChunks(p, chunk_bytes=10, on_bad_row="reject", reject_path=tmp_path / "c.csv"))
    for text in ("type,ts,x\nA,bad,u\nA,bad,v\nA,bad,w\nA,4,1\nB,5,2\n",  # (whole: text)
                 "type,ts,x\nA,bad,u\nA,bad,v\nA,bad,w\nA,bad,y\nA,4,1\nB,5,2\nB,6,3\n"):
        p = write_file(tmp_path, text)
        whole = read_events(p, on_bad_row="reject", reject_path=tmp_path / "w.csv").batch
        assert whole.attribute_kinds() == {"x": "str"}
        for size in (1, 10, 20):
            try:
                parts = [b.table for b in EventChunks(p, chunk_bytes=size, on_bad_row="reject",
                                                      reject_path=tmp_path / "c.csv")]
            except NotChunkable:
                continue
            assert pa.concat_tables(parts).equals(whole.table), (text, size)


def test_chunked_rejects_are_those_of_a_whole_read(tmp_path, monkeypatch, capsys):
    p = write_file(tmp_path, "type,ts,x\nA,1,1\nA,x,1\nB,2,1\n,3,1\nB,4,1\n")
    monkeypatch.setenv("CEPAGG_CHUNK_BYTES", "12")
    assert cli_run("--events", p, "--reject", tmp_path / "r.csv") == 0
    assert "2 bad row(s) of 5" in capsys.readouterr().err
    chunked = (tmp_path / "r.csv").read_text()
    read_events(p, on_bad_row="reject", reject_path=tmp_path / "w.csv")
    assert chunked == (tmp_path / "w.csv").read_text()


def _random_csv(rng) -> str:
    """Events in time order with what CSV files hold: blank lines, CRLF, quoted commas, bad rows."""
    end = rng.choice(["\n", "\r\n"])
    lines, ts = ["type,ts,x,s"], 0
    for _ in range(rng.randint(0, 40)):
        ts += rng.choice([0, 1, 5])
        kind = rng.random()
        if kind < 0.05:
            lines.append("")
        elif kind < 0.1:
            lines.append(f"A,{ts}")  # a field short
        elif kind < 0.15:
            lines.append("A,later,1,x")  # a bad time
        else:
            x = rng.choice([str(rng.randint(-5, 5)), "", str(rng.randint(0, 9)) + ".5"] if rng.random() < 0.3
                           else [str(rng.randint(-5, 5))])
            s = rng.choice(["u", '"v,w"', "", "z"])
            lines.append(f"{rng.choice('AB')},{ts},{x},{s}")
    return end.join(lines) + rng.choice([end, ""])


def test_chunks_agree_with_the_whole_read_on_random_files(tmp_path):
    """Random CSV files, cut at random sizes: the chunks are the whole read's events, rejects and
    first error, or the reader says it cannot chunk the file."""
    import random

    rng = random.Random(11)
    p = tmp_path / "r.csv"
    chunked = 0
    for case in range(120):
        p.write_text(_random_csv(rng), newline="")
        size = rng.choice([1, 7, 20, 64, 300])
        for mode in ("error", "reject"):
            opts = dict(on_bad_row=mode, reject_path=tmp_path / "w.csv")
            try:
                whole = read_events(p, **opts)
            except InputError as e:
                with pytest.raises((InputError, NotChunkable)) as got:
                    list(EventChunks(p, chunk_bytes=size, **opts))
                assert got.type is NotChunkable or str(got.value) == str(e), case
                continue
            wanted = (tmp_path / "w.csv").read_text() if mode == "reject" else None
            opts["reject_path"] = tmp_path / "c.csv"
            chunks = EventChunks(p, chunk_bytes=size, **opts)
            try:
                parts = [b.table for b in chunks]
            except NotChunkable:
                continue
            chunked += 1
            got = pa.concat_tables(parts) if parts else None
            assert (got is None and len(whole.batch) == 0) or got.equals(whole.batch.table), case
            assert chunks.rows_read == whole.rows_read and chunks.rejected == whole.rejected, case
            if mode == "reject":
                assert (tmp_path / "c.csv").read_text() == wanted, case
    assert chunked > 80
