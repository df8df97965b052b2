"""Three card poker, patron against the dealer: the rules of 68 IAC 10-11-6, one function per subsection.

Each rule is a condition over named facts of :class:`ThreeCardPoker`, the
context of a batch of rounds in :mod:`.context` (one entry per round for the dealer, one per hand
for the patrons; each fact computed on first use). Its docstring quotes the
regulation and the catalog's reading; ``docs/three_card_poker.md`` explains the
readings in full. The regulation's tables (the queen-high qualifier, the 1:1
minimum, the ante bonus minimums) and the settlement under (c) are in
:mod:`.paytable`; the tuned kernels (the integrity screen, the status column) are in :mod:`.kernels`.

Money findings carry the expected and recorded nets of the wagers they cover
(expected rounded as the paytable rounds) and ``discrepancy`` = recorded - expected.
"""

from __future__ import annotations

import numpy as np

from ...money import format_money, format_net, money_differs
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, void_round_nets
from .context import GAME, SECTION, ThreeCardPoker, join_hits, texts
from .hands import STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND

__all__ = ["ThreeCardPoker", "SECTION"]

# ---- (a) ---------------------------------------------------------------------------------------------------------
@rule("tcp.a", games=(GAME,), citation=f"{SECTION}(a)", severity="high",
      summary="A hand has an ante wager greater than 0", columns=("hands",),
      needs=("wagers",))
def a_ante(ctx: ThreeCardPoker) -> Hits:
    """(a) "The patron must place an ante wager to play against the dealer."

    Catalog: a hand has an ante > 0. Not about money (amounts NaN).
    """
    idx = np.flatnonzero(~(ctx.ante > 0))
    return Hits(rows=ctx.hand_round[idx],
                message=texts(f"seat {int(ctx.hand_seat[i])} has no ante (ante {format_money(ctx.ante[i])})" for i in idx),
                expected="ante > 0", recorded=texts(f"ante {format_money(ctx.ante[i])}" for i in idx),
                seat=ctx.hand_seat[idx])


@rule("tcp.a1", games=(GAME,), citation=f"{SECTION}(a)(1)", severity="high",
      summary="A folded hand loses its ante and has no play bet", columns=("hands", "status"),
      needs=("wagers",))
def a1_fold(ctx: ThreeCardPoker) -> Hits:
    """(a) "After the player receives his or her cards, the player may do one (1) of the following:
    (1) Fold and forfeit the ante bet."

    Catalog: a folded hand loses its ante and has no play bet. In a void or dead round
    the ante is returned (the shared void check), but a play bet is still a finding.
    """
    done = ctx.in_completed_round
    forfeits = ~money_differs(ctx.net_ante, -ctx.ante, ctx.unit) & ~money_differs(ctx.net_play, 0.0, ctx.unit)
    idx = np.flatnonzero(ctx.folded & ((done & ~forfeits) | (ctx.play != 0)))
    expected = np.where(done[idx], -ctx.ante[idx], np.nan)
    recorded = np.where(done[idx], ctx.net_ante[idx] + ctx.net_play[idx], np.nan)
    message = texts(f"folded {ctx.hand_text(i)}: ante {format_money(ctx.ante[i])} net {format_net(ctx.net_ante[i])}, "
                     f"play {format_money(ctx.play[i])} net {format_net(ctx.net_play[i])}" for i in idx)
    return Hits(rows=ctx.hand_round[idx], message=message,
                expected=texts(f"ante {format_net(-ctx.ante[i])}, no play bet" for i in idx),
                recorded=texts(f"ante {format_net(ctx.net_ante[i])}, play {format_money(ctx.play[i])} net "
                                f"{format_net(ctx.net_play[i])}" for i in idx),
                discrepancy=np.nan_to_num(recorded - expected), seat=ctx.hand_seat[idx], expected_amount=expected,
                recorded_amount=recorded)


@rule("tcp.a2", games=(GAME,), citation=f"{SECTION}(a)(2)", severity="high",
      summary="A played hand's play bet equals its ante", columns=("hands",),
      needs=("wagers",))
def a2_play_bet(ctx: ThreeCardPoker) -> Hits:
    """(a)(2) "Place a play bet that is in the same amount as the ante bet. The patron must place a play bet in
    order to continue participation in the hand."

    Catalog: a played hand's play bet equals its ante (a missing play bet included). Not about
    money: the settlement rules check the play bet as recorded.
    """
    idx = np.flatnonzero(ctx.played & money_differs(ctx.play, ctx.ante, ctx.unit))
    return Hits(rows=ctx.hand_round[idx],
                message=texts(f"{ctx.hand_text(i)} played: play {format_money(ctx.play[i])} differs from ante "
                               f"{format_money(ctx.ante[i])}" for i in idx),
                expected=texts(f"play {format_money(ctx.ante[i])}" for i in idx),
                recorded=texts(f"play {format_money(ctx.play[i])}" for i in idx), seat=ctx.hand_seat[idx])


# ---- (b) ---------------------------------------------------------------------------------------------------------
@rule("tcp.b", games=(GAME,), citation=f"{SECTION}(b)", severity="high",
      summary="The dealer qualifies with queen high or better (played hands settled accordingly)",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"))
def b_dealer_qualifies(ctx: ThreeCardPoker) -> Hits:
    """(b) "The dealer's hand must have a value of queen high or better to qualify to play against the
    patrons' hands."

    Catalog: a log shows this through the settlements: when the played hands of a round are
    settled as if the dealer's qualification were the opposite of what the dealer's cards give,
    the round has one (b) finding (not a (c) finding per hand). Amounts over those hands' ante and play.
    """
    rows = np.flatnonzero(ctx.settled_as_if_qualification_opposite)
    hands = ctx.settled_against_dealer & ctx.in_opposite_round
    expected = np.bincount(ctx.hand_round[hands], minlength=ctx.n, weights=ctx.rounded(
        ctx.expected_net_ante[hands]) + ctx.rounded(ctx.expected_net_play[hands]))[rows]
    recorded = np.bincount(ctx.hand_round[hands], minlength=ctx.n,
                           weights=ctx.net_ante[hands] + ctx.net_play[hands])[rows]
    message = np.empty(len(rows), dtype=object)
    for k, r in enumerate(rows):  # (b) rounds only
        lo, hi = np.searchsorted(ctx.hand_round, [r, r + 1])  # hands are in round order
        seats = ", ".join(str(int(s)) for s in ctx.hand_seat[lo:hi][ctx.played[lo:hi]])
        way = "did not qualify" if ctx.dealer_qualifies[r] else "qualified"
        message[k] = (f"{ctx.dealer_text(r)}: played hands (seats {seats}) settled as if the dealer {way}; "
                      f"nets {format_net(recorded[k])}, expected {format_net(expected[k])}")
    qualifies = ctx.dealer_qualifies[rows]
    return Hits(rows=rows, message=message,
                expected=np.where(qualifies, "dealer qualifies", "dealer does not qualify").astype(object),
                recorded=np.where(qualifies, "settled as not qualifying", "settled as qualifying").astype(object),
                discrepancy=recorded - expected, expected_amount=expected, recorded_amount=recorded)


# ---- (c) ---------------------------------------------------------------------------------------------------------
@rule("tcp.c1", games=(GAME,), citation=f"{SECTION}(c)(1)", severity="high",
      summary="dealer does not qualify: ante wins at least 1:1, play pushes",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"))
def c1_dealer_does_not_qualify(ctx: ThreeCardPoker) -> Hits:
    """(c)(1) "If the dealer's hand does not qualify, all ante bets are won by the patrons and are paid at odds
    of at least one (1) to one (1). All play bets are considered a push and are returned to the patron."

    Catalog: dealer does not qualify: ante wins at least 1:1, play pushes. An ante paid below
    1:1 or a play bet not pushed; an ante paid at least 1:1 but off the posted odds is ``paytable``.
    """
    hand = ~ctx.dealer_qualified
    return ctx.settlement_hits(hand & ctx.ante_net_wrong & ctx.ante_paid_below_even, hand & ctx.play_net_wrong,
                               "dealer does not qualify: ante wins at least 1:1, play pushes")


@rule("tcp.c2", games=(GAME,), citation=f"{SECTION}(c)(2)", severity="high",
      summary="dealer beats the hand: ante and play lose",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"))
def c2_dealer_beats_hand(ctx: ThreeCardPoker) -> Hits:
    """(c)(2) "If the dealer's hand qualifies and beats the patron's hand, the patron loses the ante bet and
    the play bet."

    Catalog: dealer qualifies and beats the hand: ante and play lose (any other net is a finding).
    """
    hand = ctx.dealer_qualified & ctx.dealer_beats
    return ctx.settlement_hits(hand & ctx.ante_net_wrong, hand & ctx.play_net_wrong,
                               "dealer beats the hand: ante and play lose")


@rule("tcp.c3", games=(GAME,), citation=f"{SECTION}(c)(3)", severity="high",
      summary="hand beats the dealer: ante and play win at least 1:1",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"))
def c3_hand_beats_dealer(ctx: ThreeCardPoker) -> Hits:
    """(c)(3) "If the dealer's hand qualifies and does not beat the patron's hand, the patron wins. The ante
    bet and the play bet are both paid at odds of at least one (1) to one (1)."

    Catalog: dealer qualifies and does not beat the hand (a tie is (c)(4)): ante and play win at
    least 1:1. A win paid below 1:1; at least 1:1 but off the posted odds is ``paytable``.
    """
    hand = ctx.dealer_qualified & ctx.beats_dealer
    return ctx.settlement_hits(hand & ctx.ante_net_wrong & ctx.ante_paid_below_even,
                               hand & ctx.play_net_wrong & ctx.play_paid_below_even,
                               "hand beats the dealer: ante and play win at least 1:1")


@rule("tcp.c4", games=(GAME,), citation=f"{SECTION}(c)(4)", severity="high",
      summary="tie with the dealer: ante and play push",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"))
def c4_tie(ctx: ThreeCardPoker) -> Hits:
    """(c)(4) "If the dealer's hand qualifies and ties with the patron's hand, both the ante bet and the play
    bet are considered a push and the wagers are returned to the patron."

    Catalog: dealer qualifies and ties: ante and play push (any other net is a finding).
    """
    hand = ctx.dealer_qualified & ctx.ties_dealer
    return ctx.settlement_hits(hand & ctx.ante_net_wrong, hand & ctx.play_net_wrong,
                               "tie with the dealer: ante and play push")


# ---- (d) ---------------------------------------------------------------------------------------------------------
@rule("tcp.d1", games=(GAME,), citation=f"{SECTION}(d)(1)", severity="high",
      summary="A played straight flush is paid an ante bonus of at least 5:1",
      columns=("hands", "status", "table_id"), params=("ante_bonus",),
      needs=("wagers", "suits", "ranks"))
def d1_straight_flush(ctx: ThreeCardPoker) -> Hits:
    """(d)(1) "A straight flush must be paid at odds of at least five (5) to one (1)."

    Catalog: played straight flush: ante bonus at least 5:1, whatever the dealer holds.
    """
    hand = ctx.played & (ctx.category == STRAIGHT_FLUSH)
    return ctx.ante_bonus_hits(hand & ctx.ante_bonus_below_minimum, "below 5:1")


@rule("tcp.d2", games=(GAME,), citation=f"{SECTION}(d)(2)", severity="high",
      summary="A played three of a kind is paid an ante bonus of at least 4:1",
      columns=("hands", "status", "table_id"), params=("ante_bonus",),
      needs=("wagers", "ranks"))
def d2_three_of_a_kind(ctx: ThreeCardPoker) -> Hits:
    """(d)(2) "Three (3) of a kind must be paid at odds of at least four (4) to one (1)."

    Catalog: played three of a kind: ante bonus at least 4:1.
    """
    hand = ctx.played & (ctx.category == THREE_OF_A_KIND)
    return ctx.ante_bonus_hits(hand & ctx.ante_bonus_below_minimum, "below 4:1")


@rule("tcp.d3", games=(GAME,), citation=f"{SECTION}(d)(3)", severity="high",
      summary="A played straight is paid an ante bonus of at least 1:1",
      columns=("hands", "status", "table_id"), params=("ante_bonus",),
      needs=("wagers", "ranks"))
def d3_straight(ctx: ThreeCardPoker) -> Hits:
    """(d)(3) "A straight must be paid at odds of at least one (1) to one (1)."

    Catalog: played straight: ante bonus at least 1:1.
    """
    hand = ctx.played & (ctx.category == STRAIGHT)
    return ctx.ante_bonus_hits(hand & ctx.ante_bonus_below_minimum, "below 1:1")


@rule("tcp.d", games=(GAME,), citation=f"{SECTION}(d)", severity="high",
      summary="No ante bonus on a hand that does not qualify for one, or on a folded hand", columns=("hands", "status"),
      needs=("wagers", "suits", "ranks"))
def d_no_ante_bonus_otherwise(ctx: ThreeCardPoker) -> Hits:
    """(d) "The patron's hand is not compared to the dealer's hand for purposes of the ante bonus. A patron
    with a qualifying ante bonus hand will be paid the bonus even if the dealer's hand beats the patron's
    hand. The ante bonus shall be paid at the following odds:" ((d)(1)-(d)(3) name the hands).

    Catalog: no ante bonus on a hand that does not qualify for one (or folded): a flush, pair or
    high card, or any folded hand, paid an ante bonus (expected 0).
    """
    hand = ctx.ante_bonus_checked & ~ctx.earns_ante_bonus
    return ctx.ante_bonus_hits(hand & money_differs(ctx.ante_bonus, 0.0, ctx.unit), "paid on a hand that earns none")


# ---- paytable, void, integrity ----------------------------------------------------------------------------------
@rule("tcp.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Payouts at or above the regulation minimums match the posted paytable; pair plus matches its paytable",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play", "ante_bonus", "pair_plus"),
      needs=("wagers", "suits", "ranks"))
def paytable(ctx: ThreeCardPoker) -> Hits:
    """Catalog ``paytable``: payouts above the minimums match the posted paytable; pair plus matches its
    paytable (default 40/30/6/3/1 for SF/trips/straight/flush/pair). "Underpayment of a minimum cites
    the subsection; a payout above the posted paytable cites ``paytable``."

    An ante or play win, or an ante bonus, paid at least the regulation's minimum but not the
    posted odds; a pair plus net (on the patron's hand alone, folded or played) off its paytable.
    """
    ante_wins = ~ctx.dealer_qualified | ctx.beats_dealer
    play_wins = ctx.dealer_qualified & ctx.beats_dealer
    return join_hits(
        ctx.settlement_hits(ante_wins & ctx.ante_net_wrong & ~ctx.ante_paid_below_even,
                            play_wins & ctx.play_net_wrong & ~ctx.play_paid_below_even,
                            "win paid off the posted paytable"),
        ctx.ante_bonus_hits(ctx.earns_ante_bonus & ctx.ante_bonus_wrong & ~ctx.ante_bonus_below_minimum,
                            "differs from the posted paytable"),
        ctx.pair_plus_hits(ctx.pair_plus_wrong))


@rule("tcp.void", games=(GAME,), citation="void", severity="high", summary=VOID_SUMMARY, columns=("hands", "status"),
      needs=("wagers",))
def void(ctx: ThreeCardPoker) -> Hits:
    """Catalog ``void``: in a void or dead round every wager's net is 0 (ante, play, ante bonus, pair plus)."""
    return void_round_nets(ctx)


@rule("tcp.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="One 52-card deck: no card repeated in a round, no joker, three cards a hand",
      columns=("hands", "dealer_cards"),
      needs=("suits", "ranks"))
def integrity(ctx: ThreeCardPoker) -> Hits:
    """Catalog ``integrity``: a card repeated in a one-deck round, the joker outside pai gow; and a hand
    (or the dealer's) of other than three cards. Not about money."""
    rows = np.flatnonzero(ctx.integrity_flagged)
    messages = ctx.integrity_messages(rows)
    return Hits(rows=rows, message=messages, expected="three distinct cards a hand", recorded=messages)
