"""Adversarial input: bad input gets a clear reason and nothing is lost (regressions)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from auditkit.ingest.records import BadRecord, parse_record
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store
from auditkit.validate import collect, validate_records


def _ingest(folder: Path) -> tuple[Any, Store]:
    store = Store(folder / "store")
    report = ingest_paths([folder / "in"], store)
    for src in report.sources:
        assert src.balanced, src
    assert store.count() == report.total("stored")
    assert len(store.quarantine()) == report.total("quarantined")
    q = store.quarantine()
    assert q["reason"].map(bool).all() and (q["line"] >= 1).all()
    findings, checked = collect(store)  # the store route validates whatever was stored
    assert checked == store.count()
    return report, store


# ---- regressions: crashes these properties found -----------------------------------------------
BACCARAT = {"round_id": "R1", "game": "baccarat", "table_id": "T1", "started_at": "2025-06-02T09:21:45-05:00",
            "shoe_id": "S1", "round_seq": 1, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"],
            "outcome": "player", "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}


def _log(tmp_path: Path, name: str, data: bytes) -> tuple[Any, Store]:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "in" / name).write_bytes(data)
    return _ingest(tmp_path)


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-05:00"])
def test_started_at_beyond_utc_range_is_a_bad_record(tmp_path, stamp):
    """Was OverflowError in parse_record: a time that is before year 1 or after 9999 in UTC."""
    with pytest.raises(BadRecord, match="out of range in UTC"):
        parse_record({**BACCARAT, "started_at": stamp})
    report, store = _log(tmp_path, "log.jsonl", (json.dumps({**BACCARAT, "started_at": stamp}) + "\n"
                                                 + json.dumps({**BACCARAT, "round_id": "R2"}) + "\n").encode())
    [src] = report.sources
    assert (src.stored, src.quarantined) == (1, 1)
    assert store.quarantine()["reason"].iloc[0] == f"field started_at {stamp!r} is out of range in UTC"
    assert parse_record({**BACCARAT, "started_at": "0001-01-01T00:00:00-01:00"})[1] == "0001-01-01"  # in range


@pytest.mark.parametrize("field, where", [("round_id", "round_id"), ("table_id", "table_id"),
                                          ("bet", "wagers[0].bet")])
def test_lone_surrogate_in_a_text_field_is_a_bad_record(tmp_path, field, where):
    """Was UnicodeEncodeError (validate_records, and ingest writing the index or quarantine): JSON may
    escape a lone surrogate ("\\ud800"), which UTF-8 text cannot hold."""
    rec = json.loads(json.dumps(BACCARAT))
    (rec["wagers"][0] if field == "bet" else rec)[field] = "A\ud800"
    with pytest.raises(BadRecord, match=rf"field {re.escape(where)} is not valid Unicode text"):
        parse_record(rec)
    with pytest.raises(BadRecord):
        validate_records([rec])
    report, store = _log(tmp_path, "log.jsonl", (json.dumps(rec) + "\n" + json.dumps({**BACCARAT, "round_id": "R2"})
                                                 + "\n").encode())
    assert (report.sources[0].stored, report.sources[0].quarantined) == (1, 1)
    q = store.quarantine()
    assert q["raw"].iloc[0] == json.dumps(rec)  # the line as written, escape included
    assert q["round_id"].isna().iloc[0] if field == "round_id" else q["round_id"].iloc[0] == "R1"


def test_csv_line_that_is_not_utf8_is_quarantined_alone(tmp_path):
    """Was an unbalanced ingest (AssertionError): one bad byte made the whole CSV file, companions
    included, a single quarantine entry at line 0 that no line accounted for."""
    (tmp_path / "in").mkdir()
    main = ("round_id,game,table_id,started_at,shoe_id,round_seq,player_cards,banker_cards,outcome\n"
            "C1,baccarat,T1,2025-06-02T09:00:00-05:00,S1,1,9c Qh,4c 9h,player\n"
            "C2,baccarat,T\xff,2025-06-02T09:01:00-05:00,S1,2,9c Qh,4c 9h,player\n"
            "C3,baccarat,T1,2025-06-02T09:02:00-05:00,S1,3,9c Qh,4c 9h,player\n")
    (tmp_path / "in" / "r.csv").write_bytes(b"\xef\xbb\xbf" + main.encode("latin-1"))
    (tmp_path / "in" / "r.wagers.csv").write_bytes(b"round_id,seat,bet,amount,net\nC1,1,player,10,10\n"
                                                   b"C3,1,pl\xe9yer,10,10\nC3,2,player,10,10\n")
    report, store = _ingest(tmp_path)
    [src] = report.sources
    assert (src.lines_read, src.stored, src.quarantined, src.attached, src.blank) == (8, 2, 2, 2, 2)
    q = store.quarantine().sort_values("line")
    assert list(q["line"]) == [3, 3] and q["reason"].str.startswith("line is not UTF-8").all()
    assert sorted(q["source_file"].map(lambda f: Path(f).name)) == ["r.csv", "r.wagers.csv"]
    rows = {r["round_id"]: r for r in store.read("baccarat", "2025-06-02").to_pylist()}
    assert sorted(rows) == ["C1", "C3"]


def test_json_too_deep_or_with_a_4301_digit_integer_is_read_or_quarantined(tmp_path):
    """Was RecursionError / ValueError out of json.loads, which stopped the ingest: a line nested
    past Python's recursion limit is a bad record ('nested too deeply'); an integer of more than
    4,300 digits (Python's limit for int) is read as a float: harmless in an extra field, refused
    by the field reader in a spec field."""
    good = json.dumps(BACCARAT)[:-1]
    lines = ["[" * 100_000,
             good + ', "x": ' + "[" * 5000 + "]" * 5000 + "}",
             good.replace('"R1"', '"R2"') + ', "x": ' + "9" * 5000 + "}",
             good.replace('"R1"', '"R3"').replace('"round_seq": 1', '"round_seq": ' + "9" * 5000) + "}"]
    report, store = _log(tmp_path, "log.jsonl", "\n".join(lines).encode())
    [src] = report.sources
    assert (src.lines_read, src.stored, src.quarantined) == (4, 1, 3)
    assert store.read("baccarat", "2025-06-02")["round_id"].to_pylist() == ["R2"]
    assert list(store.quarantine().sort_values("line")["reason"]) == [
        "not valid JSON: nested too deeply", "not valid JSON: nested too deeply",
        "field round_seq must be an integer, got inf"]


def test_integers_beyond_float_or_printing_range_are_bad_records(tmp_path):
    """Was OverflowError (an amount of 10**400: math.isfinite) and ValueError (a reason printing
    10**5000 past Python's 4,300-digit limit) out of parse_record; now BadRecord, and a JSON line
    with a 400-digit amount is quarantined."""
    wager = {"seat": 1, "bet": "player", "amount": 10**400, "net": 0}
    with pytest.raises(BadRecord, match=r"field wagers\[0\]\.amount must be a number, got 1000"):
        parse_record({**BACCARAT, "wagers": [wager]})
    for field, value, reason in [
            ("wagers", [{**wager, "amount": 10**5000}], "wagers[0].amount must be a number, got a number of more"),
            ("round_seq", 10**5000, "round_seq = a number of more than 4,300 digits is too large"),
            ("round_seq", [10**5000], "round_seq must be an integer, got a number of more"),
            ("cut_card", 10**5000, "cut_card must be true or false, got a number of more"),
            ("player_cards", ["9c", 10**5000], "player_cards: card a number of more than 4,300 digits is not a string")]:
        with pytest.raises(BadRecord, match=re.escape(reason)):
            parse_record({**BACCARAT, field: value})
    line = json.dumps({**BACCARAT, "wagers": [{**wager, "amount": 1}]}).replace('"amount": 1', '"amount": 1' + "0" * 400)
    report, store = _log(tmp_path, "log.jsonl", line.encode() + b"\n")
    assert report.sources[0].quarantined == 1
    assert store.quarantine()["reason"].iloc[0].startswith("field wagers[0].amount must be a number, got 1000")
