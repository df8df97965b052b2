"""Three card poker's context: the facts of a batch of rounds its rules read (68 IAC 10-11-6).

One entry per round for the dealer, one per hand for the patrons; each fact is
computed on first use. The regulation's tables and the settlement under (c) are
in :mod:`.paytable`; the tuned kernels (the integrity screen) in :mod:`.kernels`.
Money facts carry the expected and recorded nets of the wagers they cover
(expected rounded as the paytable rounds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow.compute as pc

from ...cards import JOKER, cards_str
from ...columns import padded, to_numpy
from ...money import money_differs, money_round
from ...rules.context import Context, Nets, cached_property, objects
from ...rules.integrity import repeated_in_round
from ...rules.registry import Hits, preparer
from .hands import CATEGORY_NAMES, evaluate
from .kernels import distinct_cards_short
from .paytable import (
    ANTE_BONUS_MINIMUM,
    WIN_MINIMUM,
    ante_and_play_nets,
    ante_bonus_odds,
    dealer_qualifies,
    pair_plus_odds,
)

__all__ = ["ThreeCardPoker", "GAME", "SECTION", "HAND", "DEALER"]

GAME = "three_card_poker"
SECTION = "68 IAC 10-11-6"


def _by_category(odds: dict[int, float], below: float) -> np.ndarray:
    """Odds indexed by category: ``odds`` where given, ``below`` for the other categories, 0 at index -1."""
    out = np.full(7, below)
    for cat, x in odds.items():
        out[cat] = x
    out[6] = 0.0
    return out


_MINIMUM_BONUS_ODDS = _by_category(ANTE_BONUS_MINIMUM, 0.0)
"""(d)(1)-(d)(3) minimum ante bonus odds indexed by category (0: no bonus)."""


def _below(recorded: np.ndarray, minimum: np.ndarray, among: np.ndarray, unit: float) -> np.ndarray:
    """Where ``among``: the recorded amount is a rounding unit or more below ``minimum``."""
    out = np.zeros(len(among), dtype=bool)
    i = np.flatnonzero(among)
    out[i] = money_differs(recorded[i], minimum[i], unit) & (recorded[i] < minimum[i])
    return out


_WAGERS = np.array(["ante", "play", "ante bonus", "pair plus"], dtype=object)
"""The wagers of a hand, as :class:`Nets` names them."""


HAND = "seat {seat:int} {cards:cards} ({category})"
"""A patron hand, from :meth:`ThreeCardPoker.hand_evidence`."""
DEALER = "dealer {dealer_cards:cards} ({qualification})"
"""The dealer's hand, from :meth:`ThreeCardPoker.dealer_evidence`."""


@preparer(GAME)
class ThreeCardPoker(Context):
    """Facts of one batch of three card poker rounds.

    Per round (``n``): the dealer's cards, score and qualification. Per hand (flattened
    in round order; ``hand_round`` is its row): seat, cards, category, decision,
    wagers and nets, how it compares with the dealer, and the settlement the posted
    paytable gives it. Amounts ``expected_*`` are exact (unrounded).
    """

    section = GAME
    net_columns = ("status", "hands")  # what :attr:`nets` reads (the void check takes its rounds with them)

    # ---- the dealer (per round) --------------------------------------------------------------------------
    @cached_property
    def _dealer(self) -> tuple[np.ndarray, np.ndarray]:
        return padded(self.table["dealer_cards"], 3)

    @cached_property
    def dealer_cards(self) -> np.ndarray:
        """``(n, 3)`` card codes, NO_CARD padded."""
        return self._dealer[0]

    @cached_property
    def dealer_card_count(self) -> np.ndarray:
        return self._dealer[1]

    @cached_property
    def dealer_score(self) -> np.ndarray:
        return evaluate(self.dealer_cards)[1]

    @cached_property
    def dealer_readable(self) -> np.ndarray:
        """The dealer holds three real cards."""
        return (self.dealer_card_count == 3) & (self.dealer_score >= 0)

    @cached_property
    def dealer_qualifies(self) -> np.ndarray:
        """(b): queen high or better."""
        return dealer_qualifies(self.dealer_score)

    # ---- the hands (per hand) ----------------------------------------------------------------------------
    @cached_property
    def _cards(self) -> tuple[np.ndarray, np.ndarray]:
        return padded(self.hands.field("cards"), 3)

    @cached_property
    def cards(self) -> np.ndarray:
        """``(h, 3)`` card codes, NO_CARD padded."""
        return self._cards[0]

    @cached_property
    def card_count(self) -> np.ndarray:
        return self._cards[1]

    @cached_property
    def _evaluated(self) -> tuple[np.ndarray, np.ndarray]:
        return evaluate(self.cards)

    @cached_property
    def category(self) -> np.ndarray:
        """``STRAIGHT_FLUSH`` ... ``HIGH_CARD``; -1 for a hand that does not hold three real cards."""
        return self._evaluated[0]

    @cached_property
    def score(self) -> np.ndarray:
        return self._evaluated[1]

    @cached_property
    def readable(self) -> np.ndarray:
        """The hand holds three real cards."""
        return (self.card_count == 3) & (self.score >= 0)

    @cached_property
    def played(self) -> np.ndarray:
        """The patron placed a play bet (decision ``play``)."""
        return to_numpy(pc.equal(self.hands.field("decision"), "play"), False).astype(bool)

    @cached_property
    def folded(self) -> np.ndarray:
        return ~self.played

    @cached_property
    def ante(self) -> np.ndarray:
        return self.hand_field("ante", 0.0)

    @cached_property
    def play(self) -> np.ndarray:
        return self.hand_field("play", 0.0)

    @cached_property
    def net_ante(self) -> np.ndarray:
        return self.hand_field("net_ante", 0.0)

    @cached_property
    def net_play(self) -> np.ndarray:
        return self.hand_field("net_play", 0.0)

    @cached_property
    def ante_bonus(self) -> np.ndarray:
        """The ante bonus paid (0 when none)."""
        return self.hand_field("ante_bonus", 0.0)

    @cached_property
    def has_pair_plus(self) -> np.ndarray:
        """A pair plus wager or net is recorded."""
        recorded = pc.or_(self.hands.field("pair_plus").is_valid(), self.hands.field("net_pair_plus").is_valid())
        return recorded.to_numpy(zero_copy_only=False)

    @cached_property
    def pair_plus(self) -> np.ndarray:
        return self.hand_field("pair_plus", 0.0)

    @cached_property
    def net_pair_plus(self) -> np.ndarray:
        return self.hand_field("net_pair_plus", 0.0)

    @cached_property
    def in_completed_round(self) -> np.ndarray:
        """The hand's round was played to the end (not void, not dead)."""
        return self.completed[self.hand_round]

    # ---- the hand against the dealer ---------------------------------------------------------------------
    @cached_property
    def dealer_qualified(self) -> np.ndarray:
        """The dealer of the hand's round qualifies."""
        return self.dealer_qualifies[self.hand_round]

    @cached_property
    def _versus_dealer(self) -> np.ndarray:
        return np.sign(self.score - self.dealer_score[self.hand_round])

    @cached_property
    def beats_dealer(self) -> np.ndarray:
        return self._versus_dealer > 0

    @cached_property
    def dealer_beats(self) -> np.ndarray:
        return self._versus_dealer < 0

    @cached_property
    def ties_dealer(self) -> np.ndarray:
        return self._versus_dealer == 0

    @cached_property
    def settled_against_dealer(self) -> np.ndarray:
        """A played hand of a completed round, the hand and the dealer's hand readable: (b) and (c) apply."""
        return self.played & self.in_completed_round & self.readable & self.dealer_readable[self.hand_round]

    # ---- the posted paytable (per hand) ------------------------------------------------------------------
    def _odds(self, odds_of: Callable[[dict[str, Any]], float]) -> np.ndarray | float:
        """A posted odds per hand (:meth:`per_table`): one number when every table of the batch posts the same."""
        values, index = self.per_table(odds_of)
        return float(values[0]) if len(values) == 1 else np.array(values, dtype=np.float64)[index[self.hand_round]]

    def _odds_by_category(self, odds_of: Callable[[dict[str, Any]], np.ndarray]) -> np.ndarray:
        """The posted odds of each hand's category (``odds_of`` gives one per category)."""
        values, index = self.per_table(odds_of)
        odds = np.array(values, dtype=np.float64)
        return odds[0][self.category] if len(values) == 1 else odds[index[self.hand_round], self.category]

    @cached_property
    def ante_odds(self) -> np.ndarray | float:
        """The posted ante win odds, never below the 1:1 minimum."""
        return self._odds(lambda s: max(float(s["ante"]), WIN_MINIMUM))

    @cached_property
    def play_odds(self) -> np.ndarray | float:
        """The posted play win odds, never below the 1:1 minimum."""
        return self._odds(lambda s: max(float(s["play"]), WIN_MINIMUM))

    @cached_property
    def ante_bonus_odds(self) -> np.ndarray:
        """The posted ante bonus odds of the hand's category (never below (d)'s minimums; 0 for none)."""
        return self._odds_by_category(lambda s: _by_category(ante_bonus_odds(s), 0.0))

    @cached_property
    def pair_plus_odds(self) -> np.ndarray:
        """The posted pair plus odds of the hand's category; -1 (the wager loses) below a pair."""
        return self._odds_by_category(lambda s: _by_category(pair_plus_odds(s), -1.0))

    # ---- what the regulation and the paytable require (per hand) -----------------------------------------
    @cached_property
    def _expected_ante_and_play(self) -> tuple[np.ndarray, np.ndarray]:
        return ante_and_play_nets(self.ante, self.play, self.dealer_qualified, self.beats_dealer, self.dealer_beats,
                                  self.ante_odds, self.play_odds)

    @cached_property
    def expected_net_ante(self) -> np.ndarray:
        """(c) at the posted odds (meaningful for hands settled against the dealer)."""
        return self._expected_ante_and_play[0]

    @cached_property
    def expected_net_play(self) -> np.ndarray:
        return self._expected_ante_and_play[1]

    @cached_property
    def _ante_differs(self) -> np.ndarray:
        return self.settled_against_dealer & money_differs(self.net_ante, self.expected_net_ante, self.unit)

    @cached_property
    def _play_differs(self) -> np.ndarray:
        return self.settled_against_dealer & money_differs(self.net_play, self.expected_net_play, self.unit)

    @cached_property
    def settled_as_if_qualification_opposite(self) -> np.ndarray:
        """Per round, (b): some played hand is not settled as the cards require, and every played hand is
        settled exactly as the posted paytable settles it had the dealer's qualification been the opposite."""
        n, hr = self.n, self.hand_round
        wrong = np.bincount(hr[self._ante_differs | self._play_differs], minlength=n) > 0
        if not wrong.any():
            return wrong
        sub = np.flatnonzero(self.settled_against_dealer & wrong[hr])

        def at(odds: np.ndarray | float) -> np.ndarray | float:
            return odds if np.ndim(odds) == 0 else odds[sub]

        opposite_ante, opposite_play = ante_and_play_nets(
            self.ante[sub], self.play[sub], ~self.dealer_qualified[sub], self.beats_dealer[sub],
            self.dealer_beats[sub], at(self.ante_odds), at(self.play_odds))
        as_opposite = (~money_differs(self.net_ante[sub], opposite_ante, self.unit)
                       & ~money_differs(self.net_play[sub], opposite_play, self.unit))
        return wrong & (np.bincount(hr[sub], minlength=n) == np.bincount(hr[sub[as_opposite]], minlength=n))

    @cached_property
    def in_opposite_round(self) -> np.ndarray:
        """The hand's round is a (b) round."""
        return self.settled_as_if_qualification_opposite[self.hand_round]

    @cached_property
    def ante_net_wrong(self) -> np.ndarray:
        """Settled against the dealer outside a (b) round, and the ante net is not the posted settlement."""
        return self._ante_differs & ~self.in_opposite_round

    @cached_property
    def play_net_wrong(self) -> np.ndarray:
        return self._play_differs & ~self.in_opposite_round

    @cached_property
    def ante_paid_below_even(self) -> np.ndarray:
        """Among wrong ante nets: recorded below a 1:1 win."""
        return _below(self.net_ante, self.ante * WIN_MINIMUM, self.ante_net_wrong, self.unit)

    @cached_property
    def play_paid_below_even(self) -> np.ndarray:
        return _below(self.net_play, self.play * WIN_MINIMUM, self.play_net_wrong, self.unit)

    @cached_property
    def earns_ante_bonus(self) -> np.ndarray:
        """(d): a played straight flush, three of a kind or straight, whatever the dealer holds."""
        return self.played & (_MINIMUM_BONUS_ODDS[self.category] > 0)

    @cached_property
    def expected_ante_bonus(self) -> np.ndarray:
        return np.where(self.earns_ante_bonus, self.ante * self.ante_bonus_odds, 0.0)

    @cached_property
    def ante_bonus_checked(self) -> np.ndarray:
        """A hand of a completed round whose category is known or that folded (a folded hand earns none)."""
        return self.in_completed_round & (self.folded | self.readable)

    @cached_property
    def ante_bonus_wrong(self) -> np.ndarray:
        return self.ante_bonus_checked & money_differs(self.ante_bonus, self.expected_ante_bonus, self.unit)

    @cached_property
    def ante_bonus_below_minimum(self) -> np.ndarray:
        """Among hands earning an ante bonus paid wrong: paid below (d)'s minimum odds."""
        minimum = self.ante * _MINIMUM_BONUS_ODDS[self.category]
        return _below(self.ante_bonus, minimum, self.earns_ante_bonus & self.ante_bonus_wrong, self.unit)

    @cached_property
    def expected_net_pair_plus(self) -> np.ndarray:
        return self.pair_plus * self.pair_plus_odds

    @cached_property
    def pair_plus_wrong(self) -> np.ndarray:
        """A pair plus wager of a completed round, the hand readable, whose net is not the paytable's."""
        return (self.has_pair_plus & self.in_completed_round & self.readable
                & money_differs(self.net_pair_plus, self.expected_net_pair_plus, self.unit))

    # ---- wager nets (the shared void check) ------------------------------------------------------------
    def wager_nets(self, rounds: np.ndarray) -> Nets:
        """The ante, play, ante bonus and (where wagered) pair plus nets of every hand of the rounds
        where ``rounds`` (per round, boolean) is True."""
        hand = np.flatnonzero(rounds[self.hand_round])
        pp = hand[self.has_pair_plus[hand]]
        hr, seat = self.hand_round, self.hand_seat
        return Nets(round=np.concatenate([hr[hand], hr[hand], hr[hand], hr[pp]]),
                    seat=np.concatenate([seat[hand], seat[hand], seat[hand], seat[pp]]),
                    what=np.repeat(_WAGERS, [len(hand)] * 3 + [len(pp)]),
                    net=np.concatenate([self.net_ante[hand], self.net_play[hand], self.ante_bonus[hand],
                                        self.net_pair_plus[pp]]))

    @cached_property
    def nets(self) -> Nets:
        """Every wager net of the batch (the shared void check asks :meth:`nets_of` for those of the
        void and dead rounds only, built from those rounds alone)."""
        return self.wager_nets(np.ones(self.n, bool))

    # ---- texts of the flagged hands ----------------------------------------------------------------------
    def rounded(self, values: np.ndarray) -> np.ndarray:
        """Exact amounts rounded as the paytable rounds them."""
        return money_round(values, self.unit, self.rounding)

    # ---- evidence for the words of a finding (asked for the flagged hands or rounds only) -------------
    def hand_evidence(self) -> dict[str, Any]:
        """What describes a patron hand, ``seat 3 Kc Ah Jd (high card)`` (:data:`HAND`), per hand."""
        return {"seat": self.hand_seat, "cards": lambda h: objects(list(self.cards[h])),
                "category": lambda h: np.array([*CATEGORY_NAMES, "unreadable"], dtype=object)[self.category[h]]}

    def dealer_evidence(self, hands: bool = True) -> dict[str, Any]:
        """What describes the dealer's hand, ``dealer Qh 3c 2d (qualifies)`` (:data:`DEALER`), per hand of a
        round (or per round)."""
        def rounds(at: np.ndarray) -> np.ndarray:
            return self.hand_round[at] if hands else at

        return {"dealer_cards": lambda at: objects(list(self.dealer_cards[rounds(at)])),
                "qualification": lambda at: np.where(self.dealer_qualifies[rounds(at)], "qualifies",
                                                     "does not qualify").astype(object)}

    def settlement_hits(self, ante: np.ndarray, play: np.ndarray) -> Hits:
        """One hit per hand whose ante and/or play net is flagged; amounts over the flagged wagers."""
        idx = np.flatnonzero(ante | play)
        a, p = ante[idx], play[idx]
        exp_ante, exp_play = self.rounded(self.expected_net_ante[idx]), self.rounded(self.expected_net_play[idx])
        net_ante, net_play = self.net_ante[idx], self.net_play[idx]
        expected = np.where(a, exp_ante, 0.0) + np.where(p, exp_play, 0.0)
        recorded = np.where(a, net_ante, 0.0) + np.where(p, net_play, 0.0)

        def bets(ante_nets: np.ndarray, play_nets: np.ndarray) -> np.ndarray:
            """The flagged wagers of each hand with their nets."""
            return objects([[("ante", x)] * bool(a[k]) + [("play", y)] * bool(p[k])
                            for k, (x, y) in enumerate(zip(ante_nets, play_nets, strict=True))])

        hits = Hits.at(self.hand_round[idx], items=idx, case="settlement", seat=self.hand_seat,
                       expected_amount=expected, recorded_amount=recorded, evidence={**self.hand_evidence(), **self.dealer_evidence(), "ante": self.ante, "play": self.play})
        hits.evidence.update(recorded_bets=bets(net_ante, net_play), expected_bets=bets(exp_ante, exp_play),
                             net_ante=np.where(a, net_ante, np.nan), expected_ante=np.where(a, exp_ante, np.nan),
                             net_play=np.where(p, net_play, np.nan), expected_play=np.where(p, exp_play, np.nan))
        return hits

    def ante_bonus_hits(self, mask: np.ndarray) -> Hits:
        """One hit per hand whose ante bonus is flagged."""
        idx = np.flatnonzero(mask)
        expected, recorded = self.rounded(self.expected_ante_bonus[idx]), self.ante_bonus[idx]
        hits = Hits.at(self.hand_round[idx], items=idx, case="ante_bonus", seat=self.hand_seat,
                       expected_amount=expected, recorded_amount=recorded, evidence={
            **self.hand_evidence(), "ante": self.ante,
            "played": lambda h: np.where(self.played[h], "played", "folded").astype(object)})
        hits.evidence.update(bonus=recorded, expected_bonus=expected)
        return hits

    def pair_plus_hits(self, mask: np.ndarray) -> Hits:
        """One hit per hand whose pair plus net is off its paytable."""
        idx = np.flatnonzero(mask)
        expected, recorded = self.rounded(self.expected_net_pair_plus[idx]), self.net_pair_plus[idx]
        hits = Hits.at(self.hand_round[idx], items=idx, case="pair_plus", seat=self.hand_seat,
                       expected_amount=expected, recorded_amount=recorded, evidence={**self.hand_evidence(), "pair_plus": self.pair_plus})
        hits.evidence.update(net=recorded, expected=expected)
        return hits

    # ---- integrity ---------------------------------------------------------------------------------------
    @cached_property
    def integrity_flagged(self) -> np.ndarray:
        """Per round: a card repeated among the dealer's and all hands, a joker, or a hand (or the dealer's)
        of other than three real cards."""
        flagged = ~self.dealer_readable | distinct_cards_short(self.dealer_cards, self.cards, self.hand_round)
        unreadable = ~self.readable
        if unreadable.any():
            flagged |= np.bincount(self.hand_round[unreadable], minlength=self.n) > 0
        return flagged

    def integrity_problems(self, rows: np.ndarray) -> np.ndarray:
        """What is wrong with the cards of each of the (flagged) ``rows``."""
        dealer = self.dealer_cards if self.dealer_card_count.max(initial=0) <= 3 else padded(
            self.table["dealer_cards"])[0]
        cards = self.cards if self.card_count.max(initial=0) <= 3 else padded(self.hands.field("cards"))[0]
        seat = self.hand_seat
        # the hands of the flagged rounds (hands are in round order): hand ``lo[k] + j`` is round k's j-th
        lo, hi = np.searchsorted(self.hand_round, rows), np.searchsorted(self.hand_round, rows + 1)
        count = hi - lo
        local = np.repeat(np.arange(len(rows)), count)
        position = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        sel = lo[local] + position
        # a matrix of every card of the flagged rounds: the dealer's, then each hand's
        width, dw = max(cards.shape[1], 1), max(dealer.shape[1], 1)
        matrix = np.full((len(rows), dw + width * int(count.max(initial=0))), -1, dtype=np.int8)
        matrix[:, :dealer.shape[1]] = dealer[rows]
        cols = dw + position[:, None] * width + np.arange(cards.shape[1])[None, :]
        matrix[local[:, None], cols] = cards[sel]
        repeated, first = repeated_in_round(np.where(matrix == JOKER, -1, matrix).astype(np.int8))
        out = np.empty(len(rows), dtype=object)
        for k, r in enumerate(rows):  # flagged rounds only
            mine = range(int(lo[k]), int(hi[k]))
            parts = []
            if repeated[k]:
                code = int(first[k])
                holders = (["dealer"] if (dealer[r] == code).any() else []) + [
                    f"seat {int(seat[j])}" for j in mine if (cards[j] == code).any()]
                parts.append(f"card {cards_str([code])} dealt twice in a one-deck round ({', '.join(holders)})")
            if (matrix[k] == JOKER).any():
                parts.append("a joker in three card poker")
            sizes = [f"dealer {int(self.dealer_card_count[r])}"] if self.dealer_card_count[r] != 3 else []
            sizes += [f"seat {int(seat[j])} {int(self.card_count[j])}" for j in mine if self.card_count[j] != 3]
            if sizes:
                parts.append(f"hand of other than three cards ({', '.join(sizes)})")
            out[k] = "; ".join(parts)
        return out
