"""What a store's manifest says it holds, checked against what is there.

Each manifest entry written by this version lists its files (``files``: the
relative path, rows, bytes and SHA-256 of each part, index and quarantine file,
recorded from the bytes as they were written). Readers read exactly those
files: :class:`Layout` is the store as its manifest lists it, checked against
one listing of ``rounds/`` (existence by the listing's names, size only of the
parts read: not of the small parts a compacted part replaces; the index files
by a listing of ``_index/`` of their own, when an ingest checks them).
Entries written before (no ``files``) still read: their parts are found by
their source's name prefix, as before, and their sizes and hashes are "not
recorded" (``auditkit verify`` says so and does not fail on that alone).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from .errors import CorruptStore
from .manifest import Entries, SourceRecord

log = logging.getLogger("auditkit.store")
_WARNED: set[str] = set()  # unlisted files already warned about in this process
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PART = r"^rounds/game=[^/]*/date=[^/]*/[^/]*$"  # a file of a partition (see partition_of)
INDEX = pa.schema([("id_hash", pa.uint64()), ("line_hash", pa.uint64()), ("round_id", pa.string()),
                   ("source_file", pa.string()), ("source_line", pa.int64())])


def _index_schema() -> pa.Schema:
    """:data:`INDEX` with the version of the hashes it holds in its metadata."""
    from ..ingest.hashing import VERSION, VERSION_KEY

    return INDEX.with_metadata({VERSION_KEY: VERSION})


def partition_of(rel: str) -> tuple[str, str] | None:
    """(game, date) of ``rounds/game=<g>/date=<d>/<name>``."""
    bits = rel.split("/")
    if len(bits) == 4 and bits[0] == "rounds" and bits[1].startswith("game=") and bits[2].startswith("date="):
        return bits[1][5:], bits[2][5:]
    return None


class Listing(Mapping[str, int]):
    """Relative path -> size of every file under a folder of a local store, from one walk of its names (no
    temporary file, no link to a folder followed); a file's size is read (one ``stat``) only when asked: a
    reader checks the sizes of the parts it reads, not of the thousands of small parts a compacted one replaces."""

    def __init__(self, root: Path, folder: str):
        self._found: dict[str, os.DirEntry[str]] = {}
        self._read: dict[str, int] = {}
        folders = [(str(root / folder), folder)]
        while folders:
            path, rel = folders.pop()
            with contextlib.suppress(OSError), os.scandir(path) as it:
                for e in it:
                    try:  # (not a context manager an entry: 20,000 of them)
                        if e.is_dir():
                            if not e.is_symlink():
                                folders.append((e.path, f"{rel}/{e.name}"))
                        elif not e.name.startswith("."):
                            self._found[f"{rel}/{e.name}"] = e
                    except OSError:
                        continue

    def __getitem__(self, rel: str) -> int:
        try:
            size = self._read[rel] = self._found[rel].stat().st_size
        except OSError:  # gone since it was listed
            raise KeyError(rel) from None
        return size

    def __reduce__(self) -> Any:
        """Pickled (a read view's layout, sent to workers) as the sizes read: what the layout was checked against."""
        return dict, (self._read,)

    def __contains__(self, rel: object) -> bool:
        return rel in self._found

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)


def listing(files: Any, folder: str) -> Mapping[str, int]:
    """Relative path -> size of every file under ``folder``: a :class:`Listing` (sizes read when asked) of a
    local store, the listing with sizes of any other (an object store's comes with them)."""
    from .files import _LocalFiles

    return Listing(files.root, folder) if isinstance(files, _LocalFiles) else files.sizes(folder)


@dataclass
class Layout:
    """The committed store as its manifest lists it: the parts of each partition (with their
    recorded rows, None when an older entry did not record them) and the index file of each source."""

    parts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    rows: dict[tuple[str, str], int | None] = field(default_factory=dict)
    sizes: Mapping[str, int] = field(default_factory=dict)                 # the listing it was checked against
    recorded: dict[str, int] = field(default_factory=dict)                 # listed part -> bytes recorded
    unlisted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)      # "path: why" of listed parts gone or of another size
    files: pa.Table | None = None                          # every file the entries list (Entries.file_table)
    legacy: list[tuple[str, str]] = field(default_factory=list)  # (sha16, format) of entries that list none

    @functools.cached_property
    def index(self) -> dict[str, dict[str, Any] | None]:
        """sha16 -> the recorded entry of its index file (None: an older entry, which recorded none)."""
        out: dict[str, dict[str, Any] | None] = {sha16: None for sha16, fmt in self.legacy if fmt != "simulated"}
        if self.files is not None:  # (simulated sources have no index)
            import pyarrow.compute as pc

            for f in self.files.filter(pc.starts_with(self.files.column("path"), "_index/")).to_pylist():
                out[f.pop("owner")] = f
        return out

    @functools.cached_property
    def source_rows(self) -> dict[str, int | None]:
        """sha16 -> rows of its parts, as recorded (None: an older entry)."""
        out: dict[str, int | None] = {sha16: None for sha16, _fmt in self.legacy}
        if self.files is not None:
            import pyarrow.compute as pc

            owners = self.files.column("owner").to_pylist()
            out.update((sha16, 0) for sha16 in owners)
            parts = self.files.filter(pc.match_substring_regex(self.files.column("path"), _PART))
            for row in parts.group_by("owner").aggregate([("rows", "sum")]).to_pylist():
                out[row["owner"]] = row["rows_sum"]
        return out

    def check_sizes(self) -> None:
        """Note each part read (a compacted part's small parts are not) of another size than recorded."""
        for rels in self.parts.values():
            for rel in rels:
                want = self.recorded.get(rel)
                if want is not None and (size := self.sizes.get(rel)) != want:
                    self.missing.append(f"listed part {rel} is missing" if size is None else
                                        f"listed part {rel} is {size} bytes, the manifest says {want}")

    def check(self) -> None:
        """Warn once about each unlisted file; raise CorruptStore naming the damaged listed parts."""
        for rel in self.unlisted:
            if rel not in _WARNED:
                _WARNED.add(rel)
                log.warning("store file %s is not in the manifest: ignored (auditkit verify lists such files)", rel)
        if self.missing:
            more = f" and {len(self.missing) - 3} more" if len(self.missing) > 3 else ""
            raise CorruptStore("store damaged: " + "; ".join(self.missing[:3]) + more
                               + " (auditkit verify STORE lists everything that disagrees)")


def build_layout(entries: Entries | list[SourceRecord], listing: Mapping[str, int]) -> Layout:
    """The :class:`Layout` of manifest entries against ``listing`` (relative path -> size of every file under
    ``rounds/``): the parts each entry lists that are there (by name: :meth:`Layout.check_sizes` checks the
    sizes of those read, once compacted parts replaced theirs), and the unlisted ones. Built from columns:
    a partition's parts are a slice of the sorted paths, not a Python step a part."""
    import numpy as np
    import pyarrow.compute as pc

    if not isinstance(entries, Entries):
        entries = Entries.of(entries)
    legacy, files = entries.file_table()
    out = Layout(sizes=listing, files=files, legacy=legacy)
    names = pa.array(list(listing), pa.string())
    path = files.column("path")
    parts = files.filter(pc.match_substring_regex(path, _PART))
    there = pc.is_in(parts.column("path"), value_set=names)
    out.missing += [f"listed part {rel} is missing" for rel in pc.filter(parts.column("path"), pc.invert(there)).to_pylist()]
    parts = parts.filter(there)
    parts = parts.take(pc.sort_indices(parts.column("path")))
    rels = parts.column("path").to_pylist()
    out.recorded = dict(zip(rels, parts.column("bytes").to_pylist(), strict=True))
    folders = pc.replace_substring_regex(parts.column("path"), r"/[^/]*$", "").combine_chunks().dictionary_encode()
    if rels:
        codes = folders.indices.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        ends = np.r_[starts[1:], len(rels)]
        sums = np.add.reduceat(parts.column("rows").to_numpy(), starts)
        for start, end, n in zip(starts.tolist(), ends.tolist(), sums.tolist(), strict=True):
            key = partition_of(rels[start])
            assert key is not None
            out.parts[key], out.rows[key] = rels[start:end], n
    legacy_set = {sha16 for sha16, _fmt in legacy}
    committed = entries.sha16s()
    for rel in sorted(pc.filter(names, pc.invert(pc.is_in(names, value_set=path))).to_pylist()):
        key = partition_of(rel)
        if key is None:
            continue
        name = rel.rsplit("/", 1)[1]
        prefix = name[5:21] if name.startswith("part-") and name.endswith(".parquet") else None
        if prefix in legacy_set:
            out.parts.setdefault(key, []).append(rel)
            out.rows[key] = None
        elif prefix is None or prefix in committed:
            out.unlisted.append(rel)  # a copy, or a file put there by hand
        # else: a part of an ingest not committed (yet): skipped, removed by its next ingest
    for key in out.parts:
        out.parts[key].sort()
    return out


def check_index(store: Any, hashed: bool = False) -> list[tuple[str, str, str | None]]:
    """(source prefix, index file, what is wrong with it or None) of every committed source with an
    index: missing, of another size (or, when ``hashed``, SHA-256) than recorded, or of other rows than
    its source's parts."""
    layout = store.layout()
    sizes = store._files.sizes("_index")
    out = []
    for sha16, entry in sorted(layout.index.items()):
        rel = entry["path"] if entry is not None else f"_index/{sha16}.parquet"
        size = sizes.get(rel)
        problem = None
        if size is None:
            problem = f"index file {rel} is missing"
        elif entry is not None:
            if size != entry["bytes"]:
                problem = f"index file {rel} is {size} bytes, the manifest says {entry['bytes']}"
            elif entry["rows"] != layout.source_rows.get(sha16):
                problem = (f"index file {rel} lists {entry['rows']} rounds, its source's parts hold "
                           f"{layout.source_rows.get(sha16)}")
            elif hashed and entry["sha256"] and hashlib.sha256(store._files.read_bytes(rel)).hexdigest() != \
                    entry["sha256"]:  # (an in-memory store's files have no bytes to hash)
                problem = f"index file {rel} is not the file written (its SHA-256 differs from the manifest's)"
        else:  # an older entry: rows from the files' footers
            parts = store.source_parts(sha16)
            got, want = store._files.num_rows(rel), sum(store._files.num_rows(p) for p in parts)
            if got != want:
                problem = f"index file {rel} lists {got} rounds, its source's parts hold {want}"
        out.append((sha16, rel, problem))
    return out


def rebuild_index(store: Any, sha16: str) -> None:
    """Write a source's index again from its parts (under the store's exclusive lock), and its
    manifest entry's record of the index."""
    import json

    import numpy as np

    from ..ingest.hashing import content_columns, id_hashes, row_hashes

    tables = []
    for rel in store.source_parts(sha16):
        t = store.read_part(rel)
        tables.append(pa.table({
            "id_hash": pa.array(id_hashes(t["round_id"]), pa.uint64()),
            "line_hash": pa.array(row_hashes(t, content_columns(t.column_names)), pa.uint64()),
            "round_id": t["round_id"], "source_file": t["source_file"], "source_line": t["source_line"]},
            schema=INDEX))
    table = pa.concat_tables(tables) if tables else INDEX.empty_table()
    if table.num_rows:
        table = table.take(np.argsort(table["source_line"].to_numpy(), kind="stable"))
    store.write_index(sha16, table)
    written = store._written.pop(sha16, [])
    store.drop_checkpoint()  # first: a crash between the two leaves no stale copy of the entry
    for rel in store._files.files(f"_manifest/{sha16}*.json"):
        rec = store._source_record(rel)
        if rec.files is not None:
            rec.files = sorted([f for f in rec.files if not f["path"].startswith("_index/")] + written,
                               key=lambda f: f["path"])
            store._files.write_bytes(rel, json.dumps(rec.__dict__, indent=1, sort_keys=True).encode("utf-8"))
    store._layout_cache = None
