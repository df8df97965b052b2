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
    yield postgres_url, profile_for(tmp_path, source)
    with pg.connect(postgres_url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS rounds, victims")  # the server is shared by the session's tests


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
    assert main(["-v", "profile", "check", str(prof), "casino"]) == 2  # the traceback too
    err = capsys.readouterr().err
    assert "Traceback" in err and "s3cret" not in err
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
        _rewrite_part(path, "xl/workbook.xml", b' fullCalcOnLoad="1"', b"")
    return path


def _rewrite_part(path: Path, name: str, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` in one part (``xl/workbook.xml``...) of a saved workbook, as an edit by hand."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    parts[name] = parts[name].replace(old, new)
    with zipfile.ZipFile(path, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)


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
        # the header without its Dealer column: rewrite the shared strings
        _rewrite_part(src, "xl/sharedStrings.xml", b"<t>Dealer</t>", b"<t>Croupier</t>")
        prof = profile_for(tmp_path, XLSX)
    assert main(["ingest", str(src), "--profile", str(prof), "--store", str(tmp_path / "s"), "-q"]) == 2
    assert "'Dealer'" in capsys.readouterr().err


# ---- Every input problem: exit 2 naming the file (and line), or the row set aside --------------------------
def _csv_with(tmp_path: Path, edit, n: int = 3000) -> Path:
    header, rows = sample_rows(n)
    lines = [",".join(header)] + [",".join(r) for r in rows]
    edit(lines)
    p = tmp_path / "night.csv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _quote_dealer(k: int, text: str):
    def edit(lines: list[str]) -> None:
        cells = lines[k].split(",")
        cells[5] = text
        lines[k] = ",".join(cells)
    return edit


@pytest.mark.parametrize(("stray", "stored_n", "quarantined"), [
    ('"D1004', 2999, "night.csv:101: a quote (\") opened and not closed on its line"),  # never closed
    ('D10"04', 3000, None),  # inside a cell: text, as the CSV reader reads it
])
def test_a_stray_quote_in_a_3000_row_csv_costs_one_row_at_most_named_by_its_line(stray, stored_n, quarantined,
                                                                                   tmp_path, capsys):
    p = _csv_with(tmp_path, _quote_dealer(100, stray))
    prof = profile_for(tmp_path, 'format = "csv"')
    assert main(["ingest", str(p), "--profile", str(prof), "--store", str(tmp_path / "s")]) == 0
    out, err = capsys.readouterr()
    assert f"stored {stored_n}," in out and "store file" not in err
    if quarantined:
        assert quarantined in err
    src = open_source({"format": "csv"}, p)
    got = [r for t in src.batches() for r in t.to_pylist()]
    assert [r["__row"] for r in got][:101] == list(range(2, 101)) + ([102, 103] if quarantined else [101, 102])
    assert got[-1]["__row"] == 3001 and not quarantined or src.bad[0][0] == 101


def test_the_careful_reading_gives_what_the_fast_one_gives_around_a_stray_quote(tmp_path):
    """Quoted cells over several lines, doubled quotes, CRLF, blank and ragged rows, undecodable bytes:
    read record by record (a stray quote on line 9) as the fast reader reads them without it."""
    body = ('id,name,amt\r\n1,"x, y",$5\r\n\r\n2,"multi\r\nline",\r\n3,too,many,cells\r\n4,"say ""hi""",7\r\n'
            '5,Jos\xe9,1\r\n')
    fast = tmp_path / "fast.csv"
    fast.write_bytes(body.encode("cp1252") + b"6,ok,2\r\n7,fine,3\r\n")
    slow = tmp_path / "slow.csv"
    slow.write_bytes(body.encode("cp1252") + b'6,"ok,2\r\n7,fine,3\r\n')
    a, b = open_source({}, fast), open_source({}, slow)
    rows_a = [r for t in a.batches() for r in t.to_pylist()]
    rows_b = [r for t in b.batches() for r in t.to_pylist()]
    assert rows_a[:-2] == rows_b[:-1] and rows_b[-1] == {"id": "7", "name": "fine", "amt": "3", "__row": 10}
    assert rows_a[1] == {"id": "2", "name": "multi\r\nline", "amt": None, "__row": 4}
    assert rows_a[2]["name"] == 'say "hi"'
    assert a.bad == b.bad[:-1] and [x[:2] for x in a.bad] == [(6, "4 cells, the header has 3"),
                                                             (8, "undecodable text (not utf-8)")]
    assert b.bad[-1][0] == 9 and "not closed" in b.bad[-1][1] and a.blank == b.blank == 1


def test_a_file_that_is_not_what_its_format_says_is_exit_2_naming_it(tmp_path, capsys):
    prof_x = profile_for(tmp_path, XLSX)
    book = tmp_path / "corrupt.xlsx"
    book.write_bytes(b"PK\x03\x04 this is not a workbook")
    assert main(["ingest", str(book), "--profile", str(prof_x), "--store", str(tmp_path / "s"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "corrupt.xlsx: cannot read this workbook" in err and "internal error" not in err
    prof_db = profile_for(tmp_path, SQLITE)
    db = tmp_path / "notes.db"
    db.write_text("not a database, only text\n" * 100)
    assert main(["ingest", str(db), "--profile", str(prof_db), "--store", str(tmp_path / "s"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "notes.db: cannot read this SQLite database" in err and "internal error" not in err


def test_a_locked_sqlite_file_is_exit_2_naming_it(tmp_path, capsys):
    db = tmp_path / "busy.db"
    sqlite_export(db, sample_rows(5)[1])
    import subprocess
    import sys

    hold = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)  # another process: POSIX locks do not stop this one's own connections
    try:
        assert holder.stdout.readline() == "held\n"
        prof = profile_for(tmp_path, SQLITE)
        assert main(["ingest", str(db), "--profile", str(prof), "--store", str(tmp_path / "s"), "-q"]) == 2
        err = capsys.readouterr().err
        assert "busy.db: cannot read this SQLite database" in err and "locked" in err
        assert "internal error" not in err
    finally:
        holder.communicate("", timeout=30)


def test_a_traceback_asked_for_with_v_hides_a_url_password_too(monkeypatch, capsys):
    import auditkit.cli.profile as cli_profile

    def boom(args):
        raise RuntimeError("could not reach postgresql://bob:s3cret@db.example/casino")

    monkeypatch.setattr(cli_profile, "run_check", boom)
    assert main(["-v", "profile", "check", "p.toml", "casino"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "s3cret" not in err and "bob:***@db.example" in err
