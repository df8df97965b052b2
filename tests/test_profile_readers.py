"""Readers that never guess (issue 40): any file name opens that file read-only, a database's whole
content is its identity, a database is a name and not a file, workbooks and CSVs refuse or set aside
what they cannot read, and every input problem is exit 2 naming the file (and the row or line)."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest

from auditkit.cli.main import main
from auditkit.ingest.profiles.source import open_source

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data/exports/baccarat_rounds.csv"
SAMPLE_PROFILE = ROOT / "sample_data/exports/baccarat_rounds.toml"


def sample_rows(n: int | None = None) -> tuple[list[str], list[list[str]]]:
    with open(SAMPLE, newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    return header, rows[:n] if n else rows


def profile_for(tmp_path: Path, source: str) -> Path:
    """The sample baccarat profile with its [source] table replaced by ``source``."""
    text = SAMPLE_PROFILE.read_text().replace('[source]\nformat = "csv"\n', f"[source]\n{source}\n")
    assert source in text
    p = tmp_path / "profile.toml"
    p.write_text(text)
    return p


def sqlite_export(path: Path, rows: list[list[str]], *, wal: bool = False) -> sqlite3.Connection | None:
    header, _ = sample_rows(1)
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
    cols = ", ".join(f'"{h}" TEXT' for h in header)
    conn.execute(f"CREATE TABLE rounds ({cols})")
    conn.executemany(f"INSERT INTO rounds VALUES ({', '.join('?' * len(header))})", rows)
    conn.commit()
    if wal:
        return conn  # kept open: the rows stay in the -wal file
    conn.close()
    return None


SQLITE = 'format = "sqlite"\nquery = "SELECT * FROM rounds ORDER BY rowid"'


def stored(capsys) -> str:
    return capsys.readouterr().out


# ---- SQLite: the file named, read-only; its WAL is part of it ------------------------------------------
@pytest.mark.parametrize("name", ["night#2.db", "a%2Fb.db", "q?mode=rw.db"])
def test_a_sqlite_file_name_opens_that_file_read_only(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    _, rows = sample_rows(20)
    sqlite_export(tmp_path / name, rows)
    decoy = tmp_path / "a" / "b.db"  # what a%2Fb.db decoded would open
    sqlite_export(decoy, sample_rows(35)[1][20:])  # 15 rows
    prof = profile_for(tmp_path, SQLITE)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["ingest", name, "--profile", str(prof), "--store", "s"]) == 0
    assert "stored 20" in stored(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["s"])  # no ./night, ./q created
    src = open_source({"format": "sqlite", "query": "SELECT * FROM rounds"}, name)
    assert sum(t.num_rows for t in src.batches()) == 20


def test_a_sqlite_source_is_never_written(tmp_path):
    p = tmp_path / "x.db"
    sqlite_export(p, sample_rows(3)[1])
    src = open_source({"format": "sqlite", "query": "DELETE FROM rounds RETURNING *"}, p)
    with pytest.raises(Exception, match="readonly"):
        list(src.batches())
    assert sqlite3.connect(p).execute("SELECT count(*) FROM rounds").fetchone() == (3,)


def test_rows_committed_to_the_wal_are_part_of_the_sqlite_identity(tmp_path, capsys):
    p = tmp_path / "live.db"
    conn = sqlite_export(p, sample_rows(10)[1], wal=True)
    assert conn is not None and (tmp_path / "live.db-wal").stat().st_size > 0
    prof = profile_for(tmp_path, SQLITE)
    assert main(["ingest", str(p), "--profile", str(prof), "--store", str(tmp_path / "s")]) == 0
    assert "stored 10" in stored(capsys)
    header, more = sample_rows(25)
    conn.executemany(f"INSERT INTO rounds VALUES ({', '.join('?' * len(header))})", more[10:])
    conn.commit()  # committed to the -wal file; the main file's bytes are unchanged
    assert main(["ingest", str(p), "--profile", str(prof), "--store", str(tmp_path / "s")]) == 0
    out = stored(capsys)
    assert "stored 15" in out and "already ingested" not in out
    assert main(["ingest", str(p), "--profile", str(prof), "--store", str(tmp_path / "s")]) == 0
    assert "already ingested" in stored(capsys)  # the same content again
    conn.close()
