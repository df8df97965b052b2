"""The rounds read since the last checkpoint, and their commit to the store as one source of format
``jsonl-live``, under the store's lock, after taking out what another writer stored meanwhile."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..ingest.dedup import duplicate_reason
from ..ingest.sources import quarantine_entry
from ..schema import QUARANTINE
from ..store import INDEX, SourceRecord, Store

LOCK_TIMEOUT = 60.0          # seconds the last commit (at exit) waits for the store's lock; the others do not wait


@dataclass
class Pending:
    """What a poll read that the store has not committed yet."""

    tables: dict[tuple[str, str], list[pa.Table]] = field(default_factory=dict)
    index: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in INDEX.names})
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    ranges: dict[str, list[Any]] = field(default_factory=dict)  # source_key -> [path, first, last]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("lines_read", "stored", "already_stored", "quarantined", "blank", "attached"), 0))
    games: dict[str, int] = field(default_factory=dict)
    size: int = 0
    rows: list[tuple[str, bytes]] = field(default_factory=list)  # (game, raw line) of each index row

    def merge(self, later: Pending) -> Pending:
        """This (a commit that failed) and what was read after it, as one."""
        for key, tables in later.tables.items():
            self.tables.setdefault(key, []).extend(tables)
        for column, values in later.index.items():
            self.index[column].extend(values)
        self.quarantine += later.quarantine
        for key, (path, first, last) in later.ranges.items():
            rng = self.ranges.setdefault(key, [path, first, last])
            rng[0], rng[1], rng[2] = path, min(rng[1], first), max(rng[2], last)
        for key, n in later.counts.items():
            self.counts[key] += n
        for game, n in later.games.items():
            self.games[game] = self.games.get(game, 0) + n
        self.size += later.size
        self.rows += later.rows
        return self

    def drop_stored(self, known: dict[str, tuple[int, str, int]]) -> None:
        """Take out the rounds another writer stored since they were read (``known``: round id ->
        its stored line hash, file, line): already stored with the same content, else quarantined."""
        keep = []
        for k, (rid, line_hash) in enumerate(zip(self.index["round_id"], self.index["line_hash"], strict=True)):
            prior = known.get(rid)
            if prior is None:
                keep.append(k)
                continue
            game, raw = self.rows[k]
            self.counts["stored"] -= 1
            self.games[game] -= 1
            if prior[0] == line_hash:
                self.counts["already_stored"] += 1
            else:
                self.counts["quarantined"] += 1
                self.quarantine.append(quarantine_entry(self.index["source_file"][k], self.index["source_line"][k],
                                                        raw, duplicate_reason(rid, prior[1], prior[2]), rid, None))
        self.index = {c: [v[k] for k in keep] for c, v in self.index.items()}
        self.rows = [self.rows[k] for k in keep]
        self.games = {g: n for g, n in self.games.items() if n}
        gone = pa.array(list(known), pa.string())
        for key, tables in list(self.tables.items()):
            left = [t.filter(pc.invert(pc.is_in(t["round_id"], value_set=gone))) for t in tables]
            self.tables[key] = [t for t in left if t.num_rows]
            if not self.tables[key]:
                del self.tables[key]

    def __bool__(self) -> bool:
        return self.counts["lines_read"] > 0


class Commits:
    """The store half of :class:`~auditkit.live.watcher.Watcher` (a mixin)."""

    live_format = "jsonl-live"  # the format of the sources it commits

    def _commit(self, p: Pending, timeout: float) -> None:
        """Rounds read since the last checkpoint as one source of the store, committed by its protocol
        (parts, index and quarantine first, manifest last)."""
        store = self.store
        assert store is not None and self.stored_seen is not None
        with store.lock(timeout, command="auditkit watch", sweep=False):
            if self.stored_seen.refresh() and p.index["round_id"]:  # another writer committed since
                known = self.stored_seen.stored_rows(pa.array(p.index["round_id"], pa.string()),
                                                     np.array(p.index["id_hash"], np.uint64))
                if known:
                    p.drop_stored(known)
            self._write_source(store, p)

    def _write_source(self, store: Store, p: Pending) -> None:
        ranges = sorted(p.ranges.items(), key=lambda kv: (kv[1][0], kv[1][1]))
        sha = hashlib.sha256(json.dumps(["live", ranges, uuid.uuid4().hex]).encode()).hexdigest()
        desc = "live " + "; ".join(f"{path} lines {a}-{b}" for _k, (path, a, b) in ranges)
        if len(desc) > 2000:
            desc = desc[:2000] + f"... ({len(ranges)} files)"
        partitions = []
        for (game, date), tables in sorted(p.tables.items()):
            store.write_rounds(game, date, pa.concat_tables(tables), sha)
            partitions.append(f"{game}/{date}")
        store.write_index(sha, pa.Table.from_pydict(p.index, schema=INDEX))
        q = [dict(e, sha256=sha) for e in p.quarantine]
        store.write_quarantine(sha, pa.Table.from_pylist(q, schema=QUARANTINE))
        rec = SourceRecord(sha256=sha, path=desc, size=p.size, format=self.live_format, games=dict(p.games),
                           partitions=partitions, **p.counts)
        if not rec.balanced:
            raise AssertionError(f"live line accounting does not balance: {rec}")
        store.commit_source(rec)
