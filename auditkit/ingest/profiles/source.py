"""The raw sources of import profiles: a profile's ``[source]`` table, and the readers that give a
source's rows as Arrow tables of string cells with each row's number (``__row``).

CSV through ``pyarrow.csv`` (streamed in batches; the physical line of each row found by a quote-aware
scan of the bytes, so quoted newlines, blank lines and ragged rows keep every number right), xlsx
through ``python-calamine`` (a sheet is read whole), JSON/JSONL (read whole), SQLite and PostgreSQL
through ADBC (record batches). Rows that cannot be read (undecodable text, a row with more or fewer
cells than the header, a JSONL line that is not JSON) are kept in ``.bad`` with their row number and
reason, never dropped.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...paytables import ConfigError
from ..sources import InputError

__all__ = ["FORMATS", "ENCODINGS", "SourceSpec", "RawSource", "open_source", "url_without_credentials"]

ROW = "__row"
FORMATS = ("csv", "xlsx", "json", "jsonl", "sqlite", "postgresql")
ENCODINGS = {"utf-8": "utf-8-sig", "utf-8-sig": "utf-8-sig", "cp1252": "cp1252", "latin-1": "latin-1"}
_SUFFIX = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".xlsx": "xlsx", ".json": "json", ".jsonl": "jsonl",
           ".ndjson": "jsonl", ".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite"}
_CHUNK = 1 << 22
_KEYS: dict[str, type | tuple[type, ...]] = {
    "format": str, "encoding": str, "delimiter": str, "quote": str, "header_row": int, "sheet": (str, int),
    "query": str, "url": str, "snapshot_key": str, "records": str}


@dataclass(frozen=True)
class SourceSpec:
    """A profile's ``[source]`` table, validated (docs/profiles.md, "[source]")."""

    format: str | None = None  # None: from the file's suffix (csv when unknown)
    encoding: str = "utf-8"
    delimiter: str = ","
    quote: str = '"'
    header_row: int = 1
    sheet: str | int = 1
    query: str | None = None
    url: str | None = None
    snapshot_key: str | None = None
    records: str | None = None
    where: str = "profile"

    @classmethod
    def from_table(cls, raw: dict[str, Any], where: str) -> SourceSpec:
        """The spec of ``raw``; an unknown key, a wrong type or a bad value is a ConfigError naming
        ``where`` (the profile's file) and the key."""
        def err(key: str, why: str) -> ConfigError:
            return ConfigError(f"{where}: source.{key}: {why}")
        for key, value in raw.items():
            if key not in _KEYS:
                raise err(key, f"unknown key (known: {', '.join(sorted(_KEYS))})")
            kind = _KEYS[key]
            if isinstance(value, bool) or not isinstance(value, kind):
                names = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
                raise err(key, f"expected {names}, got {type(value).__name__} {value!r}")
        fmt = raw.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise err("format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
        if raw.get("encoding", "utf-8").lower() not in ENCODINGS:
            raise err("encoding", f"{raw['encoding']!r} is not one of utf-8, cp1252, latin-1")
        for key in ("delimiter", "quote"):
            if key in raw and (len(raw[key]) > 1 or (key == "delimiter" and len(raw[key]) != 1)
                               or (raw[key] and ord(raw[key]) > 127) or raw[key] in ("\n", "\r")):
                raise err(key, f"one ASCII character, not a line break, expected (got {raw[key]!r})")
        if raw.get("header_row", 1) < 1:
            raise err("header_row", "1-based: the first row is 1")
        if isinstance(raw.get("sheet"), int) and raw["sheet"] < 1:
            raise err("sheet", "a sheet's name, or its 1-based index")
        if fmt in ("sqlite", "postgresql") and not raw.get("query"):
            raise err("query", f"a {fmt} source needs the query that reads its rows")
        if fmt == "postgresql":
            if not raw.get("snapshot_key"):
                raise err("snapshot_key", "a postgresql source needs a query whose value identifies what the "
                          "query saw (e.g. SELECT max(id) FROM hands): without it a changed table would be "
                          "taken as already ingested")
            url = raw.get("url", "")
            if url and not url.startswith("env:") and urlsplit(url).password:
                raise err("url", "a password in the profile: use url = \"env:NAME\" and set NAME in the environment")
        if fmt not in (None, "sqlite", "postgresql") and ("query" in raw or "snapshot_key" in raw or "url" in raw):
            raise err("query" if "query" in raw else "snapshot_key" if "snapshot_key" in raw else "url",
                      f"only for sqlite and postgresql sources (format is {fmt!r})")
        return cls(**{k: (v.lower() if k == "encoding" else v) for k, v in raw.items()}, where=where)

    def format_of(self, location: str | Path) -> str:
        """The source's format: stated, or from the file's suffix (csv when unknown)."""
        if self.format:
            return self.format
        text = str(location)
        if text.startswith(("postgresql://", "postgres://")):
            return "postgresql"
        return _SUFFIX.get(Path(text).suffix.lower(), "csv")


class RawSource:
    """A source's rows: ``batches()`` yields tables of string columns plus ``__row`` (int64)."""

    def __init__(self, name: str, sha256: str, batches: Iterator[pa.Table]) -> None:
        self.name = name
        self.sha256 = sha256
        self.rows_read = 0
        self.bad: list[tuple[int, str, str]] = []  # (row, reason, raw text)
        self._batches = batches

    def batches(self) -> Iterator[pa.Table]:
        for table in self._batches:
            self.rows_read += table.num_rows
            yield table


def open_source(spec: SourceSpec | dict[str, Any], location: str | Path, *, batch_rows: int = 65536) -> RawSource:
    """The source at ``location`` (a file; for postgresql the URL when ``url`` is not given) read as ``spec`` says."""
    if isinstance(spec, dict):
        spec = SourceSpec.from_table(spec, "profile")
    fmt = spec.format_of(location)
    if fmt == "postgresql" or fmt == "sqlite":
        from .sql import open_sql
        return open_sql(spec, fmt, location, batch_rows)
    path = Path(location)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if fmt == "csv":
        return _open_csv(spec, path, batch_rows)
    if fmt == "xlsx":
        return _open_xlsx(spec, path, batch_rows)
    return _open_json(spec, path, fmt)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def url_without_credentials(url: str) -> str:
    """``url`` with its user name, password and any ``password=`` parameter removed."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() not in ("password", "user")])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


# ---------------------------------------------------------------- CSV

@dataclass
class _Scan:
    """What one pass over a CSV's bytes found: its hash, whether it decodes, the line of each record
    the CSV reader will yield, and the records it will refuse (line, start offset, end offset, cells)."""

    sha256: str
    decodes: bool
    header: bytes
    skip: int  # records before the first data row (preamble and header)
    lines: np.ndarray
    ragged: list[tuple[int, int, int, int]]


def _scan_csv(spec: SourceSpec, path: Path) -> _Scan:
    """Hash the file and find its records: a line break outside quotes ends a record (quotes are
    counted, so a doubled quote keeps the parity); a record's fields are its delimiters outside quotes + 1.
    Delimiter, quote and line break are ASCII, the same bytes in every supported encoding."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder(ENCODINGS[spec.encoding])("strict")
    decodes = True
    q, d = (ord(spec.quote) if spec.quote else -1), ord(spec.delimiter)
    parity = newlines = offset = 0
    start, start_line, delims = 0, 1, 0  # the open record
    records: list[np.ndarray] = []  # per chunk: [start, end, line, fields]
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            if decodes:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    decodes = False
            buf = np.frombuffer(chunk, np.uint8)
            quotes = np.cumsum(buf == q) + parity if q >= 0 else np.zeros(len(buf), np.int64)
            outside = (quotes & 1) == 0
            nl = buf == 10
            ends = np.flatnonzero(nl & outside)
            delim_cum = np.cumsum((buf == d) & outside)
            nl_cum = np.cumsum(nl)
            n = len(ends)
            if n:
                rec = np.empty((n, 4), np.int64)
                rec[:, 1] = ends + offset
                rec[0, 0] = start
                rec[1:, 0] = ends[:-1] + 1 + offset
                rec[0, 2] = start_line
                rec[1:, 2] = newlines + nl_cum[ends[:-1]] + 1
                dc = delim_cum[ends]
                rec[0, 3] = delims + dc[0] + 1
                rec[1:, 3] = np.diff(dc) + 1
                records.append(rec)
                start, start_line = int(ends[-1]) + 1 + offset, newlines + int(nl_cum[ends[-1]]) + 1
                delims = int(delim_cum[-1] - delim_cum[ends[-1]])
            else:
                delims += int(delim_cum[-1]) if len(buf) else 0
            parity = int(quotes[-1]) & 1 if len(buf) and q >= 0 else parity
            newlines += int(nl_cum[-1]) if len(buf) else 0
            offset += len(buf)
        if decodes:
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                decodes = False
    if offset > start:
        records.append(np.array([[start, offset, start_line, delims + 1]], np.int64))
    rec = np.concatenate(records) if records else np.empty((0, 4), np.int64)
    empty = _empty_records(path, rec)
    rec[empty, 3] = 0
    first = int(np.searchsorted(rec[:, 2], spec.header_row)) if len(rec) else 0
    if first >= len(rec):
        raise InputError(f"{path.name}: no header row at line {spec.header_row}")
    with open(path, "rb") as f:
        f.seek(int(rec[first, 0]))
        header = f.read(int(rec[first, 1] - rec[first, 0]))
    data = rec[first + 1:]
    width = int(rec[first, 3])
    fits = (data[:, 3] == width) | (data[:, 3] == 0)
    ragged = [(int(r[2]), int(r[0]), int(r[1]), int(r[3])) for r in data[~fits]]
    return _Scan(digest.hexdigest(), decodes, header, first + 1, data[fits, 2].copy(), ragged)


def _empty_records(path: Path, rec: np.ndarray) -> np.ndarray:
    """Records that are blank lines (empty, or a lone carriage return)."""
    length = rec[:, 1] - rec[:, 0]
    mask = length == 0
    maybe = np.flatnonzero(length == 1)
    if len(maybe):
        with open(path, "rb") as f:
            for i in maybe:
                f.seek(int(rec[i, 0]))
                mask[i] = f.read(1) == b"\r"
    return mask


class _Transcoded(io.RawIOBase):
    """A file decoded from ``encoding`` (undecodable bytes as U+FFFD) and given as UTF-8, chunk by chunk."""

    def __init__(self, path: Path, encoding: str) -> None:
        self._f = open(path, "rb")  # noqa: SIM115 (closed by close())
        self._dec = codecs.getincrementaldecoder(encoding)("replace")
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            chunk = self._f.read(_CHUNK)
            self._buf = self._dec.decode(chunk, final=not chunk).encode()
            if not chunk:
                break
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


def _header_names(spec: SourceSpec, header: bytes) -> list[str]:
    import csv
    text = header.decode(ENCODINGS[spec.encoding], errors="replace").lstrip("\ufeff").rstrip("\r\n")
    row = next(csv.reader([text], delimiter=spec.delimiter, quotechar=spec.quote or None,
                          quoting=csv.QUOTE_MINIMAL if spec.quote else csv.QUOTE_NONE), [])
    names = [h.strip() or f"column_{j + 1}" for j, h in enumerate(row)]
    seen: dict[str, int] = {}
    for j, h in enumerate(names):  # a repeated name gets _2, _3...
        seen[h] = seen.get(h, 0) + 1
        if seen[h] > 1:
            names[j] = f"{h}_{seen[h]}"
    return names


def _open_csv(spec: SourceSpec, path: Path, batch_rows: int) -> RawSource:
    import pyarrow.csv as pcsv
    scan = _scan_csv(spec, path)
    names = _header_names(spec, scan.header)
    src = RawSource(path.name, scan.sha256, iter(()))
    for line, start, end, cells in scan.ragged:
        src.bad.append((line, f"{cells} cells, the header has {len(names)}", _raw(path, spec, start, end)))

    def batches() -> Iterator[pa.Table]:
        native = scan.decodes and spec.encoding in ("utf-8", "utf-8-sig")
        source: Any = str(path) if native else pa.PythonFile(_Transcoded(path, ENCODINGS[spec.encoding]), mode="r")
        reader = pcsv.open_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=scan.skip, block_size=1 << 22,
                                          use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=spec.delimiter, quote_char=spec.quote or False,
                                            double_quote=True, newlines_in_values=True, ignore_empty_lines=False,
                                            invalid_row_handler=lambda row: "skip"),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[""],
                                                strings_can_be_null=True, quoted_strings_can_be_null=True))
        done = 0
        try:
            for batch in reader:
                table = pa.Table.from_batches([batch])
                rows = scan.lines[done:done + table.num_rows]
                if len(rows) != table.num_rows:
                    raise InputError(f"{path.name}: the CSV reader found more rows than lines ({done + table.num_rows}"
                                     f" > {len(scan.lines)}): a lone carriage return as a line break is not supported")
                done += table.num_rows
                table = table.append_column(ROW, pa.array(rows, pa.int64()))
                if not scan.decodes:
                    table = _undecodable(table, names, spec, src)
                for at in range(0, table.num_rows, batch_rows):
                    yield table.slice(at, batch_rows)
        except pa.ArrowInvalid as e:
            raise InputError(f"{path.name}: {e}") from None
        finally:
            if not native:
                source.close()
        if done != len(scan.lines):
            raise InputError(f"{path.name}: the CSV reader found {done} rows, the line scan {len(scan.lines)}")

    src._batches = batches()
    return src


def _raw(path: Path, spec: SourceSpec, start: int, end: int) -> str:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start).decode(ENCODINGS[spec.encoding], errors="replace").rstrip("\r\n")


def _undecodable(table: pa.Table, names: list[str], spec: SourceSpec, src: RawSource) -> pa.Table:
    """``table`` without its rows holding undecodable bytes (U+FFFD), which go to ``src.bad``."""
    bad = pc.fill_null(pc.match_substring(table[names[0]], "\ufffd"), False)
    for n in names[1:]:
        bad = pc.or_(bad, pc.fill_null(pc.match_substring(table[n], "\ufffd"), False))
    if not pc.any(bad).as_py():
        return table
    for r in table.filter(bad).to_pylist():
        text = spec.delimiter.join("" if r[n] is None else r[n] for n in names)
        src.bad.append((r[ROW], f"undecodable text (not {spec.encoding})", text))
    src.bad.sort(key=lambda b: b[0])
    return table.filter(pc.invert(bad))


# ---------------------------------------------------------------- xlsx, JSON

def _open_xlsx(spec: SourceSpec, path: Path, batch_rows: int) -> RawSource:
    try:
        from python_calamine import CalamineWorkbook
    except ImportError:
        raise InputError("reading xlsx needs python-calamine: pip install 'auditkit[sources]'") from None
    try:
        book = CalamineWorkbook.from_path(str(path))
        if isinstance(spec.sheet, int):
            if spec.sheet > len(book.sheet_names):
                raise InputError(f"{path.name}: no sheet {spec.sheet} (sheets: {', '.join(book.sheet_names)})")
            sheet = book.get_sheet_by_index(spec.sheet - 1)
        elif spec.sheet in book.sheet_names:
            sheet = book.get_sheet_by_name(spec.sheet)
        else:
            raise InputError(f"{path.name}: no sheet {spec.sheet!r} (sheets: {', '.join(book.sheet_names)})")
        first = sheet.start[0] if sheet.start else 0  # the used area's first row (0-based)
        rows = sheet.to_python(skip_empty_area=True)
    except InputError:
        raise
    except Exception as e:  # calamine's errors are its own classes
        raise InputError(f"{path.name}: not a readable xlsx workbook ({e})") from None
    at = spec.header_row - 1 - first
    if not 0 <= at < len(rows):
        raise InputError(f"{path.name}: no header row at row {spec.header_row}")
    header = [(_cell(v) or "").strip() for v in rows[at]]
    while header and not header[-1]:  # the used area may be wider than the header
        header.pop()
    names = _unique([h or f"column_{j + 1}" for j, h in enumerate(header)])
    src = RawSource(path.name, file_sha256(path), iter(()))

    def batches() -> Iterator[pa.Table]:
        for lo in range(at + 1, len(rows), batch_rows):
            chunk = rows[lo:lo + batch_rows]
            cols = {n: pa.array([_cell(r[j]) if j < len(r) else None for r in chunk], pa.string())
                    for j, n in enumerate(names)}
            for k, r in enumerate(chunk):
                extra = [v for v in r[len(names):] if _cell(v) is not None]
                if extra:
                    src.bad.append((lo + k + first + 1, f"{len(names) + len(extra)} cells, the header has {len(names)}",
                                    "\t".join(_cell(v) or "" for v in r)))
            cols[ROW] = pa.array(np.arange(lo, lo + len(chunk)) + first + 1, pa.int64())
            table = pa.table(cols)
            keep = [k for k, r in enumerate(chunk) if not any(_cell(v) is not None for v in r[len(names):])]
            yield table if len(keep) == len(chunk) else table.take(keep)

    src._batches = batches()
    return src


def _cell(v: Any) -> str | None:
    """A workbook cell as text, as the sheet shows it: integers without ``.0``, dates as ISO text."""
    import datetime as dt
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, dt.date):
        return v.strftime("%Y-%m-%d 00:00:00")
    if isinstance(v, (dt.time, dt.timedelta)):
        return str(v)
    return str(v)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for h in names:
        seen[h] = seen.get(h, 0) + 1
        out.append(h if seen[h] == 1 else f"{h}_{seen[h]}")
    return out


def _json_text(v: Any) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False)


def _open_json(spec: SourceSpec, path: Path, fmt: str) -> RawSource:
    """A JSON document (its records at ``records``, a dotted key, or the document itself when a list)
    or JSON lines, read whole: nested values as JSON text."""
    src = RawSource(path.name, file_sha256(path), iter(()))
    enc = ENCODINGS[spec.encoding]
    records: list[tuple[int, dict]] = []
    if fmt == "jsonl":
        with open(path, encoding=enc, errors="replace", newline="") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    src.bad.append((n, f"not JSON ({e})", line.rstrip("\r\n")))
                    continue
                if "\ufffd" in line:
                    src.bad.append((n, f"undecodable text (not {spec.encoding})", line.rstrip("\r\n")))
                elif not isinstance(rec, dict):
                    src.bad.append((n, f"a JSON {type(rec).__name__}, not an object", line.rstrip("\r\n")))
                else:
                    records.append((n, rec))
    else:
        try:
            doc = json.loads(path.read_text(encoding=enc))
        except (ValueError, UnicodeDecodeError) as e:
            raise InputError(f"{path.name}: not a JSON document ({e})") from None
        for key in (spec.records or "").split(".") if spec.records else []:
            if not isinstance(doc, dict) or key not in doc:
                raise InputError(f"{path.name}: no {spec.records!r} in the document (source.records)")
            doc = doc[key]
        if not isinstance(doc, list):
            raise InputError(f"{path.name}: the records are not a list (set source.records to their key)")
        for n, rec in enumerate(doc, 1):
            if isinstance(rec, dict):
                records.append((n, rec))
            else:
                src.bad.append((n, f"a JSON {type(rec).__name__}, not an object", json.dumps(rec)))
    names = _unique(list(dict.fromkeys(k for _, rec in records for k in rec)))
    cols = {n: pa.array([_json_text(rec.get(n)) for _, rec in records], pa.string()) for n in names}
    cols[ROW] = pa.array([n for n, _ in records], pa.int64())
    src._batches = iter([pa.table(cols)])
    return src


_TABLE = re.compile(r"^\s*select\s.+?\sfrom\s+([A-Za-z_][\w.]*)\s*(?:where\b.*|order\b.*|limit\b.*|;)?\s*$",
                    re.IGNORECASE | re.DOTALL)


def sql_name(query: str) -> str:
    """What reports show as the source of a query: ``sql:<table>`` for a one-table query, else its hash."""
    m = _TABLE.match(query)
    return f"sql:{m.group(1)}" if m and " join " not in query.lower() else \
        "sql:" + hashlib.sha256(query.encode()).hexdigest()[:12]


def env_url(spec: SourceSpec) -> str:
    """The URL of ``spec.url``, read from the environment for ``env:NAME``."""
    url = spec.url or ""
    if url.startswith("env:"):
        name = url[4:]
        if name not in os.environ:
            raise ConfigError(f"{spec.where}: source.url: the environment variable {name} is not set")
        return os.environ[name]
    return url
