"""The raw sources of import profiles (auditkit/ingest/profiles/source.py): CSV, xlsx, JSON, JSON lines,
SQLite and a real PostgreSQL server; string cells, row numbers as a user finds them, bad rows kept,
the source hash."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest

from auditkit.ingest.profiles.source import SourceSpec, open_source
from auditkit.paytables import ConfigError


def rows(src) -> list[dict]:
    return [r for t in src.batches() for r in t.to_pylist()]


def test_csv_cells_are_strings_numbered_by_physical_line(tmp_path):
    p = tmp_path / "export.csv"
    p.write_bytes('\ufeffid,name,amt\r\n1,"x, y",$5\r\n\r\n2,"multi\r\nline",\r\n3,too,many,cells\r\n4,é,(5.00)'
                  .encode("utf-8"))
    src = open_source({"format": "csv"}, p)
    got = rows(src)
    assert got == [{"id": "1", "name": "x, y", "amt": "$5", "__row": 2},
                   {"id": "2", "name": "multi\r\nline", "amt": None, "__row": 4},
                   {"id": "4", "name": "é", "amt": "(5.00)", "__row": 7}]
    assert src.bad == [(6, "4 cells, the header has 3", "3,too,many,cells")]
    assert (src.blank, src.rows_read, src.name) == (1, 3, "export.csv")


def test_csv_in_cp1252_with_a_header_below_a_title_and_batches(tmp_path):
    p = tmp_path / "resaved.csv"
    body = "".join(f'{i};"Caf\xe9 {i}";"$1,234.50"\r\n' for i in range(1, 1001))
    p.write_bytes(("Exported 6/1/2025\r\nid;name;amount\r\n" + body).encode("cp1252"))
    src = open_source({"encoding": "cp1252", "delimiter": ";", "header_row": 2}, p, batch_rows=100)
    got = rows(src)
    assert len(got) == 1000 and got[0] == {"id": "1", "name": "Café 1", "amount": "$1,234.50", "__row": 3}
    assert got[-1]["__row"] == 1002 and not src.bad


def test_csv_rows_past_a_block_keep_their_numbers(tmp_path, monkeypatch):
    import auditkit.ingest.profiles.source as source

    monkeypatch.setattr(source, "_CHUNK", 64)  # records and quotes cut across the scan's chunks
    p = tmp_path / "e.csv"
    lines = ["a,b"] + [f'{i},"q{i}\nx"' if i % 7 == 0 else f"{i},v{i}" for i in range(200)]
    p.write_text("\n".join(lines) + "\n", "utf-8")
    got = rows(open_source({}, p))
    expected, line = [], 2
    for i in range(200):
        expected.append((str(i), line))
        line += 2 if i % 7 == 0 else 1
    assert [(r["a"], r["__row"]) for r in got] == expected


def test_the_source_hash_follows_the_content(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("a\n1\n", "utf-8")
    first = open_source({}, p).sha256
    assert open_source({}, p).sha256 == first
    p.write_text("a\n2\n", "utf-8")
    assert open_source({}, p).sha256 != first


@pytest.mark.parametrize("raw, says", [
    ({"format": "parquet"}, "source.format"), ({"delimiter": ";;"}, "source.delimiter"),
    ({"encoding": "utf-16"}, "source.encoding"), ({"header_row": 0}, "source.header_row"),
    ({"colour": "red"}, "source.colour: unknown key"), ({"format": "sqlite"}, "source.query"),
    ({"format": "postgresql", "query": "select 1", "url": "postgresql://u:secret@h/db", "snapshot_key": "select 1"},
     "holds a password"),
    ({"format": "postgresql", "query": "select 1", "url": "env:X"}, "source.snapshot_key"),
    ({"header_row": "2"}, "expected int"),
])
def test_a_bad_source_table_names_the_profile_and_key(raw, says):
    with pytest.raises(ConfigError, match="p.toml: ") as exc:
        SourceSpec.from_table(raw, "p.toml")
    assert says in str(exc.value)


def test_xlsx_cells_read_as_a_user_sees_them(tmp_path):
    import datetime

    import xlsxwriter

    p = tmp_path / "hands.xlsx"
    book = xlsxwriter.Workbook(p)
    book.add_worksheet("Notes").write(0, 0, "not this one")
    sheet = book.add_worksheet("Hands")
    sheet.write_row(0, 0, ["round", "cards", "returned", "when", "split"])
    sheet.write_row(1, 0, [17, "5h 9h 3h", 25.5, None, True])
    sheet.write_datetime(1, 3, datetime.datetime(2025, 6, 1, 4, 2), book.add_format({"num_format": "m/d/yyyy h:mm"}))
    sheet.write_row(3, 0, [18, "Ts", 40, "6/1/2025 04:03", False])
    sheet.write(4, 6, "stray")
    book.close()
    src = open_source({"sheet": "Hands"}, p)
    assert rows(src) == [
        {"round": "17", "cards": "5h 9h 3h", "returned": "25.5", "when": "2025-06-01 04:02:00", "split": "TRUE",
         "__row": 2},
        {"round": "18", "cards": "Ts", "returned": "40", "when": "6/1/2025 04:03", "split": "FALSE", "__row": 4}]
    assert src.blank == 1 and src.bad[0][:2] == (5, "a cell right of the header's 5 columns")
    with pytest.raises(ConfigError, match="no such sheet"):
        rows(open_source({"sheet": "Rounds"}, p))
    assert rows(open_source({"sheet": 1}, p)) == []  # the Notes sheet: a header and no rows


def test_json_lines_and_documents(tmp_path):
    p = tmp_path / "bets.jsonl"
    p.write_text('{"id": 1, "cards": ["10", "6"], "win": true}\n\nnot json\n[1]\n{"id": 2, "x": "a"}\n', "utf-8")
    src = open_source({}, p)
    assert rows(src) == [{"id": "1", "cards": '["10", "6"]', "win": "true", "x": None, "__row": 1},
                         {"id": "2", "cards": None, "win": None, "x": "a", "__row": 5}]
    assert [b[:1] for b in src.bad] == [(3,), (4,)] and src.blank == 1
    d = tmp_path / "export.json"
    d.write_text('{"data": {"rounds": [{"id": 7}]}}', "utf-8")
    assert rows(open_source({"records": "data.rounds"}, d)) == [{"id": "7", "__row": 1}]


def _hands(conn) -> None:
    conn.execute("CREATE TABLE hands (id INTEGER PRIMARY KEY, tbl TEXT, amount REAL, ts TEXT, note TEXT)")
    conn.executemany("INSERT INTO hands (tbl, amount, ts, note) VALUES (?, ?, ?, ?)",
                     [("PG-1", 25.0, "2025-06-01 04:02:00", None), ("PG-1", 12.5, "2025-06-01 04:03:00", " ")])


def test_sqlite_query_through_adbc(tmp_path):
    p = tmp_path / "paigow.db"
    with sqlite3.connect(p) as conn:
        _hands(conn)
    spec = {"format": "sqlite", "query": "SELECT id, tbl, amount, ts, note FROM hands ORDER BY id"}
    src = open_source(spec, p)
    assert rows(src) == [{"id": "1", "tbl": "PG-1", "amount": "25", "ts": "2025-06-01 04:02:00", "note": None,
                          "__row": 1},
                         {"id": "2", "tbl": "PG-1", "amount": "12.5", "ts": "2025-06-01 04:03:00", "note": None,
                          "__row": 2}]
    keyed = dict(spec, snapshot_key="SELECT max(id) FROM hands")
    before = open_source(keyed, p).sha256
    with sqlite3.connect(p) as conn:
        conn.execute("INSERT INTO hands (tbl, amount, ts) VALUES ('PG-2', 5, '2025-06-02 01:00:00')")
    assert open_source(keyed, p).sha256 != before
    assert open_source(dict(spec, query=spec["query"] + " LIMIT 1"), p).sha256 != open_source(spec, p).sha256


def test_postgresql_query_through_adbc(postgres_url, monkeypatch):
    import adbc_driver_postgresql.dbapi as pg

    with pg.connect(postgres_url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS hands")
        cur.execute("CREATE TABLE hands (id serial PRIMARY KEY, tbl text, amount numeric(10,2), "
                    "ts timestamp, surrendered boolean)")
        cur.execute("INSERT INTO hands (tbl, amount, ts, surrendered) VALUES "
                    "('BJ-1', 25.00, '2025-06-01 04:02:00', false), ('BJ-1', -12.50, '2025-06-01 04:03:00', true)")
    monkeypatch.setenv("AUDIT_PG_URL", postgres_url)
    spec = {"format": "postgresql", "url": "env:AUDIT_PG_URL", "query": "SELECT * FROM hands ORDER BY id",
            "snapshot_key": "SELECT max(id) FROM hands"}
    src = open_source(spec, "warehouse")
    got = rows(src)
    assert [(r["id"], r["tbl"], r["ts"], r["surrendered"], r["__row"]) for r in got] == [
        ("1", "BJ-1", "2025-06-01 04:02:00", "FALSE", 1), ("2", "BJ-1", "2025-06-01 04:03:00", "TRUE", 2)]
    assert [float(r["amount"]) for r in got] == [25.0, -12.5]
    assert src.name.startswith("sql:") and "secret" not in src.location
    again = open_source(spec, "warehouse").sha256
    assert again == src.sha256
    with pg.connect(postgres_url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO hands (tbl, amount) VALUES ('BJ-2', 5)")
    assert open_source(spec, "warehouse").sha256 != src.sha256
    monkeypatch.delenv("AUDIT_PG_URL")
    with pytest.raises(ConfigError, match="AUDIT_PG_URL is not set"):
        open_source(spec, "warehouse")
    with pg.connect(postgres_url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("DROP TABLE hands")  # the server is shared by the session's tests


def test_csv_rows_that_do_not_decode_are_set_aside_with_their_line_the_others_read(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"dealer,amount\nAnn,1\nJos\xe9,2\n\"Bo\nB\",3\n")  # cp1252 read as utf-8
    src = open_source({"format": "csv"}, path)
    table = pa.concat_tables(list(src.batches()))
    assert table.to_pydict() == {"dealer": ["Ann", "Bo\nB"], "amount": ["1", "3"], "__row": [2, 4]}
    assert src.bad == [(3, "undecodable text (not utf-8)", "Jos\ufffd,2")]
    assert open_source({"format": "csv", "encoding": "cp1252"}, path).batches().__next__()["dealer"].to_pylist() == \
        ["Ann", "José", "Bo\nB"]
