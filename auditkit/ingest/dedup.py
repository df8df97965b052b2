"""Duplicate round ids, found with hash columns: within a block, against the rounds met earlier in the run (sorted
numpy runs) and against the store's index (sorted ``id_hash``, rows read only for the ids that collide).

The first round stored under an id wins. A later line with that id is *already stored* when its row hash
(:func:`auditkit.ingest.hashing.row_hashes`) is the first one's, else a duplicate with other content. Index files
written before these hashes are read too: their round ids hashed again, and the row hash of a round they name read
back from its stored part when another line has its id.

Memory is about 24 bytes per round met in the run, plus 12 per round of the store when its hashes are held (20
once a source repeats many stored rounds). They are not held in a store of more than :data:`LOAD_LIMIT` rounds,
nor for a run of at most :data:`STREAM_SOURCES` sources (streaming them past a source twice costs about what
loading them does): each source is read checking its ids against the run only, and at its commit the store's
hashes stream past the source's new ids (a batch at a time). Ids found there are ids the store holds, and the
source is read again checking just those, as if the store's hashes had been held (:class:`StoredOverlap`). A
source whose first block repeats stored rounds (a file grown since it was ingested) has the store's hashes loaded
instead, when they fit, so it is read once.

Into an empty store thrown away after the run (the one-shot ``validate LOG``: ``on_demand``) only rows whose round
id collides are hashed; the run keeps the blocks met unhashed (up to :data:`DEFERRED_BYTES`) to hash a row later
repeated. Same statuses and origins; the index holds 0 as the content hash of a row never hashed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..store import Store
from .hashing import VERSION, content_columns, id_hashes, row_hashes

__all__ = ["SeenRounds", "StoredOverlap", "NEW", "ALREADY", "DIFFERENT", "LOAD_LIMIT", "duplicate_reason", "by_id"]

NEW, ALREADY, DIFFERENT = 0, 1, 2
HELD_BYTES = 20
"""Memory per held stored round, at most: its id hash and the number of its index file, and once a
source repeats many stored rounds its content hash (a repeat is then known without the index)."""
LINES_AFTER = 1_000
"""Stored rounds repeated in one block from which the stored content hashes are loaded (a file grown
since it was ingested); fewer are looked up in the index."""
LOAD_LIMIT = (256 << 20) // HELD_BYTES
"""Stored rounds up to which an ingest may hold their hashes in memory (256 MiB; about twice that
while they are loaded); above it they are streamed past each source's new ids."""
STREAM_SOURCES = 2
"""Sources in a run up to which the store's hashes are streamed past each, not held (the two passes
over them per source together cost about what loading them does, in none of the memory)."""
LEGACY, SEVERAL = -1, -2  # where a held hash is: an older index file; several files (or a hash collision)
DEFERRED_BYTES = 128 << 20
"""Bytes of tables kept unhashed on demand; past it they are hashed, and every later row."""
_CHUNK_CAP = 1_000_000  # runs are merged up to this many ids (bounds the merge's transient copies)


def duplicate_reason(round_id: str, file: str, line: int) -> str:
    """The quarantine reason of a line whose round id was stored before with other content (one text for
    ingest and live mode)."""
    return f"duplicate round_id {round_id!r} with different content (first stored from {file} line {line})"


def by_id(id_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.argsort(id_hash, kind="stable")`` (equal ids in line order: the first is the earliest) and where each
    id's first row is in it: a SIMD quicksort (4.6 times faster on 27,000 hashes) unless two ids are equal (rare)."""
    order, lead = np.argsort(id_hash), np.ones(len(id_hash), bool)
    lead[1:] = (sorted_ids := id_hash[order])[1:] != sorted_ids[:-1]
    return (order, lead) if lead.all() else (np.argsort(id_hash, kind="stable"), lead)


class _Runs:
    """Sorted runs of (id_hash, line_hash, file, line), merged as they grow (a small LSM tree)."""

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, ids: np.ndarray, lines_hash: np.ndarray, file: np.ndarray, line: np.ndarray, ordered: bool = False) -> None:
        order = slice(None) if ordered else np.argsort(ids, kind="stable")  # ordered: by id, each id once
        self.runs.append((ids[order], lines_hash[order], file[order].astype(np.uint32), line[order].astype(np.uint32)))
        while len(self.runs) > 1 and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0]) \
                and len(self.runs[-2][0]) + len(self.runs[-1][0]) <= _CHUNK_CAP:
            b, a = self.runs.pop(), self.runs.pop()
            merged = [np.concatenate([x, y]) for x, y in zip(a, b, strict=True)]
            order = np.argsort(merged[0], kind="stable")
            self.runs.append(tuple(m[order] for m in merged))  # type: ignore[arg-type]

    def find(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(found, line_hash, file, line) for each id (the oldest entry when several)."""
        found = np.zeros(len(ids), bool)
        lh = np.zeros(len(ids), np.uint64)
        file = np.zeros(len(ids), np.uint32)
        line = np.zeros(len(ids), np.uint32)
        for run_ids, run_lh, run_file, run_line in self.runs:
            pos = np.searchsorted(run_ids, ids)
            hit = ~found & (pos < len(run_ids))
            hit[hit] = run_ids[pos[hit]] == ids[hit]
            found |= hit
            lh[hit], file[hit], line[hit] = run_lh[pos[hit]], run_file[pos[hit]], run_line[pos[hit]]
        return found, lh, file, line


class StoredOverlap(Exception):
    """A source's new round ids include ids the store holds, found at its commit by :meth:`SeenRounds.in_store`
    (its hashes streamed): the source is to be read again holding those (``found``: hashes and files)."""

    def __init__(self, found: tuple[np.ndarray, np.ndarray]):
        super().__init__(f"{len(found[0])} round id(s) already in the store")
        self.found = found


class SeenRounds:
    """Round ids already stored (the store's index) or met earlier in this run.

    ``always_load``: hold the store's hashes whatever its size (live mode, which looks up one line
    at a time); otherwise they are ``streamed`` in a store of more than ``memory`` MiB of them
    (:data:`HELD_BYTES` a round; None: :data:`LOAD_LIMIT` rounds) or a run of at most
    :data:`STREAM_SOURCES` ``sources``, else held.
    """

    def __init__(self, store: Store, always_load: bool = False, sources: int | None = None,
                 memory: float | None = None, on_demand: bool = False):
        self.store = store
        self.current: list[str] = []  # index files of this hash version
        self.legacy: list[str] = []   # older ones: BLAKE2b id hashes, line hashes of the JSON text
        for rel in store.index_files(repair=True):  # an ingest holds the lock: a damaged index is rebuilt
            (self.current if store.index_version(rel) == VERSION else self.legacy).append(rel)
        self.rounds = store.count()
        self.limit = LOAD_LIMIT if memory is None else int(memory * 2**20) // HELD_BYTES  # rounds that may be held
        self.streamed = bool(not always_load and (self.current or self.legacy)  # an empty store: nothing to stream
                             and (self.rounds > self.limit or (sources or 0) <= STREAM_SOURCES))
        self.stored = np.empty(0, np.uint64)
        self.stored_in = np.empty(0, np.int32)  # the index file of each held hash (its place in current)
        self.stored_line: np.ndarray | None = None  # its content hash, once loaded (LINES_AFTER)
        self.subset = False  # True while holding a source's shared hashes only (no content hashes then)
        if not self.streamed:
            self.stored, self.stored_in, _ = self._hashes(0, self.current, self.legacy)
        self.files: list[str] = []
        self.run = _Runs()
        # content hashes on demand: only into a store without rounds (nothing to compare with there)
        self.on_demand = on_demand and not (self.current or self.legacy)
        self.deferred: list[tuple[int, np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray]]] = []
        self.deferred_bytes = 0

    def _hashes(self, offset: int, current: list[str], legacy: list[str], held: tuple = (), lines: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The id hashes of some index files (``current`` numbered from ``offset``) and those ``held``,
        sorted and unique, with the index file of each (:data:`LEGACY`, :data:`SEVERAL`) and, with
        ``lines``, its content hash (an older file's is not comparable: its place says so)."""
        columns = ["id_hash", "line_hash"] if lines else ["id_hash"]
        hashes, where, line = list(held[:1]), list(held[1:2]), list(held[2:3] if lines else ())
        for k, rel in enumerate(current, offset):
            table = self.store.read_index([rel], columns)
            hashes.append(table["id_hash"].to_numpy())
            where.append(np.full(len(hashes[-1]), k, np.int32))
            if lines:
                line.append(table["line_hash"].to_numpy())
        if legacy:  # their ids are kept: hash them again
            hashes.append(id_hashes(self.store.read_index(legacy, ["round_id"])["round_id"]))
            where.append(np.full(len(hashes[-1]), LEGACY, np.int32))
            if lines:
                line.append(np.zeros(len(hashes[-1]), np.uint64))
        if not hashes:
            return np.empty(0, np.uint64), np.empty(0, np.int32), np.empty(0, np.uint64) if lines else None
        unique, first, counts = np.unique(np.concatenate(hashes), return_index=True, return_counts=True)
        where_first = np.concatenate(where)[first]
        where_first[counts > 1] = SEVERAL
        return unique, where_first, np.concatenate(line)[first] if lines else None

    def refresh(self) -> int:
        """Add the index files committed since this was built (by another writer, under the store's
        lock); returns how many."""
        known = set(self.current) | set(self.legacy)
        new = [rel for rel in self.store.index_files() if rel not in known]
        if not new:
            return 0
        current = [rel for rel in new if self.store.index_version(rel) == VERSION]
        legacy = [rel for rel in new if rel not in current]
        if not self.streamed:
            self.stored, self.stored_in, self.stored_line = self._hashes(
                len(self.current), current, legacy, (self.stored, self.stored_in, self.stored_line),
                lines=self.stored_line is not None)
        self.current += current
        self.legacy += legacy
        return len(new)

    def in_store(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Those of ``hashes`` (sorted, unique) that the store's index holds, with the index file of each,
        its hashes read a batch at a time (memory: ``hashes`` and one batch, whatever the store's size)."""
        absent = np.iinfo(np.int32).max  # the place of a hash not found (yet)
        where = np.full(len(hashes), absent, np.int32)
        if not len(hashes):
            return hashes, where
        files = [(k, [rel], "id_hash") for k, rel in enumerate(self.current)]
        for k, rels, column in files + ([(LEGACY, self.legacy, "round_id")] if self.legacy else []):
            for batch in self.store.index_batches(rels, [column]):
                got = batch.column(0)
                got = np.sort(got.to_numpy() if column == "id_hash" else id_hashes(got))  # 9x faster searched
                pos = np.minimum(np.searchsorted(hashes, got), len(hashes) - 1)
                pos = pos[hashes[pos] == got]
                where[pos] = np.where(where[pos] == absent, k, SEVERAL)
        found = where != absent
        return hashes[found], where[found]

    def probe(self, first_block: np.ndarray) -> None:
        """A source's first block of id hashes: when it repeats stored rounds and the store's hashes fit,
        hold them from now on (a file grown since it was ingested: read once, not twice). Above the
        limit there is nothing to gain, so the store is not read for it."""
        if self.streamed and self.rounds <= self.limit and len(self.in_store(np.unique(first_block))[0]):
            self.hold()

    def hold(self) -> None:
        """Hold the store's hashes from now on if they fit (the limit): a source that repeats stored
        rounds is then read once, not twice."""
        if self.streamed and self.rounds <= self.limit:
            self.stored, self.stored_in, _ = self._hashes(0, self.current, self.legacy)
            self.streamed = False

    @contextlib.contextmanager
    def holding(self, found: tuple[np.ndarray, np.ndarray]) -> Iterator[None]:
        """Check against these stored hashes, held (:meth:`in_store`'s answer, while its source is read
        again): as if the store's hashes were held, since the source's other ids are not in it."""
        saved = self.stored, self.stored_in, self.stored_line, self.streamed
        (self.stored, self.stored_in), self.stored_line, self.streamed, self.subset = found, None, False, True
        try:
            yield
        finally:
            self.stored, self.stored_in, self.stored_line, self.streamed = saved
            self.subset = False

    def mark(self) -> tuple[list, int]:
        """The run as it stands, to go back to (:meth:`rollback`) when a source is read again."""
        return list(self.run.runs), len(self.files)

    def rollback(self, mark: tuple[list, int]) -> None:
        """Forget the rounds met since :meth:`mark` (the runs are never changed in place)."""
        self.run.runs = list(mark[0])
        del self.files[mark[1]:]

    def stored_rows(self, round_ids: pa.Array, hashes: np.ndarray) -> dict[str, tuple[int, str, int]]:
        """round_id -> (line hash, file, line) of the stored rounds among these ids (the store only)."""
        pos = np.searchsorted(self.stored, hashes)
        hit = pos < len(self.stored)
        hit[hit] = self.stored[pos[hit]] == hashes[hit]
        if not hit.any():
            return {}
        where = np.flatnonzero(hit)
        return self._from_store(round_ids.take(pa.array(where)), hashes[where])

    def _from_store(self, ids: pa.Array, hashes: np.ndarray) -> dict[str, tuple[int, str, int]]:
        """round_id -> (line_hash, file, line) of stored rounds among candidate ids (held hashes), read from
        the index files that hold them only (a file grown since it was ingested: the one it was then)."""
        out: dict[str, tuple[int, str, int]] = {}
        pos = np.minimum(np.searchsorted(self.stored, hashes), max(len(self.stored) - 1, 0))
        where = set(self.stored_in[pos[self.stored[pos] == hashes]].tolist()) if len(self.stored) else set()
        current = self.current if SEVERAL in where else [self.current[k] for k in sorted(where) if k >= 0]
        if current:
            wanted = pa.array(np.unique(hashes))
            rows = pa.concat_tables([self.store.index_rows(rel, wanted) for rel in current])
            rows = rows.filter(pc.is_in(rows["round_id"], value_set=ids))
            for r, h, f, n in zip(*(rows[c].to_pylist() for c in ("round_id", "line_hash", "source_file",
                                                                   "source_line")), strict=True):
                out.setdefault(r, (h, f, n))
        for rel in self.legacy if where & {LEGACY, SEVERAL} else ():
            rows = self.store.read_index([rel], filter=pc.field("round_id").isin(ids))
            for r, f, n in zip(*(rows[c].to_pylist() for c in ("round_id", "source_file", "source_line")), strict=True):
                if r not in out:
                    out[r] = (self._stored_row_hash(rel.rsplit("/", 1)[-1][:-len(".parquet")], r, n), f, n)
        return out

    def lookup(self, round_id: str, hash_of_id: int) -> tuple[int, str, int] | None:
        """(line hash, file, line) of the stored round of this id, or None (for a reader of one
        line at a time; rounds met earlier in its run are its own to remember)."""
        pos = int(np.searchsorted(self.stored, np.uint64(hash_of_id)))
        if pos == len(self.stored) or self.stored[pos] != np.uint64(hash_of_id):
            return None
        return self._from_store(pa.array([round_id], pa.string()), np.array([hash_of_id], np.uint64)).get(round_id)

    def _stored_row_hash(self, sha16: str, round_id: str, line: int) -> int:
        """The row hash of a round stored by a source indexed before these hashes (read from its parts)."""
        for rel in self.store.source_parts(sha16):
            rows = self.store.read_part(rel, (pc.field("round_id") == round_id) & (pc.field("source_line") == line))
            if rows.num_rows:
                return int(row_hashes(rows.slice(0, 1), content_columns(rows.column_names))[0])
        return 0  # the part is gone: treat the content as different

    def check(self, round_ids: pa.Array, id_hash: np.ndarray, line_hash: np.ndarray, lines: np.ndarray,
              file: str, content: Callable[[np.ndarray], np.ndarray] | None = None, held: int = 0
              ) -> tuple[np.ndarray, list[tuple[str, int] | None]]:
        """Status (:data:`NEW`, :data:`ALREADY`, :data:`DIFFERENT`) of rows given in line order, and
        for each duplicate the (file, line) it was first stored from; the new rows join the run.

        ``content(rows)``: the content hashes of rows at those positions, in place of ``line_hash`` (on
        demand, of colliding ids only; the block, ``held`` bytes, kept for a later repeat)."""
        if not self.files or self.files[-1] != file:
            self.files.append(file)
        file_no = len(self.files) - 1
        n = len(id_hash)
        status = np.full(n, NEW, np.int8)
        first: list[tuple[str, int] | None] = [None] * n
        order, lead = by_id(id_hash)
        group = np.cumsum(lead) - 1
        heads = order[lead]  # row of the first occurrence of each id in the block
        # the line hash and origin each id is compared with: an earlier entry, else its first row here
        found, r_lh, r_file, r_line = self.run.find(id_hash[heads])
        pos = np.searchsorted(self.stored, id_hash[heads])
        maybe = ~found & (pos < len(self.stored))
        maybe[maybe] = self.stored[pos[maybe]] == id_hash[heads[maybe]]
        hashed = None
        if content is not None:
            line_hash, hashed = self._hash_needed(content, order, group, heads, found | maybe)
            if self.deferred and found.any():
                r_lh[found] = self._resolve(r_lh[found], r_file[found], r_line[found])
        ref_hash = line_hash[heads].copy()
        ref_origin: list[tuple[str, int] | None] = [None] * len(heads)
        for k in np.flatnonzero(found):
            ref_hash[k], ref_origin[k] = r_lh[k], (self.files[r_file[k]], int(r_line[k]))
        if maybe.any():
            self._against_store(round_ids, id_hash, line_hash, heads, group, pos, found, maybe, ref_hash, ref_origin)
        # heads met before: compare with that entry; others: the head is new, the rest compare with it
        met = np.flatnonzero(found)
        status[heads[met]] = np.where(line_hash[heads[met]] == ref_hash[met], ALREADY, DIFFERENT)
        for k, row in zip(met.tolist(), heads[met].tolist(), strict=True):
            first[row] = ref_origin[k]
        rest = order[~lead]
        if len(rest):
            g = group[~lead]
            same = line_hash[rest] == ref_hash[g]
            status[rest] = np.where(same, ALREADY, DIFFERENT)
            for row, k in zip(rest[~same], g[~same], strict=True):
                first[int(row)] = ref_origin[k] or (file, int(lines[heads[k]]))
        at = order[(new := status == NEW)[order]]  # the new rows by id hash, sorted already (each the first of its id)
        self.run.add(id_hash[at], line_hash[at], np.full(len(at), file_no), lines[at], ordered=True)
        if hashed is not None and self.on_demand and (unhashed := np.flatnonzero(new & ~hashed)).size:
            self.deferred.append((file_no, lines[unhashed], unhashed, content))  # type: ignore[arg-type]
            self.deferred_bytes += held
            if self.deferred_bytes > DEFERRED_BYTES:
                self._hash_deferred()
        return status, first

    def _against_store(self, round_ids: pa.Array, id_hash: np.ndarray, line_hash: np.ndarray, heads: np.ndarray,
                       group: np.ndarray, pos: np.ndarray, found: np.ndarray, maybe: np.ndarray,
                       ref_hash: np.ndarray, ref_origin: list) -> None:
        """The heads whose id hash the store holds (``maybe``, at ``pos``): ``found`` with the stored
        round's content hash and origin in ``ref_hash`` and ``ref_origin`` (in place)."""
        if self.stored_line is None and not self.subset and maybe.sum() >= LINES_AFTER:
            self.stored, self.stored_in, self.stored_line = self._hashes(0, self.current, self.legacy, lines=True)
        if maybe.any() and self.stored_line is not None:
            # a repeat of a stored round, alone in the block: its content hash (which covers its id) is the
            # stored one's, so it is already stored, read from no index (its origin is asked of a duplicate
            # with other content only)
            sure = np.flatnonzero(maybe)
            p = pos[sure]
            sure = sure[(self.stored_in[p] >= 0) & (self.stored_line[p] == line_hash[heads[sure]])
                        & (np.bincount(group)[sure] == 1)]
            found[sure], maybe[sure] = True, False
        if maybe.any():
            cands = np.flatnonzero(maybe)
            cand_ids = round_ids.take(pa.array(heads[cands]))
            known = self._from_store(cand_ids, id_hash[heads[cands]])
            for k, rid in zip(cands.tolist(), cand_ids.to_pylist(), strict=True):
                hit = known.get(rid)
                if hit is not None:
                    found[k] = True
                    ref_hash[k], ref_origin[k] = hit[0], (hit[1], hit[2])

    def _hash_needed(self, content: Callable[[np.ndarray], np.ndarray], order: np.ndarray, group: np.ndarray,
                     heads: np.ndarray, met: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(content hash of each row of a block, 0 where not computed; the rows hashed): on demand those
        whose id repeats in the block or was ``met`` before (by head), else every row."""
        n = len(order)
        if not self.on_demand:
            return content(np.arange(n)), np.ones(n, bool)
        need = np.zeros(n, bool)
        need[order[np.bincount(group)[group] > 1]] = True
        need[heads[met]] = True
        line_hash = np.zeros(n, np.uint64)
        rows = np.flatnonzero(need)
        if len(rows):
            line_hash[rows] = content(rows)
        return line_hash, need

    def _resolve(self, hashes: np.ndarray, files: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """``hashes`` of rounds met earlier (file numbers, lines), those kept unhashed (0) computed now."""
        hashes = hashes.copy()
        for file_no, kept, rows, content in self.deferred:
            at = np.flatnonzero((hashes == 0) & (files == file_no))
            if not len(at):
                continue
            p = np.minimum(np.searchsorted(kept, lines[at]), len(kept) - 1)
            hit = kept[p] == lines[at]
            if hit.any():
                hashes[at[hit]] = content(rows[p[hit]])
        return hashes

    def _hash_deferred(self) -> None:
        """Hash the rows kept unhashed into the run, and every row from now on (past :data:`DEFERRED_BYTES`)."""
        for _, lh, file, line in self.run.runs:
            at = np.flatnonzero(lh == 0)
            if len(at):
                lh[at] = self._resolve(lh[at], file[at], line[at])
        self.deferred, self.deferred_bytes, self.on_demand = [], 0, False
