"""What a source is: its SHA-256 (the identity rule: a content already stored is skipped), its quick key
(read before the full hash) and the error of a source that cannot be read.

A source is a JSONL file (gzip or not) or a main CSV file with its companions, identified by the
SHA-256 of its content: ingesting the same content twice, under any name, stores nothing twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .csv import companions_of

if TYPE_CHECKING:
    from ..store import SourceRecord, Store

__all__ = ["InputError", "source_sha256", "quick_key", "recognise", "identify", "is_csv", "QUICK_BYTES"]


class InputError(OSError):
    """A path that cannot be ingested at all (missing, unreadable, not a log)."""

    @classmethod
    def unreadable(cls, path: Path, exc: OSError) -> InputError:
        """The error of a source that could not be read: ``cannot read PATH: why``."""
        return cls(f"cannot read {path}: {exc.strerror or exc}")


def _source_files(path: Path) -> Iterator[tuple[Path, bytes]]:
    """The files of a source (a CSV main file, then its companions) and the tag each adds to its hashes."""
    yield path, b""
    if is_csv(path):
        for f in companions_of(path).values():
            yield f, b"\0" + f.name.split(".")[-2].encode() + b"\0"


@contextlib.contextmanager
def _open_regular(f: Path) -> Iterator[Any]:
    """``f`` opened for reading, InputError when it is not a regular file (a FIFO swapped in since
    :func:`discover` must not block the run)."""
    fd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{f} is not a regular file")
        yield fh


def source_sha256(path: Path) -> str:
    """SHA-256 of a source's content (a CSV main file together with its companions)."""
    h = hashlib.sha256()
    for f, tag in _source_files(path):
        h.update(tag)
        with _open_regular(f) as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


QUICK_BYTES = 1 << 20
"""Bytes read at each end of a file for its quick key."""


def quick_key(path: Path) -> str:
    """A cheap identity of a source, read before its full hash: the size and modification time of each
    of its files and the SHA-256 of each one's first and last :data:`QUICK_BYTES`.

    A source whose quick key a manifest entry holds is taken to be that entry's content, as rsync
    takes a file of the same size and time to be unchanged: a nightly run over a folder of files
    already ingested reads 2 MiB of each, not every byte. A file edited in its middle with its size
    and time put back would pass for the old one; ``auditkit verify`` reads every byte."""
    h = hashlib.sha256(b"quick-1")
    for f, tag in _source_files(path):
        with _open_regular(f) as fh:
            st = os.fstat(fh.fileno())
            h.update(tag + f"{st.st_size}:{st.st_mtime_ns}:".encode())
            h.update(fh.read(QUICK_BYTES))
            if st.st_size > 2 * QUICK_BYTES:
                fh.seek(st.st_size - QUICK_BYTES)
            h.update(fh.read(QUICK_BYTES))
    return h.hexdigest()


def recognise(path: Path, store: Store) -> tuple[SourceRecord | None, str, int]:
    """``(the manifest entry holding the source's quick key or None, its quick key, its size)``;
    InputError when it cannot be read."""
    try:
        quick = quick_key(path)
        return store.source_by_quick_key(quick), quick, path.stat().st_size
    except OSError as exc:
        raise InputError.unreadable(path, exc) from exc


def identify(path: Path, store: Store) -> tuple[str, int, str]:
    """``(SHA-256, size, quick key)`` of a source: the SHA-256 of the entry whose quick key it has, when
    the manifest holds one (the file is not read further), else of every byte."""
    known, quick, size = recognise(path, store)
    if known is not None:
        return known.sha256, size, quick
    try:
        return source_sha256(path), size, quick
    except OSError as exc:
        raise InputError.unreadable(path, exc) from exc


def is_csv(path: Path) -> bool:
    return path.name.lower().endswith(".csv")
