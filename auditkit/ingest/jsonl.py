"""JSON Lines logs (plain or gzip): lines in, parsed rounds or quarantine entries out; and back.

:func:`read_blocks` gives the lines of a file in blocks of many thousands
(:func:`read_lines` one by one, with their numbers), so that each one is
accounted for (stored, quarantined or blank). A gzip stream that is corrupt or
truncated ends with one quarantine entry saying where it broke; a line longer
than :data:`MAX_LINE` is one entry, and is never held in memory whole.
:func:`records_from_table` writes stored rows back as spec records.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..cards import card_str
from . import MAX_LINE

__all__ = ["read_blocks", "Lines", "MAX_LINE", "RAW_KEPT", "read_lines", "records_from_table", "write_jsonl", "LineError", "spec_cards", "spec_money", "drop_none", "too_long_reason"]


class LineError(Exception):
    """The file itself could not be read past some line (corrupt gzip, bad encoding)."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


RAW_KEPT = 65_536
"""Bytes of a quarantined line kept in its entry (the rest is counted, not kept)."""


BLOCK_BYTES = 16 << 20
"""Bytes of lines gathered into one block for the bulk reader."""
_CHUNK = 1 << 20


@dataclass
class Lines:
    """A block of consecutive lines: ``data`` holds each line followed by ``\n`` (a line that was
    not read, too long or where a gzip stream broke, is empty there and has its kept head and
    reason in ``errors``); ``done`` is the bytes of the file read so far (compressed for gzip)."""

    data: bytes
    starts: np.ndarray
    ends: np.ndarray
    first: int
    errors: dict[int, tuple[bytes, str]]
    done: int

    def __len__(self) -> int:
        return len(self.starts)

    def raw(self, i: int) -> bytes:
        """Line ``i`` of the block as written, without its line break."""
        return self.data[self.starts[i]:self.ends[i]].rstrip(b"\r\n")


def too_long_reason(max_line: int) -> str:
    """The quarantine reason of a line longer than ``max_line`` bytes (ingest and live mode)."""
    return f"line longer than {max_line:,} bytes"


_WINDOW = 1 << 18  # bytes compared at a time when finding newlines (the temporary stays in cache)


def newlines(buf: bytes | memoryview, at: int = 0) -> np.ndarray:
    """Positions of the ``\n`` bytes of ``buf``, plus ``at``, found a window at a time: no boolean temporary
    of the whole buffer (the tests keep the whole-buffer search as the reference)."""
    data = np.frombuffer(buf, np.uint8)
    if len(data) <= _WINDOW:
        return np.flatnonzero(data == 10) + at
    found = [np.flatnonzero(data[i:i + _WINDOW] == 10) + (at + i) for i in range(0, len(data), _WINDOW)]
    return np.concatenate(found)


def _block(pieces: list[bytes | memoryview], first: int, errors: dict[int, tuple[bytes, str]], done: int,
           max_line: int, ends: list[np.ndarray] | None = None) -> Lines:
    """The block of the lines in ``pieces`` (each ending with ``\n``); ``ends``: the positions of their
    newlines in the block, found as they were read (else found here)."""
    data = b"".join(pieces)
    ends_at = newlines(data) if ends is None else np.concatenate(ends) if ends else np.zeros(0, np.int64)
    starts = np.empty_like(ends_at)
    starts[:1] = 0
    starts[1:] = ends_at[:-1] + 1
    too_long = too_long_reason(max_line)
    if len(ends_at) and (ends_at - starts).max() > max_line:
        for i in np.flatnonzero(ends_at - starts > max_line):  # lines that met within a block
            errors[int(i)] = (data[starts[i]:min(ends_at[i], starts[i] + RAW_KEPT)], too_long)  # its own bytes only
    return Lines(data, starts, ends_at, first, errors, done)


def read_blocks(path: Path, *, max_line: int = MAX_LINE, block_bytes: int = BLOCK_BYTES,
                start: int = 0, stop: int | None = None) -> Iterator[Lines]:
    """Every line of a JSONL file (plain or gzip), about ``block_bytes`` at a time.

    ``start`` and ``stop`` read only the bytes ``[start, stop)`` of a plain file (both at the
    start of a line; the lines numbered from 1 there): a parallel ingest's share of a big file.

    A line longer than ``max_line`` bytes keeps only its first :data:`RAW_KEPT` bytes and
    the reason ``line longer than N bytes``; memory stays within ``max_line`` plus a read
    chunk whatever the line's length. A corrupt or truncated gzip stream ends the file
    with one entry (numbered after the last whole line) saying where it broke.
    """
    too_long = too_long_reason(max_line)
    pieces: list[bytes | memoryview] = []  # the block's lines so far, views of the chunks read (joined once)
    ends: list[np.ndarray] = []  # the positions of their newlines in the block
    errors: dict[int, tuple[bytes, str]] = {}
    first, size, count = 1, 0, 0  # first line of the block, bytes and lines in it
    carry, skipping = b"", None  # the unfinished line; the head of a too-long line being skipped

    def unread(entry: tuple[bytes, str]) -> None:  # a line not read: empty in the block
        nonlocal size, count
        errors[count] = entry
        pieces.append(b"\n")
        ends.append(np.array([size], np.int64))
        size, count = size + 1, count + 1

    with open(path, "rb") as raw_fh:
        fh = gzip.GzipFile(fileobj=raw_fh, mode="rb") if _is_gzip(path) else raw_fh
        read = fh.read1 if fh is not raw_fh else fh.read
        if start or stop is not None:
            if fh is not raw_fh:
                raise ValueError(f"{path}: a gzip stream is read from its start only")
            raw_fh.seek(start)
            end = stop if stop is not None else float("inf")
            read = lambda n: raw_fh.read(int(max(0, min(n, end - raw_fh.tell()))))  # noqa: E731
        while True:
            try:
                chunk = read(_CHUNK)
            except (EOFError, OSError, zlib.error, gzip.BadGzipFile) as exc:
                kind = "truncated" if isinstance(exc, EOFError) else "corrupt"
                unread((b"", f"{kind} gzip stream after line {first + count - 1}: {exc}"))
                yield _block(pieces, first, errors, raw_fh.tell(), max_line, ends)
                return
            if not chunk:
                break
            nl = newlines(chunk)
            begin = 0  # where the chunk's next line starts
            if skipping is not None:
                if not len(nl):
                    continue
                unread((skipping, too_long))
                skipping, begin, nl = None, int(nl[0]) + 1, nl[1:]
            if not len(nl):
                carry += chunk[begin:]
            else:
                cut = int(nl[-1]) + 1
                if carry:
                    pieces.append(carry)
                pieces.append(memoryview(chunk)[begin:cut])
                ends.append(nl + (size + len(carry) - begin))
                size += len(carry) + cut - begin
                count += len(nl)
                carry = chunk[cut:]
            if len(carry) > max_line:
                skipping, carry = carry[:RAW_KEPT], b""
            if size >= block_bytes:
                yield _block(pieces, first, errors, raw_fh.tell(), max_line, ends)
                pieces, ends, errors, first, size, count = [], [], {}, first + count, 0, 0
        if skipping is not None:
            unread((skipping, too_long))
        elif carry:
            pieces.append(carry + b"\n")
            ends.append(np.array([size + len(carry)], np.int64))
        if pieces:
            yield _block(pieces, first, errors, raw_fh.tell(), max_line, ends)


def read_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line_number, raw_bytes)`` for every line; raises LineError where the file breaks."""
    opener = gzip.open if _is_gzip(path) else open
    n = 0
    try:
        with opener(path, "rb") as fh:
            for n, raw in enumerate(fh, start=1):
                yield n, raw.rstrip(b"\r\n")
    except (EOFError, OSError, zlib.error, gzip.BadGzipFile) as exc:
        kind = "truncated" if isinstance(exc, EOFError) else "corrupt"
        raise LineError(n + 1, f"{kind} gzip stream after line {n}: {exc}") from None


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


# ---- stored rows back to spec records ------------------------------------------------
def spec_cards(codes: list[int] | None) -> list[str] | None:
    """Card codes back to the spec's card names."""
    return None if codes is None else [card_str(c) for c in codes]


def spec_money(x: float | None) -> float | int | None:
    """An amount as the spec writes it (whole amounts without a fraction)."""
    if x is None:
        return None
    return int(x) if float(x).is_integer() else x


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    """The items of ``d`` that are not None."""
    return {k: v for k, v in d.items() if v is not None}


def _common(row: dict[str, Any], game: str) -> dict[str, Any]:
    ts = row["started_at"].astimezone(timezone(timedelta(minutes=int(row.get("utc_offset") or 0))))
    rec = {"round_id": row["round_id"], "game": game, "table_id": row["table_id"],
           "started_at": ts.isoformat(), "dealer_id": row.get("dealer_id"),
           "shoe_id": row.get("shoe_id"), "round_seq": row.get("round_seq")}
    if row.get("status") and row["status"] != "completed":
        rec["status"] = row["status"]
    return drop_none(rec)


def _events(events: list[dict] | None) -> list[dict] | None:
    if not events:
        return None
    out = []
    for e in events:
        e = drop_none(dict(e))
        for key in ("dice",):
            if key in e:
                e[key] = list(e[key])
        for key in ("high", "low"):
            if key in e:
                e[key] = spec_cards(e[key])
        if "amount" in e:
            e["amount"] = spec_money(e["amount"])
        out.append(e)
    return out


def _wagers(wagers: list[dict] | None) -> list[dict] | None:
    if not wagers:
        return None
    return [{"seat": w["seat"], "bet": w["bet"], "amount": spec_money(w["amount"]), "net": spec_money(w["net"])}
            for w in wagers]


def records_from_table(table: pa.Table, game: str) -> Iterator[dict[str, Any]]:
    """Spec round records (JSON-ready dicts) of stored rows of ``game``."""
    from .. import games

    spec = games.get(game)
    for row in table.to_pylist():
        rec = _common(row, game)
        spec.to_record(row, rec)
        wagers = _wagers(row.get("wagers"))
        if wagers:
            rec["wagers"] = wagers
        events = _events(row.get("events"))
        if events:
            rec["events"] = events
        yield rec


def write_jsonl(records: Iterator[dict[str, Any]] | list[dict[str, Any]], path: Path) -> int:
    """Write records as JSON Lines atomically (gzip when the name ends in .gz); returns the count."""
    from ..store import atomic_path

    n = 0
    with atomic_path(Path(path)) as tmp, open(tmp, "wb") as raw:
        # gzip with no time stamp: the same records give the same bytes
        binary = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz") else raw
        with io.TextIOWrapper(binary, encoding="utf-8", newline="\n") as fh:
            for rec in records:
                fh.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
                n += 1
    return n
