"""The watcher's loop: poll, parse each new line as ingest does, validate, emit, checkpoint."""

from __future__ import annotations

import functools
import logging
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd
import pyarrow as pa

from ..engine.checks import select_rules
from ..ingest.dedup import duplicate_reason
from ..ingest.hashing import content_columns, id_hashes, row_hashes
from ..ingest.perline import decode_line, from_object
from ..ingest.sources import SUFFIXES
from ..paytables import Config
from ..rules.tally import Tally
from ..schema import schema_for
from ..store import Store
from ..validate import check_rounds
from .checkpoint import CHECKPOINT_VERSION, Checkpoint
from .commit import LiveWriter, Pending, Rows
from .outputs import Outputs
from .rounds import OpenShoes, PollTimes, RecentRounds
from .settings import WatchSettings
from .tail import Tail, Tracked, Unread

log = logging.getLogger("auditkit.live")

Parsed = tuple[str, int, bytes, str, dict[str, Any], str]  # file, line, raw, game, row, source key (Tracked)
WARNED = 10_000              # files warned about once (skipped CSV logs, missing paths) remembered


class Watcher:
    """Follow log files and folders; validate every complete round line as it arrives.

    The watcher holds its parts: ``settings`` (:class:`~auditkit.live.settings.WatchSettings`, or
    its fields as keywords), the findings' ``outputs`` (``out``: JSON lines, appended; ``csv``:
    appended, spreadsheet-safe; ``stdout``), the ``checkpoint``, the ``tail`` of the files it follows
    and, with a ``store``, the ``writer`` that commits to it (sources of format ``live_format``).
    ``emit`` receives each poll's findings (a FINDINGS frame) after they were written.
    """

    live_format = "jsonl-live"

    def __init__(self, paths: Sequence[str | Path], *, config: Config | None = None, store: Store | None = None,
                 out: Path | None = None, csv: Path | None = None, checkpoint: Path | None = None,
                 stdout: TextIO | None = None, stderr: TextIO | None = None,
                 emit: Callable[[pd.DataFrame], None] | None = None, settings: WatchSettings | None = None,
                 **options: Any):
        self.settings = replace(settings or WatchSettings(), **options)  # TypeError naming an unknown option
        self.paths = [Path(p) for p in paths]
        self.config = config or Config()
        self.store = store
        self.stderr = stderr if stderr is not None else sys.stderr
        self.on_emit = emit
        self.outputs = Outputs(out, csv, stdout)
        self.checkpoint = Checkpoint(checkpoint)
        self.writer = LiveWriter(store, self.live_format, self.settings.lock_timeout) if store is not None else None
        self.pending = Pending()
        self.recent = RecentRounds(self.settings.recent)
        self.shoes: dict[str, OpenShoes] = {}
        self.rules: dict[str, tuple[list, list]] = {}
        own = {Path(p).resolve() for p in (out, csv, checkpoint) if p is not None}
        root = store.root.resolve() if store is not None else None
        self.tail = Tail(self.paths, self.settings, self._follows,
                         lambda r: r in own or (root is not None and r.is_relative_to(root)), self._warn)
        self.warned: dict[str, None] = {}  # keys warned about, the oldest forgotten past WARNED
        self.stop = False
        self.stats = {"rounds": 0, "findings": 0, "quarantined": 0, "polls": 0}
        self.coverage = Tally()  # rounds each rule could not check, and why
        self.poll_times = PollTimes()  # of polls that read lines
        self._last_checkpoint = time.monotonic()

    def open(self) -> None:
        """Restore the checkpoint (if any), load every game's rules and open the outputs."""
        from .. import games

        for game in games.names():  # import the rule modules now, not in the first poll
            self._rules(game)
        state = self.checkpoint.load()
        if state:
            self._restore(state)
        self.outputs.open(state)
        self.checkpoint.saved = state if state else self._state()  # a first checkpoint: the outputs as they are now

    def close(self) -> None:
        """Commit what is pending, write the checkpoint, close every file."""
        try:
            self.flush(final=True)
        finally:
            self.checkpoint.stop()
        self.tail.close_all()
        self.outputs.close()

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
                if time.monotonic() - self._last_checkpoint >= self.settings.checkpoint_every \
                        and not self.checkpoint.busy():
                    self.flush(wait=False)
                if not more:
                    time.sleep(self.settings.poll)
        finally:
            self.close()
            for sig, h in handlers.items():
                signal.signal(sig, h)
        return self.stats["findings"]

    def flush(self, wait: bool = True, final: bool = False) -> None:
        """Hand the rounds read since the last checkpoint and a snapshot of the state to the checkpoint's
        writer thread, which fsyncs the outputs, commits the rounds to the store, then writes the
        checkpoint, in that order; ``wait`` for it to finish.

        The store's lock is taken for each commit, without waiting: while another writer holds it (an
        ingest, the nightly job) the rounds are kept for the next checkpoint and no checkpoint is written;
        the ``final`` flush (at exit) waits up to ``lock_timeout`` seconds, then fails naming the holder."""
        self.checkpoint.wait()
        pending, self.pending = self.pending, Pending()
        commit = None
        if self.writer is not None:
            pending = self.writer.take(pending)
            commit = functools.partial(self.writer.commit, pending, final, self._warn)
        state = self._state() if self.checkpoint.path is not None else None
        self.checkpoint.flush(self.outputs.files(), commit, state, wait)
        self._last_checkpoint = time.monotonic()

    def _state(self) -> dict[str, Any]:
        """What the checkpoint holds, as of now."""
        return {
            "version": CHECKPOINT_VERSION,
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": [t.state() for t in self.tail.files.values()],
            "shoes": {g: s.state() for g, s in self.shoes.items()},
            "recent": self.recent.state(),
            **self.outputs.offsets(),
        }

    def _restore(self, state: dict[str, Any]) -> None:
        for f in state.get("files", []):
            t = Tracked(dev=f["dev"], ino=f["ino"], path=Path(f["path"]), gen=f["gen"], offset=f["offset"],
                        line=f["line"], head=f["head"], head_len=f["head_len"], gzip=f["gzip"], done=f["done"],
                        names=list(f.get("names", [f["path"]])))
            where = Tail.locate(t)
            if where is None:
                self._warn_now(f"{t.path} (as checkpointed) is gone: lines written to it after the checkpoint "
                               "cannot be read")
                continue
            t.named(where)
            self.tail.files[t.key] = t
        for game, s in state.get("shoes", {}).items():
            shoes = self.shoes[game] = OpenShoes(game, self._rules(game)[1], idle=self.settings.shoe_idle)
            shoes.restore(s, self.config)
        if "recent" in state:
            self.recent.restore(state["recent"])

    def _emit(self, found: pd.DataFrame) -> None:
        """Write a poll's findings to the outputs, then hand them to ``emit``."""
        self.stats["findings"] += self.outputs.emit(found)
        if self.on_emit is not None:
            self.on_emit(found)

    @staticmethod
    def _tables(parsed: list[Parsed]) -> tuple[dict[str, tuple[np.ndarray, pa.Table]], np.ndarray, np.ndarray]:
        """The parsed rows as one table per game (with the positions of its rows in ``parsed``), and
        each row's id hash and content hash, computed over those tables as ingest computes them."""
        id_hash, line_hash = np.zeros(len(parsed), np.uint64), np.zeros(len(parsed), np.uint64)
        by_game: dict[str, list[int]] = {}
        for k, entry in enumerate(parsed):
            by_game.setdefault(entry[3], []).append(k)
        tables = {}
        for game, where in by_game.items():
            table = pa.Table.from_pylist([parsed[k][4] for k in where],
                                         schema=schema_for(game).append(pa.field("date", pa.string())))
            at = np.array(where, np.int64)
            id_hash[at], line_hash[at] = id_hashes(table["round_id"]), row_hashes(table, content_columns(table.column_names))
            tables[game] = (at, table)
        return tables, id_hash, line_hash

    def _rules(self, game: str) -> tuple[list, list]:
        if game not in self.rules:
            self.rules[game] = (select_rules(game, "round"), select_rules(game, "shoe"))
        return self.rules[game]

    def _process(self, lines: list[tuple[Tracked, int, Any]]) -> None:
        """Parse a poll's lines as ingest does, validate them, emit their findings, keep them for the store."""
        p = self.pending
        parsed: list[Parsed] = []
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
            parsed.append((name, n, raw, game, row, t.source_key))
        self._take(parsed, aliases)

    def _take(self, parsed: list[Parsed], aliases: dict[str, list[str]]) -> None:
        """Check, emit and keep for the store the parsed rounds ``(file, line, raw, game, row, source key)`` of
        a poll (``aliases``: file -> the names it was read under), each round once across restarts."""
        p = self.pending
        tables, id_hash, line_hash = self._tables(parsed)
        check = np.zeros(len(parsed), bool)  # rounds to check (new, or our own committed before a restart)
        store = np.zeros(len(parsed), bool)  # rounds to store
        for k, ((name, n, raw, _game, row, _src), hash_of_id, content) in enumerate(
                zip(parsed, id_hash.tolist(), line_hash.tolist(), strict=True)):
            round_id = row["round_id"]  # as stored: NFC, edges trimmed
            store_it = True
            first = self.recent.get(hash_of_id)
            if first is not None:
                if first[0] == content:
                    p.counts["already_stored"] += 1
                else:
                    self._bad(name, n, raw, duplicate_reason(round_id, first[1], first[2]), round_id)
                continue
            if self.writer is not None:
                prior = self.writer.seen.lookup(round_id, hash_of_id)
                if prior is not None:
                    if prior[0] != content:
                        self._bad(name, n, raw, duplicate_reason(round_id, prior[1], prior[2]), round_id)
                        continue
                    if prior[2] != n or prior[1] not in aliases.get(name, [name]):  # from elsewhere: not new
                        p.counts["already_stored"] += 1
                        self.recent.add(hash_of_id, content, prior[1], prior[2])
                        continue
                    store_it = False  # our own line, committed before a restart: check it again, store it once
            self.recent.add(hash_of_id, content, name, n)
            check[k] = True
            if not store_it:
                p.counts["already_stored"] += 1
            elif self.store is not None:
                store[k] = True
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
                    shoes = self.shoes[game] = OpenShoes(game, shoe_rules, idle=self.settings.shoe_idle)
                frames.append(shoes.check(table, self.config, self.coverage))
            keep = store[where]
            if keep.any():
                self._keep(parsed, where[keep], all_rows.filter(pa.array(keep)), line_hash)
        frames = [f for f in frames if len(f)]
        if frames:
            found = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            found = found.sort_values(["source_file", "source_line", "rule_id"], kind="stable").reset_index(drop=True)
            self._emit(found)

    def _keep(self, parsed: list[Parsed], at: np.ndarray, rows: pa.Table, line_hash: np.ndarray) -> None:
        """Keep the rounds ``parsed[at]`` of one game (``rows``) for the store, by the file they were read from."""
        rows = rows.drop_columns(["source_file"])  # the writer names each block's file
        groups: dict[tuple[str, str], list[int]] = {}  # (source key, file) -> positions in ``rows``
        for i, k in enumerate(at.tolist()):
            groups.setdefault((parsed[k][5], parsed[k][0]), []).append(i)
        for key, pick in groups.items():
            where = at[pick]
            self.pending.rows.setdefault(key, Rows()).add(
                parsed[int(where[0])][3], rows if len(pick) == len(at) else rows.take(pa.array(pick)),
                line_hash[where], {parsed[k][1]: parsed[k][2] for k in where.tolist()})

    def _bad(self, file: str, line: int, raw: bytes, reason: str, round_id: str | None = None,
             count_line: bool = True) -> None:
        self.pending.quarantine(file, line, raw, reason, round_id)
        if not count_line:  # an entry the caller did not count: it balances as a line read
            self.pending.counts["lines_read"] += 1
        self.stats["quarantined"] += 1
        print(f"auditkit: quarantined {file}:{line}: {reason}", file=self.stderr, flush=True)

    def _follows(self, f: Path, in_folder: bool) -> bool:
        """Whether ``f`` (found in a watched folder, or named) is followed: a log, not a CSV log."""
        if f.name.lower().endswith(".csv"):
            self._warn(str(f), f"{f}: CSV logs are not followed live (ingest them); skipped")
            return False
        return f.name.lower().endswith(SUFFIXES) or not in_folder

    def poll_once(self) -> bool:
        """Read, validate and emit what arrived; True when a file had more to read than one poll takes."""
        self.stats["polls"] += 1
        now, cpu = time.monotonic(), time.thread_time()
        lines, more = self.tail.read(now, self.checkpoint.register, self._process)
        if lines:
            self._process(lines)
        for shoes in self.shoes.values():
            shoes.expire(now)
        if lines:
            self.poll_times.add(time.monotonic() - now, time.thread_time() - cpu)
        if not more and self.outputs.pin is not None and self.tail.done():
            self.outputs.caught_up()  # every line after the checkpoint was read again
        return more

    def _warn(self, key: str | None, message: str) -> None:
        """Warn once a ``key`` (None: every time)."""
        if key is None:
            self._warn_now(message)
        elif key not in self.warned:
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
