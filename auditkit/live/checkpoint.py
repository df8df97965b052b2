"""The checkpoint (versioned state, written atomically) and the writer thread that, at each checkpoint,
fsyncs the outputs, commits the rounds read since the last one to the store (under its lock), then
writes the checkpoint; a new file is written into it before any of its lines is read."""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..store import atomic_path, named_error
from .tail import Tracked

CHECKPOINT_VERSION = 1


class Checkpoint:
    """The checkpoint file ``path`` (None: no checkpoint kept) and the one writer thread of a watch
    (started at the first flush), which runs each flush's job in turn: a slow disk does not hold up the polls."""

    def __init__(self, path: Path | None):
        self.path = path
        self.thread: threading.Thread | None = None
        self.jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=1)
        self.idle = threading.Event()
        self.idle.set()
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.extra: dict[tuple[int, int], dict[str, Any]] = {}  # files registered since the last state
        self.saved: dict[str, Any] = {}  # the last state written (set when the watch opens)

    def load(self) -> dict[str, Any]:
        """The state the checkpoint holds ({} without one); ValueError naming it for another version."""
        if self.path is None or not self.path.exists():
            return {}
        state = json.loads(self.path.read_text("utf-8"))
        if state.get("version") != CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint {self.path} has version {state.get('version')!r}, not {CHECKPOINT_VERSION}")
        return state

    def flush(self, files: list[tuple[int, Path]], commit: Callable[[], bool] | None, state: dict[str, Any] | None,
              wait: bool = True) -> None:
        """Hand a job to the writer thread: fsync the output ``files``, ``commit`` the rounds to the store
        (False: not committed, the store being locked: no checkpoint past them), then write ``state``
        (None: none); ``wait`` for it. Call :meth:`wait` first (the previous job's error is raised there)."""
        resolved = list(self.extra)  # files registered so far: this state has them (or read them to their end)

        def job() -> None:
            try:
                for fd, path in files:
                    try:
                        os.fsync(fd)
                    except OSError as exc:
                        raise named_error(exc, path) from exc
                if commit is not None and not commit():
                    return
                if state is not None:
                    with self.lock:
                        for key in resolved:
                            self.extra.pop(key, None)
                        self.write(state)
            except BaseException as exc:  # raised in the polling thread by wait()
                self.error = exc

        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="auditkit-live-flush", daemon=True)
            self.thread.start()
        self.idle.clear()
        self.jobs.put(job)
        if wait:
            self.wait()

    def _run(self) -> None:
        """The writer thread: run each flush's job in turn until told to stop (None)."""
        while (job := self.jobs.get()) is not None:
            job()
            self.idle.set()

    def busy(self) -> bool:
        """True while a checkpoint is being written."""
        return not self.idle.is_set()

    def wait(self) -> None:
        """Wait for the checkpoint being written; raise what went wrong writing it."""
        self.idle.wait()
        if self.error is not None:
            exc, self.error = self.error, None
            raise exc

    def stop(self) -> None:
        """End the writer thread (after its last job)."""
        if self.thread is not None:
            self.jobs.put(None)
            self.thread.join()
            self.thread = None

    def register(self, files: list[Tracked]) -> None:
        """Write the checkpoint again with these new files at their start (before any of their lines is
        read): after a crash they are found again, renamed or truncated, and read from there."""
        if self.path is None:
            return
        with self.lock:
            self.extra.update((t.key, t.state()) for t in files)
            self.write(self.saved)

    def write(self, state: dict[str, Any]) -> None:
        """Write ``state`` and the files registered since it was taken (the caller holds the lock)."""
        self.saved = state
        listed = {(f["dev"], f["ino"]) for f in state["files"]}
        full = dict(state, files=state["files"] + [f for k, f in self.extra.items() if k not in listed])
        assert self.path is not None
        try:
            with atomic_path(self.path) as tmp:
                tmp.write_text(json.dumps(full), "utf-8")
        except OSError as exc:
            raise named_error(exc, self.path) from exc
