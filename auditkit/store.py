"""The Parquet store: atomic writes, hive partitions, manifest, streaming reads.

Layout under the store root::

    rounds/game=<game>/date=<yyyy-mm-dd>/part-<uuid>.parquet   stored rounds
    findings/game=<game>/date=<yyyy-mm-dd>/findings.parquet    findings of that partition
    _manifest/<sha256>.json                                   one record per ingested source file
    _manifest.checkpoint.json                                 the entries as of its writing, in one file
    _quarantine/<sha256>.parquet                              its bad lines (none: no file, format 2 on)
    rounds/game=<game>/date=<yyyy-mm-dd>/compact-<id>.parquet  small parts of many sources, read as one
    _compacted/<id>.json                                      which parts it replaces (auditkit.compaction)
    _store.json                                               the store's format version (STORE_FORMAT), and
                                                              the auditkit that stamped it

The root is a local folder, or an object-store URI (``s3://bucket/prefix``,
through pyarrow's file systems; any pyarrow or fsspec file system with
``Store(path, filesystem=fs)``). The commit point is the same on both: a source's
parts, index and quarantine are written first, each under a name of its own
(the source's hash and a random suffix), and its manifest entry last; until
that entry exists, readers skip them, and the next ingest of the source
removes them.

On a local folder every file is written to a temporary sibling and renamed
into place, so a crash never leaves a half-written file (pyarrow datasets are
not atomic). On object storage there is no rename (a copy is not atomic), but
an object appears whole or not at all: each file is encoded in memory (or, a
stream, spooled to a local temporary file) and uploaded in one PUT (or one
multipart upload, visible once completed), so
nothing half-written is ever visible, and a part is never overwritten (its
name is new). Findings and job state are replaced by one PUT (readers see the
old object or the new one). The store's lock is ``flock`` on a lock file: in
the folder for a local store, in ``$TMPDIR/auditkit-locks/`` for an object
store, so one client host commits to an object store (docs/scaling.md).
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import platform
import re
import tempfile
import time
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

__all__ = ["atomic_path", "named_error", "safe_component", "pid_alive", "remove_stale_temps", "StoreLocked", "CorruptStore",
           "LOCK_NAME"]

log = logging.getLogger("auditkit.store")
LOCK_NAME = ".auditkit.lock"
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


class StoreLocked(OSError):
    """Another process holds the store's lock past the timeout."""


class CorruptStore(OSError):
    """A store file that cannot be read (cut, overwritten): the message names it."""


class NewerStore(OSError):
    """A store (or a manifest entry) written by a newer auditkit, in a format this one does not read."""


# ---- the store ------------------------------------------------------------------------
import json  # noqa: E402
import uuid  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from typing import TYPE_CHECKING, Any, BinaryIO  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from . import games as registered  # noqa: E402
from .schema import FINDINGS, QUARANTINE, schema_for  # noqa: E402

if TYPE_CHECKING:  # pandas only at the edge (to_pandas): ingest and its workers start without it
    import pandas as pd

__all__ += ["Store", "SourceRecord", "INDEX", "is_uri", "ParquetStream", "ROW_GROUP", "NewerStore", "STORE_FORMAT",
            "STORE_FILE", "CHECKPOINT"]

STORE_FORMAT = 2
"""The store's format version, in ``_store.json`` and in each manifest entry written (``store_format``), every
older one read. 0: written before the stamp (auditkit 0.1.0 and earlier). 1: the stamp. 2: the manifest
checkpoint (:data:`CHECKPOINT`), and no quarantine file for a source without a bad line (a format-1 writer
rewriting an entry would leave the checkpoint stale: it must refuse the store). Raise it when a change to the
store's files would be misread by the auditkit before it; this one refuses a higher one."""
STORE_FILE = "_store.json"
"""The store's stamp: ``{"store_format": 2, "written_by": "auditkit 0.1.0"}``, written by its first writer (and
raised by the first writer of a newer format)."""
CHECKPOINT = "_manifest.checkpoint.json"
"""Every manifest entry as of its writing, in one file: ``{"store_format", "written_by", "entries": {entry file
name: {"size", "mtime_ns", "entry"}}}``. Readers list ``_manifest/`` once (names, sizes and times: no entry
opened), take from it the entries whose file is there at the size and time copied, and read only the others
(newer than it, or changed since) from their own files; the entries stay the commit point. Rewritten atomically by the
store's sole writer (:meth:`Store.sole_writer`) when the entries beyond it are many (:data:`CHECKPOINT_EVERY`,
or a tenth of it at the end of a command); removed before an entry is rewritten (:func:`~auditkit.integrity.rebuild_index`)."""
CHECKPOINT_EVERY = 2000
"""Entries beyond the checkpoint that make a sole writer rewrite it at once (else at least this many or as many
as it holds, whichever is more, within a command): its rewrites cost, in all, about twice its final size."""


def _written_by() -> str:
    from . import __version__

    return f"auditkit {__version__}"


def _newer(what: str, written_by: object, fmt: object) -> NewerStore:
    return NewerStore(f"{what} was written by {written_by or 'a newer auditkit'} (store format {fmt}); this is "
                      f"{_written_by()}, which reads store formats up to {STORE_FORMAT}: upgrade auditkit to read it")

ROW_GROUP = 131_072
"""Rows per Parquet row group (a scan batch reads about one)."""
SMALL_FILE_ROWS = 1024
"""A table of fewer rows is written with snappy, not zstd: zstd costs 2.8 ms on a 5-round part (its
context set up for each of 30-odd columns) against 1.2, and the file comes out larger (11.0 KiB, 10.6)."""


def compression_for(table: pa.Table) -> str:
    """The Parquet codec of a file of ``table``: zstd, snappy for a small one (:data:`SMALL_FILE_ROWS`)."""
    return "zstd" if table.num_rows >= SMALL_FILE_ROWS else "snappy"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _index_schema() -> pa.Schema:
    """:data:`INDEX` with the version of the hashes it holds in its metadata."""
    from .ingest.hashing import VERSION, VERSION_KEY

    return INDEX.with_metadata({VERSION_KEY: VERSION})
GLOB_CHARS = set("*?[")


def _glob_matches(rel: str, pattern: str) -> bool:
    """Whether a relative path matches a glob whose ``*`` stays within one path component."""
    import fnmatch

    parts, want = rel.split("/"), pattern.split("/")
    return len(parts) == len(want) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, want, strict=True))
INDEX = pa.schema([("id_hash", pa.uint64()), ("line_hash", pa.uint64()), ("round_id", pa.string()),
                   ("source_file", pa.string()), ("source_line", pa.int64())])


@dataclass
class SourceRecord:
    """The manifest entry of one ingested source file: what it held and where it went."""

    sha256: str
    path: str
    size: int
    format: str
    lines_read: int = 0
    stored: int = 0
    already_stored: int = 0
    quarantined: int = 0
    blank: int = 0
    attached: int = 0  # CSV companion rows (hands, wagers, events) read into their round
    games: dict[str, int] = field(default_factory=dict)
    partitions: list[str] = field(default_factory=list)
    ingested_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    files: list[dict[str, Any]] | None = None  # path, rows, bytes, sha256 of each file (None: not recorded)
    quick: str | None = None  # the source's quick key (auditkit.ingest.sources.quick_key; None: not recorded)
    store_format: int = 0  # the STORE_FORMAT it was written in (0: before the stamp)
    written_by: str = ""   # "auditkit 0.1.0" ("": before the stamp)

    @classmethod
    def read(cls, data: dict[str, Any], where: str) -> SourceRecord:
        """A manifest entry's record; NewerStore for one of a newer format, or with keys this version does not know."""
        fmt = data.get("store_format", 0)
        if not isinstance(fmt, int) or fmt > STORE_FORMAT:
            raise _newer(f"store manifest entry {where}", data.get("written_by"), fmt)
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise NewerStore(f"store manifest entry {where} has keys {_written_by()} (store format {STORE_FORMAT}) "
                             f"does not know: {', '.join(unknown)}; written by a newer auditkit?")
        return cls(**data)

    @property
    def balanced(self) -> bool:
        """Every line read is stored, already stored, quarantined, blank (or a header) or attached."""
        return self.lines_read == (self.stored + self.already_stored + self.quarantined + self.blank
                                   + self.attached)


def write_parquet_atomic(table: pa.Table, path: Path) -> Path:
    """Write a Parquet file through a temporary sibling and a rename."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP)
    return path


def _buffered(sink: Any) -> pa.NativeFile:
    """``sink`` (a Python file) behind a buffer of 256 KiB: Parquet's writer makes a hundred small writes a
    file or more, each a call into Python (and a hash update) unbuffered. Closing it flushes ``sink``, not closes it."""
    return pa.BufferedOutputStream(pa.PythonFile(sink, mode="w"), buffer_size=1 << 18)


class ParquetStream:
    """A Parquet file of a store written table by table, visible only whole: on a local store into a
    temporary sibling renamed into place by :meth:`close`; on object storage into a local temporary
    file (memory stays bounded however many rows), uploaded in one piece by :meth:`close`.
    :meth:`abort` leaves nothing (a killed process leaves only a ``.tmp`` file, removed later).
    ``dictionary``: the columns dictionary-encoded (True: all)."""

    def __init__(self, files: _LocalFiles | _ObjectFiles, rel: str, schema: pa.Schema,
                 on_close: Any = None, dictionary: bool | list[str] = True):
        from .integrity import HashingFile

        self.files, self.rel, self.schema, self.on_close = files, rel, schema, on_close
        self.tmp: Path | None = None
        with self._naming():
            if files.remote:  # removed by the system when closed
                spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close or abort)
            else:
                self.tmp = _temp_sibling(Path(files.path(rel)))
                spool = open(self.tmp, "wb")  # noqa: SIM115 (closed by close or abort)
            self._fh = HashingFile(spool)
            try:  # it writes the file's first bytes
                self._sink = _buffered(self._fh)
                self._writer = pq.ParquetWriter(self._sink, schema, compression="zstd", use_dictionary=dictionary)
            except BaseException:
                spool.close()
                if self.tmp is not None:
                    self.tmp.unlink(missing_ok=True)
                raise
        self.rows = 0

    @contextlib.contextmanager
    def _naming(self) -> Iterator[None]:
        """A system error (a full disk) raised as naming the file written, not its temporary file."""
        try:
            yield
        except OSError as exc:
            named = named_error(exc, self.files.path(self.rel), self.tmp)
            if named is exc:
                raise
            raise named from exc

    def write(self, table: pa.Table) -> None:
        """Append rows (row groups of at most :data:`ROW_GROUP` rows)."""
        with self._naming():
            self._writer.write_table(table.select(self.schema.names).cast(self.schema), row_group_size=ROW_GROUP)
        self.rows += table.num_rows

    def close(self) -> None:
        """Finish the file and make it visible; on failure the caller aborts (the temporary file is removed)."""
        with self._naming():
            self._writer.close()
            self._sink.close()  # flushed into the file, still open
            size, sha = self._fh.size, self._fh.sha.hexdigest()
            if self.tmp is None:
                try:
                    self._fh.fh.seek(0)
                    self.files.upload(self.rel, self._fh.fh)
                finally:
                    self._fh.fh.close()
            else:
                self._fh.fh.close()
                _publish(self.tmp, Path(self.files.path(self.rel)))
        if self.on_close is not None:
            self.on_close(self.rel, self.rows, size, sha)

    def abort(self) -> None:
        """Drop the file: never raises (a failed write's abort meets the same full disk), leaves no temporary file."""
        with contextlib.suppress(OSError, pa.ArrowException):
            self._writer.close()
        self._writer.is_open = False  # its finalizer would close it again, and print the same error
        with contextlib.suppress(OSError, ValueError, pa.ArrowException):
            self._sink.close()
        with contextlib.suppress(OSError):  # a buffered file's close writes what it holds: a full disk fails it
            self._fh.fh.close()
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)


class _LazyStream:
    """A stream (:class:`ParquetStream`, :class:`_HeldStream`) opened at its first :meth:`write`: closed unwritten,
    it leaves no file and records none."""

    def __init__(self, open_stream: Any):
        self._open, self.stream = open_stream, None

    def write(self, table: pa.Table) -> None:
        if self.stream is None:
            self.stream = self._open()
        self.stream.write(table)

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()

    def abort(self) -> None:
        if self.stream is not None:
            self.stream.abort()


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_uri(root: str | Path) -> bool:
    """True for an object-store URI (``s3://bucket/prefix``); a ``file://`` URI is a local folder."""
    return isinstance(root, str) and bool(_URI.match(root)) and not root.startswith("file://")


class _Files:
    """Where a store's files are (a folder, an object store, memory): what they share."""

    def stream(self, rel: str, schema: pa.Schema, on_close: Any, dictionary: bool | list[str] = True) -> Any:
        """A file written table by table, visible whole at its ``close`` (:class:`ParquetStream`)."""
        return ParquetStream(self, rel, schema, on_close, dictionary)  # type: ignore[arg-type]


class _LocalFiles(_Files):
    """A store in a local folder: each file written to a temporary sibling, fsynced and renamed."""

    remote = False

    def __init__(self, root: Path):
        self.root = root

    def path(self, rel: str) -> str:
        return str(self.root / rel)

    def files(self, pattern: str) -> list[str]:
        """Relative paths of the entries matching a glob (``*`` within one path component, hidden names
        too, as :meth:`pathlib.Path.glob` matches them; strings all along: 20,000 entries in 40 ms)."""
        return [rel.replace(os.sep, "/") for rel in glob.glob(pattern, root_dir=self.root, include_hidden=True)]

    def children(self, rel: str) -> list[str]:
        folder = self.root / rel
        return [p.name for p in folder.iterdir()] if folder.is_dir() else []

    def is_dir(self, rel: str) -> bool:
        return (self.root / rel).is_dir()

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()

    def read_bytes(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def write_bytes(self, rel: str, data: bytes) -> None:
        with atomic_path(self.root / rel) as tmp:
            tmp.write_bytes(data)

    def write_parquet(self, rel: str, table: pa.Table) -> tuple[int, str]:
        """Write a Parquet file atomically; (its size, the SHA-256 of the bytes written)."""
        from .integrity import HashingFile

        with atomic_path(self.root / rel) as tmp, open(tmp, "wb") as fh:
            sink = HashingFile(fh)
            out = _buffered(sink)
            pq.write_table(table, out, compression=compression_for(table), row_group_size=ROW_GROUP)
            out.close()
        return sink.size, sink.sha.hexdigest()

    def sizes(self, folder: str) -> dict[str, int]:
        """Relative path -> size of every file under ``folder`` (temporary files left out)."""
        base = self.root / folder
        if not base.is_dir():
            return {}
        out = {}
        for dirpath, _dirs, names in os.walk(base):
            rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            for name in names:
                if not name.startswith("."):
                    with contextlib.suppress(OSError):
                        out[f"{rel}/{name}"] = os.stat(os.path.join(dirpath, name)).st_size
        return out

    def entries(self, folder: str) -> dict[str, tuple[int, int]]:
        """Name -> (size, mtime in ns) of the ``*.json`` files directly in ``folder`` (one scan, no file opened)."""
        out = {}
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root / folder) as it:
            for e in it:
                if e.name.endswith(".json") and not e.name.startswith("."):
                    with contextlib.suppress(OSError):
                        st = e.stat()
                        out[e.name] = (st.st_size, st.st_mtime_ns)
        return out

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def dataset(self, rels: list[str], schema: pa.Schema) -> ds.Dataset:
        return ds.dataset([self.path(r) for r in rels], schema=schema, format="parquet")

    def num_rows(self, rel: str) -> int:
        return pq.ParquetFile(self.path(rel)).metadata.num_rows

    def lock_file(self) -> Path:
        return self.root / LOCK_NAME


class _ObjectFiles(_Files):
    """A store on object storage (S3 and the like, through a pyarrow file system): no rename, so
    every file is encoded in memory (or spooled to a local file) and uploaded whole, once (see the
    module docstring)."""

    remote = True

    def __init__(self, fs: Any, base: str, uri: str):
        self.fs, self.base, self.uri = fs, base.rstrip("/"), uri

    @classmethod
    def open(cls, root: str, filesystem: Any = None) -> _ObjectFiles:
        import pyarrow.fs as pafs

        if filesystem is None:
            fs, base = pafs.FileSystem.from_uri(root)  # s3://bucket/prefix?endpoint_override=...&scheme=http
        else:
            fs = filesystem if isinstance(filesystem, pafs.FileSystem) else \
                pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))  # an fsspec file system
            base = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]+://", "", str(root)).split("?", 1)[0]
        return cls(fs, base, root)

    def path(self, rel: str) -> str:
        return f"{self.base}/{rel}"

    def _infos(self, rel: str, recursive: bool) -> list[Any]:
        import pyarrow.fs as pafs

        return self.fs.get_file_info(pafs.FileSelector(self.path(rel).rstrip("/"), recursive=recursive,
                                                       allow_not_found=True))

    def files(self, pattern: str) -> list[str]:
        """Relative paths of the objects matching a glob, from one listing under its literal prefix."""
        import pyarrow.fs as pafs

        want = pattern.split("/")
        literal = []
        for part in want[:-1]:
            if GLOB_CHARS & set(part):
                break
            literal.append(part)
        out = []
        base = self.base.lstrip("/") + "/"  # some file systems (fsspec's memory) answer with a leading /
        for info in self._infos("/".join(literal), recursive=True):
            path = info.path.lstrip("/")
            if info.type != pafs.FileType.File or not path.startswith(base):
                continue
            if _glob_matches(rel := path[len(base):], pattern):
                out.append(rel)
        return out

    def children(self, rel: str) -> list[str]:
        return [info.base_name for info in self._infos(rel, recursive=False)]

    def is_dir(self, rel: str) -> bool:
        import pyarrow.fs as pafs

        return self.fs.get_file_info(self.path(rel)).type == pafs.FileType.Directory

    def exists(self, rel: str) -> bool:
        import pyarrow.fs as pafs

        return self.fs.get_file_info(self.path(rel)).type != pafs.FileType.NotFound

    def read_bytes(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self.path(rel)) as fh:
            return fh.read()

    def write_bytes(self, rel: str, data: bytes) -> None:
        with self.fs.open_output_stream(self.path(rel)) as out:  # visible when the upload completes
            out.write(data)

    def upload(self, rel: str, fh: BinaryIO) -> None:
        """An object from a local file, read in blocks of 8 MiB, each sent before the next is read (a
        stream uploads in the background and would otherwise queue the whole file in memory); visible
        when the upload completes."""
        with self.fs.open_output_stream(self.path(rel)) as out:
            while block := fh.read(8 << 20):
                out.write(block)
                out.flush()  # waits for the uploads under way

    def write_parquet(self, rel: str, table: pa.Table) -> tuple[int, str]:
        import hashlib

        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression=compression_for(table))  # encoded whole before a byte is uploaded
        data = sink.getvalue().to_pybytes()
        self.write_bytes(rel, data)
        return len(data), hashlib.sha256(data).hexdigest()

    def sizes(self, folder: str) -> dict[str, int]:
        """Relative path -> size of every object under ``folder``."""
        import pyarrow.fs as pafs

        base = self.base.lstrip("/") + "/"
        return {info.path.lstrip("/")[len(base):]: info.size for info in self._infos(folder, recursive=True)
                if info.type == pafs.FileType.File and info.path.lstrip("/").startswith(base)}

    def entries(self, folder: str) -> dict[str, tuple[int, int]]:
        """Name -> (size, mtime in ns, 0 when not told) of the ``*.json`` objects directly under ``folder``."""
        return {i.base_name: (i.size, i.mtime_ns or 0) for i in self._infos(folder, recursive=False)
                if i.base_name.endswith(".json") and not i.base_name.startswith(".") and i.size is not None}

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.path(rel))

    def dataset(self, rels: list[str], schema: pa.Schema) -> ds.Dataset:
        return ds.dataset([self.path(r) for r in rels], schema=schema, format="parquet", filesystem=self.fs)

    def num_rows(self, rel: str) -> int:
        with self.fs.open_input_file(self.path(rel)) as fh:
            return pq.ParquetFile(fh).metadata.num_rows

    def lock_file(self) -> Path:
        """A local lock file for this URI: one client host commits to an object store."""
        import hashlib

        folder = Path(tempfile.gettempdir()) / "auditkit-locks"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{hashlib.sha256(self.uri.split('?', 1)[0].encode()).hexdigest()[:16]}.lock"


class _HeldStream:
    """An index or quarantine of an in-memory store, written table by table and kept as one table (not
    encoded) at :meth:`close`, as :class:`ParquetStream` publishes its file. Its tables count against
    the store's limit as they come; past it, they go on into a Parquet file of the spill folder."""

    def __init__(self, files: _MemoryFiles, rel: str, schema: pa.Schema, on_close: Any):
        self.files, self.rel, self.schema, self.on_close = files, rel, schema, on_close
        self.tables: list[pa.Table] = []  # held while it waits for close, counted in the store's held bytes
        self.rows = self.bytes = 0
        self.spill: tuple[Path, pq.ParquetWriter] | None = None

    def _release(self) -> None:
        """Forget the tables held, and their bytes in the store's count."""
        self.files.held -= sum(t.nbytes for t in self.tables)
        self.tables = []

    def write(self, table: pa.Table) -> None:
        table = table.select(self.schema.names).cast(self.schema)
        self.rows += table.num_rows
        self.bytes += table.nbytes
        if self.spill is None and self.files.held + table.nbytes > self.files.limit:
            path = self.files.spill_path()
            self.spill = (path, pq.ParquetWriter(path, self.schema, compression="zstd"))
            for held in self.tables:
                self.spill[1].write_table(held, row_group_size=ROW_GROUP)
            self._release()
        if self.spill is not None:
            self.spill[1].write_table(table, row_group_size=ROW_GROUP)
        else:
            self.tables.append(table)
            self.files.held += table.nbytes

    def close(self) -> None:
        if self.spill is not None:
            self.spill[1].close()
            self.files.spilled[self.rel] = (self.spill[0], self.bytes)
            size = self.bytes
        else:
            table = pa.concat_tables(self.tables) if self.tables else self.schema.empty_table()
            self._release()
            size, _sha = self.files.write_parquet(self.rel, table)
        if self.on_close is not None:
            self.on_close(self.rel, self.rows, size, "")

    def abort(self) -> None:
        self._release()
        if self.spill is not None:
            self.spill[1].close()
            self.spill[0].unlink(missing_ok=True)
            self.spill = None


class _MemoryFiles(_Files):
    """A store held in this process's memory, for a one-shot validation that reads its rounds back once:
    each Parquet file (a part, an index, a quarantine) is kept as the Arrow table written, never encoded
    nor decoded, up to ``limit`` bytes of them; past that, files go to ``spill`` (a folder) as Parquet.
    A file's size is its size in memory, wherever it is; its SHA-256 is not recorded (no bytes were
    written). Never sent to a worker: it is this process's."""

    remote = True  # no folder of its own: nothing renamed into place
    fs = None

    def __init__(self, limit: int, spill: Path):
        self.limit, self.held, self.spill = limit, 0, spill
        self.tables: dict[str, pa.Table] = {}
        self.schemas: dict[str, pa.Schema] = {}  # each held table's schema as written
        self.spilled: dict[str, tuple[Path, int]] = {}  # rel -> (its Parquet file in spill, its size in memory)
        self.blobs: dict[str, bytes] = {}  # the other files (manifest entries)

    def __reduce__(self) -> Any:
        raise TypeError("an in-memory store is read in its own process only")

    def path(self, rel: str) -> str:
        return f"memory:{rel}"

    def _names(self) -> list[str]:
        return [*self.tables, *self.spilled, *self.blobs]

    def files(self, pattern: str) -> list[str]:
        return [rel for rel in self._names() if _glob_matches(rel, pattern)]

    def children(self, rel: str) -> list[str]:
        prefix = rel.rstrip("/") + "/"
        return sorted({name[len(prefix):].split("/", 1)[0] for name in self._names() if name.startswith(prefix)})

    def is_dir(self, rel: str) -> bool:
        return bool(self.children(rel))

    def exists(self, rel: str) -> bool:
        return rel in self.tables or rel in self.spilled or rel in self.blobs or self.is_dir(rel)

    def read_bytes(self, rel: str) -> bytes:
        if rel not in self.blobs:
            raise FileNotFoundError(2, "No such file", self.path(rel))
        return self.blobs[rel]

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.blobs[rel] = bytes(data)

    def stream(self, rel: str, schema: pa.Schema, on_close: Any, dictionary: bool | list[str] = True) -> Any:
        return _HeldStream(self, rel, schema, on_close)

    def write_parquet(self, rel: str, table: pa.Table) -> tuple[int, str]:
        """Keep a file's table, its source file (the same name on every row) dictionary-encoded: (its
        size in memory, no hash)."""
        held = table
        at = table.schema.get_field_index("source_file")
        if at >= 0 and pa.types.is_string(table.schema.field(at).type):
            import pyarrow.compute as pc

            field = table.schema.field(at)
            held = table.set_column(at, field.with_type(pa.dictionary(pa.int32(), pa.string())),
                                    pc.dictionary_encode(table.column(at)))
        size = held.nbytes
        if self.held + size <= self.limit:
            self.tables[rel], self.schemas[rel], self.held = held, table.schema, self.held + size
        else:
            path = self.spill_path()
            pq.write_table(table, path, compression="zstd", row_group_size=ROW_GROUP)
            self.spilled[rel] = (path, size)
        return size, ""

    def spill_path(self) -> Path:
        """A new file of the spill folder."""
        return self.spill / f"{uuid.uuid4().hex}.parquet"

    def sizes(self, folder: str) -> dict[str, int]:
        prefix = folder.rstrip("/") + "/"
        out = {rel: t.nbytes for rel, t in self.tables.items() if rel.startswith(prefix)}
        out.update((rel, size) for rel, (_p, size) in self.spilled.items() if rel.startswith(prefix))
        return out

    def entries(self, folder: str) -> dict[str, tuple[int, int]]:
        """Name -> (size, 0) of the ``*.json`` blobs directly under ``folder``."""
        prefix = folder.rstrip("/") + "/"
        return {rel[len(prefix):]: (len(data), 0) for rel, data in self.blobs.items()
                if rel.startswith(prefix) and rel.endswith(".json") and "/" not in rel[len(prefix):]}

    def delete(self, rel: str) -> None:
        table = self.tables.pop(rel, None)
        if table is not None:
            self.held -= table.nbytes
            del self.schemas[rel]
        spilled = self.spilled.pop(rel, None)
        if spilled is not None:
            spilled[0].unlink(missing_ok=True)
        self.blobs.pop(rel, None)

    def _dataset(self, rel: str, schema: pa.Schema | None) -> ds.Dataset:
        if rel in self.spilled:
            return ds.dataset(self.spilled[rel][0], schema=schema, format="parquet")
        if rel not in self.tables:
            raise FileNotFoundError(2, "No such file", self.path(rel))
        schema = schema or self.schemas[rel]
        return ds.InMemoryDataset(self.tables[rel].select(schema.names).cast(schema))

    def dataset(self, rels: list[str], schema: pa.Schema | None) -> ds.Dataset:
        if len(rels) == 1:
            return self._dataset(rels[0], schema)
        return ds.dataset([self._dataset(r, schema) for r in rels]) if rels else \
            ds.InMemoryDataset(schema.empty_table())  # type: ignore[union-attr]

    def num_rows(self, rel: str) -> int:
        return self.tables[rel].num_rows if rel in self.tables else self._dataset(rel, None).count_rows()

    def lock_file(self) -> Path:
        return self.spill / LOCK_NAME


class Store:
    """A folder (or an object-store prefix) of hive-partitioned Parquet rounds, findings, manifest and
    quarantine.

    ``root`` is a local path or a URI (``s3://bucket/prefix``, with pyarrow's options as a query:
    ``?region=..&endpoint_override=host:port&scheme=http``); ``filesystem`` (a pyarrow or fsspec
    file system) serves the path given as ``root`` instead. A store pickles, so a worker process
    or a Dask task reads the same store.
    """

    def __init__(self, root: str | Path, filesystem: Any = None):
        if filesystem is not None or is_uri(root):
            self.root: Path | str = str(root)  # the URI as given (with its query of options)
            self._files: _LocalFiles | _ObjectFiles | _MemoryFiles = _ObjectFiles.open(str(root), filesystem)
        else:
            if isinstance(root, str) and root.startswith("file://"):
                root = root[len("file://"):]
            self.root = Path(root)
            self._files = _LocalFiles(self.root)
        self._written: dict[str, list[dict[str, Any]]] = {}  # sha16 -> files written, recorded at commit

    @classmethod
    def in_memory(cls, limit: int, spill: Path) -> Store:
        """A store held in this process's memory, its files up to ``limit`` bytes, the rest written to the
        folder ``spill``: what a one-shot validation writes and reads back once, mostly never encoded."""
        store = cls.__new__(cls)
        store.root, store._files, store._written = "memory:", _MemoryFiles(limit, Path(spill)), {}
        return store

    def __getstate__(self) -> dict[str, Any]:
        """What a pickled copy (a worker's) carries: not the files this object wrote and has not committed
        (a worker reports its own: :meth:`written`), nor the writer's quick-key lookup."""
        state = dict(self.__dict__)
        state["_written"] = {}
        for name in ("_quick_cache", "_sole", "_leftovers", "_compactor", "_known", "_held"):  # a worker writes parts only
            state.pop(name, None)
        return state

    _pinned: frozenset[str] | None = None  # the committed sources of a read view (see pinned)
    _layout_cache: Any = None              # its Layout (see layout)
    _layout_key: frozenset[str] = frozenset()
    _quick_cache: dict[str, SourceRecord] | None = None  # quick key -> entry: see source_by_quick_key
    _sole = False                                  # the store's only writer: see sole_writer
    _leftovers: dict[str, list[str]] | None = None  # then: sha16 -> files of earlier runs, listed once
    _compactor: Any = None                          # then: its small parts (auditkit.compaction.Compactor)

    def pinned(self) -> Store:
        """A read view of this store as it is now: the committed sources listed once, then reused by
        every read of the view (and of its pickled copies on workers). A validation run uses one: its
        partitions see one commit point, and the manifest is listed once, not once a partition."""
        import copy

        view = copy.copy(self)
        records = self.manifest()
        view._pinned = frozenset(r.sha256[:16] for r in records)
        view._known = None  # (a sole writer's: its own)
        view._layout_cache = self._build_layout(records)
        return view

    def _build_layout(self, records: list[SourceRecord]) -> Any:
        from .compaction import apply
        from .compaction import records as compactions
        from .integrity import build_layout

        listing = {**self._files.sizes("rounds"), **self._files.sizes("_index")}
        layout = build_layout(records, listing)
        apply(layout, compactions(self))  # small parts read from their compacted part
        layout.check()
        return layout

    def layout(self) -> Any:
        """The committed store as its manifest lists it (:class:`auditkit.integrity.Layout`), checked:
        unlisted files warned about once, CorruptStore naming a listed part missing or of another size.
        A read view keeps its own; a store built again when its manifest has changed."""
        if self._pinned is not None:
            return self._layout_cache
        key = frozenset(self._files.files("_manifest/*.json"))
        if self._layout_cache is None or key != self._layout_key:
            self._layout_cache, self._layout_key = self._build_layout(self.manifest()), key
        return self._layout_cache

    def _check_rows(self, game: str, date: str, rows: int) -> None:
        """CorruptStore when a partition read holds another number of rows than its manifest says."""
        want = self.layout().rows.get((game, date))
        if want is not None and rows != want:
            raise CorruptStore(f"store damaged: the parts of {game}/{date} hold {rows} rows, the manifest says "
                               f"{want} ({', '.join(self._part_files(game, date))}; auditkit verify STORE)")

    def _record_file(self, rel: str, rows: int, size: int, sha: str) -> None:
        from .integrity import file_entry

        sha16 = rel.rsplit("/", 1)[1].removeprefix("part-")[:16]
        self._written.setdefault(sha16, []).append(file_entry(rel, rows, size, sha))

    @property
    def remote(self) -> bool:
        """True for a store on object storage (no rename: see the module docstring)."""
        return self._files.remote

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # ---- the lock -----------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, timeout: float, *, shared: bool = False, command: str = "", sweep: bool = True) -> Iterator[float]:
        """Hold the store's lock (``fcntl.flock`` on ``<store>/.auditkit.lock``); yields when it was taken.

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

        path = self._files.lock_file()
        if not self.remote:
            root = Path(self.root)
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
                        raise StoreLocked(f"store {self.root} is locked by {holder}"
                                          f" (waited {timeout:g} s; --lock-timeout to wait longer)") from None
                    if not waited:
                        log.info("waiting up to %g s for the lock on %s", timeout, self.root)
                        waited = True
                    time.sleep(0.1)
            taken = time.time()
            if not shared:
                os.ftruncate(fd, 0)
                since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(taken))
                os.pwrite(fd, f"pid {os.getpid()} on {platform.node()} ({command or 'auditkit'}) since {since}\n"
                          .encode(), 0)
                if sweep:
                    self.remove_stale_temps(taken)
            with contextlib.nullcontext() if shared else self.sole_writer():
                yield taken
            if not shared:
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # releases the lock

    def remove_stale_temps(self, older_than: float) -> list[Path]:
        """Remove the temporary files in the store written before ``older_than`` or whose writer is gone
        (an object store has none: an unfinished upload is never visible)."""
        if self.remote:
            return []
        removed = []
        for tmp in Path(self.root).glob("**/.*.tmp"):
            with contextlib.suppress(OSError):
                if tmp.is_file() and _stale(tmp, older_than):
                    tmp.unlink()
                    removed.append(tmp)
        if removed:
            log.warning("removed %d temporary file(s) that an interrupted run left in %s", len(removed), self.root)
        return removed

    # ---- paths --------------------------------------------------------------------------
    def _partition(self, kind: str, game: str, date: str) -> str:
        if game not in registered.names():
            raise ValueError(f"unknown game {game!r}")
        if not _DATE.match(date):
            raise ValueError(f"bad partition date {date!r}")
        return f"{kind}/game={game}/date={date}"

    @staticmethod
    def is_store(path: str | Path, filesystem: Any = None) -> bool:
        """True when ``path`` is a store (it has a manifest or rounds)."""
        if filesystem is None and not is_uri(path):
            p = Path(path)
            return p.is_dir() and ((p / "_manifest").is_dir() or (p / "rounds").is_dir())
        files = Store(path, filesystem)._files
        return files.is_dir("_manifest") or files.is_dir("rounds")

    # ---- small files (job state) --------------------------------------------------------
    def read_text(self, rel: str) -> str | None:
        """A small text file of the store (``_jobs/<name>.json``), or None when there is none."""
        self.check_format()
        return self._files.read_bytes(rel).decode("utf-8") if self._files.exists(rel) else None

    def text_files(self, pattern: str) -> list[str]:
        """The small files of the store matching a glob (``_jobs/*.json``), relative to it."""
        self.check_format()
        return sorted(self._files.files(pattern))

    def write_text(self, rel: str, text: str) -> None:
        """Replace a small text file of the store, atomically (a rename, or one upload)."""
        self._files.write_bytes(rel, text.encode("utf-8"))

    # ---- manifest -----------------------------------------------------------------------
    _format_checked = False  # the stamp read and found readable (see check_format)

    def check_format(self) -> None:
        """NewerStore when the store's stamp (:data:`STORE_FILE`) says a newer format than this auditkit reads;
        CorruptStore when the stamp is not one. A store without a stamp was written before it (format 0)."""
        if self._format_checked:
            return
        if self._files.exists(STORE_FILE):
            try:
                stamp = json.loads(self._files.read_bytes(STORE_FILE).decode("utf-8"))
                fmt = stamp["store_format"]
            except (ValueError, TypeError, KeyError) as exc:
                raise CorruptStore(f"store stamp {self._files.path(STORE_FILE)} is unreadable ({exc})") from None
            if not isinstance(fmt, int) or fmt > STORE_FORMAT:
                raise _newer(f"store {self.root}", stamp.get("written_by"), fmt)
            self._stamped = fmt
        self._format_checked = True

    _stamped = 0  # the format of the store's stamp (0: none)

    def _stamp(self) -> None:
        """Write the store's stamp when it has none or an older one (its first writer, or the first of this
        format: an older auditkit then refuses the store rather than misread it)."""
        self.check_format()
        if self._stamped < STORE_FORMAT:
            self._stamped = STORE_FORMAT
            self._files.write_bytes(STORE_FILE, json.dumps({"store_format": STORE_FORMAT, "written_by": _written_by()},
                                                           indent=1).encode("utf-8"))

    def _source_record(self, rel: str) -> SourceRecord:
        """A manifest entry read back; CorruptStore when it is not one, NewerStore when a newer auditkit wrote it."""
        try:
            return SourceRecord.read(json.loads(self._files.read_bytes(rel).decode("utf-8")), self._files.path(rel))
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"store manifest entry {self._files.path(rel)} is unreadable ({exc})") from None

    def manifest(self) -> list[SourceRecord]:
        """Every committed source, oldest first: the entries listed in ``_manifest/``, those the checkpoint
        holds taken from it (:data:`CHECKPOINT`), the others read from their files."""
        self.check_format()
        if self._known is None or not self._sole:
            listed = self._files.entries("_manifest")
            held = self.read_checkpoint()
            known, same = {}, 0
            for name, stat in listed.items():
                copy = held.get(name)
                if copy is not None and copy[0] == stat:
                    known[name], same = copy[1], same + 1
                else:
                    known[name] = self._source_record(f"_manifest/{name}")
            self._known, self._held = known, same
        return sorted(self._known.values(), key=lambda r: (r.ingested_at, r.path))

    _known: dict[str, SourceRecord] | None = None  # entry file name -> entry, as the last manifest() read them
    _held = 0                                      # how many of them the checkpoint held

    def read_checkpoint(self) -> dict[str, tuple[tuple[int, int], SourceRecord]]:
        """Entry file name -> (its size and mtime when copied, its copy) of the entries the checkpoint holds (none
        when there is none, or when it is unreadable: a warning, and every entry is read from its file;
        ``auditkit verify`` reports it); NewerStore for a newer one."""
        if not self._files.exists(CHECKPOINT):
            return {}
        where = self._files.path(CHECKPOINT)
        try:
            data = json.loads(self._files.read_bytes(CHECKPOINT).decode("utf-8"))
            fmt = data.get("store_format")
            if not isinstance(fmt, int) or fmt > STORE_FORMAT:
                raise _newer(f"store manifest checkpoint {where}", data.get("written_by"), fmt)
            return {name: ((int(e["size"]), int(e["mtime_ns"])), SourceRecord.read(e["entry"], f"{where} ({name})"))
                    for name, e in data["entries"].items()}
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("store manifest checkpoint %s is unreadable (%s): every entry read from its own file "
                        "(auditkit verify %s)", where, exc, self.root)
            return {}

    def write_checkpoint(self) -> int:
        """Write the checkpoint of every committed entry, atomically (the caller is the sole writer); their number."""
        self.manifest()
        assert self._known is not None
        stats = self._files.entries("_manifest")
        copies = {name: {"size": stats[name][0], "mtime_ns": stats[name][1], "entry": rec.__dict__}
                  for name, rec in sorted(self._known.items()) if name in stats}
        data = {"store_format": STORE_FORMAT, "written_by": _written_by(), "entries": copies}
        self._files.write_bytes(CHECKPOINT, json.dumps(data, separators=(",", ":")).encode("utf-8"))
        self._held = len(copies)
        return len(copies)

    def drop_checkpoint(self) -> None:
        """Remove the checkpoint (before an entry is rewritten: readers then read every entry's file)."""
        self._files.delete(CHECKPOINT)
        self._known, self._held = None, 0

    def _checkpoint_if_due(self, ending: bool) -> None:
        """The sole writer's checkpoint rewrite, when the entries beyond it are many (:data:`CHECKPOINT_EVERY`)."""
        if self._known is None:
            return
        tail = len(self._known) - self._held
        if tail >= max(CHECKPOINT_EVERY, self._held) or (ending and tail and tail * 10 >= self._held):
            self.write_checkpoint()

    def source(self, sha256: str) -> SourceRecord | None:
        """The manifest entry of a file content, if it was ingested."""
        rel = f"_manifest/{safe_component(sha256)}.json"
        return self._source_record(rel) if self._files.exists(rel) else None

    def source_by_quick_key(self, key: str) -> SourceRecord | None:
        """The manifest entry of the source whose quick key (:func:`auditkit.ingest.sources.quick_key`) is
        ``key``, if one was ingested. The manifest is read once per store object (a command's), at its
        first lookup; the entries this object commits are added as it commits them. So an ingest of N
        files reads it once, not once a file (N² entries read). An entry another process committed since
        is not known by its quick key: its file is then hashed whole and found by its SHA-256
        (:meth:`source`), never taken for new."""
        if self._quick_cache is None:
            self._quick_cache = {r.quick: r for r in self.manifest() if r.quick}
        return self._quick_cache.get(key)

    def _committed(self) -> set[str] | frozenset[str]:
        if self._pinned is not None:
            return self._pinned
        return {rel[len("_manifest/"):][:16] for rel in self._files.files("_manifest/*.json")}

    def commit_source(self, record: SourceRecord) -> None:
        """Write the manifest entry last: it is what makes a source's parts visible. It lists the
        files this store object wrote for the source (path, rows, bytes, SHA-256)."""
        self._stamp()
        written = self._written.pop(record.sha256[:16], None)
        if written is not None or record.files is None:
            record.files = sorted(written or [], key=lambda f: f["path"])
        record.store_format, record.written_by = STORE_FORMAT, _written_by()
        name = f"{safe_component(record.sha256)}.json"
        self._files.write_bytes(f"_manifest/{name}", json.dumps(record.__dict__, indent=1, sort_keys=True).encode("utf-8"))
        if self._sole and self._known is not None:  # the sole writer's view stays whole without a listing
            self._known[name] = record
            self._checkpoint_if_due(ending=False)
        if self._quick_cache is not None and record.quick:  # known by its quick key from now on, unlisted
            self._quick_cache[record.quick] = record
        if self._compactor is not None and self._compactor.committed(record.sha256[:16], record.files):
            self.compact()

    def discard_uncommitted(self, sha256: str) -> int:
        """Remove parts, index and quarantine a crashed ingest of this source left behind (and those this
        object wrote for it and did not commit); the number of parts removed."""
        prefix = sha256[:16]
        own = [f["path"] for f in self._written.pop(prefix, [])]
        if self._compactor is not None:
            self._compactor.dropped(prefix)
        n = 0
        for rel in dict.fromkeys([*own, *self._uncommitted(sha256)]):
            self._files.delete(rel)
            n += rel.startswith("rounds/") and rel.endswith(".parquet")
        for rel in (f"_index/{prefix}.parquet", f"_quarantine/{prefix}.parquet"):
            self._files.delete(rel)
        return n

    def _uncommitted(self, sha256: str) -> list[str]:
        """The files earlier runs wrote for a source not committed (parts, index, quarantine, temporary
        files): from the listing taken once while this object is the store's sole writer, else listed."""
        prefix = sha256[:16]
        if self._sole:
            if self._leftovers is None:
                self._leftovers = self._list_leftovers()
            return self._leftovers.pop(prefix, [])
        patterns = [f"rounds/game=*/date=*/part-{prefix}-*.parquet"]
        if not self.remote:  # an object store has no temporary files
            patterns += [f"rounds/game=*/date=*/.part-{prefix}-*.tmp", f"_index/.{prefix}.*.tmp",
                         f"_quarantine/.{prefix}.*.tmp", f"_manifest/.{sha256}.*.tmp"]
        return [rel for pattern in patterns for rel in self._files.files(pattern)]  # only this source's

    @contextlib.contextmanager
    def sole_writer(self) -> Iterator[Store]:
        """Within the block this object is the store's only writer (it holds the exclusive lock, or the
        store is private to the run): the files earlier runs left uncommitted are listed once, at the
        first :meth:`discard_uncommitted`, not once a source (a glob of every partition each time)."""
        if self._sole:  # already (a lock taken inside another block)
            yield self
            return
        from .compaction import Compactor

        self._sole, self._leftovers, self._compactor, self._known = True, None, Compactor(), None
        try:
            yield self
            self.compact()
            self._checkpoint_if_due(ending=True)
        finally:
            self._sole, self._leftovers, self._compactor, self._known = False, None, None, None

    def compact(self) -> int:
        """Write the small parts this sole writer committed as one part a partition (:mod:`auditkit.compaction`);
        the number of compacted parts written."""
        if self._compactor is None:
            return 0
        n = self._compactor.write(self)
        if n:
            self._layout_cache = None  # read again, with them
        return n

    def _list_leftovers(self) -> dict[str, list[str]]:
        """sha16 -> the part, index, quarantine and temporary files under its prefix, from one listing."""
        out: dict[str, list[str]] = {}
        patterns = ["rounds/game=*/date=*/*", "_index/*", "_quarantine/*"] + ([] if self.remote else ["_manifest/.*.tmp"])
        for pattern in patterns:
            for rel in self._files.files(pattern):
                name = rel.rsplit("/", 1)[1].lstrip(".").removeprefix("part-")
                if rel.startswith("_manifest/") or rel.endswith((".parquet", ".tmp")):
                    out.setdefault(name[:16], []).append(rel)
        return out

    def written(self, sha256: str) -> list[dict[str, Any]]:
        """The entries of the files this store object wrote for a source and has not committed, taken
        from it (a worker's, handed to the writer that commits the source)."""
        return self._written.pop(sha256[:16], [])

    def adopt(self, sha256: str, entries: list[dict[str, Any]]) -> None:
        """Files written for a source by another store object (a worker's): listed in its manifest
        entry at :meth:`commit_source` as if written here."""
        self._written.setdefault(sha256[:16], []).extend(entries)
        if self._compactor is not None:
            for entry in entries:
                self._compactor.written(sha256[:16], entry["path"], None, int(entry["rows"]))

    def drop_written(self, sha256: str, rel: str) -> None:
        """Delete one uncommitted file written for a source, and its entry."""
        self._files.delete(rel)
        if self._compactor is not None:
            self._compactor.dropped(sha256[:16], rel)
        entries = self._written.get(sha256[:16], [])
        entries[:] = [e for e in entries if e["path"] != rel]

    # ---- rounds -------------------------------------------------------------------------
    def write_rounds(self, game: str, date: str, table: pa.Table, source_sha: str) -> Path | str:
        """Atomically add a part of rounds of one game and day, tagged with its source."""
        table = table.cast(schema_for(game))
        name = f"part-{source_sha[:16]}-{uuid.uuid4().hex[:12]}.parquet"
        rel = f"{self._partition('rounds', game, date)}/{name}"
        self._record_file(rel, table.num_rows, *self._files.write_parquet(rel, table))
        if self._compactor is not None:
            self._compactor.written(source_sha[:16], rel, table, table.num_rows)
        path = self._files.path(rel)
        return path if self.remote else Path(path)

    def games(self) -> list[str]:
        """Games with stored rounds."""
        return [g for g in registered.names() if self._files.is_dir(f"rounds/game={g}")]

    def dates(self, game: str, start: str | None = None, end: str | None = None) -> list[str]:
        """Days with committed rounds of a game, sorted, within [start, end] when given."""
        return sorted(d for (g, d), rels in self.layout().parts.items() if g == game and rels and _DATE.match(d)
                      and (start is None or d >= start) and (end is None or d <= end))

    def _part_files(self, game: str, date: str) -> list[str]:
        """The parts of a partition the manifest lists (an older entry's: by its name prefix)."""
        return list(self.layout().parts.get((game, date), []))

    def parts(self, game: str, date: str) -> list[Path] | list[str]:
        """Committed part files of one partition (parts of an unfinished ingest are skipped): paths in
        a local store, ``bucket/key`` paths of :attr:`filesystem` in an object store."""
        rels = self._part_files(game, date)
        return [self._files.path(r) for r in rels] if self.remote else [Path(self._files.path(r)) for r in rels]

    @property
    def filesystem(self) -> Any:
        """The pyarrow file system of an object store (None for a local folder)."""
        return self._files.fs if self.remote else None

    def _dataset(self, game: str, date: str) -> ds.Dataset:
        return self._files.dataset(self._part_files(game, date), schema_for(game))

    def scan(self, game: str, date: str, batch_size: int = 131_072,
             columns: list[str] | None = None) -> Iterator[pa.Table]:
        """Stream one partition's rounds in batches of whole rounds, about ``batch_size`` each
        (small part files are gathered into one batch, so many small logs cost no more than one)."""
        pending: list[pa.RecordBatch] = []
        rows = total = 0
        for batch in self._dataset(game, date).to_batches(columns=columns, batch_size=batch_size):
            if not batch.num_rows:
                continue
            pending.append(batch)
            rows += batch.num_rows
            total += batch.num_rows
            if rows >= batch_size:
                yield pa.Table.from_batches(pending)
                pending, rows = [], 0
        self._check_rows(game, date, total)
        if pending:
            yield pa.Table.from_batches(pending)

    def read(self, game: str, date: str, columns: list[str] | None = None) -> pa.Table:
        """One partition's rounds (only the given columns)."""
        table = self._dataset(game, date).to_table(columns=columns)
        self._check_rows(game, date, table.num_rows)
        return table

    def count(self, game: str | None = None, date: str | None = None) -> int:
        """Number of stored rounds (of one game, or all; of one day, or all), from the files' metadata."""
        total = 0
        layout = self.layout()
        for (g, d), rels in layout.parts.items():
            if (game is None or g == game) and (date is None or d == date):
                rows = layout.rows.get((g, d))
                total += rows if rows is not None else sum(self._files.num_rows(r) for r in rels)
        return total

    # ---- duplicate index ----------------------------------------------------------------
    def write_index(self, sha256: str, table: pa.Table) -> None:
        """The round-id index of a source, written at once (marked with its hashes' version)."""
        rel = f"_index/{sha256[:16]}.parquet"
        self._record_file(rel, table.num_rows, *self._files.write_parquet(rel, table.cast(_index_schema())))

    def index_stream(self, sha256: str) -> ParquetStream | _HeldStream:
        """The round-id index of a source, written as a stream (bounded memory)."""
        return self._files.stream(f"_index/{sha256[:16]}.parquet", _index_schema(), self._record_file,
                                  dictionary=["source_file"])  # the ids and hashes are unique: half the CPU, 28% smaller

    def _committed_files(self, folder: str, sources: Collection[str] | None = None) -> list[str]:
        """The files under ``folder`` (``_index``, ``_quarantine``) that the committed sources' manifest
        entries list (given ``sources``, SHA-256s: theirs only); CorruptStore when one is missing. A
        source committed before entries listed their files reads its file by name, if there is one."""
        committed = self._committed()
        present = set(self._files.files(f"{folder}/*.parquet"))
        listed: list[str] = []
        for rec in self.manifest():
            sha16 = rec.sha256[:16]
            if sha16 not in committed or (sources is not None and rec.sha256 not in sources):
                continue
            if rec.files is None:
                listed += [rel for rel in (f"{folder}/{sha16}.parquet",) if rel in present]
                continue
            listed += [f["path"] for f in rec.files if f["path"].startswith(folder + "/")]
        missing = sorted(set(listed) - present)
        if missing:
            raise CorruptStore(f"store damaged: {', '.join(missing[:3])} listed in the manifest but missing "
                               f"(auditkit verify {self.root})")
        return sorted(listed)

    def index_files(self, repair: bool = False) -> list[str]:
        """The index files of every committed source (paths relative to the store), checked against the
        manifest: one missing, or of other rows than its source's parts, is rebuilt from the parts with a
        warning when ``repair`` (an ingest, which holds the lock exclusively), else CorruptStore."""
        from .integrity import check_index, rebuild_index

        out = []
        for sha16, rel, problem in check_index(self, hashed=repair):
            if problem is not None:
                if not repair:
                    raise CorruptStore(f"store damaged: {problem} (auditkit verify STORE)")
                log.warning("%s: rebuilding it from its source's parts", problem)
                rebuild_index(self, sha16)
            out.append(rel)
        return out

    def read_index(self, files: list[str], columns: list[str] | None = None, filter: Any = None) -> pa.Table:
        """Rows of some index files (as :meth:`index_files` names them)."""
        return self._files.dataset(files, INDEX).to_table(columns=columns, filter=filter)

    def index_rows(self, rel: str, hashes: pa.Array) -> pa.Table:
        """Rows of one index file whose ``id_hash`` is among ``hashes``, read whole only from the row
        groups holding one (their id hashes read first): the index is in line order, so the rounds of
        a file grown since it was ingested are in a row group or two."""
        import pyarrow.compute as pc

        out = [INDEX.empty_table()]
        for fragment in self._files.dataset([rel], INDEX).get_fragments():
            groups = fragment.split_by_row_group() if hasattr(fragment, "split_by_row_group") else [fragment]
            for group in groups:  # (a table held in memory: one)
                if pc.any(pc.is_in(group.to_table(columns=["id_hash"])["id_hash"], value_set=hashes)).as_py():
                    out.append(group.to_table(filter=pc.field("id_hash").isin(hashes)))
        return pa.concat_tables(out)

    def index_batches(self, files: list[str], columns: list[str]) -> Iterator[pa.RecordBatch]:
        """Rows of some index files, a batch at a time (a scan in bounded memory)."""
        return self._files.dataset(files, INDEX).to_batches(columns=columns, batch_size=ROW_GROUP)

    def index_version(self, rel: str) -> bytes | None:
        """The hash version an index file was written with (None: before versions)."""
        from .ingest.hashing import VERSION_KEY

        return (self._files.dataset([rel], None).schema.metadata or {}).get(VERSION_KEY)

    def source_parts(self, sha256_prefix: str) -> list[str]:
        """The round parts of a committed source (paths relative to the store)."""
        return sorted(rel for rels in self.layout().parts.values() for rel in rels
                      if rel.rsplit("/", 1)[1][5:21] == sha256_prefix)

    def read_part(self, rel: str, filter: Any = None) -> pa.Table:
        """Rows of one round part."""
        return self._files.dataset([rel], None).to_table(filter=filter)

    def index(self, columns: list[str] | None = None) -> pa.Table:
        """The round-id index of every committed source."""
        files = self._committed_files("_index")
        if not files:
            return INDEX.empty_table().select(columns or INDEX.names)
        return self._files.dataset(files, INDEX).to_table(columns=columns)

    # ---- quarantine ---------------------------------------------------------------------
    def write_quarantine(self, sha256: str, table: pa.Table) -> None:
        """The quarantine of a source, written at once; no file when it holds no line (store format 2)."""
        if not table.num_rows:
            return
        rel = f"_quarantine/{sha256[:16]}.parquet"
        self._record_file(rel, table.num_rows, *self._files.write_parquet(rel, table.cast(QUARANTINE)))

    def quarantine_stream(self, sha256: str) -> _LazyStream:
        """The quarantine of a source, written as a stream; no file when no line is written (store format 2)."""
        return _LazyStream(lambda: self._files.stream(f"_quarantine/{sha256[:16]}.parquet", QUARANTINE,
                                                      self._record_file))

    def quarantine(self, sources: Iterable[str] | None = None, columns: list[str] | None = None,
                   limit: int | None = None) -> pd.DataFrame:
        """The quarantined lines of the committed sources, in the order written: of every one, or of those
        whose SHA-256 is in ``sources`` (a run's own: its files alone are read, whatever the store's
        size); only ``columns``, and the first ``limit`` lines, when given."""
        return self.quarantine_table(sources, columns, limit).to_pandas()

    def quarantine_table(self, sources: Iterable[str] | None = None, columns: list[str] | None = None,
                         limit: int | None = None) -> pa.Table:
        """:meth:`quarantine` as an Arrow table."""
        data = self._quarantine_data(sources)
        return data.to_table(columns=columns) if limit is None else data.head(limit, columns=columns)

    def _quarantine_data(self, sources: Iterable[str] | None) -> ds.Dataset:
        """The quarantine files of the committed sources (of ``sources`` only, when given), as one dataset."""
        files = self._committed_files("_quarantine", None if sources is None else set(sources))
        return self._files.dataset(files, QUARANTINE) if files else ds.InMemoryDataset(QUARANTINE.empty_table())

    def quarantine_frames(self, sources: Iterable[str] | None = None, columns: list[str] | None = None
                          ) -> Iterator[pd.DataFrame]:
        """:meth:`quarantine` a batch of lines at a time (a report of millions in bounded memory); the
        first frame always comes, empty when no line was quarantined."""
        data = self._quarantine_data(sources)
        empty = True
        for batch in data.to_batches(columns=columns, batch_size=ROW_GROUP):
            if batch.num_rows:
                yield batch.to_pandas()
                empty = False
        if empty:
            yield data.head(0, columns=columns).to_pandas()

    def quarantine_reasons(self, sources: Iterable[str]) -> Iterator[str]:
        """The reason of each line quarantined from these sources (SHA-256s), read a batch at a time."""
        for batch in self._quarantine_data(sources).to_batches(columns=["reason"], batch_size=ROW_GROUP):
            yield from batch.column(0).to_pylist()

    # ---- findings -----------------------------------------------------------------------
    def write_findings(self, game: str, date: str, findings: pd.DataFrame) -> Path | str:
        """Replace the findings of one partition (atomic)."""
        table = pa.Table.from_pandas(findings, schema=FINDINGS, preserve_index=False)
        rel = f"{self._partition('findings', game, date)}/findings.parquet"
        self._files.write_parquet(rel, table)
        path = self._files.path(rel)
        return path if self.remote else Path(path)

    def findings(self, games: list[str] | None = None, start: str | None = None,
                 end: str | None = None) -> pd.DataFrame:
        """Stored findings, optionally of some games and days."""
        files = []
        for g in games or registered.names():
            for rel in self._files.files(f"findings/game={g}/date=*/findings.parquet"):
                d = rel.split("/")[2][5:]
                if (start is None or d >= start) and (end is None or d <= end):
                    files.append(rel)
        if not files:
            return FINDINGS.empty_table().to_pandas()
        return self._files.dataset(sorted(files, key=self._files.path), FINDINGS).to_table().to_pandas()
