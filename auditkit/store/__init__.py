"""The Parquet store: hive partitions of rounds, findings, a manifest that commits each source, streaming reads.

Layout under the store root::

    rounds/game=<game>/date=<yyyy-mm-dd>/part-<uuid>.parquet   stored rounds
    findings/game=<game>/date=<yyyy-mm-dd>/findings.parquet    findings of that partition
    _manifest/<sha256>.json                                   one record per ingested source file
    _manifest.checkpoint.parquet                              the entries as of its writing, as columns
    _index/<sha16>.parquet                                    the round ids of a source (duplicate check)
    _quarantine/<sha16>.parquet                               its bad lines (none: no file, format 2 on)
    rounds/game=<game>/date=<yyyy-mm-dd>/compact-<id>.parquet  small parts of many sources, read as one
    _compacted/<id>.json                                      which parts it replaces (.compaction)
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

Modules, lowest first: :mod:`.errors`, :mod:`.atomic` (atomic writes), :mod:`.parquet` (files written
whole, hashed), :mod:`.files` (a folder or an object store behind one protocol) and :mod:`.memory` (the
in-memory store), :mod:`.manifest` (entries, stamp, checkpoint), :mod:`.layout` (what the manifest lists,
checked), :mod:`.compaction`, :mod:`.lock`, :mod:`.reads` (the readers) and :mod:`.store` (the commit protocol).
"""

from __future__ import annotations

from .atomic import atomic_path, named_error, pid_alive, private_temp_dir, remove_stale_temps, safe_component
from .errors import CorruptStore, NewerStore, StoreLocked
from .files import LOCK_NAME, _LocalFiles, _ObjectFiles, is_uri
from .layout import INDEX
from .manifest import CHECKPOINT, CHECKPOINT_JSON, STORE_FILE, STORE_FORMAT, SourceRecord
from .memory import _HeldStream, _MemoryFiles
from .parquet import ROW_GROUP, ParquetStream, compression_for, write_parquet_atomic
from .store import Store

__all__ = ["atomic_path", "named_error", "safe_component", "pid_alive", "private_temp_dir", "remove_stale_temps", "StoreLocked",
           "CorruptStore", "LOCK_NAME", "Store", "SourceRecord", "INDEX", "is_uri", "ParquetStream", "ROW_GROUP",
           "NewerStore", "STORE_FORMAT", "STORE_FILE", "CHECKPOINT", "CHECKPOINT_JSON", "compression_for", "write_parquet_atomic",
           "_LocalFiles", "_ObjectFiles", "_MemoryFiles", "_HeldStream"]
