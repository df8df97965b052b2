"""The deal of pai gow poker as 68 IAC 10-9 fixes it: plainly named numbers, one form of each.

One 53-card deck (52 cards and the joker) is dealt into seven stacks of seven cards, four
cards left over; three dice give the position (1 = the dealer's, then counterclockwise)
that receives the first stack. The rules, the simulator and the analysis read these.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

__all__ = ["DECK", "POSITIONS", "DEALER_POSITION", "STACKS", "CARDS_PER_HAND", "CARDS_REMAINING",
           "HIGH_HAND", "LOW_HAND", "SETTING_LOW", "SETTING_HIGH", "EVENT_TYPES", "EVENT", "dice_position"]

DECK = 53
"""Cards in the deck: 52 and the joker."""
POSITIONS = 7
"""Positions around the table, numbered 1 (the dealer's) to 7 counterclockwise."""
DEALER_POSITION = 1
STACKS = 7
"""Stacks dealt, one per position (subsection (h))."""
CARDS_PER_HAND = 7
"""Cards of each stack, so of every hand and of the dealer's (subsection (e))."""
CARDS_REMAINING = DECK - STACKS * CARDS_PER_HAND
"""Cards left after the deal: four (subsection (i))."""
HIGH_HAND, LOW_HAND = 5, 2
"""Cards of the five-card (high) and two-card (low) hands a setting splits the seven into."""
SETTING_LOW = np.array(list(combinations(range(CARDS_PER_HAND), LOW_HAND)), dtype=np.intp)
"""The 21 settings of seven cards: the positions of the two-card hand of each ([21, 2])..."""
SETTING_HIGH = np.array([[p for p in range(CARDS_PER_HAND) if p not in low] for low in SETTING_LOW], dtype=np.intp)
"""... and of its five-card hand ([21, 5])."""

EVENT_TYPES = ("face_up_card", "no_roll", "roll", "card_out_of_order", "dealer_card_exposed",
               "card_exposed_during_stacks", "stacks_dealt", "supervisor_called", "dealer_hand_reset",
               "reshuffle")
"""The events a pai gow poker round records, in the order of their codes."""
EVENT = {name: code for code, name in enumerate(EVENT_TYPES)}
"""The code of each event type."""


def dice_position(dice_total: np.ndarray) -> np.ndarray:
    """The position that receives the first stack for a dice total: ``((total - 1) mod 7) + 1``
    (counting from the dealer's position as 1, so totals 8 and 15 go to the dealer)."""
    return (np.asarray(dice_total, dtype=np.int64) - 1) % POSITIONS + DEALER_POSITION
