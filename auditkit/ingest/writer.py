"""The one writer of the store's sources: every ingest (one process, N workers, an import profile) and the
live watcher commit through :class:`SourceWriter`.

A source's rows arrive as :class:`Block` s (rows per game with their id and content hashes, in line
order). The writer checks their round ids against the store and the run on hash columns
(:class:`~auditkit.ingest.dedup.SeenRounds`), writes the new rows as parts, their index and the
quarantine, and the manifest entry last (:meth:`SourceWriter.commit`): a crash leaves nothing visible
and the next run redoes that source from scratch.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import QUARANTINE, schema_for
from ..store import INDEX, ROW_GROUP, SourceRecord, Store
from ..store.layout import partition_of
from .blocks import Parsed
from .dedup import ALREADY, DIFFERENT, NEW, SeenRounds, StoredOverlap, duplicate_reason
from .hashing import content_columns, id_hashes, row_hashes
from .identity import is_csv
from .jsonl import RAW_KEPT
from .readers import read_source

__all__ = ["Block", "hash_block", "SourceWriter", "open_known", "write_parts", "quarantine_entry", "cut",
           "PART_ROWS", "RAW_LIMIT", "REASON_LIMIT", "read_into", "read_again"]

log = logging.getLogger("auditkit.ingest")
PART_ROWS = 2 * ROW_GROUP  # rounds per part file of one (game, day, source) at most
BUFFERED_ROWS = PART_ROWS  # rows waiting for their parts, at most (then the largest is written)
RAW_LIMIT = RAW_KEPT  # characters of a quarantined line kept in its entry
REASON_LIMIT = 300  # characters of a reason kept (the raw line keeps the rest)


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit:,} more characters]"


def quarantine_entry(file: str, line: int, raw: bytes | str, reason: str, round_id: str | None,
                     sha: str | None) -> dict[str, Any]:
    """One row of the store's quarantine: the reason and the raw line cut to their limits."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return {"source_file": file, "line": line, "round_id": round_id, "reason": cut(reason, REASON_LIMIT),
            "raw": cut(text, RAW_LIMIT), "sha256": sha}


def _quarantine_table(bad: list[tuple[str, int, Any, str, str | None]], sha: str) -> pa.Table:
    return pa.Table.from_pylist([quarantine_entry(*entry, sha) for entry in bad], schema=QUARANTINE)


def by_day(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """The rows of ``table`` per value of its ``date`` column (never null), in their order, the days in the
    order first met, as a filter a day gives them (the tests keep that as the reference): one dictionary
    encoding, then slices of the table when each day's rows are one run (a log in time order), else one take."""
    coded = pc.dictionary_encode(table["date"]).combine_chunks()
    days, codes = coded.dictionary.to_pylist(), coded.indices.to_numpy()  # raises on a null date (a bug)
    if len(days) > 1 and np.count_nonzero(codes[1:] != codes[:-1]) + 1 != len(days):  # not one run a day
        order = np.argsort(codes, kind="stable")
        table, codes = table.take(pa.array(order)), codes[order]
    bounds = np.searchsorted(codes, np.arange(len(days) + 1)).tolist()  # the codes are in order now
    return [(day, table.slice(bounds[k], bounds[k + 1] - bounds[k])) for k, day in enumerate(days)]


class _Parts:
    """Stored rows of one source, per (game, day), gathered into parts of up to :data:`PART_ROWS`
    rows (row groups of :data:`ROW_GROUP`); at most :data:`BUFFERED_ROWS` rows wait in memory.
    ``source_file`` names the rows' file (a live source's blocks name their own)."""

    def __init__(self, store: Store, sha: str, source_file: str):
        self.store, self.sha, self.source_file = store, sha, source_file
        self.pending: dict[tuple[str, str], list[pa.Table]] = {}
        self.rows: dict[tuple[str, str], int] = {}
        self.partitions: set[str] = set()
        self.games: dict[str, int] = {}

    def add(self, game: str, table: pa.Table, file: str | None = None) -> None:
        """Rows of one game (staged schema: local ``date``, no ``source_file``) read from ``file``
        (None: the source's)."""
        file = file or self.source_file
        self.games[game] = self.games.get(game, 0) + table.num_rows
        for day, rows in by_day(table):
            rows = rows.drop_columns(["date"]).append_column("source_file", pa.repeat(file, rows.num_rows))
            key = (game, day)
            self.pending.setdefault(key, []).append(rows)
            self.rows[key] = self.rows.get(key, 0) + rows.num_rows
            if self.rows[key] >= PART_ROWS:
                self._flush(key)
        while sum(self.rows.values()) > BUFFERED_ROWS:  # a file of many days: write the fullest first
            self._flush(max(self.rows, key=self.rows.__getitem__))

    def _flush(self, key: tuple[str, str]) -> None:
        tables = self.pending.pop(key)
        self.rows.pop(key)
        table = pa.concat_tables(tables)
        self.store.write_rounds(key[0], key[1], table.select(schema_for(key[0]).names), self.sha)
        self.partitions.add(f"{key[0]}/{key[1]}")

    def close(self) -> None:
        for key in list(self.pending):
            self._flush(key)

    def adopt(self, game: str, day: str, rows: int) -> None:
        """Count a part written elsewhere (by a worker) into the source's games and partitions."""
        self.games[game] = self.games.get(game, 0) + rows
        self.partitions.add(f"{game}/{day}")


def write_parts(store: Store, sha: str, name: str, blocks: list[Block]) -> list[dict[str, Any]]:
    """Write the rows of a source's blocks as its parts, where they were parsed (a worker of a parallel
    ingest), and drop them from the blocks: the entries of the files written, for the writer that
    commits the source (:meth:`SourceWriter.adopt`)."""
    store = copy.copy(store)  # its own record of the files written (a worker may run tasks side by side)
    parts = _Parts(store, sha, name)
    for block in blocks:
        for game, table in block.tables.items():
            parts.add(game, table)
        block.tables = {}
    parts.close()
    return store.written(sha)


@dataclass
class Block:
    """A parsed block of a source, its rows hashed: what a worker of a parallel ingest sends back
    (picklable: Arrow tables and numpy arrays). ``tables`` are the rows per game in line order,
    ``ids``, ``lines``, ``line_hash`` and ``id_hash`` every stored-to-be row of all games, in line
    order; ``bad`` the lines quarantined by the readers (line, raw, reason, round id), ``other``
    those of a CSV's companion files (file, line, raw, reason). ``file`` is the file the block's rows
    and bad lines were read from when it is not the source's (a live source spans files);
    ``already`` the lines its reader found already stored (the live watcher's recent rounds).
    ``order``, for a block read without content hashes (``line_hash`` all 0): the position of each row
    in its tables laid end to end, for :meth:`content_hashes`."""

    tables: dict[str, pa.Table]
    ids: pa.Array
    lines: np.ndarray
    line_hash: np.ndarray
    id_hash: np.ndarray
    bad: list[tuple[int, bytes | str, str, str | None]]
    other: list[tuple[str, int, Any, str]]
    blank: int
    renamed: list[tuple[str, str]]
    lines_read: int
    attached: int
    done: int
    file: str | None = None
    already: int = 0
    order: np.ndarray | None = None

    @classmethod
    def of(cls, tables: dict[str, pa.Table], line_hashes: list[np.ndarray] | None, bad: list | None = None,
           other: list | None = None, blank: int = 0, renamed: list | None = None, lines_read: int = 0,
           attached: int = 0, done: int = 0, file: str | None = None, already: int = 0) -> Block:
        """The block of rows per game (``tables``, none empty) with the content hash of each row (one
        array per table; None: not hashed, :meth:`content_hashes` computes them), its ids hashed and
        every row put in line order."""
        order = None
        if tables:
            ids = pa.concat_arrays([t["round_id"].combine_chunks() for t in tables.values()])
            lines = np.concatenate([t["source_line"].to_numpy() for t in tables.values()])
            order = np.argsort(lines, kind="stable")
            ids, lines = ids.take(pa.array(order)), lines[order]
            line_hash = np.concatenate(line_hashes)[order] if line_hashes is not None else np.zeros(len(order), np.uint64)
            id_hash = id_hashes(ids)
        else:
            ids, lines = pa.array([], pa.string()), np.zeros(0, np.int64)
            line_hash = id_hash = np.zeros(0, np.uint64)
        return cls(tables, ids, lines, line_hash, id_hash, list(bad or ()), list(other or ()), blank,
                   list(renamed or ()), lines_read, attached, done, file, already,
                   order if line_hashes is None else None)

    def content_hashes(self, rows: np.ndarray) -> np.ndarray:
        """The content hashes of the rows at these positions (line order) of a block read without them."""
        if self.order is None:
            return self.line_hash[rows]
        at = self.order[rows]
        out = np.zeros(len(rows), np.uint64)
        start = 0
        for table in self.tables.values():
            inside = (at >= start) & (at < start + table.num_rows)
            if inside.any():
                picked = table.take(pa.array(at[inside] - start))
                out[inside] = row_hashes(picked, content_columns(table.column_names))
            start += table.num_rows
        return out

    def shifted(self, n: int) -> Block:
        """The block with its line numbers ``n`` later (a worker numbers the lines of its byte range
        from 1; the lines before the range are known only once the ranges before it are read)."""
        if not n:
            return self
        tables = {}
        for game, t in self.tables.items():
            at = t.schema.get_field_index("source_line")
            tables[game] = t.set_column(at, t.schema.field(at), pc.add(t["source_line"], n))
        return Block(tables, self.ids, self.lines + n, self.line_hash, self.id_hash,
                     [(line + n, raw, reason, rid) for line, raw, reason, rid in self.bad], self.other, self.blank,
                     self.renamed, self.lines_read, self.attached, self.done, self.file, self.already, self.order)


def hash_block(parsed: Parsed, lines_read: int, attached: int, other: list, done: int,
               content: bool = True) -> Block:
    """The rows of a parsed block hashed (row hash and round-id hash), in line order: all that the
    duplicate check needs, computed where the block was parsed; ``content=False``: the round ids only
    (the row hashes computed on demand, :meth:`Block.content_hashes`)."""
    tables = {g: t for g, t in parsed.tables.items() if t.num_rows}
    hashes = [row_hashes(t, content_columns(t.column_names)) for t in tables.values()] if content else None
    return Block.of(tables, hashes, parsed.bad, other, parsed.blank, parsed.renamed[:1], lines_read, attached, done)


class SourceWriter:
    """The commit of one source, block by block, in line order: the duplicate check against the
    store and the run (:class:`SeenRounds`), then its parts, index and quarantine; its manifest
    entry last (:meth:`commit`). The serial and the parallel ingest, import profiles and the live
    watcher all write through it (a live source's blocks each name the file they were read from)."""

    def __init__(self, store: Store, seen: SeenRounds, sha: str, name: str, rec: SourceRecord):
        self.store, self.seen, self.sha, self.name, self.rec = store, seen, sha, name, rec
        self.parts = _Parts(store, sha, name)
        self.index = store.index_stream(sha)
        try:
            self.quarantine = store.quarantine_stream(sha)
        except BaseException:  # a full disk: the index's temporary file goes too
            self.index.abort()
            raise
        self.renamed: list[tuple[str, str]] = []
        self.not_stored: list[np.ndarray] = []  # lines whose rows a worker wrote but are not to be stored
        self.new_ids: list[np.ndarray] = []  # id hashes of the rows stored, when the store's are streamed
        self.mark = seen.mark()

    def add(self, block: Block, raw: Callable[[int], bytes | str]) -> None:
        """Store a block's new rows; ``raw(line)`` is the text of a line (for a duplicate's quarantine entry)."""
        rec, name = self.rec, block.file or self.name
        rec.lines_read += block.lines_read
        rec.blank += block.blank
        rec.attached += block.attached
        rec.already_stored += block.already
        self.renamed += block.renamed[:1]
        bad = [(name, line, text, reason, rid) for line, text, reason, rid in block.bad]
        if len(block.ids):
            bad += self._store_rows(block, raw)
        bad.sort(key=lambda b: b[1])  # line order, however the file was cut into blocks
        bad += [(file, line, text, reason, None) for file, line, text, reason in block.other]
        if bad:
            self.quarantine.write(_quarantine_table(bad, self.sha))
            rec.quarantined += len(bad)

    def _store_rows(self, block: Block, raw: Callable[[int], bytes | str]) -> list:
        """Check the block's rows for duplicate round ids and write the new ones (rows and index);
        the quarantine entries of the duplicates with other content."""
        rec, name = self.rec, block.file or self.name
        ids, lines, id_hash, line_hash = block.ids, block.lines, block.id_hash, block.line_hash
        if self.seen.streamed and not self.new_ids:
            self.seen.probe(id_hash)  # the first block repeats stored rounds: the rest will too, likely
        content = block.content_hashes if block.order is not None else None
        held = sum(t.nbytes for t in block.tables.values()) if content is not None else 0  # kept for on demand only
        status, first = self.seen.check(ids, id_hash, line_hash, lines, name, content, held)
        rec.already_stored += int((status == ALREADY).sum())
        bad = []
        for k in np.flatnonzero(status == DIFFERENT):
            rid = ids[int(k)].as_py()
            file, line = first[int(k)]
            bad.append((name, int(lines[k]), raw(int(lines[k])), duplicate_reason(rid, file, line), rid))
        new = status == NEW
        every = bool(new.all())  # the usual case: nothing to filter out, the block's arrays written as they are
        if not every:
            if not block.tables:  # rows a worker wrote to its parts: taken out on adoption
                self.not_stored.append(lines[~new])
            ids, lines, id_hash, line_hash = ids.filter(pa.array(new)), lines[new], id_hash[new], line_hash[new]
        if self.seen.streamed:
            self.new_ids.append(id_hash)
        for game, table in block.tables.items():
            self.parts.add(game, table if every else
                           table.filter(pc.is_in(table["source_line"], value_set=pa.array(lines))), name)
        self.index.write(pa.table({"id_hash": id_hash, "line_hash": line_hash, "round_id": ids,
                                   "source_file": pa.repeat(name, len(lines)), "source_line": lines}, schema=INDEX))
        rec.stored += len(lines)
        return bad

    def adopt(self, entries: list[dict[str, Any]]) -> None:
        """Take the parts a worker wrote for the blocks of one byte range, just added (:func:`write_parts`),
        into the source: a part holding rows not to be stored (duplicates found here) is written again
        without them (a file grown since it was ingested, say: its old rounds are already stored), and
        when no row of the range is to be stored its parts are deleted unread."""
        drop = pa.array(np.concatenate(self.not_stored), pa.int64()) if self.not_stored else None
        self.not_stored = []  # the lines of this range only: the next range's parts hold none of them
        none_kept = drop is not None and len(drop) == sum(int(e["rows"]) for e in entries)  # not read, then
        for entry in entries:
            rel, rows = entry["path"], int(entry["rows"])
            game, day = partition_of(rel)  # type: ignore[misc]
            kept = None  # the rows to write again, when some of the part's are not to be stored
            if drop is not None and not none_kept:
                table = self.store.read_part(rel)
                keep = pc.invert(pc.is_in(table["source_line"], value_set=drop))
                kept = None if pc.all(keep).as_py() else table.filter(keep)
            if drop is None or (not none_kept and kept is None):  # every row of it to be stored
                self.store.adopt(self.sha, [entry])
                self.parts.adopt(game, day, rows)
                continue
            self.store.drop_written(self.sha, rel)
            if kept is not None and kept.num_rows:
                self.store.write_rounds(game, day, kept, self.sha)
                self.parts.adopt(game, day, kept.num_rows)
            else:  # every row of it already stored: the game was met, as one process counts it
                self.parts.games.setdefault(game, 0)

    def abort(self) -> None:
        self.index.abort()
        self.quarantine.abort()

    def commit(self) -> SourceRecord:
        """Write the last parts, the index and the quarantine, then the manifest entry; StoredOverlap
        (after discarding them) when the source repeats round ids of a store whose hashes are streamed."""
        if self.new_ids:
            shared = self.seen.in_store(np.sort(np.concatenate(self.new_ids)))  # unique: each the first of its id
            if len(shared[0]):
                self.abort()
                self.store.discard_uncommitted(self.sha)
                self.seen.rollback(self.mark)
                raise StoredOverlap(shared)
        try:
            self.parts.close()  # the last parts: the source's games and partitions are whole after it
        except BaseException:
            self.abort()
            raise
        rec = self.rec
        if self.renamed:
            log.warning("%s: round ids normalised (Unicode NFC, edges trimmed of whitespace and zero-width "
                        "characters), e.g. %r -> %r", self.name, *self.renamed[0])
        rec.games, rec.partitions = dict(self.parts.games), sorted(self.parts.partitions)
        # the store's one commit: the index and quarantine closed (both aborted if one fails), then the entry
        self.store.commit_source(rec, files=[self.index, self.quarantine])
        if not rec.balanced:  # a bug, never an input problem
            raise AssertionError(f"line accounting does not balance for {self.name}: {rec}")
        return rec


def open_known(path: Path, store: Store, seen: SeenRounds, sha: str, size: int, display: str | None = None,
               fmt: str | None = None, quick: str | None = None, discard: bool = True
               ) -> tuple[SourceRecord, SourceWriter | None]:
    """``(the manifest entry of the identical content ingested before, None)``, or ``(a new entry, the
    writer to commit it)`` after discarding what an interrupted ingest of it left; ``discard=False`` when
    that was done already (before workers wrote parts of it)."""
    prior = store.source(sha)
    if prior is not None:
        return prior, None
    if discard:
        store.discard_uncommitted(sha)
    name = display or str(path)
    rec = SourceRecord(sha256=sha, path=name, size=size, format=fmt or ("csv" if is_csv(path) else "jsonl"),
                       quick=quick)
    return rec, SourceWriter(store, seen, sha, name, rec)


def read_again(overlap: StoredOverlap, path: Path, writer: SourceWriter, bulk: bool, max_line: int, profile: Any,
               progress: Callable[[int, int], None] | None) -> SourceRecord:
    """Read ``path``, whose ``writer`` raised ``overlap``, again in this process holding the store's hashes
    it shares, and commit it (its hash, name and format as they were: the file is not identified again)."""
    seen, rec = writer.seen, writer.rec
    with seen.holding(overlap.found):
        again = open_known(path, writer.store, seen, rec.sha256, rec.size, writer.name, rec.format, rec.quick)[1]
        return read_into(again, path, bulk, max_line, profile, progress)  # type: ignore[arg-type]


def read_into(writer: SourceWriter, path: Path, bulk: bool, max_line: int, profile: Any,
              progress: Callable[[int, int], None] | None,
              ready: list[tuple[Block, Callable[[int], bytes | str]]] | None = None) -> SourceRecord:
    """Read a source's blocks through ``writer`` and commit it; ``ready``: its blocks already read and hashed
    (with the raw text of a line by number), from :class:`~auditkit.ingest.smallfiles.SmallFiles`."""
    try:
        if ready is None:
            ready = ((hash_block(parsed, lines, attached, other, done, not writer.seen.on_demand), parsed.raw)
                     for parsed, lines, attached, other, done in read_source(path, writer.name, bulk, max_line, profile))
        for block, raw in ready:
            writer.add(block, raw)
            if progress:
                progress(block.done, writer.rec.stored)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()
