"""``auditkit verify``: a store's files checked against its manifest, and its sources against their hashes.

Every file a manifest entry lists (parts, index, quarantine) is checked for
existence, size, SHA-256 of its bytes and row count (from its Parquet footer);
every file under ``rounds/``, ``_index/`` and ``_quarantine/`` that no entry
lists is reported (a compacted part is checked as its ``_compacted/`` record lists
it); every source still at its recorded path is hashed again.
The manifest checkpoint (``_manifest.checkpoint.parquet``, store format 3; the JSON one of format 2) is checked
against the entries, read from their own files: each copy readers take (the
entry's file at the size and time copied) the same as the entry, none of an
entry that is gone.
Entries written before files were recorded say "not recorded" and do not fail
on that alone. Nothing is written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .store import CHECKPOINT, CHECKPOINT_JSON, NewerStore, Store
from .store.compaction import records as compactions
from .store.layout import partition_of

FOLDERS = ("rounds", "_index", "_quarantine")


@dataclass
class Verification:
    """What :func:`verify` checked and what disagreed."""

    sources: int = 0
    files_checked: int = 0
    bytes_hashed: int = 0
    rows_checked: int = 0
    problems: list[str] = field(default_factory=list)       # each names a file
    not_recorded: list[str] = field(default_factory=list)   # sources whose files an older version did not record
    sources_rechecked: int = 0
    sources_not_rechecked: list[str] = field(default_factory=list)  # "path: why"

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **self.__dict__}

    def summary(self) -> str:
        lines = [f"verified {self.files_checked} file(s) of {self.sources} source(s): {self.rows_checked} rows, "
                 f"{self.bytes_hashed} bytes hashed (SHA-256); {self.sources_rechecked} source file(s) hashed again"]
        if self.not_recorded:
            lines.append(f"{len(self.not_recorded)} source(s) ingested before files were recorded: their parts "
                         "were found by name, sizes and hashes not recorded (not checked): "
                         + ", ".join(self.not_recorded[:5]) + (" ..." if len(self.not_recorded) > 5 else ""))
        for item in self.sources_not_rechecked:
            lines.append(f"source not re-checked: {item}")
        lines += [f"DISAGREES: {p}" for p in self.problems]
        lines.append("store agrees with its manifest" if self.ok else f"{len(self.problems)} disagreement(s)")
        return "\n".join(lines)


def _sha256(store: Store, rel: str) -> str:
    h = hashlib.sha256()
    if store.remote:
        with store.filesystem.open_input_stream(store._files.path(rel)) as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    else:
        with open(store._files.path(rel), "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _check_file(store: Store, f: dict[str, Any], sizes: dict[str, int], out: Verification) -> int | None:
    """Check one listed file; its rows (None when it disagrees)."""
    rel = f["path"]
    out.files_checked += 1
    size = sizes.get(rel)
    if size is None:
        out.problems.append(f"{rel}: listed in the manifest, missing")
        return None
    if size != f["bytes"]:
        out.problems.append(f"{rel}: {size} bytes, the manifest says {f['bytes']}")
        return None
    sha = _sha256(store, rel)
    out.bytes_hashed += size
    if sha != f["sha256"]:
        out.problems.append(f"{rel}: content changed (SHA-256 {sha[:16]}..., the manifest says {f['sha256'][:16]}...)")
        return None
    try:
        rows = store._files.num_rows(rel)
    except (OSError, ValueError) as exc:  # pyarrow's errors are both
        out.problems.append(f"{rel}: unreadable Parquet ({exc})")
        return None
    if rows != f["rows"]:
        out.problems.append(f"{rel}: {rows} rows, the manifest says {f['rows']}")
        return None
    out.rows_checked += rows
    return rows


def _recheck_source(rec: Any, out: Verification) -> None:
    if rec.path.startswith(("<", "live ")) or rec.format in ("simulated", "jsonl-live"):
        out.sources_not_rechecked.append(f"{rec.path}: not a file (nothing to hash)")
        return
    path = Path(rec.path)
    if not path.is_file():
        out.sources_not_rechecked.append(f"{rec.path}: not found at its recorded path")
        return
    from .ingest.identity import source_sha256

    try:
        sha = source_sha256(path)
    except OSError as exc:
        out.sources_not_rechecked.append(f"{rec.path}: unreadable ({exc.strerror or exc})")
        return
    out.sources_rechecked += 1
    if sha != rec.sha256:
        out.problems.append(f"source {rec.path}: SHA-256 {sha[:16]}... is not the {rec.sha256[:16]}... "
                            "recorded when it was ingested (the file changed since)")


def _entries(store: Store) -> dict[str, Any]:
    """Entry file name -> the manifest entry read from its own file (not from the checkpoint)."""
    store.check_format()
    return {rel[len("_manifest/"):]: store._source_record(rel) for rel in sorted(store._files.files("_manifest/*.json"))}


def _check_checkpoint(store: Store, entries: dict[str, Any], out: Verification) -> None:
    """The checkpoint against the entries: unreadable, a copy unlike its entry, a copy of an entry gone."""
    name = CHECKPOINT if store._files.exists(CHECKPOINT) else CHECKPOINT_JSON
    if not store._files.exists(name):
        return
    import pyarrow as pa

    try:
        store.checkpoint_rows()
    except NewerStore:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OSError, pa.ArrowException) as exc:
        out.problems.append(f"{name}: unreadable ({exc}); readers read every entry's own file")
        return
    held, stats = store.read_checkpoint(), store._files.entries("_manifest")
    for entry in sorted(held):
        if entry not in entries:
            out.problems.append(f"{name}: holds _manifest/{entry}, which is not there (readers ignore the copy)")
        elif held[entry][0] == stats.get(entry) and held[entry][1] != entries[entry]:
            out.problems.append(f"{name}: its copy of _manifest/{entry} is not the entry, at the entry's size "
                                "and time (readers read the copy)")


def verify(store: Store) -> Verification:
    """Check every file and source of ``store`` (the caller holds its lock, shared)."""
    out = Verification()
    entries = _entries(store)
    _check_checkpoint(store, entries, out)
    records = sorted(entries.values(), key=lambda r: (r.ingested_at, r.path))
    out.sources = len(records)
    sizes: dict[str, int] = {}
    for folder in FOLDERS:
        sizes.update(store._files.sizes(folder))
    listed: set[str] = set()
    legacy = set()
    for rec in records:
        sha16 = rec.sha256[:16]
        if rec.files is None:
            legacy.add(sha16)
            out.not_recorded.append(rec.path)
        else:
            part_rows, index_rows = 0, None
            for f in rec.files:
                listed.add(f["path"])
                _check_file(store, f, sizes, out)
                if f["path"].startswith("_index/"):
                    index_rows = f["rows"]
                elif partition_of(f["path"]) is not None:
                    part_rows += f["rows"]
            if index_rows is not None and index_rows != part_rows:
                out.problems.append(f"_index/{sha16}.parquet: {index_rows} rounds indexed, the parts of "
                                    f"{rec.path} hold {part_rows}")
        _recheck_source(rec, out)
    for comp in compactions(store):  # a compacted part: checked as its record lists it, never "not listed"
        listed.add(comp["path"])
        _check_file(store, comp, sizes, out)
        gone = [r["path"] for r in comp["replaces"] if r["path"] not in listed]
        if gone:
            out.problems.append(f"{comp['path']}: compacts {', '.join(gone[:3])}, not listed in the manifest "
                                "(readers read the listed parts instead)")
    for rel in sorted(sizes):
        if rel in listed:
            continue
        name = rel.rsplit("/", 1)[1]
        prefix = name[5:21] if name.startswith("part-") else name[:16]
        if prefix in legacy:
            continue
        out.problems.append(f"{rel}: not listed in the manifest (readers ignore it)")
    return out
