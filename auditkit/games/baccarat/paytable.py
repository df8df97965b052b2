"""The paytable of the player, banker and tie bets, as the ``[baccarat]`` configuration sets it.

A winning bet pays its entry : 1 (the banker's less ``banker_commission``, times
``banker_six`` when the banker wins with a final total of 6); player and banker bets
push on a tie; a losing bet loses its stake. Other bets (``player_pair``, ...) have
house paytables and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["PAY_KEYS", "BETS", "PLAYER", "BANKER", "TIE", "OTHER", "net_per_unit"]

PAY_KEYS = ("player", "banker", "banker_commission", "banker_six", "tie")
"""The paytable's settings in the ``[baccarat]`` section (defaults in ``auditkit/defaults.toml``)."""

BETS = ("player", "banker", "tie")
"""Bet kinds 0, 1, 2 (the outcome each bet is on); :data:`OTHER` is any other bet."""
PLAYER, BANKER, TIE, OTHER = 0, 1, 2, 3


def net_per_unit(bet: np.ndarray, outcome: np.ndarray, banker_final: np.ndarray,
                 pay: Mapping[str, float | np.ndarray]) -> np.ndarray:
    """The net of each bet per unit staked for the outcome as dealt (NaN for another bet).

    ``bet`` and ``outcome`` are codes (:data:`BETS`, :data:`auditkit.games.baccarat.tableau.OUTCOMES`),
    ``banker_final`` the banker's final total, ``pay`` the :data:`PAY_KEYS` (numbers or arrays);
    all broadcast together.
    """
    banker_pays = pay["banker"] * (1 - pay["banker_commission"]) * np.where(banker_final == 6, pay["banker_six"], 1.0)
    wins = np.where(bet == PLAYER, pay["player"], np.where(bet == BANKER, banker_pays, pay["tie"]))
    push = (outcome == TIE) & (bet != TIE)  # player and banker bets push on a tie
    net = np.where(bet == outcome, wins, np.where(push, 0.0, -1.0))
    return np.where(bet == OTHER, np.nan, net)
