"""How a pai gow poker hand is settled against the dealer's: one definition, for the rules and the simulator.

Each of the patron's two hands (five-card and two-card) is compared with the dealer's of
the same kind; a copy (equal hands) goes to the dealer. A fouled hand (its two-card hand
outranks its five-card hand) loses both; against a fouled dealer the patron wins both. Two
hands won pays ``win`` to 1 less ``commission`` of the win (configuration ``[pai_gow_poker]``,
1:1 less 5% by default); none loses the wager; one each is a push.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OUTCOMES", "hands_won", "exact_net"]

OUTCOMES = ("loss", "push", "win")
"""A hand's outcome by the number of its two hands that beat the dealer's."""


def hands_won(high: np.ndarray, low: np.ndarray, fouled: np.ndarray, dealer_high: np.ndarray,
              dealer_low: np.ndarray, dealer_fouled: np.ndarray) -> np.ndarray:
    """int8 0, 1 or 2 per hand: how many of its hands beat the dealer's (scores aligned with the hands)."""
    won = (high > dealer_high).view(np.int8) + (low > dealer_low).view(np.int8)  # a copy goes to the dealer
    won[dealer_fouled] = 2
    won[fouled] = 0
    return won


def exact_net(won: np.ndarray, wager: np.ndarray, win: np.ndarray | float, commission: np.ndarray | float) -> np.ndarray:
    """The exact (unrounded) net of hands that won ``won`` (0, 1, 2) of their two hands: both pays the
    wager times ``win`` less ``commission`` of the win, none loses the wager, one each is a push (0)."""
    return wager * win * (1.0 - commission) * (won == 2) - wager * (won == 0)
