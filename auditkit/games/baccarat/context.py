"""Baccarat's context: the facts of a batch of rounds its rules read (68 IAC 10-10-14).

Two-card totals, naturals, who drew, what the tableau of ``tableau.py`` requires,
the outcome and the paytable's net of each wager; each fact is computed the first
time a rule asks for it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import cards_str
from ...columns import combine
from ...rules.context import Context, Nets, Rounds, cached_property, numbers, objects
from ...rules.registry import preparer
from .kernels import Hand, read_hand
from .paytable import PAY_KEYS, net_per_unit
from .tableau import OUTCOMES, banker_draws, is_natural, outcome_of, player_draws

__all__ = ["Baccarat", "GAMES", "SECTION", "CARDS", "WAGERS", "take_str"]

GAMES = ("baccarat", "mini_baccarat")
SECTION = "68 IAC 10-10-14"
CARDS = ("player_cards", "banker_cards")
WAGERS = ("wagers", "status")


@preparer(*GAMES)
class Baccarat(Context):
    """Facts of one batch of baccarat rounds; totals are point counts mod 10."""

    section = "baccarat"

    # ---- the cards --------------------------------------------------------------------
    @cached_property
    def player(self) -> Hand:
        return read_hand(self.table["player_cards"])

    @cached_property
    def banker(self) -> Hand:
        return read_hand(self.table["banker_cards"])

    @cached_property
    def player_total(self) -> np.ndarray:
        """The player's two-card point count."""
        return self.player.two

    @cached_property
    def banker_total(self) -> np.ndarray:
        """The banker's two-card point count."""
        return self.banker.two

    @cached_property
    def player_third(self) -> np.ndarray:
        """The value of the player's third card (0 when none)."""
        return self.player.third

    @cached_property
    def player_final(self) -> np.ndarray:
        """The player's total of every card dealt."""
        return self.player.final

    @cached_property
    def banker_final(self) -> np.ndarray:
        return self.banker.final

    @cached_property
    def player_drew(self) -> np.ndarray:
        """The player's hand holds a third card."""
        return self.player.count >= 3

    @cached_property
    def banker_drew(self) -> np.ndarray:
        return self.banker.count >= 3

    @cached_property
    def complete(self) -> np.ndarray:
        """Both hands hold their first two cards: the round can be played out."""
        return (self.player.count >= 2) & (self.banker.count >= 2)

    @cached_property
    def settled(self) -> np.ndarray:
        """Completed rounds that can be played out: their outcome and payouts are checked."""
        return self.completed & self.complete

    # ---- the tableau ------------------------------------------------------------------
    @cached_property
    def natural(self) -> np.ndarray:
        """(b)(3): an 8 or 9 in two cards on either hand."""
        return is_natural(self.player_total, self.banker_total)

    @cached_property
    def tableau_applies(self) -> np.ndarray:
        """Both hands dealt and no natural: the tableau decides the third cards."""
        return self.complete & ~self.natural

    @cached_property
    def player_should_draw(self) -> np.ndarray:
        """What the tableau requires of the player."""
        return player_draws(self.player_total, self.banker_total)

    @cached_property
    def banker_should_draw(self) -> np.ndarray:
        """What the tableau requires of the banker, on the cards as dealt (did the player draw, and what)."""
        return banker_draws(self.player_total, self.banker_total, self.player_drew, self.player_third)

    @cached_property
    def player_acted_wrongly(self) -> np.ndarray:
        return self.tableau_applies & (self.player_drew != self.player_should_draw)

    @cached_property
    def banker_acted_wrongly(self) -> np.ndarray:
        return self.tableau_applies & (self.banker_drew != self.banker_should_draw)

    @cached_property
    def player_wrong_rows(self) -> np.ndarray:
        return np.flatnonzero(self.player_acted_wrongly)

    @cached_property
    def banker_wrong_rows(self) -> np.ndarray:
        return np.flatnonzero(self.banker_acted_wrongly)

    @property
    def player_wrong(self) -> Rounds:
        """The (few) rounds where the player's draw or stand breaks the tableau (made per rule: not
        cached, it refers back to this context)."""
        return Rounds(self, self.player_wrong_rows)

    @property
    def banker_wrong(self) -> Rounds:
        """The (few) rounds where the banker's draw or stand breaks the tableau."""
        return Rounds(self, self.banker_wrong_rows)

    # ---- outcome and wagers -----------------------------------------------------------
    @cached_property
    def dealt(self) -> np.ndarray:
        """The outcome code of the cards as dealt (:data:`OUTCOMES`)."""
        return outcome_of(self.player_final, self.banker_final)

    @cached_property
    def recorded_outcome(self) -> np.ndarray:
        """The recorded outcome code; -1 for a value that is none of :data:`OUTCOMES`."""
        return numbers(pc.index_in(self.table["outcome"], value_set=pa.array(OUTCOMES)), -1).astype(np.int8)

    @cached_property
    def paytables(self) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        """The paytable of each round (an index; None: one for all) and the entries of each paytable."""
        tables, index = self.per_table(lambda section: [float(section[k]) for k in PAY_KEYS])
        return (None if len(tables) == 1 else index), {k: np.array([t[i] for t in tables])
                                                       for i, k in enumerate(PAY_KEYS)}

    @cached_property
    def settlement(self) -> tuple[np.ndarray, np.ndarray]:
        """How each round settles: a code per round and, per code, the payout of each bet kind.

        Codes ``6 * paytable + 2 * outcome as dealt + (banker's final total is 6)``, then one code for
        the rounds not settled (NaN: not checked). The payouts are :func:`net_per_unit` of each code.
        """
        table_of_round, pay = self.paytables
        outcome, banker_six = np.divmod(np.arange(6), 2)
        payout = net_per_unit(np.arange(4)[None, None, :], outcome[None, :, None], 6 * banker_six[None, :, None],
                              {k: v[:, None, None] for k, v in pay.items()}).reshape(-1, 4)
        payout = np.vstack([payout, np.full((1, 4), np.nan)])
        state = (2 * self.dealt + (self.banker_final == 6)).astype(np.int32 if len(payout) > 64 else np.uint8)
        if table_of_round is not None:
            state += (6 * table_of_round).astype(state.dtype)
        state[~self.settled] = len(payout) - 1
        return state, payout

    @cached_property
    def nets(self) -> Nets:
        """Every wager's net; ``what`` is its bet."""
        return self.nets_of(np.ones(self.n, bool))

    def nets_of(self, rounds: np.ndarray) -> Nets:
        """The nets of the wagers of the rounds where ``rounds`` is True (the void check asks for the
        few void and dead rounds), read from the batch's flattened wagers."""
        wagers = self.wagers_of(np.flatnonzero(rounds))
        what = np.array([b or "bet" for b in take_str(self.wager_bet, wagers)], dtype=object)
        return Nets(round=self.round_of(wagers), seat=self.wager_seat[wagers], what=what, net=self.wager_net[wagers])

    # ---- evidence for the words of a finding (asked for the flagged rows only) ----------------
    def cards_of(self, side: str, part: slice = slice(None)) -> Callable[[np.ndarray], np.ndarray]:
        """Evidence: one hand's cards (``part`` of them) in each flagged round."""
        hand = self.player if side == "player" else self.banker
        return lambda rows: objects([hand.cards(i, part) for i in rows])

    def actions(self, side: str) -> Callable[[np.ndarray], np.ndarray]:
        """Evidence: what one hand did in each flagged round, ``player drew 4s`` or ``banker stood``."""
        hand = self.player if side == "player" else self.banker
        return lambda rows: objects([f"{side} drew {cards_str(hand.cards(i, slice(2, 3)))}" if hand.count[i] >= 3
                                      else f"{side} stood" for i in rows])


def take_str(arr: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> np.ndarray:
    """Some rows of a string column as a Python object array (for messages)."""
    if not len(rows):
        return np.empty(0, object)
    return np.array(combine(arr).take(pa.array(rows, pa.int64())).to_pylist(), dtype=object)
