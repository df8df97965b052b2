"""Parquet files of a store: row groups and codecs, a sink that hashes what it writes, and streams
written table by table that become visible only whole."""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from .atomic import _publish, _temp_file, atomic_path, named_error

ROW_GROUP = 131_072
"""Rows per Parquet row group (a scan batch reads about one)."""
SMALL_FILE_ROWS = 1024
"""A table of fewer rows is written with snappy, not zstd: zstd costs 2.8 ms on a 5-round part (its
context set up for each of 30-odd columns) against 1.2, and the file comes out larger (11.0 KiB, 10.6)."""


TINY_FILE_ROWS = 32
"""A file of fewer rows (a five-round source's part or index) is written uncompressed, without dictionaries or
statistics: each of its columns' codec, dictionary and statistics set up for a few values cost more than they
save (a 5-round part: 0.9 ms of CPU against 1.5 with snappy, 9.2 KiB against 10.6). Any Parquet reader reads it."""
_TINY = {"compression": "none", "use_dictionary": False, "write_statistics": False}


def stream_options(schema: pa.Schema, dictionary: bool | list[str], plain: Collection[str] = (),
                   delta: Collection[str] = ()) -> dict[str, Any]:
    """``pyarrow.parquet.ParquetWriter``'s options for a stream of ``schema`` (not a tiny file) with the columns
    ``dictionary`` dictionary-encoded (True: all): zstd, but the columns ``plain`` (random bits, such as
    64-bit hashes, that zstd cannot shrink) and ``delta`` (ascending integers, such as line numbers)
    uncompressed when not dictionary-encoded, the latter delta-encoded (every Parquet reader of pyarrow 16
    or later reads both)."""
    coded = set(schema.names) if dictionary is True else set(dictionary or ())
    plain = {n for n in schema.names if n in plain and n not in coded}
    delta = {n for n in schema.names if n in delta and n not in coded}
    if not plain and not delta:
        return {"compression": "zstd", "use_dictionary": dictionary}
    return {"compression": {n: "none" if n in plain or n in delta else "zstd" for n in schema.names},
            "use_dictionary": sorted(coded), "column_encoding": dict.fromkeys(sorted(delta), "DELTA_BINARY_PACKED")}


def compression_for(table: pa.Table) -> str:
    """The Parquet codec of a file of ``table``: zstd, snappy for a small one (:data:`SMALL_FILE_ROWS`)."""
    return "zstd" if table.num_rows >= SMALL_FILE_ROWS else "snappy"


def write_options(table: pa.Table) -> dict[str, Any]:
    """``pyarrow.parquet.write_table``'s options for a file of ``table``: its codec (:func:`compression_for`),
    or none of codec, dictionaries and statistics for a tiny one (:data:`TINY_FILE_ROWS`)."""
    return dict(_TINY) if table.num_rows < TINY_FILE_ROWS else {"compression": compression_for(table)}


class HashingFile:
    """A binary file wrapper that hashes (SHA-256) and counts the bytes written through it."""

    def __init__(self, fh: BinaryIO):
        self.fh, self.sha, self.size = fh, hashlib.sha256(), 0

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.sha.update(view)
        self.size += view.nbytes
        return self.fh.write(view)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self.fh.flush()

    def close(self) -> None:
        self.fh.flush()

    @property
    def closed(self) -> bool:
        return self.fh.closed

    def writable(self) -> bool:
        return True


def _buffered(sink: Any) -> pa.NativeFile:
    """``sink`` (a Python file) behind a buffer of 256 KiB: Parquet's writer makes a hundred small writes a
    file or more, each a call into Python (and a hash update) unbuffered. Closing it flushes ``sink``, not closes it."""
    return pa.BufferedOutputStream(pa.PythonFile(sink, mode="w"), buffer_size=1 << 18)


def write_parquet_atomic(table: pa.Table, path: Path) -> Path:
    """Write a Parquet file through a temporary sibling and a rename."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP)
    return path


class ParquetStream:
    """A Parquet file of a store written table by table, visible only whole: on a local store into a
    temporary sibling renamed into place by :meth:`close`; on object storage into a local temporary
    file (memory stays bounded however many rows), uploaded in one piece by :meth:`close`.
    :meth:`abort` leaves nothing (a killed process leaves only a ``.tmp`` file, removed later).
    ``dictionary``, ``plain``, ``delta``: the columns' encodings (:func:`stream_options`). Its first rows are held until they are
    :data:`TINY_FILE_ROWS`: a file of fewer is written as a tiny one (:func:`write_options`)."""

    def __init__(self, files: Any, rel: str, schema: pa.Schema,
                 on_close: Any = None, dictionary: bool | list[str] = True, plain: Collection[str] = (),
                 delta: Collection[str] = ()):
        self.files, self.rel, self.schema, self.on_close = files, rel, schema, on_close
        self.tmp: Path | None = None
        with self._naming():
            if files.remote:  # removed by the system when closed
                spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close or abort)
            else:
                self.tmp, spool = _temp_file(Path(files.path(rel)))  # closed by close or abort
            self._fh = HashingFile(spool)
            try:
                self._sink = _buffered(self._fh)
            except BaseException:
                spool.close()
                if self.tmp is not None:
                    self.tmp.unlink(missing_ok=True)
                raise
        self.options = stream_options(schema, dictionary, plain, delta)
        self._writer: pq.ParquetWriter | None = None  # opened once the rows held are not a tiny file's
        self._held: list[pa.Table] = []
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
        table = table.select(self.schema.names).cast(self.schema)
        self.rows += table.num_rows
        if self._writer is None:
            self._held.append(table)
            if self.rows < TINY_FILE_ROWS:
                return
            table, self._held = pa.concat_tables(self._held), []
            self._open(**self.options)
        with self._naming():
            self._writer.write_table(table, row_group_size=ROW_GROUP)  # type: ignore[union-attr]

    def _open(self, **options: Any) -> None:
        with self._naming():  # it writes the file's first bytes
            self._writer = pq.ParquetWriter(self._sink, self.schema, **options)

    def close(self) -> None:
        """Finish the file and make it visible; on failure the caller aborts (the temporary file is removed)."""
        if self._writer is None:  # a tiny file: its rows, held, written at once
            self._open(**_TINY)
            if self._held:
                with self._naming():
                    self._writer.write_table(pa.concat_tables(self._held))  # type: ignore[union-attr]
        with self._naming():
            self._writer.close()  # type: ignore[union-attr]
            self._sink.close()  # flushed into the file, still open
            size, sha = self._fh.size, self._fh.sha.hexdigest()
            if self.tmp is None:
                try:
                    self._fh.fh.seek(0)
                    self.files.upload(self.rel, self._fh.fh)
                finally:
                    self._fh.fh.close()
            else:
                _publish(self.tmp, Path(self.files.path(self.rel)), self._fh.fh)  # fsynced, closed
        if self.on_close is not None:
            self.on_close(self.rel, self.rows, size, sha)

    def abort(self) -> None:
        """Drop the file: never raises (a failed write's abort meets the same full disk), leaves no temporary file."""
        if self._writer is not None:
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
