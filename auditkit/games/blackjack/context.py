"""The facts blackjack's rules read: one :class:`Blackjack` context per batch of rounds.

Rounds ``r``, hands (flattened, one element per patron hand, with ``hand_round``), side wagers
(``wager_round``) and wager events (``event_round``, in order). Each fact is computed on first
use; the game's facts themselves (totals, blackjack, bust, live hand, results) are those of
:mod:`.hands`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import JOKER
from ...columns import flat_values, lengths, struct_field
from ...rules.context import Context, Nets, cached_property, numbers, objects
from ...rules.registry import preparer
from . import hands as H
from .kernels import list_counts, list_totals

__all__ = ["Blackjack", "card_lists", "HAND"]

GAME = "blackjack"


def card_lists(col: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat int8 codes of a ``list<int8>`` column, each list's start in them and its length."""
    n = lengths(col)
    flat = flat_values(col).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
    start = np.zeros(len(n), dtype=np.int64)
    np.cumsum(n[:-1], out=start[1:])
    return flat, start, n


def _earlier_in_group(group: np.ndarray, flag: np.ndarray) -> np.ndarray:
    """For each element, whether an earlier element (in array order) of the same group is flagged."""
    order = np.argsort(group, kind="stable")
    f = flag[order].astype(np.int64)
    before = np.cumsum(f) - f
    g = group[order]
    first = np.ones(len(g), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(len(g)), 0))
    out = np.empty(len(g), dtype=bool)
    out[order] = before - before[start] > 0
    return out


def _seat_key(rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
    return rows.astype(np.int64) * (1 << 32) + seats.astype(np.int64)


@preparer(GAME)
class Blackjack(Context):
    """Facts of one batch of blackjack rounds under a configuration."""

    section = GAME
    net_columns = ("status", "hands", "wagers")  # what :attr:`nets` reads (the void check takes its rounds with them)

    # ---- the paytable and house rules, per round ([blackjack] settings, table overrides applied) ----
    @cached_property
    def win_rate(self) -> np.ndarray:
        return self.param("win")

    @cached_property
    def blackjack_rate(self) -> np.ndarray:
        return self.param("blackjack")

    @cached_property
    def insurance_rate(self) -> np.ndarray:
        return self.param("insurance")

    @cached_property
    def even_money_rate(self) -> np.ndarray:
        return self.param("even_money")

    @cached_property
    def surrender_rate(self) -> np.ndarray:
        """The fraction of the wager a surrender loses."""
        return self.param("surrender")

    @cached_property
    def hits_soft_17(self) -> np.ndarray:
        return self.param("dealer_hits_soft_17") > 0

    @cached_property
    def check_dealer_play(self) -> np.ndarray:
        return self.param("check_dealer_play") > 0

    @cached_property
    def table_min(self) -> np.ndarray:
        """The round's posted minimum, else the configured one (0: not known)."""
        own = numbers(self.table["table_min"], np.nan, np.float64)
        return np.where(np.isnan(own), self.param("table_min"), own)

    @cached_property
    def table_max(self) -> np.ndarray:
        """The round's posted maximum, else the configured one (inf: not known)."""
        own = numbers(self.table["table_max"], np.nan, np.float64)
        return np.where(np.isnan(own), self.param("table_max"), own)

    # ---- the dealer, per round ------------------------------------------------------------------
    @cached_property
    def dealer_cards(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat codes, start and length of each round's dealer cards."""
        return card_lists(self.table["dealer_cards"])

    @cached_property
    def dealer_n(self) -> np.ndarray:
        return self.dealer_cards[2]

    @cached_property
    def dealer_total(self) -> np.ndarray:
        return list_totals(*self.dealer_cards)[0]

    @cached_property
    def dealer_blackjack(self) -> np.ndarray:
        return H.is_blackjack(self.dealer_n, self.dealer_total, False)

    @cached_property
    def dealer_busts(self) -> np.ndarray:
        return H.busts(self.dealer_total)

    @cached_property
    def joker(self) -> np.ndarray:
        """Rounds holding a joker (dealer's or a hand's cards)."""
        flat, start, n = self.dealer_cards
        hand_flat, hand_start, hand_n = self.hand_cards
        out = np.zeros(self.n, dtype=bool)
        if (flat == JOKER).any():
            out |= list_counts(flat == JOKER, start, n) > 0
        if (hand_flat == JOKER).any():
            in_hand = list_counts(hand_flat == JOKER, hand_start, hand_n) > 0
            out |= np.bincount(self.hand_round[in_hand], minlength=self.n)[:self.n] > 0
        return out

    @cached_property
    def settled(self) -> np.ndarray:
        """Rounds whose hands are settled against the dealer: completed, and a blackjack deal (no joker)."""
        return self.completed & ~self.joker

    # ---- patron hands, one element per hand -----------------------------------------------------
    @cached_property
    def hand_no(self) -> np.ndarray:
        return self.hand_field("hand", 0, np.int64)

    @cached_property
    def hand_cards(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return card_lists(struct_field(self.hands, "cards"))

    @cached_property
    def wager(self) -> np.ndarray:
        """The total at risk on the hand (a double included)."""
        return self.hand_field("wager", 0.0, np.float64)

    @cached_property
    def initial_wager(self) -> np.ndarray:
        """The wager before any double."""
        return self.hand_field("initial_wager", np.nan, np.float64)

    @cached_property
    def doubled(self) -> np.ndarray:
        return self.hand_field("doubled", False, bool)

    @cached_property
    def split(self) -> np.ndarray:
        return self.hand_field("split", False, bool)

    @cached_property
    def surrendered(self) -> np.ndarray:
        return self.hand_field("surrendered", False, bool)

    @cached_property
    def net(self) -> np.ndarray:
        return self.hand_field("net", 0.0, np.float64)

    @cached_property
    def player_total(self) -> np.ndarray:
        return list_totals(*self.hand_cards)[0]

    @cached_property
    def player_blackjack(self) -> np.ndarray:
        return H.is_blackjack(self.hand_cards[2], self.player_total, self.split)

    @cached_property
    def player_busts(self) -> np.ndarray:
        return H.busts(self.player_total)

    @cached_property
    def versus_total(self) -> np.ndarray:
        """The dealer's total, per hand."""
        return self.dealer_total[self.hand_round]

    @cached_property
    def versus_blackjack(self) -> np.ndarray:
        """Whether the dealer holds a blackjack, per hand."""
        return self.dealer_blackjack[self.hand_round]

    @cached_property
    def took_even_money(self) -> np.ndarray:
        """The hand's seat took even money: the hand is settled by that wager."""
        out = np.zeros(len(self.hand_seat), dtype=bool)
        em = self.is_even_money
        if em.any():  # only the hands of rounds with an even money wager are looked up
            rounds = np.bincount(self.wager_round[em], minlength=self.n)[:self.n] > 0
            i = np.flatnonzero(rounds[self.hand_round])
            out[i] = np.isin(_seat_key(self.hand_round[i], self.hand_seat[i]),
                             _seat_key(self.wager_round[em], self.wager_seat[em]))
        return out

    @cached_property
    def live(self) -> np.ndarray:
        """Hands the dealer plays against (:func:`hands.is_live`)."""
        return H.is_live(self.player_total, self.surrendered, self.player_blackjack, self.took_even_money)

    @cached_property
    def dealer_plays_out(self) -> np.ndarray:
        """Rounds where the dealer must draw to a standing total: some hand live, no dealer blackjack."""
        live_round = np.bincount(self.hand_round[self.live], minlength=self.n)[:self.n] > 0
        return live_round & ~self.dealer_blackjack

    @cached_property
    def compared(self) -> np.ndarray:
        """Hands settled by comparison with the dealer: in a settled round, not surrendered, not even money."""
        return self.settled[self.hand_round] & ~self.surrendered & ~self.took_even_money

    # ---- the result each hand should have (exactly one holds) -----------------------------------
    @cached_property
    def wins_dealer_busts(self) -> np.ndarray:
        return H.wins_dealer_busts(self.player_total, self.player_blackjack, self.versus_total)

    @cached_property
    def wins_higher_total(self) -> np.ndarray:
        return H.wins_higher_total(self.player_total, self.player_blackjack, self.versus_total)

    @cached_property
    def wins_blackjack(self) -> np.ndarray:
        return H.wins_blackjack(self.player_blackjack, self.versus_blackjack)

    @cached_property
    def pushes(self) -> np.ndarray:
        return H.pushes(self.player_total, self.player_blackjack, self.versus_total, self.versus_blackjack)

    @cached_property
    def loses_to_dealer_blackjack(self) -> np.ndarray:
        return H.loses_to_dealer_blackjack(self.player_total, self.player_blackjack, self.versus_blackjack)

    @cached_property
    def loses(self) -> np.ndarray:
        return H.loses(self.player_total, self.player_blackjack, self.versus_total)

    @cached_property
    def wins(self) -> np.ndarray:
        return self.wins_dealer_busts | self.wins_higher_total | self.wins_blackjack

    @cached_property
    def payout_rate(self) -> np.ndarray:
        """What the result pays per unit of wager: the blackjack rate, the win rate, 0 (push) or -1."""
        r = self.hand_round
        return np.select([self.wins_blackjack, self.wins, self.pushes],
                         [self.blackjack_rate[r], self.win_rate[r], 0.0], default=-1.0)

    @cached_property
    def expected_net(self) -> np.ndarray:
        """The exact net of each compared hand's result (before rounding)."""
        return self.wager * self.payout_rate

    @cached_property
    def recorded_win(self) -> np.ndarray:
        return self.net >= self.unit / 2

    @cached_property
    def recorded_push(self) -> np.ndarray:
        """A net of 0 to within half a rounding unit."""
        return np.abs(self.net) < self.unit / 2

    @cached_property
    def recorded_loss(self) -> np.ndarray:
        return self.net <= -self.unit / 2

    @cached_property
    def right_direction(self) -> np.ndarray:
        """Recorded as won, pushed or lost as the result says (the amount aside)."""
        return np.where(self.wins, self.recorded_win, np.where(self.pushes, self.recorded_push, self.recorded_loss))

    # ---- side wagers (``wagers``, read by the shared Context), one element per wager --------------
    @cached_property
    def is_insurance(self) -> np.ndarray:
        return numbers(pc.equal(self.wager_bet, "insurance"), False, bool)

    @cached_property
    def is_even_money(self) -> np.ndarray:
        return numbers(pc.equal(self.wager_bet, "even_money"), False, bool)

    # ---- wager events (``events``, read by the shared Context), in order ---------------------------
    @cached_property
    def event_seat(self) -> np.ndarray:
        return numbers(struct_field(self.events, "seat"), -1, np.int64)

    @cached_property
    def event_amount(self) -> np.ndarray:
        return numbers(struct_field(self.events, "amount"), 0.0, np.float64)

    @cached_property
    def action(self) -> np.ndarray:
        """Each event's action as an index in :data:`hands.ACTIONS`, -1 for an event that is not a wager."""
        codes = pc.index_in(struct_field(self.events, "action"), value_set=pa.array(list(H.ACTIONS)))
        return numbers(codes, -1, np.int64)

    def _action_in(self, actions: tuple[str, ...]) -> np.ndarray:
        among = np.array([a in actions for a in H.ACTIONS] + [False])  # the last entry: not a wager (-1)
        return among[self.action]

    @cached_property
    def changes_wager(self) -> np.ndarray:
        """A wager made, increased or withdrawn (:data:`hands.CHANGES`)."""
        return self._action_in(H.CHANGES)

    @cached_property
    def confirmed_wager(self) -> np.ndarray:
        """A double, split, surrender, insurance or even money wager (:data:`hands.CONFIRMED`)."""
        return self._action_in(H.CONFIRMED)

    @cached_property
    def alters_wager(self) -> np.ndarray:
        """An increase or a withdrawal (:data:`hands.ALTERS`)."""
        return self._action_in(H.ALTERS)

    @cached_property
    def after_first_card(self) -> np.ndarray:
        """The event comes after a ``first_card`` marker of its round."""
        marker = numbers(pc.equal(struct_field(self.events, "type"), "first_card"), False, bool)
        markers_before = np.zeros(len(marker) + 1, dtype=np.int64)  # markers before each event, in the batch
        np.cumsum(marker, out=markers_before[1:])
        round_start = np.zeros(self.n, dtype=np.int64)
        np.cumsum(self.events_per_round[:-1], out=round_start[1:])
        return markers_before[:-1] > markers_before[round_start][self.event_round]

    @cached_property
    def after_confirmed_wager(self) -> np.ndarray:
        """The event comes after a confirmed wager of the same seat in its round."""
        out = np.zeros(len(self.action), dtype=bool)
        rounds = np.bincount(self.event_round[self.confirmed_wager], minlength=self.n)[:self.n] > 0
        i = np.flatnonzero((self.action >= 0) & rounds[self.event_round])  # wager events of those rounds
        out[i] = _earlier_in_group(_seat_key(self.event_round[i], self.event_seat[i]), self.confirmed_wager[i])
        return out

    # ---- every wager net (the shared void check) ------------------------------------------------
    @cached_property
    def nets(self) -> Nets:
        """Each hand's net (``hand 0``, ``hand 1``...) and each side wager's (named by its bet)."""
        no = np.maximum(self.hand_no, 0)
        top = int(no.max(initial=0))
        labels = np.array([f"hand {k}" for k in range(min(top, 9) + 1)], dtype=f"<U{len(f'hand {top}')}")
        hand = labels[np.minimum(no, len(labels) - 1)]
        past = np.flatnonzero(no >= len(labels))  # hand numbers past 9 (misshapen rounds): written one by one
        hand[past] = np.char.add("hand ", no[past].astype(str))
        bets = self.wager_bet.to_numpy(zero_copy_only=False).astype(str)
        return Nets(round=np.concatenate([self.hand_round, self.wager_round]),
                    seat=np.concatenate([self.hand_seat, self.wager_seat]),
                    what=np.concatenate([hand, bets]),
                    net=np.concatenate([self.net, self.wager_net]))

    # ---- evidence for the words of a finding (asked for the flagged hands or rounds only) -----------
    def hand_cards_of(self, hands: np.ndarray) -> np.ndarray:
        """Each of these hands' cards."""
        flat, start, n = self.hand_cards
        return objects([flat[start[i]:start[i] + n[i]] for i in hands])

    def dealer_cards_of(self, rounds: np.ndarray) -> np.ndarray:
        """The dealer's cards in each of these rounds."""
        flat, start, n = self.dealer_cards
        return objects([flat[start[r]:start[r] + n[r]] for r in rounds])

    def hand_evidence(self) -> dict[str, Any]:
        """What describes a hand against the dealer's: ``seat 5 hand 0: 4d 3s 3d Qd (20) v dealer 7s Kh (17)``
        (:data:`HAND`), as evidence asked for the flagged hands."""
        return {"seat": self.hand_seat, "hand": self.hand_no, "cards": self.hand_cards_of,
                "points": lambda h: _points(self.player_total[h], self.player_blackjack[h]),
                "dealer_cards": lambda h: self.dealer_cards_of(self.hand_round[h]),
                "dealer_points": lambda h: _points(self.dealer_total[self.hand_round[h]],
                                                   self.dealer_blackjack[self.hand_round[h]])}


HAND = "seat {seat:int} hand {hand:int}: {cards:cards} ({points}) v dealer {dealer_cards:cards} ({dealer_points})"
"""A hand against the dealer's, from :meth:`Blackjack.hand_evidence`."""


def _points(total: np.ndarray, blackjack: np.ndarray) -> np.ndarray:
    """A hand's total as a word: ``20``, or ``blackjack``."""
    return np.where(blackjack, "blackjack", total.astype(np.int64).astype(str)).astype(object)
