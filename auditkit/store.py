"""The Parquet store: atomic writes, hive partitions, manifest, streaming reads.

Layout under the store root::

    rounds/game=<game>/date=<yyyy-mm-dd>/part-<uuid>.parquet   stored rounds
    findings/game=<game>/date=<yyyy-mm-dd>/findings.parquet    findings of that partition
    _manifest/<sha256>.json                                   one record per ingested source file
    _quarantine/<sha256>.parquet                              its bad lines

Every file is written to a temporary sibling and renamed into place, so a
crash never leaves a half-written file (pyarrow datasets are not atomic).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "safe_component"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(value: str) -> str:
    """A string made safe as one path component (no separators, no dot-dot, bounded length)."""
    text = _SAFE.sub("_", str(value)).strip("._") or "_"
    return text[:100]


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; on success fsync and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
