"""Live mode: follow growing logs and report each round's findings within a second of its line.

:class:`Watcher` polls log files and folders (``auditkit watch``). Each poll it
reads the complete new lines of every file (a partial last line waits for its
newline), parses them exactly as ingest does (:func:`auditkit.ingest.records.parse_record`),
batches them per game into an Arrow table of the game's schema, runs every round
rule (:func:`auditkit.validate.check_rounds`) and the shoe rules on the open shoes
those rounds belong to (:func:`auditkit.validate.check_shoes`, only the new rounds
emitted), and emits the findings at once: one JSON line per finding (the report's
columns, :data:`auditkit.schema.FINDINGS`) on stdout and/or appended to ``--out``,
and rows appended to a spreadsheet-safe CSV.

Files are known by their identity ``(device, inode)``, not their name: a file
renamed away by log rotation is read to its end, the new file at the old name is
read from its start, a file that shrinks (``copytruncate``) is read again from its
start as a new generation. A gzip file is read once it is complete and has stopped
changing. A checkpoint (positions, open shoes, recent round ids, the sizes of the
outputs) is written atomically every few seconds and at exit; see docs/live.md for
why a restart after a crash loses no round and reports none twice in ``--out``.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import io
import json
import logging
import math
import os
import queue
import signal
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .ingest import MAX_LINE
from .ingest.dedup import SeenRounds, duplicate_reason
from .ingest.hashing import content_columns, id_hashes, row_hashes
from .ingest.jsonl import RAW_KEPT, read_blocks
from .ingest.perline import decode_line, storable
from .ingest.records import BadRecord, parse_record
from .ingest.sources import SUFFIXES, InputError, discover, quarantine_entry
from .paytables import Config
from .report import spreadsheet_safe
from .rules.coverage import Tally
from .schema import FINDINGS, QUARANTINE, schema_for
from .store import INDEX, SourceRecord, Store, StoreLocked, atomic_path
from .validate import check_rounds, check_shoes, select_rules, shoe_columns

__all__ = ["Watcher", "OpenShoes", "RecentRounds", "finding_lines", "CHECKPOINT_VERSION"]

log = logging.getLogger("auditkit.live")

CHECKPOINT_VERSION = 1
HEAD = 4096                  # bytes of a file's start kept as a hash, to know it again after a restart
READ_BUDGET = 2 << 20        # bytes read from all files in one poll, shared out evenly (a watcher behind its
READ_MIN = 16 << 10          #   logs reads ~3,000 rounds a poll, however many files), at least READ_MIN a file;
                             #   a line longer than its share is read whole, up to max_line
SCAN = 1 << 20               # bytes read at a time while looking for the end of a line longer than max_line
GZIP_LINES = 4_000           # lines of a gzip file validated per batch
COLUMNS = [f.name for f in FINDINGS]
WARNED = 10_000              # files warned about once (skipped CSV logs, missing paths) remembered


# ---- files ------------------------------------------------------------------------------------
@dataclass
class Tracked:
    """One followed file, known by ``(dev, ino)``; ``gen`` counts truncations."""

    dev: int
    ino: int
    path: Path
    gen: int = 0
    offset: int = 0          # bytes consumed (complete lines only)
    line: int = 0            # lines consumed
    head: str = ""           # blake2b of the first head_len bytes
    head_len: int = 0
    gzip: bool | None = None  # None until the first two bytes are there
    done: bool = False       # a gzip file read to its end
    size: int = -1           # gzip: size and mtime at the last poll, and since when they hold
    mtime: int = -1
    stable_since: float = 0.0
    orphan_since: float | None = None  # no longer listed under any watched name (rotated away, deleted)
    scanned: int = 0         # a too-long line being written: bytes of it known to have no line break
    fh: IO[bytes] | None = field(default=None, repr=False)

    @property
    def key(self) -> tuple[int, int]:
        return self.dev, self.ino

    @property
    def source_key(self) -> str:
        return f"{self.dev}:{self.ino}:{self.gen}"

    def state(self) -> dict[str, Any]:
        return {"dev": self.dev, "ino": self.ino, "path": str(self.path), "gen": self.gen, "offset": self.offset,
                "line": self.line, "head": self.head, "head_len": self.head_len, "gzip": self.gzip, "done": self.done}

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def _head_hash(fh: IO[bytes], n: int) -> str:
    fh.seek(0)
    return hashlib.blake2b(fh.read(n), digest_size=16).hexdigest()


@contextlib.contextmanager
def _naming(path: Path | None) -> Iterator[None]:
    """An OSError raised without a file name (ENOSPC from a write or fsync) names ``path``."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and path is not None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


def _gzip_complete(path: Path) -> bool:
    """True when a gzip file decompresses to its end (its trailer is there)."""
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
        return True
    except (EOFError, OSError, zlib.error, gzip.BadGzipFile):
        return False


# ---- recent round ids ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Unread:
    """An entry that is not a readable line, counted as a line read as ingest counts it: a line
    longer than ``max_line`` (its head is kept) or the place where a gzip stream broke."""

    head: bytes
    reason: str


class RecentRounds:
    """The round ids of the last ``capacity`` rounds read (hash of id -> hash of content), oldest dropped.

    A round read again with the same content (a log re-exported, a rotated copy) is
    not reported again; with other content it is quarantined, as ingest does.

    Memory is fixed by ``capacity``: the rounds sit in a ring of numpy arrays
    allocated once (id hash, line hash, file number, line: 28 bytes a round), found
    by a dict from id hash to slot that never holds more than ``capacity`` entries,
    and the file names in a table compacted to the names still in the ring whenever
    it outgrows them.
    """

    def __init__(self, capacity: int = 100_000):
        self.capacity = capacity
        self.clear()

    def clear(self) -> None:
        """Forget every round (the arrays are allocated again, once)."""
        capacity = self.capacity
        self.id_hash = np.zeros(capacity, np.uint64)
        self.line_hash = np.zeros(capacity, np.uint64)
        self.file = np.full(capacity, -1, np.int32)
        self.line = np.zeros(capacity, np.int64)
        self.slot: dict[int, int] = {}  # id hash -> its slot in the ring
        self.files: list[str] = []      # file number -> name
        self.numbers: dict[str, int] = {}
        self.next = 0                   # the slot written next (the oldest once the ring is full)
        self._compact_at = 64           # names in the file table that make the next new name compact it

    def __len__(self) -> int:
        return len(self.slot)

    def get(self, id_hash: int) -> tuple[int, str, int] | None:
        i = self.slot.get(id_hash)
        if i is None:
            return None
        return int(self.line_hash[i]), self.files[self.file[i]], int(self.line[i])

    def add(self, id_hash: int, line_hash: int, file: str, line: int) -> None:
        i = self.slot.pop(id_hash, None)
        if i is None:  # a new id takes the next slot, dropping the round there
            i = self.next
            self.next = (i + 1) % self.capacity
            if self.file[i] >= 0:
                del self.slot[int(self.id_hash[i])]
        number = self.numbers.get(file)
        if number is None:
            if len(self.files) >= self._compact_at:  # amortized: at most twice the names in use, or 64
                self._compact()
                self._compact_at = max(64, 2 * len(self.files))
            number = self.numbers[file] = len(self.files)
            self.files.append(file)
        self.id_hash[i], self.line_hash[i], self.file[i], self.line[i] = id_hash, line_hash, number, line
        self.slot[id_hash] = i

    def _compact(self) -> None:
        """Keep only the file names some round in the ring still refers to."""
        used = self.file >= 0
        keep, self.file[used] = np.unique(self.file[used], return_inverse=True)
        self.files = [self.files[k] for k in keep.tolist()]
        self.numbers = {f: k for k, f in enumerate(self.files)}

    def _order(self) -> np.ndarray:
        """The slots in use, oldest first."""
        order = np.roll(np.arange(self.capacity), -self.next)
        return order[self.file[order] >= 0]

    def state(self) -> dict[str, Any]:
        order = self._order()
        files, number = np.unique(self.file[order], return_inverse=True)
        cols = {"ids": self.id_hash[order], "lines": self.line_hash[order], "file": number.astype(np.int32),
                "line": self.line[order]}
        return {"files": [self.files[k] for k in files.tolist()],
                **{k: base64.b64encode(v.tobytes()).decode() for k, v in cols.items()}}

    def restore(self, state: dict[str, Any]) -> None:
        dtypes = {"ids": np.uint64, "lines": np.uint64, "file": np.int32, "line": np.int64}
        c = {k: np.frombuffer(base64.b64decode(state[k]), t) for k, t in dtypes.items()}
        self.clear()
        files = state["files"]
        skip = max(len(c["ids"]) - self.capacity, 0)  # a checkpoint of a larger window: its newest rounds
        for i, h, f, n in zip(*(c[k][skip:].tolist() for k in dtypes), strict=True):
            self.add(i, h, files[f], n)


# ---- poll times -------------------------------------------------------------------------------
class PollTimes:
    """(wall, CPU) seconds of the last ``capacity`` polls that read lines, in a ring allocated once."""

    def __init__(self, capacity: int = 100_000):
        self.times = np.zeros((capacity, 2))
        self.count = 0  # polls added in all

    def add(self, wall: float, cpu: float) -> None:
        self.times[self.count % len(self.times)] = wall, cpu
        self.count += 1

    def __len__(self) -> int:
        return min(self.count, len(self.times))

    def wall_cpu(self) -> tuple[np.ndarray, np.ndarray]:
        """Wall and CPU seconds of the polls kept (in no particular order)."""
        kept = self.times[:len(self)]
        return kept[:, 0], kept[:, 1]


# ---- open shoes ---------------------------------------------------------------------------------
def _ipc(table: pa.Table) -> str:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return base64.b64encode(sink.getvalue()).decode()


def _from_ipc(text: str) -> pa.Table:
    return pa.ipc.open_stream(base64.b64decode(text)).read_all()


class OpenShoes:
    """The narrow shoe columns of each open shoe of one game, keyed by (table_id, shoe_id).

    A shoe is dropped when a round of another shoe arrives at its table, when it has
    been idle for ``idle`` seconds, or when it is the least recently dealt of more than
    ``max_shoes``; it keeps at most its last ``max_rounds`` rounds. So at most
    ``max_shoes * max_rounds`` rounds are held, however long the watch.
    """

    def __init__(self, game: str, rules: Sequence[Any], idle: float = 4 * 3600.0, max_rounds: int = 2000,
                 max_shoes: int = 1000):
        self.game, self.rules, self.idle, self.max_rounds, self.max_shoes = game, list(rules), idle, max_rounds, max_shoes
        self.columns = shoe_columns(self.rules, game) + ["date"]
        self.shoes: dict[tuple[str, str | None], pa.Table] = {}
        self.seen: dict[tuple[str, str | None], float] = {}  # least recently dealt first
        self.current: dict[str, tuple[str, str | None]] = {}  # table_id -> its open shoe

    def check(self, batch: pa.Table, config: Config, tally: Tally | None = None) -> pd.DataFrame:
        """Shoe findings on the new rounds of ``batch`` (a poll's rounds of this game); ``tally`` gets the coverage."""
        narrow = batch.select(self.columns)
        tables, shoes = narrow["table_id"].to_pylist(), narrow["shoe_id"].to_pylist()
        groups: dict[tuple[str, str | None], list[int]] = {}
        for i, key in enumerate(zip(tables, shoes, strict=True)):
            groups.setdefault(key, []).append(i)
        now = time.monotonic()
        parts, emit = [], []
        for key, rows in groups.items():
            prior = self.current.get(key[0])
            if prior is not None and prior != key:  # a new shoe at the table closes the last one
                self._drop(prior)
            self.current[key[0]] = key
            new = narrow.take(pa.array(rows))
            old = self.shoes.get(key)
            shoe = pa.concat_tables([old, new]).combine_chunks() if old is not None else new
            if shoe.num_rows > self.max_rounds:
                shoe = shoe.slice(shoe.num_rows - self.max_rounds)
            self.seen.pop(key, None)  # to the end: the most recently dealt
            self.shoes[key], self.seen[key] = shoe, now
            parts.append(shoe)
            flags = np.zeros(shoe.num_rows, bool)
            flags[-len(rows):] = True
            emit.append(flags)
        while len(self.shoes) > self.max_shoes:
            self._drop(next(iter(self.seen)))
        both = pa.concat_tables(parts)
        return check_shoes(both, self.game, config, self.rules, emit=np.concatenate(emit), tally=tally)

    def expire(self, now: float | None = None) -> int:
        """Drop shoes idle for longer than ``idle`` seconds; returns how many."""
        now = time.monotonic() if now is None else now
        n = 0
        while self.seen and now - next(iter(self.seen.values())) > self.idle:
            self._drop(next(iter(self.seen)))
            n += 1
        return n

    def _drop(self, key: tuple[str, str | None]) -> None:
        self.shoes.pop(key, None)
        self.seen.pop(key, None)
        if self.current.get(key[0]) == key:
            del self.current[key[0]]

    @property
    def rounds(self) -> int:
        return sum(t.num_rows for t in self.shoes.values())

    def state(self) -> dict[str, Any]:
        tables = list(self.shoes.values())
        return {"table": _ipc(pa.concat_tables(tables)) if tables else None,
                "current": [list(k) for k in self.current.values()]}

    def restore(self, state: dict[str, Any]) -> None:
        self.shoes.clear()
        if state.get("table"):
            t = _from_ipc(state["table"])
            keys = list(zip(t["table_id"].to_pylist(), t["shoe_id"].to_pylist(), strict=True))
            groups: dict[tuple[str, str | None], list[int]] = {}
            for i, k in enumerate(keys):
                groups.setdefault(k, []).append(i)
            for k, rows in groups.items():
                self.shoes[k] = t.take(pa.array(rows))
        now = time.monotonic()
        self.seen = dict.fromkeys(self.shoes, now)
        self.current = {k[0]: (k[0], k[1]) for k in map(tuple, state.get("current", [])) if tuple(k) in self.shoes}


# ---- findings out -----------------------------------------------------------------------------
def _plain(v: Any) -> Any:
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.generic):
        v = v.item()
        return None if isinstance(v, float) and math.isnan(v) else v
    return v


def finding_lines(findings: pd.DataFrame) -> list[str]:
    """Findings as JSON lines with the report's columns, in order (no money: null)."""
    cols = [findings[c].tolist() for c in COLUMNS]
    return [json.dumps(dict(zip(COLUMNS, map(_plain, row), strict=True)), ensure_ascii=False, allow_nan=False)
            for row in zip(*cols, strict=True)]


# ---- the watcher --------------------------------------------------------------------------------
@dataclass
class _Pending:
    """What a poll read that the store has not committed yet."""

    tables: dict[tuple[str, str], list[pa.Table]] = field(default_factory=dict)
    index: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in INDEX.names})
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    ranges: dict[str, list[Any]] = field(default_factory=dict)  # source_key -> [path, first, last]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("lines_read", "stored", "already_stored", "quarantined", "blank"), 0))
    games: dict[str, int] = field(default_factory=dict)
    size: int = 0
    raw: list[bytes] = field(default_factory=list)  # the line of each index row (a duplicate's quarantine entry)

    def __bool__(self) -> bool:
        return self.counts["lines_read"] > 0

    def absorb(self, later: _Pending) -> _Pending:
        """This and a later poll's pending rounds as one commit (after a commit found the store locked)."""
        for key, tables in later.tables.items():
            self.tables.setdefault(key, []).extend(tables)
        for column, values in later.index.items():
            self.index[column].extend(values)
        self.quarantine.extend(later.quarantine)
        for key, (path, first, last) in later.ranges.items():
            mine = self.ranges.setdefault(key, [path, first, last])
            mine[0], mine[1], mine[2] = path, min(mine[1], first), max(mine[2], last)
        for key, n in later.counts.items():
            self.counts[key] += n
        for game, n in later.games.items():
            self.games[game] = self.games.get(game, 0) + n
        self.size += later.size
        self.raw.extend(later.raw)
        return self


class Watcher:
    """Follow log files and folders; validate every complete round line as it arrives.

    ``emit`` receives each poll's findings (a FINDINGS frame) after they were written;
    ``quarantined`` each bad line ``(file, line, reason)``. The outputs are ``out``
    (JSON lines, appended), ``csv`` (appended, spreadsheet-safe) and ``stdout``.
    """

    def __init__(self, paths: Sequence[str | Path], *, config: Config | None = None, store: Store | None = None,
                 out: Path | None = None, csv: Path | None = None, checkpoint: Path | None = None,
                 stdout: TextIO | None = None, stderr: TextIO | None = None, poll: float = 0.2,
                 checkpoint_every: float = 5.0, gzip_settle: float = 1.0, gzip_damaged: float = 60.0,
                 orphan_grace: float = 10.0, shoe_idle: float = 4 * 3600.0, recent: int = 100_000,
                 rescan: float = 1.0, max_line: int = MAX_LINE, emit: Callable[[pd.DataFrame], None] | None = None,
                 lock_timeout: float = 60.0):
        self.paths = [Path(p) for p in paths]
        self.config = config or Config()
        self.store, self.out, self.csv, self.checkpoint = store, out, csv, checkpoint
        self.stdout, self.stderr = stdout, stderr if stderr is not None else sys.stderr
        self.poll, self.checkpoint_every = poll, checkpoint_every
        self.gzip_settle, self.gzip_damaged, self.orphan_grace = gzip_settle, gzip_damaged, orphan_grace
        self.shoe_idle = shoe_idle
        self.max_line = max_line
        self._too_long = f"line longer than {max_line:,} bytes"  # ingest's reason
        self.on_emit = emit
        self.files: dict[tuple[int, int], Tracked] = {}
        self.recent = RecentRounds(recent)
        self.shoes: dict[str, OpenShoes] = {}
        self.rules: dict[str, tuple[list, list]] = {}
        self.suppress: set[tuple[str, str]] = set()  # (round_id, rule_id) already in --out past the checkpoint
        self._out_from = 0  # where --out's findings past the restored checkpoint start (while they are suppressed)
        self.pending = _Pending()
        self.stored_seen = SeenRounds(store) if store is not None else None
        self._indexed = set(store.index_files()) if store is not None else set()  # index files looked at
        self.lock_timeout = lock_timeout
        self._carry: _Pending | None = None  # rounds a commit could not store: the store was locked
        self.own = {Path(p).resolve() for p in (out, csv, checkpoint) if p is not None}
        self.store_root = store.root.resolve() if store is not None else None
        self.warned: dict[str, None] = {}  # keys warned about, the oldest forgotten past WARNED
        self.stop = False
        self.stats = {"rounds": 0, "findings": 0, "quarantined": 0, "polls": 0}
        self.coverage = Tally()  # rounds each rule could not check, and why
        self.poll_times = PollTimes()  # of polls that read lines
        self._out_fh: IO[bytes] | None = None
        self._csv_fh: IO[bytes] | None = None
        self._last_checkpoint = time.monotonic()
        self.rescan = max(rescan, poll)
        self._writer: threading.Thread | None = None  # one thread for the whole watch, started at the first flush
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=1)
        self._idle = threading.Event()
        self._idle.set()
        self._flush_error: BaseException | None = None
        self._scanned = -math.inf
        self._listed: dict[tuple[int, int], tuple[Path, os.stat_result]] = {}

    # ---- lifecycle ---------------------------------------------------------------------------
    def open(self) -> None:
        """Restore the checkpoint (if any), load every game's rules and open the outputs."""
        from . import games

        for game in games.names():  # import the rule modules now, not in the first poll
            self._rules(game)
        state: dict[str, Any] = {}
        if self.checkpoint is not None and self.checkpoint.exists():
            state = json.loads(self.checkpoint.read_text("utf-8"))
            if state.get("version") != CHECKPOINT_VERSION:
                raise ValueError(f"checkpoint {self.checkpoint} has version {state.get('version')!r}, "
                                 f"not {CHECKPOINT_VERSION}")
            self._restore(state)
        if self.out is not None:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self._out_fh = open(self.out, "a+b")  # noqa: SIM115 (open while watching)
            self._read_out_tail(int(state.get("out_offset", 0)))
        if self.csv is not None:
            self.csv.parent.mkdir(parents=True, exist_ok=True)
            self._csv_fh = open(self.csv, "a+b")  # noqa: SIM115 (open while watching)
            offset = int(state.get("csv_offset", 0))
            if self._csv_fh.seek(0, os.SEEK_END) > offset:  # rows after the checkpoint: written again below
                self._csv_fh.truncate(offset)
                self._csv_fh.seek(0, os.SEEK_END)  # truncate() leaves the position at the old end
            if self._csv_fh.tell() == 0:
                self._csv_fh.write(",".join(COLUMNS).encode() + b"\r\n")
                self._csv_fh.flush()

    def _read_out_tail(self, offset: int) -> None:
        """Findings written to ``--out`` after the checkpoint: their rounds are read again, not reported again.
        A partial last line (a crash while writing) is cut off; its finding is written again."""
        fh = self._out_fh
        assert fh is not None
        end = fh.seek(0, os.SEEK_END)
        if end <= offset:
            return
        self._out_from = offset
        fh.seek(offset)
        tail = fh.read()
        cut = tail.rfind(b"\n") + 1
        if cut < len(tail):
            fh.truncate(offset + cut)
        for raw in tail[:cut].splitlines():
            try:
                rec = json.loads(raw)
                self.suppress.add((rec["round_id"], rec["rule_id"]))
            except (ValueError, KeyError, TypeError):
                continue
        fh.seek(0, os.SEEK_END)

    def close(self) -> None:
        """Commit what is pending, write the checkpoint, close every file."""
        try:
            self.flush(final=True)
        finally:
            if self._writer is not None:
                self._jobs.put(None)
                self._writer.join()
                self._writer = None
        for t in self.files.values():
            t.close()
        for fh in (self._out_fh, self._csv_fh):
            if fh is not None:
                fh.close()
        self._out_fh = self._csv_fh = None

    def run(self, once: bool = False) -> int:
        """Poll until SIGINT/SIGTERM (or once, with ``once``); returns the number of findings emitted."""
        handlers = {}
        if not once:
            def stop(signum: int, frame: Any) -> None:
                self.stop = True
            for sig in (signal.SIGINT, signal.SIGTERM):
                handlers[sig] = signal.signal(sig, stop)
        self.open()
        try:
            while True:
                more = self.poll_once()
                if once and not more:
                    break
                if self.stop:
                    break
                if time.monotonic() - self._last_checkpoint >= self.checkpoint_every and not self.flushing():
                    self.flush(wait=False)
                if not more:
                    time.sleep(self.poll)
        finally:
            self.close()
            for sig, h in handlers.items():
                signal.signal(sig, h)
        return self.stats["findings"]

    # ---- one poll ----------------------------------------------------------------------------
    def _listing(self) -> dict[tuple[int, int], tuple[Path, os.stat_result]]:
        found: dict[tuple[int, int], tuple[Path, os.stat_result]] = {}
        for p in self.paths:
            try:
                files = discover([p])
            except InputError:
                self._warn(str(p), f"{p} does not exist (yet); watching for it")
                continue
            for f in files:
                if f.name.lower().endswith(".csv"):
                    self._warn(str(f), f"{f}: CSV logs are not followed live (ingest them); skipped")
                    continue
                if not f.name.lower().endswith(SUFFIXES) and p.is_dir():
                    continue
                r = f.resolve()
                if r in self.own or (self.store_root is not None and r.is_relative_to(self.store_root)):
                    continue
                try:
                    st = f.stat()
                except OSError:
                    continue
                found.setdefault((st.st_dev, st.st_ino), (f, st))
        return found

    def _known(self) -> dict[tuple[int, int], tuple[Path, os.stat_result]] | None:
        """The files of the last listing, stat'ed again; None when a name now holds another file or is gone."""
        out = {}
        for key, (path, _st) in self._listed.items():
            try:
                st = path.stat()
            except OSError:
                return None
            if (st.st_dev, st.st_ino) != key:
                return None
            out[key] = (path, st)
        return out

    def poll_once(self) -> bool:
        """Read, validate and emit what arrived; True when a file had more to read than one poll takes."""
        self.stats["polls"] += 1
        now, cpu = time.monotonic(), time.thread_time()
        listing = self._known() if now - self._scanned < self.rescan else None
        if listing is None:  # folders listed again every ``rescan`` seconds; known files stat'ed every poll
            listing, self._scanned = self._listing(), now
        self._listed = listing
        new = [key for key in listing if key not in self.files]
        for key in new:
            self.files[key] = Tracked(dev=key[0], ino=key[1], path=listing[key][0])
        if new and self.checkpoint is not None:  # checkpointed before any line of this poll is read: a crash
            self.flush()                          # before the next checkpoint finds it (renamed too), reads it from 0
        lines: list[tuple[Tracked, int, bytes]] = []
        more = False
        share = max(READ_BUDGET // max(len(self.files), len(listing), 1), READ_MIN)
        for key, t in list(self.files.items()):  # files renamed away or deleted: read to their end, then drop
            if key in listing:
                t.orphan_since = None
                continue
            if t.orphan_since is None:
                t.orphan_since = now
            final = now - t.orphan_since >= self.orphan_grace or t.gzip
            more |= self._read(t, lines, share, final=bool(final))
            if final:
                t.close()
                del self.files[key]
        for key, (path, st) in listing.items():
            t = self.files[key]
            t.path = path
            if t.gzip is None and st.st_size >= 2:
                with open(path, "rb") as fh:
                    t.gzip = fh.read(2) == b"\x1f\x8b"
            if t.gzip:
                self._read_gzip(t, st, now)
            elif t.gzip is False:
                more |= self._read(t, lines, share)
        if lines:
            self._process(lines)
        for shoes in self.shoes.values():
            shoes.expire(now)
        if lines:
            self.poll_times.add(time.monotonic() - now, time.thread_time() - cpu)
        return more

    def _read(self, t: Tracked, lines: list[tuple[Tracked, int, Any]], limit: int, final: bool = False) -> bool:
        """Append the complete new lines of a plain file, about ``limit`` bytes of them; True if more is waiting."""
        if t.gzip:
            return False
        try:
            if t.fh is None:
                fh = open(t.path, "rb")  # noqa: SIM115 (kept open: a rotated file is read to its end)
                st = os.fstat(fh.fileno())
                if (st.st_dev, st.st_ino) != t.key:  # the name now holds another file
                    fh.close()
                    return False
                t.fh = fh
            size = os.fstat(t.fh.fileno()).st_size
        except OSError:
            return False
        if size < t.offset or (t.head_len and size >= t.head_len and _head_hash(t.fh, t.head_len) != t.head
                               and t.offset <= size):
            self._warn_now(f"{t.path} was truncated or replaced: read again from its start")
            t.gen, t.offset, t.line, t.head, t.head_len = t.gen + 1, 0, 0, "", 0
        if size == t.offset:
            return False
        t.fh.seek(t.offset)
        data = t.fh.read(limit)
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) == limit:  # a line longer than the share: read it whole, up to max_line
            data += t.fh.read(max(self.max_line + 1 - limit, 0))
            cut = data.rfind(b"\n") + 1
        if final and cut < len(data) and t.offset + len(data) == size:
            cut = len(data)  # the writer is gone: its last line is complete as it stands
        if cut == 0 and len(data) > self.max_line:
            return self._skip_long(t, size, lines, final)
        parts = data[:cut].split(b"\n")
        if data[:cut].endswith(b"\n"):
            parts.pop()
        long = cut > self.max_line  # only then can a line be too long
        for raw in parts:
            t.line += 1
            lines.append((t, t.line, Unread(raw[:RAW_KEPT], self._too_long) if long and len(raw) > self.max_line
                          else raw.rstrip(b"\r\n")))
        t.offset += cut
        if t.head_len < HEAD and t.offset > t.head_len:
            t.head_len = min(t.offset, HEAD)
            t.head = _head_hash(t.fh, t.head_len)
        return t.offset < size and cut > 0

    def _skip_long(self, t: Tracked, size: int, lines: list[tuple[Tracked, int, Any]], final: bool) -> bool:
        """Pass over a line longer than ``max_line`` without holding it: one entry with its head once its
        line break (or, when ``final``, the file's end) is there; until then wait, remembering how far
        it was searched."""
        t.fh.seek(t.offset)
        head = t.fh.read(RAW_KEPT)
        end = t.offset + head.find(b"\n") + 1
        if end > t.offset:
            head = head[:end - t.offset - 1]
        else:
            t.scanned = max(t.scanned, t.offset + len(head))
            t.fh.seek(t.scanned)
            while chunk := t.fh.read(SCAN):
                at = chunk.find(b"\n")
                if at >= 0:
                    end = t.scanned + at + 1
                    break
                t.scanned += len(chunk)
            else:
                if not final:
                    return False
                end = t.scanned
        t.line += 1
        lines.append((t, t.line, Unread(head, self._too_long)))
        t.offset, t.scanned = end, 0
        return t.offset < size

    def _read_gzip(self, t: Tracked, st: os.stat_result, now: float) -> None:
        """Read a gzip file once it is complete and has not changed for ``gzip_settle`` seconds."""
        if t.done:
            return
        if (st.st_size, st.st_mtime_ns) != (t.size, t.mtime):
            t.size, t.mtime, t.stable_since = st.st_size, st.st_mtime_ns, now
        if now - t.stable_since < self.gzip_settle:
            return
        if not _gzip_complete(t.path) and now - t.stable_since < self.gzip_damaged:
            return  # still being written (or damaged: read as ingest does after gzip_damaged seconds)
        batch: list[tuple[Tracked, int, Any]] = []
        for block in read_blocks(t.path, max_line=self.max_line):
            for i in range(len(block)):
                n = block.first + i
                if n <= t.line:  # read before a restart
                    continue
                error = block.errors.get(i)
                batch.append((t, n, Unread(*error) if error else block.raw(i)))
                if len(batch) >= GZIP_LINES:
                    self._process(batch)
                    t.line, batch = n, []
        if batch:
            self._process(batch)
            t.line = batch[-1][1]
        t.done = True

    # ---- parse, validate, emit ---------------------------------------------------------------
    @staticmethod
    def _tables(parsed: list[tuple[str, int, bytes, str, dict[str, Any]]]
                ) -> tuple[dict[str, tuple[np.ndarray, pa.Table]], list[tuple[int, int]]]:
        """The parsed rows as one table per game (with the positions of its rows in ``parsed``), and
        each row's (id hash, content hash), computed over those tables as ingest computes them."""
        hashes: list[tuple[int, int]] = [(0, 0)] * len(parsed)
        by_game: dict[str, list[int]] = {}
        for k, (_name, _n, _raw, game, _row) in enumerate(parsed):
            by_game.setdefault(game, []).append(k)
        tables = {}
        for game, where in by_game.items():
            table = pa.Table.from_pylist([parsed[k][4] for k in where],
                                         schema=schema_for(game).append(pa.field("date", pa.string())))
            ids, lines = id_hashes(table["round_id"]), row_hashes(table, content_columns(table.column_names))
            for k, i, h in zip(where, ids.tolist(), lines.tolist(), strict=True):
                hashes[k] = (i, h)
            tables[game] = (np.array(where, np.int64), table)
        return tables, hashes

    def _rules(self, game: str) -> tuple[list, list]:
        if game not in self.rules:
            self.rules[game] = (select_rules(game, "round"), select_rules(game, "shoe"))
        return self.rules[game]

    def _process(self, lines: list[tuple[Tracked, int, Any]]) -> None:
        """Parse a poll's lines as ingest does, validate them, emit their findings, keep them for the store."""
        p = self.pending
        parsed: list[tuple[str, int, bytes, str, dict[str, Any]]] = []  # file, line, raw, game, row
        for t, n, raw in lines:
            name = sys.intern(str(t.path))
            rng = p.ranges.setdefault(t.source_key, [name, n, n])
            rng[0], rng[2] = name, max(rng[2], n)
            if isinstance(raw, Unread):  # too long, or where a gzip stream broke
                self._bad(name, n, raw.head, raw.reason, None, count_line=False)
                continue
            p.counts["lines_read"] += 1
            p.size += len(raw) + 1
            if not raw.strip():
                p.counts["blank"] += 1
                continue
            obj, error = decode_line(raw)
            if error is not None:
                self._bad(name, n, raw, error)
                continue
            round_id = obj.get("round_id") if isinstance(obj, dict) else None
            try:
                game, date, row = parse_record(obj)
            except BadRecord as exc:
                self._bad(name, n, raw, str(exc), storable(round_id))
                continue
            row["source_file"], row["source_line"], row["date"] = name, n, date
            parsed.append((name, n, raw, game, row))
        tables, hashes = self._tables(parsed)
        check = np.zeros(len(parsed), bool)  # rounds to check (new, or our own committed before a restart)
        store = np.zeros(len(parsed), bool)  # rounds to store
        for k, ((name, n, raw, game, row), (hash_of_id, line_hash)) in enumerate(zip(parsed, hashes, strict=True)):
            round_id = row["round_id"]  # as stored: NFC, edges trimmed
            store_it = True
            first = self.recent.get(hash_of_id)
            if first is not None:
                if first[0] == line_hash:
                    p.counts["already_stored"] += 1
                else:
                    self._bad(name, n, raw, duplicate_reason(round_id, first[1], first[2]), round_id)
                continue
            if self.stored_seen is not None:
                prior = self.stored_seen.lookup(round_id, hash_of_id)
                if prior is not None:
                    if prior[0] != line_hash:
                        self._bad(name, n, raw, duplicate_reason(round_id, prior[1], prior[2]), round_id)
                        continue
                    if (prior[1], prior[2]) != (name, n):  # stored before from elsewhere: not new
                        p.counts["already_stored"] += 1
                        self.recent.add(hash_of_id, line_hash, prior[1], prior[2])
                        continue
                    store_it = False  # our own line, committed before a restart: check it again, store it once
            self.recent.add(hash_of_id, line_hash, name, n)
            check[k] = True
            if not store_it:
                p.counts["already_stored"] += 1
                continue
            p.counts["stored"] += 1
            p.games[game] = p.games.get(game, 0) + 1
            if self.store is not None:
                store[k] = True
                for column, value in zip(INDEX.names, (hash_of_id, line_hash, round_id, name, n), strict=True):
                    p.index[column].append(value)
                p.raw.append(raw)
        frames = []
        for game, (where, all_rows) in tables.items():
            table = all_rows.filter(pa.array(check[where]))
            if not table.num_rows:
                continue
            self.stats["rounds"] += table.num_rows
            round_rules, shoe_rules = self._rules(game)
            frames.append(check_rounds(table, game, self.config, round_rules, tally=self.coverage))
            if shoe_rules:
                shoes = self.shoes.get(game)
                if shoes is None:
                    shoes = self.shoes[game] = OpenShoes(game, shoe_rules, idle=self.shoe_idle)
                frames.append(shoes.check(table, self.config, self.coverage))
            keep = store[where]
            if keep.any():
                stored = all_rows.filter(pa.array(keep))
                for date in sorted(set(stored["date"].to_pylist())):
                    day = stored.filter(pc.equal(stored["date"], date)).drop_columns(["date"])
                    p.tables.setdefault((game, date), []).append(day)
        frames = [f for f in frames if len(f)]
        if frames:
            found = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            found = found.sort_values(["source_file", "source_line", "rule_id"], kind="stable").reset_index(drop=True)
            self._emit(found)

    def _bad(self, file: str, line: int, raw: bytes, reason: str, round_id: str | None = None,
             count_line: bool = True) -> None:
        self.pending.quarantine.append(quarantine_entry(file, line, raw, reason, round_id, None))
        self.pending.counts["quarantined"] += 1
        if not count_line:  # an entry the caller did not count: it balances as a line read
            self.pending.counts["lines_read"] += 1
        self.stats["quarantined"] += 1
        print(f"auditkit: quarantined {file}:{line}: {reason}", file=self.stderr, flush=True)

    def _emit(self, found: pd.DataFrame) -> None:
        """Write a poll's findings: stdout first, then ``--out`` (skipping those already there), then the CSV."""
        if self.suppress:
            dup = np.array([(r, k) in self.suppress for r, k in zip(found["round_id"], found["rule_id"], strict=True)])
            new = found[~dup]
        else:
            new = found
        lines = finding_lines(new)
        if lines:
            if self.stdout is not None:
                self.stdout.write("\n".join(lines) + "\n")
                self.stdout.flush()
            if self._out_fh is not None:
                with _naming(self.out):
                    self._out_fh.write(("\n".join(lines) + "\n").encode("utf-8"))
                    self._out_fh.flush()
        if self._csv_fh is not None and len(found):
            text = spreadsheet_safe(found[COLUMNS]).to_csv(index=False, header=False, float_format="%.2f",
                                                           lineterminator="\r\n")
            with _naming(self.csv):
                self._csv_fh.write(text.encode("utf-8"))
                self._csv_fh.flush()
        self.stats["findings"] += len(new)
        if self.on_emit is not None:
            self.on_emit(found)

    # ---- store and checkpoint ----------------------------------------------------------------
    def flush(self, wait: bool = True, final: bool = False) -> None:
        """Hand the rounds read since the last checkpoint and a snapshot of the state to a writer thread,
        which fsyncs the outputs, commits the rounds to the store, then writes the checkpoint, in that
        order (a slow disk does not hold up the polls); ``wait`` for it to finish.

        The store's lock is taken for each commit. While another writer holds it (an ingest, the nightly
        job), the rounds are kept for the next checkpoint and no checkpoint is written; the ``final``
        flush (at exit) waits up to ``lock_timeout`` seconds for the lock, then fails naming the holder."""
        self.wait_flush()
        pending, self.pending = self.pending, _Pending()
        if self._carry is not None:
            pending, self._carry = self._carry.absorb(pending), None
        state = self._state() if self.checkpoint is not None else None
        fds = [(fh.fileno(), path) for fh, path in ((self._out_fh, self.out), (self._csv_fh, self.csv))
               if fh is not None]

        def job() -> None:
            try:
                for fd, path in fds:
                    with _naming(path):
                        os.fsync(fd)
                if self.store is not None and pending:
                    try:
                        self._commit(pending, timeout=self.lock_timeout if final else 0.0)
                    except StoreLocked as exc:
                        if final:
                            raise
                        self._carry = pending
                        self._warn("store-locked", f"{exc}: rounds kept for the next checkpoint")
                        return
                if state is not None:
                    with _naming(self.checkpoint), atomic_path(self.checkpoint) as tmp:  # type: ignore[arg-type]
                        tmp.write_text(json.dumps(state), "utf-8")
            except BaseException as exc:  # raised in the polling thread by wait_flush
                self._flush_error = exc

        if self._writer is None:
            self._writer = threading.Thread(target=self._write_jobs, name="auditkit-live-flush", daemon=True)
            self._writer.start()
        self._idle.clear()
        self._jobs.put(job)
        self._last_checkpoint = time.monotonic()
        if wait:
            self.wait_flush()

    def _write_jobs(self) -> None:
        """The writer thread: run each flush's job in turn until told to stop (None)."""
        while (job := self._jobs.get()) is not None:
            job()
            self._idle.set()

    def flushing(self) -> bool:
        """True while a checkpoint is being written."""
        return not self._idle.is_set()

    def wait_flush(self) -> None:
        """Wait for the checkpoint being written; raise what went wrong writing it."""
        self._idle.wait()
        if self._flush_error is not None:
            exc, self._flush_error = self._flush_error, None
            raise exc

    def _commit(self, p: _Pending, timeout: float) -> None:
        """Rounds read since the last checkpoint as one source of the store, committed by its protocol
        (parts, index and quarantine first, manifest last) under the store's lock."""
        store = self.store
        assert store is not None
        with store.lock(timeout, command="watch", sweep=False):
            self._drop_stored_since(p)
            self._commit_locked(p)

    def _drop_stored_since(self, p: _Pending) -> None:
        """Rounds another writer (an ingest, a second watcher) committed since this watcher last looked are
        not stored again: the same line is already stored, another content with the id is quarantined."""
        store, seen = self.store, self.stored_seen
        assert store is not None and seen is not None
        fresh = [rel for rel in store.index_files() if rel not in self._indexed]
        self._indexed.update(fresh)
        if not fresh:
            return
        other = store.read_index(fresh, ["id_hash", "line_hash", "round_id", "source_file", "source_line"])
        seen.current.extend(fresh)
        seen.stored = np.union1d(seen.stored, other["id_hash"].to_numpy())
        if not p.index["id_hash"]:
            return
        mine = np.array(p.index["id_hash"], np.uint64)
        hit = np.flatnonzero(np.isin(mine, other["id_hash"].to_numpy()))
        if not len(hit):
            return
        first = {r: (h, f, n) for r, h, f, n in zip(*(other[c].to_pylist() for c in (
            "round_id", "line_hash", "source_file", "source_line")), strict=True)}
        drop: set[str] = set()
        for k in hit:
            round_id = p.index["round_id"][k]
            prior = first.get(round_id)
            if prior is None:  # an id hash collision, not the same id
                continue
            drop.add(round_id)
            p.counts["stored"] -= 1
            if prior[0] == p.index["line_hash"][k]:
                p.counts["already_stored"] += 1
            else:
                p.quarantine.append(quarantine_entry(
                    p.index["source_file"][k], p.index["source_line"][k], p.raw[k],
                    duplicate_reason(round_id, prior[1], prior[2]), round_id, None))
                p.counts["quarantined"] += 1
        if not drop:
            return
        keep = [k for k in range(len(mine)) if p.index["round_id"][k] not in drop]
        p.index = {c: [v[k] for k in keep] for c, v in p.index.items()}
        p.raw = [p.raw[k] for k in keep]
        value_set = pa.array(sorted(drop), pa.string())
        for key, tables in list(p.tables.items()):
            kept = [t.filter(pc.invert(pc.is_in(t["round_id"], value_set=value_set))) for t in tables]
            gone = sum(t.num_rows for t in tables) - sum(t.num_rows for t in kept)
            p.games[key[0]] -= gone
            kept = [t for t in kept if t.num_rows]
            if kept:
                p.tables[key] = kept
            else:
                del p.tables[key]
        p.games = {g: n for g, n in p.games.items() if n}

    def _commit_locked(self, p: _Pending) -> None:
        store = self.store
        assert store is not None
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
        self._indexed.add(f"_index/{sha[:16]}.parquet")
        q = [dict(e, sha256=sha) for e in p.quarantine]
        store.write_quarantine(sha, pa.Table.from_pylist(q, schema=QUARANTINE))
        rec = SourceRecord(sha256=sha, path=desc, size=p.size, format="jsonl-live", games=dict(p.games),
                           partitions=partitions, **p.counts)
        if not rec.balanced:
            raise AssertionError(f"live line accounting does not balance: {rec}")
        store.commit_source(rec)

    def _state(self) -> dict[str, Any]:
        """What the checkpoint holds, as of now."""
        return {
            "version": CHECKPOINT_VERSION,
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": [t.state() for t in self.files.values()],
            "shoes": {g: s.state() for g, s in self.shoes.items()},
            "recent": self.recent.state(),
            # findings past the restored checkpoint stay suppressed in the next run too: their lines may be
            # read again after a crash, so the next checkpoint keeps pointing before them
            "out_offset": (self._out_from if self.suppress else self._out_fh.tell()) if self._out_fh is not None
            else 0,
            "csv_offset": self._csv_fh.tell() if self._csv_fh is not None else 0,
        }

    def _restore(self, state: dict[str, Any]) -> None:
        for f in state.get("files", []):
            t = Tracked(dev=f["dev"], ino=f["ino"], path=Path(f["path"]), gen=f["gen"], offset=f["offset"],
                        line=f["line"], head=f["head"], head_len=f["head_len"], gzip=f["gzip"], done=f["done"])
            where = self._locate(t)
            if where is None:
                self._warn_now(f"{t.path} (as checkpointed) is gone: lines written to it after the checkpoint "
                               "cannot be read")
                continue
            t.path = where
            self.files[t.key] = t
        for game, s in state.get("shoes", {}).items():
            shoes = self.shoes[game] = OpenShoes(game, self._rules(game)[1], idle=self.shoe_idle)
            shoes.restore(s)
        if "recent" in state:
            self.recent.restore(state["recent"])

    @staticmethod
    def _locate(t: Tracked) -> Path | None:
        """Where a checkpointed file is now: its name, or another name in its folder (rotated)."""
        try:
            st = t.path.stat()
            if (st.st_dev, st.st_ino) == t.key:
                return t.path
        except OSError:
            pass
        try:
            with os.scandir(t.path.parent) as it:
                for entry in it:
                    if entry.inode() == t.ino and entry.is_file(follow_symlinks=False) \
                            and entry.stat(follow_symlinks=False).st_dev == t.dev:
                        return Path(entry.path)
        except OSError:
            pass
        return None

    # ---- messages ----------------------------------------------------------------------------
    def _warn(self, key: str, message: str) -> None:
        if key not in self.warned:
            self.warned[key] = None
            if len(self.warned) > WARNED:
                del self.warned[next(iter(self.warned))]
            self._warn_now(message)

    def _warn_now(self, message: str) -> None:
        log.warning("%s", message)
        print(f"auditkit: {message}", file=self.stderr, flush=True)


def watch(paths: Iterable[str | Path], **kwargs: Any) -> Watcher:
    """A :class:`Watcher` of ``paths`` (keyword arguments as the class takes)."""
    return Watcher(list(paths), **kwargs)


# ---- command line (the CLI package calls these) ---------------------------------------------------
def watch_command(args: Any) -> int:
    """Run ``auditkit watch``: 0 after SIGINT/SIGTERM (checkpoint written); with ``--once`` 1 when findings
    were emitted, else 0."""
    from .paytables import load_config
    from .rules.coverage import format_coverage

    if args.once:  # a one-off run over paths that are not there checked nothing: not a clean run
        missing = [p for p in args.paths if not Path(p).exists()]
        if missing:
            raise InputError(f"no such file or folder: {', '.join(map(str, missing))}")
    watcher = Watcher(args.paths, config=load_config(args.config), store=Store(args.store) if args.store else None,
                      out=Path(args.out) if args.out else None, csv=Path(args.csv) if args.csv else None,
                      checkpoint=Path(args.checkpoint) if args.checkpoint else None,
                      stdout=None if args.no_stdout else sys.stdout, poll=args.poll,
                      checkpoint_every=args.checkpoint_every, gzip_settle=0.0 if args.once else 1.0,
                      max_line=args.max_line_bytes, lock_timeout=args.lock_timeout)
    found = watcher.run(once=args.once)
    s = watcher.stats
    print(f"auditkit watch: {s['rounds']} round(s) checked, {found} finding(s) emitted, "
          f"{s['quarantined']} line(s) quarantined", file=sys.stderr)
    print(f"auditkit watch: {format_coverage(watcher.coverage.table())}", file=sys.stderr)
    if watcher.poll_times:
        wall, cpu = (x * 1000 for x in watcher.poll_times.wall_cpu())
        print(f"auditkit watch: {len(wall)} poll(s) read lines; per poll wall p50 {np.median(wall):.0f} ms, "
              f"p99 {np.percentile(wall, 99):.0f} ms, max {wall.max():.0f} ms; CPU p50 {np.median(cpu):.0f} ms, "
              f"p99 {np.percentile(cpu, 99):.0f} ms, max {cpu.max():.0f} ms", file=sys.stderr)
    return 1 if args.once and found else 0
