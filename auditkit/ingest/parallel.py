"""Parallel ingest: sources parsed by worker processes (or Dask workers), committed one by one in order.

The work of a source is cut into tasks: a plain JSONL file into byte ranges cut
at line starts (so one big file uses every worker), a gzip file into the blocks
this process decompresses (a gzip stream cannot be entered in the middle), a
CSV file (with its companions) as a whole. A worker parses, checks and hashes
the lines of its task (:func:`auditkit.ingest.writer.hash_block`); for a byte
range it writes the rows as the source's parts itself
(:func:`auditkit.ingest.writer.write_parts`) and sends back the hashes, the bad
lines and the parts' entries; for the other tasks it sends back Arrow tables.
A new plain file of several ranges is hashed by a worker too, while the others
parse its ranges: one task reads it for its SHA-256 and the first line number
of each range (:func:`hash_and_number`), the first task of the source; when its
result is in, this process (the one that knows the store) discards what an
interrupted run left of that content and tells the range tasks (a small note
file each reads: :func:`write_range`) the hash and numbering to write their
parts with, or to write nothing (content stored already, or met earlier in the
run). A range task parses before it waits for its note, so the workers parse
while the file is hashed. (On a Dask cluster, whose workers may not see this
machine's files, and for a file of one range, this process hashes it before its
ranges go out.) This process takes the results in order,
checks the duplicates (:class:`~auditkit.ingest.dedup.SeenRounds`), adopts the
workers' parts and writes the index, quarantine and manifest entry of each
source as the serial ingest does (:class:`~auditkit.ingest.writer.SourceWriter`):
the store holds the same rows, index and quarantine
whatever the number of workers. At most :data:`IN_FLIGHT` tasks per worker are
out at a time, so memory stays bounded whatever the size of the input.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store import SourceRecord, Store
from .blocks import parse_block
from .dedup import SeenRounds, StoredOverlap
from .identity import InputError, is_csv, recognise, source_sha256
from .jsonl import BLOCK_BYTES, MAX_LINE, Lines, _is_gzip, read_blocks
from .readers import read_source
from .writer import Block, hash_block, open_known, read_again, write_parts

__all__ = ["ParallelIngest", "IN_FLIGHT", "MIN_RANGE", "AUTO_MIN_BYTES", "cut_ranges", "hash_and_number"]

log = logging.getLogger("auditkit.ingest")
IN_FLIGHT = 2
"""Tasks out at a time per worker: one being parsed, one waiting (its result in this process's memory)."""
MIN_RANGE = 1 << 20
"""The smallest byte range of a plain file given to a worker (a range is at most a block, 16 MiB)."""
AUTO_MIN_BYTES = 128 << 20
"""With the default (``workers=None``), inputs smaller than this are read by one process. Measured on
2 cores (baccarat logs, 2026-12-01): two workers took 1.08 times one process's wall time at 64 MiB,
0.95 at 107 MiB, 0.88 at 160 MiB, 0.79 at 267 MiB, for 60 to 27% more CPU (each worker's start, the
tasks' results sent back): below this a second worker is not worth its CPU."""


# ---- the workers' tasks (module functions: they are pickled by name) -------------------------------------
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


# ---- the client's side ------------------------------------------------------------------------------------
@dataclass
class _Task:
    """One task of a source: its future, how to get back the raw text of a line of it, and for a byte
    range (whose worker writes its parts) its place among the source's ranges."""

    future: Any
    raw: Callable[[int], bytes | str] | None  # line number in the source -> the line as written
    range: int | None = None  # a byte range's: its result is (blocks, parts written)


@dataclass
class _Source:
    """A source met by the look-ahead: its hash, or why it cannot be read; its tasks as submitted."""

    path: Path
    sha: str | None = None
    size: int = 0
    quick: str | None = None
    ranges: list[tuple[int, int, int]] = field(default_factory=list)  # a plain file's (start, stop, first line)
    error: InputError | None = None
    tasks: collections.deque = field(default_factory=collections.deque)
    submitted_all: bool = False
    hashing: _Task | None = None  # the task hashing it (a plain file of several ranges), until settled
    note: str | None = None  # the file that tells its range tasks the hash and numbering


class _Executor:
    """``submit(fn, *args)`` on a process pool or a Dask client, and how many workers there are."""

    def __init__(self, workers: int, scheduler: Any):
        self.pool = self.client = None
        self.own_client = False
        if scheduler is not None:
            try:
                from distributed import Client
            except ImportError:  # pragma: no cover - the optional extra
                raise RuntimeError("the Dask engine needs the dask extra: pip install 'auditkit[dask]'") from None
            self.own_client = not isinstance(scheduler, Client)
            self.client = Client(scheduler) if self.own_client else scheduler
            self.workers = max(1, sum(self.client.nthreads().values()))
        else:
            from ..workers import process_pool

            # processes start on demand: a run with nothing new to read starts none; they die with this one
            self.pool = process_pool(workers)
            self.workers = workers

    def submit(self, fn: Callable, *args: Any) -> Any:
        if self.client is not None:
            if any(isinstance(a, Lines) for a in args):  # a block of a gzip file: sent once, not in the graph
                args = tuple(self.client.scatter(a, hash=False) if isinstance(a, Lines) else a for a in args)
            return self.client.submit(fn, *args, pure=False)
        return self.pool.submit(fn, *args)

    def result(self, future: Any) -> Any:
        """The task's result; on a process pool, ``BrokenProcessPool`` as soon as a worker has died
        (:func:`auditkit.workers.result`: one killed while it sent a result would hang the wait)."""
        if self.pool is None:
            return future.result()
        from ..workers import result

        return result(future, self.pool)

    def close(self, abandon: bool = False) -> None:
        """Wait for the tasks running (``abandon``: kill the workers instead, after an error or interrupt)."""
        if self.pool is not None:
            if abandon:
                from ..workers import stop_pool

                stop_pool(self.pool)
            else:
                self.pool.shutdown(wait=True, cancel_futures=True)
        if self.own_client:
            self.client.close()


class ParallelIngest:
    """Sources parsed ahead by workers, committed in the order :meth:`ingest` is called with them
    (which must be the order of ``paths``)."""

    def __init__(self, paths: list[Path], store: Store, *, workers: int = 2, scheduler: Any = None,
                 bulk: bool = True, max_line: int = MAX_LINE):
        self.store, self.bulk, self.max_line = store, bulk, max_line
        self.executor = _Executor(workers, scheduler)
        self.limit = IN_FLIGHT * self.executor.workers
        self.pending = collections.deque(_Source(p) for p in paths)  # not yet looked at
        self.ahead: collections.deque[_Source] = collections.deque()  # looked at, in order
        self.tasks: Iterator[tuple[_Source, Callable, tuple, Callable | None, int | None]] | None = None
        self.in_flight = 0
        self.waited = 0.0  # seconds this process waited for the workers' results (the rest: its own work)
        self.reading: set[str] = set()  # contents whose tasks are out: a second name for one is not read again
        self.notes: str | None = None  # the folder of the notes to range tasks (made on first use)
        self.seq = 0  # sources looked at

    def __enter__(self) -> ParallelIngest:
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            for src in self.ahead:  # sources not reached: their range tasks told to write nothing, not left waiting
                if src.note is not None and not os.path.exists(src.note):
                    with contextlib.suppress(OSError):
                        _write_note(src.note, {"sha": None, "first": []})
            self.executor.close(abandon=exc[0] is not None)
        finally:
            if self.notes is not None:
                shutil.rmtree(self.notes, ignore_errors=True)

    # the look-ahead: sources hashed and their tasks submitted, up to the limit
    def _all_tasks(self) -> Iterator[tuple[_Source, Callable, tuple, Callable | None, int | None]]:
        while self.pending:
            src = self.pending.popleft()
            self.ahead.append(src)
            try:
                self._identify(src)
            except InputError as exc:
                src.error = exc
            if src.error is None and src.sha is None:  # hashed by a worker while the others parse it
                yield from self._hashed_tasks(src)
            elif src.error is None and self.store.source(src.sha) is None and src.sha not in self.reading:
                self.reading.add(src.sha)  # type: ignore[arg-type]
                self.store.discard_uncommitted(src.sha)  # what a killed run left, before workers write its parts
                yield from self._source_tasks(src)
            src.submitted_all = True

    def _identify(self, src: _Source) -> None:
        """The source's SHA-256 (known by its quick key, or read whole), and for a new plain file the byte
        ranges of its tasks with their first line numbers, counted in the same read."""
        known, src.quick, src.size = recognise(src.path, self.store)
        if known is not None:
            src.sha = known.sha256
            return
        try:
            if is_csv(src.path) or _is_gzip(src.path):
                src.sha = source_sha256(src.path)
                return
            step = max(MIN_RANGE, min(BLOCK_BYTES, src.size // (2 * self.executor.workers) + 1))
            ranges = list(cut_ranges(src.path, step))
            if len(ranges) > 1 and self.executor.pool is not None:  # hashed by a worker: sha None until then
                src.ranges = [(start, stop, 0) for start, stop in ranges]
                return
            src.sha, src.ranges = hash_and_number(src.path, ranges)
        except OSError as exc:
            raise InputError.unreadable(src.path, exc) from exc

    def _hashed_tasks(self, src: _Source) -> Iterator[tuple[_Source, Callable, tuple, Callable | None, int | None]]:
        """A plain file's tasks when a worker hashes it: that task first, then its ranges, each told its
        hash and numbering by a note (:meth:`_settle`)."""
        if self.notes is None:
            self.notes = tempfile.mkdtemp(prefix="auditkit-ingest-")
        self.seq += 1
        src.note = os.path.join(self.notes, f"{self.seq}.json")
        where = str(src.path.resolve())
        yield src, hash_and_number, (where, [(start, stop) for start, stop, _ in src.ranges]), None, None
        for k, (start, stop, _) in enumerate(src.ranges):
            lines = _RangeLines(src.path, start, stop, self.max_line)
            yield src, write_range, (where, start, stop, self.bulk, self.max_line, self.store, str(src.path),
                                     None, k, src.note), \
                (lambda n, lines=lines, k=k: lines.raw(n - src.ranges[k][2] + 1)), k

    def _settle(self, src: _Source) -> None:
        """Take the hash of a source hashed by a worker and tell its range tasks, by their note, what to
        write: its hash and numbering when it is new (what an interrupted run left of it discarded
        first), else nothing (stored already, met earlier in this run, or unreadable: ``src.error``)."""
        task, src.hashing = src.hashing, None
        if task is None:
            return
        self.in_flight -= 1
        try:
            t0 = time.perf_counter()
            try:
                src.sha, src.ranges = self.executor.result(task.future)
            finally:
                self.waited += time.perf_counter() - t0
        except OSError as exc:
            src.error = InputError.unreadable(src.path, exc)
        go = src.error is None and self.store.source(src.sha) is None and src.sha not in self.reading
        if go:
            self.reading.add(src.sha)  # type: ignore[arg-type]
            self.store.discard_uncommitted(src.sha)  # type: ignore[arg-type]  # before its parts are written
        _write_note(src.note, {"sha": src.sha if go else None,  # type: ignore[arg-type]
                               "first": [first for _, _, first in src.ranges] if go else []})

    def _settle_ready(self) -> None:
        """Settle, in order, the sources ahead whose hash is in (their range tasks wait for it)."""
        for src in self.ahead:
            if src.hashing is None:
                continue
            if not src.hashing.future.done():
                return
            self._settle(src)

    def _source_tasks(self, src: _Source) -> Iterator[tuple[_Source, Callable, tuple, Callable, int | None]]:
        path, name = src.path, str(src.path)
        where = str(path.resolve())  # a worker's working folder is not this one's
        if is_csv(path):
            lines: list[bytes] = []
            yield src, parse_csv, (where, name, self.bulk, self.max_line), lambda n: _csv_raw(path, lines, n), None
        elif _is_gzip(path):
            for block in read_blocks(path, max_line=self.max_line):  # read here, a block in flight at a time
                yield src, parse_lines, (block, self.bulk), (lambda n, b=block: b.raw(n - b.first)), None
        else:
            for k, (start, stop, first) in enumerate(src.ranges):
                lines = _RangeLines(path, start, stop, self.max_line)
                yield src, write_range, (where, start, stop, self.bulk, self.max_line, self.store, name,
                                         src.sha, first), (lambda n, lines=lines, first=first: lines.raw(n - first + 1)), k

    def _fill(self) -> None:
        if self.tasks is None:
            self.tasks = self._all_tasks()
        while self.in_flight < self.limit:
            item = next(self.tasks, None)
            if item is None:
                return
            src, fn, args, raw, k = item
            task = _Task(self.executor.submit(fn, *args), raw, k)
            if fn is hash_and_number:
                src.hashing = task
            else:
                src.tasks.append(task)
            self.in_flight += 1

    def _next_task(self, src: _Source) -> _Task | None:
        """The next task of ``src`` (submitting more as room frees up), None when it has no more."""
        while not src.tasks and not src.submitted_all:
            before = self.in_flight
            self._fill()
            if self.in_flight == before and not src.tasks and not src.submitted_all:
                raise AssertionError("the look-ahead made no progress")  # pragma: no cover - a bug
        if not src.tasks:
            return None
        self.in_flight -= 1
        return src.tasks.popleft()

    def _source(self, path: Path) -> _Source:
        """The next source in order (looked at by the look-ahead: the sources before it are done, so
        no task of theirs holds room and the look-ahead has reached it)."""
        self._fill()
        if not self.ahead:
            raise ValueError(f"{path} was not given to the parallel ingest, or was already ingested")
        src = self.ahead.popleft()
        if src.path != path:
            raise ValueError(f"sources ingested out of order: {path}, expected {src.path}")
        return src

    def ingest(self, path: Path, seen: SeenRounds,
               progress: Callable[[int, int], None] | None = None) -> tuple[SourceRecord, bool]:
        """:func:`auditkit.ingest.sources.ingest_source` of the next source, parsed by the workers."""
        src = self._source(path)
        self._settle(src)  # hashed by a worker: its hash awaited, its range tasks told
        if src.error is not None:
            self._drop(src)
            raise src.error
        rec, writer = open_known(path, self.store, seen, src.sha, src.size,  # type: ignore[arg-type]
                                 quick=src.quick, discard=False)  # discarded before its tasks were submitted
        if writer is None:  # ingested before, or earlier in this run: its tasks (if any) are dropped
            self._drop(src)
            return rec, False
        try:
            while (task := self._next_task(src)) is not None:
                t0 = time.perf_counter()
                result = self.executor.result(task.future)
                self.waited += time.perf_counter() - t0
                blocks, parts = result if task.range is not None else (result, None)
                first = src.ranges[task.range][2] if task.range is not None else None
                if first is not None and first != rec.lines_read + 1:  # a bug, never an input problem
                    raise AssertionError(f"{path}: a byte range numbered from line {first} follows line "
                                         f"{rec.lines_read}")
                for block in blocks:
                    writer.add(block, task.raw)  # type: ignore[arg-type]
                    if progress:
                        progress(block.done, rec.stored)
                if parts is not None:
                    writer.adopt(parts)
                self._settle_ready()  # the sources ahead hashed meanwhile: their ranges wait for it
        except BaseException:
            writer.abort()
            raise
        try:
            return writer.commit(), True
        except StoredOverlap as overlap:  # rare (a source repeating stored rounds): read again here
            return read_again(overlap, path, writer, self.bulk, self.max_line, None, progress), True

    def _drop(self, src: _Source) -> None:
        """Forget the tasks of a source not to be committed (parsed ahead before its turn), and delete the
        parts their workers wrote."""
        while (task := self._next_task(src)) is not None:
            if not task.future.cancel() and task.range is not None:
                with contextlib.suppress(Exception):  # a task that failed wrote nothing to keep either
                    for entry in self.executor.result(task.future)[1]:
                        self.store.drop_written(src.sha, entry["path"])  # type: ignore[arg-type]


class _RangeLines:
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


def _csv_raw(path: Path, lines: list[bytes], n: int) -> str:
    """Line ``n`` of a CSV main file as the serial reader keeps it (its lines read again, once, when needed)."""
    from .csv import csv_line, read_text

    if not lines:
        lines.extend(read_text(path).splitlines())
    return csv_line(n, lines[n - 1]).raw


def default_ingest_workers(paths: list[Path], workers: int | None) -> int:
    """``workers``, or with None the machine's cores, but one process for less than
    :data:`AUTO_MIN_BYTES` of input."""
    from ..workers import default_workers

    if workers is not None:
        return workers
    size = 0
    for p in paths:
        with contextlib.suppress(OSError):
            size += os.stat(p).st_size
    return default_workers() if size >= AUTO_MIN_BYTES else 1
