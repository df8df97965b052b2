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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ...paytables import ConfigError
from .raw import ROW, need

__all__ = ["SourceSpec", "RawSource", "open_source", "FORMATS", "ROW", "redact", "sqlite_uri", "need"]

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
    sheet: str | int | None = None  # None: the first visible sheet with rows (.sheets)
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
    label: str = ""  # the source as messages name it: the path given, or the input's name and its URL redacted
    notes: list[str] = field(default_factory=list)  # what the reader chose where the profile did not say

    @functools.cached_property
    def sha256(self) -> str:
        """What identifies the source (:func:`open_source`): read only when asked, since reading the rows
        does not need it (a file is then not read twice for nothing)."""
        with self._reading():
            return self.digest()

    def batches(self) -> Iterator[pa.Table]:
        """Tables of string columns plus ``__row``, in the source's order."""
        reader = {"csv": _csv, "xlsx": _xlsx, "json": _json, "jsonl": _json, "sqlite": _sql,
                  "postgresql": _sql}[self.format]
        with self._reading():
            for table in reader(self):
                self.rows_read += table.num_rows
                yield table

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A source that cannot be read (a malformed file, a database that is not one, is locked or
        down, an SQL error) is an :class:`~auditkit.ingest.identity.InputError` naming it, passwords
        hidden: exit 2, never an internal error."""
        try:
            yield
        except (ConfigError, OSError):
            raise
        except Exception as exc:  # noqa: BLE001 - only the readers' own errors, by their kind below
            what = _unreadable(exc)
            if what is None:
                raise
            from ..identity import InputError

            raise InputError(f"{self.label}: cannot read this {_KIND[self.format]}: "
                             f"{redact(' '.join(str(exc).split()))}") from exc


_KIND = {"csv": "CSV file", "xlsx": "workbook", "json": "JSON document", "jsonl": "JSON lines file",
         "sqlite": "SQLite database", "postgresql": "PostgreSQL query"}


def _unreadable(exc: Exception) -> str | None:
    """What kind of input problem ``exc`` is, or None for anything else (a bug stays one)."""
    import zipfile

    kind = type(exc)
    module = kind.__module__.split(".")[0]
    if module in ("adbc_driver_manager", "python_calamine", "sqlite3") or "Calamine" in kind.__name__:
        return module
    if isinstance(exc, (pa.ArrowException, zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError)):
        return kind.__name__
    return None


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
                                                                    _snapshot(spec, fmt, url)), batch_rows=batch_rows,
                         label=f"{location} ({redact(url)})")
    path = Path(location)
    if not path.is_file():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if fmt == "sqlite":
        def digest() -> str:
            snapshot = _snapshot(spec, fmt, str(path)) if spec.snapshot_key else _sqlite_sha256(path)
            return _sql_digest(spec, path.name, snapshot)

        return RawSource(spec, str(path), fmt, path.name, digest, batch_rows=batch_rows, label=str(path))
    return RawSource(spec, str(path), fmt, path.name, lambda: _file_sha256(path), batch_rows=batch_rows,
                     label=str(path))


# ---- CSV --------------------------------------------------------------------------------------------
def _csv(src: RawSource) -> Iterator[pa.Table]:
    """pyarrow's CSV reader, every column a string; rows numbered by a scan of the record boundaries."""
    import pyarrow.csv as pacsv

    spec = src.spec
    lines, fields, starts, ends, stray = _records(Path(src.location), spec)
    data = lines >= spec.header_row
    if not data.any():
        return
    header = int(np.flatnonzero(data)[0])
    names = _header(Path(src.location), spec, int(starts[header]), int(ends[header]))
    width = len(names)
    body = np.arange(len(lines)) > header
    empty = body & (ends - starts == 0)
    ragged = body & ~empty & (fields != width)
    from .decoding import Replacing, decodes, set_aside

    clean = decodes(src.location, spec.encoding)  # else undecodable rows are set aside, the others read
    spans = np.diff(lines, append=lines[-1] + 1) > 1  # a record over several lines (a quoted line break)
    if stray or (ragged & spans).any():  # a quote that runs past its line: read record by record
        from .csvrows import careful_csv

        last = int(lines[header + 1]) - 1 if header + 1 < len(lines) else int(lines[header])  # the header's last line
        yield from careful_csv(src, names, last, clean, ROW)
        return
    src.blank += int(empty.sum())
    if ragged.any():
        with open(src.location, "rb") as fh:
            for k in np.flatnonzero(ragged):
                fh.seek(int(starts[k]))
                text = fh.read(min(int(ends[k] - starts[k]), 4096)).decode(spec.encoding, "replace")
                src.bad.append((int(lines[k]), f"{int(fields[k])} cells, the header has {width}", text))
    good = lines[body & ~empty & ~ragged]
    if not len(good):  # a header alone: its columns, so the profile's are checked against them
        yield pa.table({**{n: pa.array([], pa.string()) for n in names}, ROW: pa.array([], pa.int64())})
        return
    opts = pacsv.ReadOptions(encoding=spec.encoding, skip_rows_after_names=0, column_names=names,
                             skip_rows=0, block_size=4 << 20)
    parse = pacsv.ParseOptions(delimiter=spec.delimiter, quote_char=spec.quote, newlines_in_values=True,
                               invalid_row_handler=lambda row: "skip")
    convert = pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=True,
                                   null_values=[""], quoted_strings_can_be_null=True)
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


def _records(path: Path, spec: SourceSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """Per CSV record: the physical line it starts on (1-based), its number of cells, and its byte
    span (start, end without the line break); a line break or delimiter inside quotes does not count.
    Last, whether a quote is stray: one opening anywhere but at a cell's start (pyarrow's reader
    reads it as text, this scan as a quote) or one never closed; the records are then not to be
    trusted. Read in chunks (bounded memory); ASCII-compatible encodings only (utf-8, cp1252, latin-1)."""
    q, d = ord(spec.quote), ord(spec.delimiter)
    line_of, cells, starts, ends = [], [], [], []
    offset, quotes, newlines, start, delims, start_line, before, stray = 0, 0, 0, 0, 0, 1, 10, False
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            b = np.frombuffer(chunk, np.uint8)
            is_q = b == q
            parity = np.bitwise_xor.accumulate(is_q.view(np.uint8)) ^ np.uint8(quotes)  # quotes so far, mod 2 (a byte a byte)
            if not stray and (at := np.flatnonzero(is_q & (parity == 1))).size:  # the quotes that open
                prev = np.where(at > 0, b[np.maximum(at - 1, 0)], before)
                ok = (prev == d) | (prev == 10) | (prev == q) | ((offset + at == 3) & (prev == 0xBF))  # after a BOM
                stray = not ok.all()
            before = int(b[-1])
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
    stray = stray or quotes == 1  # a quote never closed
    if offset > start:  # a last record without a line break
        line_of.append(np.array([start_line]))
        cells.append(np.array([delims + 1]))
        starts.append(np.array([start]))
        ends.append(np.array([offset]))
    if not starts:
        return (*(np.empty(0, np.int64),) * 4, stray)  # type: ignore[return-value]
    line_arr, cell_arr = np.concatenate(line_of), np.concatenate(cells)
    start_arr, end_arr = np.concatenate(starts).astype(np.int64), np.concatenate(ends).astype(np.int64)
    # a record's end excludes a CR before its LF; a record of only "\r" or nothing is empty
    with open(path, "rb") as fh:
        crlf = _ends_with_cr(fh, end_arr)
    end_arr = end_arr - crlf
    cell_arr = np.where(end_arr == start_arr, 0, cell_arr)
    return line_arr.astype(np.int64), cell_arr, start_arr, end_arr, stray


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


# ---- Excel: .sheets ----------------------------------------------------------------------------------
def _xlsx(src: RawSource) -> Iterator[pa.Table]:
    from .sheets import read_sheet

    return read_sheet(src)


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


# ---- SQL --------------------------------------------------------------------------------------------
@contextmanager
def _connect(fmt: str, location: str) -> Iterator[Any]:
    """A cursor on the database, read-only: SQLite by its read-only URI; PostgreSQL in a transaction
    set READ ONLY and locked so before the profile's SQL runs (a writable CTE or a ``SET TRANSACTION
    READ WRITE`` in ``query`` is refused by the server), rolled back at the end."""
    if fmt == "sqlite":
        driver = need("adbc_driver_sqlite.dbapi", "a SQLite database")
        with driver.connect(sqlite_uri(location), autocommit=True) as conn, conn.cursor() as cur:
            yield cur
        return
    driver = need("adbc_driver_postgresql.dbapi", "a PostgreSQL database")
    with driver.connect(location, autocommit=False) as conn, conn.cursor() as cur:
        cur.execute("SET TRANSACTION READ ONLY")
        cur.execute("SELECT 1")  # a query ran: the transaction's mode can no longer be changed
        cur.fetchall()
        try:
            yield cur
        finally:
            conn.rollback()


def sqlite_uri(path: str | Path) -> str:
    """The read-only URI of a SQLite file: the absolute path percent-escaped (``night#2.db`` is that
    file, not ``./night``; ``a%2Fb.db`` is not ``a/b.db``), ``mode=ro`` (never created or written)."""
    return Path(path).resolve().as_uri() + "?mode=ro"


def _sql(src: RawSource) -> Iterator[pa.Table]:
    """The query's result through ADBC, in record batches, every column cast to text."""
    import pyarrow.compute as pc

    with _connect(src.format, src.location) as cur:
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
    with _connect(fmt, location) as cur:
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


_USERINFO = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:@/\s]*):[^/\s]*@", re.I)
_KEYWORD = re.compile(r"(?i)\b((?:password|secret_key|session_token)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&;]*)")


def redact(text: str) -> str:
    """``text`` with every password in it hidden: a URL's (``scheme://user:***@host``, up to the last
    ``@`` of a malformed one) and a ``password=`` keyword's (an S3 URI's ``secret_key=`` and
    ``session_token=`` too). For every message or page that may hold a URL."""
    return _KEYWORD.sub(r"\1***", _USERINFO.sub(r"\g<head>:***@", text))


def _password(url: str) -> bool:
    m = _PASSWORD.match(url)
    return bool(m and m.group("pw")) or "password=" in url.lower()


def _without_password(url: str) -> str:
    """The URL as it may be shown and hashed: no password."""
    url = _PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}@", url)
    return re.sub(r"(?i)password=[^&]*", "password=***", url)


def _file_sha256(path: Path, *more: Path) -> str:
    """The SHA-256 of the file's bytes (followed by those of ``more`` files that exist, each after a
    marker of its name's suffix)."""
    h = hashlib.sha256()
    for k, p in enumerate((path, *more)):
        if k and not p.is_file():
            continue
        if k:
            h.update(f"\0{p.name[len(path.name):]}\0".encode())
        with open(p, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _sqlite_sha256(path: Path) -> str:
    """A SQLite file's identity: its bytes and its write-ahead log's (``-wal``: rows committed there and
    not yet checkpointed are part of the database)."""
    return _file_sha256(path, path.with_name(path.name + "-wal"))
