"""The planted stories of the sample data's other games, and the five weeks they run over.

Every game's sample log covers the same five weeks (:data:`DAYS` gaming days
from :data:`START`) at a realistic background fault rate. Each day is
simulated on its own and spread over the tables' opening hours (10:00-23:50
local), dealers rotating through the day (10-14), swing (14-22) and grave
(22-) shifts. On top, one story a game, recorded in ``truth/story.json``:

* blackjack: the table :data:`SHORT_TABLE` pays naturals 6:5 where 3:2 is
  posted, from :data:`SHORT_FROM` (week 3) on;
* three card poker: the dealer :data:`SKIPPER` pays no ante bonus on the
  swing shift (on the other shifts, correctly);
* pai gow poker: the dealer :data:`MISSETTER` keeps two pairs together in the
  high hand where the house way splits them (patrons settled against the
  setting played).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

__all__ = ["START", "DAYS", "days", "spread", "SHORT_TABLE", "SHORT_FROM", "pay_six_to_five", "SKIPPER",
           "SKIP_SHIFT", "skip_ante_bonus", "MISSETTER",
           "keep_two_pairs", "STORIES"]

START, DAYS = "2025-06-01", 35
OPEN, CLOSE = 10 * 3600, 23 * 3600 + 50 * 60
SHIFTS = (("day", 0), ("swing", 14), ("grave", 22))

SHORT_TABLE, SHORT_FROM = "BJ-02", 14
"""The blackjack table that pays naturals 6:5 from the 15th gaming day (week 3) on."""
SKIPPER, SKIP_SHIFT, TCP_SECTION = "D3105", "swing", "68 IAC 10-11-6"
"""The three card poker dealer who skips ante bonuses on the swing shift."""
MISSETTER = "D4003"
"""The pai gow poker dealer who does not split two pairs the house way."""


def days() -> list[str]:
    """The gaming days every sample log covers."""
    first = date.fromisoformat(START)
    return [(first + timedelta(days=k)).isoformat() for k in range(DAYS)]


def shift_of(at: datetime) -> str:
    """The shift a local time belongs to."""
    return [name for name, hour in SHIFTS if at.hour >= hour][-1]


def spread(records: list[dict[str, Any]], day: str, k: int, dealers: tuple[str, ...] | None) -> None:
    """Spread a day's rounds of each table evenly over the opening hours, in the order dealt, and (given
    ``dealers``) rotate the dealers: one a table and shift, the rota moving on a place each day."""
    tables = sorted({r["table_id"] for r in records})
    for t, table_id in enumerate(tables):
        rows = sorted((r for r in records if r["table_id"] == table_id), key=lambda r: r["started_at"])
        offset = datetime.fromisoformat(rows[0]["started_at"]).tzinfo
        opens = datetime.fromisoformat(day).replace(tzinfo=offset) + timedelta(seconds=OPEN + 37 * t)
        step = (CLOSE - OPEN - 37 * len(tables)) / len(rows)
        for i, r in enumerate(rows):
            at = opens + timedelta(seconds=int(i * step))
            r["started_at"] = at.isoformat()
            if dealers:
                s = [name for name, _ in SHIFTS].index(shift_of(at))
                r["dealer_id"] = dealers[(len(SHIFTS) * t + s + k) % len(dealers)]


def _natural(cards: list[str]) -> bool:
    ranks = sorted(c[0] for c in cards)
    return len(ranks) == 2 and ranks[0] == "A" and ranks[1] in "TJQK"


def pay_six_to_five(records: list[dict[str, Any]], k: int) -> list[tuple[str, str]]:
    """From :data:`SHORT_FROM` on, the short table's naturals paid 6:5; returns the rounds so paid
    (``paytable``)."""
    if k < SHORT_FROM:
        return []
    short = []
    for r in records:
        if r["table_id"] != SHORT_TABLE:
            continue
        hit = False
        for h in r["hands"]:
            if not h.get("split") and _natural(h["cards"]) and h["net"] == 1.5 * h["wager"]:
                h["net"] = round(1.2 * h["wager"], 2)
                hit = True
        if hit:
            short.append((r["round_id"], "paytable"))
    return short


def skip_ante_bonus(records: list[dict[str, Any]], k: int) -> list[tuple[str, str]]:
    """The skipper's swing-shift rounds pay no ante bonus; returns the rounds that owed one, each with
    the citation of the least odds its hand was owed: (d)(1) straight flush 5:1, (d)(2) three of a kind
    4:1, (d)(3) straight 1:1."""
    skipped = []
    for r in records:
        if r["dealer_id"] != SKIPPER or shift_of(datetime.fromisoformat(r["started_at"])) != SKIP_SHIFT:
            continue
        owed = [h for h in r["hands"] if h.get("ante_bonus")]
        for h in owed:
            odds = h["ante_bonus"] / h["ante"]
            h["ante_bonus"] = 0
            if r.get("status", "completed") == "completed":
                skipped.append((r["round_id"], f"{TCP_SECTION}(d)({1 if odds >= 5 else 2 if odds >= 4 else 3})"))
    return skipped


def _two_pairs_kept(names: list[str]) -> tuple[list[str], list[str]] | None:
    """Seven cards with exactly two pairs (no joker): both pairs and the least single high, the
    other two singles low."""
    from ..cards import RANKS

    if "JK" in names:
        return None
    by_rank: dict[str, list[str]] = {}
    for c in sorted(names, key=lambda c: RANKS.index(c[0]), reverse=True):
        by_rank.setdefault(c[0], []).append(c)
    pairs = [v for v in by_rank.values() if len(v) == 2]
    singles = [v[0] for v in by_rank.values() if len(v) == 1]
    if len(pairs) != 2 or len(singles) != 3:
        return None
    return pairs[0] + pairs[1] + singles[2:], singles[:2]


def keep_two_pairs(records: list[dict[str, Any]], k: int) -> list[tuple[str, str]]:
    """The misetter's ordinary rounds where the house way splits two pairs: the pairs kept high, every
    hand settled against that setting; returns those rounds (``68 IAC 10-9-17(f)``)."""
    import numpy as np

    from ..cards import parse_cards
    from ..games.pai_gow_poker.simulate import _settle

    kept = []
    for r in records:
        if (r["dealer_id"] != MISSETTER or r.get("status", "completed") != "completed"
                or {e["type"] for e in r.get("events", [])} - {"roll", "stacks_dealt"}
                or any(len(h["cards"]) != 7 for h in r["hands"])):
            continue
        setting = _two_pairs_kept(r["dealer"]["cards"])
        if setting is None or sorted(setting[1]) == sorted(r["dealer"]["low"]):
            continue  # not two pairs, or the house way keeps them together too
        high, low = setting
        n = len(r["hands"])
        nets = _settle(np.array([h["wager"] for h in r["hands"]], float),
                       np.array([parse_cards(h["high"]) for h in r["hands"]], np.int8),
                       np.array([parse_cards(h["low"]) for h in r["hands"]], np.int8),
                       np.tile(np.array(parse_cards(high), np.int8), (n, 1)),
                       np.tile(np.array(parse_cards(low), np.int8), (n, 1)))
        r["dealer"]["high"], r["dealer"]["low"] = high, low
        for h, net in zip(r["hands"], nets, strict=True):
            h["net"] = float(net)
        kept.append((r["round_id"], "68 IAC 10-9-17(f)"))
    return kept


STORIES: dict[str, tuple[Callable[[list[dict[str, Any]], int], list[tuple[str, str]]], dict[str, Any]]] = {
    "blackjack": (pay_six_to_five, {"citation": "paytable",
        "table_id": SHORT_TABLE, "from": SHORT_FROM, "fault": "naturals paid 6:5 where 3:2 is posted",
        "shows_in": "the blackjack table chart (top table) and its weekly rate, flat then rising in week 3"}),
    "three_card_poker": (skip_ante_bonus, {"citation": f"{TCP_SECTION}(d)(1)-(3), by the hand owed",
        "dealer_id": SKIPPER, "shift": SKIP_SHIFT, "fault": "ante bonus not paid on the swing shift",
        "shows_in": "the three card poker dealer chart (top dealer) and its rate by shift"}),
    "pai_gow_poker": (keep_two_pairs, {"citation": "68 IAC 10-9-17(f)", "dealer_id": MISSETTER,
        "hand_type": "two pairs", "fault": "two pairs kept together in the high hand where the house way splits them",
        "shows_in": "the pai gow poker dealer chart (top dealer)"}),
}
"""A game's story: what plants it on a day's records (returning the truth), and what ``story.json`` says of it."""
