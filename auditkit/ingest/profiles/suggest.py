"""A draft profile from an export's header and a sample of its values (``auditkit profile suggest``).

It guesses each column's field from its name and its values (card notation, time format, money,
vocabularies), and writes ``# TODO:`` where it could not decide; docs/profiles.md says what to edit.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence

import pyarrow as pa

from .mapping import ROW

__all__ = ["suggest_profile", "SAMPLE"]

SAMPLE = 500  # rows looked at
TIME_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p",
                "%d/%m/%Y %H:%M:%S", "%d/%m/%Y %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%d.%m.%Y %H:%M:%S")
NAMES = [  # (pattern on the normalised column name, target)
    (r"^(round_?id|hand_?id|game_?id|id|round|round_?key)$", "round_id"), (r"^game(_?type|_?name)?$", "game"),
    (r"table", "table_id"), (r"dealer_?(id|name)?$", "dealer_id"), (r"^shoe(_?id|_?no|_?number)?$", "shoe_id"),
    (r"^(hand|round|game)_?(no|num|number|seq|index)$|^seq$|^hand$", "round_seq"),
    (r"time|date|^ts$|^when$", "started_at"), (r"^(player|p)_?cards?$", "player_cards"),
    (r"^(banker|b)_?cards?$", "banker_cards"), (r"^dealer_?(cards?|hand)$", "dealer_cards"),
    (r"result|outcome|winner", "outcome"), (r"^seat|^player_?(no|id|seat)$|^box$", "seat"),
    (r"^(bet|bet_?type|bet_?on|side)$", "bet"), (r"amount|stake|^bet_?(size|amount)$|^wager$", "amount"),
    (r"^(net|profit|win_?loss|winloss|net_?win)$", "net"), (r"^cards$", "cards"),
]
CARD = {
    "auditkit": re.compile(r"^(10|[2-9TJQKA])[cdhs]$"), "rank-suit": re.compile(r"^(10|[2-9TJQKA])[CDHScdhs]$"),
    "symbols": re.compile(r"^(10|[2-9TJQKA])[♣♦♥♠♧♢♡♤]$"), "numeric": re.compile(r"^\d\d[cdhsCDHS]$"),
    "rank-only": re.compile(r"^(10|[2-9TJQKA])$"), "points": re.compile(r"^[0-9]$"),
}
MONEY = re.compile(r"^\(?-?[$€£]?\s?-?[\d,]+(\.\d+)?\)?$")


def _norm(name: str) -> str:
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
    n = _norm(name)
    if n in ROUND_FIELDS:
        return n
    if n in NESTED:
        return NESTED[n]
    for lst, subs in ITEM_FIELDS.items():
        for prefix in (lst + "_", lst[:-1] + "_"):
            if n.startswith(prefix) and n[len(prefix):] in subs:
                return f"{lst}.{n[len(prefix):]}"
    return None


def _guess_target(name: str) -> str | None:
    n = _norm(name)
    for pattern, target in NAMES:
        if re.search(pattern, n):
            return target
    return None


def _cells(values: list[str]) -> tuple[str | None, list[str]]:
    """How card cells hold several cards (json, a split character, or one card) and the cards seen."""
    if values and all(v.strip().startswith("[") for v in values):
        try:
            return "json", [str(c) for v in values for c in json.loads(v)]
        except (json.JSONDecodeError, TypeError):
            return None, []
    if any(" " in v.strip() for v in values):
        return " ", [c for v in values for c in v.split()]
    for sep in ("|", ";", "/"):
        if any(sep in v for v in values):
            return sep, [c for v in values for c in v.split(sep)]
    return None, values


def _notation(cards: list[str], name: str) -> str | None:
    if not cards:
        return None
    for n in ("auditkit", "symbols", "rank-suit", "rank-only"):
        if all(CARD[n].match(c.strip()) for c in cards):
            return n
    if all(CARD["numeric"].match(c.strip()) for c in cards):
        nums = {int(c.strip()[:2]) for c in cards}
        return "numeric-ace-14" if 14 in nums or 1 not in nums else "numeric-ace-1"
    if all(CARD["points"].match(c.strip()) for c in cards) and "card" in _norm(name) or re.match(r"^[pb]\d$", _norm(name)):
        return "points"
    return None


def _time(values: list[str]) -> tuple[str, str | None] | None:
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


def _toml(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def suggest_profile(table: pa.Table, file_name: str, source_lines: Sequence[str] = ()) -> str:
    """The draft profile's TOML text for a source's rows (string columns and ``__row``)."""
    cols = [c for c in table.column_names if c != ROW]
    head = table.slice(0, SAMPLE)
    out = [f"# Draft profile for {file_name}, written by `auditkit profile suggest` from its header and",
           f"# the first {min(SAMPLE, table.num_rows)} rows. Check every line; docs/profiles.md documents each key.",
           "profile = 1", f"name = {_toml(_norm(file_name.rsplit('.', 1)[0]) or 'export')}", "", *source_lines, ""]
    fields: list[str] = []
    todo: list[str] = []
    values_tables: list[str] = []
    notation: str | None = None
    times: tuple[str, str | None] | None = None
    used: set[str] = set()
    item_list = None
    for c in cols:
        vals = [v for v in head[c].to_pylist() if v is not None and v.strip()]
        target = _guess_target(c)
        distinct = list(dict.fromkeys(vals))
        if not vals:
            todo.append(f"# TODO: column {_toml(c)} is empty in the sample: map it or leave it out")
            continue
        exact = exact_target(c)
        vocabulary = exact in ("outcome", "wagers.bet") and not set(distinct) <= {"player", "banker", "tie"}
        if exact and exact not in used and not exact.endswith(("cards", ".high", ".low")) and exact != "started_at" \
                and not vocabulary:
            fields.append(f"{exact} = {_toml(c)}")
            used.add(exact)
            if exact.startswith("hands."):
                item_list = "hands"
            continue
        how, cards = _cells(vals)
        card_notation = _notation(cards, c) if target in (None, "player_cards", "banker_cards", "dealer_cards",
                                                        "cards") else None
        if card_notation and target in (None, "cards"):
            n = _norm(c)
            target = next((f"{side}_cards" for side in ("player", "banker", "dealer") if side in n), "cards")
        if target in ("player_cards", "banker_cards", "dealer_cards", "cards") and card_notation:
            notation = notation or card_notation
            spec = {"json": "json = true", None: ""}.get(how, f"split = {_toml(how or ' ')}")
            name = "hands.cards" if target == "cards" else target
            if target == "cards":
                item_list = "hands"
            if name in used:
                todo.append(f"# TODO: column {_toml(c)} holds cards too ({', '.join(distinct[:3])}): which?")
                continue
            fields.append(f"{name} = {{column = {_toml(c)}{', ' + spec if spec else ''}}}")
            used.add(name)
            continue
        if target == "started_at" and (t := _time(vals)):
            times = times or t
            fields.append(f"started_at = {_toml(c)}")
            used.add(target)
            continue
        if target in ("seat", "bet", "amount", "net"):
            lst = "wagers" if target in ("bet", "amount") or item_list != "hands" else "hands"
            name = f"{lst}.{'wager' if lst == 'hands' and target == 'amount' else target}"
            if name in used:
                todo.append(f"# TODO: column {_toml(c)} looks like {name} too: which?")
                continue
            if target == "bet" and len(distinct) <= 12:
                table_name = "bet"
                values_tables.append(_vocabulary(table_name, distinct, ("player", "banker", "tie")))
                fields.append(f"{name} = {{column = {_toml(c)}, values = \"{table_name}\"}}")
            else:
                fields.append(f"{name} = {_toml(c)}")
            used.add(name)
            continue
        if target == "outcome" and len(distinct) <= 12:
            values_tables.append(_vocabulary("outcome", distinct, ("player", "banker", "tie")))
            fields.append(f'outcome = {{column = {_toml(c)}, values = "outcome"}}')
            used.add(target)
            continue
        if target and target not in used and target not in ("cards",):
            fields.append(f"{target} = {_toml(c)}")
            used.add(target)
            continue
        sample = ", ".join(distinct[:6])
        kind = "amounts" if all(MONEY.match(v.strip()) for v in vals) else f"{len(distinct)} distinct values"
        todo.append(f"# TODO: column {_toml(c)} ({kind}; e.g. {sample[:80]}): map it to a field or leave it out")
    if "game" not in used and "player_cards" in used:
        fields.insert(0, 'game = {const = "baccarat"}  # TODO: or mini_baccarat')
    elif "game" not in used:
        fields.insert(0, '# TODO: the game: a constant (baccarat, blackjack, three_card_poker, pai_gow_poker...) '
                      'or a column with a [values] table\ngame = {const = "baccarat"}')
    if "table_id" not in used:
        fields.insert(1, '# TODO: the table id: a column, or a constant naming the table\ntable_id = {const = "TABLE-1"}')
    grain = ["[grain]"]
    if any(f.startswith(("wagers.", "hands.")) for f in used) and "round_id" in used:
        key = next(c for c in cols if _guess_target(c) == "round_id")
        grain += [f'rows = "{"hand" if item_list == "hands" else "wager"}"', f"round = [{_toml(key)}]",
                  "# TODO: check the grain: one row per round, hand, wager or card, and the columns that group rows"]
    else:
        grain += ['rows = "round"', "# TODO: if several rows make one round, say which columns group them: "
                  "round = [\"...\"]"]
    out += grain + ["", "[fields]", *fields, *todo, ""]
    out += ["[cards]", f'notation = "{notation}"' if notation else
            '# TODO: the card notation was not recognised: a preset or a pattern\nnotation = "auditkit"', ""]
    out.append("[times]")
    if times is None:
        out += ["# TODO: no time column recognised: map started_at and give its format, or say there are none",
                'kind = "none"', 'start_date = 2025-01-01', 'zone = "America/Indiana/Indianapolis"']
    else:
        out.append(f'kind = "{times[0]}"')
        if times[1]:
            out.append(f"format = {_toml(times[1])}")
        out.append('zone = "America/Indiana/Indianapolis"  # TODO: the zone the times were written in')
    out += ["", "[money]", 'currency = ["$"]', 'thousands = ","', "parentheses = true", ""]
    out += values_tables
    return "\n".join(out) + "\n"


def _vocabulary(name: str, distinct: list[str], targets: tuple[str, ...]) -> str:
    lines = [f"[values.{name}]"]
    undecided = False
    for v in distinct:
        low = v.strip().lower()
        guess = next((t for t in targets if t in low or low == t[0]), None)
        if guess is None:
            undecided = True
            lines.append(f"# TODO: {_toml(v)} = \"?\"")
        else:
            lines.append(f"{_toml(v)} = {_toml(guess)}")
    if undecided:
        lines.insert(1, "# TODO: values it could not map")
    return "\n".join(lines) + "\n"
