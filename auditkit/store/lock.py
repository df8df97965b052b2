"""The store's lock: ``flock`` on a lock file, exclusive for writers and shared for readers, naming its
holder; a writer that takes it sweeps the temporary files dead writers left."""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .atomic import _stale, pid_alive
from .errors import StoreLocked

log = logging.getLogger("auditkit.store")


@contextlib.contextmanager
def hold(store: Any, timeout: float, *, shared: bool = False, command: str = "", sweep: bool = True) -> Iterator[float]:
    """Hold ``store``'s lock (``fcntl.flock`` on ``<store>/.auditkit.lock``); yields when it was taken.

    Writers (ingest, a job) take it exclusively, readers (validate of a store,
    report) shared. Waits up to ``timeout`` seconds, then raises StoreLocked
    naming the holder (pid, host, command, since). The kernel releases the lock
    when the process ends, however it ends: a killed run never leaves it stale.
    Local file systems only (flock is not reliable over NFS). A writer removes
    the temporary files that killed writers left in the store.

    An object store has no lock of its own: the lock file is local
    (``$TMPDIR/auditkit-locks/<hash of the URI>.lock``), which serializes the
    writers of one host; only one host may commit to an object store (the
    Dask workers never write, the client does). ``sweep=False``: a writer that takes the lock
    often (the live watcher, once a checkpoint) leaves the sweep of temporary files to the others.
    """
    import fcntl

    path = store._files.lock_file()
    if not store.remote:
        root = Path(store.root)
        if shared and root.is_dir() and not os.access(root, os.W_OK):  # a read-only store: nobody writes it, no lock needed
            log.debug("store %s is read-only: read without its lock", root)
            yield time.time()
            return
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 1000, 0).decode("utf-8", "replace").strip()
                    pid = re.match(r"pid (\d+) ", holder)
                    if pid is None or not pid_alive(int(pid.group(1))):  # no writer: readers hold it
                        holder = "a reader (auditkit validate or report)"
                    raise StoreLocked(f"store {store.root} is locked by {holder}"
                                      f" (waited {timeout:g} s; --lock-timeout to wait longer)") from None
                if not waited:
                    log.info("waiting up to %g s for the lock on %s", timeout, store.root)
                    waited = True
                time.sleep(0.1)
        taken = time.time()
        if not shared:
            os.ftruncate(fd, 0)
            since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(taken))
            os.pwrite(fd, f"pid {os.getpid()} on {platform.node()} ({command or 'auditkit'}) since {since}\n"
                      .encode(), 0)
            if sweep:
                sweep_temps(store, taken)
        with contextlib.nullcontext() if shared else store.sole_writer():
            yield taken
        if not shared:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def sweep_temps(store: Any, older_than: float) -> list[Path]:
    """Remove the temporary files in the store written before ``older_than`` or whose writer is gone
    (an object store has none: an unfinished upload is never visible)."""
    if store.remote:
        return []
    removed = []
    for tmp in Path(store.root).glob("**/.*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.is_file() and _stale(tmp, older_than):
                tmp.unlink()
                removed.append(tmp)
    if removed:
        log.warning("removed %d temporary file(s) that an interrupted run left in %s", len(removed), store.root)
    return removed
