"""A CSV source read record by record (Python's ``csv`` module), for a file whose quotes the fast
record scan (:func:`auditkit.ingest.profiles.source._records`) cannot trust: a quote that opens in
the middle of a cell, or one never closed. A stray quote makes the row it is on run into the next
lines; that row is set aside with its line and the reason, and reading goes on at the next line, so
one stray quote costs one row, not the file. Cells read as pyarrow's reader reads them (an empty
cell is null, the rest as written)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, TextIO

import pyarrow as pa

__all__ = ["careful_csv"]

_MAX_CELL = 1 << 24  # a cell of more than 16 MiB is a runaway quote, not data


class _Lines:
    """The file's physical lines, counted, with lines given back to be read again."""

    def __init__(self, fh: TextIO) -> None:
        self._fh = fh
        self._back: list[str] = []
        self.taken: list[str] = []
        self.number = 0  # lines read so far

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = self._back.pop() if self._back else next(self._fh)
        self.number += 1
        self.taken.append(line)
        return line

    def unread(self, lines: list[str]) -> None:
        self._back.extend(reversed(lines))
        self.number -= len(lines)


def careful_csv(src: Any, names: list[str], header_line: int, clean: bool, row: str) -> Iterator[pa.Table]:
    """The rows of ``src`` (a :class:`~auditkit.ingest.profiles.source.RawSource`) after its header
    (``names``, on physical line ``header_line``) as string columns and ``row``, in batches; rows it
    cannot read go to ``src.bad`` with their line, blank ones to ``src.blank``. ``clean``: the file
    decodes in its encoding (else rows holding undecodable bytes are set aside)."""
    spec, width = src.spec, len(names)
    limit = csv.field_size_limit()
    csv.field_size_limit(_MAX_CELL)
    try:
        with open(src.location, encoding=spec.encoding, errors="replace", newline="") as fh:
            lines = _Lines(fh)
            for _ in range(header_line):
                next(lines, None)
            reader = csv.reader(lines, delimiter=spec.delimiter, quotechar=spec.quote, strict=False)
            cols: list[list[str | None]] = [[] for _ in names]
            numbers: list[int] = []
            while True:
                lines.taken = []
                first = lines.number + 1
                try:
                    cells = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    cells, error = None, str(exc)
                else:
                    error = None
                taken = lines.taken
                text = taken[0].rstrip("\r\n") if taken else ""
                if cells is not None and not cells:
                    src.blank += 1
                    continue
                if cells is None or len(cells) != width:
                    if len(taken) > 1 or error:  # a quote that runs past its line: that line alone is bad
                        lines.unread(taken[1:])
                        src.bad.append((first, f"a quote ({spec.quote}) opened and not closed on its line: the row "
                                        "runs into the next lines", text[:4096]))
                    else:
                        src.bad.append((first, f"{len(cells)} cells, the header has {width}", text[:4096]))
                    continue
                if not clean and any("\ufffd" in c for c in cells):
                    src.bad.append((first, f"undecodable text (not {spec.encoding})", "".join(taken).rstrip("\r\n")))
                    continue
                for j, c in enumerate(cells):
                    cols[j].append(c if c != "" else None)
                numbers.append(first)
                if len(numbers) >= src.batch_rows:
                    yield _table(names, cols, numbers, row)
                    cols, numbers = [[] for _ in names], []
            if numbers:
                yield _table(names, cols, numbers, row)
    finally:
        csv.field_size_limit(limit)


def _table(names: list[str], cols: list[list[str | None]], numbers: list[int], row: str) -> pa.Table:
    return pa.table({**{n: pa.array(c, pa.string()) for n, c in zip(names, cols, strict=True)},
                     row: pa.array(numbers, pa.int64())})
