"""Where a store's files are: a local folder or an object store, behind one protocol (:class:`_Files`:
list, read, write atomically, stream, delete, open as a dataset). The in-memory store is in :mod:`.memory`."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from . import parquet
from .atomic import atomic_file
from .parquet import HashingFile, ParquetStream, _buffered, write_options

LOCK_NAME = ".auditkit.lock"
GLOB_CHARS = set("*?[")


def _glob_matches(rel: str, pattern: str) -> bool:
    """Whether a relative path matches a glob whose ``*`` stays within one path component."""
    import fnmatch

    parts, want = rel.split("/"), pattern.split("/")
    return len(parts) == len(want) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, want, strict=True))


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_uri(root: str | Path) -> bool:
    """True for an object-store URI (``s3://bucket/prefix``); a ``file://`` URI is a local folder."""
    return isinstance(root, str) and bool(_URI.match(root)) and not root.startswith("file://")


class _Files:
    """Where a store's files are (a folder, an object store, memory): what they share."""

    def stream(self, rel: str, schema: pa.Schema, on_close: Any, dictionary: bool | list[str] = True,
               **encodings: Any) -> Any:
        """A file written table by table, visible whole at its ``close`` (:class:`ParquetStream`; ``encodings``:
        its ``plain`` and ``delta`` columns)."""
        return ParquetStream(self, rel, schema, on_close, dictionary, **encodings)  # type: ignore[arg-type]

    def batches(self, rels: list[str], schema: pa.Schema, columns: list[str] | None,
                batch_size: int) -> Iterator[pa.RecordBatch]:
        """The rows of some Parquet files as ``schema`` reads them (``columns`` of it; None: all), in
        batches of at most ``batch_size`` rows, file after file."""
        return self.dataset(rels, schema).to_batches(columns=columns, batch_size=batch_size)


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
        with atomic_file(self.root / rel) as fh:
            fh.write(data)

    def write_parquet(self, rel: str, table: pa.Table) -> tuple[int, str]:
        """Write a Parquet file atomically; (its size, the SHA-256 of the bytes written)."""
        with atomic_file(self.root / rel) as fh:
            sink = HashingFile(fh)
            out = _buffered(sink)
            pq.write_table(table, out, row_group_size=parquet.ROW_GROUP, **write_options(table))
            out.close()
        return sink.size, sink.sha.hexdigest()

    def sizes(self, folder: str) -> dict[str, int]:
        """Relative path -> size of every file under ``folder`` (temporary files left out)."""
        base = self.root / folder
        if not base.is_dir():
            return {}
        out: dict[str, int] = {}
        folders = [(str(base), folder)]
        while folders:  # one scandir a folder, each entry's stat from it (half the Python of os.walk + os.stat)
            path, rel = folders.pop()
            with contextlib.suppress(OSError), os.scandir(path) as it:
                for e in it:
                    with contextlib.suppress(OSError):
                        if e.is_dir():  # as os.walk: a link to a folder is not followed
                            if not e.is_symlink():
                                folders.append((e.path, f"{rel}/{e.name}"))
                        elif not e.name.startswith("."):
                            out[f"{rel}/{e.name}"] = e.stat().st_size
        return out

    def entries(self, folder: str) -> dict[str, tuple[int, int]]:
        """Name -> (size, mtime in ns) of the ``*.json`` files directly in ``folder`` (one scan, no file opened)."""
        out = {}
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root / folder) as it:
            for e in it:
                if e.name.endswith(".json") and not e.name.startswith("."):
                    try:  # (not a context manager an entry: 20,000 of them)
                        st = e.stat()
                    except OSError:
                        continue
                    out[e.name] = (st.st_size, st.st_mtime_ns)
        return out

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def dataset(self, rels: list[str], schema: pa.Schema) -> ds.Dataset:
        return ds.dataset([self.path(r) for r in rels], schema=schema, format="parquet")

    def batches(self, rels: list[str], schema: pa.Schema, columns: list[str] | None,
                batch_size: int) -> Iterator[pa.RecordBatch]:
        """:meth:`_Files.batches`, each file read by its own Parquet reader when it holds the columns as
        ``schema`` has them (a dataset costs 0.7 ms more a file: a validation reads thousands of small
        ones), on this thread (Arrow's threads cost 0.4-0.5 ms more CPU on a file of 4,000 rounds; the
        engine runs a process per core) and without reading ahead (``pre_buffer``'s I/O threads: about
        0.1 ms more); a file of an older layout (a column missing, another type), or
        one that does not open (the dataset's error names it), through a dataset."""
        wanted = [schema.field(c) for c in columns] if columns is not None else list(schema)
        for rel in rels:
            try:
                pf = pq.ParquetFile(self.path(rel), pre_buffer=False)
            except (pa.ArrowException, OSError):
                pf = None
            if pf is not None:
                with pf:
                    have = pf.schema_arrow
                    if all(have.get_field_index(f.name) >= 0 and have.field(f.name).equals(f) for f in wanted):
                        yield from pf.iter_batches(batch_size=batch_size, columns=[f.name for f in wanted],
                                                   use_threads=False)
                        continue
            yield from self.dataset([rel], schema).to_batches(columns=columns, batch_size=batch_size)

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
        pq.write_table(table, sink, **write_options(table))  # encoded whole before a byte is uploaded
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
