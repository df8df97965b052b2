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

from typing import Any

import numpy as np
import pyarrow as pa

from ...cards import cards_str
from ...money import money_differs, money_round
from ...rules.context import objects
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, VOID_WORDS, void_round_nets
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


def _void_words(subsection: str, what: str) -> dict[str, Any]:
    """The words of a void-and-reshuffle finding; ``what`` names the irregularity (a template)."""
    return {"message": {"void": f"{subsection}: {what}, round void but no reshuffle",
                        "not_void": f"{subsection}: {what}, round {{status}}"},
            "expected": "round void, reshuffle recorded",
            "recorded": {"void": "status void, no reshuffle after it", "not_void": "status {status}"}}


def _void_hits(ctx: PaiGowPoker, bad: np.ndarray, **evidence: Any) -> Hits:
    """The findings of a void-and-reshuffle subsection on the rounds ``bad``, with the irregularity's evidence."""
    return Hits.where(bad, case=lambda r: np.where(ctx.void[r], "void", "not_void").astype(object),
                      evidence={"status": ctx.status, **evidence})


@rule("paigow.a", games=(GAME,), citation=f"{C}(a)", severity="high",
      summary="More than one card found face up in the deck: all hands void and the cards reshuffled",
      columns=VOIDING,
      needs=("events",),
      **_void_words("(a)", "{face_up:int} face-up cards found"))
def a_face_up_cards(ctx: PaiGowPoker) -> Hits:
    """(a) "A card found turned face up in the deck shall not be used in the game and shall be placed
    in the discard holder. If more than one (1) card is found turned face up in the deck, all hands
    shall be void and the cards reshuffled."

    Catalog: more than one card found face up: the round is void and a reshuffle is recorded.
    """
    bad = _not_void_and_reshuffled(ctx, ctx.more_than_one_face_up, at=ctx.first_face_up_at)
    return _void_hits(ctx, bad, face_up=ctx.face_up_cards)


@rule("paigow.b", games=(GAME,), citation=f"{C}(b)", severity="medium",
      summary="After a 'no roll' the dice are reshaken before the cards are dealt", columns=("events",),
      needs=("events",),
      message="(b): no new roll before the deal after a no_roll",
      expected="a roll after the no_roll, before the stacks are dealt",
      recorded="no roll between the no_roll and the deal")
def b_no_roll(ctx: PaiGowPoker) -> Hits:
    """(b) "If the dealer uncovers the pai gow poker shaker and all three (3) dice do not land flat on
    the bottom of the shaker or the die or dice fall out of the shaker, the dealer shall call a "No
    roll" and reshake the dice."

    Catalog: after a ``no_roll``, a new ``roll`` comes before the cards are dealt.
    """
    no_roll = ctx.last_no_roll_at >= 0
    not_reshaken = (ctx.last_no_roll_at > ctx.deal_at) | (ctx.last_roll_before_deal_at < ctx.last_no_roll_at)
    return Hits.where(no_roll & not_reshaken)


@rule("paigow.c1", games=(GAME,), citation=f"{C}(c)(1)", severity="high",
      summary="First stack delivered to the wrong position for the dice: all hands dead",
      columns=("status", "events", "dice", "first_position"),
      needs=("events",),
      message={case: "(c)(1): first_position {first_position:int}, dice total {dice_used:int} gives {gives:int}"
               + (" (recorded dice {dice})" if case else "") + "; round {status}" for case in ("", "dice")},
      expected="hands dead (status dead or void)", recorded="status {status}")
def c1_wrong_position(ctx: PaiGowPoker) -> Hits:
    """(c) "If the dealer: (1) incorrectly totals the dice and deals the first card or delivers the first
    pile of cards to the wrong position, all hands shall be called dead;"

    Catalog: ``first_position`` differs from the one the dice give: hands are dead (status ``dead``
    or ``void``).
    """
    def dice(r: np.ndarray) -> np.ndarray:  # the recorded dice where their total is not the one used
        recorded = ctx.table["dice"].take(pa.array(r, pa.int64())).to_pylist()
        return objects([str(d) if d is not None and sum(d) != u else None
                        for d, u in zip(recorded, ctx.dice_used[r], strict=True)])

    hits = Hits.where(ctx.wrong_first_position & ~(ctx.dead | ctx.void), evidence={
        "first_position": ctx.first_position, "dice_used": ctx.dice_used,
        "gives": lambda r: dice_position(ctx.dice_used[r]), "dice": dice, "status": ctx.status})
    hits.case = np.where([d is None for d in hits.evidence["dice"]], "", "dice").astype(object)
    return hits


@rule("paigow.c2", games=(GAME,), citation=f"{C}(c)(2)", severity="high",
      summary="A card drawn out of order and exposed: all hands void, cards reshuffled", columns=VOIDING,
      needs=("events",), **_void_words("(c)(2)", "card drawn out of order and exposed"))
def c2_out_of_order_exposed(ctx: PaiGowPoker) -> Hits:
    """(c) "If the dealer: ... (2) draws a card out of order; ... all hands shall be void and the dealer
    shall reshuffle the cards and all wagers are void and returned to the players."

    Catalog: a card drawn out of order and exposed: round void, reshuffle recorded (an unexposed one
    is (d)).
    """
    at = ctx.exposed_out_of_order_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_hits(ctx, bad)


@rule("paigow.c3", games=(GAME,), citation=f"{C}(c)(3)", severity="high",
      summary="A card dealt to the dealer's hand exposed: all hands void, cards reshuffled", columns=VOIDING,
      needs=("events",), **_void_words("(c)(3)", "dealer card exposed"))
def c3_dealer_card_exposed(ctx: PaiGowPoker) -> Hits:
    """(c) "If the dealer: ... (3) deals a card to the dealer's hand that is exposed; all hands shall be
    void and the dealer shall reshuffle the cards and all wagers are void and returned to the players."

    Catalog: a card dealt to the dealer exposed: round void, reshuffle recorded.
    """
    at = ctx.dealer_card_exposed_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_hits(ctx, bad)


@rule("paigow.d", games=(GAME,), citation=f"{C}(d)", severity="high",
      summary="A card drawn out of order unexposed is used as the next card: the round continues",
      columns=("status", "events", "dice", "first_position", "hands", "dealer_cards", "cards_remaining"),
      needs=("events", "order"),
      message="(d): unexposed out-of-order card, round {status}", expected="round continues (completed)",
      recorded="status {status}")
def d_out_of_order_unexposed(ctx: PaiGowPoker) -> Hits:
    """(d) "A card drawn out of order without its face being exposed shall be used as though it was the
    next card from the deck."

    Catalog: a card drawn out of order, not exposed: the round continues (voiding it is a finding),
    unless something else in the round calls for a void or dead round.
    """
    bad = ctx.unexposed_out_of_order & (ctx.void | ctx.dead) & ~ctx.void_called_for
    return Hits.where(bad, evidence={"status": ctx.status})


@rule("paigow.e", games=(GAME,), citation=f"{C}(e)", severity="high",
      summary="A player or the dealer dealt other than seven cards: all hands void, cards reshuffled",
      columns=("status", "events", "hands", "dealer_cards"),
      needs=("events",), **_void_words("(e)", "hands of {counts} cards"))
def e_wrong_card_count(ctx: PaiGowPoker) -> Hits:
    """(e) "If any player or the dealer is dealt an incorrect number of cards, all hands shall be void
    and the cards reshuffled."

    Catalog: a hand (or the dealer) with other than seven cards: round void, reshuffle recorded
    (anywhere in the round, as no event marks it).
    """
    bad = _not_void_and_reshuffled(ctx, ctx.wrong_card_count, at=-1)
    return _void_hits(ctx, bad, counts=lambda r: _card_counts(ctx, r))


def _card_counts(ctx: PaiGowPoker, rounds: np.ndarray) -> np.ndarray:
    """``8 and dealer 6``: the card counts other than seven in each of the ``rounds`` (a loop over those only)."""
    at = np.r_[0, np.cumsum(ctx.hands_per_round)]  # each round's first hand, then the end
    out = []
    for r in rounds:
        parts = [str(c) for c in ctx.hand_size[at[r]:at[r + 1]] if c != CARDS_PER_HAND]
        if ctx.dealer_size[r] != CARDS_PER_HAND:
            parts.append(f"dealer {ctx.dealer_size[r]}")
        out.append(" and ".join(parts))
    return objects(out)


_SETTING = "{high:cards} / {low:cards}"


@rule("paigow.f", games=(GAME,), citation=f"{C}(f)", severity="high",
      summary="The dealer's hand is set (or reset) in the house way",
      columns=("status", "events", "dealer_cards", "dealer_high", "dealer_low"), params=("house_way", "house_ways"),
      needs=("suits", "ranks", "events"),  # events: a reset of the dealer's hand is an event
      message={f"{did}{incomplete}": f"(f): dealer {did} " + (_SETTING if not incomplete else "no complete setting")
               + ", house way {way_high:cards} / {way_low:cards}"
               for did in ("set", "reset to") for incomplete in ("", "/incomplete")},
      expected="{way_high:cards} / {way_low:cards}",
      recorded={f"{did}{incomplete}": _SETTING if not incomplete else "no complete setting"
                for did in ("set", "reset to") for incomplete in ("", "/incomplete")})
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
    return Hits.where(ctx.house_way_checked & ~house_way,
                      case=lambda r: np.where(ctx.dealer_reset[r], "reset to", "set").astype(object)
                      + np.where(complete[r], "", "/incomplete"),
                      evidence={"high": lambda r: _high_to_low(high[r]), "low": lambda r: _high_to_low(low[r]),
                                "way_high": lambda r: _high_to_low(way_high[r]),
                                "way_low": lambda r: _high_to_low(way_low[r])})


def _high_to_low(cards: np.ndarray) -> np.ndarray:
    """Each hand's cards high to low (padding last)."""
    return objects(list(-np.sort(-cards.astype(np.int16), axis=1)))


@rule("paigow.g", games=(GAME,), citation=f"{C}(g)", severity="high",
      summary="A card exposed while dealing the seven stacks: wagers void, cards reshuffled", columns=VOIDING,
      needs=("events",), **_void_words("(g)", "card exposed while dealing the stacks"))
def g_card_exposed_during_stacks(ctx: PaiGowPoker) -> Hits:
    """(g) "If a card is exposed while the dealer is dealing the seven (7) stacks, the cards shall be
    reshuffled and all wagers shall be void and returned to the players."

    Catalog: a card exposed while dealing the stacks: round void, reshuffle recorded.
    """
    at = ctx.card_exposed_during_stacks_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_hits(ctx, bad)


@rule("paigow.h", games=(GAME,), citation=f"{C}(h)", severity="high",
      summary="Other than seven stacks dealt: wagers void, cards reshuffled", columns=VOIDING,
      needs=("events",), **_void_words("(h)", "{stacks:int} stacks dealt"))
def h_wrong_stacks(ctx: PaiGowPoker) -> Hits:
    """(h) "If cards are being dealt and the dealer fails to deal the seven (7) stacks in accordance with
    this rule, all wagers shall be void and the cards shall be reshuffled."

    Catalog: other than seven stacks dealt: round void, reshuffle recorded.
    """
    at = ctx.wrong_stacks_at
    bad = _not_void_and_reshuffled(ctx, at != NONE, at=at)
    return _void_hits(ctx, bad, stacks=ctx.stacks_dealt)


@rule("paigow.i", games=(GAME,), citation=f"{C}(i)", severity="medium",
      summary="Other than four cards remaining: the supervisor is called; a misdeal voids the round",
      columns=("status", "events", "cards_remaining"),
      needs=("events",),
      message={"no_call": "(i): {cards_remaining:int} cards remaining, no supervisor call",
               "misdeal": "(i): {cards_remaining:int} cards remaining, supervisor found a misdeal, round {status}"},
      expected={"no_call": "supervisor called", "misdeal": "round void (misdeal)"},
      recorded={"no_call": "no supervisor_called event", "misdeal": "status {status}"})
def i_cards_remaining(ctx: PaiGowPoker) -> Hits:
    """(i) "If there are not four (4) cards remaining, the dealer shall call the supervisor to determine
    if there was a misdeal; if so, all hands are void and wagers returned to the players."

    Catalog: other than four cards remaining: a supervisor call is recorded; if it found a misdeal,
    the round is void. A missing ``cards_remaining`` is not checked.
    """
    no_call = ctx.wrong_cards_remaining & ~ctx.supervisor_called
    misdeal_kept = ctx.wrong_cards_remaining & ctx.misdeal_found & ~ctx.void
    return Hits.where(no_call | misdeal_kept, case=lambda r: np.where(no_call[r], "no_call", "misdeal").astype(object),
                      evidence={"cards_remaining": ctx.cards_remaining, "status": ctx.status})


# ---- money ---------------------------------------------------------------------------------------
@rule("paigow.void", games=(GAME,), citation="void", severity="high", summary=VOID_SUMMARY, **VOID_WORDS,
      columns=("status", "hands", "wagers"),
      needs=("wagers",))
def void(ctx: PaiGowPoker) -> Hits:
    """``void``: in a void or dead round every wager's net is 0 ((c) "all wagers are void and returned
    to the players"; (g), (i) likewise)."""
    return void_round_nets(ctx)


@rule("paigow.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Completed round: each hand's net matches its comparison with the dealer (1:1 less commission)",
      columns=("status", "events", "hands", "dealer_high", "dealer_low"), params=("win", "commission"),
      needs=("wagers", "suits", "ranks", "events"),  # events: the dealer's final setting may be a reset
      message="paytable: seat {seat:int} {result}{fouled} on {wager:money} pays {expected:net}, recorded {net:net}",
      expected="{expected:net}", recorded="{net:net}")
def paytable(ctx: PaiGowPoker) -> Hits:
    """``paytable``: in a completed round, each hand's net matches the comparison with the dealer
    (dealer wins copies; win pays 1:1 less 5% commission).

    A fouled hand loses; against a fouled dealer the hand wins (unless fouled too). Judged where the
    hand and the dealer have a complete setting; money compares to the rounding unit.
    """
    b = np.flatnonzero(ctx.hand_settled & money_differs(ctx.hand_net, ctx.hand_exact_net, ctx.unit))
    expected = money_round(ctx.hand_exact_net[b], ctx.unit, ctx.rounding)
    recorded, seat = ctx.hand_net[b], ctx.hand_seat[b]
    return Hits(rows=ctx.hand_round[b], evidence={
        "seat": seat, "result": np.array(OUTCOMES, dtype=object)[ctx.hands_won[b]],
        "fouled": np.where(ctx.hand_fouled[b], " (fouled)", "").astype(object), "wager": ctx.hand_wager[b],
        "expected": expected, "net": recorded},
        seat=seat, expected_amount=expected, recorded_amount=recorded)


# ---- integrity -------------------------------------------------------------------------------------
@rule("paigow.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="A card repeated in the round (one 53-card deck), or more than one joker",
      columns=("hands", "dealer_cards"),
      needs=("suits", "ranks"), message="integrity: {repeats}")
def integrity(ctx: PaiGowPoker) -> Hits:
    """``integrity``: a card that cannot be in the round: a card repeated in the one-deck round (the
    joker twice included). The message names the holders."""
    return Hits.where(ctx.distinct_cards != ctx.cards_dealt, evidence={"repeats": lambda r: _holders(ctx, r)})


def _holders(ctx: PaiGowPoker, rows: np.ndarray) -> np.ndarray:
    """``7h dealt to dealer and seat 3`` for each flagged round (a loop over those only)."""
    message = np.empty(len(rows), dtype=object)
    for i, rec in enumerate(ctx.table.select(["dealer_cards", "hands"]).take(pa.array(rows)).to_pylist()):
        holders: dict[int, list[str]] = {}
        for c in rec["dealer_cards"] or []:
            holders.setdefault(c, []).append("dealer")
        for h in rec["hands"] or []:
            for c in h["cards"] or []:
                holders.setdefault(c, []).append(f"seat {h['seat']}")
        parts = [f"{cards_str([c])} dealt to {' and '.join(h)}" for c, h in holders.items() if len(h) > 1]
        message[i] = "; ".join(parts)
    return message
