"""The rounds read since the last checkpoint, and their commit to the store as one source of format
``jsonl-live`` through ingest's writer (:class:`~auditkit.ingest.writer.SourceWriter`), under the
store's lock: what another writer stored meanwhile is found by the writer's duplicate check on hash
columns, counted as already stored (same content) or quarantined (other content), as ingest does."""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..ingest.dedup import SeenRounds
from ..ingest.writer import Block, SourceWriter
from ..store import SourceRecord, Store, StoreLocked, named_error

COUNTS = ("lines_read", "already_stored", "blank", "attached")  # what the watcher counts (the writer the rest)


@dataclass
class Rows:
    """The rounds to store of one file (one generation of it, read under one name): per game, the
    staged tables (with ``date``, without ``source_file``) and the content hash of each of their rows,
    and the raw lines (for a duplicate's quarantine entry)."""

    tables: dict[str, list[pa.Table]] = field(default_factory=dict)
    hashes: dict[str, list[np.ndarray]] = field(default_factory=dict)
    raws: dict[int, bytes] = field(default_factory=dict)

    def add(self, game: str, table: pa.Table, line_hash: np.ndarray, raws: dict[int, bytes]) -> None:
        self.tables.setdefault(game, []).append(table)
        self.hashes.setdefault(game, []).append(line_hash)
        self.raws.update(raws)

    def merge(self, later: Rows) -> None:
        for game, tables in later.tables.items():
            self.tables.setdefault(game, []).extend(tables)
            self.hashes.setdefault(game, []).extend(later.hashes[game])
        self.raws.update(later.raws)

    def block(self, file: str) -> Block:
        """The rows as one block of the writer, in line order."""
        tables = {g: pa.concat_tables(t) for g, t in self.tables.items()}
        return Block.of(tables, [np.concatenate(self.hashes[g]) for g in tables], file=file)


@dataclass
class Pending:
    """What the polls read that the store has not committed yet."""

    rows: dict[tuple[str, str], Rows] = field(default_factory=dict)  # (source_key, file) -> rounds to store
    bad: dict[str, list[tuple[int, bytes, str, str | None]]] = field(default_factory=dict)  # file -> quarantined
    ranges: dict[str, list[Any]] = field(default_factory=dict)  # source_key -> [path, first, last]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    size: int = 0

    def quarantine(self, file: str, line: int, raw: bytes, reason: str, round_id: str | None) -> None:
        self.bad.setdefault(file, []).append((line, raw, reason, round_id))

    def merge(self, later: Pending) -> Pending:
        """This (a commit that failed) and what was read after it, as one."""
        for key, rows in later.rows.items():
            if key in self.rows:
                self.rows[key].merge(rows)
            else:
                self.rows[key] = rows
        for file, bad in later.bad.items():
            self.bad.setdefault(file, []).extend(bad)
        for key, (path, first, last) in later.ranges.items():
            rng = self.ranges.setdefault(key, [path, first, last])
            rng[0], rng[1], rng[2] = path, min(rng[1], first), max(rng[2], last)
        for key, n in later.counts.items():
            self.counts[key] += n
        self.size += later.size
        return self

    def blocks(self) -> Iterator[tuple[Block, Callable[[int], bytes]]]:
        """The writer's blocks: the rounds of each file, its quarantined lines, then the counts."""
        for (_source, file), rows in self.rows.items():
            yield rows.block(file), rows.raws.__getitem__
        for file, bad in self.bad.items():
            yield Block.of({}, [], bad=bad, file=file), bytes
        c = self.counts
        yield Block.of({}, [], lines_read=c["lines_read"], blank=c["blank"], attached=c["attached"],
                       already=c["already_stored"]), bytes

    def __bool__(self) -> bool:
        return self.counts["lines_read"] > 0


def commit(store: Store, seen: SeenRounds, p: Pending, fmt: str, timeout: float) -> SourceRecord:
    """Commit the rounds of ``p`` as one source of format ``fmt``, under the store's lock (waiting
    ``timeout`` seconds for it): ``seen`` (the watcher's view of the store's index, held) learns what
    other writers committed since, then the writer checks every round against it and stores the new ones."""
    ranges = sorted(p.ranges.items(), key=lambda kv: (kv[1][0], kv[1][1]))
    sha = hashlib.sha256(json.dumps(["live", ranges, uuid.uuid4().hex]).encode()).hexdigest()
    desc = "live " + "; ".join(f"{path} lines {a}-{b}" for _k, (path, a, b) in ranges)
    if len(desc) > 2000:
        desc = desc[:2000] + f"... ({len(ranges)} files)"
    with store.lock(timeout, command="auditkit watch", sweep=False):
        seen.refresh()  # the index files other writers committed since
        mark = seen.mark()
        writer = SourceWriter(store, seen, sha, desc, SourceRecord(sha256=sha, path=desc, size=p.size, format=fmt))
        try:
            for block, raw in p.blocks():
                writer.add(block, raw)
            return writer.commit()
        except BaseException:
            writer.abort()
            with contextlib.suppress(OSError):
                store.discard_uncommitted(sha)
            raise
        finally:
            seen.rollback(mark)  # committed rounds are the store's now: found there after the next refresh


class LiveWriter:
    """The watcher's side of the store: its view of the store's index (held, for the polls' duplicate
    check and each commit's), and the rounds of a commit that failed, kept for the next one."""

    def __init__(self, store: Store, fmt: str, lock_timeout: float):
        self.store, self.fmt, self.lock_timeout = store, fmt, lock_timeout
        self.seen = SeenRounds(store, always_load=True)
        self.failed: Pending | None = None

    def take(self, pending: Pending) -> Pending:
        """The rounds of the next commit: those of a commit that failed, then ``pending``."""
        if self.failed is not None:
            pending, self.failed = self.failed.merge(pending), None
        return pending

    def commit(self, pending: Pending, final: bool, warn: Callable[[str, str], None]) -> bool:
        """Commit ``pending`` (in the writer thread), without waiting for the store's lock unless ``final``
        (then ``lock_timeout`` seconds, and StoreLocked naming the holder); False while another writer
        holds it (the rounds kept for the next checkpoint, one warning)."""
        if not pending:
            return True
        try:
            commit(self.store, self.seen, pending, self.fmt, self.lock_timeout if final else 0.0)
        except StoreLocked as exc:
            self.failed = pending
            if final:
                raise
            warn("store-locked", f"{exc}: rounds kept for the next checkpoint")
            return False
        except OSError as exc:
            self.failed = pending  # committed with the next flush; no checkpoint past them
            raise named_error(exc, Path(str(self.store.root))) from exc
        except BaseException:
            self.failed = pending
            raise
        return True
