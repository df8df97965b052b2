"""Ingest: which files are inputs, and each read through its reader into the one writer, in order.

A source's identity (:mod:`auditkit.ingest.identity`), its commit (:mod:`auditkit.ingest.writer`:
parts, round-id index and quarantine first, the manifest entry last) and its readers
(:mod:`auditkit.ingest.readers`) live in lower modules; this one walks the inputs, orchestrates the
serial ingest and hands a parallel one to :mod:`auditkit.ingest.parallel`.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store import SourceRecord, Store
from .csv import is_companion, is_round_csv
from .dedup import SeenRounds, StoredOverlap
from .identity import InputError, identify, is_csv
from .jsonl import MAX_LINE
from .smallfiles import SmallFiles
from .writer import (
    open_known,
    read_again,
    read_into,
)

__all__ = ["IngestReport", "discover", "profile_files", "orphan_companions", "ingest_paths", "ingest_source", "SUFFIXES"]

log = logging.getLogger("auditkit.ingest")
SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".csv")


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


def ingest_source(path: Path, store: Store, seen: SeenRounds | None = None, *, display: str | None = None,
                  bulk: bool = True, max_line: int = MAX_LINE,
                  progress: Callable[[int, int], None] | None = None, profile: Any = None,
                  ahead: SmallFiles | None = None) -> tuple[SourceRecord, bool]:
    """Ingest one source into the store: ``(its manifest entry, True)``, or the entry of the
    identical content ingested before and False.

    ``bulk=False`` reads every line with the per-line reader (the reference the bulk reader
    is tested against); ``max_line`` is the longest line read (bytes); ``progress(bytes
    read, rounds stored)`` is called after each block; ``profile`` (an import profile,
    :mod:`auditkit.ingest.profiles`) reads the source through it; ``ahead``: the small files of a serial
    ingest read ahead in batches (:mod:`auditkit.ingest.smallfiles`), which may hold this source's block.
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
        ready = ahead.blocks(path, sha) if ahead is not None and profile is None and bulk else None
        return read_into(writer, path, bulk, max_line, profile, progress, ready), True
    except StoredOverlap as overlap:  # the store's hashes streamed: again, checking those it shares
        return read_again(overlap, path, writer, bulk, max_line, profile, progress), True


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
                 dedup_memory: float | None = None, private: bool = False) -> IngestReport:
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
    default, :data:`auditkit.ingest.dedup.LOAD_LIMIT` rounds), past which they are streamed.

    ``private``: the store is this run's own, empty and thrown away after it (the one-shot ``validate
    LOG``): read in this process, a row's content is hashed only when its round id collides
    (:class:`auditkit.ingest.dedup.SeenRounds` ``on_demand``), with the same statuses and quarantine."""
    paths = list(paths)
    report = IngestReport()
    if profile is not None:
        skip = tuple(Path(x).resolve() for x in exclude)
        files = [f for f in profile_files(paths, profile) if not any(f.resolve().is_relative_to(x) for x in skip)]
        _ingest_files(files, store, report, None, on_file, progress, bulk, max_line, profile, dedup_memory, private)
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
        _ingest_files(files, store, report, None, on_file, progress, bulk, max_line, dedup_memory=dedup_memory,
                      on_demand=private)
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
                  profile: Any = None, dedup_memory: float | None = None, on_demand: bool = False) -> None:
    """Ingest ``files`` in order, one entry each in ``report``; ``par``: a :class:`ParallelIngest`
    parsing them ahead, or None (this process reads each; ``on_demand`` as in :class:`SeenRounds`)."""
    seen: SeenRounds | None = None
    # small files read ahead in batches: a serial ingest of logs with content hashes (not a one-shot's own store)
    ahead = SmallFiles(files, store, max_line) if par is None and profile is None and bulk and not on_demand else None
    for path in files:
        entry: dict[str, Any] = {"path": str(path)}
        if profile is None and is_csv(path) and not is_round_csv(path):
            why = "not a round log (CSV header lacks round_id, game, table_id, started_at)"
            report.skipped.append((str(path), why))
            entry["status"] = f"skipped: {why}"
            log.warning("skip %s: %s", path, why)
        else:
            seen = seen or SeenRounds(store, sources=len(files), memory=dedup_memory, on_demand=on_demand)
            bar = _FileProgress(path, progress)
            try:
                rec, new = par.ingest(path, seen, bar) if par is not None else \
                    ingest_source(path, store, seen, bulk=bulk, max_line=max_line, progress=bar, profile=profile,
                                  ahead=ahead)
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
