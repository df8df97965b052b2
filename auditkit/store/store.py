"""The :class:`Store`: its readers (:mod:`.reads`) and its commit protocol. A source's parts, index and
quarantine are written first, each under a name of its own; :meth:`Store.commit_source` writes its manifest
entry last, the commit point."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from .. import games as registered
from ..schema import FINDINGS, QUARANTINE, schema_for
from . import lock as locking
from .atomic import safe_component
from .compaction import Compactor
from .files import _LocalFiles, _ObjectFiles, is_uri
from .layout import _DATE, _index_schema
from .manifest import STORE_FORMAT, SourceRecord, _written_by, file_entry
from .memory import _HeldStream, _MemoryFiles
from .parquet import ParquetStream, _LazyStream
from .reads import Reads

if TYPE_CHECKING:
    import pandas as pd


class Pending(Protocol):
    """A file of a source being written (:class:`ParquetStream` and the like): visible at ``close``, gone at ``abort``."""

    def close(self) -> None: ...

    def abort(self) -> None: ...


class Store(Reads):
    """A folder (or an object-store prefix) of hive-partitioned Parquet rounds, findings, manifest and
    quarantine.

    ``root`` is a local path or a URI (``s3://bucket/prefix``, with pyarrow's options as a query:
    ``?region=..&endpoint_override=host:port&scheme=http``); ``filesystem`` (a pyarrow or fsspec
    file system) serves the path given as ``root`` instead. A store pickles, so a worker process
    or a Dask task reads the same store.
    """

    _leftovers: dict[str, list[str]] | None = None  # then: sha16 -> files of earlier runs, listed once
    _compactor: Any = None                          # then: its small parts (.compaction.Compactor)

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

    @property
    def held(self) -> bool:
        """Whether the store is held in this process's memory (:meth:`in_memory`): no other process reads
        or writes it."""
        return isinstance(self._files, _MemoryFiles)

    def __getstate__(self) -> dict[str, Any]:
        """What a pickled copy (a worker's) carries: not the files this object wrote and has not committed
        (a worker reports its own: :meth:`written`), nor the writer's quick-key lookup."""
        state = dict(self.__dict__)
        state["_written"] = {}
        for name in ("_quick_cache", "_sole", "_leftovers", "_compactor", "_known", "_held"):  # a worker writes parts only
            state.pop(name, None)
        return state

    def _record_file(self, rel: str, rows: int, size: int, sha: str) -> None:
        sha16 = rel.rsplit("/", 1)[1].removeprefix("part-")[:16]
        self._written.setdefault(sha16, []).append(file_entry(rel, rows, size, sha))

    def lock(self, timeout: float, *, shared: bool = False, command: str = "", sweep: bool = True
             ) -> contextlib.AbstractContextManager[float]:
        """Hold the store's lock (:func:`auditkit.store.lock.hold`); yields when it was taken."""
        return locking.hold(self, timeout, shared=shared, command=command, sweep=sweep)

    def remove_stale_temps(self, older_than: float) -> list[Path]:
        """Remove the temporary files in the store written before ``older_than`` or whose writer is gone."""
        return locking.sweep_temps(self, older_than)

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

    def write_text(self, rel: str, text: str) -> None:
        """Replace a small text file of the store, atomically (a rename, or one upload)."""
        self._files.write_bytes(rel, text.encode("utf-8"))

    def commit_source(self, record: SourceRecord, files: Sequence[Pending] = ()) -> None:
        """Commit a source: close ``files`` (its streams still open: the last parts, the index, the quarantine),
        each made visible and recorded, then write its manifest entry last, the commit point that makes them
        visible to readers. The entry lists the files this store object wrote for the source (path, rows,
        bytes, SHA-256). When a file fails to close, every one of ``files`` is aborted and nothing committed."""
        try:
            for f in files:
                f.close()
        except BaseException:
            for f in files:
                f.abort()
            raise
        self._stamp()
        written = self._written.pop(record.sha256[:16], None)
        if written is not None or record.files is None:
            record.files = sorted(written or [], key=lambda f: f["path"])
        record.store_format, record.written_by = STORE_FORMAT, _written_by()
        name = f"{safe_component(record.sha256)}.json"
        text = json.dumps(record.__dict__, indent=1, sort_keys=True)
        self._files.write_bytes(f"_manifest/{name}", text.encode("utf-8"))
        if self._sole and self._known is not None:  # the sole writer's view stays whole without a listing
            self._known[name] = SourceRecord(**json.loads(text))  # as written: the caller may change its record
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
        self._sole, self._leftovers, self._compactor, self._known = True, None, Compactor(), None
        try:
            yield self
            self.compact()
            self._checkpoint_if_due(ending=True)
        finally:
            self._sole, self._leftovers, self._compactor, self._known = False, None, None, None

    def compact(self) -> int:
        """Write the small parts this sole writer committed as one part a partition (:mod:`.compaction`);
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

    def write_index(self, sha256: str, table: pa.Table) -> None:
        """The round-id index of a source, written at once (marked with its hashes' version)."""
        rel = f"_index/{sha256[:16]}.parquet"
        self._record_file(rel, table.num_rows, *self._files.write_parquet(rel, table.cast(_index_schema())))

    def index_stream(self, sha256: str) -> ParquetStream | _HeldStream:
        """The round-id index of a source, written as a stream (bounded memory)."""
        # the ids and hashes are unique: no dictionary (half the CPU, 28% smaller); the hashes are random bits
        # zstd cannot shrink (plain: its encoding 15% less CPU), the line numbers ascend (delta-encoded)
        return self._files.stream(f"_index/{sha256[:16]}.parquet", _index_schema(), self._record_file,
                                  dictionary=["source_file"], plain=("id_hash", "line_hash"), delta=("source_line",))

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

    def write_findings(self, game: str, date: str, findings: pd.DataFrame) -> Path | str:
        """Replace the findings of one partition (atomic)."""
        table = pa.Table.from_pandas(findings, schema=FINDINGS, preserve_index=False)
        rel = f"{self._partition('findings', game, date)}/findings.parquet"
        self._files.write_parquet(rel, table)
        path = self._files.path(rel)
        return path if self.remote else Path(path)
