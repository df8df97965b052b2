"""The duplicate check with the store's id hashes streamed, not held (a store of more than
``dedup.LOAD_LIMIT`` rounds, or a run of few sources): they are streamed past each source's new ids
at its commit, and a source sharing ids with the store is read again checking those, or, when its
first block shares some and the hashes fit, they are loaded. The store, index, quarantine,
accounting and findings are those of the check that holds every hash, in one process and on
workers; the memory it takes at the start does not grow with the store."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parallel_ingest import _assert_same, _ingest, _lines, _records, inputs, overlaps, serial  # noqa: F401

from auditkit.ingest import dedup, parallel
from auditkit.ingest.dedup import SeenRounds
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store


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


@pytest.mark.parametrize("workers", [1, 2])
def test_a_csv_and_a_gzip_file_sharing_stored_rounds_are_read_again_as_held(tmp_path, overlaps, monkeypatch,  # noqa: F811
                                                                            workers):
    """The parallel ingest reads a CSV source (one task) and a gzip file (blocks) otherwise than a plain
    file: each repeating stored rounds, with the same and with other content, and bringing new ones,
    gives the store of the held check when the store's hashes are streamed."""
    import gzip

    from auditkit.ingest.csv import write_csv_rounds

    records = _records("baccarat", 600, seed=31)
    old = tmp_path / "old"
    old.mkdir()
    write_csv_rounds(records[:200], old / "a.csv")
    (old / "b.jsonl").write_bytes(b"\n".join(_lines(records[200:400])) + b"\n")
    new = tmp_path / "new"
    new.mkdir()
    changed = dict(records[205], outcome="tie" if records[205]["outcome"] != "tie" else "banker")
    write_csv_rounds(records[:10] + records[400:500], new / "c.csv")
    with gzip.open(new / "d.jsonl.gz", "wb") as fh:
        fh.write(b"\n".join(_lines(records[200:210] + [changed] + records[500:600])) + b"\n")
    runs = {}
    for route in ("held", "streamed"):
        monkeypatch.setattr(dedup, "STREAM_SOURCES", 0 if route == "held" else 2)
        monkeypatch.setattr(dedup, "LOAD_LIMIT", 10**9 if route == "held" else 0)
        store = Store(tmp_path / route)
        ingest_paths([old], store, workers=workers)
        runs[route] = store, ingest_paths([new], store, workers=workers)
    _assert_same(*runs["held"][:1], *runs["streamed"][:1], runs["held"][1], runs["streamed"][1])
    by_name = {Path(r.path).name: r for r in runs["streamed"][1].sources}
    assert (by_name["c.csv"].stored, by_name["c.csv"].already_stored) == (100, 10)
    assert (by_name["d.jsonl.gz"].stored, by_name["d.jsonl.gz"].already_stored) == (100, 10)
    q = runs["streamed"][0].quarantine()
    (reason,) = q[q["source_file"].str.endswith("d.jsonl.gz")]["reason"]
    assert f"duplicate round_id {changed['round_id']!r} with different content" in reason and "b.jsonl" in reason
    assert sorted(overlaps) == [10, 10]  # the held route never streams


def test_in_store_finds_exactly_the_stored_ids_and_their_files(tmp_path, monkeypatch):
    """Against a reference set: hashes below, between and above the stored ones, the first and the last,
    read in batches smaller than the store, each found with its index file, as held hashes are."""
    store = Store(tmp_path / "store")
    for k in range(2):
        log = tmp_path / f"{k}.jsonl"
        log.write_bytes(b"\n".join(_lines([dict(r, round_id=f"F{k}-{r['round_id']}")
                                           for r in _records("baccarat", 1_000, seed=5)])) + b"\n")
        ingest_paths([log], store, workers=1)
    monkeypatch.setattr("auditkit.store.parquet.ROW_GROUP", 300)
    seen = SeenRounds(store, sources=1)
    assert seen.streamed and len(seen.current) == 2
    file_of = {int(h): k for k, rel in enumerate(seen.current)
               for h in store.read_index([rel], ["id_hash"])["id_hash"].to_numpy()}
    stored = np.array(sorted(file_of), np.uint64)
    rng = np.random.default_rng(0)
    probe = np.unique(np.concatenate([stored[::7], stored[[0, -1]], rng.integers(0, 2**63, 500, dtype=np.uint64),
                                      np.array([0, 2**64 - 1], np.uint64)]))
    hashes, where = seen.in_store(probe)
    assert np.array_equal(hashes, np.intersect1d(probe, stored))
    assert where.tolist() == [file_of[int(h)] for h in hashes] and set(where.tolist()) == {0, 1}
    assert len(seen.in_store(np.empty(0, np.uint64))[0]) == 0
    seen.hold()
    assert not seen.streamed and np.array_equal(seen.stored, stored)
    assert seen.stored_in.tolist() == [file_of[int(h)] for h in stored]


@pytest.mark.parametrize("lines_after", [100, 10**6])
def test_a_stored_round_is_looked_up_in_its_own_index_file_only(tmp_path, monkeypatch, lines_after):
    """A file grown since it was ingested, into a store of three sources, with two of its rounds changed.
    Repeating more stored rounds in a block than ``LINES_AFTER``, its 998 unchanged ones are known by
    their content hashes, read from no index; else they are looked up too. Every lookup reads the index
    file of its first ingest only, not the other two."""
    monkeypatch.setattr("auditkit.store.parquet.ROW_GROUP", 100)  # row groups of 100 rounds in each index
    monkeypatch.setattr(dedup, "LINES_AFTER", lines_after)
    store = Store(tmp_path / "store")
    records = _records("baccarat", 1_500, seed=8)
    for k in range(2):
        log = tmp_path / f"other{k}.jsonl"
        log.write_bytes(b"\n".join(_lines([dict(r, round_id=f"O{k}-{r['round_id']}") for r in records])) + b"\n")
    log = tmp_path / "day.jsonl"
    log.write_bytes(b"\n".join(_lines(records[:1_000])) + b"\n")
    ingest_paths([tmp_path / "other0.jsonl", log, tmp_path / "other1.jsonl"], store, workers=1)
    (day,) = [r for r in store.manifest() if r.path.endswith("day.jsonl")]
    day_index = f"_index/{day.sha256[:16]}.parquet"
    changed = [dict(r, outcome="tie" if r["outcome"] != "tie" else "banker") for r in (records[10], records[700])]
    log.write_bytes(b"\n".join(_lines(records[:10] + changed[:1] + records[11:700] + changed[1:] + records[701:]))
                    + b"\n")
    read: list[tuple[str, int]] = []
    real = Store.index_rows

    def spy(self, rel, hashes):
        rows = real(self, rel, hashes)
        read.append((rel, rows.num_rows))
        return rows

    monkeypatch.setattr(Store, "index_rows", spy)
    grown = ingest_paths([log], store, workers=1).sources[0]
    assert (grown.stored, grown.already_stored, grown.quarantined) == (500, 998, 2)
    assert read and {rel for rel, _n in read} == {day_index}
    assert sum(n for _rel, n in read) == (2 if lines_after == 100 else 1_000)
    reasons = store.quarantine()["reason"]
    assert sorted(reasons.str.extract(r"first stored from (.*) line (\d+)\)").itertuples(index=False)) == \
        [(str(log), "11"), (str(log), "701")]
    index = store.read_index([day_index])
    assert pq.ParquetFile(store.root / day_index).metadata.num_row_groups == 10
    some = pa.array(index["id_hash"].to_numpy()[[3, 450, 999]])
    assert store.index_rows(day_index, some).equals(index.filter(pc.is_in(index["id_hash"], value_set=some)))


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

    assert SeenRounds(store, sources=dedup.STREAM_SOURCES).streamed  # a run of few sources: whatever the size
    held, held_peak = peak(lambda: SeenRounds(store, sources=dedup.STREAM_SOURCES + 1))
    assert not held.streamed and len(held.stored) == n and held_peak >= 8 * n
    monkeypatch.setattr(dedup, "LOAD_LIMIT", n - 1)
    monkeypatch.setattr("auditkit.store.parquet.ROW_GROUP", 1_000)
    seen, start_peak = peak(lambda: SeenRounds(store, sources=dedup.STREAM_SOURCES + 1))
    assert seen.streamed and len(seen.stored) == 0 and held_peak - start_peak >= 8 * n  # the rest: the manifest
    source = np.unique(np.random.default_rng(1).integers(0, 2**63, 2_000, dtype=np.uint64))
    (found, _where), check_peak = peak(lambda: seen.in_store(source))
    assert len(found) == 0 and check_peak < 8 * n / 4


def test_a_first_block_is_probed_only_when_the_hashes_could_be_held(tmp_path, monkeypatch):
    """Above the load limit the hashes are never held, so a source's first block does not cost a pass
    over the store; below it, a first block repeating stored rounds has them held."""
    store = Store(tmp_path / "store")
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"\n".join(_lines(_records("baccarat", 500, seed=9))) + b"\n")
    ingest_paths([log], store, workers=1)
    stored = store.index(["id_hash"])["id_hash"].to_numpy()
    passes = []
    real = Store.index_batches
    monkeypatch.setattr(Store, "index_batches", lambda self, *a: passes.append(1) or real(self, *a))
    monkeypatch.setattr(dedup, "LOAD_LIMIT", 0)
    seen = SeenRounds(store, sources=1)
    seen.probe(stored[:50])
    assert seen.streamed and not passes
    monkeypatch.setattr(dedup, "LOAD_LIMIT", 10**9)
    seen = SeenRounds(store, sources=1)
    seen.probe(stored[:50] + np.uint64(1))  # none stored: still streamed, after one pass
    assert seen.streamed and len(passes) == 1
    seen.probe(stored[:50])
    assert not seen.streamed and len(seen.stored) == len(np.unique(stored))


def test_dedup_memory_of_the_command_line_and_of_a_job_reaches_the_check(tmp_path, overlaps):  # noqa: F811
    """``--dedup-memory 0`` (and a job's ``dedup_memory = 0``): no hash may be held, so a grown file is
    found sharing rounds at its commit and read again; by default the first block has them held."""
    from auditkit.cli import main

    records = _records("baccarat", 900, seed=12)
    log = tmp_path / "logs" / "day.jsonl"
    log.parent.mkdir()
    store = tmp_path / "store"

    def grow(upto: int) -> None:
        log.write_bytes(b"\n".join(_lines(records[:upto])) + b"\n")

    grow(300)
    assert main(["-q", "ingest", str(log), "--store", str(store)]) == 0
    grow(400)
    assert main(["-q", "ingest", str(log), "--store", str(store)]) == 0
    assert overlaps == []  # held after the first block
    grow(500)
    assert main(["-q", "ingest", str(log), "--store", str(store), "--dedup-memory", "0"]) == 0
    assert overlaps == [400]
    grow(600)
    job = tmp_path / "job.toml"
    job.write_text(f'inputs = ["logs"]\nstore = "{store}"\noutput = "out"\ndedup_memory = 0\n')
    assert main(["-q", "run", str(job)]) in (0, 1)
    assert overlaps == [400, 500]
    assert Store(store).count() == 600


def test_a_grown_export_read_through_its_profile_is_read_again_as_held(tmp_path, overlaps, monkeypatch):  # noqa: F811
    """A vendor export (an import profile's CSV, round ids made from its columns) grown since it was
    ingested: with the store's hashes streamed it is found sharing rounds and read again through the
    profile, and gives the store of the held check."""
    from auditkit.ingest.profiles import load_profile

    sample = Path(__file__).resolve().parents[1] / "sample_data" / "exports"
    profile = load_profile(sample / "baccarat_rounds.toml")
    lines = (sample / "baccarat_rounds.csv").read_text().splitlines(keepends=True)
    runs = {}
    for route in ("held", "streamed"):
        monkeypatch.setattr(dedup, "STREAM_SOURCES", 0 if route == "held" else 2)
        monkeypatch.setattr(dedup, "LOAD_LIMIT", 10**9 if route == "held" else 0)
        export = tmp_path / route / "baccarat_rounds.csv"
        export.parent.mkdir()
        store = Store(tmp_path / route / "store")
        export.write_text("".join(lines[:2001]))
        ingest_paths([export], store, profile=profile)
        export.write_text("".join(lines))
        runs[route] = store, ingest_paths([export], store, profile=profile)
    (held, h), (streamed, s) = runs["held"], runs["streamed"]
    assert overlaps == [2000]
    (rec,) = s.sources
    assert rec.already_stored == 2000 and rec.stored == len(lines) - 2001 and rec.balanced
    assert [(r.stored, r.already_stored, r.quarantined) for r in h.sources] == [(rec.stored, 2000, rec.quarantined)]
    assert held.count() == streamed.count() == len(lines) - 1
    key = ["round_id", "source_line"]
    for game in held.games():
        for day in held.dates(game):
            a, b = (st.read(game, day).to_pandas().drop(columns="source_file").sort_values(key, ignore_index=True)
                    for st in (held, streamed))
            pd.testing.assert_frame_equal(a, b)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.integers(1, 40))
@settings(max_examples=200, deadline=None)
def test_by_id_is_the_stable_sort_of_the_id_hashes_and_their_first_rows(values, spread):
    """The unstable sort with its stable fallback orders a block as the plain stable sort does, ties in line
    order (folding the values into ``spread`` buckets or not makes blocks with and without equal ids)."""
    from auditkit.ingest.dedup import by_id

    for ids in (np.array(values, np.uint64), np.array(values, np.uint64) % np.uint64(spread)):
        order, lead = by_id(ids)
        ref = np.argsort(ids, kind="stable")
        keys = ids[ref]
        assert np.array_equal(order, ref)
        assert np.array_equal(lead, np.r_[np.ones(min(len(ids), 1), bool), keys[1:] != keys[:-1]])
