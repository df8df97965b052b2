"""Text that does not decode in a CSV source's stated encoding: the file is read with undecodable
bytes replaced (U+FFFD), chunk by chunk, and the rows holding them are set aside with their reason,
so the other rows are read and none is dropped."""

from __future__ import annotations

import codecs
import io
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.compute as pc

_CHUNK = 4 << 20


def decodes(path: str | Path, encoding: str) -> bool:
    """Whether the whole file decodes in ``encoding`` (read a chunk at a time)."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


class Replacing(io.RawIOBase):
    """The rest of ``fh`` decoded from ``encoding`` (undecodable bytes as U+FFFD) and given as UTF-8."""

    def __init__(self, fh: BinaryIO, encoding: str) -> None:
        self._fh = fh
        self._dec = codecs.getincrementaldecoder(encoding)("replace")
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            chunk = self._fh.read(_CHUNK)
            self._buf = self._dec.decode(chunk, final=not chunk).encode()
            if not chunk:
                break
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def set_aside(table: pa.Table, names: list[str], row: str, delimiter: str, encoding: str,
              bad: list[tuple[int, str, str]]) -> pa.Table:
    """``table`` without its rows holding U+FFFD, which are added to ``bad`` as (row, reason, raw text)."""
    hit = pa.array([False] * table.num_rows)
    for n in names:
        hit = pc.or_(hit, pc.fill_null(pc.match_substring(table[n], "\ufffd"), False))
    if not pc.any(hit).as_py():
        return table
    for r in table.filter(hit).to_pylist():
        bad.append((r[row], f"undecodable text (not {encoding})", delimiter.join(r[n] or "" for n in names)))
    return table.filter(pc.invert(hit))
