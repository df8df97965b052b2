"""Atomic writes on a local folder: a temporary sibling, fsynced and renamed into place; the leftovers of
writers that died, found by the pid in their name and removed; system errors that name the file meant."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

_TEMP = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")  # .<name>.<creator pid>.<random>.tmp (atomic_path)

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(value: str) -> str:
    """A string made safe as one path component (no separators, no dot-dot, bounded length)."""
    text = _SAFE.sub("_", str(value)).strip("._") or "_"
    return text[:100]


def _temp_sibling(path: Path) -> Path:
    """A new empty file ``.<name>.<pid>.<random>.tmp`` next to ``path``, readable as the finished file
    will be (the pid lets a later run tell a dead writer's leftovers from a live one's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is for others to read too
    return Path(tmp)


def _publish(tmp: Path, path: Path) -> None:
    """fsync ``tmp`` and rename it to ``path``."""
    with open(tmp, "rb") as fh:
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
    path = Path(path)
    try:
        tmp_path = _temp_sibling(path)
    except OSError as exc:
        raise named_error(exc, path, exc.filename if str(exc.filename).endswith(".tmp") else None) from exc
    try:
        yield tmp_path
        _publish(tmp_path, path)
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        named = named_error(exc, path, tmp_path)
        if named is exc:
            raise
        raise named from exc
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


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
