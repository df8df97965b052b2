"""Worker processes that die with their parent (docs/reliability.md).

Every process pool of auditkit is made by :func:`process_pool`. Each worker, as
it starts, asks Linux to kill it when its parent dies (``PR_SET_PDEATHSIG``)
and runs a watchdog thread that exits it when its parent's pid changes (any
system, and the start-up race: a parent dead before the worker's first line).
A parent that is told to stop (SIGTERM, SIGINT) leaves its ``with`` blocks by
an exception; :func:`stop_pool` then kills and reaps the workers rather than
wait for their tasks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["process_pool", "stop_pool", "worker_start", "terminate_on_sigterm", "WATCH_SECONDS"]

WATCH_SECONDS = 0.5
"""How often a worker's watchdog looks at its parent's pid."""
PR_SET_PDEATHSIG = 1


def _parent_death_signal() -> None:
    """Linux: SIGKILL this process when the thread that started it exits (no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl: the watchdog remains
        pass


def _watch(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(WATCH_SECONDS)


def worker_start(parent: int, then: Callable[[], None] | None = None) -> None:
    """A pool's initializer: die with ``parent`` (the pid that made the pool), then run ``then``."""
    _parent_death_signal()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the whole group: the parent stops us
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="auditkit-parent-watchdog", daemon=True).start()
    if then is not None:
        then()


def process_pool(workers: int, initializer: Callable[[], None] | None = None) -> Any:
    """A ``ProcessPoolExecutor`` of ``workers`` spawned processes that die with this one.

    ``initializer`` (a module-level function) runs in each worker after the watchdog is set.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=worker_start, initargs=(os.getpid(), initializer))


def stop_pool(pool: Any, timeout: float = 5.0) -> None:
    """Cancel what has not started, kill the workers (their tasks are abandoned) and reap them."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    deadline = time.monotonic() + timeout
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(1.0)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """SIGTERM in the main thread raises ``KeyboardInterrupt`` as SIGINT does, so every ``with`` block
    (pools, locks, temporary files) is left in order and the command exits 2 ``interrupted``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
