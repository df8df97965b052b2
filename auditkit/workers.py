"""Worker processes: how many (:func:`default_workers`), and pools of them that die with their parent (docs/reliability.md).

Every process pool of auditkit is made by :func:`process_pool`. Its workers are forked by a fork server
(``multiprocessing``'s ``forkserver``) that imported the workers' task modules (:data:`PRELOAD`) once, so
a worker does not import Python, numpy, pyarrow and pandas again (0.45 CPU s each when spawned). Each
worker, as it starts, asks Linux to kill it when its parent, the fork server, dies (``PR_SET_PDEATHSIG``),
and runs a watchdog thread that exits it when the process that made the pool dies: it waits for
end-of-file on the pipe that process holds open for it (``multiprocessing.parent_process().sentinel``;
any system, and the start-up race: a pipe already at end-of-file). The fork server ends once that process
and the workers are gone (or at its exit, :func:`_stop_fork_server`). A parent that is told to stop
(SIGTERM, SIGINT) leaves its ``with`` blocks by an exception; :func:`stop_pool` then kills and reaps the
workers rather than wait for their tasks.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["default_workers", "process_pool", "stop_pool", "result", "worker_start", "terminate_on_sigterm",
           "PRELOAD", "keep_freed_memory", "start_fork_server"]

PR_SET_PDEATHSIG = 1
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
PRELOAD = ("auditkit.workers", "auditkit.ingest.tasks", "auditkit.engine.executors")
"""The modules of the pools' tasks, imported once by the fork server before it forks a worker (the parallel
ingest's and the local validation's)."""


def default_workers() -> int:
    """The cores this process may run on (``os.process_cpu_count``, the CPU affinity, or ``os.cpu_count``)."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13+: the affinity-aware count
    if count is not None:
        return max(1, count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


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


def keep_freed_memory() -> None:
    """This process's malloc (glibc) keeps for the next batch or task what one frees: allocations of up to
    32 MiB (a block's bytes, a batch's columns) taken from the heap, not mapped and unmapped, and up to
    64 MiB of free heap top not given back. With glibc's defaults each 16 MiB range of a parallel ingest
    faulted about 40 MB in afresh (10,000 page faults), and validate of a 10M-round store 520,000 (2.6
    kernel CPU s). Run by every pool worker and by the command line's process; a no-op but on Linux
    (another libc's ``mallopt`` may ignore them)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # (setting either ends glibc's own adjustment of both)
        libc.mallopt(M_TRIM_THRESHOLD, 64 << 20)
    except (OSError, AttributeError):  # pragma: no cover - a libc without mallopt: its defaults
        pass


def _watch(sentinel: int) -> None:
    from multiprocessing.connection import wait

    wait([sentinel])  # end-of-file: the process that made the pool has died
    os._exit(1)


def worker_start(environ: dict[str, str], then: Callable[[], None] | None = None) -> None:
    """A pool's initializer: die with the process that made the pool, take its environment (``environ``:
    the fork server's is that of its own start), then run ``then``."""
    from multiprocessing import parent_process

    _parent_death_signal()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the whole group: the parent stops us
    threading.Thread(target=_watch, args=(parent_process().sentinel,), name="auditkit-parent-watchdog",
                     daemon=True).start()
    os.environ.clear()
    os.environ.update(environ)
    keep_freed_memory()
    if then is not None:
        then()


def process_pool(workers: int, initializer: Callable[[], None] | None = None) -> Any:
    """A ``ProcessPoolExecutor`` of ``workers`` processes that die with this one, forked by a fork server
    that imported :data:`PRELOAD` (:func:`_context`).

    ``initializer`` (a module-level function) runs in each worker after the watchdog is set.
    """
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                               initializer=worker_start, initargs=(dict(os.environ), initializer))


def start_fork_server() -> None:
    """Start the pools' fork server now, so that it imports :data:`PRELOAD` while this process still imports
    and plans (the command line does, when it is asked for more than one worker): the first pool's workers
    are then forked without waiting for it (0.35-0.45 s of a 1M-round ingest's 5 s on 2 cores)."""
    _context()


def _context() -> Any:
    """The fork server's context, the server started if not yet running; where it cannot start (its socket's
    path, in the temporary folder, longer than AF_UNIX allows: a deep ``TMPDIR``) the spawn context."""
    import multiprocessing
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))  # no effect on a server already running
    try:
        forkserver.ensure_running()
    except OSError:
        return multiprocessing.get_context("spawn")
    atexit.unregister(_stop_fork_server)  # registered once
    atexit.register(_stop_fork_server)
    return context


def _stop_fork_server(timeout: float = 5.0) -> None:
    """At exit, tell the fork server to end (its "alive" pipe closed) and reap it, so that its workers' CPU
    time counts in this process's (``time`` of a command, ``wait4`` by its parent); left alone it would
    end by itself, an orphan. One that has not ended within ``timeout`` (a worker still alive holds the
    pipe too) is left so: the exit does not wait for it."""
    from multiprocessing import forkserver

    server = forkserver._forkserver  # multiprocessing's own stop (``_stop``) waits without a bound
    pid, alive = server._forkserver_pid, server._forkserver_alive_fd
    if pid is None:
        return
    server._forkserver_pid = server._forkserver_alive_fd = None
    os.close(alive)
    deadline = time.monotonic() + timeout
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(pid, os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)


def stop_pool(pool: Any, timeout: float = 5.0) -> None:
    """Cancel what has not started, kill the workers (their tasks are abandoned) and reap them.

    A worker killed while it sent a result leaves half a message in the result pipe: the pool's
    manager thread then waits in ``recv`` for the rest, and the interpreter, which joins that thread
    at exit, never exits. Once the workers are reaped this process closes its own end of the pipe
    (the last writer), so the manager reads end-of-file, finds the pool broken, and ends.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    results = getattr(pool, "_result_queue", None)  # shutdown(wait=False) forgets it without closing it
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
    if results is not None:  # no worker writes to it any more: end-of-file for the manager thread
        with contextlib.suppress(Exception):
            results._writer.close()


POLL_SECONDS = 0.2
"""How often :func:`result` looks for a dead worker while it waits."""


def result(future: Any, pool: Any) -> Any:
    """``future.result()`` of a task on ``pool``, raising ``BrokenProcessPool`` once a worker has died.

    The pool finds a dead worker itself, except one killed while it sent a result: its manager
    thread then waits in ``recv`` for the rest of the message, and ``future.result()`` never
    returns. So this waits in short steps and looks at the workers' exit codes between them; the
    caller's error path then stops the pool (:func:`stop_pool`), which ends that thread."""
    from concurrent.futures import wait
    from concurrent.futures.process import BrokenProcessPool

    while not wait([future], timeout=POLL_SECONDS).done:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            if process.exitcode is not None:
                raise BrokenProcessPool(f"a worker process died (exit code {process.exitcode}); "
                                        "its tasks' results are lost")
    return future.result()


class _Redelivery:
    """A signal sent again to this process from a thread, ``DELAY`` seconds after :meth:`release`.

    The thread waits for the release, so the signal cannot land while the hook that made it is still
    running (on a loaded machine the thread could start, sleep and send before ``Thread.start``
    returned in the hook, and the interrupt raised inside the hook was dropped again)."""

    DELAY = 0.01

    def __init__(self, signum: int):
        self.signum = signum
        self._go = threading.Event()
        self._cancelled = False
        self._thread = threading.Thread(target=self._send, name="auditkit-redeliver", daemon=True)
        self._thread.start()

    def _send(self) -> None:
        self._go.wait()
        time.sleep(self.DELAY)
        if not self._cancelled:
            os.kill(os.getpid(), self.signum)

    def release(self) -> None:
        self._go.set()

    def cancel(self) -> None:
        self._cancelled = True
        self._go.set()


_PENDING: list[_Redelivery] = []
"""The redelivery of an interrupt a finalizer swallowed, not yet raised (:func:`_redeliver`)."""


def _interrupt(signum: int, frame: Any) -> None:
    _PENDING.clear()  # delivered
    raise KeyboardInterrupt(f"signal {signum}")


def _redeliver(previous: Callable[[Any], None]) -> Callable[[Any], None]:
    """An unraisable-exception hook that hands a swallowed interrupt back to the main thread.

    A signal's ``KeyboardInterrupt`` raised while a finalizer runs (a ``__del__``, a weakref
    callback) is printed as "Exception ignored" and dropped, and the command would go on as if it
    had not been told to stop. The hook sends the signal again from a thread a moment after it
    returns (:class:`_Redelivery`; raised here, it would run its handler at once, inside the hook),
    so it lands after the finalizer; other unraisable exceptions go to the previous hook."""

    def hook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, KeyboardInterrupt) and str(exc).startswith("signal "):
            again = _Redelivery(int(str(exc).split()[1]))
            _PENDING[:] = [again]
            again.release()  # the last thing the hook does
            return
        previous(unraisable)

    return hook


@contextlib.contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """SIGTERM (and SIGINT) in the main thread raise ``KeyboardInterrupt``, so every ``with`` block
    (pools, locks, temporary files) is left in order and the command exits 2 ``interrupted``; one
    that lands in a finalizer is raised again after it (:func:`_redeliver`), never dropped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    hook, sys.unraisablehook = sys.unraisablehook, _redeliver(sys.unraisablehook)
    try:
        yield
    finally:
        pending = _PENDING.pop() if _PENDING else None
        if pending is not None:  # swallowed by a finalizer near the end, not raised again yet
            pending.cancel()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = hook
        if pending is not None:  # raised here rather than lost with the daemon timer at exit
            raise KeyboardInterrupt(f"signal {pending.signum}")
