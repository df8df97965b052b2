"""Atomic writes on a local folder: a temporary sibling, fsynced and renamed into place; the leftovers of
writers that died, found by the pid in their name and removed; system errors that name the file meant."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

_TEMP = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")  # .<name>.<creator pid>.<random>.tmp (atomic_path)

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(value: str) -> str:
    """A string made safe as one path component (no separators, no dot-dot, bounded length)."""
    text = _SAFE.sub("_", str(value)).strip("._") or "_"
    return text[:100]


def _temp_file(path: Path) -> tuple[Path, BinaryIO]:
    """A new file ``.<name>.<pid>.<random>.tmp`` next to ``path``, open for writing and readable as the finished
    file will be (the pid lets a later run tell a dead writer's leftovers from a live one's); its folder made
    only when it is missing."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a report is for others to read too
        fh = open(fd, "wb")  # noqa: SIM115 (the caller closes it)
        fh.raw.name = tmp  # type: ignore[attr-defined]  # named as if opened by its name
        return Path(tmp), fh
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _publish(tmp: Path, path: Path, fh: BinaryIO | None = None) -> None:
    """fsync ``tmp`` (through ``fh``, its file still open, which is closed) and rename it to ``path``."""
    if fh is None:
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
    else:
        with fh:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def named_error(exc: OSError, path: Path | str, tmp: Path | str | None = None) -> OSError:
    """``exc`` naming ``path`` when it names no file or only the temporary file ``tmp`` written for ``path`` (a
    full disk, a read-only folder: ``out/f.csv: No space left on device``); as it is otherwise, or when it
    is no system error (a locked or damaged store says what it is)."""
    if exc.errno is None or (exc.filename is not None and str(exc.filename) != str(tmp)):
        return exc
    return OSError(exc.errno, os.strerror(exc.errno), str(path))  # its subclass by errno (PermissionError...)


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; on success fsync and rename it into place. On failure the
    temporary file is removed and a system error names ``path`` (:func:`named_error`)."""
    with _atomic(Path(path), keep_open=False) as (tmp, _fh):
        yield tmp


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[BinaryIO]:
    """:func:`atomic_path` as a file open for writing (binary): fsynced through it, closed and renamed on
    success; one open of the temporary file, not three."""
    with _atomic(Path(path), keep_open=True) as (_tmp, fh):
        yield fh  # type: ignore[misc]


@contextlib.contextmanager
def _atomic(path: Path, keep_open: bool) -> Iterator[tuple[Path, BinaryIO | None]]:
    try:
        tmp_path, fh = _temp_file(path)
    except OSError as exc:
        raise named_error(exc, path, exc.filename if str(exc.filename).endswith(".tmp") else None) from exc
    if not keep_open:
        fh.close()
    try:
        yield tmp_path, fh if keep_open else None
        _publish(tmp_path, path, fh if keep_open else None)
    except OSError as exc:
        _discard(tmp_path, fh)
        named = named_error(exc, path, tmp_path)
        if named is exc:
            raise
        raise named from exc
    except BaseException:
        _discard(tmp_path, fh)
        raise


def _discard(tmp: Path, fh: BinaryIO) -> None:
    with contextlib.suppress(OSError):  # a buffered file's close writes what it holds: a full disk fails it
        fh.close()
    tmp.unlink(missing_ok=True)


def private_temp_dir(prefix: str, what: str) -> Path:
    """A new folder in $TMPDIR named ``<prefix>-<this process's id>-…``, once those of ``prefix`` whose
    process is gone (killed by SIGKILL before it removed its own) are removed, each with a warning naming
    ``what`` it held."""
    root = Path(tempfile.gettempdir())
    named = re.compile(rf"^{re.escape(prefix)}-(\d+)-")
    for old in root.glob(f"{glob.escape(prefix)}-*"):
        m = named.match(old.name)
        if m and old.is_dir() and not old.is_symlink() and not pid_alive(int(m.group(1))):
            logging.getLogger("auditkit").warning("removing %s: %s", what, old)
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-{os.getpid()}-", dir=root))


def pid_alive(pid: int) -> bool:
    """True when a process with this id runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale(tmp: Path, older_than: float | None) -> bool:
    """A temporary file whose creator (the pid in its name) is gone, or last written before ``older_than``."""
    m = _TEMP.match(tmp.name)
    if m is not None and not pid_alive(int(m.group(1))):
        return True
    return older_than is not None and tmp.stat().st_mtime < older_than


def remove_stale_temps(paths: Iterable[Path]) -> list[Path]:
    """Remove the temporary siblings (``.<name>.<pid>.*.tmp``) of ``paths`` whose writer is gone; returns them."""
    removed = []
    for path in paths:
        path = Path(path)
        if not path.parent.is_dir():
            continue
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                if tmp.is_file() and _stale(tmp, None):
                    tmp.unlink()
                    removed.append(tmp)
    return removed
