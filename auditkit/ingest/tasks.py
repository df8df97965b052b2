"""The tasks a parallel ingest's workers run (module functions: they are pickled by name), the cut of a
plain file into byte ranges and a range's lines read again for the client (:class:`RangeLines`);
:mod:`auditkit.ingest.parallel` submits the tasks and commits their results.

A byte range's task parses its lines and writes their rows as the source's parts (:func:`write_range`);
when a worker hashes the file meanwhile (:func:`hash_and_number`), the range learns the source's
SHA-256 and its first line number from a note the client writes once the hash is in
(:func:`_write_note`), after its parse.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..store import Store
from .blocks import parse_block
from .jsonl import Lines, read_blocks
from .readers import read_source
from .writer import Block, hash_block, write_parts

__all__ = ["parse_range", "write_range", "parse_lines", "parse_csv", "cut_ranges", "hash_and_number",
           "RangeLines"]


def parse_range(path: str, start: int, stop: int, bulk: bool, max_line: int) -> list[Block]:
    """The blocks of bytes ``[start, stop)`` of a plain JSONL file, lines numbered from 1 there."""
    return [hash_block(parse_block(b, bulk=bulk), len(b), 0, [], b.done)
            for b in read_blocks(Path(path), max_line=max_line, start=start, stop=stop)]


def write_range(path: str, start: int, stop: int, bulk: bool, max_line: int, store: Store, name: str,
                sha: str | None, at: int, note: str | None = None) -> tuple[list[Block], list[dict[str, Any]]]:
    """The blocks of bytes ``[start, stop)`` of a plain JSONL file, with their rows written as the source's
    parts here (:func:`~auditkit.ingest.writer.write_parts`): the blocks without their tables, and the
    entries of the parts. ``sha`` is the source's SHA-256 and ``at`` the range's first line number; or,
    for a range parsed while a worker hashes the file, ``sha`` is None, ``at`` the range's place among
    the source's ranges and both are read after the parse from ``note``, once the client has written it
    (:meth:`ParallelIngest._settle`): a note without a hash (the content is not to be stored) ends the
    task with nothing written."""
    if note is not None and (said := _read_note(note)) is not None and said["sha"] is None:
        return [], []  # told before the parse: nothing to do
    blocks = parse_range(path, start, stop, bulk, max_line)
    if note is not None:
        said = _await_note(note)
        if said["sha"] is None:
            return [], []
        sha, at = said["sha"], said["first"][at]
    blocks = [block.shifted(at - 1) for block in blocks]
    return blocks, write_parts(store, sha, name, blocks)  # type: ignore[arg-type]


def _read_note(note: str) -> dict[str, Any] | None:
    """The note of a source hashed by a worker (``{"sha": ..., "first": [...]}``), None if not yet written."""
    try:
        with open(note, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None


def _write_note(note: str, said: dict[str, Any]) -> None:
    """Write a note whole (a temporary file renamed: a range task never reads half of one); an error names
    the note (its folder, with the temporary file, is removed when the ingest ends)."""
    try:
        with open(f"{note}.tmp", "w", encoding="utf-8") as fh:
            json.dump(said, fh)
        os.replace(f"{note}.tmp", note)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, note) from exc


def _await_note(note: str) -> dict[str, Any]:
    """The note, once written (the client writes it whole, by a rename; a worker whose client died is
    ended by its watchdog, :func:`auditkit.workers.worker_start`)."""
    delay = 0.001
    while (said := _read_note(note)) is None:
        time.sleep(delay)
        delay = min(2 * delay, 0.02)
    return said


def parse_lines(block: Lines, bulk: bool) -> list[Block]:
    """A block of lines read by the client (of a gzip file)."""
    return [hash_block(parse_block(block, bulk=bulk), len(block), 0, [], block.done)]


def parse_csv(path: str, name: str, bulk: bool, max_line: int) -> list[Block]:
    """Every block of a CSV source (its main file and companions), read as the serial ingest reads it."""
    return [hash_block(parsed, lines, attached, other, done)
            for parsed, lines, attached, other, done in read_source(Path(path), name, bulk, max_line)]


def cut_ranges(path: Path, step: int) -> Iterator[tuple[int, int]]:
    """Byte ranges of about ``step`` bytes covering a file, each ending just after a line break (or at
    the end of the file)."""
    size = path.stat().st_size
    pos = 0
    with open(path, "rb") as fh:
        while pos < size:
            stop = pos + step
            if stop >= size:
                stop = size
            else:  # on to the end of the line that holds byte stop - 1
                fh.seek(stop - 1)
                while True:
                    chunk = fh.read(1 << 16)
                    at = chunk.find(b"\n")
                    if at >= 0:
                        stop = fh.tell() - len(chunk) + at + 1
                        break
                    if not chunk:
                        stop = size
                        break
            yield pos, stop
            pos = stop


def hash_and_number(path: Path | str, ranges: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int, int]]]:
    """The SHA-256 of a plain file covered by ``ranges`` (contiguous, each ending after a line break but
    the last) and each range with the number of its first line, from one read of the file (in this
    process for a file of one range, else in a worker while the others parse it). The lines of the last
    range are not counted (no range follows it); numpy counts the others' (twice as fast as ``bytes.count``)."""
    import numpy as np

    h = hashlib.sha256()
    out, line = [], 1
    with open(path, "rb") as fh:
        for k, (start, stop) in enumerate(ranges):
            out.append((start, stop, line))
            left, count = stop - start, k < len(ranges) - 1
            while left > 0 and (chunk := fh.read(min(1 << 20, left))):
                h.update(chunk)
                if count:
                    line += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == 10))
                left -= len(chunk)
        while chunk := fh.read(1 << 20):  # bytes past the last range (a file grown since it was cut)
            h.update(chunk)
    return h.hexdigest(), out


class RangeLines:
    """The lines of a byte range as written, read again only when a duplicate's entry needs one. They
    are asked for in line order, so the range is read once however many are asked for."""

    def __init__(self, path: Path, start: int, stop: int, max_line: int):
        self.path, self.start, self.stop, self.max_line = path, start, stop, max_line
        self._blocks: Iterator[Lines] | None = None
        self._block: Lines | None = None

    def raw(self, n: int) -> bytes:
        """Line ``n`` (from 1) of the range."""
        block = self._block
        if block is None or n < block.first:  # the first asked for, or an earlier one: from the start
            self._blocks = read_blocks(self.path, max_line=self.max_line, start=self.start, stop=self.stop)
            block = None
        while block is None or n >= block.first + len(block):
            block = next(self._blocks, None)  # type: ignore[arg-type]
            if block is None:
                raise IndexError(f"{self.path}: no line {n} in bytes {self.start}-{self.stop}")
        self._block = block
        return block.raw(n - block.first)
