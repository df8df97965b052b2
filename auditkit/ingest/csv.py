"""The CSV layout: one main file of rounds plus optional companion files, read as spec records.

``rounds.csv`` holds one row per round with the top-level fields of the spec
(``round_id, game, table_id, started_at, ...``); card lists are written as
cards separated by spaces (``Ac Jd 4s``); baccarat's ``announced`` becomes
``announced_player``/``announced_banker``, pai gow's ``dealer`` becomes
``dealer_cards``/``dealer_high``/``dealer_low``. Companion files next to it,
``rounds.hands.csv``, ``rounds.wagers.csv`` and ``rounds.events.csv``, hold one
row per hand, wager or event with the ``round_id`` it belongs to, in order.
An empty cell is an absent field. See docs/csv.md.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..games import flattened_in_csv

__all__ = ["ATTACHED", "write_csv_rounds", "is_round_csv", "COMPANIONS", "companions_of", "is_companion", "read_csv_rounds", "CsvLine",
           "csv_line", "csv_row", "nest_row", "orphan_reason", "read_text", "MISSING_ID", "TEXT", "CARD_LISTS", "INT_LISTS"]

COMPANIONS = ("hands", "wagers", "events")
ATTACHED = "attached"
"""The record yielded for a companion row that was read into its round."""
MISSING_ID = "missing round_id"
"""Why a companion row without a round id is quarantined."""
TEXT = {"round_id", "game", "table_id", "started_at", "dealer_id", "shoe_id", "status", "outcome",
        "deal_order", "bet", "decision", "type", "action"}
CARD_LISTS = {"player_cards", "banker_cards", "dealer_cards", "cards", "high", "low", "dealer_high", "dealer_low"}
INT_LISTS = {"dice"}


def is_round_csv(path: Path) -> bool:
    """True when a CSV header names the required columns of a round log."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return True  # let the reader report what is wrong with it
    names = {h.strip() for h in header}
    return {"round_id", "game", "table_id", "started_at"} <= names


def is_companion(path: Path) -> bool:
    """True for ``X.hands.csv``, ``X.wagers.csv``, ``X.events.csv``."""
    name = path.name.lower()
    return any(name.endswith(f".{c}.csv") for c in COMPANIONS)


def companions_of(path: Path) -> dict[str, Path]:
    """The companion files that exist next to a main CSV file."""
    stem = path.name[: -len(".csv")]
    found = {c: path.with_name(f"{stem}.{c}.csv") for c in COMPANIONS}
    return {c: p for c, p in found.items() if p.exists()}


def _value(key: str, text: str) -> Any:
    text = text.strip()
    if key in TEXT:
        return text
    if key in CARD_LISTS:
        return text.replace(",", " ").split()
    if key in INT_LISTS:
        return [_number(t) for t in text.replace(",", " ").split()]
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return _number(text)


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # left as text: the record parser reports the wrong type


def csv_row(header: list[str], cells: list[str]) -> dict[str, Any]:
    """The fields of a row by its header (an empty cell is an absent field); ValueError for a row of another width."""
    if len(cells) != len(header):
        raise ValueError(f"{len(cells)} cells where the header has {len(header)}")
    return {k: _value(k, v) for k, v in zip(header, cells, strict=True) if k and v.strip() != ""}


class CsvLine:
    """One physical line of a CSV file: its number, raw text and cells (or the error)."""

    __slots__ = ("line", "raw", "cells", "error")

    def __init__(self, line: int, raw: str, cells: list[str] | None, error: str | None):
        self.line, self.raw, self.cells, self.error = line, raw, cells, error


def read_text(path: Path) -> bytes:
    """A CSV file's bytes, without the BOM it may start with."""
    return path.read_bytes().removeprefix(codecs.BOM_UTF8)


def _lines(path: Path) -> Iterator[CsvLine]:
    for n, raw_bytes in enumerate(read_text(path).splitlines(), start=1):
        yield csv_line(n, raw_bytes)


def csv_line(n: int, raw_bytes: bytes) -> CsvLine:
    """Line ``n`` of a CSV file (its bytes, without the line break) read on its own."""
    try:
        raw = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:  # that line alone, as in a JSONL file
        return CsvLine(n, raw_bytes.decode("utf-8", errors="replace"), None, f"line is not UTF-8: {exc}")
    if not raw.strip():
        return CsvLine(n, raw, None, None)
    try:
        return CsvLine(n, raw, next(csv.reader(io.StringIO(raw))), None)
    except (csv.Error, StopIteration) as exc:
        return CsvLine(n, raw, None, f"not a CSV row: {exc}")


def read_csv_rounds(path: Path) -> Iterator[tuple[str, int, str, dict[str, Any] | None, str | None]]:
    """``(file, line, raw, record, error)`` for every line of a main CSV and its companions.

    ``record`` is a spec record for a main row (with its hands, wagers and events
    attached); a companion line yields :data:`ATTACHED` once read into its round,
    or an error when it cannot be (unknown round_id, bad row). Header lines and
    blank lines yield ``(file, line, raw, None, None)``; a line that is not UTF-8
    yields its error. Raises OSError for a file that cannot be read at all.
    """
    children: dict[str, dict[str, list[tuple[int, dict[str, Any]]]]] = {}
    child_lines: list[tuple[str, int, str, str | None, str | None, str]] = []  # file, line, raw, error, rid, kind
    for kind, cpath in companions_of(path).items():
        header: list[str] | None = None
        for ln in _lines(cpath):
            if ln.cells is None:
                child_lines.append((str(cpath), ln.line, ln.raw, ln.error, None, kind))
                continue
            if header is None:
                header = [h.strip() for h in ln.cells]
                child_lines.append((str(cpath), ln.line, ln.raw, None, None, kind))
                continue
            try:
                row = csv_row(header, ln.cells)
            except ValueError as exc:
                child_lines.append((str(cpath), ln.line, ln.raw, str(exc), None, kind))
                continue
            rid = row.pop("round_id", None)
            if not isinstance(rid, str) or not rid:
                child_lines.append((str(cpath), ln.line, ln.raw, MISSING_ID, None, kind))
                continue
            children.setdefault(rid, {}).setdefault(kind, []).append((ln.line, row))
            child_lines.append((str(cpath), ln.line, ln.raw, None, rid, kind))

    seen: set[str] = set()
    header = None
    for ln in _lines(path):
        if ln.cells is None:
            yield str(path), ln.line, ln.raw, None, ln.error
            continue
        if header is None:
            header = [h.strip() for h in ln.cells]
            yield str(path), ln.line, ln.raw, None, None
            continue
        try:
            rec = csv_row(header, ln.cells)
        except ValueError as exc:
            yield str(path), ln.line, ln.raw, None, str(exc)
            continue
        nest_row(rec)
        rid = rec.get("round_id")
        if isinstance(rid, str) and rid in children and rid not in seen:
            for kind, rows in children[rid].items():
                rec[kind] = [r for _, r in rows]
        if isinstance(rid, str):
            seen.add(rid)
        yield str(path), ln.line, ln.raw, rec, None

    for cfile, line, raw, error, rid, kind in child_lines:
        if error is None and rid is not None and rid not in seen:
            error = orphan_reason(kind, rid, path)
        yield cfile, line, raw, (ATTACHED if error is None and rid is not None else None), error


def orphan_reason(kind: str, round_id: str, main: Path) -> str:
    """Why a companion row whose round is not in the main file is quarantined."""
    return f"{kind} row for round_id {round_id!r}, which is not in {main.name}"


def nest_row(rec: dict[str, Any]) -> None:
    """Main-row columns back to the spec's nested objects."""
    announced = {k: rec.pop(f"announced_{k}") for k in ("player", "banker") if f"announced_{k}" in rec}
    if announced:
        rec["announced"] = announced
    dealer = {k: rec.pop(f"dealer_{k}") for k in ("high", "low") if f"dealer_{k}" in rec}
    if "dealer" in flattened_in_csv(rec.get("game")):  # a game whose dealer_cards is its dealer's
        if "dealer_cards" in rec:
            dealer["cards"] = rec.pop("dealer_cards")
        if dealer:
            rec["dealer"] = dealer


def write_csv_rounds(records: list[dict[str, Any]], path: Path) -> dict[str, Path]:
    """Write spec records in the CSV layout: ``path`` and its companions (only those needed).

    The inverse of :func:`read_csv_rounds`, for exports and sample data.
    """
    from ..store import atomic_path

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        return str(value)

    main: list[dict[str, str]] = []
    children: dict[str, list[dict[str, str]]] = {c: [] for c in COMPANIONS}
    for rec in records:
        row = {}
        for key, value in rec.items():
            if key in COMPANIONS:
                for item in value:
                    children[key].append({"round_id": rec["round_id"], **{k: cell(v) for k, v in item.items()}})
            elif key == "announced":
                row.update({f"announced_{k}": cell(v) for k, v in value.items()})
            elif key == "dealer":
                row.update({f"dealer_{k}": cell(v) for k, v in value.items()})
            else:
                row[key] = cell(value)
        main.append(row)
    written = {"rounds": Path(path)}
    stem = Path(path).name[: -len(".csv")]
    for kind, rows in [("rounds", main)] + [(c, children[c]) for c in COMPANIONS]:
        if not rows:
            continue
        target = Path(path) if kind == "rounds" else Path(path).with_name(f"{stem}.{kind}.csv")
        header = list(dict.fromkeys(k for r in rows for k in r))
        with atomic_path(target) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        written[kind] = target
    return written
