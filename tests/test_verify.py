"""Issue 25 item 3: ``auditkit verify STORE`` checks every part and index against the manifest (rows,
bytes, SHA-256), reports every unlisted file and re-hashes the sources still at their paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_job import day_records, last_record, write_job, write_log

pytest.importorskip("moto.server")
from test_s3 import endpoint, uri  # noqa: E402, F401 (the moto S3 server fixtures)

from auditkit.cli import main
from auditkit.store import Store


def make_store(tmp_path: Path) -> tuple[Path, Path]:
    """A store of three days of logs (78 rounds a day); (store, logs folder)."""
    for day in range(3):
        write_log(tmp_path / "logs" / f"day{day}.jsonl", day_records(day, f"d{day}"))
    store = tmp_path / "store"
    assert main(["-q", "ingest", "--store", str(store), str(tmp_path / "logs")]) == 0
    return store, tmp_path / "logs"


def a_part(store: Path) -> Path:
    return sorted((store / "rounds").rglob("part-*.parquet"))[0]


def verify_json(store: Path | str, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["verify", str(store), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_clean_store_verifies(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    code, out = verify_json(store, capsys)
    assert code == 0 and out["ok"] and out["problems"] == []
    assert out["sources"] == 3 and out["sources_rechecked"] == 3
    assert out["files_checked"] == 3 * 2  # a part and an index each (no quarantine file: no line was bad)
    assert out["rows_checked"] == 2 * 3 * 78
    assert main(["verify", str(store)]) == 0
    assert "store agrees with its manifest" in capsys.readouterr().out


def _delete(p: Path) -> None:
    p.unlink()


def _truncate(p: Path) -> None:
    with open(p, "r+b") as fh:
        fh.truncate(p.stat().st_size // 2)


def _flip(p: Path) -> None:  # same size, other bytes
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


@pytest.mark.parametrize(("damage", "target", "says"), [
    (_delete, "part", "missing"),
    (_truncate, "part", "bytes, the manifest says"),
    (_flip, "part", "content changed"),
    (_delete, "index", "missing"),
    (_flip, "index", "content changed"),
])
def test_damage_is_named(tmp_path, capsys, damage, target, says):
    store, _ = make_store(tmp_path)
    victim = a_part(store) if target == "part" else sorted((store / "_index").glob("*.parquet"))[0]
    damage(victim)
    code, out = verify_json(store, capsys)
    rel = victim.relative_to(store).as_posix()
    assert code == 1 and not out["ok"]
    assert [p for p in out["problems"] if p.startswith(rel) and says in p], out["problems"]


def test_a_copied_part_is_reported_unlisted(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    part = a_part(store)
    copy = part.with_name(part.name.replace(".parquet", "-copy.parquet"))
    shutil.copy(part, copy)
    code, out = verify_json(store, capsys)
    assert code == 1
    assert out["problems"] == [f"{copy.relative_to(store).as_posix()}: not listed in the manifest (readers ignore it)"]


def test_sources_are_hashed_again_when_still_there(tmp_path, capsys):
    store, logs = make_store(tmp_path)
    (logs / "day0.jsonl").write_text((logs / "day0.jsonl").read_text() + "\n")  # changed since ingest
    (logs / "day1.jsonl").unlink()                                              # gone
    code, out = verify_json(store, capsys)
    assert code == 1 and out["sources_rechecked"] == 2
    assert [p for p in out["problems"] if p.startswith(f"source {logs / 'day0.jsonl'}")]
    assert out["sources_not_rechecked"] == [f"{logs / 'day1.jsonl'}: not found at its recorded path"]


def test_entries_of_older_versions_are_not_recorded_and_do_not_fail(tmp_path, capsys):
    store, _ = make_store(tmp_path)
    for entry in (store / "_manifest").glob("*.json"):
        rec = json.loads(entry.read_text())
        del rec["files"]
        entry.write_text(json.dumps(rec))
    code, out = verify_json(store, capsys)
    assert code == 0 and len(out["not_recorded"]) == 3 and out["files_checked"] == 0
    assert main(["verify", str(store)]) == 0
    assert "before files were recorded" in capsys.readouterr().out


def test_verify_of_what_is_not_a_store_is_exit_2(tmp_path):
    assert main(["verify", str(tmp_path / "nothing")]) == 2


def test_a_job_with_verify_fails_on_a_damaged_store(tmp_path, capsys):
    for day in range(2):
        write_log(tmp_path / "logs" / f"day{day}.jsonl", day_records(day, f"d{day}"))
    job = write_job(tmp_path, verify=True)
    assert main(["-q", "run", str(job)]) in (0, 1)  # the example shoe may hold findings
    assert last_record(tmp_path / "reports")["status"] in ("clean", "findings")
    _flip(a_part(tmp_path / "store"))
    write_log(tmp_path / "logs" / "day2.jsonl", day_records(2, "d2"))
    capsys.readouterr()
    assert main(["-q", "run", str(job)]) == 2
    assert "verify = true" in capsys.readouterr().err
    bad = write_job(tmp_path, "bad.toml", verify="yes")
    assert main(["-q", "run", str(bad)]) == 2
    assert 'verify = "yes": must be true or false' in capsys.readouterr().err


def test_an_s3_store_verifies(uri, tmp_path, capsys):  # noqa: F811 (the fixture)
    for day in range(2):
        write_log(tmp_path / "logs" / f"day{day}.jsonl", day_records(day, f"d{day}"))
    assert main(["-q", "ingest", "--store", uri, str(tmp_path / "logs")]) == 0
    code, out = verify_json(uri, capsys)
    assert code == 0 and out["files_checked"] == 4 and out["rows_checked"] == 4 * 78  # a part and an index each
    st = Store(uri)
    rel = st.source_parts(st.manifest()[0].sha256[:16])[0]
    st._files.delete(rel)
    code, out = verify_json(uri, capsys)
    assert code == 1 and [p for p in out["problems"] if p.startswith(rel)]
