"""The watcher's loop: poll, parse each new line as ingest does, validate, emit, checkpoint."""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, TextIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..ingest import MAX_LINE
from ..ingest.dedup import SeenRounds, duplicate_reason
from ..ingest.hashing import content_columns, id_hashes, row_hashes
from ..ingest.jsonl import too_long_reason
from ..ingest.perline import decode_line, from_object
from ..ingest.sources import quarantine_entry
from ..paytables import Config
from ..rules.tally import Tally
from ..schema import schema_for
from ..store import INDEX, Store
from ..validate import check_rounds, select_rules
from .checkpoint import CHECKPOINT_VERSION, Checkpoints
from .commit import LOCK_TIMEOUT, Commits, Pending
from .outputs import COLUMNS, Outputs
from .rounds import OpenShoes, PollTimes, RecentRounds
from .tail import Tail, Tracked, Unread, open_files_limit

log = logging.getLogger("auditkit.live")

WARNED = 10_000              # files warned about once (skipped CSV logs, missing paths) remembered


class Watcher(Tail, Outputs, Commits, Checkpoints):
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
                 lock_timeout: float = LOCK_TIMEOUT):
        self.paths = [Path(p) for p in paths]
        self.config = config or Config()
        self.store, self.out, self.csv, self.checkpoint = store, out, csv, checkpoint
        self.stdout, self.stderr = stdout, stderr if stderr is not None else sys.stderr
        self.poll, self.checkpoint_every = poll, checkpoint_every
        self.gzip_settle, self.gzip_damaged, self.orphan_grace = gzip_settle, gzip_damaged, orphan_grace
        self.shoe_idle = shoe_idle
        self.max_line = max_line
        self.lock_timeout = lock_timeout
        self._too_long = too_long_reason(max_line)  # ingest's reason
        self.on_emit = emit
        self.files: dict[tuple[int, int], Tracked] = {}
        self._open: dict[tuple[int, int], Tracked] = {}  # the files held open (Tail)
        self.max_open = open_files_limit()
        self.recent = RecentRounds(recent)
        self.shoes: dict[str, OpenShoes] = {}
        self.rules: dict[str, tuple[list, list]] = {}
        self.suppress: set[tuple[str, str]] = set()  # (round_id, rule_id) already in --out past the checkpoint
        self.pending = Pending()
        self.stored_seen = SeenRounds(store, always_load=True) if store is not None else None
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
        self._failed: Pending | None = None
        self._out_pin: int | None = None  # the --out offset checkpoints keep while its tail is being read again
        self._checkpoint_lock = threading.Lock()
        self._extra: dict[tuple[int, int], dict[str, Any]] = {}  # files registered since the last state
        self._saved: dict[str, Any] = {}  # the last state written (set in open())
        self._scanned = -math.inf
        self._listed: dict[tuple[int, int], tuple[Path, os.stat_result]] = {}

    def open(self) -> None:
        """Restore the checkpoint (if any), load every game's rules and open the outputs."""
        from .. import games

        self._out_pin = None
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
        self._saved = state if state else self._state()  # a first checkpoint: the outputs as they are now

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
            self._close(t)
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
        aliases: dict[str, list[str]] = {}  # file -> the names it was read under
        for t, n, raw in lines:
            name = sys.intern(str(t.path))
            aliases[name] = t.names
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
            game, date, row = from_object(obj)  # type: ignore[assignment]
            if game is None:  # date is the reason, row the round id (ingest's per-line path)
                self._bad(name, n, raw, date, row)  # type: ignore[arg-type]
                continue
            row["source_file"], row["source_line"], row["date"] = name, n, date
            parsed.append((name, n, raw, game, row))
        self._take(parsed, aliases)

    def _take(self, parsed: list[tuple[str, int, bytes, str, dict[str, Any]]], aliases: dict[str, list[str]]) -> None:
        """Check, emit and keep for the store the parsed rounds ``(file, line, raw, game, row)`` of a poll
        (``aliases``: file -> the names it was read under), each round once across restarts."""
        p = self.pending
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
                    if prior[2] != n or prior[1] not in aliases.get(name, [name]):  # from elsewhere: not new
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
                p.rows.append((game, raw))
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
