"""Issue 25 item 3: the manifest is the truth. Each entry records its files (rows, bytes, SHA-256 of the
bytes written); validate, report and ingest read exactly the listed parts; a listed part missing or of
another size or row count is exit 2 naming it; an unlisted file is ignored with one warning; a missing
or disagreeing index is rebuilt by the next ingest, never taken as empty."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from test_job import day_records, write_log
from test_verify import _flip, a_part, make_store

from auditkit.cli import main
from auditkit.simulate import simulate_into_store
from auditkit.store import Store


def entries(store: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((store / "_manifest").glob("*.json"))]


def validate(store: Path, tmp_path: Path, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["validate", str(store), "--out", str(tmp_path / "f.csv")])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_manifest_records_each_file_as_written(tmp_path):
    store, _ = make_store(tmp_path)
    for rec in entries(store):
        assert {f["path"].split("/")[0] for f in rec["files"]} == {"rounds", "_index"}  # no line quarantined: no file
        for f in rec["files"]:
            data = (store / f["path"]).read_bytes()
            assert f["bytes"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
            assert f["rows"] == pq.ParquetFile(store / f["path"]).metadata.num_rows
    sim = Store(tmp_path / "sim")
    simulate_into_store(sim, "baccarat", 3000, chunk=1000)
    for rec in entries(tmp_path / "sim"):  # a simulated source: parts only
        assert rec["files"] and all(f["path"].startswith("rounds/") for f in rec["files"])
        assert sum(f["rows"] for f in rec["files"]) == rec["stored"]


def test_a_deleted_or_cut_part_is_exit_2_naming_it(tmp_path, capsys):
    store, logs = make_store(tmp_path)
    part = a_part(store)
    rel = part.relative_to(store).as_posix()
    saved = part.read_bytes()
    part.unlink()
    code, _, err = validate(store, tmp_path, capsys)
    assert code == 2 and rel in err and "missing" in err
    write_log(tmp_path / "again" / "day0.jsonl", day_records(0, "d0") + [day_records(0, "new")[0]])
    assert main(["-q", "ingest", "--store", str(store), str(tmp_path / "again")]) == 2  # not "already stored"
    assert rel in capsys.readouterr().err
    part.write_bytes(saved[: len(saved) // 2])
    code, _, err = validate(store, tmp_path, capsys)
    assert code == 2 and rel in err and "bytes, the manifest says" in err


def test_rows_other_than_the_manifest_says_are_exit_2(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    entry = sorted((store / "_manifest").glob("*.json"))[0]
    rec = json.loads(entry.read_text())
    part = next(f for f in rec["files"] if f["path"].startswith("rounds/"))
    part["rows"] += 1
    entry.write_text(json.dumps(rec))
    code, _, err = validate(store, tmp_path, capsys)
    assert code == 2 and "rows, the manifest says" in err and part["path"] in err


def test_a_copied_part_is_read_once_with_one_warning(tmp_path, capsys, caplog):
    store, _ = make_store(tmp_path)
    code, clean, _ = validate(store, tmp_path, capsys)
    part = a_part(store)
    for name in (part.name.replace(".parquet", "-copy.parquet"), "copy.parquet"):
        shutil.copy(part, part.with_name(name))
    with caplog.at_level(logging.WARNING, "auditkit.store"):
        again, out, _ = validate(store, tmp_path, capsys)
    assert again == code and out == clean  # the same rounds checked, the same findings
    assert "rounds checked: 234" in out
    warned = [r.getMessage() for r in caplog.records if "not in the manifest" in r.getMessage()]
    assert len(warned) == 2 and all("copy" in w for w in warned)
    assert Store(store).count() == 3 * 78


def test_a_deleted_or_changed_index_is_rebuilt_by_the_next_ingest(tmp_path, capsys, caplog):
    store, _ = make_store(tmp_path)
    index = sorted((store / "_index").glob("*.parquet"))
    index[0].unlink()
    _flip(index[1])  # same size, other bytes: caught by its hash
    table = pq.read_table(index[2])
    pq.write_table(table.slice(0, 5), index[2])  # rows of 5 rounds only: disagrees with the parts
    for day in range(3):  # the same rounds under other file contents: every one already stored
        write_log(tmp_path / "again" / f"day{day}.jsonl", day_records(day, f"d{day}") + [{}])
    with caplog.at_level(logging.WARNING, "auditkit.store"):
        assert main(["ingest", "--store", str(store), str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert "stored 0, already stored 234" in out
    rebuilt = [r.getMessage() for r in caplog.records if "rebuilding it" in r.getMessage()]
    assert len(rebuilt) == 3 and all(i.name in " ".join(rebuilt) for i in index)
    assert Store(store).count() == 3 * 78
    assert main(["verify", str(store)]) == 0  # the rebuilt index is recorded in its manifest entry


def test_a_store_of_an_older_version_still_reads(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    code, clean, _ = validate(store, tmp_path, capsys)
    for entry in (store / "_manifest").glob("*.json"):
        rec = json.loads(entry.read_text())
        del rec["files"]
        entry.write_text(json.dumps(rec))
    again, out, _ = validate(store, tmp_path, capsys)
    assert (again, out) == (code, clean)
    for day in range(3):
        write_log(tmp_path / "again" / f"day{day}.jsonl", day_records(day, f"d{day}") + [{}])
    assert main(["ingest", "--store", str(store), str(tmp_path / "again")]) == 0
    assert "already stored 234" in capsys.readouterr().out


def test_a_deleted_quarantine_file_is_exit_2_naming_it_not_an_empty_quarantine(tmp_path, capsys):
    store, logs = make_store(tmp_path)
    assert not [f for rec in entries(store) for f in rec["files"] if f["path"].startswith("_quarantine/")]
    assert len(Store(store).quarantine()) == 0 and not (store / "_quarantine").exists()  # no bad line: no file
    with open(logs / "day0.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"round_id": "cut\n')
    assert main(["-q", "ingest", "--store", str(store), str(logs)]) == 0
    listed = [f["path"] for rec in entries(store) for f in rec["files"] if f["path"].startswith("_quarantine/")]
    assert len(listed) == 1 and len(Store(store).quarantine()) == 1  # listed, and read
    (store / listed[0]).unlink()
    capsys.readouterr()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv"), "--xlsx",
                 str(tmp_path / "r.xlsx")]) == 2
    err = capsys.readouterr().err
    assert listed[0] in err and "missing" in err and "Traceback" not in err
