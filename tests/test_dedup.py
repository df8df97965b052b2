"""The duplicate check with the store's id hashes streamed, not held (a store of more than
``dedup.LOAD_LIMIT`` rounds, or a run of few sources): they are streamed past each source's new ids
at its commit, and a source sharing ids with the store is read again checking those, or, when its
first block shares some and the hashes fit, they are loaded. The store, index, quarantine,
accounting and findings are those of the check that holds every hash, in one process and on
workers; the memory it takes at the start does not grow with the store."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from test_parallel_ingest import _assert_same, _ingest, _lines, _records, inputs, serial  # noqa: F401

from auditkit.ingest import dedup, parallel
from auditkit.ingest.dedup import SeenRounds, StoredOverlap
from auditkit.ingest.hashing import id_hashes
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store


@pytest.fixture
def overlaps(monkeypatch) -> list[int]:
    """The sizes of the overlaps found at commits (each source then read again), in order."""
    found: list[int] = []
    real = StoredOverlap.__init__

    def init(self, hashes):
        found.append(len(hashes))
        real(self, hashes)

    monkeypatch.setattr(StoredOverlap, "__init__", init)
    return found


@pytest.mark.parametrize("workers", [1, 2])
def test_streamed_hashes_give_the_store_of_held_ones(tmp_path, inputs, serial, overlaps, monkeypatch, workers):  # noqa: F811
    """The big file repeats two of the store's rounds, one with the same and one with other content: it
    is found sharing them at its commit and read again. The other files repeat only rounds of the run
    (their ids met earlier in it, not streamed). Everything is what holding the hashes gives."""
    monkeypatch.setattr(dedup, "LOAD_LIMIT", 0)  # too large to hold: never loaded
    if workers > 1:
        monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
        monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)
    store, report = _ingest(tmp_path, inputs, workers=workers)
    _assert_same(serial[0], store, serial[1], report)
    assert overlaps == [2]


@pytest.mark.parametrize("limit", [0, None])
def test_a_grown_file_stores_only_its_new_rounds_read_once_when_the_hashes_fit(tmp_path, overlaps, monkeypatch,
                                                                                limit):
    """Every row of the first 3,000 lines is already stored. A store too large to hold (``limit`` 0): the
    workers' parts are dropped at the commit, and the file read again stores the 500 new rounds only.
    One that fits: the first block's stored rounds load the hashes, and the file is read once."""
    if limit is not None:
        monkeypatch.setattr(dedup, "LOAD_LIMIT", limit)
    monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
    monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)
    records = _records("baccarat", 3_500, seed=41)
    log = tmp_path / "day.jsonl"
    log.write_bytes(b"\n".join(_lines(records[:3_000])) + b"\n")
    store = Store(tmp_path / "store")
    assert ingest_paths([log], store, workers=2).sources[0].stored == 3_000
    with open(log, "ab") as fh:
        fh.write(b"\n".join(_lines(records[3_000:])) + b"\n")
    grown = ingest_paths([log], store, workers=2).sources[0]
    assert (grown.stored, grown.already_stored, grown.lines_read) == (500, 3_000, 3_500) and grown.balanced
    assert overlaps == ([3_000] if limit == 0 else [])
    rows = pd.concat([store.read("baccarat", d).to_pandas() for d in store.dates("baccarat")])
    assert rows["round_id"].is_unique and len(rows) == 3_500
    assert len(store.index()) == 3_500
    assert not list(store.root.rglob("*.tmp"))


def test_in_store_finds_exactly_the_stored_ids(tmp_path, monkeypatch):
    """Against a reference set: hashes below, between and above the stored ones, the first and the last,
    read in batches smaller than the store (legacy index files are hashed as they are read)."""
    store = Store(tmp_path / "store")
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"\n".join(_lines(_records("baccarat", 2_000, seed=5))) + b"\n")
    ingest_paths([log], store, workers=1)
    monkeypatch.setattr("auditkit.store.ROW_GROUP", 300)
    stored = np.unique(store.index(["id_hash"])["id_hash"].to_numpy())
    seen = SeenRounds(store, always_load=False)
    rng = np.random.default_rng(0)
    probe = np.unique(np.concatenate([stored[::7], stored[[0, -1]], rng.integers(0, 2**63, 500, dtype=np.uint64),
                                      np.array([0, 2**64 - 1], np.uint64)]))
    assert np.array_equal(seen.in_store(probe), np.intersect1d(probe, stored))
    assert len(seen.in_store(np.empty(0, np.uint64))) == 0
    ids = store.index(["round_id"])["round_id"]
    assert np.array_equal(np.sort(id_hashes(ids)), np.sort(store.index(["id_hash"])["id_hash"].to_numpy()))


def test_memory_at_the_start_does_not_grow_with_the_store(tmp_path, monkeypatch):
    """A scaled-down large store (40,000 rounds; 500 million in the field, 4 GB of held hashes): held,
    the hashes take 8 bytes a round at the start of an ingest; streamed, the start takes none of that,
    and the check of a source's ids takes its ids and a batch (here 1,000 rows), not the store."""
    store = Store(tmp_path / "store")
    for seed in range(4):
        log = tmp_path / f"{seed}.jsonl"
        records = [dict(r, round_id=f"S{seed}-{r['round_id']}") for r in _records("baccarat", 10_000, seed=seed)]
        log.write_bytes(b"\n".join(_lines(records)) + b"\n")
        ingest_paths([log], store, workers=1)
    n = store.count()
    assert n == 40_000

    def peak(fn):
        tracemalloc.start()
        try:
            out = fn()
            return out, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert SeenRounds(store, sources=4).streamed  # a run of few sources streams whatever the size
    held, held_peak = peak(lambda: SeenRounds(store, sources=5))
    assert not held.streamed and len(held.stored) == n and held_peak >= 8 * n
    monkeypatch.setattr(dedup, "LOAD_LIMIT", n - 1)
    monkeypatch.setattr("auditkit.store.ROW_GROUP", 1_000)
    seen, start_peak = peak(lambda: SeenRounds(store, sources=5))
    assert seen.streamed and len(seen.stored) == 0 and held_peak - start_peak >= 8 * n  # the rest: the manifest
    source = np.unique(np.random.default_rng(1).integers(0, 2**63, 2_000, dtype=np.uint64))
    found, check_peak = peak(lambda: seen.in_store(source))
    assert len(found) == 0 and check_peak < 8 * n / 4
