"""Card codes, parsing and per-game lookup tables.

A card is an ``int8`` code: ``rank * 4 + suit`` with ranks ``2..A`` as 0..12 and
suits ``c d h s`` as 0..3 (so 0 is 2c and 51 is As). The joker is 52 and ``-1``
(``NO_CARD``) pads fixed-width card matrices. Every lookup table has 54 entries,
the last one for ``NO_CARD``, so ``TABLE[codes]`` works on padded matrices as is
(numpy reads index -1 as the last entry).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

RANKS = "23456789TJQKA"
SUITS = "cdhs"
JOKER = 52
NO_CARD = -1

__all__ = [
    "RANKS", "SUITS", "JOKER", "NO_CARD", "CardError", "parse_card", "parse_cards",
    "card_str", "cards_str", "RANK", "SUIT", "rank_table",
    "IS_ACE", "VALID", "NAMES",
]


class CardError(ValueError):
    """A string that is not a card of the spec."""


def _build_names() -> dict[str, int]:
    names = {(r + s).upper(): i * 4 + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}
    names.update({("10" + s).upper(): RANKS.index("T") * 4 + j for j, s in enumerate(SUITS)})
    names["JK"] = JOKER
    return names


NAMES: dict[str, int] = _build_names()
"""Upper-case card name (``AH``, ``10D``, ``JK``...) to code."""


def parse_card(text: object) -> int:
    """Return the code of one card name, case-insensitive; raise CardError naming it otherwise."""
    if not isinstance(text, str):
        raise CardError(f"card {text!r} is not a string")
    code = NAMES.get(text.upper())
    if code is None:
        raise CardError(f"unknown card {text!r}")
    return code


def parse_cards(items: object) -> list[int]:
    """Codes of a list of card names; raise CardError naming the first bad one."""
    if not isinstance(items, list):
        raise CardError(f"cards {items!r} are not a list")
    return [parse_card(c) for c in items]


def card_str(code: int) -> str:
    """Canonical name of a code (``Ah``, ``Tc``, ``JK``); ``--`` for NO_CARD."""
    code = int(code)
    if code == JOKER:
        return "JK"
    if code == NO_CARD:
        return "--"
    return RANKS[code // 4] + SUITS[code % 4]


def cards_str(codes: Iterable[int]) -> str:
    """Space-separated names of the real cards among codes (padding skipped)."""
    return " ".join(card_str(c) for c in codes if int(c) != NO_CARD)


def rank_table(values: Iterable[int], joker: int, pad: int) -> np.ndarray:
    """A value per card code from a value per rank (deuce .. ace), the joker's and the padding's
    (a game's point values: ``games/baccarat/tableau.py``, ``games/blackjack/hands.py``)."""
    table = np.empty(54, dtype=np.int8)
    table[:52] = np.repeat(np.fromiter(values, dtype=np.int8, count=13), 4)
    table[JOKER] = joker
    table[53] = pad
    return table


RANK = rank_table(range(13), joker=13, pad=-1)
"""Rank index 0 (deuce) .. 12 (ace); joker 13; no card -1."""
SUIT = np.concatenate([np.tile(np.arange(4, dtype=np.int8), 13), np.array([-1, -1], dtype=np.int8)])
"""Suit index 0..3; joker and no card -1."""
IS_ACE = RANK == 12
VALID = np.zeros(54, dtype=bool)
VALID[:53] = True
