"""The raw sources of import profiles (auditkit/ingest/profiles/source.py): CSV, xlsx, JSON/JSONL,
SQLite. Every cell is text (null when empty), every row keeps its number, bad rows are kept with a reason."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest

from auditkit.ingest.profiles.source import SourceSpec, open_source, url_without_credentials
from auditkit.ingest.sources import InputError
from auditkit.paytables import ConfigError


def read(spec: dict, path, **kw) -> tuple[dict, object]:
    src = open_source(SourceSpec.from_table(spec, "p.toml"), path, **kw)
    batches = list(src.batches())
    table = pa.concat_tables(batches)
    for f in table.schema:
        assert f.type == (pa.int64() if f.name == "__row" else pa.string()), f
    return table.to_pydict(), src


def test_csv_rows_numbers_quotes_and_ragged_rows(tmp_path):
    p = tmp_path / "x.csv"
    p.write_bytes(b'exported by ACME\nshoe,hand,note\n1,1,"a, b"\n\n1,2,"two\nlines"\n1,3,4,5\n1\n2,1,\n')
    cols, src = read({"header_row": 2}, p)
    assert cols == {"shoe": ["1", None, "1", "2"], "hand": ["1", None, "2", "1"], "note": ["a, b", None, "two\nlines", None],
                    "__row": [3, 4, 5, 9]}
    assert src.bad == [(7, "4 cells, the header has 3", "1,3,4,5"), (8, "1 cells, the header has 3", "1")]
    assert src.rows_read == 4 and src.name == "x.csv"


def test_csv_batches_keep_numbers(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a;b\n" + "".join(f'{i};"q\n{i}"\n' if i % 7 == 0 else f"{i};{i}\n" for i in range(1000)))
    cols, _ = read({"delimiter": ";"}, p, batch_rows=64)
    lines, line = [], 2
    for i in range(1000):
        lines.append(line)
        line += 2 if i % 7 == 0 else 1
    assert cols["__row"] == lines and cols["a"] == [str(i) for i in range(1000)]


def test_csv_encodings(tmp_path):
    bom = tmp_path / "bom.csv"
    bom.write_bytes("\ufeffdealer,amount\nJosé,5\n".encode())
    assert read({}, bom)[0] == {"dealer": ["José"], "amount": ["5"], "__row": [2]}
    win = tmp_path / "win.csv"
    win.write_bytes("dealer,amount\nJosé,€5\n".encode("cp1252"))
    assert read({"encoding": "cp1252"}, win)[0] == {"dealer": ["José"], "amount": ["€5"], "__row": [2]}
    # cp1252 read as utf-8: the undecodable row is kept with its reason, the others read
    win.write_bytes(b"dealer,amount\nAnn,1\nJos\xe9,2\nBo,3\n")
    cols, src = read({}, win)
    assert cols == {"dealer": ["Ann", "Bo"], "amount": ["1", "3"], "__row": [2, 4]}
    assert src.bad == [(3, "undecodable text (not utf-8)", "Jos\ufffd,2")]


def test_csv_hash_follows_content(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a\n1\n")
    first = read({}, p)[1].sha256
    p.write_text("a\n2\n")
    assert read({}, p)[1].sha256 != first


def test_spec_refuses_bad_keys():
    for raw, key in [({"colour": 1}, "source.colour"), ({"header_row": "2"}, "source.header_row"),
                     ({"format": "dbf"}, "source.format"), ({"encoding": "utf-16"}, "source.encoding"),
                     ({"delimiter": ",,"}, "source.delimiter"), ({"format": "sqlite"}, "source.query"),
                     ({"format": "postgresql", "query": "SELECT 1"}, "source.snapshot_key"),
                     ({"format": "postgresql", "query": "SELECT 1", "snapshot_key": "SELECT 1",
                       "url": "postgresql://u:secret@h/db"}, "source.url"),
                     ({"format": "csv", "query": "SELECT 1"}, "source.query")]:
        with pytest.raises(ConfigError, match=f"p.toml: {key}:"):
            SourceSpec.from_table(raw, "p.toml")


def test_url_without_credentials():
    assert url_without_credentials("postgresql://u:pw@db:5432/audit?sslmode=require&password=x") == \
        "postgresql://db:5432/audit?sslmode=require"


def test_xlsx_cells_as_shown(tmp_path):
    xlsxwriter = pytest.importorskip("xlsxwriter")
    p = tmp_path / "hands.xlsx"
    book = xlsxwriter.Workbook(str(p))
    book.add_worksheet("Notes").write(0, 0, "not this one")
    ws = book.add_worksheet("Hands")
    ws.write_row(0, 0, ["Blackjack export"])
    ws.write_row(2, 0, ["round", "time", "amount", "split", "cards"])
    ws.write_row(3, 0, [1, None, 12.5, True, "5h 9h"])
    ws.write_datetime(3, 1, dt.datetime(2025, 6, 1, 4, 2), book.add_format({"num_format": "m/d/yyyy h:mm"}))
    ws.write_row(5, 0, [2, 45809.25, -5, False, "02s 11s", "extra"])
    book.close()
    cols, src = read({"sheet": "Hands", "header_row": 3}, p)
    assert cols == {"round": ["1", None], "time": ["2025-06-01 04:02:00", None], "amount": ["12.5", None],
                    "split": ["TRUE", None], "cards": ["5h 9h", None], "__row": [4, 5]}  # row 5 blank
    assert src.bad == [(6, "6 cells, the header has 5", "2\t45809.25\t-5\tFALSE\t02s 11s\textra")]
    assert read({"sheet": 2, "header_row": 3}, p)[0]["__row"] == [4, 5]
    with pytest.raises(InputError, match="no sheet 'Rounds'"):
        read({"sheet": "Rounds"}, p)


def test_json_and_jsonl(tmp_path):
    doc = tmp_path / "x.json"
    doc.write_text(json.dumps({"export": {"rounds": [{"id": 1, "cards": ["10", "6"], "won": True, "note": ""}, 7]}}))
    cols, src = read({"records": "export.rounds"}, doc)
    assert cols == {"id": ["1"], "cards": ['["10", "6"]'], "won": ["true"], "note": [None], "__row": [1]}
    assert src.bad == [(2, "a JSON int, not an object", "7")]
    lines = tmp_path / "x.jsonl"
    lines.write_text('{"id": 1.5}\n\n{oops\n{"id": null, "x": "a"}\n')
    cols, src = read({}, lines)
    assert cols == {"id": ["1.5", None], "x": [None, "a"], "__row": [1, 4]}
    assert [b[0] for b in src.bad] == [3] and src.bad[0][1].startswith("not JSON")


def test_sqlite_query(tmp_path):
    import sqlite3
    p = tmp_path / "pgp.sqlite"
    with sqlite3.connect(p) as db:
        db.execute("CREATE TABLE hands (id INTEGER, cards TEXT, net REAL, note TEXT)")
        db.executemany("INSERT INTO hands VALUES (?, ?, ?, ?)",
                       [(i, f"AS KD {i}", i * 2.5, "" if i == 2 else None) for i in range(1, 5)])
    spec = {"format": "sqlite", "query": "SELECT id, cards, net, note FROM hands ORDER BY id DESC"}
    cols, src = read(spec, p, batch_rows=3)
    assert cols == {"id": ["4", "3", "2", "1"], "cards": ["AS KD 4", "AS KD 3", "AS KD 2", "AS KD 1"],
                    "net": ["10", "7.5", "5", "2.5"], "note": [None] * 4, "__row": [1, 2, 3, 4]}
    assert src.name == "sql:hands"
    other = read({**spec, "query": "SELECT id FROM hands"}, p)[1]
    assert other.sha256 != src.sha256
    keyed = read({**spec, "snapshot_key": "SELECT max(id) FROM hands"}, p)[1]
    with sqlite3.connect(p) as db:
        db.execute("INSERT INTO hands VALUES (5, 'x', 0, NULL)")
    assert read({**spec, "snapshot_key": "SELECT max(id) FROM hands"}, p)[1].sha256 != keyed.sha256
    with pytest.raises(InputError, match="the query failed"):
        read({**spec, "query": "SELECT nothing FROM hands"}, p)
