"""The checkpoint (versioned state, written atomically) and the writer thread that, at each checkpoint,
fsyncs the outputs, commits the rounds read since the last one to the store (under its lock), then
writes the checkpoint; a new file is written into it before any of its lines is read."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from ..store import StoreLocked, atomic_path, named_error
from .commit import Pending, commit
from .rounds import OpenShoes
from .tail import Tracked

CHECKPOINT_VERSION = 1


class Checkpoints:
    """The checkpoint half of :class:`~auditkit.live.watcher.Watcher` (a mixin)."""

    def flush(self, wait: bool = True, final: bool = False) -> None:
        """Hand the rounds read since the last checkpoint and a snapshot of the state to a writer thread,
        which fsyncs the outputs, commits the rounds to the store, then writes the checkpoint, in that
        order (a slow disk does not hold up the polls); ``wait`` for it to finish.

        The store's lock is taken for each commit, without waiting: while another writer holds it (an
        ingest, the nightly job) the rounds are kept for the next checkpoint and no checkpoint is written;
        the ``final`` flush (at exit) waits up to ``lock_timeout`` seconds, then fails naming the holder."""
        self.wait_flush()
        pending, self.pending = self.pending, Pending()
        if self._failed is not None:  # a commit that failed: its rounds go with this one
            pending, self._failed = self._failed.merge(pending), None
        state = self._state() if self.checkpoint is not None else None
        resolved = list(self._extra)  # files registered so far: this state has them (or read them to their end)
        fds = [(fh.fileno(), path) for fh, path in ((self._out_fh, self.out), (self._csv_fh, self.csv))
               if fh is not None]

        def job() -> None:
            try:
                for fd, path in fds:
                    try:
                        os.fsync(fd)
                    except OSError as exc:
                        raise named_error(exc, path) from exc
                if self.store is not None and pending:
                    try:
                        commit(self.store, self.stored_seen, pending, self.live_format,
                               self.lock_timeout if final else 0.0)
                    except StoreLocked as exc:
                        self._failed = pending
                        if final:
                            raise
                        self._warn("store-locked", f"{exc}: rounds kept for the next checkpoint")
                        return
                    except OSError as exc:
                        self._failed = pending  # committed with the next flush; no checkpoint past them
                        raise named_error(exc, Path(str(self.store.root))) from exc
                    except BaseException:
                        self._failed = pending
                        raise
                if state is not None:
                    with self._checkpoint_lock:
                        for key in resolved:
                            self._extra.pop(key, None)
                        self._write_checkpoint(state)
            except BaseException as exc:  # raised in the polling thread by wait_flush
                self._flush_error = exc

        if self._writer is None:
            self._writer = threading.Thread(target=self._write_jobs, name="auditkit-live-flush", daemon=True)
            self._writer.start()
        self._idle.clear()
        self._jobs.put(job)
        self._last_checkpoint = time.monotonic()
        if wait:
            self.wait_flush()

    def _write_jobs(self) -> None:
        """The writer thread: run each flush's job in turn until told to stop (None)."""
        while (job := self._jobs.get()) is not None:
            job()
            self._idle.set()

    def flushing(self) -> bool:
        """True while a checkpoint is being written."""
        return not self._idle.is_set()

    def wait_flush(self) -> None:
        """Wait for the checkpoint being written; raise what went wrong writing it."""
        self._idle.wait()
        if self._flush_error is not None:
            exc, self._flush_error = self._flush_error, None
            raise exc

    def _register(self, files: list[Tracked]) -> None:
        """Write the checkpoint again with these new files at their start (before any of their lines is
        read): after a crash they are found again, renamed or truncated, and read from there."""
        with self._checkpoint_lock:
            self._extra.update((t.key, t.state()) for t in files)
            self._write_checkpoint(self._saved)

    def _write_checkpoint(self, state: dict[str, Any]) -> None:
        """Write ``state`` and the files registered since it was taken (the caller holds the lock)."""
        self._saved = state
        listed = {(f["dev"], f["ino"]) for f in state["files"]}
        full = dict(state, files=state["files"] + [f for k, f in self._extra.items() if k not in listed])
        path = self.checkpoint
        assert path is not None
        try:
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(full), "utf-8")
        except OSError as exc:
            raise named_error(exc, path) from exc

    def _state(self) -> dict[str, Any]:
        """What the checkpoint holds, as of now."""
        return {
            "version": CHECKPOINT_VERSION,
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": [t.state() for t in self.files.values()],
            "shoes": {g: s.state() for g, s in self.shoes.items()},
            "recent": self.recent.state(),
            "out_offset": (self._out_pin if self._out_pin is not None else self._out_fh.tell())
            if self._out_fh is not None else 0,
            "csv_offset": self._csv_fh.tell() if self._csv_fh is not None else 0,
        }

    def _restore(self, state: dict[str, Any]) -> None:
        for f in state.get("files", []):
            t = Tracked(dev=f["dev"], ino=f["ino"], path=Path(f["path"]), gen=f["gen"], offset=f["offset"],
                        line=f["line"], head=f["head"], head_len=f["head_len"], gzip=f["gzip"], done=f["done"],
                        names=list(f.get("names", [f["path"]])))
            where = self._locate(t)
            if where is None:
                self._warn_now(f"{t.path} (as checkpointed) is gone: lines written to it after the checkpoint "
                               "cannot be read")
                continue
            t.named(where)
            self.files[t.key] = t
        for game, s in state.get("shoes", {}).items():
            shoes = self.shoes[game] = OpenShoes(game, self._rules(game)[1], idle=self.shoe_idle)
            shoes.restore(s, self.config)
        if "recent" in state:
            self.recent.restore(state["recent"])
