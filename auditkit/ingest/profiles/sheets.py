"""A workbook's sheet as a profile's raw source (python-calamine), read as a user reads it.

Never guessed: without ``source.sheet`` the first visible sheet that has rows below its header is
read, and the source says which (:attr:`RawSource.notes`, a warning when it is not the first sheet);
a formula cell whose value the workbook does not hold is refused with the cell named (a workbook
written by a program, not saved by a spreadsheet, keeps no value or a placeholder 0 and asks the
spreadsheet to calculate on load: ``fullCalcOnLoad``); a sheet with a header and no rows still gives
its columns, so the profile's columns are checked against them.
"""

from __future__ import annotations

import logging
import posixpath
import zipfile
from collections.abc import Iterator
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any
from xml.etree.ElementTree import iterparse

import pyarrow as pa

from ...paytables import ConfigError
from .raw import ROW, need

if TYPE_CHECKING:
    from .source import RawSource

__all__ = ["read_sheet", "cell_text"]

log = logging.getLogger(__name__)
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def read_sheet(src: RawSource) -> Iterator[pa.Table]:
    """The sheet's rows as string columns plus ``__row`` (the sheet's row number), in batches."""
    CalamineWorkbook = need("python_calamine", "a workbook").CalamineWorkbook

    spec = src.spec
    book = CalamineWorkbook.from_path(src.location)
    names = book.sheet_names
    if spec.sheet is None:
        name, rows = _first_with_rows(book, spec.header_row)
        why = "the first visible sheet with rows below its header" if rows else \
            "no visible sheet has rows below its header; the first visible one"
        src.notes.append(f"read sheet {name!r} ({why}; source.sheet names another)")
        if name != names[0]:
            log.warning("%s: %s", src.label, src.notes[-1])
    else:
        if isinstance(spec.sheet, int):
            if spec.sheet > len(names):
                raise ConfigError(f"{src.name}: source.sheet = {spec.sheet}: the workbook has {len(names)} sheet(s)")
            name = names[spec.sheet - 1]
        elif spec.sheet in names:
            name = spec.sheet
        else:
            raise ConfigError(f"{src.name}: source.sheet = {spec.sheet!r}: no such sheet (has: {', '.join(names)})")
        rows = book.get_sheet_by_name(name).to_python(skip_empty_area=False)
    _refuse_formulas_without_values(src, name, spec.header_row)
    if len(rows) < spec.header_row:
        return
    header = [cell_text(v) for v in rows[spec.header_row - 1]]
    while header and header[-1] is None:
        header.pop()
    if None in header or len(set(header)) != len(header):
        raise ConfigError(f"{src.name}: the header row ({spec.header_row}) names a column twice or not at all")
    width = len(header)
    empty = True
    for lo in range(spec.header_row, len(rows), src.batch_rows):
        cols: list[list[str | None]] = [[] for _ in range(width)]
        numbers: list[int] = []
        for k, row in enumerate(rows[lo:lo + src.batch_rows]):
            cells = [cell_text(v) for v in row]
            if all(c is None for c in cells):
                src.blank += 1
                continue
            if any(c is not None for c in cells[width:]):
                src.bad.append((lo + k + 1, f"a cell right of the header's {width} columns",
                                "\t".join(c or "" for c in cells)))
                continue
            cells += [None] * (width - len(cells))
            for j in range(width):
                cols[j].append(cells[j])
            numbers.append(lo + k + 1)
        table = pa.table({**{h: pa.array(c, pa.string()) for h, c in zip(header, cols, strict=True)},
                          ROW: pa.array(numbers, pa.int64())})
        if table.num_rows:
            empty = False
            yield table
    if empty:  # the header alone: its columns, so the profile's are checked against them
        yield pa.table({**{h: pa.array([], pa.string()) for h in header}, ROW: pa.array([], pa.int64())})


def _first_with_rows(book: Any, header_row: int) -> tuple[str, list[list[Any]]]:
    """The first visible sheet with a non-empty row below its header, and its rows (else the first
    visible sheet's)."""
    visible = [m.name for m in book.sheets_metadata if str(m.visible).endswith("Visible")
               and not str(m.visible).endswith("VeryHidden") and str(m.typ).endswith("WorkSheet")]
    if not visible:
        raise ConfigError("the workbook has no visible worksheet: name one in source.sheet")
    first = None
    for name in visible:
        rows = book.get_sheet_by_name(name).to_python(skip_empty_area=False)
        if any(cell_text(v) is not None for row in rows[header_row:] for v in row):
            return name, rows
        first = first or (name, rows)
    return first  # type: ignore[return-value]


def _refuse_formulas_without_values(src: RawSource, sheet: str, header_row: int) -> None:
    """A ConfigError naming the first formula cell below the header whose value the workbook does not
    hold: it has none, or the workbook asks to be calculated on load (a program wrote it, with a
    placeholder value). Read from the workbook's XML a part at a time (calamine gives values only)."""
    if not zipfile.is_zipfile(src.location):  # an .xls or .xlsb book: calamine's values only
        return
    with zipfile.ZipFile(src.location) as z:
        part = _sheet_part(z, sheet)
        if part is None:
            return
        with z.open("xl/workbook.xml") as fh:
            recalc = any(el.tag == f"{_MAIN}calcPr" and el.get("fullCalcOnLoad") in ("1", "true")
                         for _, el in iterparse(fh))
        first, count = None, 0
        with z.open(part) as fh:
            for _, el in iterparse(fh):
                if el.tag != f"{_MAIN}c":
                    if el.tag == f"{_MAIN}row":
                        el.clear()
                    continue
                f, v = el.find(f"{_MAIN}f"), el.find(f"{_MAIN}v")
                ref = el.get("r", "")
                row = int("".join(ch for ch in ref if ch.isdigit()) or 0)
                if f is not None and row > header_row and (recalc or v is None or not (v.text or "").strip()):
                    count += 1
                    first = first or (ref, f.text)
    if first:
        ref, formula = first
        said = f" (={formula})" if formula else ""
        raise ConfigError(
            f"{src.label}: sheet {sheet!r} cell {ref}{said} is a formula whose value the workbook does not hold "
            f"({count} such cell(s); {'it was written to be calculated when opened' if recalc else 'no value saved'})"
            ": open and save it in a spreadsheet (Excel, LibreOffice), or export the values")


def _sheet_part(z: zipfile.ZipFile, sheet: str) -> str | None:
    """The zip member of the sheet named ``sheet`` (workbook.xml and its relationships), or None."""
    try:
        with z.open("xl/workbook.xml") as fh:
            rid = next((el.get(f"{_REL}id") for _, el in iterparse(fh)
                        if el.tag == f"{_MAIN}sheet" and el.get("name") == sheet), None)
        with z.open("xl/_rels/workbook.xml.rels") as fh:
            target = next((el.get("Target") for _, el in iterparse(fh)
                           if el.tag == f"{_PKG}Relationship" and el.get("Id") == rid), None)
    except KeyError:  # not an Office Open XML workbook (calamine read it; no formulas to look at here)
        return None
    if not target:
        return None
    part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
    return part if part in z.namelist() else None


def cell_text(value: Any) -> str | None:
    """A cell's value as the text a user reads in the cell."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds") if not value.microsecond else value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return value.isoformat()
    text = str(value)
    return text if text.strip() else None
