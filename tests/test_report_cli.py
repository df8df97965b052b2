"""``auditkit report``: re-export stored findings for a period, games, tables, citations; spreadsheet-safe CSV."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest
from test_job import day_records, key, run_folders, snapshot, write_job, write_log

from auditkit.cli import main
from auditkit.store import Store
from auditkit.validate import validate_records

PAYTABLE_ROUND = "BAC-20250602-3e9b44"  # a paytable finding, discrepancy -1.25


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store filled by a job run: the example shoe on 2025-06-02 (table EX-BAC-1) and 06-03 (EX-BAC-2)."""
    write_log(tmp_path / "logs" / "day0.jsonl", day_records(0, "a"))
    day1 = day_records(1, "b")
    for r in day1:
        r["table_id"] = "EX-BAC-2"
    write_log(tmp_path / "logs" / "day1.jsonl", day1)
    job = write_job(tmp_path)
    assert main(["-q", "run", str(job)]) == 1
    return tmp_path / "store"


def report(store: Path, out: Path, *args: str) -> pd.DataFrame:
    assert main(["-q", "report", "--store", str(store), "--out", str(out), *args]) == 0
    return pd.read_csv(out, keep_default_na=False)


def test_report_filters_period_game_tables_citations(store, tmp_path):
    out = tmp_path / "r.csv"
    both = validate_records(day_records(0, "a") + day_records(1, "b"))
    everything = report(store, out)
    assert key(everything) == key(both) and len(everything) == 34
    day1 = report(store, out, "--from", "2025-06-03", "--to", "2025-06-03")
    assert key(day1) == key(validate_records(day_records(1, "b")))
    assert key(report(store, out, "--to", "2025-06-02")) == key(validate_records(day_records(0, "a")))
    assert set(report(store, out, "--table", "EX-BAC-2")["round_id"]) == set(day1["round_id"])
    assert len(report(store, out, "--table", "EX-BAC-*")) == 34
    assert report(store, out, "--table", "EX-BJ-*").empty
    pay = report(store, out, "--citation", "paytable")
    assert list(pay["discrepancy"]) == [-1.25, -1.25] and set(pay["citation"]) == {"paytable"}
    two = report(store, out, "--citation", "paytable", "--citation", "68 IAC 10-10-14(c)")
    assert sorted(set(two["citation"])) == ["68 IAC 10-10-14(c)", "paytable"] and len(two) == 4
    assert set(report(store, out, "--severity", "medium")["severity"]) == {"medium", "high"}
    assert set(report(store, out, "--severity", "high")["severity"]) == {"high"}
    assert set(report(store, out, "--dealer", "D1103")["dealer_id"]) == {"D1103"}
    assert report(store, out, "--game", "blackjack").empty
    header = out.read_text().splitlines()
    assert header == [",".join(everything.columns)]  # a header alone when nothing matches
    assert len(report(store, out, "--game", "baccarat", "--from", "2025-06-03")) == 17


def test_report_summaries(store, tmp_path):
    out = tmp_path / "s.csv"
    by_table = report(store, out, "--summary", "table")
    assert dict(zip(by_table["table_id"], by_table["findings"], strict=True)) == {"EX-BAC-1": 17, "EX-BAC-2": 17}
    assert dict(zip(by_table["table_id"], by_table["underpaid"], strict=True)) == {"EX-BAC-1": 1.25, "EX-BAC-2": 1.25}
    by_day = report(store, out, "--summary", "day")
    assert dict(zip(by_day["date"], by_day["findings"], strict=True)) == {"2025-06-02": 17, "2025-06-03": 17}
    by_citation = report(store, out, "--summary", "citation", "--from", "2025-06-03")
    assert by_citation["findings"].sum() == 17 and "paytable" in set(by_citation["citation"])
    assert report(store, out, "--summary", "dealer")["findings"].sum() == 34


def test_report_reads_the_store_without_revalidating(store, tmp_path, monkeypatch):
    import auditkit.engine.partitions
    import auditkit.validate

    def no(*a, **k):
        raise AssertionError("report must not validate")

    monkeypatch.setattr(auditkit.engine.partitions, "_read", no)  # every route reads partitions here
    monkeypatch.setattr(auditkit.validate, "validate_into_store", no)
    before = snapshot(store)
    out, pq = tmp_path / "r.csv", tmp_path / "r.parquet"
    assert main(["-q", "report", "--job", str(tmp_path / "nightly.toml"), "--out", str(out), "--parquet", str(pq)]) == 0
    assert key(pd.read_csv(out)) == key(Store(store).findings()) == key(pd.read_parquet(pq))
    assert snapshot(store) == before


@pytest.mark.parametrize("args, message", [
    ([], "either --store or --job"),
    (["--store", "S", "--job", "J"], "either --store or --job"),
    (["--store", "{tmp}"], "is not a store"),
    (["--store", "{store}", "--from", "June 3"], "--from must be a date"),
    (["--store", "{store}", "--from", "2025-06-04", "--to", "2025-06-03"], "--from is after --to"),
    (["--store", "{store}", "--game", "roulette"], "invalid choice"),
    (["--store", "{store}", "--severity", "huge"], "invalid choice"),
    (["--job", "{tmp}/missing.toml"], "cannot read job file"),
])
def test_report_exit_2(store, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path / "empty", store=store) for a in args]
    (tmp_path / "empty").mkdir()
    assert main(["report", "--out", str(tmp_path / "x.csv"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


# ---- OWASP CSV injection: text cells beginning = + - @ are escaped, numbers stay numbers --------
DEALERS = {
    PAYTABLE_ROUND: '=HYPERLINK("http://evil.example","x")',  # paytable, discrepancy -1.25
    "BAC-20250602-7812fb": "+1+2",                            # (c)
    "BAC-20250602-64c2a3": "-2+3",                            # (b)(5)
    "BAC-20250602-0f5c39": "@SUM(A1:A9)",                     # (b)(1)
    "BAC-20250602-7c2c3c": "-5",                              # (b)(7): numeric text stays as it is
    "BAC-20250602-f972f9": "\tD1",                            # (b)(6)
}


def _cells(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["round_id"]: row for row in csv.DictReader(fh)}


def test_csv_export_is_spreadsheet_safe_and_negative_numbers_stay_numbers(tmp_path):
    records = day_records(0, "a")
    for r in records:
        r["dealer_id"] = DEALERS.get(r["round_id"].removesuffix("-a"), r.get("dealer_id"))
    write_log(tmp_path / "logs" / "day0.jsonl", records)
    assert main(["-q", "run", str(write_job(tmp_path))]) == 1
    run_csv = run_folders(tmp_path / "reports")[0] / "findings.csv"
    out = tmp_path / "report.csv"
    assert main(["-q", "report", "--store", str(tmp_path / "store"), "--out", str(out)]) == 0
    for path in (run_csv, out):
        rows = _cells(path)
        for rid, dealer in DEALERS.items():
            cell = rows[f"{rid}-a"]["dealer_id"]
            assert cell == (dealer if dealer == "-5" else "'" + dealer), (rid, cell)
        pay = rows[f"{PAYTABLE_ROUND}-a"]
        assert pay["discrepancy"] == "-1.25" and float(pay["discrepancy"]) == -1.25
        # a cell may start with + or - only as a plain number (a signed net), which a spreadsheet reads as one
        assert all(not c.startswith(("=", "+", "@", "\t")) or re.fullmatch(r"[+-]\d+(\.\d+)?", c) for row in rows.values()
                   for c in row.values())
        assert all(r["source_line"].isdigit() for r in rows.values())
    summary = run_folders(tmp_path / "reports")[0] / "summary_by_dealer.csv"
    with open(summary, newline="", encoding="utf-8") as fh:
        dealers = {row["dealer_id"]: row for row in csv.DictReader(fh)}
    assert "'" + DEALERS[PAYTABLE_ROUND] in dealers and dealers["'" + DEALERS[PAYTABLE_ROUND]]["underpaid"] == "1.25"
    assert "-5" in dealers


def test_report_warns_about_sources_never_validated(store, tmp_path, capsys):
    write_log(tmp_path / "more" / "day2.jsonl", day_records(2, "c"))
    assert main(["-q", "ingest", str(tmp_path / "more"), "--store", str(store)]) == 0
    capsys.readouterr()
    got = report(store, tmp_path / "r.csv")
    assert "1 source(s) in the store were never validated" in capsys.readouterr().err
    assert len(got) == 34  # the report shows what was validated; the next run adds the rest
    assert main(["-q", "run", str(tmp_path / "nightly.toml")]) == 1
    assert last_record_status(tmp_path) == ["findings", "findings"]
    capsys.readouterr()
    assert len(report(store, tmp_path / "r.csv")) == 51
    assert "never validated" not in capsys.readouterr().err


def last_record_status(folder: Path) -> list[str]:
    import json

    return [json.loads((f / "run.json").read_text())["status"] for f in run_folders(folder / "reports")]
