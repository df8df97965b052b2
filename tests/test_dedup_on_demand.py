"""The one-shot route's duplicate check with content hashes on demand (``ingest_paths(private=True)``:
only rows whose round id collides are hashed): the store's rounds, quarantine, accounting and
findings are those of hashing every row, on logs repeating ids within a block, across blocks and
across files, with the same and with other content; only the index's content hashes differ (0 where
a row was never hashed)."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_parallel_ingest import _assert_same as same_store
from test_parallel_ingest import _entries, _lines, _manifest, _records, _rounds, inputs  # noqa: F401

from auditkit.ingest import dedup, hashing, writer
from auditkit.ingest.jsonl import MAX_LINE, read_blocks
from auditkit.ingest.readers import jsonl as jsonl_reader
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store
from auditkit.validate import collect


def _small_blocks(monkeypatch, block_bytes: int) -> None:
    monkeypatch.setattr(jsonl_reader, "read_blocks", functools.partial(read_blocks, block_bytes=block_bytes))


def _hashed_rows(monkeypatch) -> list[int]:
    """The number of rows given to each content hash of a block's rows, in order."""
    counts: list[int] = []
    real = hashing.row_hashes

    def spy(table, columns):
        counts.append(table.num_rows)
        return real(table, columns)

    monkeypatch.setattr(writer, "row_hashes", spy)
    return counts


def _assert_same(one: Store, other: Store, r1, r2) -> None:
    """The same store but for the index's content hashes, the same report and findings."""
    same_store(one, other, r1, r2, content_hashes=False)
    f1, n1 = collect(one)
    f2, n2 = collect(other)
    assert n1 == n2
    pd.testing.assert_frame_equal(f1, f2)


def _both(tmp: Path, paths: list[Path], held: bool = True):
    every, private = Store(tmp / "every"), Store.in_memory(1 << 30, tmp / "spill") if held else Store(tmp / "private")
    r_every = ingest_paths(paths, every, max_line=MAX_LINE)
    r_private = ingest_paths(paths, private, max_line=MAX_LINE, private=True)
    return every, private, r_every, r_private


@pytest.mark.parametrize("deferred", [1 << 30, 0, 20_000])  # blocks kept unhashed; none; a few, then all hashed
@pytest.mark.parametrize("block_bytes", [1 << 30, 1 << 14])
def test_hashes_on_demand_give_the_store_of_every_row_hashed(tmp_path, inputs, monkeypatch, deferred,  # noqa: F811
                                                            block_bytes):
    """The parallel-ingest inputs (duplicates within a file and across files, same and other content,
    bad, blank and long lines, gzip, CSV with companions, a copied file), in one block a file or many."""
    monkeypatch.setattr(dedup, "DEFERRED_BYTES", deferred)
    _small_blocks(monkeypatch, block_bytes)
    _, logs = inputs
    every, private, r1, r2 = _both(tmp_path, [logs])
    assert r1.total("already_stored") and r1.total("quarantined")  # the comparison means something
    _assert_same(every, private, r1, r2)


def _log(rng: random.Random, records: list[dict], n: int, pool: list[dict]) -> tuple[list[bytes], list[dict]]:
    """``n`` lines of ``records``, some of them repeating a round of ``pool`` (this file's earlier
    rounds or another file's): the same record, or one with other content."""
    out, met = [], []
    for rec in records[:n]:
        if pool and rng.random() < 0.15:
            old = rng.choice(pool)
            out.append(json.dumps(old if rng.random() < 0.5 else dict(old, outcome="tie" if old.get(
                "outcome") != "tie" else "player")).encode())
        out.append(json.dumps(rec).encode())
        met.append(rec)
        pool.append(rec)
    return out, met


@pytest.mark.parametrize("seed", range(6))
def test_random_repeats_within_and_across_files_and_blocks(tmp_path, monkeypatch, seed):
    """Random logs: each repeats rounds of itself and of the files before it at random places, the
    same or changed; blocks of a few dozen lines; the blocks kept unhashed limited or not."""
    rng = random.Random(seed)
    monkeypatch.setattr(dedup, "DEFERRED_BYTES", rng.choice([0, 30_000, 1 << 30]))
    _small_blocks(monkeypatch, rng.choice([4_000, 20_000, 1 << 30]))
    records = _records("baccarat", 900, seed=100 + seed)
    pool: list[dict] = []
    paths = []
    for k in range(3):
        lines, _ = _log(rng, records[300 * k:], 300, pool)
        path = tmp_path / f"log{k}.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        paths.append(path)
    every, private, r1, r2 = _both(tmp_path, paths, held=bool(seed % 2))
    assert r1.total("already_stored") and r1.total("quarantined")
    _assert_same(every, private, r1, r2)


def test_only_colliding_rows_are_hashed(tmp_path, monkeypatch):
    """On demand, a log without a repeated id hashes no row's content; with one repeat across blocks
    the two rows are hashed (the first kept unhashed until the second is met), not the blocks."""
    _small_blocks(monkeypatch, 4_000)
    records = _records("baccarat", 200, seed=5)
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b"\n".join(_lines(records)) + b"\n")
    counts = _hashed_rows(monkeypatch)
    ingest_paths([clean], Store.in_memory(1 << 30, tmp_path / "s1"), max_line=MAX_LINE, private=True)
    assert sum(counts) == 0
    repeated = tmp_path / "repeated.jsonl"
    changed = dict(records[3], outcome="tie" if records[3].get("outcome") != "tie" else "player")
    repeated.write_bytes(b"\n".join(_lines(records) + [json.dumps(changed).encode()]) + b"\n")
    counts.clear()
    report = ingest_paths([repeated], Store.in_memory(1 << 30, tmp_path / "s2"), max_line=MAX_LINE, private=True)
    assert report.total("quarantined") == 1 and sum(counts) == 2
    counts.clear()
    report = ingest_paths([repeated], Store(tmp_path / "s3"), max_line=MAX_LINE)  # every row, as before
    assert report.total("quarantined") == 1 and sum(counts) == 201


def test_a_store_holding_rounds_hashes_every_row(tmp_path, monkeypatch):
    """On demand only into an empty store: one holding rounds compares with their stored hashes."""
    records = _records("baccarat", 50, seed=6)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"\n".join(_lines(records[:30])) + b"\n")
    second.write_bytes(b"\n".join(_lines(records[20:])) + b"\n")
    scratch = Store(tmp_path / "scratch")
    ingest_paths([first], scratch, max_line=MAX_LINE, private=True)
    assert not np.any(scratch.index()["line_hash"].to_numpy())  # never hashed: 0 (a store thrown away)
    store = Store(tmp_path / "s")
    ingest_paths([first], store, max_line=MAX_LINE)
    assert np.all(store.index()["line_hash"].to_numpy())
    counts = _hashed_rows(monkeypatch)
    report = ingest_paths([second], store, max_line=MAX_LINE, private=True)
    assert sum(counts) == 30 and report.total("already_stored") == 10


def test_a_rows_content_hash_is_the_same_alone_in_a_few_rows_or_in_its_table(tmp_path):
    """Block.content_hashes hashes rows taken out of their table, and a small table's text columns are
    hashed without finding their distinct values: each row's hash is the one of its whole table (sliced
    tables too: offsets not from 0, 32-bit and 64-bit text offsets, nulls)."""
    import pyarrow as pa

    from auditkit.ingest.blocks import parse_block

    records = _records("baccarat", 300, seed=8) + _records("blackjack", 300, seed=9)
    for r in records[::7]:
        r["dealer_id"] = None
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(_lines(records)) + b"\n")
    tables = parse_block(next(read_blocks(path))).tables
    for table in tables.values():
        cols = hashing.content_columns(table.column_names)
        whole = hashing.row_hashes(table, cols)
        assert len(np.unique(whole)) == table.num_rows
        for start, n in [(0, 1), (5, 3), (17, 63), (100, 64), (1, table.num_rows - 1)]:
            assert (hashing.row_hashes(table.slice(start, n), cols) == whole[start:start + n]).all()
        wide = table.cast(pa.schema([f.with_type(pa.large_string()) if f.type == pa.string() else f
                                     for f in table.schema]))
        assert (hashing.row_hashes(wide.slice(2, 10), cols) == whole[2:12]).all()
        rows = np.array([3, 1, 40, 2])
        assert (hashing.row_hashes(table.take(pa.array(rows)), cols) == whole[rows]).all()
        ids = table["round_id"].combine_chunks()
        for text in (ids, ids.cast(pa.large_string())):
            assert (hashing.id_hashes(text.slice(5, 20)) == hashing.id_hashes(text)[5:25]).all()
    text = pa.array(["a", None, "bc", "", "d\u00e9"] * 20)
    every = hashing.id_hashes(text)
    assert len(set(every[:5].tolist())) == 4  # a null id hashes as an empty one
    for start, n in [(1, 3), (2, 70), (3, 1)]:
        assert (hashing.id_hashes(text.slice(start, n)) == every[start:start + n]).all()
