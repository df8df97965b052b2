"""The manifest checkpoint (store format 2, issue 41 item 1): readers take the entries it holds from it and
read only the others from their own files; an entry changed since is read from its file; a damaged or
disagreeing checkpoint is never trusted over the entries, and ``auditkit verify`` reports it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from test_job import day_records, write_log
from test_verify import make_store, verify_json

import auditkit
from auditkit.cli import main
from auditkit.ingest.sources import ingest_paths
from auditkit.store import CHECKPOINT, STORE_FORMAT, Store


def _opened(monkeypatch) -> list[str]:
    """The manifest entries read from their own files from now on."""
    opened: list[str] = []
    real = Store._source_record
    monkeypatch.setattr(Store, "_source_record", lambda self, rel: opened.append(rel) or real(self, rel))
    return opened


def _entries(store: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text("utf-8")) for p in (store / "_manifest").glob("*.json")}


def test_an_ingest_writes_the_checkpoint_and_readers_open_no_entry(tmp_path, monkeypatch, capsys):
    store, _ = make_store(tmp_path)
    held = json.loads((store / CHECKPOINT).read_text("utf-8"))
    assert held["store_format"] == STORE_FORMAT and held["written_by"] == f"auditkit {auditkit.__version__}"
    assert {k: v["entry"] for k, v in held["entries"].items()} == _entries(store)
    opened = _opened(monkeypatch)
    records = Store(store).manifest()
    assert len(records) == 3 and opened == []
    assert main(["-q", "validate", str(store), "--out", str(tmp_path / "f.csv")]) in (0, 1) and opened == []


def test_only_the_entries_newer_than_the_checkpoint_are_read(tmp_path, monkeypatch):
    store, _ = make_store(tmp_path)
    write_log(tmp_path / "more" / "day9.jsonl", day_records(9, "d9"))
    ingest_paths([tmp_path / "more"], Store(store))  # not the sole writer: the checkpoint is left as it was
    assert len(json.loads((store / CHECKPOINT).read_text("utf-8"))["entries"]) == 3
    opened = _opened(monkeypatch)
    assert len(Store(store).manifest()) == 4 and len(opened) == 1


def test_an_entry_changed_since_the_checkpoint_is_read_from_its_file(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    entry = sorted((store / "_manifest").glob("*.json"))[0]
    rec = json.loads(entry.read_text("utf-8"))
    part = next(f for f in rec["files"] if f["path"].startswith("rounds/"))
    part["rows"] += 1
    entry.write_text(json.dumps(rec))  # another size and time than the copy's
    assert main(["validate", str(store), "--out", str(tmp_path / "f.csv")]) == 2
    assert part["path"] in capsys.readouterr().err  # the entry is read, not the checkpoint's copy


def test_an_unreadable_checkpoint_is_warned_about_and_every_entry_read(tmp_path, monkeypatch, capsys, caplog):
    store, _ = make_store(tmp_path)
    want = Store(store).manifest()
    (store / CHECKPOINT).write_text("{not json")
    opened = _opened(monkeypatch)
    with caplog.at_level(logging.WARNING, "auditkit.store"):
        assert Store(store).manifest() == want
    assert len(opened) == 3 and f"{store / CHECKPOINT} is unreadable" in caplog.text
    code, out = verify_json(store, capsys)
    assert code == 1 and [p for p in out["problems"] if p.startswith(f"{CHECKPOINT}: unreadable")]


def test_verify_reports_a_checkpoint_unlike_its_entries(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    assert verify_json(store, capsys)[0] == 0
    data = json.loads((store / CHECKPOINT).read_text("utf-8"))
    name = sorted(data["entries"])[0]
    data["entries"][name]["entry"]["stored"] += 1  # a copy readers would take (the entry's size and time)
    data["entries"]["f" * 64 + ".json"] = data["entries"][sorted(data["entries"])[1]]  # a copy of no entry
    (store / CHECKPOINT).write_text(json.dumps(data))
    code, out = verify_json(store, capsys)
    assert code == 1
    assert f"{CHECKPOINT}: its copy of _manifest/{name} is not the entry, at the entry's size and time " \
           "(readers read the copy)" in out["problems"]
    assert f"{CHECKPOINT}: holds _manifest/{'f' * 64}.json, which is not there (readers ignore the copy)" in out["problems"]


def test_a_checkpoint_of_a_newer_auditkit_is_refused_naming_both_versions(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    data = json.loads((store / CHECKPOINT).read_text("utf-8"))
    data.update(store_format=STORE_FORMAT + 1, written_by="auditkit 9.1.0")
    (store / CHECKPOINT).write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv")]) == 2
    assert (f"checkpoint {store / CHECKPOINT} was written by auditkit 9.1.0 (store format {STORE_FORMAT + 1}); "
            f"this is auditkit {auditkit.__version__}, which reads store formats up to {STORE_FORMAT}") \
        in capsys.readouterr().err


def _locked_ingest(store: Store, folder: Path) -> None:
    with store.lock(5, command="ingest"):  # as `auditkit ingest`: the store's sole writer
        ingest_paths([folder], store)


def test_the_checkpoint_is_rewritten_when_the_entries_beyond_it_are_many(tmp_path, monkeypatch):
    from auditkit.simulate import simulate_into_store
    from auditkit.store import manifest as store_module

    root = tmp_path / "store"
    simulate_into_store(Store(root), "baccarat", 3000, chunk=100)  # 30 sources, no checkpoint
    calls: list[int] = []
    real = Store.write_checkpoint
    monkeypatch.setattr(Store, "write_checkpoint", lambda self: calls.append(len(self._known)) or real(self))
    write_log(tmp_path / "a" / "day.jsonl", day_records(1, "a"))
    _locked_ingest(Store(root), tmp_path / "a")
    assert calls == [31]  # all 31 beyond it (none held)
    write_log(tmp_path / "b" / "day.jsonl", day_records(2, "b"))
    _locked_ingest(Store(root), tmp_path / "b")
    assert calls == [31]  # 1 beyond 31: under a tenth, left for later
    opened = _opened(monkeypatch)
    assert len(Store(root).manifest()) == 32 and len(opened) == 1
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 2)
    for k in range(33):  # within one command: rewritten when as many are beyond it as it holds
        write_log(tmp_path / "c" / f"day{k}.jsonl", day_records(20 + k, f"c{k}"))
    _locked_ingest(Store(root), tmp_path / "c")
    assert calls == [31, 62]  # 31 beyond 31 held (with the 1 left before); the last 3 under a tenth of 62


def test_the_checkpoint_copies_each_entry_as_written_not_as_its_record_changed_after(tmp_path):
    from auditkit.store import SourceRecord

    store = Store(tmp_path / "s")
    with store.lock(5, command="test"):
        store.manifest()  # the sole writer's view, kept up to date by its commits
        rec = SourceRecord(sha256="c" * 64, path="x.jsonl", size=1, format="jsonl")
        store.commit_source(rec)
        rec.stored = 99  # the caller's record changed after its commit
    held = json.loads((tmp_path / "s" / CHECKPOINT).read_text("utf-8"))["entries"]
    assert held[f"{'c' * 64}.json"]["entry"]["stored"] == 0 == _entries(tmp_path / "s")[f"{'c' * 64}.json"]["stored"]


def test_a_validation_lists_the_rounds_not_the_index(tmp_path, monkeypatch):
    """A reader checks the parts it reads against one listing of ``rounds/``; the index files (one a source)
    are listed only by an ingest, which checks them."""
    from auditkit.store import _LocalFiles
    from auditkit.validate import collect

    store, _ = make_store(tmp_path)
    listed: list[str] = []
    real = _LocalFiles.sizes
    monkeypatch.setattr(_LocalFiles, "sizes", lambda self, folder: listed.append(folder) or real(self, folder))
    collect(Store(store))
    assert listed == ["rounds"]
