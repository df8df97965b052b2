"""What the watcher remembers of the rounds it read, each within a fixed bound: the recent round ids
(the duplicate check), the open shoes (the shoe rules) and the times of its polls."""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..engine.checks import shoe_columns
from ..paytables import Config
from ..rules.tally import Tally
from ..validate import check_shoes


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
        self.emitted: set[tuple[str, str]] = set()  # (round_id, rule_id) of the open shoes' findings reported

    def check(self, batch: pa.Table, config: Config, tally: Tally | None = None) -> pd.DataFrame:
        """Shoe findings on the new rounds of ``batch`` (a poll's rounds of this game); ``tally`` gets the coverage."""
        narrow = batch.select(self.columns)
        tables, shoes = narrow["table_id"].to_pylist(), narrow["shoe_id"].to_pylist()
        groups: dict[tuple[str, str | None], list[int]] = {}
        for i, key in enumerate(zip(tables, shoes, strict=True)):
            groups.setdefault(key, []).append(i)
        now = time.monotonic()
        parts, emit = [], []
        closed: list[pa.Table] = []  # rounds of the shoes closed in this poll: their findings forgotten after
        for key, rows in groups.items():  # the check below (it may hold them, reported in earlier polls)
            prior = self.current.get(key[0])
            if prior is not None and prior != key:  # a new shoe at the table closes the last one
                closed += self._drop(prior)
            self.current[key[0]] = key
            new = narrow.take(pa.array(rows))
            old = self.shoes.get(key)
            shoe = pa.concat_tables([old, new]).combine_chunks() if old is not None else new
            if shoe.num_rows > self.max_rounds:
                closed.append(shoe.slice(0, shoe.num_rows - self.max_rounds))
                shoe = shoe.slice(shoe.num_rows - self.max_rounds)
            self.seen.pop(key, None)  # to the end: the most recently dealt
            self.shoes[key], self.seen[key] = shoe, now
            parts.append(shoe)
            flags = np.zeros(shoe.num_rows, bool)
            flags[-len(rows):] = True
            emit.append(flags)
        while len(self.shoes) > self.max_shoes:
            closed += self._drop(next(iter(self.seen)))
        both = pa.concat_tables(parts)
        found = check_shoes(both, self.game, config, self.rules, emit=np.concatenate(emit), tally=tally,
                            emitted=self.emitted)
        for rounds in closed:
            self._forget(rounds)
        return found

    def expire(self, now: float | None = None) -> int:
        """Drop shoes idle for longer than ``idle`` seconds; returns how many."""
        now = time.monotonic() if now is None else now
        n = 0
        while self.seen and now - next(iter(self.seen.values())) > self.idle:
            for rounds in self._drop(next(iter(self.seen))):
                self._forget(rounds)
            n += 1
        return n

    def _drop(self, key: tuple[str, str | None]) -> list[pa.Table]:
        """Close the shoe ``key``; its rounds (none, or one table), whose findings the caller forgets
        once no check of this poll can hold them."""
        shoe = self.shoes.pop(key, None)
        self.seen.pop(key, None)
        if self.current.get(key[0]) == key:
            del self.current[key[0]]
        return [] if shoe is None else [shoe]

    def _forget(self, rounds: pa.Table) -> None:
        """Forget the reported findings of ``rounds`` (rounds no longer held)."""
        if self.emitted:
            ids = set(rounds["round_id"].to_pylist())
            self.emitted = {k for k in self.emitted if k[0] not in ids}

    @property
    def rounds(self) -> int:
        return sum(t.num_rows for t in self.shoes.values())

    def state(self) -> dict[str, Any]:
        tables = list(self.shoes.values())
        return {"table": _ipc(pa.concat_tables(tables)) if tables else None,
                "current": [list(k) for k in self.current.values()]}

    def restore(self, state: dict[str, Any], config: Config) -> None:
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
        # every finding of a shoe held at the checkpoint was reported before it: known as reported
        self.emitted = set()
        if self.shoes:
            check_shoes(pa.concat_tables(list(self.shoes.values())), self.game, config, self.rules,
                        emitted=self.emitted)
        self.current = {k[0]: (k[0], k[1]) for k in map(tuple, state.get("current", [])) if tuple(k) in self.shoes}
