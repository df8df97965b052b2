"""Three card poker, patron against the dealer: 68 IAC 10-11-6.

The preparer flattens the hands of a batch of rounds and derives, once, every
fact the rules read: hand and dealer scores (:mod:`auditkit.poker.three_card`),
the dealer's qualification, each played hand's comparison with the dealer, the
settlement the regulation and the posted paytable give, and, for every wager,
whether the recorded net is right, below a regulation minimum (a finding on the
subsection) or off the posted paytable while at least the minimum (``paytable``).

How the catalog is read (see ``docs/three_card_poker.md``):

* ``(a)`` ante > 0; ``(a)(1)`` a folded hand loses its whole ante and has no play
  bet; ``(a)(2)`` a played hand's play bet equals its ante (the recorded play is
  what the settlement checks use);
* ``(b)``: when every played hand of a round is settled exactly as the posted
  paytable settles it under the *opposite* qualification, and not as the
  dealer's cards require, the round has one ``(b)`` finding (discrepancy summed
  over those hands' ante and play nets) and no ``(c)`` or ante/play
  ``paytable`` finding;
* ``(c)(1)``-``(c)(4)``: the ante and play nets of each played hand; a win below
  1:1, or any other difference on a loss or push, cites the subsection; a win of
  at least 1:1 that differs from the posted rate cites ``paytable``;
* ``(d)(1)``-``(d)(3)``: the ante bonus of a played straight flush, three of a
  kind or straight, whatever the dealer holds; ``(d)``: no ante bonus on any
  other hand, nor on a folded one;
* ``paytable`` also covers pair plus (settled on the patron's hand alone, folded
  or not) and void or dead rounds, where every net and bonus must be 0 and no
  other settlement rule applies;
* ``integrity``: a card repeated among the dealer's and all hands of a round, a
  joker, or a hand of other than three cards. Card-based checks skip a hand
  (or, for the dealer, a round) that does not hold three real cards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..cards import JOKER, cards_str
from ..columns import flat_values, lengths, padded, parents, to_numpy
from ..paytables import Config, money_differs, money_round
from ..poker.three_card import (
    CATEGORY_NAMES, FLUSH, HIGH_CARD, PAIR, STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND, evaluate, qualifies,
)
from .integrity import repeated_in_round
from .registry import Hits, preparer, rule

__all__ = ["TcpCtx", "prepare", "settle", "rates", "SECTION", "ANTE_BONUS_MIN", "ANTE_BONUS_KEYS",
           "PAIR_PLUS_KEYS"]

GAME = "three_card_poker"
SECTION = "68 IAC 10-11-6"

ANTE_BONUS_KEYS = {STRAIGHT_FLUSH: "straight_flush", THREE_OF_A_KIND: "three_of_a_kind", STRAIGHT: "straight"}
"""Hand category to its key in the ``ante_bonus`` paytable."""
ANTE_BONUS_MIN = {STRAIGHT_FLUSH: 5.0, THREE_OF_A_KIND: 4.0, STRAIGHT: 1.0}
"""(d)(1)-(d)(3): the regulation's minimum ante bonus odds."""
ANTE_BONUS_SUB = {STRAIGHT_FLUSH: "d1", THREE_OF_A_KIND: "d2", STRAIGHT: "d3"}
PAIR_PLUS_KEYS = {STRAIGHT_FLUSH: "straight_flush", THREE_OF_A_KIND: "three_of_a_kind", STRAIGHT: "straight",
                  FLUSH: "flush", PAIR: "pair"}
"""Hand category to its key in the ``pair_plus`` paytable."""

OK, SUB, PAY = 0, 1, 2
"""Classification of a recorded net: right, below a minimum / wrong (subsection), off the paytable."""
C1, C2, C3, C4 = 1, 2, 3, 4


def rates(config: Config, table_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Per-round paytable rates: ``ante``, ``play``, ``bonus`` (rounds x 6 categories), ``pair_plus`` (x 6)."""
    codes, uniques = pd.factorize(pd.Series(np.asarray(table_ids, dtype=object)), sort=False)
    k = len(uniques)
    ante, play = np.empty(k), np.empty(k)
    bonus, pp = np.zeros((k, 6)), np.zeros((k, 6))
    for i, t in enumerate(uniques):  # once per distinct table
        sec = config.section(GAME, str(t))
        ante[i], play[i] = float(sec["ante"]), float(sec["play"])
        for cat, key in ANTE_BONUS_KEYS.items():
            bonus[i, cat] = float(sec["ante_bonus"].get(key, 0.0))
        for cat, key in PAIR_PLUS_KEYS.items():
            pp[i, cat] = float(sec["pair_plus"].get(key, 0.0))
    return {"ante": ante[codes], "play": play[codes], "bonus": bonus[codes], "pair_plus": pp[codes]}


def settle(ante: np.ndarray, play: np.ndarray, qual: np.ndarray, cmp: np.ndarray,
           ante_rate: np.ndarray | float, play_rate: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Exact ante and play nets of played hands under (c): ``cmp`` is the sign of hand minus dealer."""
    lost, won = qual & (cmp < 0), qual & (cmp > 0)
    ante_net = np.where(~qual | won, ante * ante_rate, np.where(lost, -ante, 0.0))
    play_net = np.where(won, play * play_rate, np.where(lost, -play, 0.0))
    return ante_net, play_net


@dataclass
class TcpCtx:
    """Derived arrays of one batch: per round (``n``) and per flattened hand (``hand_round`` etc.)."""

    n: int
    completed: np.ndarray          # per round
    dealer: np.ndarray             # (n, 3) dealer cards
    dealer_ok: np.ndarray          # three real cards
    dealer_score: np.ndarray
    dq: np.ndarray                 # dealer qualifies
    hand_round: np.ndarray
    seat: np.ndarray
    cards: np.ndarray              # (h, 3)
    hand_ok: np.ndarray
    category: np.ndarray
    score: np.ndarray
    played: np.ndarray
    ante: np.ndarray
    play: np.ndarray
    pair_plus: np.ndarray          # 0 when absent
    net_ante: np.ndarray
    net_play: np.ndarray
    bonus: np.ndarray
    net_pair_plus: np.ndarray      # 0 when absent
    has_pair_plus: np.ndarray
    settled: np.ndarray            # played hand checked under (c) (completed, cards readable, not in a (b) round)
    csub: np.ndarray               # C1..C4 for played hands
    exp_ante: np.ndarray
    exp_play: np.ndarray
    ante_class: np.ndarray
    play_class: np.ndarray
    b_round: np.ndarray            # per round
    b_disc: np.ndarray             # per round
    bonus_cat: np.ndarray          # played hand with a bonus category (else -1)
    exp_bonus: np.ndarray
    bonus_class: np.ndarray
    exp_pair_plus: np.ndarray
    pp_checked: np.ndarray
    unit: float
    rounding: str
    integrity_rows: np.ndarray
    integrity_msgs: np.ndarray

    def hand_text(self, i: int) -> str:
        """``seat 3 Kc Ah Jd (high card)`` for hand ``i``."""
        cat = int(self.category[i])
        name = CATEGORY_NAMES[cat] if cat >= 0 else "unreadable"
        return f"seat {int(self.seat[i])} {cards_str(self.cards[i])} ({name})"

    def dealer_text(self, r: int) -> str:
        q = "qualifies" if self.dq[r] else "does not qualify"
        return f"dealer {cards_str(self.dealer[r])} ({q})"


def _m(x: float) -> str:
    """An amount as a report string (no trailing zeros)."""
    text = f"{x:+.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("+0", "-0") else text


def _classify(rec: np.ndarray, exp: np.ndarray, minimum: np.ndarray, strict: np.ndarray,
              unit: float) -> np.ndarray:
    """OK, SUB (below the minimum, or any difference where ``strict``) or PAY (at least the minimum, off the table)."""
    off = money_differs(rec, exp, unit)
    below = strict | (money_differs(rec, minimum, unit) & (rec < minimum))
    return np.where(off, np.where(below, SUB, PAY), OK).astype(np.int8)


def _field(hands: pa.Array, name: str, fill: float | None = None) -> np.ndarray:
    return to_numpy(hands.field(name), fill)


@preparer(GAME)
def prepare(table: pa.Table, config: Config) -> TcpCtx:
    """Flatten the hands of a batch and settle them as the regulation and the paytable require."""
    n = table.num_rows
    unit, rounding = float(config.money["rounding_unit"]), str(config.money["rounding"])
    completed = to_numpy(pc.equal(table["status"], "completed"), False).astype(bool)
    dealer, dealer_len = padded(table["dealer_cards"], 3)
    _, dealer_score = evaluate(dealer)
    dealer_ok = (dealer_len == 3) & (dealer_score >= 0)
    dq = qualifies(dealer_score)

    hands = flat_values(table["hands"])
    hand_round = parents(table["hands"])
    seat = _field(hands, "seat", 0).astype(np.int64)
    cards, hand_len = padded(hands.field("cards"), 3)
    category, score = evaluate(cards)
    hand_ok = (hand_len == 3) & (score >= 0)
    played = to_numpy(pc.equal(hands.field("decision"), "play"), False).astype(bool)
    ante = _field(hands, "ante", 0.0)
    play = _field(hands, "play", 0.0)
    pp_raw, net_pp_raw = hands.field("pair_plus"), hands.field("net_pair_plus")
    has_pp = to_numpy(pc.or_(pc.is_valid(pp_raw), pc.is_valid(net_pp_raw)), False).astype(bool)
    pair_plus, net_pair_plus = to_numpy(pp_raw, 0.0), to_numpy(net_pp_raw, 0.0)
    net_ante = _field(hands, "net_ante", 0.0)
    net_play = _field(hands, "net_play", 0.0)
    bonus = _field(hands, "ante_bonus", 0.0)

    r = rates(config, to_numpy(table["table_id"], ""))
    hr = hand_round
    h_completed = completed[hr]
    h_dealer_ok = dealer_ok[hr]
    h_dq = dq[hr]
    cmp = np.sign(score.astype(np.int64) - dealer_score[hr])
    ante_rate, play_rate = r["ante"][hr], r["play"][hr]

    # (c): actual settlement at the posted rates (never below 1:1), the 1:1 minimum, and the opposite (b) case
    checkable = played & h_completed & hand_ok & h_dealer_ok
    exact_ante, exact_play = settle(ante, play, h_dq, cmp, np.maximum(ante_rate, 1.0), np.maximum(play_rate, 1.0))
    min_ante, min_play = settle(ante, play, h_dq, cmp, 1.0, 1.0)
    opp_ante, opp_play = settle(ante, play, ~h_dq, cmp, np.maximum(ante_rate, 1.0), np.maximum(play_rate, 1.0))
    exp_ante, exp_play = money_round(exact_ante, unit, rounding), money_round(exact_play, unit, rounding)
    opp_ante, opp_play = money_round(opp_ante, unit, rounding), money_round(opp_play, unit, rounding)
    match_actual = ~money_differs(net_ante, exp_ante, unit) & ~money_differs(net_play, exp_play, unit)
    match_opposite = ~money_differs(net_ante, opp_ante, unit) & ~money_differs(net_play, opp_play, unit)

    # (b): every checkable played hand of the round settled as under the opposite qualification
    cand = np.bincount(hr[checkable], minlength=n)
    as_opposite = np.bincount(hr[checkable & match_opposite], minlength=n)
    wrong = np.bincount(hr[checkable & ~match_actual], minlength=n)
    b_round = (cand > 0) & (as_opposite == cand) & (wrong > 0)
    in_b = checkable & b_round[hr]
    diff = (net_ante - exp_ante) + (net_play - exp_play)
    b_disc = np.bincount(hr[in_b], weights=diff[in_b], minlength=n)

    settled = checkable & ~in_b
    csub = np.where(~h_dq, C1, np.where(cmp < 0, C2, np.where(cmp > 0, C3, C4))).astype(np.int8)
    # a win may be paid above the minimum (paytable); a loss or a push must be exact (strict)
    ante_class = _classify(net_ante, exp_ante, min_ante, ~((csub == C1) | (csub == C3)), unit)
    play_class = _classify(net_play, exp_play, min_play, csub != C3, unit)
    ante_class[~settled] = OK
    play_class[~settled] = OK

    # (d): ante bonus on played straight flushes, trips and straights, whatever the dealer holds
    bonus_cat = np.where(played & hand_ok & (category >= STRAIGHT) & (category != FLUSH), category, -1).astype(np.int8)
    has_bonus = bonus_cat >= 0
    safe_cat = np.where(has_bonus, bonus_cat, 0)
    bonus_rate = r["bonus"][hr, safe_cat]
    bonus_min = np.select([bonus_cat == c for c in ANTE_BONUS_MIN], list(ANTE_BONUS_MIN.values()), 0.0)
    exp_bonus = np.where(has_bonus, money_round(ante * np.maximum(bonus_rate, bonus_min), unit, rounding), 0.0)
    bonus_class = _classify(bonus, exp_bonus, ante * bonus_min, ~has_bonus, unit)
    bonus_class[~h_completed] = OK
    bonus_class[played & ~hand_ok] = OK  # unreadable played hand: its category is unknown

    # pair plus: the patron's hand alone, folded or played
    pp_checked = has_pp & h_completed & hand_ok
    pp_cat = np.where(hand_ok, category, HIGH_CARD)
    pp_rate = r["pair_plus"][hr, np.maximum(pp_cat, 0)]
    exp_pp = money_round(np.where(pp_cat >= PAIR, pair_plus * pp_rate, -pair_plus), unit, rounding)

    integrity_rows, integrity_msgs = _integrity(table, dealer_len, hands, hr, seat)
    return TcpCtx(
        n=n, completed=completed, dealer=dealer, dealer_ok=dealer_ok, dealer_score=dealer_score, dq=dq,
        hand_round=hr, seat=seat, cards=cards, hand_ok=hand_ok, category=category, score=score, played=played,
        ante=ante, play=play, pair_plus=pair_plus, net_ante=net_ante, net_play=net_play, bonus=bonus,
        net_pair_plus=net_pair_plus, has_pair_plus=has_pp, settled=settled, csub=csub, exp_ante=exp_ante,
        exp_play=exp_play, ante_class=ante_class, play_class=play_class, b_round=b_round, b_disc=b_disc,
        bonus_cat=bonus_cat, exp_bonus=exp_bonus, bonus_class=bonus_class, exp_pair_plus=exp_pp,
        pp_checked=pp_checked, unit=unit, rounding=rounding,
        integrity_rows=integrity_rows, integrity_msgs=integrity_msgs,
    )


# ---- integrity -----------------------------------------------------------------------
_BIT = np.zeros(54, dtype=np.uint64)
_BIT[:52] = np.left_shift(np.uint64(1), np.arange(52, dtype=np.uint64))


def _card_bits(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the OR of the cards' bits and the number of real (non-joker) cards."""
    bits = np.zeros(len(matrix), dtype=np.uint64)
    count = np.zeros(len(matrix), dtype=np.int64)
    for k in range(matrix.shape[1]):  # loop over card positions
        col = matrix[:, k]
        bits |= _BIT[col]
        count += (col >= 0) & (col < JOKER)
    return bits, count


def _integrity(table: pa.Table, dealer_len: np.ndarray, hands: pa.Array, hr: np.ndarray,
               seat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rounds with a repeated card, a joker, or a hand of other than three cards, with messages."""
    n = table.num_rows
    dealer_all, _ = padded(table["dealer_cards"])
    hand_all, hand_len = padded(hands.field("cards"))
    d_bits, d_count = _card_bits(dealer_all)
    h_bits, h_count = _card_bits(hand_all)
    per_round = lengths(table["hands"])
    starts = np.cumsum(per_round) - per_round
    bits, count = d_bits.copy(), d_count.copy()
    some = per_round > 0
    if len(h_bits):
        bits[some] |= np.bitwise_or.reduceat(h_bits, starts[some])
        count[some] += np.add.reduceat(h_count, starts[some])
    repeated = np.bitwise_count(bits) < count
    joker = (dealer_all == JOKER).any(axis=1) if dealer_all.shape[1] else np.zeros(n, bool)
    h_joker = (hand_all == JOKER).any(axis=1) if hand_all.shape[1] else np.zeros(len(hr), bool)
    joker |= np.bincount(hr[h_joker], minlength=n) > 0
    bad_size = dealer_len != 3
    h_bad = hand_len != 3
    bad_size |= np.bincount(hr[h_bad], minlength=n) > 0
    rows = np.flatnonzero(repeated | joker | bad_size)
    msgs = np.empty(len(rows), dtype=object)
    if not len(rows):
        return rows, msgs
    # a per-round matrix of every card, for the flagged rounds only
    sel = np.isin(hr, rows)
    pos = np.arange(len(hr)) - starts[hr]
    w, dw = max(hand_all.shape[1], 1), max(dealer_all.shape[1], 1)
    local = np.searchsorted(rows, hr[sel])
    width = dw + w * int(per_round[rows].max(initial=0))
    matrix = np.full((len(rows), width), -1, dtype=np.int8)
    matrix[:, :dealer_all.shape[1]] = dealer_all[rows]
    cols = dw + pos[sel][:, None] * w + np.arange(hand_all.shape[1])[None, :]
    matrix[local[:, None], cols] = hand_all[sel]
    has_rep, first = repeated_in_round(np.where(matrix == JOKER, -1, matrix).astype(np.int8))
    for i, r in enumerate(rows):  # flagged rounds only
        parts = []
        if has_rep[i]:
            code = int(first[i])
            holders = (["dealer"] if (dealer_all[r] == code).any() else []) + [
                f"seat {int(seat[j])}" for j in np.flatnonzero(sel & (hr == r)) if (hand_all[j] == code).any()]
            parts.append(f"card {cards_str([code])} dealt twice in a one-deck round ({', '.join(holders)})")
        if joker[r]:
            parts.append("a joker in three card poker")
        if bad_size[r]:
            sizes = [f"dealer {int(dealer_len[r])}"] if dealer_len[r] != 3 else []
            sizes += [f"seat {int(seat[j])} {int(hand_len[j])}" for j in np.flatnonzero((hr == r) & h_bad)]
            parts.append(f"hand of other than three cards ({', '.join(sizes)})")
        msgs[i] = "; ".join(parts)
    return rows, msgs


# ---- rules ------------------------------------------------------------------------------
@rule("tcp.a", games=(GAME,), citation=f"{SECTION}(a)", severity="high",
      summary="A hand has an ante wager greater than 0")
def ante_placed(ctx: TcpCtx) -> Hits:
    mask = ~(ctx.ante > 0)
    msgs = np.array([f"seat {int(s)} has no ante (ante {a:g})" for s, a in zip(ctx.seat[mask], ctx.ante[mask])],
                    dtype=object)
    return Hits(rows=ctx.hand_round[mask], message=msgs, expected="ante > 0",
                recorded=np.array([f"ante {a:g}" for a in ctx.ante[mask]], dtype=object), seat=ctx.seat[mask])


@rule("tcp.a1", games=(GAME,), citation=f"{SECTION}(a)(1)", severity="high",
      summary="A folded hand loses its ante and has no play bet")
def fold_loses_ante(ctx: TcpCtx) -> Hits:
    folded = ~ctx.played
    done = ctx.completed[ctx.hand_round]
    net_wrong = done & (money_differs(ctx.net_ante, -ctx.ante, ctx.unit) | money_differs(ctx.net_play, 0.0, ctx.unit))
    mask = folded & (net_wrong | (ctx.play != 0))
    idx = np.flatnonzero(mask)
    disc = np.where(done[idx], (ctx.net_ante[idx] + ctx.ante[idx]) + ctx.net_play[idx], 0.0)
    msgs = np.array([f"folded {ctx.hand_text(i)}: ante {ctx.ante[i]:g} net {_m(ctx.net_ante[i])}, "
                     f"play {ctx.play[i]:g} net {_m(ctx.net_play[i])}" for i in idx], dtype=object)
    expected = np.array([f"ante {_m(-ctx.ante[i])}, no play bet" for i in idx], dtype=object)
    recorded = np.array([f"ante {_m(ctx.net_ante[i])}, play {ctx.play[i]:g} net {_m(ctx.net_play[i])}"
                         for i in idx], dtype=object)
    return Hits(rows=ctx.hand_round[idx], message=msgs, expected=expected, recorded=recorded,
                discrepancy=disc, seat=ctx.seat[idx])


@rule("tcp.a2", games=(GAME,), citation=f"{SECTION}(a)(2)", severity="high",
      summary="A played hand's play bet equals its ante")
def play_equals_ante(ctx: TcpCtx) -> Hits:
    idx = np.flatnonzero(ctx.played & money_differs(ctx.play, ctx.ante, ctx.unit))
    msgs = np.array([f"{ctx.hand_text(i)} played: play {ctx.play[i]:g} differs from ante {ctx.ante[i]:g}"
                     for i in idx], dtype=object)
    return Hits(rows=ctx.hand_round[idx], message=msgs,
                expected=np.array([f"play {ctx.ante[i]:g}" for i in idx], dtype=object),
                recorded=np.array([f"play {ctx.play[i]:g}" for i in idx], dtype=object), seat=ctx.seat[idx])


@rule("tcp.b", games=(GAME,), citation=f"{SECTION}(b)", severity="high",
      summary="The dealer qualifies with queen high or better (played hands settled accordingly)")
def dealer_qualification(ctx: TcpCtx) -> Hits:
    rows = np.flatnonzero(ctx.b_round)
    msgs = np.empty(len(rows), dtype=object)
    for k, r in enumerate(rows):
        way = "did not qualify" if ctx.dq[r] else "qualified"
        seats = ctx.seat[(ctx.hand_round == r) & ctx.played]
        msgs[k] = (f"{ctx.dealer_text(r)}: played hands (seats {', '.join(str(int(s)) for s in seats)}) "
                   f"settled as if the dealer {way}")
    exp = np.where(ctx.dq[rows], "dealer qualifies", "dealer does not qualify").astype(object)
    rec = np.where(ctx.dq[rows], "settled as not qualifying", "settled as qualifying").astype(object)
    return Hits(rows=rows, message=msgs, expected=exp, recorded=rec, discrepancy=ctx.b_disc[rows])


_C_TEXT = {
    C1: "dealer does not qualify: ante wins at least 1:1, play pushes",
    C2: "dealer beats the hand: ante and play lose",
    C3: "hand beats the dealer: ante and play win at least 1:1",
    C4: "tie with the dealer: ante and play push",
}


def _settlement_hits(ctx: TcpCtx, mask_ante: np.ndarray, mask_play: np.ndarray, what: str) -> Hits:
    """Hits on hands whose ante and/or play net is flagged; discrepancy over the flagged wagers."""
    idx = np.flatnonzero(mask_ante | mask_play)
    disc = (np.where(mask_ante, ctx.net_ante - ctx.exp_ante, 0.0)
            + np.where(mask_play, ctx.net_play - ctx.exp_play, 0.0))[idx]
    msgs, exp, rec = [], [], []
    for i in idx:
        r = int(ctx.hand_round[i])
        parts_e, parts_r = [], []
        if mask_ante[i]:
            parts_e.append(f"ante {_m(ctx.exp_ante[i])}")
            parts_r.append(f"ante {_m(ctx.net_ante[i])}")
        if mask_play[i]:
            parts_e.append(f"play {_m(ctx.exp_play[i])}")
            parts_r.append(f"play {_m(ctx.net_play[i])}")
        msgs.append(f"{ctx.hand_text(i)} vs {ctx.dealer_text(r)}: {what}; ante {ctx.ante[i]:g} "
                    f"play {ctx.play[i]:g}, recorded {', '.join(parts_r)}")
        exp.append(", ".join(parts_e))
        rec.append(", ".join(parts_r))
    return Hits(rows=ctx.hand_round[idx], message=np.array(msgs, dtype=object),
                expected=np.array(exp, dtype=object), recorded=np.array(rec, dtype=object),
                discrepancy=disc, seat=ctx.seat[idx])


def _c_rule(sub: int):
    def check(ctx: TcpCtx) -> Hits:
        here = ctx.settled & (ctx.csub == sub)
        return _settlement_hits(ctx, here & (ctx.ante_class == SUB), here & (ctx.play_class == SUB), _C_TEXT[sub])
    return check


for _sub in (C1, C2, C3, C4):
    rule(f"tcp.c{_sub}", games=(GAME,), citation=f"{SECTION}(c)({_sub})", severity="high",
         summary=_C_TEXT[_sub])(_c_rule(_sub))


def _bonus_rule(cat: int):
    def check(ctx: TcpCtx) -> Hits:
        idx = np.flatnonzero((ctx.bonus_cat == cat) & (ctx.bonus_class == SUB))
        msgs = np.array([f"{ctx.hand_text(i)} played, ante {ctx.ante[i]:g}: ante bonus {ctx.bonus[i]:g} below "
                         f"{ANTE_BONUS_MIN[cat]:g}:1 (expected {ctx.exp_bonus[i]:g})" for i in idx], dtype=object)
        return Hits(rows=ctx.hand_round[idx], message=msgs,
                    expected=np.array([f"ante bonus {ctx.exp_bonus[i]:g}" for i in idx], dtype=object),
                    recorded=np.array([f"ante bonus {ctx.bonus[i]:g}" for i in idx], dtype=object),
                    discrepancy=(ctx.bonus - ctx.exp_bonus)[idx], seat=ctx.seat[idx])
    return check


for _cat, _name in ((STRAIGHT_FLUSH, "straight flush"), (THREE_OF_A_KIND, "three of a kind"), (STRAIGHT, "straight")):
    _sub_id = ANTE_BONUS_SUB[_cat]
    rule(f"tcp.{_sub_id}", games=(GAME,), citation=f"{SECTION}(d)({_sub_id[1]})", severity="high",
         summary=f"A played {_name} is paid an ante bonus of at least {ANTE_BONUS_MIN[_cat]:g}:1")(_bonus_rule(_cat))


@rule("tcp.d", games=(GAME,), citation=f"{SECTION}(d)", severity="high",
      summary="No ante bonus on a hand that does not qualify for one, or on a folded hand")
def no_undue_bonus(ctx: TcpCtx) -> Hits:
    idx = np.flatnonzero((ctx.bonus_cat < 0) & (ctx.bonus_class != OK))
    msgs = np.array([f"{'played' if ctx.played[i] else 'folded'} {ctx.hand_text(i)}: ante bonus {ctx.bonus[i]:g} "
                     f"paid on a hand that earns none" for i in idx], dtype=object)
    return Hits(rows=ctx.hand_round[idx], message=msgs, expected="ante bonus 0",
                recorded=np.array([f"ante bonus {ctx.bonus[i]:g}" for i in idx], dtype=object),
                discrepancy=ctx.bonus[idx], seat=ctx.seat[idx])


@rule("tcp.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Payouts above the regulation minimums match the posted paytable; pair plus; void rounds pay nothing")
def paytable(ctx: TcpCtx) -> Hits:
    parts: list[Hits] = []
    # ante and play wins of at least 1:1 that differ from the posted rates
    parts.append(_settlement_hits(ctx, ctx.ante_class == PAY, ctx.play_class == PAY,
                                  "win paid off the posted paytable"))
    # ante bonus at least the minimum but not the posted one
    idx = np.flatnonzero((ctx.bonus_cat >= 0) & (ctx.bonus_class == PAY))
    parts.append(Hits(
        rows=ctx.hand_round[idx],
        message=np.array([f"{ctx.hand_text(i)}: ante bonus {ctx.bonus[i]:g} differs from the posted "
                          f"{ctx.exp_bonus[i]:g}" for i in idx], dtype=object),
        expected=np.array([f"ante bonus {ctx.exp_bonus[i]:g}" for i in idx], dtype=object),
        recorded=np.array([f"ante bonus {ctx.bonus[i]:g}" for i in idx], dtype=object),
        discrepancy=(ctx.bonus - ctx.exp_bonus)[idx], seat=ctx.seat[idx]))
    # pair plus on the patron's hand alone
    idx = np.flatnonzero(ctx.pp_checked & money_differs(ctx.net_pair_plus, ctx.exp_pair_plus, ctx.unit))
    parts.append(Hits(
        rows=ctx.hand_round[idx],
        message=np.array([f"{ctx.hand_text(i)}: pair plus {ctx.pair_plus[i]:g} net {_m(ctx.net_pair_plus[i])}, "
                          f"paytable gives {_m(ctx.exp_pair_plus[i])}" for i in idx], dtype=object),
        expected=np.array([f"pair plus {_m(ctx.exp_pair_plus[i])}" for i in idx], dtype=object),
        recorded=np.array([f"pair plus {_m(ctx.net_pair_plus[i])}" for i in idx], dtype=object),
        discrepancy=(ctx.net_pair_plus - ctx.exp_pair_plus)[idx], seat=ctx.seat[idx]))
    # void or dead rounds: every net and bonus 0
    void = ~ctx.completed[ctx.hand_round]
    total = ctx.net_ante + ctx.net_play + ctx.bonus + ctx.net_pair_plus
    nonzero = (money_differs(ctx.net_ante, 0.0, ctx.unit) | money_differs(ctx.net_play, 0.0, ctx.unit)
               | money_differs(ctx.bonus, 0.0, ctx.unit) | money_differs(ctx.net_pair_plus, 0.0, ctx.unit))
    idx = np.flatnonzero(void & nonzero)
    parts.append(Hits(
        rows=ctx.hand_round[idx],
        message=np.array([f"void/dead round: seat {int(ctx.seat[i])} recorded ante {_m(ctx.net_ante[i])}, "
                          f"play {_m(ctx.net_play[i])}, bonus {ctx.bonus[i]:g}, pair plus {_m(ctx.net_pair_plus[i])}"
                          for i in idx], dtype=object),
        expected="every net 0", recorded=np.array([f"nets {_m(total[i])}" for i in idx], dtype=object),
        discrepancy=total[idx], seat=ctx.seat[idx]))
    return _concat(parts)


def _concat(parts: list[Hits]) -> Hits:
    parts = [p for p in parts if len(p)]
    if not parts:
        return Hits(rows=np.empty(0, np.int64), message=np.empty(0, object))

    def arr(p: Hits, name: str, dtype: object) -> np.ndarray:
        v = getattr(p, name)
        return v if isinstance(v, np.ndarray) else np.full(len(p), v, dtype=dtype)

    return Hits(
        rows=np.concatenate([p.rows for p in parts]),
        message=np.concatenate([arr(p, "message", object) for p in parts]),
        expected=np.concatenate([arr(p, "expected", object) for p in parts]),
        recorded=np.concatenate([arr(p, "recorded", object) for p in parts]),
        discrepancy=np.concatenate([arr(p, "discrepancy", np.float64) for p in parts]),
        seat=np.concatenate([p.seat for p in parts]))


@rule("tcp.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="One 52-card deck: no card repeated in a round, no joker, three cards a hand")
def integrity(ctx: TcpCtx) -> Hits:
    return Hits(rows=ctx.integrity_rows, message=ctx.integrity_msgs, expected="three distinct cards a hand",
                recorded=ctx.integrity_msgs)
