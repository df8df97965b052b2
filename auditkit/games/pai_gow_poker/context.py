"""The facts of a batch of pai gow poker rounds that the rules of 68 IAC 10-9-17 read.

One :class:`PaiGowPoker` context per batch; each fact is a cached property, computed on
first use, so a fact no selected rule needs is never computed (nor its columns read).

A round's ``events`` are read in order: they are flattened with their round and their
position in it (:attr:`PaiGowPoker.event_round`, :attr:`PaiGowPoker.event_position`), and
per-round facts (the first or last position of an event type, the sum of face-up counts,
the dice of the last roll) come from :meth:`PaiGowPoker.first` and :meth:`PaiGowPoker.last`
over the round-ordered events, never from a loop per round. Hands are flattened likewise,
one entry per patron hand with its round (:attr:`PaiGowPoker.hand_round`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import NO_CARD
from ...columns import flat_values, lengths
from ...rules.context import Context, Nets, cached_property, numbers
from ...rules.registry import preparer
from . import kernels
from .deal import CARDS_PER_HAND, CARDS_REMAINING, EVENT, EVENT_TYPES, HIGH_HAND, LOW_HAND, STACKS, dice_position
from .hands import fouled_columns, rank2_columns, rank5_columns
from .paytable import exact_net, hands_won

__all__ = ["GAME", "PaiGowPoker", "NONE"]

GAME = "pai_gow_poker"
NONE = np.iinfo(np.int64).max
"""Position of an event a round does not have (after any event)."""
_EVENT_NAMES = pa.array(EVENT_TYPES)


def _dice_totals(dice: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per row of a ``list<int8>`` dice column, the sum of its dice (0 for none; a record holds three)."""
    n = lengths(dice)
    values = np.maximum(flat_values(dice).to_numpy(zero_copy_only=False), 0).astype(np.int64)
    totals = np.zeros(len(n), dtype=np.int64)
    some = n > 0
    totals[some] = np.add.reduceat(values, kernels.bounds(n)[:-1][some])
    return totals


def _scores(high: np.ndarray, low: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int32 five-card and two-card scores of padded settings ``[m, 5]`` and ``[m, 2]`` (-1 where incomplete)."""
    lo = np.ascontiguousarray(low.T)
    return rank5_columns(list(np.ascontiguousarray(high.T))), rank2_columns(lo[0], lo[1])


@preparer(GAME)
class PaiGowPoker(Context):
    """Facts of one batch of pai gow poker rounds."""

    section = GAME
    net_columns = ("status", "hands", "wagers")  # what :attr:`nets` reads (the void check takes its rounds with them)

    # ---- events (``events``, read by the shared Context), in round order ----------------------------
    @cached_property
    def event_position(self) -> np.ndarray:
        """Each event's position in its round (0 = first)."""
        starts = kernels.bounds(self.events_per_round)[:-1]
        return np.arange(len(self.event_round), dtype=np.int64) - starts[self.event_round]

    @cached_property
    def event_type(self) -> np.ndarray:
        """Each event's code in :data:`EVENT` (-1 for an unknown type)."""
        return numbers(pc.index_in(self.events.field("type"), value_set=_EVENT_NAMES), -1, np.int8)

    @cached_property
    def event_count(self) -> np.ndarray:
        """``count`` of each event (cards found face up, stacks dealt); 1 when not recorded."""
        return numbers(self.events.field("count"), 1, np.int64)

    @cached_property
    def event_exposed(self) -> np.ndarray:
        return numbers(self.events.field("exposed"), False, bool)

    @cached_property
    def event_misdeal(self) -> np.ndarray:
        return numbers(self.events.field("misdeal"), False, bool)

    def of_type(self, name: str) -> np.ndarray:
        """Per event, whether it is of the type ``name``."""
        return self.event_type == EVENT[name]

    def first(self, mask: np.ndarray) -> np.ndarray:
        """Per round, the position of the first event where ``mask`` holds (NONE if none)."""
        out = np.full(self.n, NONE, dtype=np.int64)
        r, p = self.event_round[mask], self.event_position[mask]
        new = np.r_[True, r[1:] != r[:-1]] if len(r) else np.empty(0, bool)
        out[r[new]] = p[new]
        return out

    def last(self, mask: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
        """Per round, the position (or ``values``) of the last event where ``mask`` holds (-1 if none)."""
        out = np.full(self.n, -1, dtype=np.int64)
        r = self.event_round[mask]
        v = (self.event_position if values is None else values)[mask]
        end = np.r_[r[1:] != r[:-1], True] if len(r) else np.empty(0, bool)
        out[r[end]] = v[end]
        return out

    def has_event(self, mask: np.ndarray) -> np.ndarray:
        """Per round, whether some event satisfies ``mask``."""
        return np.bincount(self.event_round[mask], minlength=self.n) > 0

    # ---- status -----------------------------------------------------------------------------------
    @cached_property
    def void(self) -> np.ndarray:
        return numbers(pc.equal(self.table["status"], "void"), False, bool)

    @cached_property
    def dead(self) -> np.ndarray:
        return numbers(pc.equal(self.table["status"], "dead"), False, bool)

    @cached_property
    def reshuffle_at(self) -> np.ndarray:
        """Position of the round's last ``reshuffle`` event (-1 if none)."""
        return self.last(self.of_type("reshuffle"))

    # ---- (a) cards found face up ------------------------------------------------------------------
    @cached_property
    def face_up_cards(self) -> np.ndarray:
        """Cards found face up in the deck: the ``face_up_card`` counts summed over the round."""
        sel = self.of_type("face_up_card")
        return np.bincount(self.event_round[sel], weights=self.event_count[sel], minlength=self.n).astype(np.int64)

    @cached_property
    def more_than_one_face_up(self) -> np.ndarray:
        """More than one card found face up: counts summing over 1, or several ``face_up_card`` events."""
        events = np.bincount(self.event_round[self.of_type("face_up_card")], minlength=self.n)
        return (self.face_up_cards > 1) | (events > 1)

    @cached_property
    def first_face_up_at(self) -> np.ndarray:
        return self.first(self.of_type("face_up_card"))

    # ---- (b), (c)(1) the dice -------------------------------------------------------------------
    @cached_property
    def deal_at(self) -> np.ndarray:
        """Position of the first ``stacks_dealt`` event: the deal (NONE if not recorded)."""
        return self.first(self.of_type("stacks_dealt"))

    @cached_property
    def last_no_roll_at(self) -> np.ndarray:
        return self.last(self.of_type("no_roll"))

    @cached_property
    def last_roll_before_deal_at(self) -> np.ndarray:
        return self.last(self.of_type("roll") & (self.event_position < self.deal_at[self.event_round]))

    @cached_property
    def dice_used(self) -> np.ndarray:
        """Total of the dice used: the last ``roll`` event's, else the round's ``dice``."""
        last_roll = self.last(self.of_type("roll"), _dice_totals(self.events.field("dice")))
        return np.where(last_roll >= 0, last_roll, _dice_totals(self.table["dice"]))

    @cached_property
    def first_position(self) -> np.ndarray:
        """The position recorded as receiving the first stack."""
        return numbers(self.table["first_position"], 0, np.int64)

    @cached_property
    def position_of_dice(self) -> np.ndarray:
        """The position the dice used give for the first stack."""
        return dice_position(self.dice_used)

    @cached_property
    def wrong_first_position(self) -> np.ndarray:
        return self.first_position != self.position_of_dice

    # ---- (c)(2), (c)(3), (d), (g), (h) events of the deal -------------------------------------------
    @cached_property
    def exposed_out_of_order_at(self) -> np.ndarray:
        """Position of the first card drawn out of order and exposed (NONE if none)."""
        return self.first(self.of_type("card_out_of_order") & self.event_exposed)

    @cached_property
    def unexposed_out_of_order(self) -> np.ndarray:
        """The round records a card drawn out of order without its face exposed."""
        return self.has_event(self.of_type("card_out_of_order") & ~self.event_exposed)

    @cached_property
    def dealer_card_exposed_at(self) -> np.ndarray:
        return self.first(self.of_type("dealer_card_exposed"))

    @cached_property
    def card_exposed_during_stacks_at(self) -> np.ndarray:
        return self.first(self.of_type("card_exposed_during_stacks"))

    @cached_property
    def wrong_stacks_at(self) -> np.ndarray:
        """Position of the first ``stacks_dealt`` event with a count other than seven (NONE if none)."""
        return self.first(self.of_type("stacks_dealt") & (self.event_count != STACKS))

    @cached_property
    def stacks_dealt(self) -> np.ndarray:
        """The count of the last ``stacks_dealt`` event other than seven (-1 if none)."""
        return self.last(self.of_type("stacks_dealt") & (self.event_count != STACKS), self.event_count)

    # ---- (e) cards dealt -----------------------------------------------------------------------------
    @cached_property
    def hand_size(self) -> np.ndarray:
        """Cards dealt to each hand."""
        return lengths(self.hands.field("cards"))

    @cached_property
    def dealer_size(self) -> np.ndarray:
        """Cards dealt to the dealer."""
        return lengths(self.table["dealer_cards"])

    @cached_property
    def dealer_cards(self) -> np.ndarray:
        """The dealer's cards as a padded int8 matrix, at least seven wide."""
        return kernels.cards_matrix(self.table["dealer_cards"], max(CARDS_PER_HAND, int(self.dealer_size.max(initial=0))))[0]

    @cached_property
    def wrong_card_count(self) -> np.ndarray:
        """A hand or the dealer holds other than seven cards."""
        short = self.hand_size != CARDS_PER_HAND
        return (np.bincount(self.hand_round[short], minlength=self.n) > 0) | (self.dealer_size != CARDS_PER_HAND)

    # ---- (i) cards remaining ---------------------------------------------------------------------------
    @cached_property
    def cards_remaining(self) -> np.ndarray:
        """Cards left after the deal, -1 when not recorded."""
        return numbers(self.table["cards_remaining"], -1, np.int64)

    @cached_property
    def wrong_cards_remaining(self) -> np.ndarray:
        """Other than four cards remaining (when recorded)."""
        return (self.cards_remaining >= 0) & (self.cards_remaining != CARDS_REMAINING)

    @cached_property
    def supervisor_called(self) -> np.ndarray:
        return self.has_event(self.of_type("supervisor_called"))

    @cached_property
    def misdeal_found(self) -> np.ndarray:
        """A supervisor called found a misdeal."""
        return self.has_event(self.of_type("supervisor_called") & self.event_misdeal)

    # ---- (d) what voids a round -----------------------------------------------------------------------
    @cached_property
    def void_called_for(self) -> np.ndarray:
        """The round has an irregularity that voids it (or makes its hands dead): (a), (c)(1), (c)(2),
        (c)(3), (e), (g), (h), or other than four cards remaining unless a supervisor found no misdeal."""
        unresolved_count = self.wrong_cards_remaining & ~(self.supervisor_called & ~self.misdeal_found)
        return (self.more_than_one_face_up | self.wrong_first_position | (self.exposed_out_of_order_at != NONE)
                | (self.dealer_card_exposed_at != NONE) | self.wrong_card_count
                | (self.card_exposed_during_stacks_at != NONE) | (self.wrong_stacks_at != NONE) | unresolved_count)

    # ---- (f) the dealer's setting and the house way ---------------------------------------------------
    @cached_property
    def dealer_final_setting(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dealer's final setting: the last ``dealer_hand_reset`` event's, else ``dealer.high/low``.

        ``(high [n, 5], low [n, 2], complete [n])``; complete where a 5 + 2 setting is recorded.
        """
        high, nh = kernels.cards_matrix(self.table["dealer_high"], HIGH_HAND)
        low, nl = kernels.cards_matrix(self.table["dealer_low"], LOW_HAND)
        reset = self.last(self.of_type("dealer_hand_reset"), np.arange(len(self.event_type), dtype=np.int64))
        has = np.flatnonzero(reset >= 0)
        if len(has):  # the settings of the rounds' last reset events only
            at = pa.array(reset[has])
            high[has], nh[has] = kernels.cards_matrix(self.events.field("high").take(at), HIGH_HAND)
            low[has], nl[has] = kernels.cards_matrix(self.events.field("low").take(at), LOW_HAND)
        return high, low, (nh == HIGH_HAND) & (nl == LOW_HAND)

    @cached_property
    def dealer_reset(self) -> np.ndarray:
        """The round records a ``dealer_hand_reset``."""
        return self.has_event(self.of_type("dealer_hand_reset"))

    @cached_property
    def dealer_sets_own_cards(self) -> np.ndarray:
        """The dealer's final setting splits the dealer's own seven cards."""
        high, low, _ = self.dealer_final_setting
        return kernels.same_seven(np.concatenate([high, low], axis=1), self.dealer_cards[:, :CARDS_PER_HAND])

    @cached_property
    def dealer_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Scores (five-card, two-card) of the dealer's final setting in completed rounds; -1 elsewhere."""
        high, low, complete = self.dealer_final_setting
        hi, lo = _scores(high, low)
        off = ~(complete & self.completed)
        hi[off] = -1
        lo[off] = -1
        return hi.astype(np.int64), lo.astype(np.int64)

    @cached_property
    def house_way_checked(self) -> np.ndarray:
        """Rounds whose dealer setting is judged: completed, with seven dealer cards."""
        return self.completed & (self.dealer_size == CARDS_PER_HAND)

    @cached_property
    def house_way_setting(self) -> tuple[np.ndarray, np.ndarray]:
        """The house way setting ``(high [n, 5], low [n, 2])`` of the dealer's seven cards where
        :attr:`house_way_checked` (NO_CARD elsewhere), by each table's configured house way."""
        from .house_way import set_hands

        high = np.full((self.n, HIGH_HAND), NO_CARD, dtype=np.int8)
        low = np.full((self.n, LOW_HAND), NO_CARD, dtype=np.int8)
        checked = self.house_way_checked
        rows = np.flatnonzero(checked)
        if not len(rows):
            return high, low
        ways = self.house_ways
        if len(ways) == 1:  # one house way: set every row (no gathers), keep the checked ones
            high, low = set_hands(self.dealer_cards[:, :CARDS_PER_HAND], ways[0][0])
            high[~checked] = NO_CARD
            low[~checked] = NO_CARD
            return high, low
        for way, uses in ways:
            r = rows[uses[rows]]
            high[r], low[r] = set_hands(self.dealer_cards[r, :CARDS_PER_HAND], way)
        return high, low

    @cached_property
    def house_way_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Scores (five-card, two-card) of the house way setting (-1 where not checked)."""
        return _scores(*self.house_way_setting)

    @cached_property
    def house_ways(self) -> list[tuple[Any, np.ndarray]]:
        """Each distinct house way of the batch's tables, with the mask of the rounds that use it."""
        from .house_way import load_house_way

        specs, index = self.per_table(self._house_way_spec)
        return [(load_house_way(spec), index == k) for k, spec in enumerate(specs)]

    @staticmethod
    def _house_way_spec(section: dict[str, Any]) -> Any:
        """The house way a table's section configures: a built-in name, or a table of ``house_ways``."""
        spec = section.get("house_way", "default")
        named = section.get("house_ways", {})
        return named[spec] if isinstance(spec, str) and spec in named else spec

    # ---- paytable: each hand against the dealer ---------------------------------------------------------
    @cached_property
    def hand_setting(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each hand's recorded ``high [m, 5]``, ``low [m, 2]``, and whether both are complete."""
        high, nh = kernels.cards_matrix(self.hands.field("high"), HIGH_HAND)
        low, nl = kernels.cards_matrix(self.hands.field("low"), LOW_HAND)
        return high, low, (nh == HIGH_HAND) & (nl == LOW_HAND)

    @cached_property
    def hand_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """int32 scores (five-card, two-card) of each hand's recorded setting (-1 where incomplete)."""
        high, low, _ = self.hand_setting
        return _scores(high, low)

    @cached_property
    def hand_fouled(self) -> np.ndarray:
        """The hand's two-card hand outranks its five-card hand (or its setting is incomplete)."""
        return fouled_columns(*self.hand_scores)

    @cached_property
    def hand_settled(self) -> np.ndarray:
        """Hands judged: of completed rounds, with the hand's and the dealer's settings complete."""
        _, _, dealer_complete = self.dealer_final_setting
        return (self.completed & dealer_complete)[self.hand_round] & self.hand_setting[2]

    @cached_property
    def hands_won(self) -> np.ndarray:
        """How many of its two hands each hand wins against the dealer's (0, 1, 2)."""
        d_hi, d_lo = self.dealer_scores
        dealer_fouled = fouled_columns(d_hi, d_lo)
        p_hi, p_lo = self.hand_scores
        r = self.hand_round
        return hands_won(p_hi, p_lo, self.hand_fouled, d_hi.astype(np.int32)[r], d_lo.astype(np.int32)[r],
                         dealer_fouled[r])

    @cached_property
    def hand_wager(self) -> np.ndarray:
        return self.hand_field("wager", 0.0, np.float64)

    @cached_property
    def hand_net(self) -> np.ndarray:
        """Each hand's recorded net."""
        return self.hand_field("net", 0.0, np.float64)

    @cached_property
    def hand_exact_net(self) -> np.ndarray:
        """Each hand's exact net by the paytable (``win`` less ``commission``), before rounding."""
        return exact_net(self.hands_won, self.hand_wager, self.hand_param("win"), self.hand_param("commission"))

    def hand_param(self, key: str) -> np.ndarray | float:
        """A numeric setting per hand (its table's, or its round's own house rule): one number when every
        round of the batch has the same."""
        per_round = self.param(key)
        uniform = len(per_round) and (per_round == per_round[0]).all()
        return float(per_round[0]) if uniform else per_round[self.hand_round]

    # ---- void: every wager's net --------------------------------------------------------------------------
    @cached_property
    def nets(self) -> Nets:
        """Every hand's net, then every ``wagers`` entry's."""
        hands = Nets(self.hand_round, self.hand_seat, np.broadcast_to(np.array("hand", dtype=object), self.hand_round.shape),
                     self.hand_net)
        if not len(self.wagers):
            return hands
        wagers = Nets(self.wager_round, self.wager_seat, numbers(self.wager_bet, "wager", object), self.wager_net)
        return Nets.join(hands, wagers)

    # ---- integrity -------------------------------------------------------------------------------------------
    @cached_property
    def round_cards(self) -> tuple[np.ndarray, np.ndarray]:
        """Per round, the OR of the bits of every card dealt (dealer and patrons, one bit per card code)
        and how many cards with a valid code were dealt."""
        codes = flat_values(self.hands.field("cards")).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
        by_round = kernels.bounds(self.hand_size, np.int32)[kernels.bounds(self.hands_per_round)]
        hand_bits, hand_count = kernels.card_union(codes, by_round)
        dealer = flat_values(self.table["dealer_cards"]).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
        dealer_bits, dealer_count = kernels.card_union(dealer, kernels.bounds(self.dealer_size))
        return hand_bits | dealer_bits, hand_count + dealer_count

    @cached_property
    def distinct_cards(self) -> np.ndarray:
        """Distinct cards dealt in each round."""
        return np.bitwise_count(self.round_cards[0]).astype(np.int64)

    @cached_property
    def cards_dealt(self) -> np.ndarray:
        """Cards (with a valid code) dealt in each round."""
        return self.round_cards[1].astype(np.int64)
