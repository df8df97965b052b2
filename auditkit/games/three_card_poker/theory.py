"""Three card poker odds and the analysis' view of a round: the dealer's qualifying rate, stakes."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa

from ...columns import padded
from .hands import evaluate
from .paytable import dealer_qualifies

__all__ = ["EVENTS", "EXCLUSIVE", "EVENT_COLUMNS", "STAKE_COLUMNS", "tcp_dealer_qualify_probability", "events"]

EVENTS = ("dealer_qualifies",)
EXCLUSIVE = False
EVENT_COLUMNS = ["dealer_cards"]
STAKE_COLUMNS = ["hands"]


@functools.lru_cache(maxsize=1)
def tcp_dealer_qualify_probability() -> float:
    """Probability that the dealer's three cards qualify (queen high or better): 15,380 of 22,100 hands.

    Counted by evaluating all C(52, 3) hands; the 6,720 that do not qualify are
    high-card hands below a queen (112 rank sets without a straight, times 60
    suit patterns without a flush).
    """
    from itertools import combinations

    hands = np.array(list(combinations(range(52), 3)), dtype=np.int8)
    _cat, score = evaluate(hands)
    return float(dealer_qualifies(score).sum() / len(hands))


def events(t: pa.Table, config: Any, game: str) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """``(event, counted rounds, event happened, probability)``: did the dealer qualify (three real cards)."""
    d, n_d = padded(t["dealer_cards"], 3)
    _c, score = evaluate(d)
    ok = (n_d == 3) & (score >= 0)
    return [("dealer_qualifies", ok, dealer_qualifies(score), np.full(t.num_rows, tcp_dealer_qualify_probability()))]


def stakes_and_nets(hands: pa.StructArray) -> tuple[list[pa.Array], list[pa.Array]]:
    """The stake and net fields of each hand (ante, play, pair plus; their nets and the ante bonus)."""
    return ([hands.field(f) for f in ("ante", "play", "pair_plus")],
            [hands.field(f) for f in ("net_ante", "net_play", "net_pair_plus", "ante_bonus")])
