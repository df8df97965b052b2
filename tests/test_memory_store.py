"""The one-shot route's store held in memory (``Store.in_memory``): the same store, index, quarantine,
accounting and findings as a folder, whether its files are held, partly spilled to its folder or all
spilled, and whether one process parses the logs or workers send their rows back; held files never
encoded; its memory bounded by its limit; the route taken when the one-shot runs in one process, or on
local workers over plain logs of at most ``HOLD_LOG_BYTES``."""

from __future__ import annotations

import argparse
import pickle
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from test_parallel_ingest import MAX_LINE, _assert_same, make_inputs

from auditkit.cli import main
from auditkit.cli import validate as validate_cli
from auditkit.ingest import parallel
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store
from auditkit.workers import default_workers

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory, inputs):
    earlier, logs = inputs
    store = Store(tmp_path_factory.mktemp("folder") / "store")
    ingest_paths([earlier], store, max_line=MAX_LINE)
    return store, ingest_paths([logs], store, max_line=MAX_LINE)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("limit", [1 << 30, 200_000, 0])
def test_a_store_in_memory_is_the_folders_held_spilled_or_both(tmp_path, inputs, folder, limit, workers,
                                                                monkeypatch):
    """Every case of the parallel-ingest inputs (duplicates within a file, across files and against the
    rounds stored before, same and other content, bad, blank and long lines, gzip, CSV with companions,
    a copied file): the folder's store, whether every file is held, some are spilled or all are; read by
    this process, or by two workers that send their rows back (the big file cut into byte ranges of
    64 KiB, its lines numbered here across them)."""
    if workers > 1:
        monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
        monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)
    writes = []  # every Parquet file encoded, whole or as a stream
    real = pa.parquet.write_table
    monkeypatch.setattr(pa.parquet, "write_table", lambda *a, **k: writes.append(a[1]) or real(*a, **k))

    class Writer(pa.parquet.ParquetWriter):
        def __init__(self, where, *a, **k):
            writes.append(where)
            super().__init__(where, *a, **k)

    monkeypatch.setattr(pa.parquet, "ParquetWriter", Writer)
    earlier, logs = inputs
    store = Store.in_memory(limit, tmp_path)
    ingest_paths([earlier], store, max_line=MAX_LINE)
    report = ingest_paths([logs], store, max_line=MAX_LINE, workers=workers)
    _assert_same(folder[0], store, folder[1], report)
    files = store._files
    assert files.held <= limit
    spilled = sorted(tmp_path.glob("*.parquet"))
    assert len(spilled) == len(files.spilled) and len(writes) == len(spilled)  # only spilled files are encoded
    if limit == 1 << 30:
        assert not spilled and files.held > 0
    elif limit == 0:
        assert not any(t.num_rows for t in files.tables.values()) and spilled  # an empty file takes 0 bytes
    else:
        assert files.tables and spilled


def test_a_store_in_memory_is_its_own_processes(tmp_path):
    store = Store.in_memory(1 << 20, tmp_path)
    with pytest.raises(TypeError, match="in its own process"):
        pickle.dumps(store)


def test_a_store_in_memory_lists_deletes_and_sizes_its_files(tmp_path):
    files = Store.in_memory(100, tmp_path)._files
    small = pa.table({"x": pa.array([1, 2, 3], pa.int64())})  # 24 bytes
    big = pa.table({"x": pa.array(range(100), pa.int64())})    # 800 bytes: past the limit
    assert files.write_parquet("rounds/game=g/date=d/part-a.parquet", small) == (24, "")
    assert files.write_parquet("rounds/game=g/date=d/part-b.parquet", big) == (800, "")
    files.write_bytes("_manifest/m.json", b"{}")
    assert files.held == 24 and list(files.spilled) == ["rounds/game=g/date=d/part-b.parquet"]
    assert sorted(files.files("rounds/game=*/date=*/part-*.parquet")) == [
        "rounds/game=g/date=d/part-a.parquet", "rounds/game=g/date=d/part-b.parquet"]
    assert files.files("_manifest/*.json") == ["_manifest/m.json"] and not files.files("_index/*.parquet")
    assert files.children("rounds") == ["game=g"] and files.is_dir("rounds/game=g") and not files.is_dir("x")
    assert files.sizes("rounds") == {"rounds/game=g/date=d/part-a.parquet": 24,
                                     "rounds/game=g/date=d/part-b.parquet": 800}
    both = files.dataset(sorted(files.sizes("rounds")), small.schema).to_table()
    assert both["x"].to_pylist() == [1, 2, 3, *range(100)]
    assert files.num_rows("rounds/game=g/date=d/part-b.parquet") == 100
    for rel in list(files.sizes("rounds")):
        files.delete(rel)
    assert files.held == 0 and not list(tmp_path.glob("*.parquet")) and not files.exists("rounds")
    with pytest.raises(FileNotFoundError):
        files.read_bytes("_manifest/x.json")


def _args(paths: list[Path], workers: int | None = None, scheduler: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(paths=[str(p) for p in paths], workers=workers, scheduler=scheduler,
                              follow_symlinks=False)


def test_the_one_shot_holds_its_store_in_one_process_or_over_plain_logs(tmp_path, monkeypatch):
    logs = ROOT / "sample_data" / "logs"  # gzip among them
    plain = sorted(logs.glob("*.jsonl"))
    assert plain and validate_cli.holds_its_store(_args([logs], 1), None)
    assert validate_cli.holds_its_store(_args([logs]), None)  # small: one process by default
    assert not validate_cli.holds_its_store(_args([logs], 2), None)  # a gzip log: the workers write a folder
    assert validate_cli.holds_its_store(_args(plain, 2), None)  # plain logs: its workers send their rows back
    assert not validate_cli.holds_its_store(_args(plain, None, "tcp://127.0.0.1:8786"), None)
    monkeypatch.setattr(validate_cli, "HOLD_LOG_BYTES", sum(p.stat().st_size for p in plain) - 1)
    assert not validate_cli.holds_its_store(_args(plain, 2), None)  # more than HOLD_LOG_BYTES: a folder
    assert validate_cli.holds_its_store(_args(plain[1:], 2), None)
    monkeypatch.setattr(parallel, "AUTO_MIN_BYTES", 1)  # as if the logs were large: the machine's cores
    assert validate_cli.holds_its_store(_args([logs]), None) == (default_workers() == 1)
    assert validate_cli.holds_its_store(_args([logs], 1), None)


@pytest.mark.parametrize("hold", [512 << 20, 100_000])
def test_the_one_shot_held_or_spilled_reports_what_the_folder_route_does(tmp_path, inputs, monkeypatch, hold):
    """``validate LOGS`` in one process (its store held, then partly spilled) and on two workers (a
    folder): the same findings (CSV and Parquet), summaries, coverage and quarantine report."""
    _earlier, logs = inputs
    stores = []
    real = Store.in_memory
    monkeypatch.setattr(Store, "in_memory", lambda *a, **k: stores.append(real(*a, **k)) or stores[-1])
    monkeypatch.setattr(validate_cli, "HOLD_BYTES", hold)
    out = {}
    for workers in ("1", "2"):
        folder = tmp_path / workers
        assert main(["-q", "validate", str(logs), "--out", str(folder / "f.csv"), "--workers", workers,
                     "--summaries", str(folder), "--quarantine-report", str(folder / "q.csv"),
                     "--parquet", str(folder / "f.parquet"), "--no-progress"]) == 1
        out[workers] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    assert len(stores) == 1  # the one-process run only
    files = stores[0]._files
    assert files.held <= hold and (bool(files.spilled) == (hold < 512 << 20))
    assert out["1"].keys() == out["2"].keys() and len(out["1"]) > 5
    for name in out["1"]:
        assert out["1"][name] == out["2"][name], name
    assert pd.read_csv(tmp_path / "1" / "q.csv")["reason"].str.contains("duplicate round_id").any()


def test_the_one_shot_on_workers_over_plain_logs_reports_what_one_process_does(tmp_path, inputs, monkeypatch):
    """``validate LOGS --workers 2`` over plain logs (bad, duplicate and long lines; byte ranges of 64 KiB):
    its workers parse and send their rows back into a held store; the same outputs as one process and as
    the workers writing a folder (past ``HOLD_LOG_BYTES``)."""
    _earlier, inputs_logs = inputs
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a_big.jsonl", "b_again.jsonl", "d_same_as_b.jsonl"):
        shutil.copy(inputs_logs / name, logs / name)
    monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
    monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)
    stores = []
    real = Store.in_memory
    monkeypatch.setattr(Store, "in_memory", lambda *a, **k: stores.append(real(*a, **k)) or stores[-1])
    out = {}
    for name, workers, hold in (("one", "1", 1 << 30), ("held", "2", 1 << 30), ("folder", "2", 0)):
        monkeypatch.setattr(validate_cli, "HOLD_LOG_BYTES", hold)
        folder = tmp_path / name
        assert main(["-q", "validate", str(logs), "--out", str(folder / "f.csv"), "--workers", workers,
                     "--summaries", str(folder), "--quarantine-report", str(folder / "q.csv"),
                     "--parquet", str(folder / "f.parquet"), "--no-progress"]) == 1
        out[name] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    assert len(stores) == 2 and all(s._files.held for s in stores)  # one process, then the workers held it
    assert out["one"].keys() == out["held"].keys() == out["folder"].keys() and len(out["one"]) > 5
    for name in out["one"]:
        assert out["one"][name] == out["held"][name] == out["folder"][name], name
    quarantine = pd.read_csv(tmp_path / "held" / "q.csv")
    assert quarantine["reason"].str.contains("duplicate round_id").any() and quarantine["line"].nunique() > 3


def test_the_one_shot_leaves_no_folder_behind(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    logs = tmp_path / "logs"
    shutil.copytree(ROOT / "sample_data" / "logs", logs)
    assert main(["-q", "validate", str(logs), "--out", str(tmp_path / "f.csv")]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv", "logs"]


@pytest.mark.parametrize("abort", [False, True])
def test_a_stream_in_memory_goes_on_into_the_spill_folder_past_the_limit(tmp_path, abort):
    """An index or quarantine written table by table counts against the limit as it comes: past it, what
    it held and the rest go into one Parquet file (a quarantine of millions of lines stays bounded)."""
    files = Store.in_memory(10_000, tmp_path)._files
    schema = pa.schema([("source_file", pa.string()), ("line", pa.int64())])
    closed = []
    stream = files.stream("_quarantine/q.parquet", schema, lambda *a: closed.append(a))
    written = []
    for k in range(40):  # 100 rows of 13 bytes and 100 of 8 each: about 2 KB a table
        table = pa.table({"source_file": ["logs/a.jsonl"] * 100, "line": range(k * 100, k * 100 + 100)}, schema)
        stream.write(table)
        written.append(table)
        assert files.held <= files.limit
    assert list(tmp_path.glob("*.parquet"))
    if abort:
        stream.abort()
        assert files.held == 0 and not list(tmp_path.glob("*.parquet")) and not closed
        return
    stream.close()
    assert files.held == 0 and list(files.spilled) == ["_quarantine/q.parquet"]
    assert files.dataset(["_quarantine/q.parquet"], schema).to_table().equals(pa.concat_tables(written))
    assert closed == [("_quarantine/q.parquet", 4000, sum(t.nbytes for t in written), "")]
    small = files.stream("_index/i.parquet", schema, None)  # under the limit: held, as one table
    small.write(written[0])
    small.close()
    assert "_index/i.parquet" in files.tables and 0 < files.held <= files.limit
