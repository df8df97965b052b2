"""What a sample of an export's cells looks like: card notations (jokers included), compound cells,
times, money (decimal commas and thousands separators). Used by ``auditkit profile suggest``
(:mod:`.suggest`, :mod:`.roles`)."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["norm", "cells", "card_named", "notation_of", "card_format", "CardFormat", "time_of", "money_format",
           "MoneyFormat", "compound", "Compound", "numbers", "records_path", "TIME_FORMATS", "CARD", "MONEY", "JOKERS"]

JOKERS = ("JOKER", "JKR", "JK", "JOK", "JKER")
TIME_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p",
                "%d/%m/%Y %H:%M:%S", "%d/%m/%Y %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%d.%m.%Y %H:%M:%S",
                "%d.%m.%Y %H:%M", "%Y/%m/%d %H:%M:%S")
CARD = {
    "auditkit": re.compile(r"^(10|[2-9TJQKA])[cdhs]$"), "rank-suit": re.compile(r"^(10|[2-9TJQKA])[CDHScdhs]$"),
    "symbols": re.compile(r"^(10|[2-9TJQKA])[♣♦♥♠♧♢♡♤]$"), "numeric": re.compile(r"^\d\d[cdhsCDHS]$"),
    "rank-only": re.compile(r"^(10|[2-9TJQKA])$"), "points": re.compile(r"^[0-9]$"),
}
_SUITS = {"auditkit": "[cdhs]", "rank-suit": "[CDHScdhs]", "symbols": "[♣♦♥♠♧♢♡♤]", "numeric-ace-14": "[CDHScdhs]",
          "numeric-ace-1": "[CDHScdhs]", "rank-only": None}
_RANKS = {"auditkit": "10|[2-9TJQKA]", "rank-suit": "10|[2-9TJQKAtjqka]", "symbols": "10|[2-9TJQKA]",
          "numeric-ace-14": r"\d{1,2}", "numeric-ace-1": r"\d{1,2}", "rank-only": "10|[2-9TJQKA]"}
MONEY = re.compile(r"^\(?[-+]?\s?[$€£¥]?\s?[-+]?[\d.,'\u00a0 ]*\d\)?$")
_SYMBOLS = "$€£¥"


def norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def cells(values: list[str]) -> tuple[str | None, list[str]]:
    """How cells hold several items (``json``, a split text, or one item a cell) and the items seen."""
    if values and all(v.strip().startswith("[") for v in values):
        try:
            return "json", [str(c) for v in values for c in json.loads(v)]
        except (json.JSONDecodeError, TypeError):
            return None, []
    if any(" " in v.strip() for v in values):
        return " ", [c for v in values for c in v.split()]
    for sep in ("|", ";", "/", ","):
        if any(sep in v for v in values):
            return sep, [c for v in values for c in v.split(sep) if c.strip()]
    return None, values


def card_named(name: str) -> bool:
    n = norm(name)
    return "card" in n or bool(re.match(r"^(p|b|d|player|banker|dealer)_?\d$", n)) or n in ("hand_cards", "cards")


def notation_of(cards: list[str], name: str) -> str | None:
    """The preset notation every card of ``cards`` is written in (no jokers), if any. Suited notations
    are recognised whatever the column's name; ranks or points alone only in a column named for cards."""
    cards = [c.strip() for c in cards]
    if not cards:
        return None
    for n in ("auditkit", "symbols", "rank-suit"):
        if all(CARD[n].match(c) for c in cards):
            return n
    if all(CARD["numeric"].match(c) for c in cards):
        nums = {int(c[:2]) for c in cards}
        if max(nums) > 14 or 0 in nums:
            return None
        return "numeric-ace-14" if 14 in nums or 1 not in nums else "numeric-ace-1"
    if not card_named(name):
        return None
    if all(CARD["rank-only"].match(c) for c in cards) and any(c[0] in "TJQKA" or c == "10" for c in cards):
        return "rank-only"
    if all(CARD["points"].match(c) for c in cards):
        return "points"
    return None


@dataclass
class CardFormat:
    """A card notation as the ``[cards]`` section writes it: a preset, or a pattern for jokers."""

    notation: str
    pattern: str | None = None
    ranks: dict[str, str] = field(default_factory=dict)

    def table(self) -> dict:
        out: dict = {"notation": "pattern" if self.pattern else self.notation}
        if self.pattern:
            out["pattern"] = self.pattern
        if self.ranks:
            out["ranks"] = dict(self.ranks)
        return out


def card_format(cards: list[str], name: str) -> CardFormat | None:
    """The notation of ``cards``, jokers (``JOKER``, ``JKR``...) included: a preset reads ``JK`` itself;
    another word for the joker makes a pattern of the preset's ranks and suits with that word as a rank."""
    cards = [c.strip() for c in cards if c.strip()]
    jokers = sorted({c for c in cards if c.upper() in JOKERS})
    plain = [c for c in cards if c not in jokers]
    if not plain:
        return None
    found = notation_of(plain, name)
    if found is None or (found in ("rank-only", "points") and jokers and not card_named(name)):
        return None
    if not jokers or (jokers == ["JK"] and found in ("auditkit", "rank-suit")):
        return CardFormat(found)
    if found == "points":
        return None
    words = "|".join(re.escape(j) for j in jokers)
    suit = _SUITS[found]
    pattern = f"(?P<rank>{_RANKS[found]}|{words})" + (f"(?P<suit>{suit})?" if suit else "")
    return CardFormat(found, pattern, {j: "JK" for j in jokers})


@dataclass
class Compound:
    """A cell holding several fields (``46|d4s``) or tagged tokens (``P:3:0 B:11:1``): a cut with a
    pattern of named groups (docs/profiles.md), as drafted."""

    kind: str            # "tagged" or "fields"
    pattern: str         # the token's (tagged) or the cell's (fields) pattern with named groups
    tags: list[str]      # the tags seen (tagged), or the parts' kinds (fields)
    example: str
    card: str | None = None      # tagged: the card's pattern ([cards] pattern)
    numbered_suits: bool = False  # tagged: suits written 0-3
    ace_14: bool = False          # tagged: an ace written 14


_TAGGED = re.compile(r"^(?P<who>[A-Za-z]{1,8})[:/](?P<rank>\d{1,2}|[2-9TJQKA])[:/](?P<suit>[0-3]|[cdhsCDHS])$")


def compound(values: list[str]) -> Compound | None:
    """Tagged card tokens or a cell of several fields, if every sampled cell is one."""
    values = [v.strip() for v in values if v.strip()]
    if not values:
        return None
    tokens = [t for v in values for t in v.split()]
    if tokens and all(_TAGGED.match(t) for t in tokens):
        found = [_TAGGED.match(t) for t in tokens]
        tags = list(dict.fromkeys(m["who"] for m in found))  # type: ignore[index]
        sep = next(ch for ch in tokens[0] if ch in ":/")
        digits = all(m["suit"].isdigit() for m in found)  # type: ignore[index]
        rank = r"\d{1,2}" if all(m["rank"].isdigit() for m in found) else r"\d{1,2}|[2-9TJQKA]"  # type: ignore[index]
        suit = "[0-3]" if digits else "[cdhsCDHS]"
        card = f"(?P<rank>{rank}){re.escape(sep)}(?P<suit>{suit})"
        ranks = {m["rank"] for m in found}  # type: ignore[index]
        return Compound("tagged", f"(?P<who>[A-Za-z]+){re.escape(sep)}(?P<card>[^{re.escape(sep)}]+{re.escape(sep)}"
                        f"[^{re.escape(sep)}]+)", tags, values[0], card, digits, "14" in ranks)
    for sep in ("|", "#", "@"):
        if all(v.count(sep) == values[0].count(sep) >= 1 for v in values):
            parts = [v.split(sep) for v in values]
            pieces, kinds = [], []
            for k in range(len(parts[0])):
                col = [p[k] for p in parts]
                if all(len(x) == 2 and x.isdigit() for x in col):  # two digits: two one-digit fields (46)
                    pieces += [f"(?P<d{k}a>\\d)", f"(?P<d{k}b>\\d)"]
                    kinds += ["digit", "digit"]
                elif all(x.isdigit() for x in col):
                    pieces.append(f"(?P<n{k}>\\d+)")
                    kinds.append("number")
                elif all(re.fullmatch(r"[PBpb]+", x) for x in col):
                    pieces.append(f"(?P<order{k}>[PBpb]*)")
                    kinds.append("order")
                else:
                    pieces.append(f"(?P<t{k}>[^{re.escape(sep)}]*)")
                    kinds.append("text")
                pieces.append(re.escape(sep))
            return Compound("fields", "".join(pieces[:-1]), kinds, values[0])
    return None


def time_of(values: list[str]) -> tuple[str, str | None] | None:
    """(kind, strftime format) of a column of times, if every value reads as one."""
    values = [v.strip() for v in values if v.strip()]
    if not values:
        return None
    try:
        for v in values:
            dt.datetime.fromisoformat(v)
        return "iso", None
    except ValueError:
        pass
    for fmt in TIME_FORMATS:
        try:
            for v in values:
                dt.datetime.strptime(v, fmt)
            return "strftime", fmt
        except ValueError:
            continue
    try:
        nums = [float(v) for v in values]
    except ValueError:
        return None
    if all(20000 < x < 80000 for x in nums) and any(not x.is_integer() for x in nums):
        return "excel", None
    if all(1e9 < x < 4e9 for x in nums):
        return "epoch", None
    if all(1e12 < x < 4e12 for x in nums):
        return "epoch-ms", None
    return None


def has_offset(values: list[str]) -> bool:
    """ISO times that all carry their UTC offset (no zone to decide)."""
    try:
        return all(dt.datetime.fromisoformat(v.strip()).tzinfo is not None for v in values if v.strip())
    except ValueError:
        return False


@dataclass
class MoneyFormat:
    """How amounts are written, decided from the values; ``undecided`` says why when they do not say."""

    decimal: str = "."
    thousands: str = ","
    currency: list[str] = field(default_factory=list)
    parentheses: bool = False
    undecided: str | None = None


def money_format(values: list[str]) -> MoneyFormat:
    """Decimal comma or point, and the thousands separator, from the amounts written: a separator
    followed by one or two digits at the end is the decimal one (``10,00``, ``9.5``); a value with both
    says which is which (``1.234,50``); groups of three after one separator alone (``1,500``) say
    nothing, and then ``undecided`` says so (the draft writes a TODO the profile check refuses)."""
    out = MoneyFormat()
    out.currency = sorted({ch for v in values for ch in v if ch in _SYMBOLS})
    out.parentheses = any(v.strip().startswith("(") and v.strip().endswith(")") for v in values)
    decimal_comma = decimal_point = False
    group_comma = group_point = False  # ",ddd" / ".ddd" seen (a thousands group, or three decimals)
    for v in values:
        t = re.sub(r"[^\d.,]", "", v)
        if "," in t and "." in t:
            if t.rfind(",") > t.rfind("."):
                decimal_comma = True
            else:
                decimal_point = True
            continue
        for sep in (",", "."):
            if sep not in t:
                continue
            tail = t.rsplit(sep, 1)[1]
            if len(tail) in (1, 2) or t.count(sep) == 1 and len(tail) > 3:
                if sep == ",":
                    decimal_comma = True
                else:
                    decimal_point = True
            elif t.count(sep) > 1:  # 1,000,000: a thousands separator (never two decimal ones)
                if sep == ",":
                    decimal_point = decimal_point or not decimal_comma
                    group_comma = True
                else:
                    decimal_comma = decimal_comma or not decimal_point
                    group_point = True
            elif sep == ",":
                group_comma = True
            else:
                group_point = True
    if decimal_comma and decimal_point:
        out.undecided = "some amounts have a decimal comma (10,50), others a decimal point (10.50)"
    elif decimal_comma:
        out.decimal, out.thousands = ",", "." if group_point or not any(" " in v for v in values) else " "
    elif decimal_point:
        out.decimal, out.thousands = ".", ","
    elif group_comma or group_point:
        sep = "," if group_comma else "."
        example = next(v for v in values if sep in v)
        out.undecided = (f"amounts such as {example!r} have three digits after {sep!r} and none has a decimal "
                         f"part: {sep!r} separates thousands, or decimals?")
    return out


def numbers(values: list[str]) -> list[float] | None:
    """The values as numbers, whatever their separators (``1.234,50``, ``$1,000.00``, ``(25)``), or None
    when one is not a number. The decimal separator is the last one unless three digits follow it alone."""
    out = []
    for v in values:
        t = re.sub(r"[\s$€£¥\u00a0']", "", v)
        neg = t.startswith("(") and t.endswith(")")
        t = t.strip("()")
        if not re.fullmatch(r"[-+]?\d[\d.,]*", t) or t.endswith((",", ".")):
            return None
        last = max(t.rfind(","), t.rfind("."))
        if last >= 0 and (len(t) - last - 1 == 3 and t.count(t[last]) > 1 or
                          len(t) - last - 1 == 3 and t[last] not in t[:last] and not ("," in t and "." in t)):
            t = t.replace(",", "").replace(".", "")  # 1,000 or 1.000.000: thousands only (money_format decides)
        elif last >= 0:
            t = re.sub(r"[.,]", "", t[:last]) + "." + t[last + 1:]
        out.append(-float(t) if neg else float(t))
    return out


def _objects(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, dict) for x in value[:50])


def _to_objects(node: object, path: list[str]) -> list[str] | None:
    """The keys down to the first array of objects (an object's own arrays before its objects')."""
    if _objects(node):
        return path
    if not isinstance(node, dict):
        return None
    for key, value in node.items():
        if _objects(value):
            return [*path, key]
    for key, value in node.items():
        if isinstance(value, dict) and (found := _to_objects(value, [*path, key])) is not None:
            return found
    return None


def records_path(doc: object) -> str | None:
    """Where the rows of a JSON document are (``source.records``): the deepest array of objects reached
    through the first array of objects, each array on the way a ``[]`` step (``rounds[].players[].hands``);
    None when the document is itself the array of rows."""
    path = _to_objects(doc, [])
    if path is None:
        return None
    node: Any = doc
    for key in path:
        node = node[key]
    while True:  # an array of objects whose elements hold another: step into it
        inner = next((k for el in node[:50] for k, v in el.items() if _objects(v)), None)  # type: ignore[index]
        if inner is None:
            break
        path = [*path[:-1], path[-1] + "[]"] if path else ["[]"]
        path.append(inner)
        node = [x for el in node if isinstance(el.get(inner), list) for x in el[inner]]  # type: ignore[union-attr]
    return ".".join(path) or None
