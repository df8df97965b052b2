"""Cell values to the log's values, a column at a time: cards in any notation, times, money, numbers.

Each converter reads one distinct value of a column (columns are dictionary-encoded first, so a
value met a million times is read once) and returns the log-v1 value or raises ``ValueError``
with the reason the row is quarantined for.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import NAMES, card_str
from .cut import split_cell
from .distinct import code_reasons, column_values, encode

if TYPE_CHECKING:
    from .model import FieldSpec, Profile

__all__ = ["card_reader", "time_reader", "money_reader", "converter", "SYMBOLS"]

SYMBOLS = {"♣": "c", "♧": "c", "♦": "d", "♢": "d", "♥": "h", "♡": "h", "♠": "s", "♤": "s"}
_RANK_WORDS = {"10": "T", "1": "A", "11": "J", "12": "Q", "13": "K", "14": "A"}
_NUMERIC = re.compile(r"^(\d{1,2})([cdhsCDHS♣♦♥♠♧♢♡♤])$")
_SUITED = re.compile(r"^(10|[2-9TJQKAtjqka])([cdhsCDHS♣♦♥♠♧♢♡♤])$")
BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False, "y": True, "n": False, "t": True,
              "f": False, "1": True, "0": False}


def _suit(tok: str, prof: Profile) -> str:
    s = prof.suits.get(tok, tok)
    s = SYMBOLS.get(s, s).lower()
    if s not in ("c", "d", "h", "s"):
        raise ValueError(f"unknown suit {tok!r}")
    return s


def _rank(tok: str, prof: Profile, ace_one: bool = False) -> str:
    r = prof.ranks.get(tok, tok).upper()
    if r.isdigit():
        n = int(r)
        if n == 1 and not ace_one and prof.notation not in ("numeric-ace-1", "points", "rank-only", "pattern"):
            raise ValueError(f"rank {tok!r}: 1 is not a rank in this notation")
        if n == 14 and prof.notation != "numeric-ace-14" and not prof.ranks:
            raise ValueError(f"rank {tok!r}: 14 is an ace only in notation numeric-ace-14")
        r = _RANK_WORDS.get(str(n), str(n))
    if r not in "23456789TJQKA" or len(r) != 1:
        raise ValueError(f"unknown rank {tok!r}")
    return r


def card_reader(prof: Profile) -> Callable[[str], str]:
    """The reader of one card of the profile's notation: the card in auditkit's notation (``Th``)."""
    n, ph = prof.notation, prof.placeholder_suit

    def read(text: str) -> str:
        t = text.strip()
        if prof.pattern is not None:
            m = prof.pattern.fullmatch(t)
            if not m:
                raise ValueError(f"card {text!r} does not match the pattern {prof.pattern.pattern!r}")
            suit = m.groupdict().get("suit")
            if prof.ranks.get(m["rank"], m["rank"]).upper() == "JK":
                return "JK"
            return _rank(m["rank"], prof, True) + (_suit(suit, prof) if suit else ph)
        if n in ("auditkit", "rank-suit"):
            code = NAMES.get(t.upper())
            if code is None:
                raise ValueError(f"unknown card {text!r}")
            return card_str(code)
        if n == "symbols":
            m = _SUITED.match(t)
            if not m or m[2] not in SYMBOLS:
                raise ValueError(f"card {text!r} is not a rank and a suit symbol (10♥)")
            return _rank(m[1], prof) + _suit(m[2], prof)
        if n in ("numeric-ace-14", "numeric-ace-1"):
            m = _NUMERIC.match(t)
            if not m:
                raise ValueError(f"card {text!r} is not a numeric rank and a suit (02s)")
            v = int(m[1])
            lo, hi = (2, 14) if n == "numeric-ace-14" else (1, 13)
            if not lo <= v <= hi:
                raise ValueError(f"card {text!r}: rank {v} out of {lo}..{hi}")
            return _rank(str(v), prof, n == "numeric-ace-1") + _suit(m[2], prof)
        if n == "points":
            if t not in {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}:
                raise ValueError(f"card {text!r} is not a point value 0-9")
            return ("T" if t in ("0", "10") else _rank(t, prof, True)) + ph
        # rank-only
        return _rank(t, prof, True) + ph

    return read


def card_list(cell: str, spec: FieldSpec, read: Callable[[str], str]) -> list[str]:
    """The cards of one cell: a JSON list, a split string, or one card."""
    items = split_cell(cell, spec)
    return [read(str(x)) for x in items]


def money_reader(prof: Profile) -> Callable[[str], float | int]:
    """The reader of an amount: currency symbols, thousands separators and parentheses allowed."""
    strip = re.compile("|".join(re.escape(c) for c in [*prof.currency, prof.thousands, " ", "\u00a0"] if c))

    def read(text: str) -> float | int:
        t = text.strip()
        neg = False
        if prof.parentheses and t.startswith("(") and t.endswith(")"):
            neg, t = True, t[1:-1]
        t = strip.sub("", t)
        if prof.decimal != ".":
            t = t.replace(prof.decimal, ".")
        if t.startswith("-") and neg:
            raise ValueError(f"amount {text!r} is negative twice")
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"not an amount: {text!r}") from None
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"not an amount: {text!r}")
        v = -v if neg else v
        return int(v) if v.is_integer() and abs(v) < 2**53 else v

    return read


def time_reader(prof: Profile) -> Callable[[str], str]:
    """The reader of a time: the ISO 8601 text with its UTC offset that the log carries."""
    zone = ZoneInfo(prof.zone) if prof.zone else None
    kind, fmt = prof.time_kind, prof.time_format

    def local(d: dt.datetime) -> str:
        if d.tzinfo is None:
            if zone is None:
                raise ValueError(f"time {d} has no UTC offset and the profile names no times.zone")
            d = d.replace(tzinfo=zone)
        return d.isoformat()

    def read(text: str) -> str:
        t = text.strip()
        if kind == "iso":
            try:
                return local(dt.datetime.fromisoformat(t))
            except ValueError:
                raise ValueError(f"not an ISO 8601 time: {text!r}") from None
        if kind == "strftime":
            try:
                return local(dt.datetime.strptime(t, fmt))  # type: ignore[arg-type]
            except ValueError:
                raise ValueError(f"time {text!r} does not match the format {fmt!r}") from None
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"not a number ({kind}): {text!r}") from None
        if kind == "excel":
            if not 1 <= v < 2958466:
                raise ValueError(f"not an Excel serial date: {text!r}")
            d = dt.datetime(1899, 12, 30) + dt.timedelta(days=v)
            return local(_round_second(d))
        secs = v / 1000 if kind == "epoch-ms" else v
        try:
            return dt.datetime.fromtimestamp(secs, zone or dt.UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"not an epoch time: {text!r}") from None

    return read


def _round_second(d: dt.datetime) -> dt.datetime:
    """An Excel serial's float error (a few microseconds) rounded to the nearest millisecond."""
    us = round(d.microsecond / 1000) * 1000
    return d.replace(microsecond=0) + dt.timedelta(microseconds=us)


def _plain(kind: str, prof: Profile) -> Callable[[str], Any]:
    if kind == "money":
        return money_reader(prof)
    if kind == "time":
        return time_reader(prof)
    if kind == "int":
        def to_int(text: str) -> int:
            try:
                v = float(text.strip())
            except ValueError:
                raise ValueError(f"not a whole number: {text!r}") from None
            if not v.is_integer():
                raise ValueError(f"not a whole number: {text!r}")
            return int(v)
        return to_int
    if kind == "ratio":
        return ratio
    if kind == "bool":
        def to_bool(text: str) -> bool:
            v = BOOL_WORDS.get(text.strip().lower())
            if v is None:
                raise ValueError(f"not true or false: {text!r}")
            return v
        return to_bool
    return str


def ratio(text: str) -> float:
    """A payout as a number: ``3:2``, ``3 to 2``, ``6/5`` or ``1.5`` (to one)."""
    t = text.strip().lower().replace(" to ", ":").replace("/", ":").replace(" ", "")
    a, _, b = t.partition(":")
    try:
        v = float(a) / float(b) if b else float(a)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"not a payout such as 3:2 or 1.5: {text!r}") from None
    if not v >= 0 or v == float("inf"):
        raise ValueError(f"not a payout such as 3:2 or 1.5: {text!r}")
    return round(v, 9)


def converter(kind: str, spec: FieldSpec, prof: Profile) -> Callable[[str], Any]:
    """The reader of one cell of a field: the lookup table first, then the type's reader."""
    return _one(kind, spec, prof)


def _one(kind: str, spec: FieldSpec, prof: Profile) -> Callable[[str], Any]:
    if spec.cuts:  # the part of the cell the field takes (auditkit.ingest.profiles.cut), then read as a cell
        from dataclasses import replace

        from .cut import cutter

        part = replace(spec, split=None, json=False, pattern=None, group=None, only=None, index=None,
                       repeat=False)
        return cutter(spec, _one(kind, part, prof), kind in ("cards", "ints"))
    if kind == "cards":
        read_card = card_reader(prof)
        base: Callable[[str], Any] = lambda cell: card_list(cell, spec, read_card)  # noqa: E731
    elif kind == "ints":
        one = _plain("int", prof)
        base = lambda cell: [one(str(x)) for x in split_cell(cell, spec)]  # noqa: E731
    else:
        base = _plain(kind, prof)
    if spec.values is None:
        return base
    table = spec.values
    folded = {k.strip().lower(): v for k, v in table.items()}

    def lookup(cell: str) -> Any:  # a value of "" in the table: no value for this row
        key = cell.strip()
        if key in table:
            return table[key] if table[key] != "" else None
        if key.lower() in folded:
            return folded[key.lower()] if folded[key.lower()] != "" else None
        raise ValueError(f"value {cell!r} is not in the profile's table ({', '.join(map(repr, list(table)[:8]))})")

    return lookup


def time_values(col: pa.ChunkedArray | pa.Array, prof: Profile) -> tuple[list[Any], dict[int, str]]:
    """:func:`column_values` of a time column: each distinct cell read once; a ``strftime`` column's
    distinct cells parsed and placed in their zone by Arrow at once (:func:`_arrow_times`)."""
    read = time_reader(prof)
    fmt = prof.time_format or ""
    if prof.time_kind != "strftime" or not prof.zone or any(d in fmt for d in ("%f", "%z", "%Z")):
        return column_values(col, read)
    dictionary, indices = encode(col)
    distinct, failed = _arrow_times(dictionary, prof, fmt, read)
    values = np.empty(len(distinct) + 1, dtype=object)  # the last entry for a null cell
    values[:-1] = distinct
    return values[indices].tolist(), code_reasons(indices, failed)


def _arrow_times(col: pa.Array, prof: Profile, fmt: str, read: Callable[[str], Any]) -> tuple[list[Any], dict[int, str]]:
    """Cells of a ``strftime`` column parsed and placed in their zone by Arrow; the cells Arrow leaves
    (another spelling, a time in a daylight-saving gap) read by ``read``, as Python reads them."""
    trimmed = pc.utf8_trim_whitespace(col)
    naive = pc.strptime(trimmed, format=fmt, unit="s", error_is_null=True)
    try:
        inst = pc.assume_timezone(naive, timezone=prof.zone, ambiguous="earliest", nonexistent="raise")
    except pa.ArrowInvalid:  # a local time that does not exist: Python's reading, cell by cell
        return column_values(col, read)
    offset = (naive.cast(pa.int64()).to_numpy(zero_copy_only=False)
              - inst.cast(pa.int64()).to_numpy(zero_copy_only=False)) if len(naive) else np.zeros(0, np.int64)
    ok = naive.is_valid().to_numpy(zero_copy_only=False)
    whole = ok & (np.nan_to_num(offset) % 60 == 0)
    mins = np.where(whole, np.nan_to_num(offset), 0).astype(np.int64) // 60
    found, inverse = np.unique(mins, return_inverse=True)  # a zone has few offsets: each written once
    suffix = pa.array([f"{'-' if m < 0 else '+'}{abs(m) // 60:02d}:{abs(m) % 60:02d}" for m in found.tolist()],
                      pa.string()).take(pa.array(inverse.reshape(-1)))
    text = pc.binary_join_element_wise(pc.strftime(naive, format="%Y-%m-%dT%H:%M:%S"), suffix, "")
    out: list[Any] = pc.if_else(pa.array(whole), text, pa.scalar(None, pa.string())).to_pylist()
    rest = np.flatnonzero(~whole & col.is_valid().to_numpy(zero_copy_only=False))
    reasons: dict[int, str] = {}
    if len(rest):
        vals, why = column_values(col.take(pa.array(rest)), read)
        for k, i in enumerate(rest):
            out[i] = vals[k]
            if k in why:
                reasons[int(i)] = why[k]
    return out, reasons
