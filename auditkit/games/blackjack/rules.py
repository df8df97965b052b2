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

from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import IS_ACE, JOKER, cards_str
from ...columns import flat_values, padded, parents, struct_field, to_numpy
from ...money import format_money, format_net, money_differs, money_round
from ...paytables import Config
from ...rules.context import house_values
from ...rules.integrity import shoe_excess, shoe_groups
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, void_round_nets
from .context import Blackjack, card_lists
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


def _money_hits(rows: np.ndarray, message: np.ndarray, expected: np.ndarray, recorded: np.ndarray,
                seat: np.ndarray) -> Hits:
    """Hits on wagers whose recorded net is not the expected one (both already cut to the hits)."""
    return Hits(rows=rows, message=message, expected=np.array([format_net(x) for x in expected], dtype=object),
                recorded=np.array([format_net(x) for x in recorded], dtype=object), discrepancy=recorded - expected,
                seat=seat, expected_amount=expected, recorded_amount=recorded)


def _total_str(total: int, blackjack: bool) -> str:
    return "blackjack" if blackjack else str(int(total))


def _hand_str(ctx: Blackjack, i: int) -> str:
    """'seat 5 hand 0: 4d 3s 3d Qd (20) v dealer 7s Kh (17)'."""
    r = ctx.hand_round[i]
    return (f"seat {ctx.hand_seat[i]} hand {ctx.hand_no[i]}: {ctx.cards_of_hand(i)} "
            f"({_total_str(ctx.player_total[i], ctx.player_blackjack[i])}) v dealer {ctx.cards_of_dealer(r)} "
            f"({_total_str(ctx.dealer_total[r], ctx.dealer_blackjack[r])})")


def _hand_hits(ctx: Blackjack, hands: np.ndarray, says: Any) -> Hits:
    """Hits on the hands of mask ``hands`` (expected: their result's net); ``says(i)`` tells the result."""
    idx = np.flatnonzero(hands)
    if not len(idx):
        return NONE
    expected, recorded = _expected(ctx, ctx.expected_net[idx]), ctx.net[idx]
    msgs = np.array([f"{_hand_str(ctx, i)}: {says(i)}; recorded {format_net(n)}, expected {format_net(x)}"
                     for i, n, x in zip(idx, recorded, expected, strict=True)], dtype=object)
    return _money_hits(ctx.hand_round[idx], msgs, expected, recorded, ctx.hand_seat[idx])


def _odds(rate: float) -> str:
    """A payout multiple as odds: 1.5 -> 3:2, 1.2 -> 6:5, 2 -> 2:1."""
    f = Fraction(float(rate)).limit_denominator(100)
    return f"{f.numerator}:{f.denominator}"


# ---- (a) table limits ---------------------------------------------------------------------------
@rule("blackjack.a", games=(GAME,), citation=f"{SECTION}(a)", severity="medium",
      summary="Each hand's initial wager (before any double) is within the table minimum and maximum",
      columns=("table_min", "table_max", "hands"), params=("table_min", "table_max"),
      needs=("wagers",))
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
    above = ctx.initial_wager > hi + 1e-9
    bad = np.flatnonzero(below | above)
    _, first = np.unique(r[bad] * (1 << 32) + ctx.hand_seat[bad], return_index=True)
    idx = bad[np.sort(first)]
    msgs = np.array([
        f"seat {ctx.hand_seat[i]} hand {ctx.hand_no[i]}: initial wager {format_money(ctx.initial_wager[i])} "
        + (f"below the table minimum {format_money(lo[i])}" if below[i]
           else f"above the table maximum {format_money(hi[i])}")
        + (f" (wager {format_money(ctx.wager[i])} doubled)" if ctx.doubled[i] else "")
        for i in idx], dtype=object)
    limits = np.array([f"{format_money(lo[i])}-{format_money(hi[i])}" for i in idx], dtype=object)
    return Hits(rows=r[idx], message=msgs, expected=limits,
                recorded=np.array([format_money(x) for x in ctx.initial_wager[idx]], dtype=object), seat=ctx.hand_seat[idx])


# ---- outcomes: (a)(1), (a)(2), (a)(3), (b), loss -----------------------------------------------
@rule("blackjack.a1", games=(GAME,), citation=f"{SECTION}(a)(1)", severity="high",
      summary="Player 21 or less and dealer over 21: the hand wins", columns=HANDS, params=("win", "blackjack"),
      needs=("wagers",))
def a1_dealer_busts(ctx: Blackjack) -> Hits:
    """(a) "The player wins ... if ... (1) The sum of the player's cards is twenty-one (21) or less,
    and the sum of the dealer's cards is more than twenty-one (21)."

    Catalog: "player <= 21 and dealer > 21: the hand wins"; a hand recorded as a push or a loss.
    """
    return _hand_hits(ctx, ctx.compared & ctx.wins_dealer_busts & ~ctx.recorded_win,
                      lambda i: "dealer busts, player 21 or less: the hand wins")


@rule("blackjack.a2", games=(GAME,), citation=f"{SECTION}(a)(2)", severity="high",
      summary="Player total beats the dealer's without exceeding 21: the hand wins", columns=HANDS,
      params=("win", "blackjack"),
      needs=("wagers",))
def a2_player_higher(ctx: Blackjack) -> Hits:
    """(a) "The player wins ... if ... (2) The sum of the player's cards exceeds that of the dealer
    without exceeding twenty-one (21)."

    Catalog: "player <= 21 beats a dealer total <= 21: the hand wins"; recorded as a push or a loss.
    """
    return _hand_hits(ctx, ctx.compared & ctx.wins_higher_total & ~ctx.recorded_win,
                      lambda i: "player's total beats the dealer's without exceeding 21: the hand wins")


@rule("blackjack.a3", games=(GAME,), citation=f"{SECTION}(a)(3)", severity="high",
      summary="Player blackjack, dealer none: the hand wins at the blackjack rate", columns=HANDS,
      params=("win", "blackjack"),
      needs=("wagers",))
def a3_player_blackjack(ctx: Blackjack) -> Hits:
    """(a) "The player wins ... if ... (3) The player has a blackjack, and the dealer does not."

    Catalog: "player blackjack, dealer none: the hand wins (at the blackjack rate of the paytable)";
    recorded as a push or a loss. A three-card dealer 21 is not a blackjack.
    """
    return _hand_hits(ctx, ctx.compared & ctx.wins_blackjack & ~ctx.recorded_win,
                      lambda i: "player blackjack, dealer none: the hand wins at the blackjack rate")


@rule("blackjack.b", games=(GAME,), citation=f"{SECTION}(b)", severity="high",
      summary="Equal totals or both blackjack push; dealer blackjack beats a player 21 that is not a blackjack",
      columns=HANDS, params=("win", "blackjack"),
      needs=("wagers",))
def b_push_or_dealer_blackjack(ctx: Blackjack) -> Hits:
    """(b) "A wager is void and returned to the player when the sum of the player's cards is the
    same as the dealer or where both the dealer and the player have a blackjack. A player's wager
    is lost if the dealer has a blackjack and the sum of the player's cards is twenty-one (21),
    but is not a blackjack."

    Catalog: "equal totals, or both blackjack: push (net 0); dealer blackjack against a player 21
    that is not a blackjack: the hand loses".
    """
    def says(i: int) -> str:
        if ctx.loses_to_dealer_blackjack[i]:
            return "dealer blackjack against a player 21 that is not a blackjack: the hand loses"
        return "both blackjack: push" if ctx.player_blackjack[i] else "equal totals: push"

    return _hand_hits(ctx, ctx.compared & ((ctx.pushes & ~ctx.recorded_push)
                                           | (ctx.loses_to_dealer_blackjack & ~ctx.recorded_loss)), says)


@rule("blackjack.loss", games=(GAME,), citation="loss", severity="high",
      summary="Player busts, or the dealer's total or blackjack beats the player's: the hand loses",
      columns=HANDS, params=("win", "blackjack"),
      needs=("wagers",))
def loss(ctx: Blackjack) -> Hits:
    """Catalog ``loss``: "player busts, or the dealer's total beats the player's: the hand loses"
    (a player bust loses even when the dealer busts too); recorded as a win or a push."""
    def says(i: int) -> str:
        if ctx.player_busts[i]:
            return "player busts: the hand loses"
        if ctx.versus_blackjack[i]:
            return "dealer blackjack: the hand loses"
        return "dealer's total beats the player's: the hand loses"

    return _hand_hits(ctx, ctx.compared & ctx.loses & ~ctx.recorded_loss, says)


# ---- (c), (e): wager changes ----------------------------------------------------------------------
def _event_hits(ctx: Blackjack, events: np.ndarray, why: str, expected: str) -> Hits:
    idx = np.flatnonzero(events)
    msgs = np.array([f"seat {ctx.event_seat[i]} {ACTIONS[ctx.action[i]]} {format_money(ctx.event_amount[i])} {why}"
                     for i in idx], dtype=object)
    return Hits(rows=ctx.event_round[idx], message=msgs, expected=expected,
                recorded=np.array([ACTIONS[a] for a in ctx.action[idx]], dtype=object), seat=ctx.event_seat[idx])


@rule("blackjack.c", games=(GAME,), citation=f"{SECTION}(c)", severity="high",
      summary="No wager placed, increased or withdrawn after the first card (double, split, surrender, "
              "insurance, even money excepted)", columns=("events",), params=(),
      needs=("events", "first_card"))
def c_no_change_after_first_card(ctx: Blackjack) -> Hits:
    """(c) "Except when splitting pairs, doubling down, surrendering, making an insurance wager, or
    making an even money wager, no wager may be made, increased, or withdrawn after the first card
    of the round has been dealt."

    Catalog: "no wager is placed, increased or withdrawn after the first card, except double,
    split, surrender, insurance, even money". Only rounds whose events carry a ``first_card``
    marker can show this; the others are not checkable (``evidence.py``).
    """
    return _event_hits(ctx, ctx.after_first_card & ctx.changes_wager, "after the first card",
                       "no wager change after the first card")


@rule("blackjack.e", games=(GAME,), citation=f"{SECTION}(e)", severity="high",
      summary="After a double, split, surrender, insurance or even money wager, the seat's wagers are not "
              "increased or withdrawn in the round", columns=("events",), params=(),
      needs=("events",))
def e_no_change_after_confirmed(ctx: Blackjack) -> Hits:
    """(e) "After a wager on the insurance line, an even money wager, a surrender, a wager to double
    down, or a wager to split pairs has been confirmed by the dealer, no player may handle, remove,
    or alter any wager until the hand is completed."

    Catalog: "once a double, split, surrender, insurance or even money wager is confirmed, that
    seat's wagers are not changed again in the round (no later increase or withdraw)". The
    recorded event is taken as the dealer's confirmation.
    """
    return _event_hits(ctx, ctx.after_confirmed_wager & ctx.alters_wager,
                       "after a confirmed double/split/surrender/insurance/even money wager",
                       "no wager change after a confirmed wager")


# ---- paytable -----------------------------------------------------------------------------------
@rule("blackjack.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Net matches the paytable: win 1:1, blackjack 3:2, surrender loses half, insurance 2:1, "
              "even money 1:1", columns=HANDS,
      params=("win", "blackjack", "surrender", "insurance", "even_money"),
      needs=("wagers",))
def paytable(ctx: Blackjack) -> Hits:
    """Catalog ``paytable``: "net matches the paytable for the outcome (default: win 1:1, blackjack
    3:2, surrender loses half, insurance 2:1, even money 1:1)". (a) "The player wins an amount as
    determined in accordance with section 5 of this rule": a hand settled in the right direction
    for the wrong amount, a surrender, an insurance or an even money wager settled wrongly.
    """
    return Hits.concat([_hand_amounts(ctx), _surrenders(ctx), _insurance(ctx), _even_money(ctx)])


def _hand_amounts(ctx: Blackjack) -> Hits:
    """A compared hand won, pushed or lost as it should, for an amount other than its rate x wager."""
    def says(i: int) -> str:
        if ctx.payout_rate[i] < 0:
            return f"loses the wager {format_money(ctx.wager[i])}"
        pays = "blackjack pays" if ctx.wins_blackjack[i] else "win pays"
        return f"{pays} {_odds(ctx.payout_rate[i])} on {format_money(ctx.wager[i])}"

    return _hand_hits(ctx, ctx.compared & ctx.right_direction & money_differs(ctx.net, ctx.expected_net, ctx.unit),
                      says)


def _surrenders(ctx: Blackjack) -> Hits:
    """A surrendered hand loses ``surrender`` x its wager, whatever the cards."""
    r = ctx.hand_round
    exact = -ctx.surrender_rate[r] * ctx.wager
    idx = np.flatnonzero(ctx.settled[r] & ctx.surrendered & ~ctx.took_even_money
                         & money_differs(ctx.net, exact, ctx.unit))
    expected, recorded = _expected(ctx, exact[idx]), ctx.net[idx]
    msgs = np.array([f"seat {ctx.hand_seat[i]} hand {ctx.hand_no[i]}: surrendered {format_money(ctx.wager[i])} loses "
                     f"{ctx.surrender_rate[r[i]] * 100:g}%; recorded {format_net(n)}, expected {format_net(x)}"
                     for i, n, x in zip(idx, recorded, expected, strict=True)], dtype=object)
    return _money_hits(r[idx], msgs, expected, recorded, ctx.hand_seat[idx])


def _insurance(ctx: Blackjack) -> Hits:
    """Insurance pays ``insurance`` x its amount on a dealer blackjack, else it is lost."""
    r = ctx.wager_round
    bj = ctx.dealer_blackjack[r]
    exact = np.where(bj, ctx.insurance_rate[r] * ctx.wager_amount, -ctx.wager_amount)
    idx = np.flatnonzero(ctx.is_insurance & ctx.settled[r] & money_differs(ctx.wager_net, exact, ctx.unit))
    expected, recorded = _expected(ctx, exact[idx]), ctx.wager_net[idx]
    msgs = np.array([f"seat {ctx.wager_seat[i]} insurance {format_money(ctx.wager_amount[i])}: "
                     + (f"dealer blackjack, pays {_odds(ctx.insurance_rate[r[i]])}" if bj[i]
                        else "dealer has no blackjack, the insurance is lost")
                     + f"; recorded {format_net(n)}, expected {format_net(x)}"
                     for i, n, x in zip(idx, recorded, expected, strict=True)], dtype=object)
    return _money_hits(r[idx], msgs, expected, recorded, ctx.wager_seat[idx])


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
    em, r, recorded = em[bad], r[bad], recorded[bad]
    expected = _expected(ctx, exact[bad])
    msgs = np.array([f"seat {ctx.wager_seat[i]} even money on {format_money(ctx.wager_amount[i])} pays "
                     f"{_odds(ctx.even_money_rate[k])}; recorded {format_net(n)} (hand and even money), "
                     f"expected {format_net(x)}" for i, k, n, x in zip(em, r, recorded, expected, strict=True)], dtype=object)
    return _money_hits(r, msgs, expected, recorded, ctx.wager_seat[em])


# ---- void ---------------------------------------------------------------------------------------
@rule("blackjack.void", games=(GAME,), citation="void", severity="high", summary=VOID_SUMMARY,
      columns=("status", "hands", "wagers"), params=(),
      needs=("wagers",))
def void(ctx: Blackjack) -> Hits:
    """Catalog ``void``: "in a void or dead round every wager's net is 0" (hands and side wagers)."""
    return void_round_nets(ctx)


# ---- integrity ----------------------------------------------------------------------------------
@rule("blackjack.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="No joker in a blackjack round", columns=("dealer_cards", "hands"), params=(),
      needs=("ranks",))
def integrity(ctx: Blackjack) -> Hits:
    """Catalog ``integrity``: "a card that cannot be in the round: ... the joker outside pai gow"."""
    return Hits.where(ctx.joker, "a joker (JK) recorded in a blackjack round", expected="no joker", recorded="JK")


@rule("blackjack.integrity_shoe", games=(GAME,), citation="integrity", severity="high",
      summary="No more copies of a card in a shoe than its decks hold", scope="shoe",
      columns=("dealer_cards", "hands"), params=("decks",),
      needs=("suits", "ranks", "shoe"))
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
    decks = house_values(sub, "decks", config.param(GAME, "decks", sub["table_id"]))
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
    hit_rows, msgs = shoe_excess(sub.take(pa.array(keep)), ["dealer_cards", "hands.cards"], decks[keep])
    return Hits(rows=rows[keep[hit_rows]], message=msgs, expected="at most the shoe's copies of each card",
                recorded="excess copy")


# ---- house rules: the dealer's drawing -------------------------------------------------------------
@rule("blackjack.dealer_play", games=(GAME,), citation="house-rules", severity="high",
      summary="The dealer draws below 17 and stands at 17 or more (hits soft 17 when the house does); "
              "checked when check_dealer_play is on", columns=HANDS,
      params=("check_dealer_play", "dealer_hits_soft_17"),
      needs=("order",))
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
    msgs = np.empty(len(bad), dtype=object)
    for j, i in enumerate(bad):  # flagged rounds only
        house = "hits soft 17" if h17[i, 0] else "stands on soft 17"
        if drew_on_stand[i]:
            at = int(np.flatnonzero(before_last[i] & ~draw[i])[0])
            what = f"drew after reaching {'soft ' if soft[i, at] else ''}{total[i, at]}"
        else:
            what = f"stood on {'soft ' if soft[i, last[i]] else ''}{total[i, last[i]]}"
        msgs[j] = f"dealer {cards_str(d[i])}: {what} (house {house})"
    return Hits(rows=sel[bad], message=msgs, expected="draw below 17, stand at 17+", recorded="dealer's drawing")
