"""The manifest: one entry a committed source (its commit point), the store's format stamp, and the
checkpoint of the entries that readers read instead of opening each (store format 2)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from .atomic import safe_component
from .errors import CorruptStore, NewerStore

log = logging.getLogger("auditkit.store")

STORE_FORMAT = 3
"""The store's format version, in ``_store.json`` and in each manifest entry written (``store_format``), every
older one read. 0: written before the stamp (auditkit 0.1.0 and earlier). 1: the stamp. 2: the manifest
checkpoint (:data:`CHECKPOINT_JSON`), and no quarantine file for a source without a bad line (a format-1 writer
rewriting an entry would leave the checkpoint stale: it must refuse the store). 3: the checkpoint as columns
(:data:`CHECKPOINT`, Parquet; a format-2 writer would leave it stale). Raise it when a change to the store's
files would be misread by the auditkit before it; this one refuses a higher one."""

STORE_FILE = "_store.json"
"""The store's stamp: ``{"store_format": 3, "written_by": "auditkit 0.1.0"}``, written by its first writer (and
raised by the first writer of a newer format)."""

CHECKPOINT = "_manifest.checkpoint.parquet"
"""Every manifest entry as of its writing, in one Parquet file (store format 3): a row an entry, its file's
``name``, ``entry_size`` and ``entry_mtime_ns`` when copied and the entry's fields as columns
(:data:`CHECKPOINT_SCHEMA`); the format and writer in the file's metadata. Readers list ``_manifest/`` once
(names, sizes and times: no entry opened), take from it the entries whose file is there at the size and time
copied, as columns (records made only when asked: a validation builds its layout from the columns), and read
only the others (newer than it, or changed since) from their own files; the entries stay the commit point.
Rewritten atomically by the store's sole writer (:meth:`Store.sole_writer`) when the entries beyond it are many
(:data:`CHECKPOINT_EVERY`, or a tenth of it at the end of a command); removed before an entry is rewritten
(:func:`.layout.rebuild_index`)."""

CHECKPOINT_JSON = "_manifest.checkpoint.json"
"""The checkpoint of store format 2: ``{"store_format", "written_by", "entries": {entry file name: {"size",
"mtime_ns", "entry"}}}``; still read when there is no :data:`CHECKPOINT`, removed when one is written."""

CHECKPOINT_EVERY = 2000
"""Entries beyond the checkpoint that make a sole writer rewrite it at once (else at least this many or as many
as it holds, whichever is more, within a command): its rewrites cost, in all, about twice its final size."""

_FILE = pa.struct([("path", pa.string()), ("rows", pa.int64()), ("bytes", pa.int64()), ("sha256", pa.string())])
_STAT = [("name", pa.string()), ("entry_size", pa.int64()), ("entry_mtime_ns", pa.int64())]
CHECKPOINT_SCHEMA = pa.schema(_STAT + [
    ("sha256", pa.string()), ("path", pa.string()), ("size", pa.int64()), ("format", pa.string()),
    *((k, pa.int64()) for k in ("lines_read", "stored", "already_stored", "quarantined", "blank", "attached")),
    ("games", pa.map_(pa.string(), pa.int64())), ("partitions", pa.list_(pa.string())), ("ingested_at", pa.string()),
    ("files", pa.list_(_FILE)), ("quick", pa.string()), ("store_format", pa.int64()), ("written_by", pa.string())])
"""The columns of :data:`CHECKPOINT`: the entry file's name, size and time, then :class:`SourceRecord`'s fields."""


def _written_by() -> str:
    from .. import __version__

    return f"auditkit {__version__}"


def _newer(what: str, written_by: object, fmt: object) -> NewerStore:
    return NewerStore(f"{what} was written by {written_by or 'a newer auditkit'} (store format {fmt}); this is "
                      f"{_written_by()}, which reads store formats up to {STORE_FORMAT}: upgrade auditkit to read it")


def file_entry(rel: str, rows: int, size: int, sha256: str) -> dict[str, Any]:
    """One file of a manifest entry."""
    return {"path": rel, "rows": int(rows), "bytes": int(size), "sha256": sha256}


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
    quick: str | None = None  # the source's quick key (auditkit.ingest.identity.quick_key; None: not recorded)
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


class Entries:
    """The committed manifest entries as read: those taken from the checkpoint as columns (``held``, a table of
    :data:`CHECKPOINT_SCHEMA`), the others as records (``read``: entry file name -> record). Records of the
    held rows are made only when asked (:meth:`records`); a layout is built from the columns
    (:meth:`file_table`), so a read of 20,000 entries makes no 20,000 objects."""

    def __init__(self, held: pa.Table | None = None, read: dict[str, SourceRecord] | None = None):
        self.held = held if held is not None else CHECKPOINT_SCHEMA.empty_table()
        self.read = read or {}
        self._records: dict[str, SourceRecord] | None = None

    def __len__(self) -> int:
        return self.held.num_rows + len(self.read)

    def records(self) -> dict[str, SourceRecord]:
        """Entry file name -> record, of every entry (the held rows' made once)."""
        if self._records is None:
            cols = {name: self.held.column(name).to_pylist() for name in CHECKPOINT_SCHEMA.names}
            cols["games"] = [dict(g or ()) for g in cols["games"]]
            cols["partitions"] = [p or [] for p in cols["partitions"]]
            fields = list(SourceRecord.__dataclass_fields__)
            made = {row[0]: SourceRecord(*row[1:]) for row in zip(cols["name"], *(cols[f] for f in fields),
                                                                       strict=True)}
            self._records = {**made, **self.read}
        return self._records

    def sha16s(self) -> set[str]:
        """The first 16 hex digits of every entry's SHA-256 (what names its files)."""
        import pyarrow.compute as pc

        return set(pc.utf8_slice_codeunits(self.held.column("sha256"), 0, 16).to_pylist()) | \
            {r.sha256[:16] for r in self.read.values()}

    def file_table(self) -> tuple[list[tuple[str, str]], pa.Table]:
        """((sha16, format) of each entry that lists no files: written before they were recorded), and a table
        (``owner``: the sha16 of its entry, ``path``, ``rows``, ``bytes``, ``sha256``) of the files the others
        list, the held rows' from their columns (no Python object a file)."""
        import pyarrow.compute as pc

        held = self.held
        sha16 = pc.utf8_slice_codeunits(held.column("sha256"), 0, 16).combine_chunks()
        files = held.column("files").combine_chunks()
        none = pc.is_null(files)
        legacy = list(zip(pc.filter(sha16, none).to_pylist(), pc.filter(held.column("format"), none).to_pylist(),
                          strict=True))
        legacy += [(r.sha256[:16], r.format) for r in self.read.values() if r.files is None]
        flat = pc.list_flatten(files)
        table = pa.table({"owner": sha16.take(pc.list_parent_indices(files)),
                          **{k: flat.field(k) for k in ("path", "rows", "bytes", "sha256")}})
        read = [{"owner": r.sha256[:16], **f} for r in self.read.values() if r.files is not None for f in r.files]
        if read:
            table = pa.concat_tables([table, pa.Table.from_pylist(read, table.schema)])
        return legacy, table

    @classmethod
    def of(cls, records: list[SourceRecord]) -> Entries:
        """The entries of some records (read or made elsewhere)."""
        return cls(None, {f"{r.sha256}.json": r for r in records})


def _table(known: dict[str, SourceRecord], stats: dict[str, tuple[int, int]]) -> pa.Table:
    """The checkpoint's table of the records ``known`` whose entry file is listed in ``stats``."""
    names = [n for n in sorted(known) if n in stats]
    cols: dict[str, list[Any]] = {"name": names, "entry_size": [stats[n][0] for n in names],
                                  "entry_mtime_ns": [stats[n][1] for n in names]}
    for f in SourceRecord.__dataclass_fields__:
        cols[f] = [getattr(known[n], f) for n in names]
    cols["games"] = [list(g.items()) for g in cols["games"]]
    return pa.table(cols, schema=CHECKPOINT_SCHEMA.with_metadata(
        {"store_format": str(STORE_FORMAT), "written_by": _written_by()}))


class Manifest:
    """A store's manifest, read: its stamp, its entries (through the checkpoint), a source by hash or quick
    key. The base of :class:`~auditkit.store.reads.Reads` (``self._files``: where the store's files are)."""

    _files: Any
    root: Any
    _pinned: frozenset[str] | None = None  # the committed sources of a read view (see pinned)
    _quick_cache: dict[str, SourceRecord] | None = None  # quick key -> entry: see source_by_quick_key
    _sole = False                                  # the store's only writer: see sole_writer
    _format_checked = False  # the stamp read and found readable (see check_format)
    _stamped = 0  # the format of the store's stamp (0: none)
    _known: dict[str, SourceRecord] | None = None  # entry file name -> entry, as the last manifest() read them
    _held = 0                                      # how many of them the checkpoint held

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
        if self._known is None or not self._sole:
            self._known = self._read_entries().records()
        return sorted(self._known.values(), key=lambda r: (r.ingested_at, r.path))

    def entries(self) -> Entries:
        """Every committed entry (:class:`Entries`): ``_manifest/`` listed once, the entries the checkpoint
        holds at the size and time listed taken from its columns, the others read from their files (a sole
        writer's: the records it keeps up to date, see :meth:`manifest`)."""
        if self._sole:
            self.manifest()
            assert self._known is not None
            return Entries(None, dict(self._known))
        return self._read_entries()

    def _read_entries(self) -> Entries:
        self.check_format()
        listed = self._files.entries("_manifest")
        held = self._checkpoint_table()
        names = held.column("name").to_pylist()
        sizes, times = held.column("entry_size").to_pylist(), held.column("entry_mtime_ns").to_pylist()
        take = [i for i, name in enumerate(names) if listed.get(name) == (sizes[i], times[i])]
        taken = {names[i] for i in take}
        read = {name: self._source_record(f"_manifest/{name}") for name in listed if name not in taken}
        self._held = len(take)
        return Entries(held.take(pa.array(take, pa.int64())) if len(take) < len(names) else held, read)

    def _checkpoint_table(self) -> pa.Table:
        """The checkpoint's rows (:data:`CHECKPOINT_SCHEMA`; none when there is none, or when it is unreadable:
        a warning, and every entry is read from its file; ``auditkit verify`` reports it); NewerStore for a
        newer one. A store-format-2 checkpoint (:data:`CHECKPOINT_JSON`) is read when there is no other."""
        try:
            return self.checkpoint_rows()
        except NewerStore:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, OSError, pa.ArrowException) as exc:
            where = self._files.path(CHECKPOINT if self._files.exists(CHECKPOINT) else CHECKPOINT_JSON)
            log.warning("store manifest checkpoint %s is unreadable (%s): every entry read from its own file "
                        "(auditkit verify %s)", where, exc, self.root)
            return CHECKPOINT_SCHEMA.empty_table()

    def checkpoint_rows(self) -> pa.Table:
        """The checkpoint's rows, checked: none when there is none; NewerStore for a newer one, ValueError (or
        an Arrow or OS error) for one that is not a checkpoint."""
        import pyarrow.parquet as pq

        if not self._files.exists(CHECKPOINT):
            return self._json_checkpoint_rows() if self._files.exists(CHECKPOINT_JSON) else \
                CHECKPOINT_SCHEMA.empty_table()
        where = self._files.path(CHECKPOINT)
        table = pq.read_table(pa.BufferReader(self._files.read_bytes(CHECKPOINT)), use_threads=False)
        meta = table.schema.metadata or {}
        fmt = meta.get(b"store_format", b"").decode("utf-8", "replace")
        if not fmt.isdigit() or int(fmt) > STORE_FORMAT:
            raise _newer(f"store manifest checkpoint {where}", meta.get(b"written_by", b"").decode("utf-8", "replace"),
                         fmt or None)
        unknown = sorted(set(table.column_names) - set(CHECKPOINT_SCHEMA.names))
        if unknown:
            raise NewerStore(f"store manifest checkpoint {where} has columns {_written_by()} (store format "
                             f"{STORE_FORMAT}) does not know: {', '.join(unknown)}; written by a newer auditkit?")
        table = table.select(CHECKPOINT_SCHEMA.names).cast(CHECKPOINT_SCHEMA)  # KeyError: a column missing
        import pyarrow.compute as pc

        newest = pc.max(table.column("store_format")).as_py()
        if newest is not None and newest > STORE_FORMAT:
            i = pc.index(table.column("store_format"), newest).as_py()
            raise _newer(f"store manifest entry {where} ({table.column('name')[i].as_py()})",
                         table.column("written_by")[i].as_py(), newest)
        if table.column("name").null_count or table.column("sha256").null_count:
            raise ValueError("an entry with no name or SHA-256")
        return table

    def _json_checkpoint_rows(self) -> pa.Table:
        """The rows of a store-format-2 checkpoint (JSON), as :meth:`checkpoint_rows` gives them."""
        where = self._files.path(CHECKPOINT_JSON)
        data = json.loads(self._files.read_bytes(CHECKPOINT_JSON).decode("utf-8"))
        fmt = data.get("store_format")
        if not isinstance(fmt, int) or fmt > STORE_FORMAT:
            raise _newer(f"store manifest checkpoint {where}", data.get("written_by"), fmt)
        copies = {name: SourceRecord.read(e["entry"], f"{where} ({name})") for name, e in data["entries"].items()}
        stats = {name: (int(e["size"]), int(e["mtime_ns"])) for name, e in data["entries"].items()}
        return _table(copies, stats)

    def read_checkpoint(self) -> dict[str, tuple[tuple[int, int], SourceRecord]]:
        """Entry file name -> (its size and mtime when copied, its copy) of the entries the checkpoint holds
        (none when there is none or it is unreadable: see :meth:`_checkpoint_table`)."""
        table = self._checkpoint_table()
        copies = Entries(table).records()
        stats = zip(table.column("entry_size").to_pylist(), table.column("entry_mtime_ns").to_pylist(), strict=True)
        return {name: (stat, copies[name]) for name, stat in zip(table.column("name").to_pylist(), stats, strict=True)}

    def write_checkpoint(self) -> int:
        """Write the checkpoint of every committed entry, atomically (the caller is the sole writer), and remove
        a store-format-2 one; their number."""
        import pyarrow.parquet as pq

        self.manifest()
        assert self._known is not None
        table = _table(self._known, self._files.entries("_manifest"))
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd", use_dictionary=False)  # (read in 20 ms at 20,000 entries)
        self._files.write_bytes(CHECKPOINT, sink.getvalue().to_pybytes())
        self._files.delete(CHECKPOINT_JSON)
        self._held = table.num_rows
        return table.num_rows

    def drop_checkpoint(self) -> None:
        """Remove the checkpoint (before an entry is rewritten: readers then read every entry's file)."""
        self._files.delete(CHECKPOINT)
        self._files.delete(CHECKPOINT_JSON)
        self._known, self._held = None, 0

    def _checkpoint_if_due(self, ending: bool) -> None:
        """The sole writer's checkpoint rewrite, when the entries beyond it are many (:data:`CHECKPOINT_EVERY`),
        and at the end of a command when it is the JSON one of store format 2."""
        if self._known is None:
            return
        tail = len(self._known) - self._held
        if tail >= max(CHECKPOINT_EVERY, self._held) or (ending and tail and tail * 10 >= self._held) \
                or (ending and self._files.exists(CHECKPOINT_JSON)):  # a store of format 2: its checkpoint as columns
            self.write_checkpoint()

    def source(self, sha256: str) -> SourceRecord | None:
        """The manifest entry of a file content, if it was ingested."""
        rel = f"_manifest/{safe_component(sha256)}.json"
        return self._source_record(rel) if self._files.exists(rel) else None

    def source_by_quick_key(self, key: str) -> SourceRecord | None:
        """The manifest entry of the source whose quick key (:func:`auditkit.ingest.identity.quick_key`) is
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
