"""The findings as an Excel workbook, for auditors who work in a spreadsheet (``--xlsx``).

Sheets: ``Summary`` (the scope: period, filters, rounds checked, totals overpaid and underpaid,
coverage, provenance; then totals by severity and by citation), ``Findings`` (one row per finding,
the report's columns: a frozen header, an autofilter, money as numbers in a money format naming the
currency, gaming days as dates, local times as dates with their UTC offset beside), ``By citation``,
``By table``, ``By dealer``, ``By day``, ``Coverage`` (what could not be checked, and why) and
``Quarantine`` (lines that could not be read). Every sheet prints landscape, one page wide, its header
row repeated. Text is always written as text,
never as a formula, so a cell from a log that starts with ``=`` stays inert. Written through a
temporary file and a rename (atomic). XlsxWriter is imported only here.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .rules.template import evidence_text
from .schema import SUMMARIES
from .status import SEVERITIES
from .store import atomic_path

if TYPE_CHECKING:
    from .reportcontext import ReportContext

__all__ = ["write_workbook", "MONEY_COLUMNS"]

MONEY_COLUMNS = {"discrepancy", "expected_amount", "recorded_amount", "overpaid", "underpaid"}
_WIDEST = 50  # characters: a long message wraps in the cell instead of a column across the page
LOCAL_TIME = "started_at (local time)"
ZONE = "utc_offset"


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
                   coverage: pd.DataFrame | None = None, quarantine: pd.DataFrame | None = None,
                   context: ReportContext | None = None) -> Path:
    """Write the workbook of ``findings`` (the report's columns) to ``path``, atomically; ``context``
    (:mod:`auditkit.reportcontext`) gives the period, filters, rounds, currency and provenance."""
    import xlsxwriter
    import xlsxwriter.exceptions

    from .reportcontext import currency_of
    from .summaries import summarize

    path = Path(path)
    currency = context.currency if context is not None else currency_of()
    money = f'#,##0.00 "{currency}";[Red]-#,##0.00 "{currency}"'
    with atomic_path(path) as tmp:
        book = xlsxwriter.Workbook(str(tmp), {"strings_to_formulas": False, "strings_to_urls": False,
                                              "strings_to_numbers": False, "nan_inf_to_errors": True})
        # the same findings give the same bytes (a job's outputs are compared run to run): no clock in the file
        book.set_properties({"created": datetime(2000, 1, 1)})
        formats = {"money": book.add_format({"num_format": money}),
                   "time": book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"}),
                   "date": book.add_format({"num_format": "yyyy-mm-dd"}),
                   "head": book.add_format({"bold": True, "bg_color": "#DDE4EE", "border": 1, "text_wrap": True,
                                            "valign": "top"}),
                   "title": book.add_format({"bold": True, "font_size": 14}),
                   "bold": book.add_format({"bold": True}),
                   "wrap": book.add_format({"text_wrap": True, "valign": "top"}), "currency": currency}
        _summary(book, formats, findings, scope or {}, summarize, coverage, context)
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
    """The findings with ``started_at`` as a local date and time (a spreadsheet sorts and filters it),
    its UTC offset in the next column (``UTC-05:00``) so the zone is stated."""
    out = findings.copy()
    if "evidence" in out:
        out["evidence"] = out["evidence"].map(evidence_text)
    if "started_at" in out:
        text = out["started_at"].astype("string")
        stamps = pd.to_datetime(text, errors="coerce", utc=False, format="ISO8601") if len(out) else text
        local = [s.replace(tzinfo=None) if isinstance(s, pd.Timestamp) and s is not pd.NaT else None for s in stamps]
        zone = text.str.extract(r"([+-]\d\d:?\d\d|Z)$", expand=False).fillna("")
        zone = ("UTC" + zone.str.replace("Z", "+00:00", regex=False)).where(zone != "", None)
        at = out.columns.get_loc("started_at")
        out = out.drop(columns="started_at")
        out.insert(at, LOCAL_TIME, local)
        out.insert(at + 1, ZONE, zone.astype(object))
    return out


def _summary_rows(findings: pd.DataFrame, scope: Mapping[str, Any], coverage: pd.DataFrame | None,
                  context: ReportContext | None, currency: str) -> list[tuple[str, Any, str | None]]:
    """What the summary sheet says, a (key, value, format) row each: the period, the rounds checked and the
    filters, the scope, the findings and their money, the coverage, the provenance and the inputs."""
    from .summaries import payout_totals

    money = payout_totals(findings) if len(findings) else {"overpaid": 0.0, "underpaid": 0.0}
    period = context.period if context is not None else None
    rows: list[tuple[str, Any, str | None]] = [
        ("period: first gaming day", date.fromisoformat(period[0]) if period else "no round", "date"),
        ("period: last gaming day", date.fromisoformat(period[1]) if period else "no round", "date")]
    if context is not None:
        rows.append(("rounds checked", context.rounds_checked, None))
        filters = context.filters
        rows.append(("filters", "none: every round of the inputs" if not filters else
                     " ".join(f"{k} {v}" for k, v in filters.items()), None))
    rows += [(str(k), v, None) for k, v in scope.items() if k != "findings"
             and not (context is not None and k == "rounds checked")]
    rows += [("findings", len(findings), None),
             (f"overpaid ({currency})", money["overpaid"], "money"),
             (f"underpaid ({currency})", money["underpaid"], "money")]
    if coverage is not None and len(coverage):
        short = coverage[coverage["rounds_not_checkable"] > 0]
        rows.append(("coverage", f"{len(coverage) - len(short)} of {len(coverage)} check(s) could check every round "
                     "in scope" + (f"; {len(short)} could not check some (see the Coverage sheet)" if len(short)
                                   else ""), None))
    if context is not None:
        rows += [(f"provenance: {k}", v, None) for k, v in context.provenance.items()]
        from .reportcontext import INPUTS_LISTED

        rows += [(f"input {i}: {path}", sha, None)
                 for i, (path, sha) in enumerate(context.inputs[:INPUTS_LISTED], start=1)]
        if len(context.inputs) > INPUTS_LISTED:
            rows.append(("inputs not listed", f"{len(context.inputs) - INPUTS_LISTED:,}: the store's manifest lists "
                         "them", None))
    return rows


def _summary(book: Any, formats: dict[str, Any], findings: pd.DataFrame, scope: Mapping[str, Any],
             summarize: Any, coverage: pd.DataFrame | None, context: ReportContext | None) -> None:
    sheet = book.add_worksheet("Summary")
    _print(sheet, header_rows=False)
    sheet.set_column(0, 0, 34)
    sheet.set_column(1, 1, 24)
    sheet.set_column(2, 6, 14)
    sheet.write_string(0, 0, "auditkit findings", formats["title"])
    currency = formats["currency"]
    rows = _summary_rows(findings, scope, coverage, context, currency)
    row = 2
    for key, value, fmt in rows:
        sheet.write_string(row, 0, key, formats["bold"])
        if fmt == "date" and isinstance(value, date):
            sheet.write_datetime(row, 1, datetime(value.year, value.month, value.day), formats["date"])
        else:
            _cell(sheet, row, 1, value, "overpaid" if fmt == "money" else None, formats)
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
    sheet.write_row(row, 0, [_header(c, currency) for c in columns], formats["head"])
    for _, values in by_citation.iterrows():
        row += 1
        for j, c in enumerate(columns):
            _cell(sheet, row, j, values[c], c, formats)


def _header(column: str, currency: str) -> str:
    return f"{column} ({currency})" if column in MONEY_COLUMNS else column


def _print(sheet: Any, header_rows: bool = True) -> None:
    """Print landscape on Letter, one page wide (as many pages long as it needs), the header repeated."""
    sheet.set_landscape()
    sheet.set_paper(1)
    sheet.fit_to_pages(1, 0)
    sheet.set_margins(left=0.4, right=0.4, top=0.5, bottom=0.5)
    if header_rows:
        sheet.repeat_rows(0)


def _sheet(book: Any, formats: dict[str, Any], name: str, frame: pd.DataFrame) -> None:
    """A sheet of a frame: the header frozen and filtered, each column as wide as it reads (long text
    wrapped), gaming days as dates, money in the currency's format."""
    sheet = book.add_worksheet(name[:31])
    _print(sheet)
    columns = list(frame.columns)
    sheet.write_row(0, 0, [_header(c, formats["currency"]) for c in columns], formats["head"])
    sheet.freeze_panes(1, 0)
    for j, c in enumerate(columns):
        values = frame[c].tolist()
        if c in ("date", "day"):
            values = [_day(v) for v in values]
        for i, v in enumerate(values, start=1):
            _cell(sheet, i, j, v, c, formats)
        if c in ("date", "day"):
            texts = [10]
        elif c == LOCAL_TIME:
            texts = [19]
        else:
            texts = [len(_shown(v)) for v in values[:2000] if v is not None and v == v]
        head = max(len(w) for w in _header(c, formats["currency"]).split()) if c else 0
        width = min(max([head, *texts]) + 2, _WIDEST)
        wrap = formats["wrap"] if width == _WIDEST else None
        sheet.set_column(j, j, width, formats["money"] if c in MONEY_COLUMNS else wrap)
    if columns:
        sheet.autofilter(0, 0, max(len(frame), 1), len(columns) - 1)


def _day(value: Any) -> Any:
    """A gaming day ``2025-06-01`` as a date (text that is not one stays text)."""
    if isinstance(value, str):
        try:
            d = date.fromisoformat(value)
        except ValueError:
            return value
        return datetime(d.year, d.month, d.day)
    return value


def _shown(value: Any) -> str:
    """The text a cell shows (money to the cent with separators and the currency)."""
    if isinstance(value, float):
        return f"{value:,.2f} XXX"  # and the currency's code
    return str(value)


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
        sheet.write_datetime(row, col, value, formats["date"] if column in ("date", "day") else formats["time"])
    elif hasattr(value, "item"):  # a numpy scalar
        _cell(sheet, row, col, value.item(), column, formats)
    else:
        sheet.write_string(row, col, str(value))
