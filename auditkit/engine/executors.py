"""The three executors of a plan: one process (:func:`serial`), this process with a pool of others
(:func:`pooled`) and a Dask cluster (:func:`on_dask`); :func:`run` picks one. Each yields every partition's
findings (a sorted Arrow table, None when none) in plan order, the same row for row whichever runs it, and
only this process writes anything. Workers get runs of consecutive partitions."""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..rules.tally import Tally
from ..workers import default_workers, result
from .partitions import walk
from .plan import Partition, Plan, Settings, at_least

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["AUTO_MIN_ROUNDS", "CHUNKS_PER_WORKER", "SHARE", "run", "serial", "pooled", "on_dask"]

Found = Iterator[tuple[Partition, pa.Table | None]]
"""Each partition with its findings (None: none), in plan order."""

AUTO_MIN_ROUNDS = 1_000_000
"""With the default (``workers=None``), fewer rounds than this run on one process: starting worker
processes (a second or two each, importing numpy and pyarrow) costs more than it saves."""
CHUNKS_PER_WORKER = 8
"""A run on Dask cuts the plan into about this many runs of consecutive partitions per worker: within
one, each day reuses the day before's shoe columns (as the serial engine does) and a task's fixed costs
are paid once, while there are still enough tasks to keep every worker busy to the end."""
SHARE = 4
"""A pooled run hands out runs of consecutive partitions as its processes are free, each
1 / (``SHARE`` x processes) of the partitions left: long runs first (a task's fixed costs paid seldom),
short ones at the end (the last to finish keeps the others waiting little)."""


def run(store: Store, settings: Settings, *, games: Sequence[str] | None = None,
        dates: tuple[str | None, str | None] = (None, None), only: set[tuple[str, str]] | None = None,
        workers: int | None = 1, scheduler: Any = None) -> Found:
    """Validate a store's partitions (of ``games``, between ``dates``, among ``only``) by the executor
    asked for: ``scheduler`` (a ``dask.distributed`` address or ``Client``) runs them on a Dask cluster
    whose workers all see the store; ``workers`` > 1 in that many processes, this one and a pool of the
    others, started before the plan is made so that they import while it is (a plan of one partition runs
    in this process); ``None`` is the machine's cores (:func:`auditkit.workers.default_workers`), the pool
    started once the plan holds :data:`AUTO_MIN_ROUNDS` rounds (one process for fewer)."""
    with contextlib.ExitStack() as stack:
        # workers asked for are started first: they import while this process plans
        pool = stack.enter_context(_pool(workers - 1)) if scheduler is None and workers and workers > 1 else None
        plan = Plan.make(store, settings, games=games, dates=dates, only=only)
        if scheduler is not None:
            yield from on_dask(plan, scheduler)
            return
        if workers is None:
            workers = default_workers()
            if workers > 1 and at_least(plan.store, plan.parts, AUTO_MIN_ROUNDS):
                pool = stack.enter_context(_pool(workers - 1))
        if pool is not None and len(plan.parts) > 1:
            yield from pooled(plan, pool, min(workers, len(plan.parts)))
            return
        yield from serial(plan)


def serial(plan: Plan) -> Found:
    """The partitions one after another in this process (:func:`auditkit.engine.partitions.walk`)."""
    for part, found, _checked in walk(plan):
        yield part, found


def pooled(plan: Plan, pool: Any, workers: int) -> Found:
    """Runs of partitions on ``workers`` processes, this one and a pool of the others, yielded in plan order.

    Each process takes the next run when it is free (:data:`SHARE`): the pool has one more queued
    than it has workers, and this process runs one itself whenever the run at the head of the plan is
    not back yet; so it works while the pool's workers import (a second each) and while they finish.
    Meanwhile Arrow runs on one thread here, as in each worker (:func:`_one_arrow_thread`).
    """
    threads = pa.cpu_count()
    pa.set_cpu_count(1)
    try:
        yield from _shared(plan, pool, workers)
    finally:
        pa.set_cpu_count(threads)


def _shared(plan: Plan, pool: Any, workers: int) -> Found:
    """:func:`pooled`'s runs handed out, and their findings in plan order."""
    parts, start, size = plan.parts, 0, workers - 1
    handed: collections.deque[tuple[tuple[Partition, ...], Future]] = collections.deque()  # in plan order

    def take() -> tuple[Partition, ...]:
        nonlocal start
        n = -(-(len(parts) - start) // (SHARE * workers))
        start += n
        return parts[start - n:start]

    while start < len(parts) or handed:
        while start < len(parts) and sum(not f.done() for _, f in handed) <= size:
            run_ = take()
            handed.append((run_, pool.submit(_run_chunk, plan.of(run_, plan.settings.for_worker()))))
        if handed and not handed[0][1].done() and start < len(parts):
            run_, here = take(), Future()
            here.set_result(_run_chunk(plan.of(run_, plan.settings.for_worker())))
            handed.append((run_, here))
            continue
        run_, future = handed.popleft()
        yield from _partitions(run_, result(future, pool), plan.settings)


def on_dask(plan: Plan, scheduler: Any) -> Found:
    """Runs of partitions as tasks on a Dask cluster (``client.map``), yielded in plan order.

    A task is pure (it reads the store and returns findings), so a task whose
    worker died is run again by Dask on another worker and its findings arrive once.
    """
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - the optional extra
        raise RuntimeError("the Dask engine needs the dask extra: pip install 'auditkit[dask]'") from None
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        chunks = _chunks(plan.parts, max(1, sum(client.nthreads().values())))
        tasks = [plan.of(c, plan.settings.for_worker()) for c in chunks]  # a tally each: a thread's task is not copied
        futures = client.map(_run_chunk, tasks, pure=False)  # a plan pickles small
        yield from _in_order(chunks, futures, plan.settings)
    finally:
        if client is not scheduler:
            client.close()


def _chunks(parts: Sequence[Partition], workers: int) -> list[tuple[Partition, ...]]:
    """The plan cut into runs of consecutive partitions, as even as can be."""
    n = max(1, min(len(parts), workers * CHUNKS_PER_WORKER))
    bounds = [round(i * len(parts) / n) for i in range(n + 1)]
    return [tuple(parts[a:b]) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _run_chunk(plan: Plan) -> tuple[pa.Table | None, list[int], list[int], Tally | None]:
    """A worker's task: a plan of consecutive partitions (pickled: the store's folder, or its URI and
    file system), run as the serial engine runs them. Returns their findings as one table, partition
    after partition (one table pickles in a fraction of a millisecond, a table per partition in about
    0.4 ms each), with each partition's number of findings and of rounds checked, and the coverage counts."""
    tables, rows, checked = [], [], []
    for _p, findings, n in walk(plan):
        if findings is not None and findings.num_rows:
            tables.append(findings)
        rows.append(0 if findings is None else findings.num_rows)
        checked.append(n)
    return (pa.concat_tables(tables).combine_chunks() if tables else None), rows, checked, plan.settings.tally


def _in_order(chunks: list[tuple[Partition, ...]], futures: list[Any], settings: Settings) -> Found:
    """Each partition's findings (None: none), in plan order, from the tasks' results in turn."""
    for chunk, future in zip(chunks, futures, strict=True):
        yield from _partitions(chunk, future.result(), settings)


def _partitions(chunk: tuple[Partition, ...], done: tuple[pa.Table | None, list[int], list[int], Tally | None],
                settings: Settings) -> Found:
    """A task's partitions with their findings (None: none), from its result (:func:`_run_chunk`); its
    coverage counts and rounds checked told ``settings``."""
    findings, rows, checked, counts = done
    if settings.tally is not None:
        settings.tally.merge(counts)
    start = 0
    for part, n, c in zip(chunk, rows, checked, strict=True):
        settings.checked(c)
        yield part, findings.slice(start, n) if n else None
        start += n


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[Any]:
    """A pool of ``workers`` processes, each started at once (not at its first task). Left early (an
    error, a caller that stops reading), it cancels the tasks not yet started rather than run them."""
    from ..workers import process_pool, stop_pool

    pool = process_pool(workers, _one_arrow_thread)  # its workers die with this process
    try:
        for _ in range(workers):  # the pool starts a process for each task that waits, up to max_workers
            pool.submit(int)
        yield pool
    except BaseException:
        stop_pool(pool)  # an error or an interrupt: the tasks running are abandoned, not awaited
        raise
    finally:
        pool.shutdown()


def _one_arrow_thread() -> None:
    """A pool worker is one of several processes that share the cores: Arrow's thread pool (a thread
    per core in each of them) would oversubscribe them (2 workers on 2 cores: 7% slower)."""
    pa.set_cpu_count(1)
