"""Blackjack: 68 IAC 10-2-4 (wagers, wagering rules, outcomes), plus paytable, void, integrity
and the house rule of the dealer's drawing. One function per citation, over the facts of
:class:`.context.Blackjack`.

Outcome findings cite the rule the correct result rests on (rules catalog): ``(a)(1)`` dealer
busts, ``(a)(2)`` higher total, ``(a)(3)`` player blackjack, ``(b)`` equal totals, both
blackjack, or dealer blackjack against a player 21, ``loss`` player busts or the dealer's total
(or blackjack) beats the player's. A hand whose result has the right direction (win / push /
loss) but the wrong amount is a ``paytable`` finding instead.

Rounds that are not ``completed`` (void, dead) have the shared ``void`` check and skip the
outcome, paytable and dealer-play checks; so does a round holding a joker (an ``integrity``
finding: its cards are not a blackjack deal). A seat that took even money is settled by that
wager, so its hand is not compared with the dealer's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import IS_ACE, JOKER
from ...columns import flat_values, padded, parents, struct_field, to_numpy
from ...money import money_differs, money_round
from ...paytables import Config
from ...rules.context import objects
from ...rules.integrity import SHOE_EXCESS, shoe_excess, shoe_groups
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, VOID_WORDS, void_round_nets
from .context import HAND, Blackjack, card_lists
from .hands import ACTIONS, BLACKJACK_POINTS, best_total, dealer_must_draw

__all__ = ["Blackjack"]

GAME = "blackjack"
SECTION = "68 IAC 10-2-4"
HANDS = ("status", "dealer_cards", "hands", "wagers")
"""The stored columns an outcome or payout of a hand reads (status and jokers, even money)."""
NONE = Hits.none()


# ---- findings ---------------------------------------------------------------------------------
def _expected(ctx: Blackjack, exact: np.ndarray) -> np.ndarray:
    return money_round(exact, ctx.unit, ctx.rounding)


MONEY = "; recorded {net:net}, expected {expected:net}"


def _hand_words(says: str | dict[str, str]) -> dict[str, Any]:
    """The words of a finding on a hand's result: the hand against the dealer's, what the rule says of
    it (one text, or one per case), the recorded and expected nets."""
    message = ({case: f"{HAND}: {text}{MONEY}" for case, text in says.items()} if isinstance(says, dict)
               else f"{HAND}: {says}{MONEY}")
    return {"message": message, "expected": "{expected:net}", "recorded": "{net:net}"}


def _money_hits(rows: np.ndarray, items: np.ndarray, expected: np.ndarray, recorded: np.ndarray, seat: np.ndarray,
                **fields: Any) -> Hits:
    """Hits on the ``items`` (hands or wagers, of rounds ``rows``) whose recorded net is not the expected
    one; ``expected`` and ``recorded`` are one per hit, ``seat`` (of every item) and the other evidence per item."""
    hits = Hits.at(rows, items=items, seat=seat, expected_amount=expected, recorded_amount=recorded, **fields)
    hits.evidence.update(net=recorded, expected=expected)
    return hits


def _hand_hits(ctx: Blackjack, hands: np.ndarray, case: Any = None) -> Hits:
    """Hits on the hands of mask ``hands`` (expected: their result's net); ``case`` picks the words."""
    idx = np.flatnonzero(hands)
    expected = _expected(ctx, ctx.expected_net[idx])
    return _money_hits(ctx.hand_round[idx], idx, expected, ctx.net[idx], ctx.hand_seat, case=case,
                       evidence=ctx.hand_evidence())


# ---- (a) table limits ---------------------------------------------------------------------------
@rule("blackjack.a", games=(GAME,), citation=f"{SECTION}(a)", severity="medium",
      summary="Each hand's initial wager (before any double) is within the table minimum and maximum",
      columns=("table_min", "table_max", "hands"), params=("table_min", "table_max"),
      needs=("wagers",),
      message={f"{side}{doubled}": "seat {seat:int} hand {hand:int}: initial wager {initial_wager:money} " + limit
               + (" (wager {wager:money} doubled)" if doubled else "")
               for side, limit in (("below", "below the table minimum {table_min:money}"),
                                   ("above", "above the table maximum {table_max:money}"))
               for doubled in ("", "/doubled")},
      expected="{table_min:money}-{table_max:money}", recorded="{initial_wager:money}")
def a_table_limits(ctx: Blackjack) -> Hits:
    """(a) "... before the first card is dealt for a round of play, a player may make a wager in an
    amount not less than the minimum nor more than the maximum amount set for the table by the
    riverboat licensee."

    Catalog: "each hand's ``initial_wager`` (its wager before any double) is within the table's
    minimum and maximum". Limits are the round's ``table_min``/``table_max``, else the configured
    ones; an unknown limit (0, inf) passes. Split hands repeat the seat's wager: one hit per seat.
    """
    r = ctx.hand_round
    lo, hi = ctx.table_min[r], ctx.table_max[r]
    below = ctx.initial_wager < lo - 1e-9
    bad = np.flatnonzero(below | (ctx.initial_wager > hi + 1e-9))
    _, first = np.unique(r[bad] * (1 << 32) + ctx.hand_seat[bad], return_index=True)
    idx = bad[np.sort(first)]
    return Hits.at(r[idx], items=idx, seat=ctx.hand_seat,
                   case=lambda h: np.where(below[h], "below", "above").astype(object)
                   + np.where(ctx.doubled[h], "/doubled", ""),
                   evidence={"seat": ctx.hand_seat, "hand": ctx.hand_no, "initial_wager": ctx.initial_wager,
                             "table_min": lo, "table_max": hi, "wager": ctx.wager})


# ---- outcomes: (a)(1), (a)(2), (a)(3), (b), loss -----------------------------------------------
@rule("blackjack.a1", games=(GAME,), citation=f"{SECTION}(a)(1)", severity="high",
      summary="Player 21 or less and dealer over 21: the hand wins", columns=HANDS, params=("win", "blackjack"),
      needs=("wagers",),
      **_hand_words("dealer busts, player 21 or less: the hand wins"))
def a1_dealer_busts(ctx: Blackjack) -> Hits:
    """(a) "The player wins ... if ... (1) The sum of the player's cards is twenty-one (21) or less,
    and the sum of the dealer's cards is more than twenty-one (21)."

    Catalog: "player <= 21 and dealer > 21: the hand wins"; a hand recorded as a push or a loss.
    """
    return _hand_hits(ctx, ctx.compared & ctx.wins_dealer_busts & ~ctx.recorded_win)


@rule("blackjack.a2", games=(GAME,), citation=f"{SECTION}(a)(2)", severity="high",
      summary="Player total beats the dealer's without exceeding 21: the hand wins", columns=HANDS,
      params=("win", "blackjack"),
      needs=("wagers",),
      **_hand_words("player's total beats the dealer's without exceeding 21: the hand wins"))
def a2_player_higher(ctx: Blackjack) -> Hits:
    """(a) "The player wins ... if ... (2) The sum of the player's cards exceeds that of the dealer
    without exceeding twenty-one (21)."

    Catalog: "player <= 21 beats a dealer total <= 21: the hand wins"; recorded as a push or a loss.
    """
    return _hand_hits(ctx, ctx.compared & ctx.wins_higher_total & ~ctx.recorded_win)


@rule("blackjack.a3", games=(GAME,), citation=f"{SECTION}(a)(3)", severity="high",
      summary="Player blackjack, dealer none: the hand wins at the blackjack rate", columns=HANDS,
      params=("win", "blackjack"),
      needs=("wagers",),
      **_hand_words("player blackjack, dealer none: the hand wins at the blackjack rate"))
def a3_player_blackjack(ctx: Blackjack) -> Hits:
    """(a) "The player wins ... if ... (3) The player has a blackjack, and the dealer does not."

    Catalog: "player blackjack, dealer none: the hand wins (at the blackjack rate of the paytable)";
    recorded as a push or a loss. A three-card dealer 21 is not a blackjack.
    """
    return _hand_hits(ctx, ctx.compared & ctx.wins_blackjack & ~ctx.recorded_win)


@rule("blackjack.b", games=(GAME,), citation=f"{SECTION}(b)", severity="high",
      summary="Equal totals or both blackjack push; dealer blackjack beats a player 21 that is not a blackjack",
      columns=HANDS, params=("win", "blackjack"),
      needs=("wagers",),
      **_hand_words({"dealer_blackjack": "dealer blackjack against a player 21 that is not a blackjack: the hand loses",
                     "both_blackjack": "both blackjack: push", "equal": "equal totals: push"}))
def b_push_or_dealer_blackjack(ctx: Blackjack) -> Hits:
    """(b) "A wager is void and returned to the player when the sum of the player's cards is the
    same as the dealer or where both the dealer and the player have a blackjack. A player's wager
    is lost if the dealer has a blackjack and the sum of the player's cards is twenty-one (21),
    but is not a blackjack."

    Catalog: "equal totals, or both blackjack: push (net 0); dealer blackjack against a player 21
    that is not a blackjack: the hand loses".
    """
    def case(h: np.ndarray) -> np.ndarray:
        return np.where(ctx.loses_to_dealer_blackjack[h], "dealer_blackjack",
                        np.where(ctx.player_blackjack[h], "both_blackjack", "equal")).astype(object)

    return _hand_hits(ctx, ctx.compared & ((ctx.pushes & ~ctx.recorded_push)
                                           | (ctx.loses_to_dealer_blackjack & ~ctx.recorded_loss)), case)


@rule("blackjack.loss", games=(GAME,), citation="loss", severity="high",
      summary="Player busts, or the dealer's total or blackjack beats the player's: the hand loses",
      columns=HANDS, params=("win", "blackjack"),
      needs=("wagers",),
      **_hand_words({"bust": "player busts: the hand loses", "dealer_blackjack": "dealer blackjack: the hand loses",
                     "beaten": "dealer's total beats the player's: the hand loses"}))
def loss(ctx: Blackjack) -> Hits:
    """Catalog ``loss``: "player busts, or the dealer's total beats the player's: the hand loses"
    (a player bust loses even when the dealer busts too); recorded as a win or a push."""
    def case(h: np.ndarray) -> np.ndarray:
        return np.where(ctx.player_busts[h], "bust",
                        np.where(ctx.versus_blackjack[h], "dealer_blackjack", "beaten")).astype(object)

    return _hand_hits(ctx, ctx.compared & ctx.loses & ~ctx.recorded_loss, case)


# ---- (c), (e): wager changes ----------------------------------------------------------------------
def _event_words(why: str, expected: str) -> dict[str, str]:
    return {"message": "seat {seat:int} {action} {amount:money} " + why, "expected": expected, "recorded": "{action}"}


def _event_hits(ctx: Blackjack, events: np.ndarray) -> Hits:
    idx = np.flatnonzero(events)
    return Hits.at(ctx.event_round[idx], items=idx, seat=ctx.event_seat, evidence={
        "seat": ctx.event_seat, "action": lambda e: np.array(ACTIONS, dtype=object)[ctx.action[e]],
        "amount": ctx.event_amount})


@rule("blackjack.c", games=(GAME,), citation=f"{SECTION}(c)", severity="high",
      summary="No wager placed, increased or withdrawn after the first card (double, split, surrender, "
              "insurance, even money excepted)", columns=("events",), params=(),
      needs=("events", "first_card"),
      **_event_words("after the first card", "no wager change after the first card"))
def c_no_change_after_first_card(ctx: Blackjack) -> Hits:
    """(c) "Except when splitting pairs, doubling down, surrendering, making an insurance wager, or
    making an even money wager, no wager may be made, increased, or withdrawn after the first card
    of the round has been dealt."

    Catalog: "no wager is placed, increased or withdrawn after the first card, except double,
    split, surrender, insurance, even money". Only rounds whose events carry a ``first_card``
    marker can show this; the others are not checkable (``evidence.py``).
    """
    return _event_hits(ctx, ctx.after_first_card & ctx.changes_wager)


@rule("blackjack.e", games=(GAME,), citation=f"{SECTION}(e)", severity="high",
      summary="After a double, split, surrender, insurance or even money wager, the seat's wagers are not "
              "increased or withdrawn in the round", columns=("events",), params=(),
      needs=("events",),
      **_event_words("after a confirmed double/split/surrender/insurance/even money wager",
                     "no wager change after a confirmed wager"))
def e_no_change_after_confirmed(ctx: Blackjack) -> Hits:
    """(e) "After a wager on the insurance line, an even money wager, a surrender, a wager to double
    down, or a wager to split pairs has been confirmed by the dealer, no player may handle, remove,
    or alter any wager until the hand is completed."

    Catalog: "once a double, split, surrender, insurance or even money wager is confirmed, that
    seat's wagers are not changed again in the round (no later increase or withdraw)". The
    recorded event is taken as the dealer's confirmation.
    """
    return _event_hits(ctx, ctx.after_confirmed_wager & ctx.alters_wager)


# ---- paytable -----------------------------------------------------------------------------------
@rule("blackjack.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Net matches the paytable: win 1:1, blackjack 3:2, surrender loses half, insurance 2:1, "
              "even money 1:1", columns=HANDS,
      params=("win", "blackjack", "surrender", "insurance", "even_money"),
      needs=("wagers",),
      message={**_hand_words({"loses": "loses the wager {wager:money}",
                              "blackjack": "blackjack pays {rate:odds} on {wager:money}",
                              "win": "win pays {rate:odds} on {wager:money}"})["message"],
               "surrender": "seat {seat:int} hand {hand:int}: surrendered {wager:money} loses {rate:percent}" + MONEY,
               "insurance_pays": "seat {seat:int} insurance {amount:money}: dealer blackjack, pays {rate:odds}" + MONEY,
               "insurance_lost": "seat {seat:int} insurance {amount:money}: dealer has no blackjack, the insurance "
                                 "is lost" + MONEY,
               "even_money": "seat {seat:int} even money on {amount:money} pays {rate:odds}; recorded {net:net} "
                             "(hand and even money), expected {expected:net}"},
      expected="{expected:net}", recorded="{net:net}")
def paytable(ctx: Blackjack) -> Hits:
    """Catalog ``paytable``: "net matches the paytable for the outcome (default: win 1:1, blackjack
    3:2, surrender loses half, insurance 2:1, even money 1:1)". (a) "The player wins an amount as
    determined in accordance with section 5 of this rule": a hand settled in the right direction
    for the wrong amount, a surrender, an insurance or an even money wager settled wrongly.
    """
    return Hits.concat([_hand_amounts(ctx), _surrenders(ctx), _insurance(ctx), _even_money(ctx)])


def _hand_amounts(ctx: Blackjack) -> Hits:
    """A compared hand won, pushed or lost as it should, for an amount other than its rate x wager."""
    def case(h: np.ndarray) -> np.ndarray:
        return np.where(ctx.payout_rate[h] < 0, "loses", np.where(ctx.wins_blackjack[h], "blackjack", "win")
                        ).astype(object)

    idx = np.flatnonzero(ctx.compared & ctx.right_direction & money_differs(ctx.net, ctx.expected_net, ctx.unit))
    return _money_hits(ctx.hand_round[idx], idx, _expected(ctx, ctx.expected_net[idx]), ctx.net[idx],
                       ctx.hand_seat, case=case,
                       evidence={**ctx.hand_evidence(), "wager": ctx.wager, "rate": ctx.payout_rate})


def _surrenders(ctx: Blackjack) -> Hits:
    """A surrendered hand loses ``surrender`` x its wager, whatever the cards."""
    r = ctx.hand_round
    exact = -ctx.surrender_rate[r] * ctx.wager
    idx = np.flatnonzero(ctx.settled[r] & ctx.surrendered & ~ctx.took_even_money
                         & money_differs(ctx.net, exact, ctx.unit))
    return _money_hits(r[idx], idx, _expected(ctx, exact[idx]), ctx.net[idx], ctx.hand_seat, case="surrender",
                       evidence={"seat": ctx.hand_seat, "hand": ctx.hand_no, "wager": ctx.wager,
                                 "rate": lambda h: ctx.surrender_rate[r[h]]})


def _insurance(ctx: Blackjack) -> Hits:
    """Insurance pays ``insurance`` x its amount on a dealer blackjack, else it is lost."""
    r = ctx.wager_round
    bj = ctx.dealer_blackjack[r]
    exact = np.where(bj, ctx.insurance_rate[r] * ctx.wager_amount, -ctx.wager_amount)
    idx = np.flatnonzero(ctx.is_insurance & ctx.settled[r] & money_differs(ctx.wager_net, exact, ctx.unit))
    return _money_hits(r[idx], idx, _expected(ctx, exact[idx]), ctx.wager_net[idx], ctx.wager_seat,
                       case=lambda w: np.where(bj[w], "insurance_pays", "insurance_lost").astype(object),
                       evidence={"seat": ctx.wager_seat, "amount": ctx.wager_amount,
                                 "rate": lambda w: ctx.insurance_rate[r[w]]})


def _even_money(ctx: Blackjack) -> Hits:
    """A seat that took even money gains ``even_money`` x the wager in all (hand net plus even money net)."""
    em = np.flatnonzero(ctx.is_even_money & ctx.settled[ctx.wager_round])
    if not len(em):
        return NONE
    key = ctx.wager_round[em] * (1 << 32) + ctx.wager_seat[em]
    keys, first = np.unique(key, return_index=True)
    em = em[first]
    recorded = ctx.wager_net[em].copy()
    hand_keys = ctx.hand_round * (1 << 32) + ctx.hand_seat
    pos = np.minimum(np.searchsorted(keys, hand_keys), len(keys) - 1)
    match = keys[pos] == hand_keys
    np.add.at(recorded, pos[match], ctx.net[match])
    r = ctx.wager_round[em]
    exact = ctx.even_money_rate[r] * ctx.wager_amount[em]
    bad = money_differs(recorded, exact, ctx.unit)
    em, r = em[bad], r[bad]
    return _money_hits(r, em, _expected(ctx, exact[bad]), recorded[bad], ctx.wager_seat, case="even_money",
                       evidence={"seat": ctx.wager_seat, "amount": ctx.wager_amount,
                                 "rate": lambda w: ctx.even_money_rate[ctx.wager_round[w]]})


# ---- void ---------------------------------------------------------------------------------------
@rule("blackjack.void", games=(GAME,), citation="void", severity="high", summary=VOID_SUMMARY, **VOID_WORDS,
      columns=("status", "hands", "wagers"), params=(),
      needs=("wagers",))
def void(ctx: Blackjack) -> Hits:
    """Catalog ``void``: "in a void or dead round every wager's net is 0" (hands and side wagers)."""
    return void_round_nets(ctx)


# ---- integrity ----------------------------------------------------------------------------------
@rule("blackjack.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="No joker in a blackjack round", columns=("dealer_cards", "hands"), params=(),
      needs=("ranks",),
      message="a joker (JK) recorded in a blackjack round", expected="no joker", recorded="JK")
def integrity(ctx: Blackjack) -> Hits:
    """Catalog ``integrity``: "a card that cannot be in the round: ... the joker outside pai gow"."""
    return Hits.where(ctx.joker)


@rule("blackjack.integrity_shoe", games=(GAME,), citation="integrity", severity="high",
      summary="No more copies of a card in a shoe than its decks hold", scope="shoe",
      columns=("dealer_cards", "hands"), params=("decks",),
      needs=("suits", "ranks", "shoe"),
      message=SHOE_EXCESS, expected="at most the shoe's copies of each card", recorded="excess copy")
def integrity_shoe(table: pa.Table, config: Config) -> Hits:
    """Catalog ``integrity``: "more copies of a card in a shoe than the shoe holds (reported on the
    round where the excess copy appears)". Copies are counted per (table_id, shoe_id) in round_seq
    order; rounds without shoe_id are skipped.

    A first pass counts each card of each shoe (order-free, one bincount); only the shoes holding
    a card more often than their decks go through :func:`integrity.shoe_excess`, which finds the
    round of each excess copy.
    """
    rows = np.flatnonzero(to_numpy(pc.is_valid(table["shoe_id"]), False).astype(bool))
    if not len(rows):
        return NONE
    sub = table if len(rows) == table.num_rows else table.take(pa.array(rows))
    decks = Blackjack(sub, config).param("decks")
    group = shoe_groups(sub)
    dealer_flat, _, dealer_n = card_lists(sub["dealer_cards"])
    hand_flat, _, hand_n = card_lists(struct_field(flat_values(sub["hands"]), "cards"))
    code = np.concatenate([dealer_flat, hand_flat]).astype(np.int64)
    card_row = np.concatenate([np.repeat(np.arange(len(dealer_n)), dealer_n),
                               np.repeat(parents(sub["hands"]), hand_n)])
    real = (code >= 0) & (code < JOKER)
    key = group[card_row[real]] * 64 + code[real]
    copies = np.bincount(key)
    group_decks = np.zeros(int(group.max()) + 1)
    group_decks[group] = decks
    excess_groups = np.unique(key[copies[key] > group_decks[key // 64]] // 64)
    if not len(excess_groups):
        return NONE
    keep = np.flatnonzero(np.isin(group, excess_groups))
    hit_rows, evidence = shoe_excess(sub.take(pa.array(keep)), ["dealer_cards", "hands.cards"], decks[keep])
    return Hits(rows=rows[keep[hit_rows]], evidence=evidence)


# ---- house rules: the dealer's drawing -------------------------------------------------------------
@rule("blackjack.dealer_play", games=(GAME,), citation="house-rules", severity="high",
      summary="The dealer draws below 17 and stands at 17 or more (hits soft 17 when the house does); "
              "checked when check_dealer_play is on", columns=HANDS,
      params=("check_dealer_play", "dealer_hits_soft_17"),
      needs=("order",),
      message={"drew": "dealer {dealer_cards:cards}: drew after reaching {soft}{total:int} (house {house})",
               "stood": "dealer {dealer_cards:cards}: stood on {soft}{total:int} (house {house})"},
      expected="draw below 17, stand at 17+", recorded="dealer's drawing")
def dealer_play(ctx: Blackjack) -> Hits:
    """House rules (not in 68 IAC 10-2-4): the dealer draws below 17 and stands at 17 or more,
    hitting a soft 17 where the house does (:func:`hands.dealer_must_draw`). Checked only when
    ``check_dealer_play`` is on and the dealer had to play out the round (some hand live, no
    dealer blackjack): a draw after a standing total, or a stand on a drawing total, is a finding.
    """
    on = ctx.check_dealer_play
    if not on.any():
        return NONE
    sel = np.flatnonzero(on & ctx.settled & ctx.dealer_plays_out & (ctx.dealer_n >= 2))
    if not len(sel):
        return NONE
    d, dealer_n = padded(pc.take(ctx.table["dealer_cards"], pa.array(sel)))
    total, soft = best_total(np.cumsum(BLACKJACK_POINTS[d], axis=1, dtype=np.int16), np.cumsum(IS_ACE[d], axis=1) > 0)
    h17 = ctx.hits_soft_17[sel][:, None]
    draw = dealer_must_draw(total, soft, h17)        # after k + 1 cards
    k = np.arange(d.shape[1])[None, :]
    before_last = (k >= 1) & (k <= dealer_n[:, None] - 2)
    drew_on_stand = (before_last & ~draw).any(axis=1)
    last = dealer_n - 1
    stood_low = draw[np.arange(len(sel)), last]
    bad = np.flatnonzero(drew_on_stand | stood_low)
    at = np.where(drew_on_stand, np.argmax(before_last & ~draw, axis=1), last)[bad]  # the total acted on
    return Hits(rows=sel[bad], case=np.where(drew_on_stand[bad], "drew", "stood").astype(object), evidence={
        "dealer_cards": objects(list(d[bad])), "total": total[bad, at],
        "soft": np.where(soft[bad, at], "soft ", "").astype(object),
        "house": np.where(h17[bad, 0], "hits soft 17", "stands on soft 17").astype(object)})
