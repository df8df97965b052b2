"""``auditkit watch --profile``: follow exports in a line format (CSV, JSON lines of another shape)
through an import profile (:mod:`auditkit.ingest.profiles`).

The tailing, the checkpoint, the store commit and the duplicate checks are the plain watcher's
(:class:`~auditkit.live.watcher.Watcher`); only a line's meaning differs. Each file's rows wait
in a :class:`Held` until their round is *closed*: a row of another round follows it in the file
(a round's rows are written together), the file is gone (rotated away and read to its end), or
the watch stops with ``--once``. A round still open at SIGTERM is saved in the checkpoint with
its rows and completed by the next start: it is checked once, whole.
"""

from __future__ import annotations

import base64
import csv
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..ingest.perline import from_object
from ..ingest.profiles.mapping import ROW, house_rules, map_rows
from ..ingest.profiles.model import Profile
from ..ingest.profiles.nested import cells as json_cells
from ..paytables import ConfigError
from .tail import Tracked, Unread
from .watcher import Parsed, Watcher

__all__ = ["ProfiledWatcher", "LINE_FORMATS", "line_format"]

LINE_FORMATS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
SEQ_KEPT = 64  # shoes whose round count a file keeps (for a round_seq the export lacks)


def line_format(prof: Profile) -> str | None:
    """The profile's line format (``csv``, ``jsonl``; None: by each file's suffix); ConfigError naming
    the profile when its source is not a file of lines."""
    fmt = prof.source.format
    if fmt is not None and fmt not in ("csv", "jsonl"):
        why = {"xlsx": "a workbook is rewritten whole, never appended to",
               "json": "a JSON document is one value, complete only when written to its end",
               "sqlite": "a database is read by a query, not followed",
               "postgresql": "a database is read by a query, not followed"}[fmt]
        raise ConfigError(f"{prof.where}: source.format = {fmt!r}: watch follows line formats only (csv, jsonl): "
                          f"{why}; ingest or validate it instead")
    return fmt


@dataclass
class Held:
    """One followed file's state: its header (CSV), the rows of rounds not yet closed, the rounds
    taken so far (for made times) and the rounds per shoe (for a made round_seq)."""

    fmt: str
    header: list[str] | None = None
    rows: list[tuple[int, dict[str, str | None], bytes]] = field(default_factory=list)  # (line, cells, raw)
    name: str = ""
    taken: int = 0
    seq: dict[str, int] = field(default_factory=dict)
    gen: int = 0

    def state(self) -> dict[str, Any]:
        return {"fmt": self.fmt, "header": self.header, "name": self.name, "taken": self.taken, "gen": self.gen,
                "seq": list(self.seq.items())[-SEQ_KEPT:],
                "rows": [[n, cells, base64.b64encode(raw).decode()] for n, cells, raw in self.rows]}

    @classmethod
    def restore(cls, s: dict[str, Any]) -> Held:
        return cls(fmt=s["fmt"], header=s["header"], name=s["name"], taken=s["taken"], gen=s["gen"],
                   seq=dict(s["seq"]), rows=[(n, cells, base64.b64decode(raw)) for n, cells, raw in s["rows"]])


class ProfiledWatcher(Watcher):
    """A :class:`Watcher` of exports read through ``profile`` (keyword arguments as Watcher's)."""

    live_format = "profile-live"

    def __init__(self, paths: Any, profile: Profile, **kwargs: Any):
        self.fmt = line_format(profile)
        self.live_format = f"profile-live:{profile.name}"  # before the watcher makes its store's writer
        super().__init__(paths, **kwargs)
        self.profile = profile
        self.held: dict[tuple[int, int], Held] = {}
        self.take_open = False  # --once: the rounds still open at the end are taken
        spec = profile.source
        self._dialect = {"delimiter": spec.delimiter, "quotechar": spec.quote, "strict": True}
        self._encoding = "utf-8" if spec.encoding.lower() == "utf-8-sig" else spec.encoding
        self._columns = sorted({c for s in profile.fields.values() for c in s.source_columns()}
                               | set(profile.round_key) | set(profile.shoe_key))

    # ---- which files: the profile's line format ----------------------------------------------------
    def _format_of(self, path: Path) -> str | None:
        name = path.name.lower().removesuffix(".gz")
        return self.fmt or next((f for s, f in LINE_FORMATS.items() if name.endswith(s)), None)

    def _follows(self, f: Path, in_folder: bool) -> bool:
        if self._format_of(f) is not None:
            return True
        if not in_folder:
            self._warn(str(f), f"{f}: not a line format the profile reads (csv, jsonl by suffix); skipped")
        return False

    # ---- the loop's hooks ------------------------------------------------------------------------
    def run(self, once: bool = False) -> int:
        self.take_open = once
        return super().run(once)

    def close(self) -> None:
        """With ``--once``, take the rounds still open first; then as the plain watcher."""
        if self.take_open:
            self.take_open = False
            self._take_files(list(self.held), everything=True)
        super().close()

    def poll_once(self) -> bool:
        more = super().poll_once()
        gone = [k for k in self.held if k not in self.tail.files]  # read to its end and dropped (rotated away)
        if gone:
            self._take_files(gone, everything=True)
            for k in gone:
                self.held.pop(k, None)
        return more

    def _state(self) -> dict[str, Any]:
        state = super()._state()
        state["held"] = [[list(k), h.state()] for k, h in self.held.items()]
        return state

    def _restore(self, state: dict[str, Any]) -> None:
        super()._restore(state)
        self.held = {tuple(k): Held.restore(h) for k, h in state.get("held", [])}  # type: ignore[misc]

    # ---- lines to rows, rows to rounds -------------------------------------------------------------
    def _entry(self, t: Tracked) -> Held:
        h = self.held.get(t.key)
        if h is None and t.key not in self.tail.files:  # the copy of a copytruncated file: its original's header
            orig = next((self.held[k] for k, o in self.tail.files.items() if k in self.held and o.names == t.names[:-1]),
                        None)
            h = self.held[t.key] = Held(fmt=orig.fmt if orig else self._format_of(t.path) or "csv",
                                        header=orig.header if orig else None, gen=t.gen)
        elif h is None:
            h = self.held[t.key] = Held(fmt=self._format_of(t.path) or "csv", gen=t.gen)
        elif h.gen != t.gen:  # truncated: read again from its start, header included
            self._take(self._rounds(h, h.rows, t.key), {})
            h.rows, h.header, h.gen = [], None, t.gen
        return h

    def _process(self, lines: list[tuple[Tracked, int, Any]]) -> None:
        p = self.pending
        touched: dict[tuple[int, int], Held] = {}
        for t, n, raw in lines:
            name = sys.intern(str(t.path))
            rng = p.ranges.setdefault(t.source_key, [name, n, n])
            rng[0], rng[2] = name, max(rng[2], n)
            if isinstance(raw, Unread):
                self._bad(name, n, raw.head, raw.reason, None, count_line=False)
                continue
            p.size += len(raw) + 1
            h = touched[t.key] = self._entry(t)
            h.name = name
            if h.fmt == "csv" and h.header is None:
                self._header(h, n, raw)
                continue
            if not raw.strip():
                p.counts["lines_read"] += 1
                p.counts["blank"] += 1
                continue
            cells, error = self._cells(h, raw)
            if error is not None:
                p.counts["lines_read"] += 1
                self._bad(name, n, raw, error)
                continue
            h.rows.append((n, cells, raw))
        for key, h in touched.items():
            self._take_files([key], everything=False, aliases={h.name: self.tail.files[key].names}
                             if key in self.tail.files else {})

    def _header(self, h: Held, n: int, raw: bytes) -> None:
        """A CSV file's header line (lines above ``header_row`` are passed over, counted nowhere, as
        the profile's reader does)."""
        if n < self.profile.source.header_row:
            return
        text = raw.decode(self._encoding, "replace").lstrip("\ufeff")
        try:
            h.header = [c.strip() for c in next(csv.reader([text], **self._dialect))]
        except (csv.Error, StopIteration) as exc:
            raise ConfigError(f"{h.name}: line {n}: the header cannot be read: {exc}") from exc
        missing = [c for c in self._columns if c not in h.header]
        if missing:
            raise ConfigError(f"{self.profile.where}: {h.name} has no column {', '.join(map(repr, missing))} "
                              f"(its columns: {', '.join(map(repr, h.header))})")

    def _cells(self, h: Held, raw: bytes) -> tuple[dict[str, str | None], str | None]:
        """The cells of one line by column name, or the reason it cannot be read."""
        try:
            text = raw.decode(self._encoding)
        except UnicodeDecodeError:
            return {}, f"undecodable text (not {self._encoding})"
        if h.fmt == "jsonl":
            try:
                obj = json.loads(text)
            except ValueError as exc:
                return {}, f"not valid JSON: {exc}"
            if not isinstance(obj, dict):
                return {}, "a record must be a JSON object"
            return json_cells(obj), None  # an object's fields also by their dotted paths
        try:
            cells = next(csv.reader([text], **self._dialect))
        except csv.Error as exc:
            return {}, f"not a CSV row: {exc} (a cell holding a line break cannot be followed live)"
        assert h.header is not None
        if len(cells) != len(h.header):
            return {}, f"{len(cells)} cells, the header has {len(h.header)}"
        return {c: (v if v.strip() else None) for c, v in zip(h.header, cells, strict=True)}, None

    def _closed(self, h: Held, everything: bool) -> list[tuple[int, dict[str, str | None], bytes]]:
        """The rows of rounds closed (taken out of ``h``): all but the last round's, or all."""
        if everything or not self.profile.round_key:
            rows, h.rows = h.rows, []
            return rows
        last = _key(h.rows[-1][1], self.profile.round_key) if h.rows else None
        cut = len(h.rows)
        while cut and _key(h.rows[cut - 1][1], self.profile.round_key) == last:
            cut -= 1
        rows, h.rows = h.rows[:cut], h.rows[cut:]
        return rows

    def _take_files(self, keys: list[tuple[int, int]], everything: bool,
                    aliases: dict[str, list[str]] | None = None) -> None:
        for key in keys:
            h = self.held[key]
            rows = self._closed(h, everything)
            if rows:
                self._take(self._rounds(h, rows, key), aliases or {})

    def _rounds(self, h: Held, rows: list[tuple[int, dict[str, str | None], bytes]], key: tuple[int, int]
                ) -> list[Parsed]:
        """The rounds of some rows of one file (``key``), mapped through the profile; rows it cannot map
        quarantined."""
        p = self.pending
        if not rows:
            return []
        names = list(dict.fromkeys([*(h.header or []), *self._columns, *(c for _, cells, _ in rows for c in cells)]))
        table = pa.table({**{c: pa.array([cells.get(c) for _, cells, _ in rows], pa.string()) for c in names},
                          ROW: pa.array([n for n, _, _ in rows], pa.int64())})
        raws = {n: raw for n, _, raw in rows}
        mapped = map_rows(table, self.profile, first_ordinal=h.taken, seq=h.seq)
        while len(h.seq) > SEQ_KEPT:
            del h.seq[next(iter(h.seq))]
        h.taken += mapped.groups
        p.counts["lines_read"] += mapped.rows
        p.counts["blank"] += mapped.blank
        p.counts["attached"] += mapped.attached
        for n, _text, reason, rid in mapped.bad:
            self._bad(h.name, n, raws[n], reason, rid)
        out = []
        for first, rec in mapped.rounds:
            raw = mapped.raws[first].encode("utf-8", "replace")
            rules = house_rules(rec)
            game, date, row = from_object(rec)
            if game is None:
                self._bad(h.name, first, raw, date, row)  # type: ignore[arg-type]
                continue
            row["source_file"], row["source_line"], row["date"] = h.name, first, date
            if self.profile.not_recorded:
                row["not_recorded"] = list(self.profile.not_recorded)
            if rules is not None:
                row["house_rules"] = rules
            out.append((h.name, first, raw, game, row, f"{key[0]}:{key[1]}:{h.gen}"))
        return out


def _key(cells: dict[str, str | None], cols: list[str]) -> tuple:
    return tuple((cells.get(c) or "").strip() for c in cols)

