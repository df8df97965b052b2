"""Findings out: spreadsheet-safe CSV, Parquet, the summaries (:mod:`auditkit.summaries`) and coverage as CSV, and
every report of a run at once (:func:`write_outputs`: the workbook and the HTML page too).

CSV cells are escaped against formula injection (OWASP): a text cell that
begins with ``= + - @``, a tab, CR or LF gets a leading apostrophe, unless the
whole cell is a plain number, which stays a number (``-5.00`` is not touched).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .rules.template import evidence_text
from .schema import FINDINGS, SUMMARIES
from .store import atomic_path, write_parquet_atomic
from .summaries import payout_totals, summarize, summary_by_citation

__all__ = ["safe_cell", "spreadsheet_safe", "csv_text", "pandas_csv_text", "write_csv", "write_findings_parquet", "format_summary",
           "write_summaries", "write_coverage", "SUMMARIES", "Outputs", "write_outputs"]

_DANGER = ("=", "+", "-", "@", "\t", "\r", "\n")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def safe_cell(value: object) -> object:
    """A value safe to put in a spreadsheet cell; numbers and numeric text pass unchanged."""
    if not isinstance(value, str) or not value or not value.startswith(_DANGER):
        return value
    if _NUMBER.match(value):
        return value
    return "'" + value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns are escaped with :func:`safe_cell` (a finding's evidence
    written out as ``name=value; ...``)."""
    out = frame.copy()
    if "evidence" in out.columns:
        out["evidence"] = out["evidence"].map(evidence_text)
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(safe_cell)
    return out


def csv_text(frame: pd.DataFrame, fh: IO[str] | None = None, *, header: bool = True) -> str | None:
    """The one CSV writer of auditkit's outputs (files, ``watch --csv``, ``review list``): spreadsheet-safe
    cells, money to the cent, CRLF rows (RFC 4180, what spreadsheets expect; it also makes every Python
    quote a cell with a bare CR). Written to ``fh``, or returned as text when there is none.

    A frame of text, float, integer and boolean columns (the findings, the summaries) is written cell by
    cell with :mod:`csv` (what pandas' writer does, without its copy of the frame and its per-column
    passes: a tenth of the time); any other is written by :func:`pandas_csv_text`, the reference it is
    property-tested equal to."""
    columns = _plain_cells(frame)
    if columns is None:
        return pandas_csv_text(frame, fh, header=header)
    out = io.StringIO() if fh is None else fh
    writer = csv.writer(out, lineterminator="\r\n")
    if header:
        writer.writerow(frame.columns)
    writer.writerows(zip(*columns, strict=True))
    return out.getvalue() if fh is None else None


def pandas_csv_text(frame: pd.DataFrame, fh: IO[str] | None = None, *, header: bool = True) -> str | None:
    """:func:`csv_text` as pandas writes it: any frame (the reference of its fast path)."""
    return spreadsheet_safe(frame).to_csv(fh, index=False, header=header, float_format="%.2f", lineterminator="\r\n")


def _plain_cells(frame: pd.DataFrame) -> list[list[Any]] | None:
    """Each column's cells as :func:`pandas_csv_text` writes them (spreadsheet-safe text, floats to the cent,
    missing values empty), or None when a column holds anything else (dates, nullable integers, objects
    that are not text) or a label is not text."""
    if not len(frame.columns) or not all(isinstance(c, str) for c in frame.columns):
        return None
    out = []
    for name, col in frame.items():
        kind = col.dtype.kind if isinstance(col.dtype, np.dtype) else "S" if isinstance(col.dtype, pd.StringDtype) else ""
        if name == "evidence" and kind not in ("O", "S"):
            return None
        if kind == "f":
            out.append(["" if v != v else f"{v:.2f}" for v in col.tolist()])
        elif kind in ("i", "u", "b"):
            out.append(col.tolist())
        elif kind in ("O", "S"):
            values = col.tolist()
            if name == "evidence":
                values = [evidence_text(v) for v in values]
            elif col.hasnans:
                values = ["" if m else v for v, m in zip(values, col.isna().tolist(), strict=True)]
            if not all(type(v) is str for v in values):
                return None
            out.append([safe_cell(v) if v.startswith(_DANGER) else v for v in values])
        else:
            return None
    return out


def write_csv(frame: pd.DataFrame | Iterable[pd.DataFrame], path: str | Path) -> Path:
    """Write a frame as spreadsheet-safe UTF-8 CSV, atomically (a header alone when empty); or frames one
    after another (a large table a batch at a time, in bounded memory), the first giving the header."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        for k, part in enumerate([frame] if isinstance(frame, pd.DataFrame) else frame):
            csv_text(part, fh, header=k == 0)
    return path


def write_findings_parquet(findings: pd.DataFrame, path: str | Path, coverage: pd.DataFrame | None = None) -> Path:
    """Write findings as Parquet with the findings schema, atomically; ``coverage`` (the coverage table,
    :mod:`auditkit.reportcoverage`) goes into the schema's metadata as JSON."""
    table = pa.Table.from_pandas(findings, schema=FINDINGS, preserve_index=False)
    if coverage is not None:
        from .reportcoverage import METADATA_KEY, to_json

        table = table.replace_schema_metadata({**(table.schema.metadata or {}), METADATA_KEY: to_json(coverage)})
    return write_parquet_atomic(table, Path(path))


def write_summaries(findings: pd.DataFrame, folder: str | Path) -> dict[str, str]:
    """Write the summaries by citation, table, dealer and day as CSV files; returns their names."""
    names = {}
    for name, keys in SUMMARIES.items():
        names[f"summary_{name}"] = f"summary_by_{name}.csv"
        write_csv(summarize(findings, keys), Path(folder) / names[f"summary_{name}"])
    return names


def write_coverage(table: pd.DataFrame, folder: str | Path) -> str:
    """Write the coverage table as ``coverage.csv`` (spreadsheet-safe, atomic) in ``folder``; its name."""
    from .rules.tally import COLUMNS

    write_csv(table[COLUMNS], Path(folder) / "coverage.csv")
    return "coverage.csv"


def format_summary(findings: pd.DataFrame, rounds_checked: int | None = None,
                   filters: Mapping[str, str] | None = None) -> str:
    """A short plain-text summary by citation for the terminal; ``filters`` (option -> value) first."""
    lines = []
    if filters:
        lines.append("filtered: " + " ".join(f"{k} {v}" for k, v in filters.items())
                     + " (findings and coverage of the selected rounds only)")
    if rounds_checked is not None:
        lines.append(f"rounds checked: {rounds_checked}")
    if findings.empty:
        lines.append("findings: 0")
        return "\n".join(lines)
    money = payout_totals(findings)
    lines.append(f"findings: {len(findings)} on {findings['round_id'].nunique()} round(s); "
                 f"overpaid {money['overpaid']:.2f}, underpaid {money['underpaid']:.2f}")
    table = summary_by_citation(findings)
    width = max(len(c) for c in table["citation"])
    rule_width = max(len(c) for c in table["rule_id"])
    for r in table.itertuples(index=False):
        lines.append(f"  {r.game:<17} {r.citation:<{width}}  {r.rule_id:<{rule_width}}  {r.findings:>7}  {r.severity}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Outputs:
    """The reports a run writes: the findings CSV, and each other one where a path is given."""

    csv: Path | None  # None: no findings CSV (another report is asked for)
    parquet: Path | None = None
    summaries: Path | None = None  # a folder: summary_by_*.csv and coverage.csv
    xlsx: Path | None = None
    html: Path | None = None
    title: str = "auditkit run report"  # the HTML page's

    def __post_init__(self) -> None:  # paths as a command line gives them: text, or None / "" for none
        for name in ("csv", "parquet", "summaries", "xlsx", "html"):
            value = getattr(self, name)
            object.__setattr__(self, name, Path(value) if value else None)


def write_outputs(out: Outputs, findings: pd.DataFrame, coverage: pd.DataFrame, scope: Mapping[str, Any], *,
                  csv_frame: pd.DataFrame | None = None, reviewed: pd.DataFrame | None = None,
                  quarantine: pd.DataFrame | None = None, context: Any = None) -> dict[str, Path]:
    """Write every report of a run (``validate``, ``report`` and a job's all write theirs here): the
    findings CSV (``csv_frame`` when it shows something else, a summary), the Parquet with the coverage
    in its metadata, the summaries and ``coverage.csv``, the workbook (``reviewed``: the findings with
    their reviews, when the store has them; ``quarantine``: its quarantine sheet) and the HTML page,
    which links the CSV and the workbook beside it. ``scope`` (what was checked) heads the workbook and
    the page; ``context`` (:class:`auditkit.reportcontext.ReportContext`: filters, rounds behind the
    findings, provenance) adds who and where to both. Returns the path of each report written, by kind."""
    written = {"findings_csv": write_csv(findings if csv_frame is None else csv_frame, out.csv)} if out.csv else {}
    if out.parquet:
        written["findings_parquet"] = write_findings_parquet(findings, out.parquet, coverage)
    if out.summaries:
        written.update({k: Path(out.summaries) / n for k, n in write_summaries(findings, out.summaries).items()})
        written["coverage"] = Path(out.summaries) / write_coverage(coverage, out.summaries)
    if out.xlsx:
        from .workbook import write_workbook

        written["workbook"] = Path(write_workbook(out.xlsx, findings if reviewed is None else reviewed,
                                                  coverage=coverage, quarantine=quarantine, scope=dict(scope),
                                                  context=context))
    if out.html:
        from .runreport import write_html_report

        links = {"findings (CSV)": os.path.relpath(out.csv, Path(out.html).parent)} if out.csv else {}
        if out.xlsx:
            links["workbook"] = os.path.relpath(out.xlsx, Path(out.html).parent)
        written["html"] = write_html_report(out.html, findings, title=out.title, coverage=coverage, scope=scope,
                                            links=links, context=context)
    return written
