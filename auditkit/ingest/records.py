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
from datetime import datetime, timezone
from typing import Any

from ..cards import CardError, parse_cards
from ..schema import GAMES, STATUSES

__all__ = ["BadRecord", "parse_record", "local_date", "normalise_id"]

BLACKJACK_ACTIONS = ("place", "increase", "withdraw", "double", "split", "surrender", "insurance", "even_money")
PAI_GOW_EVENTS = ("face_up_card", "no_roll", "roll", "card_out_of_order", "dealer_card_exposed",
                  "card_exposed_during_stacks", "stacks_dealt", "supervisor_called", "dealer_hand_reset",
                  "reshuffle")


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


def _get(obj: dict, key: str, where: str, required: bool) -> Any:
    value = obj.get(key, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise BadRecord(f"missing required field {where}{key}")
        return None
    return value


def _str(obj: dict, key: str, where: str = "", required: bool = True) -> str | None:
    v = _get(obj, key, where, required)
    if v is not None and not isinstance(v, str):
        raise BadRecord(f"field {where}{key} must be a string, got {type(v).__name__}")
    if v is not None and not _is_unicode(v):
        raise BadRecord(f"field {where}{key} is not valid Unicode text (a lone surrogate escape), got {v!r}")
    if required and v is not None and not v.strip():
        raise BadRecord(f"field {where}{key} is empty")
    return v


def _is_unicode(text: str) -> bool:
    """False for a string holding a lone surrogate (JSON ``"\\ud800"``), which UTF-8 cannot store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _int(obj: dict, key: str, where: str = "", required: bool = True, lo: int | None = None,
         hi: int | None = None) -> int | None:
    v = _get(obj, key, where, required)
    if v is None:
        return None
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
        raise BadRecord(f"field {where}{key} must be an integer, got {_show(v)}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise BadRecord(f"field {where}{key} = {_show(v)} is out of range [{lo}, {hi}]")
    if not -2**31 <= v < 2**31:
        raise BadRecord(f"field {where}{key} = {_show(v)} is too large")
    return v


def _money(obj: dict, key: str, where: str = "", required: bool = True, signed: bool = False) -> float | None:
    v = _get(obj, key, where, required)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
        raise BadRecord(f"field {where}{key} must be a number, got {_show(v)}")
    if not signed and v < 0:
        raise BadRecord(f"field {where}{key} = {_show(v)} is a negative amount")
    if abs(v) > MAX_AMOUNT:
        raise BadRecord(f"field {where}{key} = {_show(v)} is out of range (at most {MAX_AMOUNT:,.0f})")
    return float(v)


def _finite(v: float) -> bool:
    """False for NaN, infinities and integers beyond a float's range (10**400)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _show(value: Any) -> str:
    """``repr`` of a value for a reason (an integer of more than 4,300 digits cannot be printed)."""
    try:
        return repr(value)
    except ValueError:
        return "a number of more than 4,300 digits"


def _bool(obj: dict, key: str, where: str = "", default: bool = False) -> bool:
    v = _get(obj, key, where, False)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise BadRecord(f"field {where}{key} must be true or false, got {_show(v)}")
    return v


def _cards(obj: dict, key: str, where: str = "", required: bool = True) -> list[int] | None:
    v = _get(obj, key, where, required)
    if v is None:
        return None
    if not isinstance(v, list):
        raise BadRecord(f"field {where}{key} must be a list of cards, got {type(v).__name__}")
    for card in v:
        if not isinstance(card, str):
            raise BadRecord(f"field {where}{key}: card {_show(card)} is not a string")
    try:
        return parse_cards(v)
    except CardError as exc:
        raise BadRecord(f"field {where}{key}: {exc}") from None


def _list(obj: dict, key: str, where: str = "", required: bool = False) -> list:
    v = _get(obj, key, where, required)
    if v is None:
        return []
    if not isinstance(v, list):
        raise BadRecord(f"field {where}{key} must be a list, got {type(v).__name__}")
    for i, item in enumerate(v):
        if not isinstance(item, dict):
            raise BadRecord(f"field {where}{key}[{i}] must be an object")
    return v


def _timestamp(obj: dict) -> datetime:
    text = _str(obj, "started_at")
    try:
        ts = datetime.fromisoformat(text)
    except ValueError:
        raise BadRecord(f"field started_at {text!r} is not an ISO 8601 timestamp") from None
    if ts.tzinfo is None:
        raise BadRecord(f"field started_at {text!r} has no UTC offset")
    try:
        ts.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise BadRecord(f"field started_at {text!r} is out of range in UTC") from None
    return ts


def local_date(ts: datetime) -> str:
    """The gaming day of a round: the calendar date of ``started_at`` at its own offset."""
    return ts.date().isoformat()


# ---- shared parts ---------------------------------------------------------------
def _wagers(obj: dict) -> list[dict]:
    out = []
    for i, w in enumerate(_list(obj, "wagers")):
        where = f"wagers[{i}]."
        out.append({
            "seat": _int(w, "seat", where, lo=0), "bet": _str(w, "bet", where),
            "amount": _money(w, "amount", where), "net": _money(w, "net", where, signed=True),
        })
    return out


_EVENT_KEYS = ("type", "seat", "action", "amount", "count", "dice", "exposed", "misdeal", "high", "low")


def _events(obj: dict, game: str) -> list[dict]:
    out = []
    for i, e in enumerate(_list(obj, "events")):
        where = f"events[{i}]."
        ev = dict.fromkeys(_EVENT_KEYS)
        ev["type"] = kind = _str(e, "type", where)
        if game == "blackjack":
            if kind == "wager":
                ev["seat"] = _int(e, "seat", where, lo=0)
                ev["action"] = action = _str(e, "action", where)
                if action not in BLACKJACK_ACTIONS:
                    raise BadRecord(f"field {where}action {action!r} is not one of {', '.join(BLACKJACK_ACTIONS)}")
                ev["amount"] = _money(e, "amount", where)
            elif kind != "first_card":
                raise BadRecord(f"field {where}type {kind!r} is not a blackjack event")
        elif game == "pai_gow_poker":
            if kind not in PAI_GOW_EVENTS:
                raise BadRecord(f"field {where}type {kind!r} is not a pai gow poker event")
            required = kind in ("face_up_card", "stacks_dealt", "roll", "dealer_hand_reset")
            if kind in ("face_up_card", "stacks_dealt"):
                ev["count"] = _int(e, "count", where, lo=0)
            elif kind == "roll":
                ev["dice"] = _dice(e, where)
            elif kind == "card_out_of_order":
                ev["exposed"] = _bool(e, "exposed", where)
            elif kind == "supervisor_called":
                ev["misdeal"] = _bool(e, "misdeal", where)
            elif kind == "dealer_hand_reset":
                ev["high"] = _cards(e, "high", where, required)
                ev["low"] = _cards(e, "low", where, required)
        out.append(ev)
    return out


def _dice(obj: dict, where: str = "") -> list[int]:
    v = _get(obj, "dice", where, True)
    if not isinstance(v, list) or len(v) != 3:
        raise BadRecord(f"field {where}dice must be a list of 3 integers, got {_show(v)}")
    return [_int({"die": d}, "die", f"{where}dice[{i}].", lo=1, hi=6) for i, d in enumerate(v)]


# ---- games ------------------------------------------------------------------------
def _baccarat(obj: dict, row: dict) -> None:
    if row["shoe_id"] is None:
        raise BadRecord("missing required field shoe_id")
    if row["round_seq"] is None:
        raise BadRecord("missing required field round_seq")
    row["player_cards"] = _cards(obj, "player_cards")
    row["banker_cards"] = _cards(obj, "banker_cards")
    row["outcome"] = outcome = _str(obj, "outcome")
    if outcome not in ("player", "banker", "tie"):
        raise BadRecord(f"field outcome {outcome!r} is not player, banker or tie")
    announced = _get(obj, "announced", "", False)
    if announced is not None and not isinstance(announced, dict):
        raise BadRecord("field announced must be an object {player, banker}")
    announced = announced or {}
    row["announced_player"] = _int(announced, "player", "announced.", required=False, lo=0, hi=9)
    row["announced_banker"] = _int(announced, "banker", "announced.", required=False, lo=0, hi=9)
    order = _str(obj, "deal_order", required=False)
    if order is not None and (not order or set(order.upper()) - {"P", "B"}):
        raise BadRecord(f"field deal_order {order!r} must be a string over P and B")
    row["deal_order"] = order.upper() if order is not None else None
    row["cut_card"] = _bool(obj, "cut_card")


def _blackjack(obj: dict, row: dict) -> None:
    row["dealer_cards"] = _cards(obj, "dealer_cards")
    row["table_min"] = _money(obj, "table_min", required=False)
    row["table_max"] = _money(obj, "table_max", required=False)
    hands = []
    for i, h in enumerate(_list(obj, "hands", required=True)):
        where = f"hands[{i}]."
        wager = _money(h, "wager", where)
        doubled = _bool(h, "doubled", where)
        initial = _money(h, "initial_wager", where, required=False)
        if initial is None:
            initial = wager / 2 if doubled else wager
        hands.append({
            "seat": _int(h, "seat", where, lo=0), "hand": _int(h, "hand", where, required=False, lo=0) or 0,
            "cards": _cards(h, "cards", where), "wager": wager, "initial_wager": initial,
            "doubled": doubled, "split": _bool(h, "split", where), "surrendered": _bool(h, "surrendered", where),
            "net": _money(h, "net", where, signed=True),
        })
    row["hands"] = hands


def _three_card_poker(obj: dict, row: dict) -> None:
    row["dealer_cards"] = _cards(obj, "dealer_cards")
    hands = []
    for i, h in enumerate(_list(obj, "hands", required=True)):
        where = f"hands[{i}]."
        decision = _str(h, "decision", where)
        if decision not in ("play", "fold"):
            raise BadRecord(f"field {where}decision {decision!r} is not play or fold")
        hands.append({
            "seat": _int(h, "seat", where, lo=0), "cards": _cards(h, "cards", where), "decision": decision,
            "ante": _money(h, "ante", where), "play": _money(h, "play", where, required=False) or 0.0,
            "pair_plus": _money(h, "pair_plus", where, required=False),
            "net_ante": _money(h, "net_ante", where, signed=True),
            "net_play": _money(h, "net_play", where, required=False, signed=True) or 0.0,
            "ante_bonus": _money(h, "ante_bonus", where, required=False) or 0.0,
            "net_pair_plus": _money(h, "net_pair_plus", where, required=False, signed=True),
        })
    row["hands"] = hands


def _pai_gow_poker(obj: dict, row: dict) -> None:
    row["dice"] = _dice(obj)
    row["first_position"] = _int(obj, "first_position", lo=1, hi=7)
    row["cards_remaining"] = _int(obj, "cards_remaining", required=False, lo=0, hi=53)
    dealer = _get(obj, "dealer", "", True)
    if not isinstance(dealer, dict):
        raise BadRecord("field dealer must be an object {cards, high, low}")
    row["dealer_cards"] = _cards(dealer, "cards", "dealer.")
    row["dealer_high"] = _cards(dealer, "high", "dealer.", required=False)
    row["dealer_low"] = _cards(dealer, "low", "dealer.", required=False)
    hands = []
    for i, h in enumerate(_list(obj, "hands", required=True)):
        where = f"hands[{i}]."
        hands.append({
            "seat": _int(h, "seat", where, lo=0), "position": _int(h, "position", where, required=False, lo=1, hi=7),
            "cards": _cards(h, "cards", where),
            "high": _cards(h, "high", where, required=False), "low": _cards(h, "low", where, required=False),
            "wager": _money(h, "wager", where), "net": _money(h, "net", where, signed=True),
        })
    row["hands"] = hands


_GAME_PARSERS = {
    "baccarat": _baccarat, "mini_baccarat": _baccarat, "blackjack": _blackjack,
    "three_card_poker": _three_card_poker, "pai_gow_poker": _pai_gow_poker,
}


def parse_record(obj: Any) -> tuple[str, str, dict[str, Any]]:
    """``(game, date, row)`` of one round record; BadRecord says why a record cannot be read.

    ``row`` lacks ``source_file``/``source_line``, which the caller adds.
    """
    if not isinstance(obj, dict):
        raise BadRecord(f"a round record must be a JSON object, got {type(obj).__name__}")
    round_id = normalise_id(_str(obj, "round_id"))
    if not round_id:
        raise BadRecord("field round_id is empty")
    game = _str(obj, "game")
    if game not in GAMES:
        raise BadRecord(f"unknown game {game!r}")
    ts = _timestamp(obj)
    status = _str(obj, "status", required=False) or "completed"
    if status not in STATUSES:
        raise BadRecord(f"field status {status!r} is not one of {', '.join(STATUSES)}")
    row: dict[str, Any] = {
        "round_id": round_id, "table_id": _str(obj, "table_id"), "dealer_id": _str(obj, "dealer_id", required=False),
        "started_at": ts.astimezone(timezone.utc),
        "utc_offset": int(ts.utcoffset().total_seconds() // 60), "shoe_id": _str(obj, "shoe_id", required=False),
        "round_seq": _int(obj, "round_seq", required=False, lo=1), "status": status,
        "wagers": _wagers(obj), "events": _events(obj, game),
    }
    _GAME_PARSERS[game](obj, row)
    return game, local_date(ts), row
