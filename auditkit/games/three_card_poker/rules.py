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

from ...money import money_differs
from ...rules.context import objects
from ...rules.registry import Hits, rule
from ...rules.template import by_case
from ...rules.void import VOID_SUMMARY, VOID_WORDS, void_round_nets
from .context import DEALER, GAME, HAND, SECTION, ThreeCardPoker
from .hands import STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND

__all__ = ["ThreeCardPoker", "SECTION"]

def _settlement(what: str) -> dict[str, str]:
    """The words of a finding on a hand's ante and play nets."""
    return {"message": f"{HAND} vs {DEALER}: {what}; ante {{ante:money}} play {{play:money}}, recorded "
                       "{recorded_bets:bets}",
            "expected": "{expected_bets:bets}", "recorded": "{recorded_bets:bets}"}


def _ante_bonus(what: str) -> dict[str, str]:
    """The words of a finding on a hand's ante bonus."""
    return {"message": f"{{played}} {HAND}, ante {{ante:money}}: ante bonus {{bonus:money}} {what} "
                       "(expected {expected_bonus:money})",
            "expected": "ante bonus {expected_bonus:money}", "recorded": "ante bonus {bonus:money}"}


_PAIR_PLUS = {"message": f"{HAND}: pair plus {{pair_plus:money}} net {{net:net}}, paytable gives {{expected:net}}",
              "expected": "pair plus {expected:net}", "recorded": "pair plus {net:net}"}


# ---- (a) ---------------------------------------------------------------------------------------------------------
@rule("tcp.a", games=(GAME,), citation=f"{SECTION}(a)", severity="high",
      summary="A hand has an ante wager greater than 0", columns=("hands",),
      needs=("wagers",),
      message="seat {seat:int} has no ante (ante {ante:money})", expected="ante > 0", recorded="ante {ante:money}")
def a_ante(ctx: ThreeCardPoker) -> Hits:
    """(a) "The patron must place an ante wager to play against the dealer."

    Catalog: a hand has an ante > 0. Not about money (amounts NaN).
    """
    idx = np.flatnonzero(~(ctx.ante > 0))
    return Hits.at(ctx.hand_round[idx], items=idx, seat=ctx.hand_seat,
                   evidence={"seat": ctx.hand_seat, "ante": ctx.ante})


@rule("tcp.a1", games=(GAME,), citation=f"{SECTION}(a)(1)", severity="high",
      summary="A folded hand loses its ante and has no play bet", columns=("hands", "status"),
      needs=("wagers",),
      message=f"folded {HAND}: ante {{ante:money}} net {{net_ante:net}}, play {{play:money}} net {{net_play:net}}",
      expected="ante {expected_ante:net}, no play bet",
      recorded="ante {net_ante:net}, play {play:money} net {net_play:net}")
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
    return Hits.at(ctx.hand_round[idx], items=idx, seat=ctx.hand_seat, expected_amount=expected,
                   recorded_amount=recorded, evidence={
        **ctx.hand_evidence(), "ante": ctx.ante, "net_ante": ctx.net_ante, "play": ctx.play, "net_play": ctx.net_play,
        "expected_ante": lambda h: -ctx.ante[h]})


@rule("tcp.a2", games=(GAME,), citation=f"{SECTION}(a)(2)", severity="high",
      summary="A played hand's play bet equals its ante", columns=("hands",),
      needs=("wagers",),
      message=f"{HAND} played: play {{play:money}} differs from ante {{ante:money}}", expected="play {ante:money}",
      recorded="play {play:money}")
def a2_play_bet(ctx: ThreeCardPoker) -> Hits:
    """(a)(2) "Place a play bet that is in the same amount as the ante bet. The patron must place a play bet in
    order to continue participation in the hand."

    Catalog: a played hand's play bet equals its ante (a missing play bet included). Not about
    money: the settlement rules check the play bet as recorded.
    """
    idx = np.flatnonzero(ctx.played & money_differs(ctx.play, ctx.ante, ctx.unit))
    return Hits.at(ctx.hand_round[idx], items=idx, seat=ctx.hand_seat,
                   evidence={**ctx.hand_evidence(), "play": ctx.play, "ante": ctx.ante})


# ---- (b) ---------------------------------------------------------------------------------------------------------
@rule("tcp.b", games=(GAME,), citation=f"{SECTION}(b)", severity="high",
      summary="The dealer qualifies with queen high or better (played hands settled accordingly)",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"),
      message={case: f"{DEALER}: played hands (seats {{seats}}) settled as if the dealer {way}; nets {{net:net}}, "
                     "expected {expected:net}" for case, way in (("qualifies", "did not qualify"), ("not", "qualified"))},
      expected={"qualifies": "dealer qualifies", "not": "dealer does not qualify"},
      recorded={"qualifies": "settled as not qualifying", "not": "settled as qualifying"})
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
    def seats(r: np.ndarray) -> np.ndarray:  # the played hands of each (b) round (hands are in round order)
        lo, hi = np.searchsorted(ctx.hand_round, r), np.searchsorted(ctx.hand_round, r + 1)
        return objects([", ".join(str(int(s)) for s in ctx.hand_seat[a:b][ctx.played[a:b]])
                        for a, b in zip(lo, hi, strict=True)])

    hits = Hits.at(rows, case=lambda r: np.where(ctx.dealer_qualifies[r], "qualifies", "not").astype(object),
                   evidence={**ctx.dealer_evidence(hands=False), "seats": seats}, expected_amount=expected,
                   recorded_amount=recorded)
    hits.evidence.update(net=recorded, expected=expected)
    return hits


# ---- (c) ---------------------------------------------------------------------------------------------------------
@rule("tcp.c1", games=(GAME,), citation=f"{SECTION}(c)(1)", severity="high",
      summary="dealer does not qualify: ante wins at least 1:1, play pushes",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"),
      **_settlement("dealer does not qualify: ante wins at least 1:1, play pushes"))
def c1_dealer_does_not_qualify(ctx: ThreeCardPoker) -> Hits:
    """(c)(1) "If the dealer's hand does not qualify, all ante bets are won by the patrons and are paid at odds
    of at least one (1) to one (1). All play bets are considered a push and are returned to the patron."

    Catalog: dealer does not qualify: ante wins at least 1:1, play pushes. An ante paid below
    1:1 or a play bet not pushed; an ante paid at least 1:1 but off the posted odds is ``paytable``.
    """
    hand = ~ctx.dealer_qualified
    return ctx.settlement_hits(hand & ctx.ante_net_wrong & ctx.ante_paid_below_even, hand & ctx.play_net_wrong)


@rule("tcp.c2", games=(GAME,), citation=f"{SECTION}(c)(2)", severity="high",
      summary="dealer beats the hand: ante and play lose",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"),
      **_settlement("dealer beats the hand: ante and play lose"))
def c2_dealer_beats_hand(ctx: ThreeCardPoker) -> Hits:
    """(c)(2) "If the dealer's hand qualifies and beats the patron's hand, the patron loses the ante bet and
    the play bet."

    Catalog: dealer qualifies and beats the hand: ante and play lose (any other net is a finding).
    """
    hand = ctx.dealer_qualified & ctx.dealer_beats
    return ctx.settlement_hits(hand & ctx.ante_net_wrong, hand & ctx.play_net_wrong)


@rule("tcp.c3", games=(GAME,), citation=f"{SECTION}(c)(3)", severity="high",
      summary="hand beats the dealer: ante and play win at least 1:1",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"),
      **_settlement("hand beats the dealer: ante and play win at least 1:1"))
def c3_hand_beats_dealer(ctx: ThreeCardPoker) -> Hits:
    """(c)(3) "If the dealer's hand qualifies and does not beat the patron's hand, the patron wins. The ante
    bet and the play bet are both paid at odds of at least one (1) to one (1)."

    Catalog: dealer qualifies and does not beat the hand (a tie is (c)(4)): ante and play win at
    least 1:1. A win paid below 1:1; at least 1:1 but off the posted odds is ``paytable``.
    """
    hand = ctx.dealer_qualified & ctx.beats_dealer
    return ctx.settlement_hits(hand & ctx.ante_net_wrong & ctx.ante_paid_below_even,
                               hand & ctx.play_net_wrong & ctx.play_paid_below_even)


@rule("tcp.c4", games=(GAME,), citation=f"{SECTION}(c)(4)", severity="high",
      summary="tie with the dealer: ante and play push",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play"),
      needs=("wagers", "suits", "ranks"),
      **_settlement("tie with the dealer: ante and play push"))
def c4_tie(ctx: ThreeCardPoker) -> Hits:
    """(c)(4) "If the dealer's hand qualifies and ties with the patron's hand, both the ante bet and the play
    bet are considered a push and the wagers are returned to the patron."

    Catalog: dealer qualifies and ties: ante and play push (any other net is a finding).
    """
    hand = ctx.dealer_qualified & ctx.ties_dealer
    return ctx.settlement_hits(hand & ctx.ante_net_wrong, hand & ctx.play_net_wrong)


# ---- (d) ---------------------------------------------------------------------------------------------------------
@rule("tcp.d1", games=(GAME,), citation=f"{SECTION}(d)(1)", severity="high",
      summary="A played straight flush is paid an ante bonus of at least 5:1",
      columns=("hands", "status", "table_id"), params=("ante_bonus",),
      needs=("wagers", "suits", "ranks"),
      **_ante_bonus("below 5:1"))
def d1_straight_flush(ctx: ThreeCardPoker) -> Hits:
    """(d)(1) "A straight flush must be paid at odds of at least five (5) to one (1)."

    Catalog: played straight flush: ante bonus at least 5:1, whatever the dealer holds.
    """
    hand = ctx.played & (ctx.category == STRAIGHT_FLUSH)
    return ctx.ante_bonus_hits(hand & ctx.ante_bonus_below_minimum)


@rule("tcp.d2", games=(GAME,), citation=f"{SECTION}(d)(2)", severity="high",
      summary="A played three of a kind is paid an ante bonus of at least 4:1",
      columns=("hands", "status", "table_id"), params=("ante_bonus",),
      needs=("wagers", "ranks"),
      **_ante_bonus("below 4:1"))
def d2_three_of_a_kind(ctx: ThreeCardPoker) -> Hits:
    """(d)(2) "Three (3) of a kind must be paid at odds of at least four (4) to one (1)."

    Catalog: played three of a kind: ante bonus at least 4:1.
    """
    hand = ctx.played & (ctx.category == THREE_OF_A_KIND)
    return ctx.ante_bonus_hits(hand & ctx.ante_bonus_below_minimum)


@rule("tcp.d3", games=(GAME,), citation=f"{SECTION}(d)(3)", severity="high",
      summary="A played straight is paid an ante bonus of at least 1:1",
      columns=("hands", "status", "table_id"), params=("ante_bonus",),
      needs=("wagers", "ranks"),
      **_ante_bonus("below 1:1"))
def d3_straight(ctx: ThreeCardPoker) -> Hits:
    """(d)(3) "A straight must be paid at odds of at least one (1) to one (1)."

    Catalog: played straight: ante bonus at least 1:1.
    """
    hand = ctx.played & (ctx.category == STRAIGHT)
    return ctx.ante_bonus_hits(hand & ctx.ante_bonus_below_minimum)


@rule("tcp.d", games=(GAME,), citation=f"{SECTION}(d)", severity="high",
      summary="No ante bonus on a hand that does not qualify for one, or on a folded hand", columns=("hands", "status"),
      needs=("wagers", "suits", "ranks"),
      **_ante_bonus("paid on a hand that earns none"))
def d_no_ante_bonus_otherwise(ctx: ThreeCardPoker) -> Hits:
    """(d) "The patron's hand is not compared to the dealer's hand for purposes of the ante bonus. A patron
    with a qualifying ante bonus hand will be paid the bonus even if the dealer's hand beats the patron's
    hand. The ante bonus shall be paid at the following odds:" ((d)(1)-(d)(3) name the hands).

    Catalog: no ante bonus on a hand that does not qualify for one (or folded): a flush, pair or
    high card, or any folded hand, paid an ante bonus (expected 0).
    """
    hand = ctx.ante_bonus_checked & ~ctx.earns_ante_bonus
    return ctx.ante_bonus_hits(hand & money_differs(ctx.ante_bonus, 0.0, ctx.unit))


# ---- paytable, void, integrity ----------------------------------------------------------------------------------
@rule("tcp.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Payouts at or above the regulation minimums match the posted paytable; pair plus matches its paytable",
      columns=("hands", "dealer_cards", "status", "table_id"), params=("ante", "play", "ante_bonus", "pair_plus"),
      needs=("wagers", "suits", "ranks"),
      **by_case(settlement=_settlement("win paid off the posted paytable"),
                ante_bonus=_ante_bonus("differs from the posted paytable"), pair_plus=_PAIR_PLUS))
def paytable(ctx: ThreeCardPoker) -> Hits:
    """Catalog ``paytable``: payouts above the minimums match the posted paytable; pair plus matches its
    paytable (default 40/30/6/3/1 for SF/trips/straight/flush/pair). "Underpayment of a minimum cites
    the subsection; a payout above the posted paytable cites ``paytable``."

    An ante or play win, or an ante bonus, paid at least the regulation's minimum but not the
    posted odds; a pair plus net (on the patron's hand alone, folded or played) off its paytable.
    """
    ante_wins = ~ctx.dealer_qualified | ctx.beats_dealer
    play_wins = ctx.dealer_qualified & ctx.beats_dealer
    return Hits.concat([
        ctx.settlement_hits(ante_wins & ctx.ante_net_wrong & ~ctx.ante_paid_below_even,
                            play_wins & ctx.play_net_wrong & ~ctx.play_paid_below_even),
        ctx.ante_bonus_hits(ctx.earns_ante_bonus & ctx.ante_bonus_wrong & ~ctx.ante_bonus_below_minimum),
        ctx.pair_plus_hits(ctx.pair_plus_wrong)])


@rule("tcp.void", games=(GAME,), citation="void", severity="high", summary=VOID_SUMMARY, **VOID_WORDS,
      columns=("hands", "status"),
      needs=("wagers",))
def void(ctx: ThreeCardPoker) -> Hits:
    """Catalog ``void``: in a void or dead round every wager's net is 0 (ante, play, ante bonus, pair plus)."""
    return void_round_nets(ctx)


@rule("tcp.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="One 52-card deck: no card repeated in a round, no joker, three cards a hand",
      columns=("hands", "dealer_cards"),
      needs=("suits", "ranks"),
      message="{problems}", expected="three distinct cards a hand", recorded="{problems}")
def integrity(ctx: ThreeCardPoker) -> Hits:
    """Catalog ``integrity``: a card repeated in a one-deck round, the joker outside pai gow; and a hand
    (or the dealer's) of other than three cards. Not about money."""
    return Hits.where(ctx.integrity_flagged, evidence={"problems": ctx.integrity_problems})
