"""Spreadsheet-safe CSV export and summaries."""

import csv

import pandas as pd
import pytest

from auditkit.report import safe_cell, write_csv
from auditkit.summaries import payout_totals, summarize
from auditkit.validate import empty_findings


@pytest.mark.parametrize("value, out", [
    ("=1+2", "'=1+2"), ("+SUM(A1)", "'+SUM(A1)"), ("-2+3", "'-2+3"), ("@cmd", "'@cmd"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("\nx", "'\nx"),
    ("-5.00", "-5.00"), ("-100", "-100"), ("+3", "+3"), ("1e5", "1e5"),
    ("plain", "plain"), ("", ""), (-5.0, -5.0), (12, 12), (None, None),
])
def test_safe_cell(value, out):
    assert safe_cell(value) == out


def test_csv_export_is_safe_and_numbers_stay_numbers(tmp_path):
    f = empty_findings()
    row = {c: "" for c in f.columns}
    row.update(round_id="=HYPERLINK(\"http://x\")", game="baccarat", table_id="@T1", dealer_id="-D1",
               message="+cmd|' /C calc'!A0", expected="-100.00", recorded="net -50", discrepancy=-50.0,
               source_line=3)
    frame = pd.concat([f, pd.DataFrame([row])], ignore_index=True)
    path = write_csv(frame, tmp_path / "r.csv")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["round_id"].startswith("'=") and rows[0]["table_id"] == "'@T1"
    assert rows[0]["dealer_id"] == "'-D1" and rows[0]["message"].startswith("'+")
    assert rows[0]["expected"] == "-100.00" and rows[0]["discrepancy"] == "-50.00"
    assert rows[0]["recorded"] == "net -50"


def test_clean_run_writes_header_only(tmp_path):
    path = write_csv(empty_findings(), tmp_path / "r.csv")
    assert path.read_text().strip() == ("round_id,game,table_id,dealer_id,started_at,rule_id,citation,severity,"
                                        "message,expected,recorded,discrepancy,expected_amount,recorded_amount,"
                                        "seats,shoe_id,date,source_file,source_line,evidence")


def test_summaries_and_payout_totals():
    f = pd.DataFrame({"round_id": ["a", "a", "b", "c"], "table_id": ["T1", "T1", "T1", "T2"],
                      "rule_id": ["x", "y", "x", "x"], "discrepancy": [10.0, 0.0, -2.5, -1.25]})
    assert payout_totals(f) == {"overpaid": 10.0, "underpaid": 3.75, "net": 6.25, "overpaid_findings": 1,
                                "underpaid_findings": 2}
    s = summarize(f, "table_id").set_index("table_id")
    assert s.loc["T1", "findings"] == 3 and s.loc["T1", "rounds"] == 2
    assert s.loc["T1", "overpaid"] == 10.0 and s.loc["T1", "underpaid"] == 2.5
    assert s.loc["T2", "underpaid"] == 1.25
