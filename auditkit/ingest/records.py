"""One round record of the spec (a parsed JSON object) to one stored row.

:func:`parse_record` checks what makes a line a *bad record* in the spec (a
required field missing or of the wrong type, an unknown game, a string that is
not a card, a negative amount) and raises :class:`BadRecord` with the reason.
Anything that reads well is stored, however wrong the round: that is for the
validators. Rows are dicts keyed by the columns of :mod:`auditkit.schema`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from .. import games
from ..cards import CardError, parse_cards
from ..games import Game
from ..schema import STATUSES

__all__ = ["BadRecord", "parse_record", "normalise_id", "is_unicode", "local_date", "read_value", "read_str", "read_int", "read_money",
           "read_bool", "read_cards", "read_list", "read_dice", "show_value", "MAX_AMOUNT"]


MAX_AMOUNT = 10**13
"""The largest amount read (ten trillion): every cent below it is exact in a float64."""


class BadRecord(ValueError):
    """A line that cannot be read as a round; the message says why."""


_EDGES = re.compile(r"^[\s\u200b-\u200d\u2060\ufeff]+|[\s\u200b-\u200d\u2060\ufeff]+$")


def normalise_id(text: str) -> str:
    """A round id in Unicode NFC, trimmed of whitespace and zero-width characters at both ends."""
    return _EDGES.sub("", unicodedata.normalize("NFC", text))


# ---- field readers -----------------------------------------------------------
_MISSING = object()


def read_value(obj: dict, key: str, where: str, required: bool) -> Any:
    value = obj.get(key, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise BadRecord(f"missing required field {where}{key}")
        return None
    return value


def read_str(obj: dict, key: str, where: str = "", required: bool = True) -> str | None:
    v = read_value(obj, key, where, required)
    if v is not None and not isinstance(v, str):
        raise BadRecord(f"field {where}{key} must be a string, got {type(v).__name__}")
    if v is not None and not is_unicode(v):
        raise BadRecord(f"field {where}{key} is not valid Unicode text (a lone surrogate escape), got {v!r}")
    if required and v is not None and not v.strip():
        raise BadRecord(f"field {where}{key} is empty")
    return v


def is_unicode(text: str) -> bool:
    """False for a string holding a lone surrogate (JSON ``"\\ud800"``), which UTF-8 cannot store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_int(obj: dict, key: str, where: str = "", required: bool = True, lo: int | None = None,
         hi: int | None = None) -> int | None:
    v = read_value(obj, key, where, required)
    if v is None:
        return None
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
        raise BadRecord(f"field {where}{key} must be an integer, got {show_value(v)}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise BadRecord(f"field {where}{key} = {show_value(v)} is out of range [{lo}, {hi}]")
    if not -2**31 <= v < 2**31:
        raise BadRecord(f"field {where}{key} = {show_value(v)} is too large")
    return v


def read_money(obj: dict, key: str, where: str = "", required: bool = True, signed: bool = False) -> float | None:
    v = read_value(obj, key, where, required)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
        raise BadRecord(f"field {where}{key} must be a number, got {show_value(v)}")
    if not signed and v < 0:
        raise BadRecord(f"field {where}{key} = {show_value(v)} is a negative amount")
    if abs(v) > MAX_AMOUNT:
        raise BadRecord(f"field {where}{key} = {show_value(v)} is out of range (at most {MAX_AMOUNT:,.0f})")
    return float(v)


def _finite(v: float) -> bool:
    """False for NaN, infinities and integers beyond a float's range (10**400)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def show_value(value: Any) -> str:
    """``repr`` of a value for a reason (an integer of more than 4,300 digits cannot be printed)."""
    try:
        return repr(value)
    except ValueError:
        return "a number of more than 4,300 digits"


def read_bool(obj: dict, key: str, where: str = "", default: bool = False) -> bool:
    v = read_value(obj, key, where, False)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise BadRecord(f"field {where}{key} must be true or false, got {show_value(v)}")
    return v


def read_cards(obj: dict, key: str, where: str = "", required: bool = True) -> list[int] | None:
    v = read_value(obj, key, where, required)
    if v is None:
        return None
    if not isinstance(v, list):
        raise BadRecord(f"field {where}{key} must be a list of cards, got {type(v).__name__}")
    for card in v:
        if not isinstance(card, str):
            raise BadRecord(f"field {where}{key}: card {show_value(card)} is not a string")
    try:
        return parse_cards(v)
    except CardError as exc:
        raise BadRecord(f"field {where}{key}: {exc}") from None


def read_list(obj: dict, key: str, where: str = "", required: bool = False) -> list:
    v = read_value(obj, key, where, required)
    if v is None:
        return []
    if not isinstance(v, list):
        raise BadRecord(f"field {where}{key} must be a list, got {type(v).__name__}")
    for i, item in enumerate(v):
        if not isinstance(item, dict):
            raise BadRecord(f"field {where}{key}[{i}] must be an object")
    return v


def _timestamp(obj: dict) -> datetime:
    text = read_str(obj, "started_at")
    try:
        ts = datetime.fromisoformat(text)
    except ValueError:
        raise BadRecord(f"field started_at {text!r} is not an ISO 8601 timestamp") from None
    if ts.tzinfo is None:
        raise BadRecord(f"field started_at {text!r} has no UTC offset")
    try:
        ts.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise BadRecord(f"field started_at {text!r} is out of range in UTC") from None
    return ts


def local_date(ts: datetime) -> str:
    """The gaming day of a round: the calendar date of ``started_at`` at its own offset."""
    return ts.date().isoformat()


# ---- shared parts ---------------------------------------------------------------
def _wagers(obj: dict) -> list[dict]:
    out = []
    for i, w in enumerate(read_list(obj, "wagers")):
        where = f"wagers[{i}]."
        out.append({
            "seat": read_int(w, "seat", where, lo=0), "bet": read_str(w, "bet", where),
            "amount": read_money(w, "amount", where), "net": read_money(w, "net", where, signed=True),
        })
    return out


_EVENT_KEYS = ("type", "seat", "action", "amount", "count", "dice", "exposed", "misdeal", "high", "low")
"""The fields of the stored ``events`` struct (see :data:`auditkit.schema.EVENT`)."""


def _events(obj: dict, game: Game) -> list[dict]:
    """Every event of a record; a game that lists its event types refuses others and reads their fields."""
    out = []
    for i, e in enumerate(read_list(obj, "events")):
        where = f"events[{i}]."
        ev = dict.fromkeys(_EVENT_KEYS)
        ev["type"] = kind = read_str(e, "type", where)
        if game.events:
            if kind not in game.events:
                raise BadRecord(f"field {where}type {kind!r} is not a {game.title.lower()} event")
            reader = game.events[kind]
            if reader is not None:
                reader(e, ev, where)
        out.append(ev)
    return out


def read_dice(obj: dict, where: str = "") -> list[int]:
    v = read_value(obj, "dice", where, True)
    if not isinstance(v, list) or len(v) != 3:
        raise BadRecord(f"field {where}dice must be a list of 3 integers, got {show_value(v)}")
    return [read_int({"die": d}, "die", f"{where}dice[{i}].", lo=1, hi=6) for i, d in enumerate(v)]


def parse_record(obj: Any) -> tuple[str, str, dict[str, Any]]:
    """``(game, date, row)`` of one round record; BadRecord says why a record cannot be read.

    ``row`` lacks ``source_file``/``source_line``, which the caller adds.
    """
    if not isinstance(obj, dict):
        raise BadRecord(f"a round record must be a JSON object, got {type(obj).__name__}")
    round_id = normalise_id(read_str(obj, "round_id"))
    if not round_id:
        raise BadRecord("field round_id is empty")
    game = read_str(obj, "game")
    try:
        spec = games.get(game)
    except KeyError:
        raise BadRecord(f"unknown game {game!r}") from None
    ts = _timestamp(obj)
    status = read_str(obj, "status", required=False) or "completed"
    if status not in STATUSES:
        raise BadRecord(f"field status {status!r} is not one of {', '.join(STATUSES)}")
    row: dict[str, Any] = {
        "round_id": round_id, "table_id": read_str(obj, "table_id"), "dealer_id": read_str(obj, "dealer_id", required=False),
        "started_at": ts.astimezone(UTC),
        "utc_offset": int(ts.utcoffset().total_seconds() // 60), "shoe_id": read_str(obj, "shoe_id", required=False),
        "round_seq": read_int(obj, "round_seq", required=False, lo=1), "status": status,
        "wagers": _wagers(obj), "events": _events(obj, spec),
    }
    spec.parse(obj, row)
    return game, local_date(ts), row
