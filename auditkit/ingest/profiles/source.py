"""The raw sources of an import profile: a CSV, an Excel workbook, JSON or JSON lines of another
shape, a SQLite file or a PostgreSQL query, read into tables of **string** cells in bulk.

Every table has the source's columns as strings (null for an empty cell) and ``__row``: the row's
number as a user finds it in the source (a CSV's physical line, counting the header; a sheet's row
number; a query result's 1-based ordinal; a JSON lines file's line). A row that cannot be read (a
CSV row with more or fewer cells than the header) is kept in ``bad`` with its number, the reason and
its text, never dropped. ``sha256`` identifies what was read (a file's bytes; for SQL the query, the
URL without its credentials and the value of the profile's ``snapshot_key``), so the same source is
ingested once. Memory: a CSV and a query are read in batches; a workbook's sheet and a JSON document
are read whole (python-calamine and ``json`` read them so).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ...paytables import ConfigError

__all__ = ["SourceSpec", "RawSource", "open_source", "FORMATS", "ROW"]

ROW = "__row"
FORMATS = ("csv", "xlsx", "json", "jsonl", "sqlite", "postgresql")
ENCODINGS = ("utf-8", "utf-8-sig", "cp1252", "latin-1")
_SUFFIX = {".csv": "csv", ".txt": "csv", ".tsv": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx", ".json": "json",
           ".jsonl": "jsonl", ".ndjson": "jsonl", ".db": "sqlite", ".sqlite": "sqlite", ".sqlite3": "sqlite"}
_KEYS = {"format": str, "encoding": str, "delimiter": str, "quote": str, "header_row": int, "sheet": (str, int),
         "query": str, "url": str, "snapshot_key": str, "records": str}
_CHUNK = 16 << 20  # bytes of a CSV scanned at a time for its record boundaries


@dataclass(frozen=True)
class SourceSpec:
    """A profile's ``[source]`` table, checked (docs/profiles.md, `[source]`)."""

    format: str | None = None   # None: from the file's suffix
    encoding: str = "utf-8"
    delimiter: str = ","
    quote: str = '"'
    header_row: int = 1
    sheet: str | int = 1
    query: str | None = None
    url: str | None = None
    snapshot_key: str | None = None
    records: str | None = None

    @classmethod
    def from_table(cls, raw: dict[str, Any], where: str) -> SourceSpec:
        """The spec of a ``[source]`` table; an unknown key, a wrong type or value is a ConfigError
        naming ``where`` (the profile file) and the key."""
        def bad(key: str, why: str) -> ConfigError:
            return ConfigError(f"{where}: source.{key}: {why}")

        for key, value in raw.items():
            kind = _KEYS.get(key)
            if kind is None:
                raise bad(key, f"unknown key (known: {', '.join(sorted(_KEYS))})")
            if not isinstance(value, kind) or isinstance(value, bool):
                raise bad(key, f"expected {getattr(kind, '__name__', 'a string or an integer')}, got {value!r}")
        spec = cls(**raw)
        if spec.format is not None and spec.format not in FORMATS:
            raise bad("format", f"{spec.format!r} is not one of {', '.join(FORMATS)}")
        if spec.encoding.lower() not in ENCODINGS:
            raise bad("encoding", f"{spec.encoding!r} is not one of {', '.join(ENCODINGS)}")
        for key in ("delimiter", "quote"):
            value = getattr(spec, key)
            if len(value) != 1 or value in "\r\n":
                raise bad(key, f"must be one character, not a line break: {value!r}")
        if spec.header_row < 1:
            raise bad("header_row", f"must be 1 or more, got {spec.header_row}")
        if isinstance(spec.sheet, int) and spec.sheet < 1:
            raise bad("sheet", f"a sheet's index counts from 1, got {spec.sheet}")
        if spec.format in ("sqlite", "postgresql") and not spec.query:
            raise bad("query", f"a {spec.format} source needs a query")
        if spec.format == "postgresql":
            if not spec.url:
                raise bad("url", "a postgresql source needs url = \"env:NAME\" (or a URL without a password)")
            if not spec.snapshot_key:
                raise bad("snapshot_key", "a postgresql source needs a query whose value identifies what was read "
                          "(e.g. SELECT max(id) FROM hands), so a re-run is recognised")
            if not spec.url.startswith("env:") and _password(spec.url):
                raise bad("url", "holds a password: use url = \"env:NAME\" and set NAME in the environment")
        return spec

    def format_of(self, location: str | Path) -> str:
        """The format, given or from the file's suffix."""
        if self.format:
            return self.format
        fmt = _SUFFIX.get(Path(str(location)).suffix.lower())
        if fmt is None:
            raise ConfigError(f"source.format: not given, and {Path(str(location)).name!r} has no known suffix "
                              f"({', '.join(sorted(_SUFFIX))})")
        return fmt


@dataclass
class RawSource:
    """One source opened: iterate :meth:`batches`; then ``rows_read`` and ``bad`` are complete."""

    spec: SourceSpec
    location: str
    format: str
    name: str
    digest: Callable[[], str] = field(repr=False)  # the source's identity, worked out when first asked for
    bad: list[tuple[int, str, str]] = field(default_factory=list)  # (row, reason, raw text)
    rows_read: int = 0
    blank: int = 0
    batch_rows: int = 65_536

    @functools.cached_property
    def sha256(self) -> str:
        """What identifies the source (:func:`open_source`): read only when asked, since reading the rows
        does not need it (a file is then not read twice for nothing)."""
        return self.digest()

    def batches(self) -> Iterator[pa.Table]:
        """Tables of string columns plus ``__row``, in the source's order."""
        reader = {"csv": _csv, "xlsx": _xlsx, "json": _json, "jsonl": _json, "sqlite": _sql,
                  "postgresql": _sql}[self.format]
        for table in reader(self):
            self.rows_read += table.num_rows
            yield table


def open_source(spec: SourceSpec | dict[str, Any], location: str | Path, *, batch_rows: int = 65_536) -> RawSource:
    """Open ``location`` (a file; for postgresql the profile's URL is used and ``location`` names it in
    reports) as ``spec`` describes it."""
    if isinstance(spec, dict):
        spec = SourceSpec.from_table(spec, "<profile>")
    fmt = spec.format_of(location)
    if fmt == "postgresql":
        url = _url(spec)
        name = f"sql:{hashlib.sha256(spec.query.encode()).hexdigest()[:12]}"  # type: ignore[union-attr]
        return RawSource(spec, url, fmt, name, lambda: _sql_digest(spec, _without_password(url),
                                                                    _snapshot(spec, fmt, url)), batch_rows=batch_rows)
    path = Path(location)
    if not path.is_file():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if fmt == "sqlite":
        def digest() -> str:
            snapshot = _snapshot(spec, fmt, str(path)) if spec.snapshot_key else _file_sha256(path)
            return _sql_digest(spec, path.name, snapshot)

        return RawSource(spec, str(path), fmt, path.name, digest, batch_rows=batch_rows)
    return RawSource(spec, str(path), fmt, path.name, lambda: _file_sha256(path), batch_rows=batch_rows)


# ---- CSV --------------------------------------------------------------------------------------------
def _csv(src: RawSource) -> Iterator[pa.Table]:
    """pyarrow's CSV reader, every column a string; rows numbered by a scan of the record boundaries."""
    import pyarrow.csv as pacsv

    spec = src.spec
    lines, fields, starts, ends = _records(Path(src.location), spec)
    data = lines >= spec.header_row
    if not data.any():
        return
    header = int(np.flatnonzero(data)[0])
    names = _header(Path(src.location), spec, int(starts[header]), int(ends[header]))
    width = len(names)
    body = np.arange(len(lines)) > header
    empty = body & (ends - starts == 0)
    ragged = body & ~empty & (fields != width)
    src.blank += int(empty.sum())
    if ragged.any():
        with open(src.location, "rb") as fh:
            for k in np.flatnonzero(ragged):
                fh.seek(int(starts[k]))
                text = fh.read(min(int(ends[k] - starts[k]), 4096)).decode(spec.encoding, "replace")
                src.bad.append((int(lines[k]), f"{int(fields[k])} cells, the header has {width}", text))
    good = lines[body & ~empty & ~ragged]
    if not len(good):  # a header and nothing else (pyarrow's reader refuses an empty stream)
        return
    opts = pacsv.ReadOptions(encoding=spec.encoding, skip_rows_after_names=0, column_names=names,
                             skip_rows=0, block_size=4 << 20)
    parse = pacsv.ParseOptions(delimiter=spec.delimiter, quote_char=spec.quote, newlines_in_values=True,
                               invalid_row_handler=lambda row: "skip")
    convert = pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=True,
                                   null_values=[""], quoted_strings_can_be_null=True)
    from .decoding import Replacing, decodes, set_aside

    clean = decodes(src.location, spec.encoding)  # else undecodable rows are set aside, the others read
    with open(src.location, "rb") as fh:
        fh.seek(int(ends[header]))  # past the header record and its line break
        fh.readline()
        if not clean:
            opts.encoding = "utf-8"
        stream = fh if clean else pa.PythonFile(Replacing(fh, spec.encoding), mode="r")
        reader = pacsv.open_csv(stream, read_options=opts, parse_options=parse, convert_options=convert)
        done = 0
        for batch in reader:
            table = pa.Table.from_batches([batch])
            table = table.append_column(ROW, pa.array(good[done:done + table.num_rows], pa.int64()))
            done += table.num_rows
            if not clean:
                table = set_aside(table, names, ROW, spec.delimiter, spec.encoding, src.bad)
            yield table
    if done != len(good):  # the scan and the reader must agree on the records, or the row numbers are wrong
        raise ValueError(f"{src.name}: the CSV reader found {done} rows where the scan found {len(good)}")


def _header(path: Path, spec: SourceSpec, start: int, end: int) -> list[str]:
    import csv
    import io

    with open(path, "rb") as fh:
        fh.seek(start)
        raw = fh.read(end - start)
    text = raw.decode(spec.encoding).lstrip("\ufeff")
    names = next(csv.reader(io.StringIO(text), delimiter=spec.delimiter, quotechar=spec.quote))
    names = [n.strip() for n in names]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes or "" in names:
        raise ConfigError(f"{path.name}: the header row ({spec.header_row}) names a column twice or not at all: "
                          f"{', '.join(sorted(dupes)) or '(empty name)'}")
    return names


def _records(path: Path, spec: SourceSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per CSV record: the physical line it starts on (1-based), its number of cells, and its byte
    span (start, end without the line break); a line break or delimiter inside quotes does not count.
    Read in chunks (bounded memory); ASCII-compatible encodings only (utf-8, cp1252, latin-1)."""
    q, d = ord(spec.quote), ord(spec.delimiter)
    line_of, cells, starts, ends = [], [], [], []
    offset, quotes, newlines, start, delims, start_line = 0, 0, 0, 0, 0, 1
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            b = np.frombuffer(chunk, np.uint8)
            parity = np.bitwise_xor.accumulate((b == q).view(np.uint8)) ^ np.uint8(quotes)  # quotes so far, mod 2 (a byte a byte)
            outside = parity == 0
            nl = np.flatnonzero((b == 10) & outside)
            dl = np.flatnonzero((b == d) & outside)
            all_nl = np.flatnonzero(b == 10)
            if len(nl):
                # delimiters per record: between consecutive record ends
                bounds = np.concatenate([[-1], nl])
                per = np.diff(np.searchsorted(dl, bounds, side="right"))
                per[0] += delims
                rec_start = np.concatenate([[start], offset + nl[:-1] + 1])
                rec_end = offset + nl
                # physical line of each record's start: the line after the previous record's break
                after = newlines + np.searchsorted(all_nl, nl, side="right") + 1
                line_of.append(np.concatenate([[start_line], after[:-1]]))
                start_line = int(after[-1])
                cells.append(per + 1)
                starts.append(rec_start)
                ends.append(rec_end)
                start = offset + int(nl[-1]) + 1
                delims = len(dl) - int(np.searchsorted(dl, nl[-1], side="right"))
            else:
                delims += len(dl)
            quotes = int(parity[-1])
            newlines += len(all_nl)
            offset += len(chunk)
    if offset > start:  # a last record without a line break
        line_of.append(np.array([start_line]))
        cells.append(np.array([delims + 1]))
        starts.append(np.array([start]))
        ends.append(np.array([offset]))
    if not starts:
        return (np.empty(0, np.int64),) * 4  # type: ignore[return-value]
    line_arr, cell_arr = np.concatenate(line_of), np.concatenate(cells)
    start_arr, end_arr = np.concatenate(starts).astype(np.int64), np.concatenate(ends).astype(np.int64)
    # a record's end excludes a CR before its LF; a record of only "\r" or nothing is empty
    with open(path, "rb") as fh:
        crlf = _ends_with_cr(fh, end_arr)
    end_arr = end_arr - crlf
    cell_arr = np.where(end_arr == start_arr, 0, cell_arr)
    return line_arr.astype(np.int64), cell_arr, start_arr, end_arr


def _ends_with_cr(fh: Any, ends: np.ndarray) -> np.ndarray:
    """1 where the byte before a record's end is a CR (CRLF line breaks), else 0."""
    out = np.zeros(len(ends), np.int64)
    if not len(ends):
        return out
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    # read the byte before each end in chunks of the file (one pass)
    for lo in range(0, size, _CHUNK):
        fh.seek(lo)
        chunk = np.frombuffer(fh.read(_CHUNK + 1), np.uint8)
        sel = np.flatnonzero((ends - 1 >= lo) & (ends - 1 < lo + _CHUNK) & (ends > 0))
        out[sel] = chunk[ends[sel] - 1 - lo] == 13
    return out


# ---- Excel ------------------------------------------------------------------------------------------
def _xlsx(src: RawSource) -> Iterator[pa.Table]:
    """A sheet through python-calamine: cells as text as a user reads them (dates ISO, whole numbers
    without ``.0``); rows numbered as the sheet numbers them."""
    CalamineWorkbook = _need("python_calamine", "a workbook").CalamineWorkbook

    spec = src.spec
    book = CalamineWorkbook.from_path(src.location)
    names = book.sheet_names
    if isinstance(spec.sheet, int):
        if spec.sheet > len(names):
            raise ConfigError(f"{src.name}: source.sheet = {spec.sheet}: the workbook has {len(names)} sheet(s)")
        sheet = book.get_sheet_by_index(spec.sheet - 1)
    elif spec.sheet in names:
        sheet = book.get_sheet_by_name(spec.sheet)
    else:
        raise ConfigError(f"{src.name}: source.sheet = {spec.sheet!r}: no such sheet (has: {', '.join(names)})")
    rows = sheet.to_python(skip_empty_area=False)
    if len(rows) < spec.header_row:
        return
    header = [_text(v) for v in rows[spec.header_row - 1]]
    while header and header[-1] is None:
        header.pop()
    if None in header or len(set(header)) != len(header):
        raise ConfigError(f"{src.name}: the header row ({spec.header_row}) names a column twice or not at all")
    width = len(header)
    for lo in range(spec.header_row, len(rows), src.batch_rows):
        cols: list[list[str | None]] = [[] for _ in range(width)]
        numbers: list[int] = []
        for k, row in enumerate(rows[lo:lo + src.batch_rows]):
            cells = [_text(v) for v in row]
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
            yield table


def _text(value: Any) -> str | None:
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


# ---- JSON -------------------------------------------------------------------------------------------
def _json(src: RawSource) -> Iterator[pa.Table]:
    """JSON lines (one object a line) or a JSON document (an array of objects, at ``records``)."""
    from .nested import cells, records  # rows from an array at any depth; objects' fields by their paths

    spec = src.spec
    items: list[tuple[int, Any]] = []
    with open(src.location, "rb") as fh:
        if src.format == "jsonl":
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    src.blank += 1
                    continue
                try:
                    items.append((n, json.loads(raw)))
                except ValueError as exc:
                    src.bad.append((n, f"not valid JSON: {exc}", raw.decode(spec.encoding, "replace")[:4096]))
        else:
            doc = json.loads(fh.read().decode(spec.encoding))

            try:
                items, parents = records(doc, spec.records)
            except ValueError as exc:
                raise ConfigError(f"{src.name}: source.records = {spec.records!r}: {exc}") from exc
            src.bad.extend(parents)
    rows: list[dict[str, str | None]] = []
    numbers: list[int] = []
    for n, obj in items:
        if not isinstance(obj, dict):
            src.bad.append((n, "a record must be a JSON object", json.dumps(obj)[:4096]))
            continue
        rows.append(cells(obj))  # an object's fields also by their dotted paths
        numbers.append(n)
    names = list(dict.fromkeys(k for r in rows for k in r))
    for lo in range(0, len(rows), src.batch_rows):
        part = rows[lo:lo + src.batch_rows]
        yield pa.table({**{k: pa.array([r.get(k) for r in part], pa.string()) for k in names},
                        ROW: pa.array(numbers[lo:lo + src.batch_rows], pa.int64())})


def json_text(value: Any) -> str | None:
    """A JSON value as a cell's text: a string as it is (None when blank), anything else as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    return json.dumps(value, ensure_ascii=False)


# ---- SQL --------------------------------------------------------------------------------------------
def _connect(fmt: str, location: str) -> Any:
    if fmt == "sqlite":
        driver = _need("adbc_driver_sqlite.dbapi", "a SQLite database")

        return driver.connect(f"file:{location}?mode=ro", autocommit=True)
    driver = _need("adbc_driver_postgresql.dbapi", "a PostgreSQL database")

    return driver.connect(location, autocommit=True)


def _sql(src: RawSource) -> Iterator[pa.Table]:
    """The query's result through ADBC, in record batches, every column cast to text."""
    import pyarrow.compute as pc

    with _connect(src.format, src.location) as conn, conn.cursor() as cur:
        cur.execute(src.spec.query)
        reader = cur.fetch_record_batch()
        done = 0
        pending: list[pa.RecordBatch] = []
        for batch in reader:
            pending.append(batch)
            if sum(b.num_rows for b in pending) >= src.batch_rows:
                table = pa.Table.from_batches(pending)
                pending = []
                yield _as_text(table, done, pc)
                done += table.num_rows
        if pending:
            yield _as_text(pa.Table.from_batches(pending), done, pc)


def _as_text(table: pa.Table, done: int, pc: Any) -> pa.Table:
    cols = {}
    for name, col in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(col.type):  # whole numbers without ".0", as a spreadsheet shows them
            values = col.to_numpy(zero_copy_only=False)
            text = [None if v is None or v != v else (str(int(v)) if float(v).is_integer() else repr(float(v)))
                    for v in values.tolist()]
            cols[name] = pa.array(text, pa.string())
        elif pa.types.is_timestamp(col.type):  # whole seconds without a fraction, as a spreadsheet shows them
            seconds = pc.cast(col, pa.timestamp("s", col.type.tz), safe=False)
            whole = pc.all(pc.equal(pc.cast(seconds, col.type), col)).as_py() is not False
            cols[name] = pc.strftime(seconds if whole else col, format="%Y-%m-%d %H:%M:%S")
        elif pa.types.is_boolean(col.type):
            cols[name] = pc.if_else(col, "TRUE", "FALSE")
        else:
            cols[name] = pc.cast(col, pa.string())
        cols[name] = pc.if_else(pc.equal(pc.utf8_trim_whitespace(cols[name]), ""), pa.scalar(None, pa.string()),
                                cols[name])
    cols[ROW] = pa.array(np.arange(done + 1, done + table.num_rows + 1), pa.int64())
    return pa.table(cols)


def _snapshot(spec: SourceSpec, fmt: str, location: str) -> str:
    """The value of the profile's ``snapshot_key`` query: what identifies the data the query saw."""
    if not spec.snapshot_key:
        return ""
    with _connect(fmt, location) as conn, conn.cursor() as cur:
        cur.execute(spec.snapshot_key)
        row = cur.fetchone()
    return json.dumps(None if row is None else [str(v) for v in row])


def _sql_digest(spec: SourceSpec, where: str, snapshot: str) -> str:
    return hashlib.sha256(json.dumps(["sql", spec.query, where, snapshot]).encode()).hexdigest()


def _url(spec: SourceSpec) -> str:
    url = spec.url or ""
    if url.startswith("env:"):
        name = url[4:]
        value = os.environ.get(name)
        if not value:
            raise ConfigError(f"source.url = {url!r}: the environment variable {name} is not set")
        return value
    return url


_PASSWORD = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:@/]*)(?::(?P<pw>[^@/]*))?@", re.I)


def _password(url: str) -> bool:
    m = _PASSWORD.match(url)
    return bool(m and m.group("pw")) or "password=" in url.lower()


def _without_password(url: str) -> str:
    """The URL as it may be shown and hashed: no password."""
    url = _PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}@", url)
    return re.sub(r"(?i)password=[^&]*", "password=***", url)


def _need(module: str, what: str) -> Any:
    """An optional reader's module, or a ConfigError saying how to install it (exit 2, not a traceback)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"reading {what} needs {module.split('.')[0].replace('_', '-')}: "
                          "pip install 'auditkit[sources]'") from None


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
