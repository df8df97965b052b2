"""Baccarat and mini baccarat: 68 IAC 10-10-14 (third-card rules, dealing order, cut card).

One rule per subsection, each a condition over named facts of the :class:`Baccarat`
context (two-card totals, naturals, who drew, what the tableau of ``tableau.py``
requires, the outcome and the paytable's net of each wager); a fact is computed
the first time a rule asks for it. Each rule declares its words as templates, filled by the engine
from the evidence it returns, for the flagged rows only.

How the catalog is read (see ``docs/baccarat.md``):

* a wrong draw or stand is one finding, on the subsection that governs the hand
  that acted wrongly; the banker's duty is judged on the cards as dealt (whether
  the player actually drew, and the player's third card as dealt);
* a round whose hands hold fewer than two cards cannot be played out: in a
  completed round that is an ``integrity`` finding, and the drawing,
  announcement, order, outcome and payout checks skip it;
* in a void or dead round every wager's net must be 0 (``void``, the check every
  game shares); its recorded outcome and payouts are not checked;
* a joker is an ``integrity`` finding and counts 0 points elsewhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import JOKER
from ...columns import combine
from ...money import money_round
from ...paytables import Config
from ...rules.context import numbers
from ...rules.integrity import SHOE_EXCESS, shoe_excess, shoe_groups
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, VOID_WORDS, void_round_nets
from .context import CARDS, GAMES, SECTION, WAGERS, Baccarat, take_str
from .kernels import mispaid_wagers
from .paytable import PAY_KEYS
from .tableau import NATURALS, OUTCOMES

__all__ = ["Baccarat", "GAMES"]


TWO, THIRD = slice(0, 2), slice(2, 3)
"""A hand's first two cards, its third card."""


def _either(player: np.ndarray, banker: np.ndarray) -> np.ndarray:
    """``player``, ``banker`` or ``both``: which hand a condition holds for (one of them does)."""
    return np.where(player, np.where(banker, "both", "player"), "banker").astype(object)


# ---- (a) announcements ------------------------------------------------------------------
_ANNOUNCED = {side: f"{side} {{{side}_total:int}} ({{{side}_two:cards}}) announced as {{announced_{side}:int}}"
              for side in ("player", "banker")}


@rule("baccarat.a", games=GAMES, citation=f"{SECTION}(a)", severity="low",
      summary="The announced point counts equal the two-card totals",
      columns=("announced_player", "announced_banker", *CARDS),
      needs=("announced",),
      message={"player": _ANNOUNCED["player"], "banker": _ANNOUNCED["banker"],
               "both": f"{_ANNOUNCED['player']}; {_ANNOUNCED['banker']}"},
      expected="player {player_total:int}, banker {banker_total:int}",
      recorded="player {announced_player:int}, banker {announced_banker:int}")
def a_announced_point_counts(ctx: Baccarat) -> Hits:
    """(a) "After the initial four (4) cards are dealt, the dealer calling the game shall announce the
    point count of the player's hand. After the dealer takes and places the cards of the banker's hand
    in front of the banker, the dealer shall announce the point count of the banker's hand."

    Catalog: ``announced`` (when recorded) equals the two-card totals.
    """
    cols = (ctx.table["announced_player"], ctx.table["announced_banker"])
    if all(c.null_count == len(c) for c in cols):
        return Hits.none()
    player, banker = (numbers(c, np.nan, np.float64) for c in cols)
    wrong_player = ~np.isnan(player) & (player != ctx.player_total)
    wrong_banker = ~np.isnan(banker) & (banker != ctx.banker_total)
    return Hits.where(ctx.complete & (wrong_player | wrong_banker),
                      case=lambda r: _either(wrong_player[r], wrong_banker[r]),
                      evidence={"player_total": ctx.player_total, "banker_total": ctx.banker_total,
                                "announced_player": player, "announced_banker": banker,
                                "player_two": ctx.cards_of("player", TWO), "banker_two": ctx.cards_of("banker", TWO)})


# ---- (b) the tableau ----------------------------------------------------------------


def _player_words(rule_text: str) -> dict[str, str]:
    """The words of a finding on the player's draw or stand: the hands, what the player did, the rule."""
    return {"message": "player {player_total:int} ({player_two:cards}) v banker {banker_total:int} "
                       "({banker_two:cards}): {player_action}; " + rule_text,
            "expected": "{required}", "recorded": "{player_action}"}


def _banker_words(rule_text: str) -> dict[str, Any]:
    """The words of a finding on the banker's draw or stand: the banker's hand, what the player did
    (drew, and the third card's value, or stood on a total), what the banker did, the rule."""
    banker = "banker {banker_total:int} ({banker_two:cards}), "
    says = ": {banker_action}; " + rule_text
    return {"message": {"drew": banker + "player drew {player_third_card:cards} (third card {player_third:int})" + says,
                        "stood": banker + "player {player_total:int} stood" + says},
            "expected": "{required}", "recorded": "{banker_action}"}


def _player_hits(ctx: Baccarat, rows: np.ndarray) -> Hits:
    return Hits.at(rows, evidence={
        "player_total": ctx.player_total, "banker_total": ctx.banker_total,
        "player_two": ctx.cards_of("player", TWO), "banker_two": ctx.cards_of("banker", TWO),
        "player_action": ctx.actions("player"),
        "required": lambda r: np.where(ctx.player_should_draw[r], "player draws", "player stands").astype(object)})


def _banker_hits(ctx: Baccarat, rows: np.ndarray) -> Hits:
    return Hits.at(rows, case=lambda r: np.where(ctx.player_drew[r], "drew", "stood"), evidence={
        "banker_total": ctx.banker_total, "banker_two": ctx.cards_of("banker", TWO),
        "player_total": ctx.player_total,
        "player_third": lambda r: np.where(ctx.player_drew[r], ctx.player_third[r], np.nan),
        "player_third_card": ctx.cards_of("player", THIRD), "banker_action": ctx.actions("banker"),
        "required": lambda r: np.where(ctx.banker_should_draw[r], "banker draws", "banker stands").astype(object)})


@rule("baccarat.b1", games=GAMES, citation=f"{SECTION}(b)(1)", severity="high",
      summary="No natural, player two-card total 0-5: the player draws", columns=CARDS,
      **_player_words("a player 0-5 draws"))
def b1_player_draws_0_5(ctx: Baccarat) -> Hits:
    """(b)(1) "If the player's hand has a point count total of zero (0) to five (5), the player's hand
    must draw an additional card."

    Catalog: no natural, player two-card total 0-5: player draws.
    """
    wrong = ctx.player_wrong
    return _player_hits(ctx, wrong.where(wrong.player_should_draw))


@rule("baccarat.b2", games=GAMES, citation=f"{SECTION}(b)(2)", severity="high",
      summary="No natural, player two-card total 6-7: the player stands", columns=CARDS,
      **_player_words("a player 6-7 stands"))
def b2_player_stands_6_7(ctx: Baccarat) -> Hits:
    """(b)(2) "If the player's hand has a point count total of six (6) or seven (7), the player's hand stands."

    Catalog: no natural, player total 6-7: player stands.
    """
    wrong = ctx.player_wrong
    return _player_hits(ctx, wrong.where(~wrong.player_should_draw))


_WHO = ("player", "banker", "both")
_NATURAL = {"player": "player natural {player_total:int} ({player_two:cards})",
            "banker": "banker natural {banker_total:int} ({banker_two:cards})"}
_NATURAL["both"] = f"{_NATURAL['player']} and {_NATURAL['banker']}"
_DREW = {"player": "{player_action}", "banker": "{banker_action}", "both": "{player_action} and {banker_action}"}


@rule("baccarat.b3", games=GAMES, citation=f"{SECTION}(b)(3)", severity="high",
      summary="A natural on either hand: neither hand receives a third card", columns=CARDS,
      message={f"{n}/{d}": f"{_NATURAL[n]}: no third card may be dealt, but {_DREW[d]}" for n in _WHO for d in _WHO},
      expected="neither hand draws",
      recorded={f"{n}/{d}": _DREW[d].replace(" and ", "; ") for n in _WHO for d in _WHO})
def b3_natural(ctx: Baccarat) -> Hits:
    """(b)(3) "If either the player's or the banker's hand is an eight (8) or nine (9), this is a natural
    and no more cards shall be dealt to either hand."

    Catalog: a natural on either hand: neither hand receives a third card (one finding, whichever drew).
    """
    def case(r: np.ndarray) -> np.ndarray:  # which hands hold a natural / which drew
        return (_either(np.isin(ctx.player_total[r], list(NATURALS)),
                        np.isin(ctx.banker_total[r], list(NATURALS))) + "/"
                + _either(ctx.player_drew[r], ctx.banker_drew[r]))

    return Hits.where(ctx.complete & ctx.natural & (ctx.player_drew | ctx.banker_drew), case=case, evidence={
        "player_total": ctx.player_total, "banker_total": ctx.banker_total, "player_two": ctx.cards_of("player", TWO),
        "banker_two": ctx.cards_of("banker", TWO), "player_action": ctx.actions("player"),
        "banker_action": ctx.actions("banker")})


@rule("baccarat.b4", games=GAMES, citation=f"{SECTION}(b)(4)", severity="high",
      summary="Player drew, banker 7: the banker stands", columns=CARDS,
      **_banker_words("a banker 7 stands"))
def b4_banker_seven(ctx: Baccarat) -> Hits:
    """(b)(4) "If the point count total of the banker's hand is zero (0) to seven (7) inclusive, the
    player's hand shall draw unless the player has a natural eight (8) or a natural nine (9)."

    Catalog: player drew, banker 7: banker stands.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 7)))


@rule("baccarat.b5", games=GAMES, citation=f"{SECTION}(b)(5)", severity="high",
      summary="Player drew, banker 3: the banker draws unless the player's third card is an 8", columns=CARDS,
      needs=("order",),
      **_banker_words("a banker 3 draws unless the player's third card is an 8"))
def b5_banker_three(ctx: Baccarat) -> Hits:
    """(b)(5) "If the point count total of the banker's hand is three (3), the banker's hand will draw a
    third card if the player's third card is zero (0) to nine (9), excluding eight (8)."

    Catalog: player drew, banker 3: banker draws unless the player's third card is an 8.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 3)))


@rule("baccarat.b6", games=GAMES, citation=f"{SECTION}(b)(6)", severity="high",
      summary="Player drew, banker 4: the banker draws on a player third card 2-7", columns=CARDS,
      needs=("order",),
      **_banker_words("a banker 4 draws only on a player third card 2-7"))
def b6_banker_four(ctx: Baccarat) -> Hits:
    """(b)(6) "If the point count total of the banker's hand is four (4), the banker's hand will draw a
    third card if the player's third card is a two (2) to seven (7) inclusive."

    Catalog: player drew, banker 4: banker draws if player's third card is 2-7, else stands.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 4)))


@rule("baccarat.b7", games=GAMES, citation=f"{SECTION}(b)(7)", severity="high",
      summary="Player drew, banker 5: the banker draws on a player third card 4-7", columns=CARDS,
      needs=("order",),
      **_banker_words("a banker 5 draws only on a player third card 4-7"))
def b7_banker_five(ctx: Baccarat) -> Hits:
    """(b)(7) "If the point count total of the banker's hand is five (5), the banker's hand will draw a
    third card if the player's third card is four (4) to seven (7) inclusive."

    Catalog: player drew, banker 5: banker draws if player's third card is 4-7, else stands.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 5)))


@rule("baccarat.b8", games=GAMES, citation=f"{SECTION}(b)(8)", severity="high",
      summary="Player drew, banker 6: the banker draws on a player third card 6-7", columns=CARDS,
      needs=("order",),
      **_banker_words("a banker 6 draws only on a player third card 6-7"))
def b8_banker_six(ctx: Baccarat) -> Hits:
    """(b)(8) "If the point count total of the banker's hand is six (6), the banker's hand will draw a
    third card if the player's third card is a six (6) or seven (7)."

    Catalog: player drew, banker 6: banker draws if player's third card is 6-7, else stands.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 6)))


@rule("baccarat.b9", games=GAMES, citation=f"{SECTION}(b)(9)", severity="high",
      summary="Player stood, banker 0-5: the banker draws", columns=CARDS,
      **_banker_words("a banker 0-5 draws when the player stands"))
def b9_banker_draws_after_player_stood(ctx: Baccarat) -> Hits:
    """(b)(9) "If the point count total of the banker's hand is zero (0) through five (5) inclusive, the
    banker's hand must draw an additional card if the two (2) card total of the player's hand is a six (6)
    or a seven (7)."

    Catalog: player stood, banker 0-5: banker draws.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(~wrong.player_drew & (wrong.banker_total <= 5)))


@rule("baccarat.b10", games=GAMES, citation=f"{SECTION}(b)(10)", severity="high",
      summary="Player stood, banker 6-7: the banker stands (player 6 v banker 6 is a tie)", columns=CARDS,
      **_banker_words("a banker 6-7 stands when the player stands"))
def b10_banker_stands_after_player_stood(ctx: Baccarat) -> Hits:
    """(b)(10) "If the point count total of the player's hand is a six (6) and the bank has a six (6), a
    tie is the result."

    Catalog: player stood, banker 6 (and 7): banker stands; player 6 vs banker 6 is a tie.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(~wrong.player_drew & (wrong.banker_total >= 6)))


@rule("baccarat.b11", games=GAMES, citation=f"{SECTION}(b)(11)", severity="high",
      summary="Player drew, banker 0-2: the banker draws", columns=CARDS,
      **_banker_words("a banker 0-2 always draws"))
def b11_banker_draws_on_0_2(ctx: Baccarat) -> Hits:
    """(b)(11) "If the point count of the banker's two (2) card hand is zero (0) through two (2) inclusive,
    the banker's hand will always draw a third card unless the player's two (2) card point count is a
    natural eight (8) or a natural nine (9)."

    Catalog: player drew, banker 0-2: banker draws.
    """
    wrong = ctx.banker_wrong
    return _banker_hits(ctx, wrong.where(wrong.player_drew & (wrong.banker_total <= 2)))


# ---- (c) order, (d) card count ------------------------------------------------------------
def _banker_third_first(order: str) -> bool:
    """In a deal order string, does the banker's third card come before the player's?"""
    seen = {"P": 0, "B": 0}
    for ch in order:
        seen[ch] = seen.get(ch, 0) + 1
        if seen[ch] == 3:
            return ch == "B" and order.count("P") >= 3
    return False


@rule("baccarat.c", games=GAMES, citation=f"{SECTION}(c)", severity="medium",
      summary="When both hands take a third card, the player's is dealt first", columns=("deal_order", *CARDS),
      needs=("order", "deal_order"),
      message="deal order {deal_order}: banker's third card {banker_third_card:cards} dealt before the player's "
              "{player_third_card:cards}",
      expected="player's third card first", recorded="{deal_order}")
def c_player_third_card_first(ctx: Baccarat) -> Hits:
    """(c) "Any third card required to be dealt at the direction of the dealer shall first be dealt face
    upwards to the player's hand and then to the banker's hand if necessary by the curator or the dealer."

    Catalog: when both hands take a third card, the player's is dealt first (``deal_order``).
    """
    both = np.flatnonzero(ctx.complete & ctx.player_drew & ctx.banker_drew)
    col = combine(ctx.table["deal_order"])
    if col.null_count == len(col) or not len(both):
        return Hits.none()
    orders = pc.dictionary_encode(col.take(pa.array(both)))  # a few distinct orders, each read once
    banker_first = np.array([_banker_third_first(s) for s in orders.dictionary.to_pylist()] + [False])
    rows = both[banker_first[numbers(orders.indices, -1).astype(np.int64)]]
    return Hits.at(rows, evidence={"deal_order": lambda r: take_str(col, r),
                                   "banker_third_card": ctx.cards_of("banker", THIRD),
                                   "player_third_card": ctx.cards_of("player", THIRD)})


@rule("baccarat.d", games=GAMES, citation=f"{SECTION}(d)", severity="high",
      summary="No hand holds more than three cards", columns=CARDS,
      message={who: "; ".join(f"{side} hand holds {{{side}_count:int}} cards ({{{side}_cards:cards}})"
                                 for side in sides) + ": at most one additional card per hand"
               for who, sides in (("player", ["player"]), ("banker", ["banker"]), ("both", ["player", "banker"]))},
      expected="at most 3 cards per hand", recorded="player {player_count:int} cards, banker {banker_count:int} cards")
def d_at_most_one_additional_card(ctx: Baccarat) -> Hits:
    """(d) "In no event shall more than one (1) additional card be dealt to either hand in the game of
    baccarat or mini baccarat."

    Catalog: no hand holds more than three cards.
    """
    player, banker = ctx.player.count > 3, ctx.banker.count > 3
    return Hits.where(player | banker, case=lambda r: _either(player[r], banker[r]),
                      evidence={"player_count": ctx.player.count, "banker_count": ctx.banker.count,
                                "player_cards": ctx.cards_of("player"), "banker_cards": ctx.cards_of("banker")})


# ---- outcome, paytable, void ---------------------------------------------------------------
@rule("baccarat.outcome", games=GAMES, citation="outcome", severity="high",
      summary="The recorded outcome is the outcome of the cards as dealt", columns=("outcome", "status", *CARDS),
      message="player {player_cards:cards} ({player_final:int}) v banker {banker_cards:cards} ({banker_final:int}): "
              "{dealt}, recorded {outcome}",
      expected="{dealt}", recorded="{outcome}")
def outcome(ctx: Baccarat) -> Hits:
    """Catalog, ``outcome``: "recorded ``outcome`` equals the outcome of the cards as dealt (higher final
    total wins, equal is a tie)"; checked in completed rounds whose hands hold two cards or more.
    """
    return Hits.where(ctx.settled & (ctx.recorded_outcome != ctx.dealt), evidence={
        "player_cards": ctx.cards_of("player"), "player_final": ctx.player_final,
        "banker_cards": ctx.cards_of("banker"), "banker_final": ctx.banker_final,
        "dealt": lambda r: np.array(OUTCOMES, dtype=object)[ctx.dealt[r]],
        "outcome": lambda r: take_str(ctx.table["outcome"], r)})


@rule("baccarat.paytable", games=GAMES, citation="paytable", severity="high",
      summary="Each player, banker and tie wager's net matches the paytable for the outcome as dealt",
      columns=(*WAGERS, *CARDS), params=PAY_KEYS,
      needs=("wagers",),
      message="seat {seat:int} {bet} bet {amount:money}: player {player_final:int} v banker {banker_final:int} "
              "({dealt}); net {net:net}, expected {expected:net}",
      expected="{expected:net}", recorded="{net:net}")
def paytable(ctx: Baccarat) -> Hits:
    """Catalog, ``paytable``: "each wager's net matches the paytable for the outcome as dealt (default:
    player 1:1, banker 1:1 less 5% commission, tie 8:1; player/banker bets push on a tie)".

    Each player, banker and tie wager of a settled round: its net equals its amount times the
    paytable's payout for the outcome as dealt, to the rounding unit. Other bets are not checked.
    """
    # Each wager's net against its amount times the payout per unit of its bet for the round's settlement,
    # money_differs(wager_net, wager_amount * payout[state of its round, its bet], unit), in one pass over
    # the wagers (a NaN payout, for another bet or a round not settled, never differs).
    state, payout = ctx.settlement
    wrong, expected = mispaid_wagers(ctx.wager_bet, ctx.wager_amount, ctx.wager_net, ctx.wager_offsets,
                                     state, payout, ctx.unit)
    rows = ctx.round_of(wrong)
    expected = money_round(expected, ctx.unit, ctx.rounding)
    net, seat = ctx.wager_net[wrong], ctx.wager_seat[wrong]
    return Hits(rows=rows, evidence={
        "seat": seat, "bet": take_str(ctx.wager_bet, wrong), "amount": ctx.wager_amount[wrong],
        "player_final": ctx.player_final[rows], "banker_final": ctx.banker_final[rows],
        "dealt": np.array(OUTCOMES, dtype=object)[ctx.dealt[rows]], "net": net, "expected": expected},
        seat=seat, expected_amount=expected, recorded_amount=net)


@rule("baccarat.void", games=GAMES, citation="void", severity="high", summary=VOID_SUMMARY, **VOID_WORDS, columns=WAGERS,
      needs=("wagers",))
def void(ctx: Baccarat) -> Hits:
    """Catalog, ``void``: "in a void or dead round every wager's net is 0" (any bet, side bets too)."""
    return void_round_nets(ctx)


# ---- integrity ----------------------------------------------------------------------------
_JOKER = "joker in the {joker_in} hand: baccarat is dealt without jokers"
_SHORT = "player {player_cards:cards}, banker {banker_cards:cards}: a completed round deals each hand two cards"


@rule("baccarat.integrity", games=GAMES, citation="integrity", severity="high",
      summary="No joker in a baccarat round; each hand of a completed round holds at least two cards",
      columns=("status", *CARDS),
      message={"joker": _JOKER, "short": _SHORT, "both": f"{_JOKER}; {_SHORT}"},
      recorded="player {player_cards:cards}; banker {banker_cards:cards}")
def integrity(ctx: Baccarat) -> Hits:
    """Catalog, ``integrity``: "a card that cannot be in the round: ... the joker outside pai gow"; and a
    completed round deals each hand two cards (a round without them cannot be played out)."""
    short = ctx.completed & ~ctx.complete
    player, banker = np.zeros(len(short), bool), np.zeros(len(short), bool)
    player[ctx.player.rows_with(JOKER)] = True
    banker[ctx.banker.rows_with(JOKER)] = True
    joker = player | banker
    return Hits.where(short | joker, case=lambda r: np.where(joker[r], np.where(short[r], "both", "joker"), "short"),
                      evidence={
        "joker_in": lambda r: np.where(player[r], np.where(banker[r], "player and banker", "player"), "banker"),
        "player_cards": ctx.cards_of("player"), "banker_cards": ctx.cards_of("banker")})


@rule("baccarat.integrity_shoe", games=GAMES, citation="integrity", severity="high",
      summary="No card appears in a shoe more often than the shoe's decks hold",
      scope="shoe", columns=CARDS, params=("decks",),
      needs=("suits", "ranks", "shoe"), message=SHOE_EXCESS)
def integrity_shoe(table: pa.Table, config: Config) -> Hits:
    """Catalog, ``integrity``: "more copies of a card in a shoe than the shoe holds (reported on the round
    where the excess copy appears)"."""
    rows, evidence = shoe_excess(table, list(CARDS), Baccarat(table, config).param("decks"))
    return Hits(rows=rows, evidence=evidence)


# ---- (e) cut card -----------------------------------------------------------------------
@rule("baccarat.e", games=GAMES, citation=f"{SECTION}(e)", severity="medium",
      summary="After the round in which the cutting card appeared, exactly one more round is dealt",
      scope="shoe", columns=("cut_card",),
      needs=("order", "shoe", "cut_card"),
      message="round_seq {round_seq:int} dealt after the last hand: the cutting card appeared in round_seq "
              "{cut_seq:int}, round_seq {last_seq:int} was the last hand",
      expected="no round after the last hand", recorded="round_seq {round_seq:int}")
def e_one_more_hand_after_the_cutting_card(table: pa.Table, config: Config) -> Hits:
    """(e) "Whenever the cutting card appears during play, the cutting card will be removed and placed to
    the side and the hand will be completed. Upon completion of the hand, the dealer shall announce "Last
    hand". At the completion of one (1) more hand, no more cards will be dealt until the reshuffle occurs."

    Catalog: after the round in which the cutting card appeared, exactly one more round is dealt from that
    shoe (``round_seq`` order); any later round of the shoe is a finding on that later round.
    """
    group = shoe_groups(table)
    cut = numbers(table["cut_card"], False).astype(bool)
    pos = np.arange(table.num_rows, dtype=np.int64)
    first_cut = np.full(int(group.max(initial=-1)) + 1, np.iinfo(np.int64).max // 2, dtype=np.int64)
    np.minimum.at(first_cut, group[cut], pos[cut])
    cut_at = first_cut[group]
    seq = numbers(table["round_seq"], -1).astype(np.int64)
    return Hits.where(pos > cut_at + 1, evidence={"round_seq": seq, "cut_seq": lambda r: seq[cut_at[r]],
                                                  "last_seq": lambda r: seq[cut_at[r] + 1]})
