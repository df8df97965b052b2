"""The manifest: one entry a committed source (its commit point), the store's format stamp, and the
checkpoint of the entries that readers read instead of opening each (store format 2)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .atomic import safe_component
from .errors import CorruptStore, NewerStore

log = logging.getLogger("auditkit.store")

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
or a tenth of it at the end of a command); removed before an entry is rewritten (:func:`.layout.rebuild_index`)."""

CHECKPOINT_EVERY = 2000
"""Entries beyond the checkpoint that make a sole writer rewrite it at once (else at least this many or as many
as it holds, whichever is more, within a command): its rewrites cost, in all, about twice its final size."""


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
