"""Small parts compacted: the rounds of many small sources of one partition read from one file.

A casino sends a file per table per day, so a partition may hold thousands of
parts of a few rounds each, and reading a Parquet file costs about a millisecond
whatever it holds (its footer, its 30-odd columns). While a store object is the
store's sole writer (:meth:`auditkit.store.Store.sole_writer`: a command under
the exclusive lock), the parts it writes of fewer than :data:`SMALL_ROWS` rows
are kept in memory too; when the block ends (or :data:`HELD_ROWS` rows or :data:`HELD_PARTS` parts are
held), the committed ones of a partition, :data:`MIN_PARTS` or more, are
written again as one part ``rounds/game=G/date=D/compact-<id>.parquet``, then a
record ``_compacted/<id>.json`` saying which parts it replaces (its commit
point: written last, atomically). A compacted part of fewer than
:data:`SMALL_ROWS` rows is written again with its partition's next small parts
of the same command (its record and part then removed), so a partition is read
from a few large parts, not from one a compaction.

Readers (:func:`apply`) read the compacted part instead of the parts it
replaces when every one of them is still listed by the manifest and the
compacted part is there at its recorded size; otherwise the parts themselves.
The small parts stay where they are: their sources' manifest entries list them
(``auditkit verify`` checks them, a duplicate's content is read back from them),
so a store stays readable by a version that knows nothing of compaction (it
warns that the compacted part is not in the manifest and ignores it). The cost
is the small files' bytes twice on disk (a few KiB a file).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .layout import partition_of
from .manifest import file_entry

SMALL_ROWS = 10_000  # a part of fewer rows is small
HELD_ROWS = 500_000  # rows of small parts held for compaction at most (then written)
HELD_PARTS = 2_000   # small parts held at most (a table of a few rows costs ~30 KiB of columns: 60 MiB)
MIN_PARTS = 8        # small parts of one partition compacted together at least
FOLDER = "_compacted"


@dataclass
class Compactor:
    """The small parts a sole writer wrote: by source until it commits, then by partition."""

    pending: dict[str, list[tuple[str, pa.Table | None]]] = field(default_factory=dict)  # sha16 -> (rel, rows)
    ready: dict[tuple[str, str], list[tuple[str, pa.Table | None]]] = field(default_factory=dict)
    small: dict[tuple[str, str], tuple[dict[str, Any], str]] = field(default_factory=dict)  # its last, if small
    rows: int = 0
    parts: int = 0

    def written(self, sha16: str, rel: str, table: pa.Table | None, rows: int) -> None:
        """A part written for a source: its rows in memory, or None (a worker's: read back if compacted)."""
        if rows < SMALL_ROWS and partition_of(rel) is not None:
            self.pending.setdefault(sha16, []).append((rel, table))
            self.rows += rows
            self.parts += 1

    def dropped(self, sha16: str, rel: str | None = None) -> None:
        """A source's parts discarded (all of them, or ``rel``)."""
        parts = self.pending.pop(sha16, [])
        kept = [(r, t) for r, t in parts if rel is not None and r != rel]
        if kept:
            self.pending[sha16] = kept
        self.rows -= sum(_rows(t) for _, t in parts) - sum(_rows(t) for _, t in kept)
        self.parts -= len(parts) - len(kept)

    def committed(self, sha16: str, files: list[dict[str, Any]] | None) -> bool:
        """The source's small parts, committed, wait for their partition's compaction; True when the
        rows or parts held are past :data:`HELD_ROWS` or :data:`HELD_PARTS` (time to write them)."""
        listed = {f["path"] for f in files or []}
        for rel, table in self.pending.pop(sha16, []):
            key = partition_of(rel)
            if key is not None and rel in listed:
                self.ready.setdefault(key, []).append((rel, table))
        return self.rows >= HELD_ROWS or self.parts >= HELD_PARTS

    def write(self, store: Any) -> int:
        """Write the compacted part and its record of each partition with :data:`MIN_PARTS` small parts
        or more, with the rows of the compacted part this object wrote last for the partition when it is still
        small (fewer than :data:`SMALL_ROWS`; its record and part removed once the new record is written), so
        a partition is read from a few large parts, not from one a compaction; forget what was held. The number
        of parts written."""
        n = 0
        for (game, date), parts in sorted(self.ready.items()):
            if len(parts) < MIN_PARTS:
                continue
            name = uuid.uuid4().hex
            rel = f"{parts[0][0].rsplit('/', 1)[0]}/compact-{name}.parquet"
            tables = [t if t is not None else store.read_part(r) for r, t in parts]
            replaces = [{"path": r, "rows": t.num_rows} for (r, _), t in zip(parts, tables, strict=True)]
            last = self.small.pop((game, date), None)
            if last is not None:  # its own, written under the same exclusive lock: read as it wrote it
                tables.insert(0, store.read_part(last[0]["path"]))
                replaces[:0] = last[0]["replaces"]
            table = pa.concat_tables(tables)
            size, sha = store._files.write_parquet(rel, table)
            record = {"partition": [game, date], **file_entry(rel, table.num_rows, size, sha), "replaces": replaces}
            store._files.write_bytes(where := f"{FOLDER}/{name}.json", json.dumps(record, indent=1).encode("utf-8"))
            if last is not None:  # (a crash before: both records there, readers take the larger)
                store._files.delete(last[1])
                store._files.delete(last[0]["path"])
            if table.num_rows < SMALL_ROWS:
                self.small[(game, date)] = (record, where)
            n += 1
        held = [(sha16, p) for sha16, p in self.pending.items()]  # sources not committed yet stay held
        self.ready, self.rows, self.parts = {}, 0, 0
        self.pending = {}
        for sha16, items in held:
            self.pending[sha16] = items
            self.rows += sum(_rows(t) for _, t in items)
            self.parts += len(items)
        return n


def _rows(table: pa.Table | None) -> int:
    return 0 if table is None else table.num_rows


def records(store: Any) -> list[dict[str, Any]]:
    """The compaction records of a store (one unreadable is skipped: its parts are read instead)."""
    out = []
    for rel in store._files.files(f"{FOLDER}/*.json"):
        try:
            rec = json.loads(store._files.read_bytes(rel).decode("utf-8"))
            if isinstance(rec, dict) and {"partition", "path", "rows", "bytes", "replaces"} <= set(rec):
                out.append(rec)
        except (OSError, ValueError):
            continue
    return out


def apply(layout: Any, compactions: list[dict[str, Any]]) -> None:
    """Read each compacted part instead of the parts it replaces, when they are all still listed (with the
    rows recorded) and it is there at its recorded size; a compacted part is never reported as unlisted."""
    rows_of = {}
    for key, rels in layout.parts.items():
        for rel in rels:
            rows_of[rel] = key
    known = set()
    for rec in sorted(compactions, key=lambda r: -len(r["replaces"])):
        known.add(rec["path"])
        key = tuple(rec["partition"])
        replaced = [r["path"] for r in rec["replaces"]]
        if layout.sizes.get(rec["path"]) != rec["bytes"] or sum(r["rows"] for r in rec["replaces"]) != rec["rows"]:
            continue
        if not replaced or any(rows_of.get(r) != key for r in replaced):  # one gone, or taken by another
            continue
        for r in replaced:
            del rows_of[r]
        gone = set(replaced)
        layout.parts[key] = sorted([rec["path"], *(r for r in layout.parts[key] if r not in gone)])
    layout.unlisted = [r for r in layout.unlisted if r not in known]
