"""Ingest source files into a store: every line stored, already stored, quarantined or blank.

A source (a JSONL file, gzip or not, or a main CSV file with its companions) is
identified by the SHA-256 of its content: ingesting the same content twice,
under any name, stores nothing twice. Its parts, round-id index and quarantine
are written first and its manifest entry last, so a crash leaves nothing
visible and the next run redoes that source from scratch.
"""

from __future__ import annotations

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

from ..schema import QUARANTINE, schema_for
from ..store import INDEX, ROW_GROUP, ParquetStream, SourceRecord, Store
from .blocks import Parsed, parse_block, parse_objects
from .csv import ATTACHED, companions_of, is_companion, is_round_csv, read_csv_rounds
from .dedup import ALREADY, DIFFERENT, NEW, SeenRounds
from .hashing import content_columns, id_hashes, row_hashes
from .jsonl import MAX_LINE, RAW_KEPT, read_blocks

__all__ = ["IngestReport", "SeenRounds", "discover", "orphan_companions", "ingest_paths", "ingest_source",
           "source_sha256", "is_csv", "InputError", "MAX_LINE", "SUFFIXES", "RAW_LIMIT", "REASON_LIMIT", "cut"]

log = logging.getLogger("auditkit.ingest")
FLUSH_ROWS = 25_000  # CSV rows read as Python objects before they are checked and written
PART_ROWS = 2 * ROW_GROUP  # rounds per part file of one (game, day, source) at most
BUFFERED_ROWS = PART_ROWS  # rows waiting for their parts, at most (then the largest is written)
RAW_LIMIT = RAW_KEPT  # characters of a quarantined line kept in its entry
REASON_LIMIT = 300  # characters of a reason kept (the raw line keeps the rest)
SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".csv")


class InputError(OSError):
    """A path that cannot be ingested at all (missing, unreadable, not a log)."""


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
    """Log files under the folder ``root`` (hidden names skipped), sorted."""
    found: list[Path] = []
    seen: set[Path] = set()
    for folder, dirs, files in os.walk(root, followlinks=follow_symlinks):
        here = Path(folder)
        real = here.resolve()
        if real in seen:  # a link cycle
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        entries = [(here / d, True) for d in dirs] + [(here / f, False) for f in files if not f.startswith(".")]
        for f, is_dir in entries:
            if is_dir and not (f.is_symlink() and not follow_symlinks):
                continue
            if not is_dir and not (f.name.lower().endswith(SUFFIXES) and not is_companion(f)):
                continue
            why = input_problem(f, root, follow_symlinks)
            if why:
                skipped.append((str(f), why))
            elif not is_dir:
                found.append(f)
        if not follow_symlinks:
            dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
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


def source_sha256(path: Path) -> str:
    """SHA-256 of a source's content (a CSV main file together with its companions)."""
    h = hashlib.sha256()
    files = [path] + (list(companions_of(path).values()) if is_csv(path) else [])
    for f in files:
        if f is not path:
            h.update(b"\0" + f.name.split(".")[-2].encode() + b"\0")
        fd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO swapped in since discover() must not block
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InputError(f"{f} is not a regular file")
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


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


def _blocks(path: Path, name: str, bulk: bool, max_line: int) -> Iterator[tuple[Parsed, int, int, list, int]]:
    """(parsed block, lines read, attached companion rows, bad lines of other files, bytes read) of a source."""
    if not is_csv(path):
        for block in read_blocks(path, max_line=max_line):
            yield parse_block(block, bulk=bulk), len(block), 0, [], block.done
        return
    items: list[tuple[int, Any]] = []
    raws: dict[int, str] = {}
    other: list[tuple[str, int, Any, str]] = []
    lines = attached = blank = 0
    for file, line, raw, obj, error in read_csv_rounds(path):
        lines += line > 0
        if file != str(path):  # a companion line
            if error is not None:
                other.append((file, line, raw, error))
            elif obj is ATTACHED:
                attached += 1
            else:
                blank += 1
        elif error is not None:
            other.append((name, line, raw, error))
        elif obj is None:
            blank += 1
        else:
            items.append((line, obj))
            raws[line] = raw
        if len(items) >= FLUSH_ROWS:
            parsed = parse_objects(items, raws)
            parsed.blank += blank
            yield parsed, lines, attached, other, 0
            items, raws, other, lines, attached, blank = [], {}, [], 0, 0, 0
    parsed = parse_objects(items, raws)
    parsed.blank += blank
    yield parsed, lines, attached, other, path.stat().st_size


def ingest_source(path: Path, store: Store, seen: SeenRounds | None = None, *, display: str | None = None,
                  bulk: bool = True, max_line: int = MAX_LINE,
                  progress: Callable[[int, int], None] | None = None) -> tuple[SourceRecord, bool]:
    """Ingest one source into the store: ``(its manifest entry, True)``, or the entry of the
    identical content ingested before and False.

    ``bulk=False`` reads every line with the per-line reader (the reference the bulk reader
    is tested against); ``max_line`` is the longest line read (bytes); ``progress(bytes
    read, rounds stored)`` is called after each block.
    """
    try:
        sha = source_sha256(path)
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    prior = store.source(sha)
    if prior is not None:
        return prior, False
    store.discard_uncommitted(sha)
    seen = seen or SeenRounds(store)
    name = display or str(path)
    rec = SourceRecord(sha256=sha, path=name, size=size, format="csv" if is_csv(path) else "jsonl")
    parts = _Parts(store, sha, name)
    index = store.index_stream(sha)
    quarantine = store.quarantine_stream(sha)
    renamed: list[tuple[str, str]] = []
    try:
        for parsed, lines, attached, other, done in _blocks(path, name, bulk, max_line):
            rec.lines_read += lines
            rec.blank += parsed.blank
            rec.attached += attached
            renamed += parsed.renamed[:1]
            bad = [(name, line, raw, reason, rid) for line, raw, reason, rid in parsed.bad]
            bad += [(file, line, raw, reason, None) for file, line, raw, reason in other]
            _store_rows(parsed, seen, name, parts, index, bad, rec)
            if bad:
                quarantine.write(_quarantine_table(bad, sha))
                rec.quarantined += len(bad)
            if progress:
                progress(done, rec.stored)
        parts.close()
        index.close()
        quarantine.close()
    except BaseException:
        index.abort()
        quarantine.abort()
        raise
    if renamed:
        log.warning("%s: round ids normalised (Unicode NFC, edges trimmed of whitespace and zero-width "
                    "characters), e.g. %r -> %r", name, *renamed[0])
    rec.games, rec.partitions = dict(parts.games), sorted(parts.partitions)
    store.commit_source(rec)
    if not rec.balanced:  # a bug, never an input problem
        raise AssertionError(f"line accounting does not balance for {name}: {rec}")
    return rec, True


def _quarantine_table(bad: list[tuple[str, int, Any, str, str | None]], sha: str) -> pa.Table:
    rows = []
    for file, line, raw, reason, rid in bad:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        rows.append({"source_file": file, "line": line, "round_id": rid, "reason": cut(reason, REASON_LIMIT),
                     "raw": cut(text, RAW_LIMIT), "sha256": sha})
    return pa.Table.from_pylist(rows, schema=QUARANTINE)


def _store_rows(parsed: Parsed, seen: SeenRounds, name: str, parts: _Parts, index: ParquetStream,
                bad: list, rec: SourceRecord) -> None:
    """Check the block's rows for duplicate round ids and write the new ones (rows and index)."""
    games = [g for g, t in parsed.tables.items() if t.num_rows]
    if not games:
        return
    tables = [parsed.tables[g] for g in games]
    hashes = [row_hashes(t, content_columns(t.column_names)) for t in tables]
    ids = pa.concat_arrays([t["round_id"].combine_chunks() for t in tables])
    lines = np.concatenate([t["source_line"].to_numpy() for t in tables])
    line_hash = np.concatenate(hashes)
    order = np.argsort(lines, kind="stable")
    ids, lines, line_hash = ids.take(pa.array(order)), lines[order], line_hash[order]
    id_hash = id_hashes(ids)
    status, first = seen.check(ids, id_hash, line_hash, lines, name)
    rec.already_stored += int((status == ALREADY).sum())
    for k in np.flatnonzero(status == DIFFERENT):
        rid = ids[int(k)].as_py()
        file, line = first[int(k)]
        bad.append((name, int(lines[k]), parsed.raw(int(lines[k])), f"duplicate round_id {rid!r} with different "
                    f"content (first stored from {file} line {line})", rid))
    new = status == NEW
    keep_lines = lines[new]
    for game, table in zip(games, tables, strict=True):
        mask = pc.is_in(table["source_line"], value_set=pa.array(keep_lines))
        rows = table if bool(new.all()) else table.filter(mask)
        parts.add(game, rows)
    index.write(pa.table({"id_hash": id_hash[new], "line_hash": line_hash[new], "round_id": ids.filter(pa.array(new)),
                          "source_file": pa.array(np.full(int(new.sum()), name, object), pa.string()),
                          "source_line": keep_lines}, schema=INDEX))
    rec.stored += int(new.sum())


class _FileProgress:
    """A bar of the current file's bytes and its rounds per second, on a terminal only."""

    def __init__(self, path: Path, enabled: bool):
        from ..progress import progress_bar

        self.start, self.rounds = time.perf_counter(), 0
        self.bar = progress_bar(path.stat().st_size, path.name, "B", enabled) if enabled else None

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
                 progress: bool = False, bulk: bool = True, max_line: int = MAX_LINE) -> IngestReport:
    """Ingest every log under ``paths`` whose content the store has not seen; ``on_file`` is
    called after each file. Symbolic links out of the input folders are followed only with
    ``follow_symlinks``; special files are skipped with a warning. ``progress`` shows a bar of
    the current file's bytes and rounds per second on a terminal (never elsewhere); ``bulk``
    and ``max_line`` as in :func:`ingest_source`."""
    paths = list(paths)
    report = IngestReport()
    seen: SeenRounds | None = None
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
    for path in files:
        entry: dict[str, Any] = {"path": str(path)}
        if is_csv(path) and not is_round_csv(path):
            why = "not a round log (CSV header lacks round_id, game, table_id, started_at)"
            report.skipped.append((str(path), why))
            entry["status"] = f"skipped: {why}"
            log.warning("skip %s: %s", path, why)
        else:
            seen = seen or SeenRounds(store)
            bar = _FileProgress(path, progress)
            try:
                rec, new = ingest_source(path, store, seen, bulk=bulk, max_line=max_line, progress=bar)
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
    return report
