"""What a sample of an export's cells looks like: card notations, times, money, column names read
as log fields. Used by ``auditkit profile suggest`` (:mod:`.suggest`, :mod:`.roles`)."""

from __future__ import annotations

import datetime as dt
import json
import re

__all__ = ["norm", "exact_target", "guess_target", "cells", "card_named", "notation_of", "card_notation",
           "time_of", "toml_text", "TIME_FORMATS", "NAMES", "CARD", "MONEY", "JOKERS"]

JOKERS = ("JOKER", "JKR", "JK")
TIME_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p",
                "%d/%m/%Y %H:%M:%S", "%d/%m/%Y %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%d.%m.%Y %H:%M:%S")
NAMES = [  # (pattern on the normalised column name, target)
    (r"^(round_?id|hand_?id|game_?id|id|round|round_?key)$", "round_id"), (r"^game(_?type|_?name)?$", "game"),
    (r"table|^tbl(_?(id|no|name))?$", "table_id"), (r"dealer_?(id|name)?$", "dealer_id"), (r"^shoe(_?id|_?no|_?number)?$", "shoe_id"),
    (r"^(hand|round|game)_?(no|num|number|seq|index)$|^seq$|^hand$", "round_seq"),
    (r"time|date|^ts$|^when$", "started_at"), (r"^(player|p)_?cards?$", "player_cards"),
    (r"^(banker|b)_?cards?$", "banker_cards"), (r"^dealer_?(cards?|hand)$", "dealer_cards"),
    (r"result|outcome|winner", "outcome"), (r"^seat|^player_?(no|id|seat)$|^box$", "seat"),
    (r"^(bet|bet_?type|bet_?on|side)$", "bet"), (r"amount|stake|^bet_?(size|amount)$|^wager$", "amount"),
    (r"^(net|profit|win_?loss|winloss|net_?win)$", "net"), (r"^cards$", "cards"),
    (r"^(table_?)?min(imum)?(_?(bet|wager|limit))?$", "table_min"),
    (r"^(table_?)?max(imum)?(_?(bet|wager|limit))?$", "table_max"),
]
CARD = {
    "auditkit": re.compile(r"^(10|[2-9TJQKA])[cdhs]$"), "rank-suit": re.compile(r"^(10|[2-9TJQKA])[CDHScdhs]$"),
    "symbols": re.compile(r"^(10|[2-9TJQKA])[♣♦♥♠♧♢♡♤]$"), "numeric": re.compile(r"^\d\d[cdhsCDHS]$"),
    "rank-only": re.compile(r"^(10|[2-9TJQKA])$"), "points": re.compile(r"^[0-9]$"),
}
MONEY = re.compile(r"^\(?-?[$€£]?\s?-?[\d,]+(\.\d+)?\)?$")


def norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


ROUND_FIELDS = {"round_id", "game", "table_id", "started_at", "dealer_id", "shoe_id", "round_seq", "status",
                "player_cards", "banker_cards", "outcome", "deal_order", "cut_card", "dealer_cards", "table_min",
                "table_max", "dice", "first_position", "cards_remaining"}
ITEM_FIELDS = {"wagers": {"seat", "bet", "amount", "net"},
               "hands": {"seat", "hand", "cards", "wager", "initial_wager", "doubled", "split", "surrendered", "net",
                         "decision", "ante", "play", "pair_plus", "net_ante", "net_play", "net_pair_plus",
                         "ante_bonus", "position", "high", "low"}}
NESTED = {"announced_player": "announced.player", "announced_banker": "announced.banker",
          "dealer_high": "dealer.high", "dealer_low": "dealer.low"}


def exact_target(name: str) -> str | None:
    """The log field a column is named after (``wagers_net``, ``announced_player``...), if any."""
    n = norm(name)
    if n in ROUND_FIELDS:
        return n
    if n in NESTED:
        return NESTED[n]
    for lst, subs in ITEM_FIELDS.items():
        for prefix in (lst + "_", lst[:-1] + "_"):
            if n.startswith(prefix) and n[len(prefix):] in subs:
                return f"{lst}.{n[len(prefix):]}"
    return None


def guess_target(name: str) -> str | None:
    n = norm(name)
    for pattern, target in NAMES:
        if re.search(pattern, n):
            return target
    return None


def cells(values: list[str]) -> tuple[str | None, list[str]]:
    """How card cells hold several cards (json, a split character, or one card) and the cards seen."""
    if values and all(v.strip().startswith("[") for v in values):
        try:
            return "json", [str(c) for v in values for c in json.loads(v)]
        except (json.JSONDecodeError, TypeError):
            return None, []
    if any(" " in v.strip() for v in values):
        return " ", [c for v in values for c in v.split()]
    for sep in ("|", ";", "/", ","):
        if any(sep in v for v in values):
            return sep, [c for v in values for c in v.split(sep)]
    return None, values


def card_named(name: str) -> bool:
    n = norm(name)
    return "card" in n or bool(re.match(r"^(p|b|d|player|banker|dealer)_?\d$", n)) or n in ("hand_cards", "cards")


def notation_of(cards: list[str], name: str) -> str | None:
    if not cards:
        return None
    suited = ("auditkit", "symbols", "rank-suit") if not card_named(name) else ("auditkit", "symbols", "rank-suit",
                                                                                 "rank-only")
    if not card_named(name) and not all(CARD["numeric"].match(c.strip()) for c in cards):
        return next((n for n in suited if all(CARD[n].match(c.strip()) for c in cards)), None)
    for n in suited:
        if all(CARD[n].match(c.strip()) for c in cards):
            return n
    if all(CARD["numeric"].match(c.strip()) for c in cards):
        nums = {int(c.strip()[:2]) for c in cards}
        return "numeric-ace-14" if 14 in nums or 1 not in nums else "numeric-ace-1"
    if all(CARD["points"].match(c.strip()) for c in cards) and card_named(name):
        return "points"
    return None


def time_of(values: list[str]) -> tuple[str, str | None] | None:
    try:
        for v in values:
            dt.datetime.fromisoformat(v.strip())
        return "iso", None
    except ValueError:
        pass
    for fmt in TIME_FORMATS:
        try:
            for v in values:
                dt.datetime.strptime(v.strip(), fmt)
            return "strftime", fmt
        except ValueError:
            continue
    try:
        nums = [float(v) for v in values]
    except ValueError:
        return None
    if all(20000 < x < 80000 for x in nums):
        return "excel", None
    if all(1e9 < x < 4e9 for x in nums):
        return "epoch", None
    if all(1e12 < x < 4e12 for x in nums):
        return "epoch-ms", None
    return None


def card_notation(cards: list[str], name: str) -> str | None:
    """:func:`notation_of` of cards that may hold jokers (``JOKER``): then a pattern (``pattern`` here)."""
    plain = [c for c in cards if c.strip().upper() not in JOKERS]
    if len(plain) == len(cards) or not plain:
        return notation_of(cards, name)
    found = notation_of(plain, name)
    return "pattern" if found in ("auditkit", "rank-suit") else found


def toml_text(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
