"""Blackjack odds and the analysis' view of a round: the dealer's exact bust rate, observed busts, stakes.

The observed busts read the rules' context (:class:`.context.Blackjack`): the same totals, blackjacks
and live hands as the rules and the simulator (:mod:`.hands`)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa

from .context import Blackjack
from .hands import BLACKJACK_POINTS, best_total, busts, dealer_must_draw

__all__ = ["EVENTS", "EXCLUSIVE", "EVENT_COLUMNS", "STAKE_COLUMNS", "blackjack_bust_probabilities",
           "blackjack_bust_probability", "events", "stakes_and_nets"]

EVENTS = ("dealer_busts",)
EXCLUSIVE = False
EVENT_COLUMNS = ["dealer_cards", "hands", "wagers"]
STAKE_COLUMNS = ["hands"]


@functools.lru_cache(maxsize=8)
def blackjack_bust_probabilities(decks: int = 6, hits_soft_17: bool = False) -> dict[int, float]:
    """P(dealer busts | upcard value, no dealer blackjack), exact for a full shoe less the upcard.

    Upcard values 2..10 and 1 for the ace. The dealer draws by :func:`hands.dealer_must_draw` (to 17,
    standing on soft 17 unless ``hits_soft_17``); the hole card and draws come from the
    shoe less the upcard, without replacement; rounds where the dealer holds a
    blackjack are left out (the dealer never draws then).
    """
    base = [4 * decks] * 9 + [16 * decks]  # values 1..10 at index 0..9

    @functools.cache
    def bust(counts: tuple[int, ...], hard: int, ace: bool) -> float:
        total, soft = best_total(hard, ace)
        if busts(total):
            return 1.0
        if not dealer_must_draw(total, soft, hits_soft_17):
            return 0.0
        n = sum(counts)
        p = 0.0
        for i, k in enumerate(counts):
            if k:
                nxt = counts[:i] + (k - 1,) + counts[i + 1:]
                p += k / n * bust(nxt, hard + i + 1, ace or i == 0)
        return p

    out = {}
    for up in range(1, 11):
        shoe = list(base)
        shoe[up - 1] -= 1
        n = sum(shoe)
        num = den = 0.0
        for i, k in enumerate(shoe):  # the hole card
            hole = i + 1
            if not k or {up, hole} == {1, 10}:
                continue  # none left, or a dealer blackjack
            nxt = list(shoe)
            nxt[i] -= 1
            num += k / n * bust(tuple(nxt), up + hole, up == 1 or hole == 1)
            den += k / n
        out[up] = num / den
    bust.cache_clear()
    return out


def blackjack_bust_probability(decks: int = 6, hits_soft_17: bool = False) -> float:
    """P(dealer busts | no dealer blackjack) over all upcards, exact.

    Six decks: 0.2960 standing on soft 17, 0.3000 hitting it (about 0.282 and
    0.286 of all rounds, dealer blackjacks counted as not busting).
    """
    probs = blackjack_bust_probabilities(decks, hits_soft_17)
    weights = {up: (16 if up == 10 else 4) * decks for up in probs}
    # weight of each upcard times P(no blackjack | upcard)
    n = 52 * decks
    w = {up: weights[up] / n * (1 - (weights[10] / (n - 1) if up == 1 else weights[1] / (n - 1) if up == 10 else 0))
         for up in probs}
    return sum(w[u] * probs[u] for u in probs) / sum(w.values())


def events(t: pa.Table, config: Any, game: str) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """``(event, counted rounds, event happened, probability)``: the rounds the dealer had to play out
    (:attr:`Blackjack.dealer_plays_out`: a patron hand still live, no dealer blackjack), whether the
    dealer busted, P(bust | upcard)."""
    probs = blackjack_bust_probabilities(int(config.get(game, "decks")), bool(config.get(game, "dealer_hits_soft_17")))
    ctx = Blackjack(t, config)
    flat, start, n = ctx.dealer_cards
    first = np.full(ctx.n, -1, np.int8)  # the up card (no card: points 0)
    first[n > 0] = flat[start[n > 0]]
    up = BLACKJACK_POINTS[first].astype(np.int64)
    ok = ctx.dealer_plays_out & (n >= 2) & (up >= 1)
    p = np.array([probs.get(u, np.nan) for u in range(11)])[np.clip(up, 0, 10)]
    return [("dealer_busts", ok, ctx.dealer_busts, p)]


def stakes_and_nets(hands: pa.StructArray) -> tuple[list[pa.Array], list[pa.Array]]:
    """The stake and net of each hand (a double or split counted at its total wager)."""
    return [hands.field("wager")], [hands.field("net")]
