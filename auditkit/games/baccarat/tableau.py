"""The tableau of 68 IAC 10-10-14(b) and the outcome of a round, as plainly named data.

Point values (A = 1, 2-9 face value, T J Q K = 0) are :data:`BACCARAT_POINTS`;
a total is the sum mod 10. The rules (through their context) and the analysis
(``theory.py``) read the tables below; the simulator deals from its own written-out
copy of the regulation's if/else, so that its round trip tests these tables.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from ...cards import rank_table

BACCARAT_POINTS = rank_table([2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 1], joker=0, pad=0)
"""Baccarat point value of each card code: A = 1, 2-9 face, T J Q K = 0; a joker and no card 0."""

__all__ = ["NATURALS", "PLAYER_DRAWS_ON", "BANKER_DRAWS_WHEN_PLAYER_STOOD", "BANKER_DRAWS_WHEN_PLAYER_DREW",
           "OUTCOMES", "is_natural", "player_draws", "banker_draws", "banker_draws_table",
           "outcome_of"]

NATURALS = frozenset({8, 9})
"""(b)(3): a two-card 8 or 9 on either hand is a natural; no more cards are dealt to either hand."""

PLAYER_DRAWS_ON = frozenset(range(0, 6))
"""(b)(1): the player draws on a two-card total 0-5; (b)(2): it stands on 6-7."""

BANKER_DRAWS_WHEN_PLAYER_STOOD = frozenset(range(0, 6))
"""(b)(9): the player stood, the banker draws on 0-5; (b)(10): it stands on 6-7."""

BANKER_DRAWS_WHEN_PLAYER_DREW: dict[int, frozenset[int]] = {
    0: frozenset(range(10)),        # (b)(11): 0-2 always draws
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(range(10)) - {8},  # (b)(5): draws unless the player's third card is an 8
    4: frozenset(range(2, 8)),      # (b)(6): draws on a player third card 2-7
    5: frozenset(range(4, 8)),      # (b)(7): 4-7
    6: frozenset({6, 7}),           # (b)(8): 6-7
    7: frozenset(),                 # (b)(4): stands
}
"""The player drew: banker two-card total -> the player third-card values on which the banker draws."""

OUTCOMES = ("player", "banker", "tie")
"""Outcome codes 0, 1, 2: the index in this tuple."""


def _among(values: np.ndarray, allowed: Collection[int]) -> np.ndarray:
    """Is each point value (0-9) one of ``allowed``? (One or two comparisons when ``allowed`` is a range.)"""
    lo, hi = min(allowed, default=0), max(allowed, default=-1)
    if len(allowed) == hi - lo + 1:
        if lo <= 0:
            return values <= hi
        return values >= lo if hi >= 9 else (values >= lo) & (values <= hi)
    among = np.zeros(10, bool)
    among[list(allowed)] = True
    return among[values]


def is_natural(player_total: np.ndarray, banker_total: np.ndarray) -> np.ndarray:
    """(b)(3): a natural on either hand (two-card totals)."""
    return _among(player_total, NATURALS) | _among(banker_total, NATURALS)


def player_draws(player_total: np.ndarray, banker_total: np.ndarray) -> np.ndarray:
    """Must the player draw? (b)(1)-(b)(3): no natural and a two-card total the tableau draws on."""
    return ~is_natural(player_total, banker_total) & _among(player_total, PLAYER_DRAWS_ON)


def banker_draws_table() -> np.ndarray:
    """:data:`BANKER_DRAWS_WHEN_PLAYER_STOOD` and :data:`BANKER_DRAWS_WHEN_PLAYER_DREW` as one lookup
    table ``[player drew, banker two-card total, player third-card value]`` (a banker 8 or 9 stands),
    built from them at each call (a test may change them)."""
    table = np.zeros((2, 10, 10), bool)
    table[0, list(BANKER_DRAWS_WHEN_PLAYER_STOOD), :] = True  # the player's third card does not matter
    for banker, on in BANKER_DRAWS_WHEN_PLAYER_DREW.items():
        table[1, banker, list(on)] = True
    return table


def banker_draws(player_total: np.ndarray, banker_total: np.ndarray, player_drew: np.ndarray,
                 player_third: np.ndarray) -> np.ndarray:
    """Must the banker draw, given whether the player drew and the player's third-card value?

    ``player_third`` is ignored where the player did not draw: the banker then draws on
    :data:`BANKER_DRAWS_WHEN_PLAYER_STOOD`, else as :data:`BANKER_DRAWS_WHEN_PLAYER_DREW` says
    (one lookup in :func:`banker_draws_table`).
    """
    at = np.asarray(player_drew, bool).view(np.uint8) * np.uint8(100)  # the flat index, one byte (< 200)
    at += np.asarray(banker_total, np.uint8) * np.uint8(10)
    at += np.asarray(player_third, np.uint8)
    return ~is_natural(player_total, banker_total) & banker_draws_table().ravel()[at]


def outcome_of(player_final: np.ndarray, banker_final: np.ndarray) -> np.ndarray:
    """Outcome code of the final totals: the higher total wins, equal totals tie (0 player, 1 banker, 2 tie)."""
    banker_wins = (player_final < banker_final).view(np.int8)
    tie = (player_final == banker_final).view(np.int8)
    return banker_wins + 2 * tie
