"""The manifest checkpoint (store format 2, issue 41 item 1): readers take the entries it holds from it and
read only the others from their own files; an entry changed since is read from its file; a damaged or
disagreeing checkpoint is never trusted over the entries, and ``auditkit verify`` reports it."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from test_job import day_records, write_log
from test_verify import make_store, verify_json

import auditkit
from auditkit.cli import main
from auditkit.ingest.sources import ingest_paths
from auditkit.store import CHECKPOINT, STORE_FORMAT, Store
from auditkit.store.manifest import CHECKPOINT_SCHEMA


def _opened(monkeypatch) -> list[str]:
    """The manifest entries read from their own files from now on."""
    opened: list[str] = []
    real = Store._source_record
    monkeypatch.setattr(Store, "_source_record", lambda self, rel: opened.append(rel) or real(self, rel))
    return opened


def _entries(store: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text("utf-8")) for p in (store / "_manifest").glob("*.json")}


def _held(store: Path) -> dict[str, dict]:
    """Entry file name -> {"size", "mtime_ns", "entry"} of the checkpoint's rows, as the JSON checkpoint held them."""
    rows = pq.read_table(store / CHECKPOINT).to_pylist()
    fields = [f for f in CHECKPOINT_SCHEMA.names if f not in ("name", "entry_size", "entry_mtime_ns")]
    return {r["name"]: {"size": r["entry_size"], "mtime_ns": r["entry_mtime_ns"],
                        "entry": {**{f: r[f] for f in fields}, "games": dict(r["games"])}} for r in rows}


def _write_held(store: Path, held: dict[str, dict], **meta: str) -> None:
    """Write the checkpoint again with these rows (as :func:`_held` gives them) and metadata."""
    old = pq.read_schema(store / CHECKPOINT).metadata
    rows = [{"name": n, "entry_size": h["size"], "entry_mtime_ns": h["mtime_ns"],
             **{**h["entry"], "games": list(h["entry"]["games"].items())}} for n, h in held.items()]
    schema = CHECKPOINT_SCHEMA.with_metadata({**{k.decode(): v.decode() for k, v in old.items()}, **meta})
    pq.write_table(pa.Table.from_pylist(rows, schema), store / CHECKPOINT)


def test_an_ingest_writes_the_checkpoint_and_readers_open_no_entry(tmp_path, monkeypatch, capsys):
    store, _ = make_store(tmp_path)
    meta = pq.read_schema(store / CHECKPOINT).metadata
    assert meta[b"store_format"] == str(STORE_FORMAT).encode() and \
        meta[b"written_by"] == f"auditkit {auditkit.__version__}".encode()
    assert {k: v["entry"] for k, v in _held(store).items()} == _entries(store)
    assert not (store / "_manifest.checkpoint.json").exists()
    opened = _opened(monkeypatch)
    records = Store(store).manifest()
    assert len(records) == 3 and opened == []
    assert main(["-q", "validate", str(store), "--out", str(tmp_path / "f.csv")]) in (0, 1) and opened == []


def test_only_the_entries_newer_than_the_checkpoint_are_read(tmp_path, monkeypatch):
    store, _ = make_store(tmp_path)
    write_log(tmp_path / "more" / "day9.jsonl", day_records(9, "d9"))
    ingest_paths([tmp_path / "more"], Store(store))  # not the sole writer: the checkpoint is left as it was
    assert len(_held(store)) == 3
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
    data = _held(store)
    name = sorted(data)[0]
    data[name]["entry"]["stored"] += 1  # a copy readers would take (the entry's size and time)
    data["f" * 64 + ".json"] = data[sorted(data)[1]]  # a copy of no entry
    _write_held(store, data)
    code, out = verify_json(store, capsys)
    assert code == 1
    assert f"{CHECKPOINT}: its copy of _manifest/{name} is not the entry, at the entry's size and time " \
           "(readers read the copy)" in out["problems"]
    assert f"{CHECKPOINT}: holds _manifest/{'f' * 64}.json, which is not there (readers ignore the copy)" in out["problems"]


def test_a_checkpoint_of_a_newer_auditkit_is_refused_naming_both_versions(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    _write_held(store, _held(store), store_format=str(STORE_FORMAT + 1), written_by="auditkit 9.1.0")
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
    held = _held(tmp_path / "s")
    assert held[f"{'c' * 64}.json"]["entry"]["stored"] == 0 == _entries(tmp_path / "s")[f"{'c' * 64}.json"]["stored"]


def test_a_validation_lists_the_rounds_not_the_index(tmp_path, monkeypatch):
    """A reader checks the parts it reads against one listing of ``rounds/``; the index files (one a source)
    are listed only by an ingest, which checks them."""
    from auditkit.store import reads
    from auditkit.validate import collect

    store, _ = make_store(tmp_path)
    listed: list[str] = []
    real = reads.listing
    monkeypatch.setattr(reads, "listing", lambda files, folder: listed.append(folder) or real(files, folder))
    collect(Store(store))
    assert listed == ["rounds"]


def test_a_validation_makes_no_record_of_the_entries_the_checkpoint_holds(tmp_path, monkeypatch):
    """Store format 3: the entries the checkpoint holds are read as columns and the layout built from them, so a
    read of 20,000 entries makes no 20,000 records (it decoded 15 MB of JSON into as many ``SourceRecord``s)."""
    from auditkit.store import SourceRecord
    from auditkit.validate import collect

    store, _ = make_store(tmp_path)
    want = collect(Store(store))[0].to_csv()
    made: list[str] = []
    real = SourceRecord.__init__
    monkeypatch.setattr(SourceRecord, "__init__", lambda self, *a, **k: made.append(a[0] if a else k["sha256"])
                        or real(self, *a, **k))
    assert collect(Store(store))[0].to_csv() == want and made == []
    assert len(Store(store).manifest()) == 3 and len(made) == 3  # made when asked for


def test_a_truncated_checkpoint_is_warned_about_and_every_entry_read(tmp_path, monkeypatch, caplog):
    store, _ = make_store(tmp_path)
    want = Store(store).manifest()
    data = (store / CHECKPOINT).read_bytes()
    (store / CHECKPOINT).write_bytes(data[:len(data) // 2])
    opened = _opened(monkeypatch)
    with caplog.at_level(logging.WARNING, "auditkit.store"):
        assert Store(store).manifest() == want
    assert len(opened) == 3 and f"{store / CHECKPOINT} is unreadable" in caplog.text


def test_a_checkpoint_of_columns_a_newer_auditkit_added_is_refused(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    table = pq.read_table(store / CHECKPOINT)
    pq.write_table(table.append_column("shards", pa.array([None] * table.num_rows, pa.string())), store / CHECKPOINT)
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv")]) == 2
    assert f"checkpoint {store / CHECKPOINT} has columns auditkit {auditkit.__version__} (store format " \
           f"{STORE_FORMAT}) does not know: shards" in capsys.readouterr().err


def test_a_format_2_store_reads_its_json_checkpoint_and_its_next_writer_replaces_it(tmp_path, monkeypatch):
    """A store of format 2 (tests/fixtures/store-format-2: a JSON checkpoint) is read through its checkpoint;
    the next sole writer writes the checkpoint as columns and removes the JSON one."""
    import shutil

    from auditkit.store import CHECKPOINT_JSON

    root = tmp_path / "store"
    shutil.copytree(Path(__file__).parent / "fixtures" / "store-format-2" / "store", root)
    assert (root / CHECKPOINT_JSON).exists() and not (root / CHECKPOINT).exists()
    # a checkout does not keep the entries' times: give them those the checkpoint copied (as written)
    for name, held in json.loads((root / CHECKPOINT_JSON).read_text("utf-8"))["entries"].items():
        assert (root / "_manifest" / name).stat().st_size == held["size"]
        os.utime(root / "_manifest" / name, ns=(held["mtime_ns"], held["mtime_ns"]))
    opened = _opened(monkeypatch)
    records = Store(root).manifest()
    assert len(records) == 13 and opened == []  # every entry from the JSON checkpoint
    want = {r.sha256: r for r in records}
    write_log(tmp_path / "a" / "day.jsonl", day_records(1, "a"))
    _locked_ingest(Store(root), tmp_path / "a")
    assert (root / CHECKPOINT).exists() and not (root / CHECKPOINT_JSON).exists()
    opened.clear()
    again = {r.sha256: r for r in Store(root).manifest()}
    assert opened == [] and len(again) == 14 and {k: again[k] for k in want} == want


def test_an_auditkit_of_store_format_2_refuses_a_store_of_format_3(tmp_path, monkeypatch, capsys):
    """The older writer (and reader) refuses the store by its stamp, naming both versions: it would not see the
    columnar checkpoint and would leave it stale."""
    from auditkit.store import manifest as store_module

    store, _ = make_store(tmp_path)
    assert json.loads((store / "_store.json").read_text("utf-8"))["store_format"] == 3
    monkeypatch.setattr(store_module, "STORE_FORMAT", 2)
    write_log(tmp_path / "b" / "day.jsonl", day_records(5, "b"))
    for argv in (["ingest", str(tmp_path / "b"), "--store", str(store)], ["validate", str(store), "--out",
                                                                          str(tmp_path / "v.csv")]):
        capsys.readouterr()
        assert main(argv) == 2
        assert f"store {store} was written by auditkit {auditkit.__version__} (store format 3); this is auditkit " \
               f"{auditkit.__version__}, which reads store formats up to 2: upgrade auditkit" in capsys.readouterr().err
