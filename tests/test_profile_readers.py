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


# ---- PostgreSQL: read-only, no password shown, a name and not a file ---------------------------------
@pytest.fixture
def pg_casino(postgres_url, tmp_path, monkeypatch):
    """The sample rounds (first 30) in a PostgreSQL table, a profile reading them and a victim table."""
    import adbc_driver_postgresql.dbapi as pg

    header, rows = sample_rows(30)
    with pg.connect(postgres_url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS rounds, victims")
        cur.execute(f"CREATE TABLE rounds (id serial, {', '.join(f'{chr(34)}{h}{chr(34)} text' for h in header)})")
        cols = ", ".join(f'"{h}"' for h in header)
        for r in rows:
            cur.execute(f"INSERT INTO rounds ({cols}) VALUES ({', '.join(f'${k + 1}' for k in range(len(r)))})", r)
        cur.execute("CREATE TABLE victims (a int)")
        cur.execute("INSERT INTO victims VALUES (1), (2)")
    monkeypatch.setenv("CASINO_URL", postgres_url)
    monkeypatch.chdir(tmp_path)
    source = ('format = "postgresql"\nurl = "env:CASINO_URL"\nquery = "SELECT * FROM rounds ORDER BY id"\n'
              'snapshot_key = "SELECT max(id) FROM rounds"')
    return postgres_url, profile_for(tmp_path, source)


def _victims(url: str) -> int:
    import adbc_driver_postgresql.dbapi as pg

    with pg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM victims")
        return cur.fetchone()[0]


def test_a_postgresql_input_is_a_name_for_ingest_with_its_progress_a_job_and_profile_check(pg_casino, tmp_path,
                                                                                            capsys):
    url, prof = pg_casino
    assert main(["ingest", "casino", "--profile", str(prof), "--store", "s"]) == 0  # without -q: the bar's path
    out, err = capsys.readouterr()
    assert "stored 30" in out and "No such file" not in err
    job = tmp_path / "job.toml"
    job.write_text(f'inputs = [{{path = "casino", profile = "{prof.name}"}}]\nstore = "js"\noutput = "out"\n')
    assert main(["run", str(job)]) in (0, 1)
    assert "does not exist" not in capsys.readouterr().err
    assert main(["profile", "check", str(prof), "casino"]) == 0
    assert "30 round(s)" in capsys.readouterr().out


@pytest.mark.parametrize("query", [
    "WITH d AS (DELETE FROM victims RETURNING *) SELECT * FROM rounds ORDER BY id",
    "SET TRANSACTION READ WRITE",
])
def test_a_postgresql_query_runs_in_a_read_only_transaction(pg_casino, query, capsys):
    url, prof = pg_casino
    prof.write_text(prof.read_text().replace("SELECT * FROM rounds ORDER BY id", query))
    assert main(["ingest", "casino", "--profile", str(prof), "--store", "s", "-q"]) == 2
    err = capsys.readouterr().err
    assert _victims(url) == 2
    assert "casino" in err and "internal error" not in err and "Traceback" not in err


def test_no_password_is_printed_and_a_server_down_or_an_sql_error_is_exit_2_naming_the_input(pg_casino,
                                                                                            monkeypatch, capsys):
    url, prof = pg_casino
    monkeypatch.setenv("CASINO_URL", "postgresql://bob:s3cr@t@localhost:1/casino")  # malformed; nothing listens
    assert main(["ingest", "casino", "--profile", str(prof), "--store", "s", "-q"]) == 2
    err = capsys.readouterr().err
    assert "s3cr" not in err and "bob:***@" in err and "casino" in err and "internal error" not in err
    monkeypatch.setenv("CASINO_URL", "postgresql://bob:s3cret@localhost:1/casino")
    assert main(["profile", "check", str(prof), "casino"]) == 2
    err = capsys.readouterr().err
    assert "s3cret" not in err and "casino" in err and "internal error" not in err
    monkeypatch.setenv("CASINO_URL", url)
    prof.write_text(prof.read_text().replace("ORDER BY id", "ORDER BY nope"))
    assert main(["ingest", "casino", "--profile", str(prof), "--store", "s", "-q"]) == 2
    err = capsys.readouterr().err
    assert "casino" in err and "nope" in err and "internal error" not in err


# ---- Workbooks: formulas without values, the sheet read, the header without rows ----------------------
XLSX = 'format = "xlsx"'


def workbook(path: Path, sheets: list[tuple[str, list[list[str]] | None, str]], formula_col: int | None = None,
             calculated: bool = False) -> Path:
    """Sheets (name, rows or None for the header alone, "visible"/"hidden") of the sample rounds; the
    ``formula_col`` column written as formulas (=value+0): with no value saved (xlsxwriter's 0), or
    ``calculated`` as a spreadsheet saves them (the value kept, no calculate-on-load)."""
    import xlsxwriter

    header, _ = sample_rows(1)
    book = xlsxwriter.Workbook(path)
    for name, rows, state in sheets:
        sheet = book.add_worksheet(name)
        sheet.write_row(0, 0, header)
        for i, row in enumerate(rows or [], 1):
            for j, cell in enumerate(row):
                if j == formula_col and cell:
                    sheet.write_formula(i, j, f"={cell}+0", None, int(cell) if calculated else 0)
                else:
                    sheet.write_string(i, j, cell)
        if state == "hidden":
            sheet.hide()
        else:
            sheet.activate()  # xlsxwriter hides no active sheet
    book.close()
    if calculated:  # as a spreadsheet saves it: no calculate-on-load
        import zipfile

        with zipfile.ZipFile(path) as z:
            parts = {n: z.read(n) for n in z.namelist()}
        parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(b' fullCalcOnLoad="1"', b"")
        with zipfile.ZipFile(path, "w") as z:
            for n, data in parts.items():
                z.writestr(n, data)
    return path


def test_a_formula_cell_without_a_saved_value_is_refused_naming_the_cell(tmp_path, capsys):
    _, rows = sample_rows(40)
    prof = profile_for(tmp_path, XLSX)
    book = workbook(tmp_path / "calc.xlsx", [("Rounds", rows, "visible")], formula_col=3)  # Hand: column D
    assert main(["ingest", str(book), "--profile", str(prof), "--store", str(tmp_path / "s"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "calc.xlsx" in err and "cell D2 (=1+0)" in err and "40 such cell(s)" in err
    assert "internal error" not in err
    saved = workbook(tmp_path / "saved.xlsx", [("Rounds", rows, "visible")], formula_col=3, calculated=True)
    assert main(["ingest", str(saved), "--profile", str(prof), "--store", str(tmp_path / "s")]) == 0
    assert "stored 40" in capsys.readouterr().out


@pytest.mark.parametrize("first", ["hidden", "header-only"])
def test_without_a_sheet_key_the_first_visible_sheet_with_rows_is_read_and_named(first, tmp_path, capsys, caplog):
    _, rows = sample_rows(25)
    sheets = [("Hidden", rows[:5], "hidden")] if first == "hidden" else [("Cover", None, "visible")]
    book = workbook(tmp_path / "night.xlsx", [*sheets, ("Hands", rows, "visible")])
    prof = profile_for(tmp_path, XLSX)
    assert main(["ingest", str(book), "--profile", str(prof), "--store", str(tmp_path / "s")]) == 0
    out, err = capsys.readouterr()
    assert "stored 25" in out and "read sheet 'Hands'" in err + caplog.text  # a warning: not the first sheet
    assert main(["profile", "check", str(prof), str(book)]) == 0
    assert "read sheet 'Hands'" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_a_header_without_rows_is_checked_for_the_profile_columns(kind, tmp_path, capsys):
    header, _ = sample_rows(1)
    header = [h for h in header if h != "Dealer"]
    if kind == "csv":
        src = tmp_path / "empty.csv"
        src.write_text(",".join(header) + "\n")
        prof = profile_for(tmp_path, 'format = "csv"')
    else:
        src = workbook(tmp_path / "empty.xlsx", [("Rounds", None, "visible")])
        import zipfile  # the header without its Dealer column: rewrite the shared strings

        with zipfile.ZipFile(src) as z:
            parts = {n: z.read(n) for n in z.namelist()}
        parts["xl/sharedStrings.xml"] = parts["xl/sharedStrings.xml"].replace(b"<t>Dealer</t>", b"<t>Croupier</t>")
        with zipfile.ZipFile(src, "w") as z:
            for n, data in parts.items():
                z.writestr(n, data)
        prof = profile_for(tmp_path, XLSX)
    assert main(["ingest", str(src), "--profile", str(prof), "--store", str(tmp_path / "s"), "-q"]) == 2
    assert "'Dealer'" in capsys.readouterr().err
