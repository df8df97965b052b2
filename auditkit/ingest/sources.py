"""Ingest source files into a store: every line stored, already stored, quarantined or blank.

A source (a JSONL file, gzip or not, or a main CSV file with its companions) is
identified by the SHA-256 of its content: ingesting the same content twice,
under any name, stores nothing twice. Its parts, round-id index and quarantine
are written first and its manifest entry last, so a crash leaves nothing
visible and the next run redoes that source from scratch.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..integrity import partition_of
from ..schema import QUARANTINE, schema_for
from ..store import INDEX, ROW_GROUP, SourceRecord, Store
from .blocks import Parsed
from .csv import companions_of, is_companion, is_round_csv
from .dedup import ALREADY, DIFFERENT, NEW, SeenRounds, StoredOverlap, duplicate_reason
from .hashing import content_columns, id_hashes, row_hashes
from .jsonl import MAX_LINE, RAW_KEPT
from .readers import reader_for

__all__ = ["IngestReport", "SeenRounds", "discover", "profile_files", "orphan_companions", "ingest_paths", "ingest_source",
           "source_sha256", "quick_key", "recognise", "identify", "QUICK_BYTES", "is_csv", "InputError", "Block",
           "hash_block", "SourceWriter", "open_known",
           "MAX_LINE", "SUFFIXES", "RAW_LIMIT", "REASON_LIMIT", "cut", "quarantine_entry", "write_parts",
           "read_again"]

log = logging.getLogger("auditkit.ingest")
PART_ROWS = 2 * ROW_GROUP  # rounds per part file of one (game, day, source) at most
BUFFERED_ROWS = PART_ROWS  # rows waiting for their parts, at most (then the largest is written)
RAW_LIMIT = RAW_KEPT  # characters of a quarantined line kept in its entry
REASON_LIMIT = 300  # characters of a reason kept (the raw line keeps the rest)
SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".csv")


class InputError(OSError):
    """A path that cannot be ingested at all (missing, unreadable, not a log)."""

    @classmethod
    def unreadable(cls, path: Path, exc: OSError) -> InputError:
        """The error of a source that could not be read: ``cannot read PATH: why``."""
        return cls(f"cannot read {path}: {exc.strerror or exc}")


@dataclass
class IngestReport:
    """What an ingest run did, source by source."""

    sources: list[SourceRecord] = field(default_factory=list)      # newly ingested
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (path, reason): already ingested, not a log
    files: list[dict[str, Any]] = field(default_factory=list)      # one entry per file met, for run records

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.sources)

    @property
    def partitions(self) -> set[tuple[str, str]]:
        """(game, date) partitions that received rounds."""
        return {tuple(p.split("/", 1)) for s in self.sources for p in s.partitions}  # type: ignore[misc]

    def summary(self) -> str:
        parts = [f"{len(self.sources)} file(s) ingested, {len(self.skipped)} skipped",
                 *(f"  skipped {p}: {why}" for p, why in self.skipped),
                 f"lines read {self.total('lines_read')}: stored {self.total('stored')}, "
                 f"already stored {self.total('already_stored')}, quarantined {self.total('quarantined')}, "
                 f"blank {self.total('blank')}" + (f", attached {self.total('attached')}" if self.total("attached") else "")]
        return "\n".join(parts)


def input_problem(path: Path, root: Path, follow_symlinks: bool = False) -> str | None:
    """Why ``path`` (met under the input folder ``root``) is not read as an input; None when it is.

    Inputs are regular files (or folders): a symbolic link leading out of ``root``
    is not followed unless ``follow_symlinks``; FIFOs, devices, sockets and broken
    links are never opened.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "a broken symbolic link" if path.is_symlink() else "cannot be read"
    if not follow_symlinks and not path.resolve().is_relative_to(root.resolve()):
        return f"a symbolic link out of {root} (to {path.resolve()}); not followed without --follow-symlinks"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return f"{kind}, not a regular file; not read"


def _walk(root: Path, follow_symlinks: bool, skipped: list[tuple[str, str]]) -> list[Path]:
    """Log files under the folder ``root`` (hidden names skipped), sorted; a folder is walked once
    (:func:`auditkit.ingest.walk.walk`: a link loop is reported, never followed round)."""
    from .walk import walk

    found: list[Path] = []
    for f, is_dir in walk(root, follow_symlinks, skipped):
        if is_dir and not (f.is_symlink() and not follow_symlinks):
            continue
        if not is_dir and not (f.name.lower().endswith(SUFFIXES) and not is_companion(f)):
            continue
        why = input_problem(f, root, follow_symlinks)
        if why:
            skipped.append((str(f), why))
        elif not is_dir:
            found.append(f)
    return sorted(found)


def discover(paths: Iterable[str | Path], exclude: Iterable[Path] = (), *, follow_symlinks: bool = False,
             skipped: list[tuple[str, str]] | None = None) -> list[Path]:
    """Log files named by ``paths`` (files, or folders searched recursively), sorted; companions excluded,
    and anything under an ``exclude`` folder (a job's own output and store).

    Only regular files are inputs (see :func:`input_problem`); what is passed
    over is appended to ``skipped`` as (path, reason). A path named explicitly
    may be a symbolic link.
    """
    found: list[Path] = []
    passed: list[tuple[str, str]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(_walk(p, follow_symlinks, passed))
        elif p.exists():
            why = input_problem(p, p.resolve().parent, True)
            if why:
                passed.append((str(p), why))
            elif not is_companion(p):
                found.append(p)
        else:
            raise InputError(f"no such file or folder: {p}")
    if skipped is not None:
        skipped.extend(passed)
    skip = tuple(Path(x).resolve() for x in exclude)
    return [p for p in dict.fromkeys(found) if not any(p.resolve().is_relative_to(x) for x in skip)]


def orphan_companions(paths: Iterable[str | Path]) -> list[Path]:
    """CSV companion files (``X.hands.csv``...) under ``paths`` whose main file ``X.csv`` is missing."""
    out = []
    for raw in paths:
        p = Path(raw)
        files = sorted(p.rglob("*.csv")) if p.is_dir() else [p]
        for f in files:
            if f.is_file() and is_companion(f) and not f.with_name(f.name.rsplit(".", 2)[0] + ".csv").exists():
                out.append(f)
    return out


def _source_files(path: Path) -> Iterator[tuple[Path, bytes]]:
    """The files of a source (a CSV main file, then its companions) and the tag each adds to its hashes."""
    yield path, b""
    if is_csv(path):
        for f in companions_of(path).values():
            yield f, b"\0" + f.name.split(".")[-2].encode() + b"\0"


@contextlib.contextmanager
def _open_regular(f: Path) -> Iterator[Any]:
    """``f`` opened for reading, InputError when it is not a regular file (a FIFO swapped in since
    :func:`discover` must not block the run)."""
    fd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{f} is not a regular file")
        yield fh


def source_sha256(path: Path) -> str:
    """SHA-256 of a source's content (a CSV main file together with its companions)."""
    h = hashlib.sha256()
    for f, tag in _source_files(path):
        h.update(tag)
        with _open_regular(f) as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


QUICK_BYTES = 1 << 20
"""Bytes read at each end of a file for its quick key."""


def quick_key(path: Path) -> str:
    """A cheap identity of a source, read before its full hash: the size and modification time of each
    of its files and the SHA-256 of each one's first and last :data:`QUICK_BYTES`.

    A source whose quick key a manifest entry holds is taken to be that entry's content, as rsync
    takes a file of the same size and time to be unchanged: a nightly run over a folder of files
    already ingested reads 2 MiB of each, not every byte. A file edited in its middle with its size
    and time put back would pass for the old one; ``auditkit verify`` reads every byte."""
    h = hashlib.sha256(b"quick-1")
    for f, tag in _source_files(path):
        with _open_regular(f) as fh:
            st = os.fstat(fh.fileno())
            h.update(tag + f"{st.st_size}:{st.st_mtime_ns}:".encode())
            h.update(fh.read(QUICK_BYTES))
            if st.st_size > 2 * QUICK_BYTES:
                fh.seek(st.st_size - QUICK_BYTES)
            h.update(fh.read(QUICK_BYTES))
    return h.hexdigest()


def recognise(path: Path, store: Store) -> tuple[SourceRecord | None, str, int]:
    """``(the manifest entry holding the source's quick key or None, its quick key, its size)``;
    InputError when it cannot be read."""
    try:
        quick = quick_key(path)
        return store.source_by_quick_key(quick), quick, path.stat().st_size
    except OSError as exc:
        raise InputError.unreadable(path, exc) from exc


def identify(path: Path, store: Store) -> tuple[str, int, str]:
    """``(SHA-256, size, quick key)`` of a source: the SHA-256 of the entry whose quick key it has, when
    the manifest holds one (the file is not read further), else of every byte."""
    known, quick, size = recognise(path, store)
    if known is not None:
        return known.sha256, size, quick
    try:
        return source_sha256(path), size, quick
    except OSError as exc:
        raise InputError.unreadable(path, exc) from exc


def is_csv(path: Path) -> bool:
    return path.name.lower().endswith(".csv")


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit:,} more characters]"


class _Parts:
    """Stored rows of one source, per (game, day), gathered into parts of up to :data:`PART_ROWS`
    rows (row groups of :data:`ROW_GROUP`); at most :data:`BUFFERED_ROWS` rows wait in memory."""

    def __init__(self, store: Store, sha: str, source_file: str):
        self.store, self.sha, self.source_file = store, sha, source_file
        self.pending: dict[tuple[str, str], list[pa.Table]] = {}
        self.rows: dict[tuple[str, str], int] = {}
        self.partitions: set[str] = set()
        self.games: dict[str, int] = {}

    def add(self, game: str, table: pa.Table) -> None:
        """Rows of one game (staged schema: local ``date``, no ``source_file``)."""
        self.games[game] = self.games.get(game, 0) + table.num_rows
        dates = table["date"]
        days = pc.unique(dates).to_pylist()
        for day in days:
            rows = table if len(days) == 1 else table.filter(pc.equal(dates, day))
            rows = rows.drop_columns(["date"]).append_column(
                "source_file", pa.array(np.full(rows.num_rows, self.source_file, object), pa.string()))
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


def _blocks(path: Path, name: str, bulk: bool, max_line: int, profile: Any = None
            ) -> Iterator[tuple[Parsed, int, int, list, int]]:
    """(parsed block, lines read, attached rows, bad lines of other files, bytes read) of a source,
    from its reader (:mod:`auditkit.ingest.readers`)."""
    return reader_for(path, profile)(path, name, bulk, max_line)


@dataclass
class Block:
    """A parsed block of a source, its rows hashed: what a worker of a parallel ingest sends back
    (picklable: Arrow tables and numpy arrays). ``tables`` are the rows per game in line order,
    ``ids``, ``lines``, ``line_hash`` and ``id_hash`` every stored-to-be row of all games, in line
    order; ``bad`` the lines quarantined by the readers (line, raw, reason, round id), ``other``
    those of a CSV's companion files (file, line, raw, reason)."""

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
                     self.renamed, self.lines_read, self.attached, self.done)


def hash_block(parsed: Parsed, lines_read: int, attached: int, other: list, done: int) -> Block:
    """The rows of a parsed block hashed (row hash and round-id hash), in line order: all that the
    duplicate check needs, computed where the block was parsed."""
    tables = {g: t for g, t in parsed.tables.items() if t.num_rows}
    if tables:
        hashes = [row_hashes(t, content_columns(t.column_names)) for t in tables.values()]
        ids = pa.concat_arrays([t["round_id"].combine_chunks() for t in tables.values()])
        lines = np.concatenate([t["source_line"].to_numpy() for t in tables.values()])
        order = np.argsort(lines, kind="stable")
        ids, lines, line_hash = ids.take(pa.array(order)), lines[order], np.concatenate(hashes)[order]
        id_hash = id_hashes(ids)
    else:
        ids, lines = pa.array([], pa.string()), np.zeros(0, np.int64)
        line_hash = id_hash = np.zeros(0, np.uint64)
    return Block(tables, ids, lines, line_hash, id_hash, list(parsed.bad), list(other), parsed.blank,
                 parsed.renamed[:1], lines_read, attached, done)


class SourceWriter:
    """The commit of one source, block by block, in line order: the duplicate check against the
    store and the run (:class:`SeenRounds`), then its parts, index and quarantine; its manifest
    entry last (:meth:`commit`). The serial and the parallel ingest both write through it."""

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
        rec, name = self.rec, self.name
        rec.lines_read += block.lines_read
        rec.blank += block.blank
        rec.attached += block.attached
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
        rec, name = self.rec, self.name
        ids, lines, id_hash, line_hash = block.ids, block.lines, block.id_hash, block.line_hash
        if self.seen.streamed and not self.new_ids:
            self.seen.probe(id_hash)  # the first block repeats stored rounds: the rest will too, likely
        status, first = self.seen.check(ids, id_hash, line_hash, lines, name)
        rec.already_stored += int((status == ALREADY).sum())
        bad = []
        for k in np.flatnonzero(status == DIFFERENT):
            rid = ids[int(k)].as_py()
            file, line = first[int(k)]
            bad.append((name, int(lines[k]), raw(int(lines[k])), duplicate_reason(rid, file, line), rid))
        new = status == NEW
        if self.seen.streamed:
            self.new_ids.append(id_hash[new])
        keep_lines = lines[new]
        every = bool(new.all())  # the usual case: nothing to filter out
        if not every and not block.tables:  # rows a worker wrote to its parts: taken out on adoption
            self.not_stored.append(lines[~new])
        for game, table in block.tables.items():
            self.parts.add(game, table if every else
                           table.filter(pc.is_in(table["source_line"], value_set=pa.array(keep_lines))))
        self.index.write(pa.table({"id_hash": id_hash[new], "line_hash": line_hash[new],
                                   "round_id": ids.filter(pa.array(new)),
                                   "source_file": pa.array(np.full(int(new.sum()), name, object), pa.string()),
                                   "source_line": keep_lines}, schema=INDEX))
        rec.stored += int(new.sum())
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
            self.parts.close()
            self.index.close()
            self.quarantine.close()
        except BaseException:
            self.abort()
            raise
        rec = self.rec
        if self.renamed:
            log.warning("%s: round ids normalised (Unicode NFC, edges trimmed of whitespace and zero-width "
                        "characters), e.g. %r -> %r", self.name, *self.renamed[0])
        rec.games, rec.partitions = dict(self.parts.games), sorted(self.parts.partitions)
        self.store.commit_source(rec)
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


def ingest_source(path: Path, store: Store, seen: SeenRounds | None = None, *, display: str | None = None,
                  bulk: bool = True, max_line: int = MAX_LINE,
                  progress: Callable[[int, int], None] | None = None, profile: Any = None
                  ) -> tuple[SourceRecord, bool]:
    """Ingest one source into the store: ``(its manifest entry, True)``, or the entry of the
    identical content ingested before and False.

    ``bulk=False`` reads every line with the per-line reader (the reference the bulk reader
    is tested against); ``max_line`` is the longest line read (bytes); ``progress(bytes
    read, rounds stored)`` is called after each block; ``profile`` (an import profile,
    :mod:`auditkit.ingest.profiles`) reads the source through it.
    """
    seen = seen or SeenRounds(store, sources=1)
    fmt = None
    if profile is None:
        sha, size, quick = identify(path, store)
    else:
        from .readers.profile import identity

        sha, size, quick = identity(profile, path, store)
        fmt = f"profile:{profile.name}"
    rec, writer = open_known(path, store, seen, sha, size, display, fmt, quick)
    if writer is None:
        return rec, False
    try:
        return _read_into(writer, path, bulk, max_line, profile, progress), True
    except StoredOverlap as overlap:  # the store's hashes streamed: again, checking those it shares
        return read_again(overlap, path, writer, bulk, max_line, profile, progress), True


def read_again(overlap: StoredOverlap, path: Path, writer: SourceWriter, bulk: bool, max_line: int, profile: Any,
               progress: Callable[[int, int], None] | None) -> SourceRecord:
    """Read ``path``, whose ``writer`` raised ``overlap``, again in this process holding the store's hashes
    it shares, and commit it (its hash, name and format as they were: the file is not identified again)."""
    seen, rec = writer.seen, writer.rec
    with seen.holding(overlap.found):
        again = open_known(path, writer.store, seen, rec.sha256, rec.size, writer.name, rec.format, rec.quick)[1]
        return _read_into(again, path, bulk, max_line, profile, progress)  # type: ignore[arg-type]


def _read_into(writer: SourceWriter, path: Path, bulk: bool, max_line: int, profile: Any,
               progress: Callable[[int, int], None] | None) -> SourceRecord:
    """Read a source's blocks through ``writer`` and commit it."""
    try:
        for parsed, lines, attached, other, done in _blocks(path, writer.name, bulk, max_line, profile):
            writer.add(hash_block(parsed, lines, attached, other, done), parsed.raw)
            if progress:
                progress(done, writer.rec.stored)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()


def quarantine_entry(file: str, line: int, raw: bytes | str, reason: str, round_id: str | None,
                     sha: str | None) -> dict[str, Any]:
    """One row of the store's quarantine: the reason and the raw line cut to their limits."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return {"source_file": file, "line": line, "round_id": round_id, "reason": cut(reason, REASON_LIMIT),
            "raw": cut(text, RAW_LIMIT), "sha256": sha}


def _quarantine_table(bad: list[tuple[str, int, Any, str, str | None]], sha: str) -> pa.Table:
    return pa.Table.from_pylist([quarantine_entry(*entry, sha) for entry in bad], schema=QUARANTINE)


class _FileProgress:
    """A bar of the current file's bytes and its rounds per second, on a terminal only."""

    def __init__(self, path: Path, enabled: bool):
        from ..progress import progress_bar

        self.start, self.rounds = time.perf_counter(), 0
        # a database read through a profile is a name, not a file: a bar of rounds, without a size
        size = path.stat().st_size if enabled and path.is_file() else None
        self.bar = progress_bar(size, path.name, "B", enabled) if enabled else None

    def __call__(self, done: int, rounds: int) -> None:
        self.rounds = rounds
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            self.bar.set_postfix_str(f"{rounds / max(time.perf_counter() - self.start, 1e-9):,.0f} rounds/s")

    def close(self) -> float:
        """Rounds stored per second."""
        if self.bar is not None:
            self.bar.close()
        return self.rounds / max(time.perf_counter() - self.start, 1e-9)


def ingest_paths(paths: Iterable[str | Path], store: Store, *, exclude: Iterable[Path] = (),
                 follow_symlinks: bool = False, on_file: Callable[[Path], None] | None = None,
                 progress: bool = False, bulk: bool = True, max_line: int = MAX_LINE,
                 workers: int | None = 1, scheduler: Any = None, profile: Any = None,
                 dedup_memory: float | None = None) -> IngestReport:
    """Ingest every log under ``paths`` whose content the store has not seen; ``on_file`` is
    called after each file. Symbolic links out of the input folders are followed only with
    ``follow_symlinks``; special files are skipped with a warning. ``progress`` shows a bar of
    the current file's bytes and rounds per second on a terminal (never elsewhere); ``bulk``
    and ``max_line`` as in :func:`ingest_source`.

    ``workers`` > 1 parses the files (and byte ranges of a big plain file) in that many
    processes, ``None`` the machine's cores (one process for a small input); ``scheduler`` (a
    ``dask.distributed`` address or ``Client``) on a Dask cluster whose workers see the files
    at the same paths. The sources are still committed one by one, in order, by this process:
    the store, its index and quarantine and the report are the same whatever parses them
    (:mod:`auditkit.ingest.parallel`).

    ``profile`` (an import profile) reads every file named, and every file of a folder, through
    it, in this process. ``dedup_memory``: MiB for holding the store's round-id hashes (None: the
    default, :data:`auditkit.ingest.dedup.LOAD_LIMIT` rounds), past which they are streamed."""
    paths = list(paths)
    report = IngestReport()
    if profile is not None:
        skip = tuple(Path(x).resolve() for x in exclude)
        files = [f for f in profile_files(paths, profile) if not any(f.resolve().is_relative_to(x) for x in skip)]
        _ingest_files(files, store, report, None, on_file, progress, bulk, max_line, profile, dedup_memory)
        return report
    for orphan in orphan_companions(paths):  # nothing to attach its rows to: say so, read nothing
        why = "CSV companion file without its main file (X.csv); not read"
        report.skipped.append((str(orphan), why))
        report.files.append({"path": str(orphan), "status": f"skipped: {why}"})
        log.warning("skip %s: %s", orphan, why)
    passed: list[tuple[str, str]] = []
    files = discover(paths, exclude, follow_symlinks=follow_symlinks, skipped=passed)
    for path, why in passed:
        report.skipped.append((path, why))
        report.files.append({"path": path, "status": f"skipped: {why}"})
        log.warning("skip %s: %s", path, why)
    rounds = [p for p in files if not (is_csv(p) and not is_round_csv(p))]
    workers = 1 if scheduler is not None else _workers(rounds, workers)
    if scheduler is None and workers <= 1:
        _ingest_files(files, store, report, None, on_file, progress, bulk, max_line, dedup_memory=dedup_memory)
        return report
    from .parallel import ParallelIngest

    with ParallelIngest(rounds, store, workers=workers, scheduler=scheduler, bulk=bulk, max_line=max_line) as par:
        _ingest_files(files, store, report, par, on_file, progress, bulk, max_line, dedup_memory=dedup_memory)
    return report


def profile_files(paths: list[str | Path], profile: Any) -> list[Path]:
    """The files read through a profile: those named, and those of the folders (hidden names skipped)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and not any(
                part.startswith(".") for part in f.relative_to(p).parts))
        elif p.is_file() or getattr(profile.source, "format", None) == "postgresql":  # a database: a name
            out.append(p)
        else:
            raise InputError(f"no such file or folder: {p}")
    return out


def _workers(paths: list[Path], workers: int | None) -> int:
    from .parallel import default_ingest_workers

    return default_ingest_workers(paths, workers)


def _ingest_files(files: list[Path], store: Store, report: IngestReport, par: Any,
                  on_file: Callable[[Path], None] | None, progress: bool, bulk: bool, max_line: int,
                  profile: Any = None, dedup_memory: float | None = None) -> None:
    """Ingest ``files`` in order, one entry each in ``report``; ``par``: a :class:`ParallelIngest`
    parsing them ahead, or None (this process reads each)."""
    seen: SeenRounds | None = None
    for path in files:
        entry: dict[str, Any] = {"path": str(path)}
        if profile is None and is_csv(path) and not is_round_csv(path):
            why = "not a round log (CSV header lacks round_id, game, table_id, started_at)"
            report.skipped.append((str(path), why))
            entry["status"] = f"skipped: {why}"
            log.warning("skip %s: %s", path, why)
        else:
            seen = seen or SeenRounds(store, sources=len(files), memory=dedup_memory)
            bar = _FileProgress(path, progress)
            try:
                rec, new = par.ingest(path, seen, bar) if par is not None else \
                    ingest_source(path, store, seen, bulk=bulk, max_line=max_line, progress=bar, profile=profile)
            finally:
                speed = bar.close()
            entry.update(sha256=rec.sha256, size=rec.size)
            if new:
                report.sources.append(rec)
                entry.update(status="ingested", lines_read=rec.lines_read, stored=rec.stored,
                             already_stored=rec.already_stored, quarantined=rec.quarantined,
                             partitions=rec.partitions)
                log.info("ingested %s: %d stored, %d already stored, %d quarantined (%.0f rounds a second)",
                         path, rec.stored, rec.already_stored, rec.quarantined, speed)
            else:
                report.skipped.append((str(path), f"already ingested (same SHA-256 as {rec.path})"))
                entry.update(status="already ingested", first_ingested_as=rec.path,
                             first_ingested_at=rec.ingested_at)
                log.info("skip %s: already ingested as %s", path, rec.path)
        report.files.append(entry)
        if on_file:
            on_file(path)
