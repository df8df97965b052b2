"""The Excel workbook (--xlsx): read back as a spreadsheet reads it: sheets, numbers as numbers, times as
dates, text never a formula."""

from __future__ import annotations

import datetime
import zipfile
from pathlib import Path

import pandas as pd
from python_calamine import CalamineWorkbook

from auditkit.cli import main
from auditkit.schema import FINDINGS
from auditkit.workbook import write_workbook

LOGS = Path(__file__).resolve().parents[1] / "sample_data" / "logs"


def _finding(**kw) -> dict:
    row = {f.name: None for f in FINDINGS}
    row.update(round_id="R1", game="baccarat", table_id="BAC-1", dealer_id="D1", started_at="2025-06-01T04:02:00-05:00",
               rule_id="baccarat.paytable", citation="paytable", severity="high", message="m", expected="e",
               recorded="r", discrepancy=-1.25, expected_amount=23.75, recorded_amount=22.5, date="2025-06-01",
               source_file="a.jsonl", source_line=7)
    row.update(kw)
    return row


def test_a_workbook_reads_back_typed(tmp_path):
    findings = pd.DataFrame([_finding(), _finding(round_id="R2", message='=HYPERLINK("http://x","y")',
                                               discrepancy=float("nan"), expected_amount=float("nan"),
                                               recorded_amount=float("nan"))])
    path = write_workbook(tmp_path / "f.xlsx", findings, scope={"rounds checked": 2},
                          quarantine=pd.DataFrame({"source_file": ["a.jsonl"], "line": [3], "reason": ["bad"]}))
    book = CalamineWorkbook.from_path(str(path))
    assert book.sheet_names == ["Summary", "Findings", "By citation", "By table", "By dealer", "By day", "Quarantine"]
    rows = book.get_sheet_by_name("Findings").to_python()
    header = rows[0]
    first = dict(zip(header, rows[1], strict=True))
    assert first["discrepancy (USD)"] == -1.25 and first["source_line"] == 7
    assert first["started_at (local time)"] == datetime.datetime(2025, 6, 1, 4, 2) and first["utc_offset"] == "UTC-05:00"
    second = dict(zip(header, rows[2], strict=True))
    assert second["message"] == '=HYPERLINK("http://x","y")' and second["discrepancy (USD)"] == ""
    with zipfile.ZipFile(path) as z:
        assert not any(b"<f>" in z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert dict((r[0], r[1]) for r in book.get_sheet_by_name("Summary").to_python() if r[0])["rounds checked"] == 2


def test_validate_writes_a_workbook(tmp_path):
    xlsx = tmp_path / "f.xlsx"
    assert main(["-q", "validate", str(LOGS / "baccarat.jsonl"), "--out", str(tmp_path / "f.csv"),
                 "--xlsx", str(xlsx)]) == 1
    book = CalamineWorkbook.from_path(str(xlsx))
    findings = book.get_sheet_by_name("Findings").to_python()
    assert len(findings) - 1 == len(pd.read_csv(tmp_path / "f.csv"))
    assert "Coverage" in book.sheet_names and "Quarantine" in book.sheet_names
