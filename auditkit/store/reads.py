"""The readers of a committed store: its layout (the parts its manifest lists, checked), rounds by
partition, the duplicate index, the quarantine, findings, small text files. The base of :class:`Store`."""

from __future__ import annotations

import copy
import logging
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import pyarrow as pa
import pyarrow.dataset as ds

from .. import games as registered
from ..schema import FINDINGS, QUARANTINE, schema_for
from . import parquet
from .compaction import apply
from .compaction import records as compactions
from .errors import CorruptStore
from .layout import _DATE, INDEX, Layout, build_layout, check_index, listing, rebuild_index
from .manifest import Entries, Manifest

if TYPE_CHECKING:  # pandas only at the edge (to_pandas): ingest and its workers start without it
    import pandas as pd

log = logging.getLogger("auditkit.store")


class Reads(Manifest):
    """A store read: what its manifest lists, and nothing else (see :mod:`auditkit.store`)."""

    _layout_cache: Any = None              # its Layout (see layout)
    _layout_key: frozenset[str] = frozenset()

    @property
    def remote(self) -> bool:
        """True for a store on object storage (no rename: see the module docstring)."""
        return self._files.remote

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    def pinned(self) -> Self:
        """A read view of this store as it is now: the committed sources listed once, then reused by
        every read of the view (and of its pickled copies on workers). A validation run uses one: its
        partitions see one commit point, and the manifest is listed once, not once a partition."""
        view = copy.copy(self)
        entries = self.entries()
        view._pinned = frozenset(entries.sha16s())
        view._known = None  # (a sole writer's: its own)
        view._layout_cache = self._build_layout(entries)
        return view

    def narrowed(self, keys: Iterable[tuple[str, str]]) -> Self:
        """This read view (:meth:`pinned`) knowing only some (game, date) partitions: a worker's task,
        which reads those only, pickles a few kilobytes instead of the whole store's layout."""
        full = self.layout()
        view = copy.copy(self)
        keys = [k for k in dict.fromkeys(keys) if k in full.parts]
        view._layout_cache = Layout(parts={k: full.parts[k] for k in keys}, rows={k: full.rows.get(k) for k in keys})
        return view

    def _build_layout(self, entries: Entries) -> Layout:
        """The layout of these entries against one listing of ``rounds/`` (the index files: listed by
        check_index, which reads them), compacted parts read instead of theirs, the sizes of the parts read
        checked."""
        layout = build_layout(entries, listing(self._files, "rounds"))
        apply(layout, compactions(self))  # small parts read from their compacted part
        layout.check_sizes()
        layout.check()
        return layout

    def layout(self) -> Layout:
        """The committed store as its manifest lists it (:class:`auditkit.store.layout.Layout`), checked:
        unlisted files warned about once, CorruptStore naming a listed part missing or of another size.
        A read view keeps its own; a store built again when its manifest has changed."""
        if self._pinned is not None:
            return self._layout_cache
        key = frozenset(self._files.files("_manifest/*.json"))
        if self._layout_cache is None or key != self._layout_key:
            self._layout_cache, self._layout_key = self._build_layout(self.entries()), key
        return self._layout_cache

    def _check_rows(self, game: str, date: str, rows: int) -> None:
        """CorruptStore when a partition read holds another number of rows than its manifest says."""
        want = self.layout().rows.get((game, date))
        if want is not None and rows != want:
            raise CorruptStore(f"store damaged: the parts of {game}/{date} hold {rows} rows, the manifest says "
                               f"{want} ({', '.join(self._part_files(game, date))}; auditkit verify STORE)")

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
        for batch in self._files.batches(self._part_files(game, date), schema_for(game), columns, batch_size):
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
        return self._files.dataset(files, INDEX).to_batches(columns=columns, batch_size=parquet.ROW_GROUP)

    def index_version(self, rel: str) -> bytes | None:
        """The hash version an index file was written with (None: before versions)."""
        from ..ingest.hashing import VERSION_KEY

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
        for batch in data.to_batches(columns=columns, batch_size=parquet.ROW_GROUP):
            if batch.num_rows:
                yield batch.to_pandas()
                empty = False
        if empty:
            yield data.head(0, columns=columns).to_pandas()

    def quarantine_reasons(self, sources: Iterable[str]) -> Iterator[str]:
        """The reason of each line quarantined from these sources (SHA-256s), read a batch at a time."""
        for batch in self._quarantine_data(sources).to_batches(columns=["reason"], batch_size=parquet.ROW_GROUP):
            yield from batch.column(0).to_pylist()

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

    def read_text(self, rel: str) -> str | None:
        """A small text file of the store (``_jobs/<name>.json``), or None when there is none."""
        self.check_format()
        return self._files.read_bytes(rel).decode("utf-8") if self._files.exists(rel) else None

    def text_files(self, pattern: str) -> list[str]:
        """The small files of the store matching a glob (``_jobs/*.json``), relative to it."""
        self.check_format()
        return sorted(self._files.files(pattern))
