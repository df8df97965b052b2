"""The findings as an Excel workbook, for auditors who work in a spreadsheet (``--xlsx``).

Sheets: ``Summary`` (the scope, totals by severity and by citation), ``Findings`` (one row per finding,
the report's columns: a frozen header, an autofilter, money as numbers in a money format, times as
dates), ``By citation``, ``By table``, ``By dealer``, ``By day``, ``Coverage`` (what could not be
checked, and why) and ``Quarantine`` (lines that could not be read). Text is always written as text,
never as a formula, so a cell from a log that starts with ``=`` stays inert. Written through a
temporary file and a rename (atomic). XlsxWriter is imported only here.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from .rules.template import evidence_text
from .schema import SUMMARIES
from .status import SEVERITIES
from .store import atomic_path

__all__ = ["write_workbook", "MONEY_COLUMNS"]

MONEY_COLUMNS = {"discrepancy", "expected_amount", "recorded_amount", "overpaid", "underpaid"}
_MONEY_FORMAT = '#,##0.00;[Red]-#,##0.00'
_WIDEST = 60  # characters: a long message wraps in the cell instead of a column across the screen


def _close_zips(tb: Any) -> None:
    """Close the zip file a failed ``Workbook.close`` left open (its finalizer would print the same error again)."""
    import zipfile

    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            if isinstance(value, zipfile.ZipFile):
                with contextlib.suppress(OSError):
                    value.close()
        tb = tb.tb_next


def write_workbook(path: str | Path, findings: pd.DataFrame, *, scope: Mapping[str, Any] | None = None,
                   coverage: pd.DataFrame | None = None, quarantine: pd.DataFrame | None = None) -> Path:
    """Write the workbook of ``findings`` (the report's columns) to ``path``, atomically."""
    import xlsxwriter
    import xlsxwriter.exceptions

    from .report import summarize

    path = Path(path)
    with atomic_path(path) as tmp:
        book = xlsxwriter.Workbook(str(tmp), {"strings_to_formulas": False, "strings_to_urls": False,
                                              "strings_to_numbers": False, "nan_inf_to_errors": True})
        # the same findings give the same bytes (a job's outputs are compared run to run): no clock in the file
        book.set_properties({"created": datetime(2000, 1, 1)})
        formats = {"money": book.add_format({"num_format": _MONEY_FORMAT}),
                   "time": book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"}),
                   "head": book.add_format({"bold": True, "bg_color": "#DDE4EE", "border": 1}),
                   "title": book.add_format({"bold": True, "font_size": 14}),
                   "wrap": book.add_format({"text_wrap": True, "valign": "top"})}
        _summary(book, formats, findings, scope or {}, summarize)
        _sheet(book, formats, "Findings", _findings_frame(findings))
        for name, by in SUMMARIES.items():
            _sheet(book, formats, f"By {name}", summarize(findings, by))
        if coverage is not None:
            _sheet(book, formats, "Coverage", coverage)
        if quarantine is not None:
            _sheet(book, formats, "Quarantine", quarantine)
        try:
            book.close()
        except xlsxwriter.exceptions.FileCreateError as exc:  # its wrapper of the system error (a full disk)
            _close_zips(getattr(exc.__context__, "__traceback__", None))
            raise exc.__context__ if isinstance(exc.__context__, OSError) else OSError(str(exc)) from exc
    return path


def _findings_frame(findings: pd.DataFrame) -> pd.DataFrame:
    """The findings with ``started_at`` as a local date and time (a spreadsheet sorts and filters it)."""
    out = findings.copy()
    if "evidence" in out:
        out["evidence"] = out["evidence"].map(evidence_text)
    if "started_at" in out and len(out):
        stamps = pd.to_datetime(out["started_at"], errors="coerce", utc=False, format="ISO8601")
        out["started_at"] = [s.replace(tzinfo=None) if isinstance(s, pd.Timestamp) and s is not pd.NaT else None
                             for s in stamps]
    return out


def _summary(book: Any, formats: dict[str, Any], findings: pd.DataFrame, scope: Mapping[str, Any],
             summarize: Any) -> None:
    sheet = book.add_worksheet("Summary")
    sheet.set_column(0, 0, 28)
    sheet.set_column(1, 4, 18)
    sheet.write_string(0, 0, "auditkit findings", formats["title"])
    row = 2
    for key, value in scope.items():
        sheet.write_string(row, 0, str(key))
        _cell(sheet, row, 1, value, None, formats)
        row += 1
    row += 1
    sheet.write_row(row, 0, ["severity", "findings"], formats["head"])
    for severity in SEVERITIES:
        row += 1
        sheet.write_string(row, 0, severity)
        sheet.write_number(row, 1, int((findings["severity"] == severity).sum()) if len(findings) else 0)
    row += 2
    by_citation = summarize(findings, SUMMARIES["citation"])
    columns = list(by_citation.columns)
    sheet.write_row(row, 0, columns, formats["head"])
    for _, values in by_citation.iterrows():
        row += 1
        for j, c in enumerate(columns):
            _cell(sheet, row, j, values[c], c, formats)


def _sheet(book: Any, formats: dict[str, Any], name: str, frame: pd.DataFrame) -> None:
    """A sheet of a frame: the header frozen and filtered, each column as wide as it reads."""
    sheet = book.add_worksheet(name[:31])
    columns = list(frame.columns)
    sheet.write_row(0, 0, columns, formats["head"])
    sheet.freeze_panes(1, 0)
    for j, c in enumerate(columns):
        values = frame[c].tolist()
        for i, v in enumerate(values, start=1):
            _cell(sheet, i, j, v, c, formats)
        texts = [len(str(v)) for v in values[:2000] if v is not None and v == v]
        width = min(max([len(c), *texts]) + 2, _WIDEST)
        wrap = formats["wrap"] if width == _WIDEST else None
        sheet.set_column(j, j, width, formats["money"] if c in MONEY_COLUMNS else wrap)
    if columns:
        sheet.autofilter(0, 0, max(len(frame), 1), len(columns) - 1)


def _cell(sheet: Any, row: int, col: int, value: Any, column: str | None, formats: dict[str, Any]) -> None:
    """One cell as its type: numbers as numbers (money in the money format), times as dates, text as
    text (never a formula), nothing for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return
    if isinstance(value, bool):
        sheet.write_boolean(row, col, value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and math.isinf(value):
            sheet.write_string(row, col, str(value))
        else:
            sheet.write_number(row, col, value, formats["money"] if column in MONEY_COLUMNS else None)
    elif isinstance(value, datetime):
        sheet.write_datetime(row, col, value, formats["time"])
    elif hasattr(value, "item"):  # a numpy scalar
        _cell(sheet, row, col, value.item(), column, formats)
    else:
        sheet.write_string(row, col, str(value))
