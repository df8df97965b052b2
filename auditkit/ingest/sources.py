"""Ingest source files into a store: every line stored, already stored, quarantined or blank.

A source (a JSONL file, gzip or not, or a main CSV file with its companions) is
identified by the SHA-256 of its content: ingesting the same content twice,
under any name, stores nothing twice. Its parts, round-id index and quarantine
are written first and its manifest entry last, so a crash leaves nothing
visible and the next run redoes that source from scratch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..schema import QUARANTINE, schema_for
from ..store import INDEX, SourceRecord, Store
from .csv import ATTACHED, companions_of, is_companion, is_round_csv, read_csv_rounds
from .jsonl import LineError, read_lines
from .records import BadRecord, parse_record

__all__ = ["IngestReport", "SeenRounds", "discover", "orphan_companions", "ingest_paths", "ingest_source",
           "source_sha256", "is_csv", "InputError"]

log = logging.getLogger("auditkit.ingest")
FLUSH_ROWS = 25_000  # rows buffered as Python objects before a part is written (bounds memory)
RAW_LIMIT = 65_536
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


def _storable(round_id: Any) -> str | None:
    """The round id of a bad record for its quarantine entry: a string UTF-8 can hold (no lone
    surrogate such as JSON ``"\\ud800"``), else None (the raw line keeps it)."""
    if not isinstance(round_id, str):
        return None
    try:
        round_id.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return round_id


def _hash64(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


class _Writer:
    """Buffers parsed rows per (game, date) and writes parts of them."""

    def __init__(self, store: Store, sha: str):
        self.store, self.sha = store, sha
        self.rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.count = 0
        self.partitions: set[str] = set()
        self.games: dict[str, int] = {}

    def add(self, game: str, date: str, row: dict[str, Any]) -> None:
        self.rows.setdefault((game, date), []).append(row)
        self.games[game] = self.games.get(game, 0) + 1
        self.count += 1
        if self.count >= FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        for (game, date), rows in self.rows.items():
            table = pa.Table.from_pylist(rows, schema=schema_for(game))
            self.store.write_rounds(game, date, table, self.sha)
            self.partitions.add(f"{game}/{date}")
        self.rows.clear()
        self.count = 0


class SeenRounds:
    """Round ids already stored (from the store's index) or met earlier in this run."""

    def __init__(self, store: Store):
        idx = store.index(["id_hash"])
        self.stored = np.unique(idx["id_hash"].to_numpy()) if idx.num_rows else np.empty(0, np.uint64)
        self.store = store
        self.run: dict[str, tuple[int, str, int]] = {}  # round_id -> (line_hash, file, line)
        self._stored_rows: dict[str, tuple[int, str, int]] | None = None

    def lookup(self, round_id: str, id_hash: int) -> tuple[int, str, int] | None:
        if round_id in self.run:
            return self.run[round_id]
        pos = np.searchsorted(self.stored, np.uint64(id_hash))
        if pos < len(self.stored) and self.stored[pos] == np.uint64(id_hash):
            if self._stored_rows is None:  # loaded once, on the first possible duplicate
                idx = self.store.index().to_pydict()
                self._stored_rows = {r: (h, f, n) for r, h, f, n in zip(
                    idx["round_id"], idx["line_hash"], idx["source_file"], idx["source_line"], strict=True)}
            return self._stored_rows.get(round_id)
        return None


def _parse_json(text: str) -> tuple[Any, str | None]:
    """The JSON value of a line, or why it cannot be read."""
    try:
        try:
            return json.loads(text), None
        except json.JSONDecodeError as exc:
            return None, f"not valid JSON: {exc.msg} at column {exc.colno}"
        except ValueError:  # an integer of more than 4,300 digits (Python's limit): read as a float
            return json.loads(text, parse_int=_long_int), None
    except RecursionError:
        return None, "not valid JSON: nested too deeply"


def _long_int(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:
        return float(digits)


def _lines_of(path: Path) -> Iterator[tuple[str, int, str | bytes, Any, str | None]]:
    """(file, line, raw, parsed JSON object or None, error) for every line of a source."""
    if is_csv(path):
        yield from read_csv_rounds(path)
        return
    try:
        for n, raw in read_lines(path):
            if not raw.strip():
                yield str(path), n, raw, None, None
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield str(path), n, raw, None, f"line is not UTF-8: {exc}"
                continue
            obj, error = _parse_json(text)
            yield str(path), n, raw, obj, error
    except LineError as exc:
        yield str(path), exc.line, b"", None, exc.reason


def ingest_source(path: Path, store: Store, seen: SeenRounds | None = None, *,
                  display: str | None = None) -> tuple[SourceRecord, bool]:
    """Ingest one source into the store: ``(its manifest entry, True)``, or the entry of the
    identical content ingested before and False."""
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
    writer = _Writer(store, sha)
    quarantine: list[dict[str, Any]] = []
    index: dict[str, list[Any]] = {column: [] for column in INDEX.names}  # columns: lighter than a dict per row

    def bad(file: str, line: int, raw: str | bytes, reason: str, round_id: str | None = None) -> None:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if len(text) > RAW_LIMIT:
            text = text[:RAW_LIMIT] + f"... [{len(text) - RAW_LIMIT} more characters]"
        quarantine.append({"source_file": file, "line": line, "round_id": round_id, "reason": reason,
                           "raw": text, "sha256": sha})
        rec.quarantined += 1

    for file, line, raw, obj, error in _lines_of(path):
        if line > 0:
            rec.lines_read += 1
        display_file = name if file == str(path) else file
        if error is not None:
            bad(display_file, line, raw, error)
            continue
        if obj is None:
            rec.blank += 1  # a blank line, or a CSV header
            continue
        if obj is ATTACHED:
            rec.attached += 1  # a CSV companion row, read into its round
            continue
        round_id = obj.get("round_id") if isinstance(obj, dict) else None
        try:
            game, date, row = parse_record(obj)
        except BadRecord as exc:
            bad(display_file, line, raw, str(exc), _storable(round_id))
            continue
        canon = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
        line_hash, id_hash = _hash64(canon), _hash64(round_id.encode())
        first = seen.lookup(round_id, id_hash)
        if first is not None:
            if first[0] == line_hash:
                rec.already_stored += 1
            else:
                bad(display_file, line, raw, f"duplicate round_id {round_id!r} with different content "
                    f"(first stored from {first[1]} line {first[2]})", round_id)
            continue
        seen.run[round_id] = (line_hash, display_file, line)
        row["source_file"], row["source_line"] = display_file, line
        writer.add(game, date, row)
        for column, value in zip(INDEX.names, (id_hash, line_hash, round_id, display_file, line), strict=True):
            index[column].append(value)
        rec.stored += 1

    writer.flush()
    store.write_index(sha, pa.Table.from_pydict(index, schema=INDEX))
    store.write_quarantine(sha, pa.Table.from_pylist(quarantine, schema=QUARANTINE))
    rec.games, rec.partitions = dict(writer.games), sorted(writer.partitions)
    store.commit_source(rec)
    if not rec.balanced:  # a bug, never an input problem
        raise AssertionError(f"line accounting does not balance for {name}: {rec}")
    return rec, True


def ingest_paths(paths: Iterable[str | Path], store: Store, *, exclude: Iterable[Path] = (),
                 follow_symlinks: bool = False, on_file: Callable[[Path], None] | None = None) -> IngestReport:
    """Ingest every log under ``paths`` whose content the store has not seen; ``on_file`` is
    called after each file (for progress). Symbolic links out of the input folders are followed
    only with ``follow_symlinks``; special files are skipped with a warning."""
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
            rec, new = ingest_source(path, store, seen)
            entry.update(sha256=rec.sha256, size=rec.size)
            if new:
                report.sources.append(rec)
                entry.update(status="ingested", lines_read=rec.lines_read, stored=rec.stored,
                             already_stored=rec.already_stored, quarantined=rec.quarantined,
                             partitions=rec.partitions)
                log.info("ingested %s: %d stored, %d already stored, %d quarantined",
                         path, rec.stored, rec.already_stored, rec.quarantined)
            else:
                report.skipped.append((str(path), f"already ingested (same SHA-256 as {rec.path})"))
                entry.update(status="already ingested", first_ingested_as=rec.path,
                             first_ingested_at=rec.ingested_at)
                log.info("skip %s: already ingested as %s", path, rec.path)
        report.files.append(entry)
        if on_file:
            on_file(path)
    return report
