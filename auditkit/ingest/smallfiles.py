"""Small JSONL sources read ahead in batches: the lines of many small files parsed and hashed as one block,
then cut back into one block per source.

A five-line source parsed on its own pays the JSON reader's, the field checks' and the content hashes'
set-up for five rows (about two thirds of the CPU of ingesting it). :class:`SmallFiles` reads the next
small plain files of a serial ingest (each at most :data:`SMALL_BYTES`, none gzip, none already in the
store by its quick key) together, up to :data:`BATCH_FILES` files or :data:`BATCH_BYTES` bytes, numbers
their lines end to end, parses them with :func:`~auditkit.ingest.blocks.parse_block` and hashes the rows
once (:func:`~auditkit.ingest.writer.hash_block`). Each source is still identified, checked and committed
on its own, in order (:class:`~auditkit.ingest.writer.SourceWriter`): it takes the rows, hashes and bad
lines of its own line range, numbered from its first line, which are the ones parsing it alone gives
(the bulk reader's result is the per-line reader's, line for line; a row's hashes are its own values').
A source whose bytes changed since they were read ahead (its SHA-256 is not theirs), and every source of
a batch where a round id was normalised (the warning names the source's own first one), is read alone.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.compute as pc

from .blocks import parse_block
from .identity import _open_regular, is_csv, quick_key
from .jsonl import _block

if TYPE_CHECKING:
    from ..store import Store
    from .jsonl import Lines
    from .writer import Block

__all__ = ["SmallFiles", "SMALL_BYTES", "BATCH_FILES", "BATCH_BYTES"]

SMALL_BYTES = 64 << 10
"""A plain file up to this size is read ahead with others."""
BATCH_FILES = 512
"""Files read ahead together, at most (and the files looked at ahead for them)."""
BATCH_BYTES = 4 << 20
"""Bytes read ahead together, at most (about)."""


@dataclass
class _Ahead:
    """A source read ahead: its bytes, its first line in the batch's block (from 0), its lines."""

    data: bytes
    first: int
    lines: int
    batch: _Batch


@dataclass
class _Batch:
    """The block of a batch's lines, parsed and hashed (None: read each source alone)."""

    lines: Lines
    block: Block | None


class SmallFiles:
    """The small sources among ``files`` (ingested in that order) read ahead in batches; :meth:`blocks`
    gives a source's own block, or None for a source to be read alone."""

    def __init__(self, files: list[Path], store: Store, max_line: int):
        self.files, self.store, self.max_line = files, store, max_line
        self.at = {p: i for i, p in enumerate(files)}
        self.ahead: dict[Path, _Ahead] = {}
        self.looked = -1  # files up to this position were looked at for a batch

    def blocks(self, path: Path, sha: str) -> list[tuple[Block, Callable[[int], bytes]]] | None:
        """``[(the source's block, the raw text of its line n)]`` for the source at ``path`` whose SHA-256 is ``sha``, or None
        (not small, not read ahead, changed since, or its batch read alone)."""
        i = self.at.get(path)
        if i is None:
            return None
        if i > self.looked:
            self._read_ahead(i)
        got = self.ahead.pop(path, None)
        if got is None or got.batch.block is None or hashlib.sha256(got.data).hexdigest() != sha:
            return None
        lines, first = got.batch.lines, got.first
        return [(_own(got.batch.block, first, got.lines, len(got.data)), lambda n: lines.raw(first + n - 1))]

    def _read_ahead(self, i: int) -> None:
        """Read the small files from position ``i`` on (within :data:`BATCH_FILES`) as one batch; those of
        earlier batches never asked for (skipped: a content already stored) are dropped, and their batches with them."""
        self.ahead = {p: got for p, got in self.ahead.items() if self.at[p] >= i}
        pieces: list[bytes] = []
        took: list[tuple[Path, bytes, int, int]] = []
        lines = size = 0
        stop = min(i + BATCH_FILES, len(self.files))
        for j in range(i, stop):
            self.looked = j
            path = self.files[j]
            data = self._small(path)
            if data is None:
                continue
            data_nl = data if data.endswith(b"\n") else data + b"\n"  # as read_blocks ends a last line
            n = data_nl.count(b"\n")
            pieces.append(data_nl)
            took.append((path, data, lines, n))
            lines += n
            size += len(data_nl)
            if size >= BATCH_BYTES:
                break
        if not took:
            return
        block = _block(pieces, 1, {}, size, self.max_line)
        batch = _Batch(block, _parse(block))
        for path, data, first, n in took:
            self.ahead[path] = _Ahead(data, first, n, batch)

    def _small(self, path: Path) -> bytes | None:
        """The bytes of a small plain JSONL file not yet in the store (by its quick key), else None."""
        if is_csv(path):
            return None
        try:
            size = os.stat(path).st_size
            if not 0 < size <= min(SMALL_BYTES, self.max_line) or \
                    self.store.source_by_quick_key(quick_key(path)) is not None:
                return None
            with _open_regular(path) as fh:
                data = fh.read(SMALL_BYTES + 1)
        except OSError:  # read alone, where its error is reported
            return None
        if len(data) != size or data[:2] == b"\x1f\x8b":  # changed while read, or gzip
            return None
        return data


def _parse(lines: Lines) -> Block | None:
    """The batch's rows parsed and hashed as one block; None when a round id was normalised."""
    from .writer import hash_block

    parsed = parse_block(lines)
    if parsed.renamed:
        return None
    return hash_block(parsed, len(lines), 0, [], len(lines.data))


def _own(batch: Block, first: int, n: int, size: int) -> Block:
    """The block of the source whose lines are the batch's ``first + 1 .. first + n``, numbered from 1."""
    from .writer import Block

    lo, hi = np.searchsorted(batch.lines, [first + 1, first + n + 1])
    tables = {}
    for game, t in batch.tables.items():
        at = t["source_line"].to_numpy()
        a, b = np.searchsorted(at, [first + 1, first + n + 1])
        if b > a:
            rows = t.slice(a, b - a)
            k = rows.schema.get_field_index("source_line")
            tables[game] = rows.set_column(k, rows.schema.field(k), pc.subtract(rows["source_line"], first))
    bad = [(line - first, raw, reason, rid) for line, raw, reason, rid in batch.bad if first < line <= first + n]
    return Block(tables, batch.ids.slice(lo, hi - lo), batch.lines[lo:hi] - first, batch.line_hash[lo:hi],
                 batch.id_hash[lo:hi], bad, [], n - int(hi - lo) - len(bad), [], n, 0, size)

