"""Pai gow poker irregularities, 68 IAC 10-9-17, plus ``void``, ``paytable`` and ``integrity``.

One function per subsection, named after it, whose docstring quotes the regulation and the
catalog's reading (``../shared/spec/rules-catalog.md``) and whose body is a condition over
the named facts of :class:`~auditkit.games.pai_gow_poker.context.PaiGowPoker`.

Remedies as the catalog reads them: ``(a)``, ``(c)(2)``, ``(c)(3)``, ``(e)``, ``(g)``,
``(h)`` require status ``void`` and a ``reshuffle`` event after the irregularity;
``(c)(1)`` requires ``dead`` or ``void``; ``(i)`` requires a supervisor call and, when it
found a misdeal, ``void``; ``(d)`` forbids voiding a round for an unexposed out-of-order
card alone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...cards import cards_str
from ...money import format_money, format_net, money_differs, money_round
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, void_round_nets
from .context import GAME, NONE, PaiGowPoker
from .deal import CARDS_PER_HAND, dice_position
from .paytable import OUTCOMES

__all__ = ["GAME"]

C = "68 IAC 10-9-17"
VOIDING = ("status", "events")
"""The columns every void-and-reshuffle check reads."""


def _not_void_and_reshuffled(ctx: PaiGowPoker, irregular: np.ndarray, at: np.ndarray | int) -> np.ndarray:
    """The rounds with an irregularity that are not void, or void without a ``reshuffle`` after the
    event at position ``at`` (-1: an irregularity no event marks, so anywhere in the round)."""
    return irregular & ~(ctx.void & (ctx.reshuffle_at > at))


def _void_findings(ctx: PaiGowPoker, subsection: str, bad: np.ndarray, what: list[str] | str) -> Hits:
    """The findings of a void-and-reshuffle subsection on the rounds ``bad``; ``what`` names the
    irregularity (one text, or one per round of ``bad``)."""
    rows = np.flatnonzero(bad)
    what = [what] * len(rows) if isinstance(what, str) else what
    status = ctx.status[rows]
    message = np.array([f"{subsection}: {w}, " + (f"round {s}" if s != "void" else "round void but no reshuffle")
                        for w, s in zip(what, status, strict=False)], dtype=object)
    recorded = np.array([f"status {s}" + (", no reshuffle after it" if s == "void" else "") for s in status],
                        dtype=object)
    return Hits(rows=rows, message=message, expected="round void, reshuffle recorded", recorded=recorded)


def _status(ctx: PaiGowPoker, rows: np.ndarray) -> np.ndarray:
    return np.array([f"status {s}" for s in ctx.status[rows]], dtype=object)


@rule("paigow.a", games=(GAME,), citation=f"{C}(a)", severity="high",
      summary="More than one card found face up in the deck: all hands void and the cards reshuffled",
      columns=VOIDING,
      needs=("events",))
def a_face_up_cards(ctx: PaiGowPoker) -> Hits:
    """(a) "A card found turned face up in the deck shall not be used in the game and shall be placed
    in the discard holder. If more than one (1) card is found turned face up in the deck, all hands
    shall be void and the cards reshuffled."

    Catalog: more than one card found face up: the round is void and a reshuffle is recorded.
    """
    bad = _not_void_and_reshuffled(ctx, ctx.more_than_one_face_up, at=ctx.first_face_up_at)
    return _void_findings(ctx, "(a)", bad, [f"{k} face-up cards found" for k in ctx.face_up_cards[bad]])


@rule("paigow.b", games=(GAME,), citation=f"{C}(b)", severity="medium",
      summary="After a 'no roll' the dice are reshaken before the cards are dealt", columns=("events",),
      needs=("events",))
def b_no_roll(ctx: PaiGowPoker) -> Hits:
    """(b) "If the dealer uncovers the pai gow poker shaker and all three (3) dice do not land flat on
    the bottom of the shaker or the die or dice fall out of the shaker, the dealer shall call a "No
    roll" and reshake the dice."

    Catalog: after a ``no_roll``, a new ``roll`` comes before the cards are dealt.
    """
    no_roll = ctx.last_no_roll_at >= 0
    not_reshaken = (ctx.last_no_roll_at > ctx.deal_at) | (ctx.last_roll_before_deal_at < ctx.last_no_roll_at)
    return Hits.where(no_roll & not_reshaken, "(b): no new roll before the deal after a no_roll",
                      expected="a roll after the no_roll, before the stacks are dealt",
                      recorded="no roll between the no_roll and the deal")


@rule("paigow.c1", games=(GAME,), citation=f"{C}(c)(1)", severity="high",
      summary="First stack delivered to the wrong position for the dice: all hands dead",
      columns=("status", "events", "dice", "first_position"),
      needs=("events",))
def c1_wrong_position(ctx: PaiGowPoker) -> Hits:
    """(c) "If the dealer: (1) incorrectly totals the dice and deals the first card or delivers the first
    pile of cards to the wrong position, all hands shall be called dead;"

    Catalog: ``first_position`` differs from the one the dice give: hands are dead (status ``dead``
    or ``void``).
    """
    bad = ctx.wrong_first_position & ~(ctx.dead | ctx.void)
    rows = np.flatnonzero(bad)
    dice = ctx.table["dice"].take(pa.array(rows)).to_pylist() if len(rows) else []
    used = ctx.dice_used[rows]
    message = np.array([
        f"(c)(1): first_position {ctx.first_position[r]}, dice total {u} gives {dice_position(u)}"
        + (f" (recorded dice {d})" if d is not None and sum(d) != u else "") + f"; round {ctx.status[r]}"
        for r, u, d in zip(rows, used, dice, strict=False)], dtype=object)
    return Hits(rows=rows, message=message, expected="hands dead (status dead or void)", recorded=_status(ctx, rows))


@rule("paigow.c2", games=(GAME,), citation=f"{C}(c)(2)", severity="high",
      summary="A card drawn out of order and exposed: all hands void, cards reshuffled", columns=VOIDING,
      needs=("events",))
def c2_out_of_order_exposed(ctx: PaiGowPoker) -> Hits:
    """(c) "If the dealer: ... (2) draws a card out of order; ... all hands shall be void and the dealer
    shall reshuffle the cards and all wagers are void and returned to the players."

    Catalog: a card drawn out of order and exposed: round void, reshuffle recorded (an unexposed one
    is (d)).
    """
    at = ctx.exposed_out_of_order_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_findings(ctx, "(c)(2)", bad, "card drawn out of order and exposed")


@rule("paigow.c3", games=(GAME,), citation=f"{C}(c)(3)", severity="high",
      summary="A card dealt to the dealer's hand exposed: all hands void, cards reshuffled", columns=VOIDING,
      needs=("events",))
def c3_dealer_card_exposed(ctx: PaiGowPoker) -> Hits:
    """(c) "If the dealer: ... (3) deals a card to the dealer's hand that is exposed; all hands shall be
    void and the dealer shall reshuffle the cards and all wagers are void and returned to the players."

    Catalog: a card dealt to the dealer exposed: round void, reshuffle recorded.
    """
    at = ctx.dealer_card_exposed_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_findings(ctx, "(c)(3)", bad, "dealer card exposed")


@rule("paigow.d", games=(GAME,), citation=f"{C}(d)", severity="high",
      summary="A card drawn out of order unexposed is used as the next card: the round continues",
      columns=("status", "events", "dice", "first_position", "hands", "dealer_cards", "cards_remaining"),
      needs=("events", "order"))
def d_out_of_order_unexposed(ctx: PaiGowPoker) -> Hits:
    """(d) "A card drawn out of order without its face being exposed shall be used as though it was the
    next card from the deck."

    Catalog: a card drawn out of order, not exposed: the round continues (voiding it is a finding),
    unless something else in the round calls for a void or dead round.
    """
    bad = ctx.unexposed_out_of_order & (ctx.void | ctx.dead) & ~ctx.void_called_for
    rows = np.flatnonzero(bad)
    message = np.array([f"(d): unexposed out-of-order card, round {s}" for s in ctx.status[rows]], dtype=object)
    return Hits(rows=rows, message=message, expected="round continues (completed)", recorded=_status(ctx, rows))


@rule("paigow.e", games=(GAME,), citation=f"{C}(e)", severity="high",
      summary="A player or the dealer dealt other than seven cards: all hands void, cards reshuffled",
      columns=("status", "events", "hands", "dealer_cards"),
      needs=("events",))
def e_wrong_card_count(ctx: PaiGowPoker) -> Hits:
    """(e) "If any player or the dealer is dealt an incorrect number of cards, all hands shall be void
    and the cards reshuffled."

    Catalog: a hand (or the dealer) with other than seven cards: round void, reshuffle recorded
    (anywhere in the round, as no event marks it).
    """
    bad = _not_void_and_reshuffled(ctx, ctx.wrong_card_count, at=-1)
    return _void_findings(ctx, "(e)", bad, _card_counts(ctx, bad))


def _card_counts(ctx: PaiGowPoker, rounds: np.ndarray) -> list[str]:
    """``hands of 8 and 6 cards`` for each of the ``rounds`` (a loop over those only)."""
    at = np.r_[0, np.cumsum(ctx.hands_per_round)]  # each round's first hand, then the end
    out = []
    for r in np.flatnonzero(rounds):
        parts = [str(c) for c in ctx.hand_size[at[r]:at[r + 1]] if c != CARDS_PER_HAND]
        if ctx.dealer_size[r] != CARDS_PER_HAND:
            parts.append(f"dealer {ctx.dealer_size[r]}")
        out.append(f"hands of {' and '.join(parts)} cards")
    return out


@rule("paigow.f", games=(GAME,), citation=f"{C}(f)", severity="high",
      summary="The dealer's hand is set (or reset) in the house way",
      columns=("status", "events", "dealer_cards", "dealer_high", "dealer_low"), params=("house_way", "house_ways"),
      needs=("suits", "ranks", "events"))  # events: a reset of the dealer's hand is an event
def f_dealer_house_way(ctx: PaiGowPoker) -> Hits:
    """(f) "If the dealer does not set the dealer's hand in the manner authorized by this rule, the hands
    must be reset in accordance with this rule and the round of play completed."

    Catalog: the dealer's final setting is the house way (a reset, when recorded, must reach it). Read
    by value: the final setting splits the dealer's own seven cards and scores as the house way's
    setting does in both hands (suits of equal ranks may be swapped).
    """
    high, low, complete = ctx.dealer_final_setting
    way_high, way_low = ctx.house_way_setting
    dealer_high, dealer_low = ctx.dealer_scores
    way_high_score, way_low_score = ctx.house_way_scores
    house_way = (complete & ctx.dealer_sets_own_cards & (dealer_high == way_high_score)
                 & (dealer_low == way_low_score))
    rows = np.flatnonzero(ctx.house_way_checked & ~house_way)
    message, expected, recorded = (np.empty(len(rows), dtype=object) for _ in range(3))
    for i, r in enumerate(rows):
        setting = f"{_show(high[r])} / {_show(low[r])}" if complete[r] else "no complete setting"
        way = f"{_show(way_high[r])} / {_show(way_low[r])}"
        message[i] = f"(f): dealer {'reset to' if ctx.dealer_reset[r] else 'set'} {setting}, house way {way}"
        expected[i], recorded[i] = way, setting
    return Hits(rows=rows, message=message, expected=expected, recorded=recorded)


def _show(cards: np.ndarray) -> str:
    """A hand's cards high to low (padding last)."""
    return cards_str(-np.sort(-cards.astype(np.int16)))


@rule("paigow.g", games=(GAME,), citation=f"{C}(g)", severity="high",
      summary="A card exposed while dealing the seven stacks: wagers void, cards reshuffled", columns=VOIDING,
      needs=("events",))
def g_card_exposed_during_stacks(ctx: PaiGowPoker) -> Hits:
    """(g) "If a card is exposed while the dealer is dealing the seven (7) stacks, the cards shall be
    reshuffled and all wagers shall be void and returned to the players."

    Catalog: a card exposed while dealing the stacks: round void, reshuffle recorded.
    """
    at = ctx.card_exposed_during_stacks_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_findings(ctx, "(g)", bad, "card exposed while dealing the stacks")


@rule("paigow.h", games=(GAME,), citation=f"{C}(h)", severity="high",
      summary="Other than seven stacks dealt: wagers void, cards reshuffled", columns=VOIDING,
      needs=("events",))
def h_wrong_stacks(ctx: PaiGowPoker) -> Hits:
    """(h) "If cards are being dealt and the dealer fails to deal the seven (7) stacks in accordance with
    this rule, all wagers shall be void and the cards shall be reshuffled."

    Catalog: other than seven stacks dealt: round void, reshuffle recorded.
    """
    at = ctx.wrong_stacks_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_findings(ctx, "(h)", bad, [f"{k} stacks dealt" for k in ctx.stacks_dealt[bad]])


@rule("paigow.i", games=(GAME,), citation=f"{C}(i)", severity="medium",
      summary="Other than four cards remaining: the supervisor is called; a misdeal voids the round",
      columns=("status", "events", "cards_remaining"),
      needs=("events",))
def i_cards_remaining(ctx: PaiGowPoker) -> Hits:
    """(i) "If there are not four (4) cards remaining, the dealer shall call the supervisor to determine
    if there was a misdeal; if so, all hands are void and wagers returned to the players."

    Catalog: other than four cards remaining: a supervisor call is recorded; if it found a misdeal,
    the round is void. A missing ``cards_remaining`` is not checked.
    """
    no_call = ctx.wrong_cards_remaining & ~ctx.supervisor_called
    misdeal_kept = ctx.wrong_cards_remaining & ctx.misdeal_found & ~ctx.void
    rows = np.flatnonzero(no_call | misdeal_kept)
    message = np.array([
        f"(i): {ctx.cards_remaining[r]} cards remaining, "
        + ("no supervisor call" if no_call[r] else f"supervisor found a misdeal, round {ctx.status[r]}")
        for r in rows], dtype=object)
    expected = np.where(no_call[rows], "supervisor called", "round void (misdeal)").astype(object)
    recorded = np.where(no_call[rows], "no supervisor_called event", _status(ctx, rows))
    return Hits(rows=rows, message=message, expected=expected, recorded=recorded.astype(object))


# ---- money ---------------------------------------------------------------------------------------
@rule("paigow.void", games=(GAME,), citation="void", severity="high", summary=VOID_SUMMARY,
      columns=("status", "hands", "wagers"),
      needs=("wagers",))
def void(ctx: PaiGowPoker) -> Hits:
    """``void``: in a void or dead round every wager's net is 0 ((c) "all wagers are void and returned
    to the players"; (g), (i) likewise)."""
    return void_round_nets(ctx)


@rule("paigow.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Completed round: each hand's net matches its comparison with the dealer (1:1 less commission)",
      columns=("status", "events", "hands", "dealer_high", "dealer_low"), params=("win", "commission"),
      needs=("wagers", "suits", "ranks", "events"))  # events: the dealer's final setting may be a reset
def paytable(ctx: PaiGowPoker) -> Hits:
    """``paytable``: in a completed round, each hand's net matches the comparison with the dealer
    (dealer wins copies; win pays 1:1 less 5% commission).

    A fouled hand loses; against a fouled dealer the hand wins (unless fouled too). Judged where the
    hand and the dealer have a complete setting; money compares to the rounding unit.
    """
    wrong = ctx.hand_settled & money_differs(ctx.hand_net, ctx.hand_exact_net, ctx.unit)
    b = np.flatnonzero(wrong)
    expected = money_round(ctx.hand_exact_net[b], ctx.unit, ctx.rounding)
    recorded = ctx.hand_net[b]
    seat, wager, won, fouled = ctx.hand_seat[b], ctx.hand_wager[b], ctx.hands_won[b], ctx.hand_fouled[b]
    message = np.array([
        f"paytable: seat {s} {OUTCOMES[k]}{' (fouled)' if f else ''} on {format_money(w)} pays {format_net(e)}, "
        f"recorded {format_net(x)}" for s, k, f, w, e, x in zip(seat, won, fouled, wager, expected, recorded, strict=False)],
        dtype=object)
    return Hits(rows=ctx.hand_round[b], message=message,
                expected=np.array([f"net {format_net(x)}" for x in expected], dtype=object),
                recorded=np.array([f"net {format_net(x)}" for x in recorded], dtype=object),
                discrepancy=recorded - expected, seat=seat, expected_amount=expected, recorded_amount=recorded)


# ---- integrity -------------------------------------------------------------------------------------
@rule("paigow.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="A card repeated in the round (one 53-card deck), or more than one joker",
      columns=("hands", "dealer_cards"),
      needs=("suits", "ranks"))
def integrity(ctx: PaiGowPoker) -> Hits:
    """``integrity``: a card that cannot be in the round: a card repeated in the one-deck round (the
    joker twice included). The message names the holders."""
    repeated = ctx.distinct_cards != ctx.cards_dealt
    rows = np.flatnonzero(repeated)
    return Hits(rows=rows, message=_holders(ctx, rows))


def _holders(ctx: PaiGowPoker, rows: np.ndarray) -> np.ndarray:
    """``integrity: 7h dealt to dealer and seat 3`` for each flagged round (a loop over those only)."""
    message = np.empty(len(rows), dtype=object)
    for i, rec in enumerate(ctx.table.select(["dealer_cards", "hands"]).take(pa.array(rows)).to_pylist()):
        holders: dict[int, list[str]] = {}
        for c in rec["dealer_cards"] or []:
            holders.setdefault(c, []).append("dealer")
        for h in rec["hands"] or []:
            for c in h["cards"] or []:
                holders.setdefault(c, []).append(f"seat {h['seat']}")
        parts = [f"{cards_str([c])} dealt to {' and '.join(h)}" for c, h in holders.items() if len(h) > 1]
        message[i] = "integrity: " + "; ".join(parts)
    return message
