"""The store knows its version (issue 41, item 7): a format version in the store and in each manifest
entry, a clear refusal naming both versions for a store of a newer auditkit, and every older layout read
(stores written by earlier releases kept under tests/fixtures/store-<release>/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_job import day_records, write_job, write_log

import auditkit
from auditkit.cli import main
from auditkit.store import STORE_FORMAT, Store

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RELEASES = sorted(p.name for p in FIXTURES.glob("store-*"))


def _copy(release: str, tmp_path: Path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(FIXTURES / release / "store", store)
    return store


@pytest.mark.parametrize("release", RELEASES)
def test_a_store_written_by_an_earlier_release_reads_as_that_release_read_it(release, tmp_path, capsys):
    store = _copy(release, tmp_path)
    assert main(["-q", "verify", str(store)]) == 0
    assert main(["-q", "report", "--store", str(store), "--out", str(tmp_path / "r.csv")]) == 0
    assert (tmp_path / "r.csv").read_bytes() == (FIXTURES / release / "report.csv").read_bytes()
    assert main(["-q", "validate", str(store), "--out", str(tmp_path / "v.csv")]) == 1  # checked again: the same
    assert main(["-q", "report", "--store", str(store), "--out", str(tmp_path / "r2.csv")]) == 0
    assert (tmp_path / "r2.csv").read_bytes() == (FIXTURES / release / "report.csv").read_bytes()


@pytest.mark.parametrize("release", RELEASES)
def test_the_next_writer_stamps_the_store_and_its_entries_with_the_format(release, tmp_path, capsys):
    store = _copy(release, tmp_path)
    old = {p.name: p.read_bytes() for p in (store / "_manifest").glob("*.json")}
    old_formats = {json.loads(v).get("store_format", 0) for v in old.values()}
    write_log(tmp_path / "logs" / "day1.jsonl", day_records(1, "n"))
    assert main(["-q", "ingest", str(tmp_path / "logs"), "--store", str(store)]) == 0
    stamp = json.loads((store / "_store.json").read_text("utf-8"))
    assert stamp == {"store_format": STORE_FORMAT, "written_by": f"auditkit {auditkit.__version__}"}
    entries = {p.name: p.read_bytes() for p in (store / "_manifest").glob("*.json")}
    assert {k: v for k, v in entries.items() if k in old} == old  # older entries are left as written
    (new,) = set(entries) - set(old)
    assert json.loads(entries[new])["store_format"] == STORE_FORMAT
    assert {r.store_format for r in Store(store).manifest()} == old_formats | {STORE_FORMAT}  # 0: before the stamp
    assert main(["-q", "verify", str(store)]) == 0


def _commands(store: Path, tmp_path: Path) -> list[list[str]]:
    write_log(tmp_path / "logs" / "day1.jsonl", day_records(1, "n"))
    job = write_job(tmp_path, store=str(store))
    return [["ingest", str(tmp_path / "logs"), "--store", str(store)], ["validate", str(store), "--out", str(tmp_path / "v.csv")],
            ["report", "--store", str(store), "--out", str(tmp_path / "r.csv")], ["verify", str(store)],
            ["run", str(job)], ["review", "list", "--store", str(store)]]


def test_a_store_stamped_by_a_newer_auditkit_is_refused_naming_both_versions(tmp_path, capsys):
    store = _copy(RELEASES[-1], tmp_path)
    (store / "_store.json").write_text(json.dumps({"store_format": STORE_FORMAT + 1, "written_by": "auditkit 9.1.0"}))
    for argv in _commands(store, tmp_path):
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert (f"store {store} was written by auditkit 9.1.0 (store format {STORE_FORMAT + 1}); this is auditkit "
                f"{auditkit.__version__}, which reads store formats up to {STORE_FORMAT}: upgrade auditkit") in err, err


@pytest.mark.parametrize("stamped", [True, False])
def test_a_manifest_entry_of_a_newer_auditkit_is_refused_naming_both_versions(stamped, tmp_path, capsys):
    """The issue's case: an entry with keys this version does not know (was: Python's
    `SourceRecord.__init__() got an unexpected keyword argument`)."""
    store = _copy(RELEASES[-1], tmp_path)
    entry = sorted((store / "_manifest").glob("*.json"))[0]
    rec = json.loads(entry.read_text("utf-8"))
    rec["shards"] = [{"path": "rounds/x", "codec": "zstd"}]
    if stamped:
        rec.update(store_format=STORE_FORMAT + 1, written_by="auditkit 9.1.0")
    entry.write_text(json.dumps(rec))
    for argv in _commands(store, tmp_path)[:-1]:  # review list reads no manifest entry (the store's stamp only)
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert str(entry) in err and "unexpected keyword" not in err, err
        if stamped:
            assert (f"was written by auditkit 9.1.0 (store format {STORE_FORMAT + 1}); this is auditkit "
                    f"{auditkit.__version__}, which reads store formats up to {STORE_FORMAT}") in err, err
        else:
            assert (f"has keys auditkit {auditkit.__version__} (store format {STORE_FORMAT}) does not know: shards; "
                    "written by a newer auditkit?") in err, err


def test_a_store_stamp_that_is_not_one_is_a_damaged_store(tmp_path, capsys):
    store = _copy(RELEASES[-1], tmp_path)
    (store / "_store.json").write_text("{not json")
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv")]) == 2
    assert f"{store / '_store.json'} is unreadable" in capsys.readouterr().err
