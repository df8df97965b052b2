"""Baccarat and mini baccarat: 68 IAC 10-10-14 (third-card rules, dealing order, cut card).

One rule per subsection, each a condition over named facts of the :class:`Baccarat`
context (two-card totals, naturals, who drew, what the tableau of ``tableau.py``
requires, the outcome and the paytable's net of each wager); a fact is computed
the first time a rule asks for it. Messages are formatted for the flagged rows only.

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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import JOKER, cards_str
from ...columns import combine
from ...money import format_money, format_net, money_round
from ...paytables import Config
from ...rules.context import house_values, numbers
from ...rules.integrity import shoe_excess, shoe_groups
from ...rules.registry import Hits, rule
from ...rules.void import VOID_SUMMARY, void_round_nets
from .context import CARDS, GAMES, SECTION, WAGERS, Baccarat, take_str
from .kernels import mispaid_wagers
from .paytable import PAY_KEYS
from .tableau import NATURALS, OUTCOMES

__all__ = ["Baccarat", "GAMES"]


# ---- (a) announcements ------------------------------------------------------------------
@rule("baccarat.a", games=GAMES, citation=f"{SECTION}(a)", severity="low",
      summary="The announced point counts equal the two-card totals",
      columns=("announced_player", "announced_banker", *CARDS),
      needs=("announced",))
def a_announced_point_counts(ctx: Baccarat) -> Hits:
    """(a) "After the initial four (4) cards are dealt, the dealer calling the game shall announce the
    point count of the player's hand. After the dealer takes and places the cards of the banker's hand
    in front of the banker, the dealer shall announce the point count of the banker's hand."

    Catalog: ``announced`` (when recorded) equals the two-card totals.
    """
    cols = (ctx.table["announced_player"], ctx.table["announced_banker"])
    if all(c.null_count == len(c) for c in cols):
        return Hits.none()
    player, banker = (numbers(c, -1).astype(np.int16) for c in cols)
    wrong_player = (player >= 0) & (player != ctx.player_total)
    wrong_banker = (banker >= 0) & (banker != ctx.banker_total)
    rows = np.flatnonzero(ctx.complete & (wrong_player | wrong_banker))
    msg, exp, rec = (np.empty(len(rows), object) for _ in range(3))
    for k, i in enumerate(rows):
        parts = [f"{ctx.two_cards(i, side)} announced as {int(ann[i])}"
                 for side, ann, wrong in (("player", player, wrong_player), ("banker", banker, wrong_banker))
                 if wrong[i]]
        msg[k] = "; ".join(parts)
        exp[k] = f"player {int(ctx.player_total[i])}, banker {int(ctx.banker_total[i])}"
        rec[k] = ", ".join(f"{s} {int(a[i])}" for s, a in (("player", player), ("banker", banker)) if a[i] >= 0)
    return Hits(rows=rows, message=msg, expected=exp, recorded=rec)


# ---- (b) the tableau ----------------------------------------------------------------
def _player_finding(ctx: Baccarat, rows: np.ndarray, rule_text: str) -> Hits:
    msg = np.array([f"{ctx.two_cards(i, 'player')} v {ctx.two_cards(i, 'banker')}: {ctx.action(i, 'player')}; "
                    f"{rule_text}" for i in rows], dtype=object)
    exp = np.where(ctx.player_should_draw[rows], "player draws", "player stands").astype(object)
    rec = np.array([ctx.action(i, "player") for i in rows], dtype=object)
    return Hits(rows=rows, message=msg, expected=exp, recorded=rec)


def _banker_finding(ctx: Baccarat, rows: np.ndarray, rule_text: str) -> Hits:
    msg = np.empty(len(rows), object)
    for k, i in enumerate(rows):
        if ctx.player_drew[i]:
            player = f"player drew {cards_str(ctx.player.cards(i, slice(2, 3)))} (third card {int(ctx.player_third[i])})"
        else:
            player = f"player {int(ctx.player_total[i])} stood"
        msg[k] = f"{ctx.two_cards(i, 'banker')}, {player}: {ctx.action(i, 'banker')}; {rule_text}"
    exp = np.where(ctx.banker_should_draw[rows], "banker draws", "banker stands").astype(object)
    rec = np.array([ctx.action(i, "banker") for i in rows], dtype=object)
    return Hits(rows=rows, message=msg, expected=exp, recorded=rec)


@rule("baccarat.b1", games=GAMES, citation=f"{SECTION}(b)(1)", severity="high",
      summary="No natural, player two-card total 0-5: the player draws", columns=CARDS)
def b1_player_draws_0_5(ctx: Baccarat) -> Hits:
    """(b)(1) "If the player's hand has a point count total of zero (0) to five (5), the player's hand
    must draw an additional card."

    Catalog: no natural, player two-card total 0-5: player draws.
    """
    wrong = ctx.player_wrong
    return _player_finding(ctx, wrong.where(wrong.player_should_draw),
                           "a player 0-5 draws")


@rule("baccarat.b2", games=GAMES, citation=f"{SECTION}(b)(2)", severity="high",
      summary="No natural, player two-card total 6-7: the player stands", columns=CARDS)
def b2_player_stands_6_7(ctx: Baccarat) -> Hits:
    """(b)(2) "If the player's hand has a point count total of six (6) or seven (7), the player's hand stands."

    Catalog: no natural, player total 6-7: player stands.
    """
    wrong = ctx.player_wrong
    return _player_finding(ctx, wrong.where(~wrong.player_should_draw),
                           "a player 6-7 stands")


@rule("baccarat.b3", games=GAMES, citation=f"{SECTION}(b)(3)", severity="high",
      summary="A natural on either hand: neither hand receives a third card", columns=CARDS)
def b3_natural(ctx: Baccarat) -> Hits:
    """(b)(3) "If either the player's or the banker's hand is an eight (8) or nine (9), this is a natural
    and no more cards shall be dealt to either hand."

    Catalog: a natural on either hand: neither hand receives a third card (one finding, whichever drew).
    """
    rows = np.flatnonzero(ctx.complete & ctx.natural & (ctx.player_drew | ctx.banker_drew))
    msg, rec = np.empty(len(rows), object), np.empty(len(rows), object)
    for k, i in enumerate(rows):
        naturals = [f"{side} natural {int(hand.two[i])} ({cards_str(hand.cards(i, slice(0, 2)))})"
                    for side, hand in (("player", ctx.player), ("banker", ctx.banker)) if hand.two[i] in NATURALS]
        drew = [ctx.action(i, side) for side, d in (("player", ctx.player_drew), ("banker", ctx.banker_drew)) if d[i]]
        msg[k] = f"{' and '.join(naturals)}: no third card may be dealt, but {' and '.join(drew)}"
        rec[k] = "; ".join(drew)
    return Hits(rows=rows, message=msg, expected="neither hand draws", recorded=rec)


@rule("baccarat.b4", games=GAMES, citation=f"{SECTION}(b)(4)", severity="high",
      summary="Player drew, banker 7: the banker stands", columns=CARDS)
def b4_banker_seven(ctx: Baccarat) -> Hits:
    """(b)(4) "If the point count total of the banker's hand is zero (0) to seven (7) inclusive, the
    player's hand shall draw unless the player has a natural eight (8) or a natural nine (9)."

    Catalog: player drew, banker 7: banker stands.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 7)),
                           "a banker 7 stands")


@rule("baccarat.b5", games=GAMES, citation=f"{SECTION}(b)(5)", severity="high",
      summary="Player drew, banker 3: the banker draws unless the player's third card is an 8", columns=CARDS,
      needs=("order",))
def b5_banker_three(ctx: Baccarat) -> Hits:
    """(b)(5) "If the point count total of the banker's hand is three (3), the banker's hand will draw a
    third card if the player's third card is zero (0) to nine (9), excluding eight (8)."

    Catalog: player drew, banker 3: banker draws unless the player's third card is an 8.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 3)),
                           "a banker 3 draws unless the player's third card is an 8")


@rule("baccarat.b6", games=GAMES, citation=f"{SECTION}(b)(6)", severity="high",
      summary="Player drew, banker 4: the banker draws on a player third card 2-7", columns=CARDS,
      needs=("order",))
def b6_banker_four(ctx: Baccarat) -> Hits:
    """(b)(6) "If the point count total of the banker's hand is four (4), the banker's hand will draw a
    third card if the player's third card is a two (2) to seven (7) inclusive."

    Catalog: player drew, banker 4: banker draws if player's third card is 2-7, else stands.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 4)),
                           "a banker 4 draws only on a player third card 2-7")


@rule("baccarat.b7", games=GAMES, citation=f"{SECTION}(b)(7)", severity="high",
      summary="Player drew, banker 5: the banker draws on a player third card 4-7", columns=CARDS,
      needs=("order",))
def b7_banker_five(ctx: Baccarat) -> Hits:
    """(b)(7) "If the point count total of the banker's hand is five (5), the banker's hand will draw a
    third card if the player's third card is four (4) to seven (7) inclusive."

    Catalog: player drew, banker 5: banker draws if player's third card is 4-7, else stands.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 5)),
                           "a banker 5 draws only on a player third card 4-7")


@rule("baccarat.b8", games=GAMES, citation=f"{SECTION}(b)(8)", severity="high",
      summary="Player drew, banker 6: the banker draws on a player third card 6-7", columns=CARDS,
      needs=("order",))
def b8_banker_six(ctx: Baccarat) -> Hits:
    """(b)(8) "If the point count total of the banker's hand is six (6), the banker's hand will draw a
    third card if the player's third card is a six (6) or seven (7)."

    Catalog: player drew, banker 6: banker draws if player's third card is 6-7, else stands.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(wrong.player_drew & (wrong.banker_total == 6)),
                           "a banker 6 draws only on a player third card 6-7")


@rule("baccarat.b9", games=GAMES, citation=f"{SECTION}(b)(9)", severity="high",
      summary="Player stood, banker 0-5: the banker draws", columns=CARDS)
def b9_banker_draws_after_player_stood(ctx: Baccarat) -> Hits:
    """(b)(9) "If the point count total of the banker's hand is zero (0) through five (5) inclusive, the
    banker's hand must draw an additional card if the two (2) card total of the player's hand is a six (6)
    or a seven (7)."

    Catalog: player stood, banker 0-5: banker draws.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(~wrong.player_drew & (wrong.banker_total <= 5)),
                           "a banker 0-5 draws when the player stands")


@rule("baccarat.b10", games=GAMES, citation=f"{SECTION}(b)(10)", severity="high",
      summary="Player stood, banker 6-7: the banker stands (player 6 v banker 6 is a tie)", columns=CARDS)
def b10_banker_stands_after_player_stood(ctx: Baccarat) -> Hits:
    """(b)(10) "If the point count total of the player's hand is a six (6) and the bank has a six (6), a
    tie is the result."

    Catalog: player stood, banker 6 (and 7): banker stands; player 6 vs banker 6 is a tie.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(~wrong.player_drew & (wrong.banker_total >= 6)),
                           "a banker 6-7 stands when the player stands")


@rule("baccarat.b11", games=GAMES, citation=f"{SECTION}(b)(11)", severity="high",
      summary="Player drew, banker 0-2: the banker draws", columns=CARDS)
def b11_banker_draws_on_0_2(ctx: Baccarat) -> Hits:
    """(b)(11) "If the point count of the banker's two (2) card hand is zero (0) through two (2) inclusive,
    the banker's hand will always draw a third card unless the player's two (2) card point count is a
    natural eight (8) or a natural nine (9)."

    Catalog: player drew, banker 0-2: banker draws.
    """
    wrong = ctx.banker_wrong
    return _banker_finding(ctx, wrong.where(wrong.player_drew & (wrong.banker_total <= 2)),
                           "a banker 0-2 always draws")


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
      needs=("order", "deal_order"))
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
    recorded = take_str(col, rows)
    msg = np.array([f"deal order {o}: banker's third card {cards_str(ctx.banker.cards(i, slice(2, 3)))} dealt "
                    f"before the player's {cards_str(ctx.player.cards(i, slice(2, 3)))}"
                    for i, o in zip(rows, recorded, strict=True)], dtype=object)
    return Hits(rows=rows, message=msg, expected="player's third card first", recorded=recorded)


@rule("baccarat.d", games=GAMES, citation=f"{SECTION}(d)", severity="high",
      summary="No hand holds more than three cards", columns=CARDS)
def d_at_most_one_additional_card(ctx: Baccarat) -> Hits:
    """(d) "In no event shall more than one (1) additional card be dealt to either hand in the game of
    baccarat or mini baccarat."

    Catalog: no hand holds more than three cards.
    """
    rows = np.flatnonzero((ctx.player.count > 3) | (ctx.banker.count > 3))
    msg, rec = np.empty(len(rows), object), np.empty(len(rows), object)
    for k, i in enumerate(rows):
        parts = [f"{side} hand holds {int(hand.count[i])} cards ({cards_str(hand.cards(i))})"
                 for side, hand in (("player", ctx.player), ("banker", ctx.banker)) if hand.count[i] > 3]
        msg[k] = "; ".join(parts) + ": at most one additional card per hand"
        rec[k] = f"player {int(ctx.player.count[i])} cards, banker {int(ctx.banker.count[i])} cards"
    return Hits(rows=rows, message=msg, expected="at most 3 cards per hand", recorded=rec)


# ---- outcome, paytable, void ---------------------------------------------------------------
@rule("baccarat.outcome", games=GAMES, citation="outcome", severity="high",
      summary="The recorded outcome is the outcome of the cards as dealt", columns=("outcome", "status", *CARDS))
def outcome(ctx: Baccarat) -> Hits:
    """Catalog, ``outcome``: "recorded ``outcome`` equals the outcome of the cards as dealt (higher final
    total wins, equal is a tie)"; checked in completed rounds whose hands hold two cards or more.
    """
    rows = np.flatnonzero(ctx.settled & (ctx.recorded_outcome != ctx.dealt))
    dealt = np.array(OUTCOMES, dtype=object)[ctx.dealt[rows]]
    recorded = take_str(ctx.table["outcome"], rows)
    msg = np.array([f"player {ctx.hand(i, 'player')} v banker {ctx.hand(i, 'banker')}: {d}, recorded {r}"
                    for i, d, r in zip(rows, dealt, recorded, strict=True)], dtype=object)
    return Hits(rows=rows, message=msg, expected=dealt, recorded=recorded)


@rule("baccarat.paytable", games=GAMES, citation="paytable", severity="high",
      summary="Each player, banker and tie wager's net matches the paytable for the outcome as dealt",
      columns=(*WAGERS, *CARDS), params=PAY_KEYS,
      needs=("wagers",))
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
    net, amount, seat = ctx.wager_net[wrong], ctx.wager_amount[wrong], ctx.wager_seat[wrong]
    bets = take_str(ctx.wager_bet, wrong)
    msg = np.array([f"seat {s} {b} bet {format_money(a)}: player {int(ctx.player_final[i])} v banker "
                    f"{int(ctx.banker_final[i])} ({OUTCOMES[ctx.dealt[i]]}); net {format_net(x)}, "
                    f"expected {format_net(e)}"
                    for s, b, a, i, x, e in zip(seat, bets, amount, rows, net, expected, strict=True)], dtype=object)
    return Hits(rows=rows, message=msg, expected=np.array([format_money(x) for x in expected], dtype=object),
                recorded=np.array([format_money(x) for x in net], dtype=object), discrepancy=net - expected,
                seat=seat, expected_amount=expected, recorded_amount=net)


@rule("baccarat.void", games=GAMES, citation="void", severity="high", summary=VOID_SUMMARY, columns=WAGERS,
      needs=("wagers",))
def void(ctx: Baccarat) -> Hits:
    """Catalog, ``void``: "in a void or dead round every wager's net is 0" (any bet, side bets too)."""
    return void_round_nets(ctx)


# ---- integrity ----------------------------------------------------------------------------
@rule("baccarat.integrity", games=GAMES, citation="integrity", severity="high",
      summary="No joker in a baccarat round; each hand of a completed round holds at least two cards",
      columns=("status", *CARDS))
def integrity(ctx: Baccarat) -> Hits:
    """Catalog, ``integrity``: "a card that cannot be in the round: ... the joker outside pai gow"; and a
    completed round deals each hand two cards (a round without them cannot be played out)."""
    short = np.flatnonzero(ctx.completed & ~ctx.complete)
    joker = np.concatenate([ctx.player.rows_with(JOKER), ctx.banker.rows_with(JOKER)])
    rows = np.union1d(short, joker)
    msg, rec = np.empty(len(rows), object), np.empty(len(rows), object)
    for k, i in enumerate(rows):  # flagged rounds only
        parts = []
        if i in joker:
            sides = [s for s, h in (("player", ctx.player), ("banker", ctx.banker)) if (h.cards(i) == JOKER).any()]
            parts.append(f"joker in the {' and '.join(sides)} hand: baccarat is dealt without jokers")
        if i in short:
            parts.append(f"player {cards_str(ctx.player.cards(i)) or 'no card'}, banker "
                         f"{cards_str(ctx.banker.cards(i)) or 'no card'}: a completed round deals each hand two cards")
        msg[k] = "; ".join(parts)
        rec[k] = f"player {cards_str(ctx.player.cards(i))}; banker {cards_str(ctx.banker.cards(i))}"
    return Hits(rows=rows, message=msg, recorded=rec)


@rule("baccarat.integrity_shoe", games=GAMES, citation="integrity", severity="high",
      summary="No card appears in a shoe more often than the shoe's decks hold",
      scope="shoe", columns=CARDS, params=("decks",),
      needs=("suits", "ranks", "shoe"))
def integrity_shoe(table: pa.Table, config: Config) -> Hits:
    """Catalog, ``integrity``: "more copies of a card in a shoe than the shoe holds (reported on the round
    where the excess copy appears)"."""
    rows, msgs = shoe_excess(table, list(CARDS), _decks(config, table))
    return Hits(rows=rows, message=msgs)


def _decks(config: Config, table: pa.Table) -> np.ndarray:
    """The ``decks`` setting per round, looking tables up only when some table has its own (a round's
    own house rule first)."""
    if not any("baccarat" in body for body in config.data.get("tables", {}).values()):
        base = np.full(table.num_rows, float(config.get("baccarat", "decks")))
    else:
        base = config.param("baccarat", "decks", table["table_id"])
    return house_values(table, "decks", base)


# ---- (e) cut card -----------------------------------------------------------------------
@rule("baccarat.e", games=GAMES, citation=f"{SECTION}(e)", severity="medium",
      summary="After the round in which the cutting card appeared, exactly one more round is dealt",
      scope="shoe", columns=("cut_card",),
      needs=("order", "shoe", "cut_card"))
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
    rows = np.flatnonzero(pos > cut_at + 1)
    seq = numbers(table["round_seq"], -1).astype(np.int64)
    msg = np.array([f"round_seq {seq[i]} dealt after the last hand: the cutting card appeared in round_seq "
                    f"{seq[cut_at[i]]}, round_seq {seq[cut_at[i] + 1]} was the last hand" for i in rows],
                   dtype=object)
    return Hits(rows=rows, message=msg, expected="no round after the last hand",
                recorded=np.array([f"round_seq {seq[i]}" for i in rows], dtype=object))
