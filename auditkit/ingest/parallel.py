"""Parallel ingest: sources parsed by worker processes (or Dask workers), committed one by one in order.

The work of a source is cut into tasks (:mod:`auditkit.ingest.tasks`): a plain JSONL file into byte
ranges cut at line starts (so one big file uses every worker), a gzip file into the blocks this process
decompresses (a gzip stream cannot be entered in the middle), a CSV file (with its companions) as a
whole. A worker parses, checks and hashes the lines of its task; for a byte range it writes the rows
as the source's parts itself and sends back the hashes, the bad lines and the parts' entries; for the
other tasks it sends back Arrow tables. A new plain file of several ranges is hashed by a worker while
the others parse its ranges (:func:`hash_and_number`, its first task, also numbers the ranges' first
lines); when the hash is in, this process discards what an interrupted run left of that content and
tells the range tasks by a note the hash and numbering to write their parts with, or to write nothing
(stored already, met earlier in the run). (On a Dask cluster, whose workers may not see this machine's
files, and for a file of one range, this process hashes it before its ranges go out.) This process
takes the results in order, checks the duplicates (:class:`~auditkit.ingest.dedup.SeenRounds`), adopts
the workers' parts and writes the index, quarantine and manifest entry of each source as the serial
ingest does (:class:`~auditkit.ingest.writer.SourceWriter`): the store holds the same rows, index and
quarantine whatever the number of workers. At most :data:`IN_FLIGHT` tasks per worker are out at a
time, so memory stays bounded whatever the size of the input.

A store held in this process's memory (:meth:`~auditkit.store.Store.in_memory`, the one-shot
``validate LOG``'s) cannot be written by a worker: a byte range's task then parses only
(:func:`~auditkit.ingest.tasks.parse_range`) and sends its rows back, numbered here from the range's
first line once the hash task has counted it.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store import SourceRecord, Store, private_temp_dir
from .dedup import SeenRounds, StoredOverlap
from .identity import InputError, is_csv, recognise, source_sha256
from .jsonl import BLOCK_BYTES, MAX_LINE, Lines, _is_gzip, read_blocks
from .tasks import (
    RangeLines,
    _write_note,
    cut_ranges,
    hash_and_number,
    parse_csv,
    parse_lines,
    parse_range,
    write_range,
)
from .writer import open_known, read_again

__all__ = ["ParallelIngest", "IN_FLIGHT", "MIN_RANGE", "AUTO_MIN_BYTES", "cut_ranges", "hash_and_number",
           "parse_only", "default_ingest_workers"]

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
        self.futures: list[Any] = []  # a process pool's, not yet seen done

    def submit(self, fn: Callable, *args: Any) -> Any:
        if self.client is not None:
            if any(isinstance(a, Lines) for a in args):  # a block of a gzip file: sent once, not in the graph
                args = tuple(self.client.scatter(a, hash=False) if isinstance(a, Lines) else a for a in args)
            return self.client.submit(fn, *args, pure=False)
        self.futures = [f for f in self.futures if not f.done()]
        self.futures.append(future := self.pool.submit(fn, *args))
        return future

    def result(self, future: Any) -> Any:
        """The task's result; on a process pool, ``BrokenProcessPool`` as soon as a worker has died
        (:func:`auditkit.workers.result`: one killed while it sent a result would hang the wait)."""
        if self.pool is None:
            return future.result()
        from ..workers import result

        return result(future, self.pool)

    def close(self, abandon: bool = False) -> None:
        """Cancel the tasks not started and wait for those running, through :meth:`result` (a worker that
        dies meanwhile kills the pool rather than hang the wait); ``abandon``: kill the workers at once."""
        if self.pool is not None:
            from concurrent.futures import BrokenExecutor

            from ..workers import stop_pool

            if not abandon:  # (a future cancelled as the killed pool breaks: Python 3.11's pool thread raises)
                for future in self.futures:
                    future.cancel()
            for future in (f for f in self.futures if not f.cancelled()):
                if abandon:
                    break
                try:
                    self.result(future)
                except BrokenExecutor:
                    abandon = True
                except Exception:  # noqa: S110 - a task's own error: its result is not wanted here
                    pass
            if abandon:
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
        self.held = store.held  # its parts written here, from the rows the range tasks send back
        self.executor = _Executor(workers, scheduler)
        self.limit = IN_FLIGHT * self.executor.workers
        self.pending = collections.deque(_Source(p) for p in paths)  # not yet looked at
        self.ahead: collections.deque[_Source] = collections.deque()  # looked at, in order
        self.tasks: Iterator[tuple[_Source, Callable, tuple, Callable | None, int | None]] | None = None
        self.in_flight = 0
        self.waited = 0.0  # seconds this process waited for the workers' results (the rest: its own work)
        self.reading: set[str] = set()  # contents whose tasks are out: a second name for one is not read again
        self.notes: str | None = None  # the folder of the notes to range tasks (made on first use)
        self.seq = 0  # sources hashed by a worker
        self.hashed: list[_Source] = []  # those sources, each with its note (written once)

    def __enter__(self) -> ParallelIngest:
        return self

    def __exit__(self, *exc: Any) -> None:
        """Close the pool: its running tasks finished (after an error such as a full disk, a worker's part
        write then deletes its temporary file itself), or its workers killed after an interrupt, a dead
        worker or a note not written; range tasks of sources not committed are told to write nothing."""
        from concurrent.futures import BrokenExecutor

        stuck, error = False, exc[1]
        try:
            for src in (s for s in self.hashed if not os.path.exists(s.note)):  # type: ignore[arg-type]
                try:
                    _write_note(src.note, {"sha": None, "first": []})  # type: ignore[arg-type]
                except OSError:
                    stuck = True  # its range tasks would wait for ever: killed
            self.executor.close(abandon=error is not None and (stuck or not isinstance(error, Exception)
                                                               or isinstance(error, BrokenExecutor)))
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
        hash and numbering by a note (:meth:`_settle`; none for a held store's, which only parse)."""
        if not self.held:
            if self.notes is None:
                self.notes = str(private_temp_dir("auditkit-ingest", "the notes of an interrupted ingest"))
            self.seq += 1
            src.note = os.path.join(self.notes, f"{self.seq}.json")
            self.hashed.append(src)
        where = str(src.path.resolve())
        yield src, hash_and_number, (where, [(start, stop) for start, stop, _ in src.ranges]), None, None
        for k, (start, stop, _) in enumerate(src.ranges):
            lines = RangeLines(src.path, start, stop, self.max_line)
            yield src, *self._range_task(where, start, stop, str(src.path), None, k, src.note), \
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
        if src.note is not None:
            _write_note(src.note, {"sha": src.sha if go else None,
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
                lines = RangeLines(path, start, stop, self.max_line)
                yield src, *self._range_task(where, start, stop, name, src.sha, first), \
                    (lambda n, lines=lines, first=first: lines.raw(n - first + 1)), k

    def _range_task(self, where: str, start: int, stop: int, name: str, sha: str | None, at: int,
                    note: str | None = None) -> tuple[Callable, tuple]:
        """A byte range's task: its parts written by the worker (:func:`write_range`), or for a held store
        its rows sent back (:func:`parse_range`)."""
        if self.held:
            return parse_range, (where, start, stop, self.bulk, self.max_line)
        return write_range, (where, start, stop, self.bulk, self.max_line, self.store, name, sha, at, note)

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
        """The next task of ``src``, None when it has no more; first more are submitted into the room the
        results taken freed, so a worker that finishes a task finds the next one waiting."""
        self._fill()
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
                first = src.ranges[task.range][2] if task.range is not None else None
                if task.range is not None and self.held:  # rows numbered from 1 in their range
                    blocks, parts = [block.shifted(first - 1) for block in result], None  # type: ignore[operator]
                else:
                    blocks, parts = result if task.range is not None else (result, None)
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
            if not task.future.cancel() and task.range is not None and not self.held:
                with contextlib.suppress(Exception):  # a task that failed wrote nothing to keep either
                    for entry in self.executor.result(task.future)[1]:
                        self.store.drop_written(src.sha, entry["path"])  # type: ignore[arg-type]


def _csv_raw(path: Path, lines: list[bytes], n: int) -> str:
    """Line ``n`` of a CSV main file as the serial reader keeps it (its lines read again, once, when needed)."""
    from .csv import csv_line, read_text

    if not lines:
        lines.extend(read_text(path).splitlines())
    return csv_line(n, lines[n - 1]).raw


def parse_only(paths: list[Path], limit: int) -> bool:
    """Whether workers that only parse (a :class:`ParallelIngest` into a held store) suit ``paths``: every one
    a plain file, not gzip (whose size says little of the rows it holds), and at most ``limit`` bytes in
    all. (The rows past the held store's limit are encoded by the one process that holds it.)"""
    size = 0
    for p in paths:
        try:
            size += os.stat(p).st_size
            if size > limit or _is_gzip(p):
                return False
        except OSError:
            return False  # unreadable: the ingest says so, on either route
    return True


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
