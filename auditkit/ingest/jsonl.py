"""JSON Lines logs (plain or gzip): lines in, parsed rounds or quarantine entries out; and back.

:func:`read_blocks` yields every line of a file with its number, in blocks of
many thousands, so that each one is accounted for (stored, quarantined or
blank). A gzip stream that is corrupt or truncated ends with one quarantine
entry saying where it broke; a line longer than :data:`MAX_LINE` is one entry.
:func:`records_from_table` writes stored rows back as spec records.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..cards import card_str

__all__ = ["read_blocks", "Lines", "records_from_table", "write_jsonl", "MAX_LINE", "RAW_KEPT"]

RAW_KEPT = 65_536
"""Bytes of a quarantined line kept in its entry (the rest is counted, not kept)."""


MAX_LINE = 1 << 20
"""The longest line read, in bytes (1 MiB); a longer one is quarantined without being held in memory."""
BLOCK_BYTES = 16 << 20
"""Bytes of lines gathered into one block for the bulk reader."""
_CHUNK = 1 << 20


@dataclass
class Lines:
    """A block of consecutive lines: ``data`` holds each line followed by ``\n`` (a line that was
    not read, too long or where a gzip stream broke, is empty there and has its kept head and
    reason in ``errors``); ``done`` is the bytes of the file read so far (compressed for gzip)."""

    data: bytes
    starts: np.ndarray
    ends: np.ndarray
    first: int
    errors: dict[int, tuple[bytes, str]]
    done: int

    def __len__(self) -> int:
        return len(self.starts)

    def raw(self, i: int) -> bytes:
        """Line ``i`` of the block as written, without its line break."""
        return self.data[self.starts[i]:self.ends[i]].rstrip(b"\r\n")


def _block(pieces: list[bytes], first: int, errors: dict[int, tuple[bytes, str]], done: int, max_line: int) -> Lines:
    data = b"".join(pieces)
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    too_long = f"line longer than {max_line:,} bytes"
    for i in np.flatnonzero(ends - starts > max_line):  # lines that met within a block
        errors[int(i)] = (data[starts[i]:starts[i] + RAW_KEPT], too_long)
    return Lines(data, starts, ends, first, errors, done)


def read_blocks(path: Path, *, max_line: int = MAX_LINE, block_bytes: int = BLOCK_BYTES) -> Iterator[Lines]:
    """Every line of a JSONL file (plain or gzip), about ``block_bytes`` at a time.

    A line longer than ``max_line`` bytes keeps only its first :data:`RAW_KEPT` bytes and
    the reason ``line longer than N bytes``; memory stays within ``max_line`` plus a read
    chunk whatever the line's length. A corrupt or truncated gzip stream ends the file
    with one entry (numbered after the last whole line) saying where it broke.
    """
    too_long = f"line longer than {max_line:,} bytes"
    pieces: list[bytes] = []
    errors: dict[int, tuple[bytes, str]] = {}
    first, size = 1, 0  # first line of the block, bytes in it
    carry, skipping = b"", None  # the unfinished line; the head of a too-long line being skipped
    with open(path, "rb") as raw_fh:
        fh = gzip.GzipFile(fileobj=raw_fh, mode="rb") if _is_gzip(path) else raw_fh
        read = fh.read1 if fh is not raw_fh else fh.read
        while True:
            try:
                chunk = read(_CHUNK)
            except (EOFError, OSError, zlib.error, gzip.BadGzipFile) as exc:
                kind = "truncated" if isinstance(exc, EOFError) else "corrupt"
                count = sum(p.count(b"\n") for p in pieces)
                errors[count] = (b"", f"{kind} gzip stream after line {first + count - 1}: {exc}")
                pieces.append(b"\n")
                yield _block(pieces, first, errors, raw_fh.tell(), max_line)
                return
            if not chunk:
                break
            if skipping is not None:
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue
                errors[sum(p.count(b"\n") for p in pieces)] = (skipping, too_long)
                pieces.append(b"\n")
                skipping, chunk = None, chunk[cut + 1:]
            cut = chunk.rfind(b"\n")
            if cut < 0:
                carry += chunk
            else:
                piece = carry + chunk[:cut + 1]
                pieces.append(piece)
                size += len(piece)
                carry = chunk[cut + 1:]
            if len(carry) > max_line:
                skipping, carry = carry[:RAW_KEPT], b""
            if size >= block_bytes:
                block = _block(pieces, first, errors, raw_fh.tell(), max_line)
                yield block
                pieces, errors, first, size = [], {}, first + len(block), 0
        if skipping is not None:
            errors[sum(p.count(b"\n") for p in pieces)] = (skipping, too_long)
            pieces.append(b"\n")
        elif carry:
            pieces.append(carry + b"\n")
        if pieces:
            yield _block(pieces, first, errors, raw_fh.tell(), max_line)


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


# ---- stored rows back to spec records ------------------------------------------------
def _cards(codes: list[int] | None) -> list[str] | None:
    return None if codes is None else [card_str(c) for c in codes]


def _money(x: float | None) -> float | int | None:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else x


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _common(row: dict[str, Any], game: str) -> dict[str, Any]:
    ts = row["started_at"].astimezone(timezone(timedelta(minutes=int(row.get("utc_offset") or 0))))
    rec = {"round_id": row["round_id"], "game": game, "table_id": row["table_id"],
           "started_at": ts.isoformat(), "dealer_id": row.get("dealer_id"),
           "shoe_id": row.get("shoe_id"), "round_seq": row.get("round_seq")}
    if row.get("status") and row["status"] != "completed":
        rec["status"] = row["status"]
    return _drop_none(rec)


def _events(events: list[dict] | None) -> list[dict] | None:
    if not events:
        return None
    out = []
    for e in events:
        e = _drop_none(dict(e))
        for key in ("dice",):
            if key in e:
                e[key] = list(e[key])
        for key in ("high", "low"):
            if key in e:
                e[key] = _cards(e[key])
        if "amount" in e:
            e["amount"] = _money(e["amount"])
        out.append(e)
    return out


def _wagers(wagers: list[dict] | None) -> list[dict] | None:
    if not wagers:
        return None
    return [{"seat": w["seat"], "bet": w["bet"], "amount": _money(w["amount"]), "net": _money(w["net"])}
            for w in wagers]


def records_from_table(table: pa.Table, game: str) -> Iterator[dict[str, Any]]:
    """Spec round records (JSON-ready dicts) of stored rows of ``game``."""
    for row in table.to_pylist():
        rec = _common(row, game)
        if game in ("baccarat", "mini_baccarat"):
            rec["player_cards"] = _cards(row["player_cards"])
            rec["banker_cards"] = _cards(row["banker_cards"])
            rec["outcome"] = row["outcome"]
            if row.get("announced_player") is not None or row.get("announced_banker") is not None:
                rec["announced"] = _drop_none({"player": row.get("announced_player"),
                                               "banker": row.get("announced_banker")})
            if row.get("deal_order"):
                rec["deal_order"] = row["deal_order"]
            if row.get("cut_card"):
                rec["cut_card"] = True
        elif game == "blackjack":
            rec["dealer_cards"] = _cards(row["dealer_cards"])
            for k in ("table_min", "table_max"):
                if row.get(k) is not None:
                    rec[k] = _money(row[k])
            rec["hands"] = [
                {"seat": h["seat"], "hand": h["hand"], "cards": _cards(h["cards"]), "wager": _money(h["wager"]),
                 "initial_wager": _money(h["initial_wager"]), "doubled": h["doubled"], "split": h["split"],
                 "surrendered": h["surrendered"], "net": _money(h["net"])}
                for h in row["hands"] or []]
        elif game == "three_card_poker":
            rec["dealer_cards"] = _cards(row["dealer_cards"])
            rec["hands"] = [_drop_none({
                "seat": h["seat"], "cards": _cards(h["cards"]), "decision": h["decision"],
                "ante": _money(h["ante"]), "play": _money(h["play"]), "pair_plus": _money(h["pair_plus"]),
                "net_ante": _money(h["net_ante"]), "net_play": _money(h["net_play"]),
                "ante_bonus": _money(h["ante_bonus"]), "net_pair_plus": _money(h["net_pair_plus"])})
                for h in row["hands"] or []]
        elif game == "pai_gow_poker":
            rec["dice"] = list(row["dice"])
            rec["first_position"] = row["first_position"]
            if row.get("cards_remaining") is not None:
                rec["cards_remaining"] = row["cards_remaining"]
            rec["dealer"] = _drop_none({"cards": _cards(row["dealer_cards"]), "high": _cards(row["dealer_high"]),
                                        "low": _cards(row["dealer_low"])})
            rec["hands"] = [_drop_none({
                "seat": h["seat"], "position": h["position"], "cards": _cards(h["cards"]),
                "high": _cards(h["high"]), "low": _cards(h["low"]), "wager": _money(h["wager"]),
                "net": _money(h["net"])}) for h in row["hands"] or []]
        else:
            raise ValueError(f"unknown game {game!r}")
        wagers = _wagers(row.get("wagers"))
        if wagers:
            rec["wagers"] = wagers
        events = _events(row.get("events"))
        if events:
            rec["events"] = events
        yield rec


def write_jsonl(records: Iterator[dict[str, Any]] | list[dict[str, Any]], path: Path) -> int:
    """Write records as JSON Lines atomically (gzip when the name ends in .gz); returns the count."""
    from ..store import atomic_path

    n = 0
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "wb") as raw:
            # gzip with no time stamp: the same records give the same bytes
            binary = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz") else raw
            with io.TextIOWrapper(binary, encoding="utf-8", newline="\n") as fh:
                for rec in records:
                    fh.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
                    n += 1
    return n
