"""JSON Lines logs (plain or gzip): lines in, parsed rounds or quarantine entries out; and back.

:func:`read_lines` yields every line of a file with its number, so that each
one is accounted for (stored, quarantined or blank). A gzip stream that is
corrupt or truncated ends with one quarantine entry saying where it broke.
:func:`records_from_table` writes stored rows back as spec records.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..cards import card_str

__all__ = ["read_lines", "records_from_table", "write_jsonl", "LineError", "spec_cards", "spec_money", "drop_none"]


class LineError(Exception):
    """The file itself could not be read past some line (corrupt gzip, bad encoding)."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


def read_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line_number, raw_bytes)`` for every line; raises LineError where the file breaks."""
    opener = gzip.open if _is_gzip(path) else open
    n = 0
    try:
        with opener(path, "rb") as fh:
            for n, raw in enumerate(fh, start=1):
                yield n, raw.rstrip(b"\r\n")
    except (EOFError, OSError, zlib.error, gzip.BadGzipFile) as exc:
        kind = "truncated" if isinstance(exc, EOFError) else "corrupt"
        raise LineError(n + 1, f"{kind} gzip stream after line {n}: {exc}") from None


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


# ---- stored rows back to spec records ------------------------------------------------
def spec_cards(codes: list[int] | None) -> list[str] | None:
    """Card codes back to the spec's card names."""
    return None if codes is None else [card_str(c) for c in codes]


def spec_money(x: float | None) -> float | int | None:
    """An amount as the spec writes it (whole amounts without a fraction)."""
    if x is None:
        return None
    return int(x) if float(x).is_integer() else x


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    """The items of ``d`` that are not None."""
    return {k: v for k, v in d.items() if v is not None}


def _common(row: dict[str, Any], game: str) -> dict[str, Any]:
    ts = row["started_at"].astimezone(timezone(timedelta(minutes=int(row.get("utc_offset") or 0))))
    rec = {"round_id": row["round_id"], "game": game, "table_id": row["table_id"],
           "started_at": ts.isoformat(), "dealer_id": row.get("dealer_id"),
           "shoe_id": row.get("shoe_id"), "round_seq": row.get("round_seq")}
    if row.get("status") and row["status"] != "completed":
        rec["status"] = row["status"]
    return drop_none(rec)


def _events(events: list[dict] | None) -> list[dict] | None:
    if not events:
        return None
    out = []
    for e in events:
        e = drop_none(dict(e))
        for key in ("dice",):
            if key in e:
                e[key] = list(e[key])
        for key in ("high", "low"):
            if key in e:
                e[key] = spec_cards(e[key])
        if "amount" in e:
            e["amount"] = spec_money(e["amount"])
        out.append(e)
    return out


def _wagers(wagers: list[dict] | None) -> list[dict] | None:
    if not wagers:
        return None
    return [{"seat": w["seat"], "bet": w["bet"], "amount": spec_money(w["amount"]), "net": spec_money(w["net"])}
            for w in wagers]


def records_from_table(table: pa.Table, game: str) -> Iterator[dict[str, Any]]:
    """Spec round records (JSON-ready dicts) of stored rows of ``game``."""
    from .. import games

    spec = games.get(game)
    for row in table.to_pylist():
        rec = _common(row, game)
        spec.to_record(row, rec)
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
    with atomic_path(Path(path)) as tmp, open(tmp, "wb") as raw:
        # gzip with no time stamp: the same records give the same bytes
        binary = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz") else raw
        with io.TextIOWrapper(binary, encoding="utf-8", newline="\n") as fh:
            for rec in records:
                fh.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
                n += 1
    return n
