"""Three card poker, patron against the dealer: 68 IAC 10-11-6.

The preparer flattens the hands of a batch of rounds and derives, once, every
fact the rules read: hand and dealer scores (:mod:`auditkit.games.three_card_poker.hands`),
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
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import JOKER, cards_str
from ...columns import flat_values, lengths, padded, parents, to_numpy
from ...money import money_differs, money_round
from ...paytables import Config
from .hands import (
    CATEGORY_NAMES, FLUSH, PAIR, STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND, evaluate, qualifies,
)
from ...rules.integrity import repeated_in_round
from ...rules.registry import Hits, preparer, rule

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


NOT_QUALIFIED, LOSE, TIE, WIN = 0, 1, 2, 3
"""Settlement state of a played hand: dealer does not qualify, or it qualifies and the hand loses, ties, wins."""
_ANTE_FIXED, _ANTE_RATED = np.array([0.0, -1.0, 0.0, 0.0]), np.array([True, False, False, True])
_PLAY_FIXED, _PLAY_RATED = np.array([0.0, -1.0, 0.0, 0.0]), np.array([False, False, False, True])
_C_OF_STATE = np.array([C1, C2, C4, C3], dtype=np.int8)


def rates(config: Config, table_ids: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """Paytable rates per distinct table: ``ante``, ``play`` (k), ``bonus`` and ``pair_plus`` (k x 7, indexed
    by category, index 6 = -1 for an unreadable hand); and each round's table number (None with one table).

    Ante and play rates are never below the regulation's 1:1 nor ante bonus rates below (d)'s minimums: a
    posted rate below them still leaves the minimum due. Pair plus pays ``-1`` (loses) below a pair.
    """
    uniques = pc.unique(table_ids)
    codes = None if len(uniques) <= 1 else to_numpy(pc.index_in(table_ids, value_set=uniques))
    k = max(len(uniques), 1)
    ante, play = np.ones(k), np.ones(k)
    bonus, pp = np.zeros((k, 7)), np.full((k, 7), -1.0)
    pp[:, 6] = 0.0
    for i, t in enumerate(uniques.to_pylist() or [None]):  # once per distinct table
        sec = config.section(GAME, None if t is None else str(t))
        ante[i], play[i] = max(float(sec["ante"]), 1.0), max(float(sec["play"]), 1.0)
        for cat, key in ANTE_BONUS_KEYS.items():
            bonus[i, cat] = max(float(sec["ante_bonus"].get(key, 0.0)), ANTE_BONUS_MIN[cat])
        for cat, key in PAIR_PLUS_KEYS.items():
            pp[i, cat] = float(sec["pair_plus"].get(key, 0.0))
    return codes, {"ante": ante, "play": play, "bonus": bonus, "pair_plus": pp}


def _mult(state: np.ndarray, rate: np.ndarray | float, fixed: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """Payout multiplier per hand: the rate where the state wins, else the fixed -1 (loss) or 0 (push)."""
    if np.ndim(rate) == 0:
        return np.where(rated, rate, fixed)[state]
    return np.where(rated[state], rate, fixed[state])


def settle(ante: np.ndarray, play: np.ndarray, state: np.ndarray, ante_rate: np.ndarray | float = 1.0,
           play_rate: np.ndarray | float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Exact ante and play nets of played hands in each settlement state under (c)."""
    return (ante * _mult(state, ante_rate, _ANTE_FIXED, _ANTE_RATED),
            play * _mult(state, play_rate, _PLAY_FIXED, _PLAY_RATED))


@dataclass
class TcpCtx:
    """Derived arrays of one batch: per round (``n``) and per flattened hand (``hand_round`` etc.).

    Expected amounts are exact (unrounded); classes are OK, SUB or PAY per wager.
    """

    n: int
    completed: np.ndarray          # per round
    dealer: np.ndarray             # (n, 3) dealer cards
    dq: np.ndarray                 # dealer qualifies
    hand_round: np.ndarray
    seat: np.ndarray
    cards: np.ndarray              # (h, 3)
    category: np.ndarray
    played: np.ndarray
    ante: np.ndarray
    play: np.ndarray
    pair_plus: np.ndarray          # 0 when absent
    net_ante: np.ndarray
    net_play: np.ndarray
    bonus: np.ndarray
    net_pair_plus: np.ndarray      # 0 when absent
    csub: np.ndarray               # (c) subsection of each played hand: C1..C4
    exp_ante: np.ndarray
    exp_play: np.ndarray
    ante_class: np.ndarray         # of played hands checked under (c), outside (b) rounds
    play_class: np.ndarray
    b_round: np.ndarray            # per round
    b_disc: np.ndarray             # per round
    bonus_cat: np.ndarray          # played hand with a bonus category (else -1)
    exp_bonus: np.ndarray
    bonus_class: np.ndarray
    exp_pair_plus: np.ndarray
    pp_bad: np.ndarray
    void_bad: np.ndarray
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

    def rounded(self, values: np.ndarray) -> np.ndarray:
        """Exact amounts rounded as the paytable rounds them."""
        return money_round(values, self.unit, self.rounding)


def _m(x: float) -> str:
    """An amount as a report string (no trailing zeros)."""
    text = f"{x:+.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("+0", "-0") else text


def _num(arr: pa.Array, fill: float) -> np.ndarray:
    """A numeric struct field as numpy, nulls filled (no copy through fill_null when there are none)."""
    if arr.null_count:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False)


def _card_matrix(col: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A list<int8> card column as an (n, 3) matrix and the list lengths (fast path when all hold 3)."""
    n = lengths(col)
    if len(n) and (n == 3).all():
        return flat_values(col).to_numpy(zero_copy_only=False).reshape(-1, 3), n
    return padded(col, 3)


def _by_category(rates_k7: np.ndarray, tab: np.ndarray | None, category: np.ndarray) -> np.ndarray:
    """Each hand's rate from a (tables x 7) table indexed by category (-1 reads the last column)."""
    return rates_k7[0][category] if tab is None else rates_k7[tab, category]


def _classify(idx: np.ndarray, rec: np.ndarray, minimum: np.ndarray, strict: np.ndarray, unit: float,
              size: int) -> np.ndarray:
    """Class of the wagers at ``idx`` (already known to be off the expected amount): SUB below the minimum
    (or anywhere when ``strict``, for losses and pushes), else PAY; OK elsewhere."""
    out = np.zeros(size, dtype=np.int8)
    below = strict | (money_differs(rec, minimum, unit) & (rec < minimum))
    out[idx] = np.where(below, SUB, PAY)
    return out


@preparer(GAME)
def prepare(table: pa.Table, config: Config) -> TcpCtx:
    """Flatten the hands of a batch and settle them as the regulation and the paytable require."""
    n = table.num_rows
    unit, rounding = float(config.money["rounding_unit"]), str(config.money["rounding"])
    completed = to_numpy(pc.equal(table["status"], "completed"), False).astype(bool)
    dealer, dealer_len = _card_matrix(table["dealer_cards"])
    _, dealer_score = evaluate(dealer)
    dealer_ok = (dealer_len == 3) & (dealer_score >= 0)
    dq = qualifies(dealer_score)

    hands = flat_values(table["hands"])
    hr = parents(table["hands"])
    h = len(hr)
    seat = _num(hands.field("seat"), 0)
    cards, hand_len = _card_matrix(hands.field("cards"))
    category, score = evaluate(cards)
    hand_ok = (hand_len == 3) & (score >= 0)
    played = to_numpy(pc.equal(hands.field("decision"), "play"), False).astype(bool)
    ante, play = _num(hands.field("ante"), 0.0), _num(hands.field("play"), 0.0)
    pp_raw, net_pp_raw = hands.field("pair_plus"), hands.field("net_pair_plus")
    has_pp = ~(to_numpy(pp_raw.is_null(), False) & to_numpy(net_pp_raw.is_null(), False))
    pair_plus, net_pair_plus = _num(pp_raw, 0.0), _num(net_pp_raw, 0.0)
    net_ante, net_play = _num(hands.field("net_ante"), 0.0), _num(hands.field("net_play"), 0.0)
    bonus = _num(hands.field("ante_bonus"), 0.0)

    codes, r = rates(config, table["table_id"])
    tab = None if codes is None else codes[hr]
    pick = (lambda a: a[0]) if tab is None else (lambda a: a[tab])
    h_completed = completed[hr]
    h_dq = dq[hr]

    # (c): the settlement the cards and the posted rates give each played hand
    cmp = np.sign(score - dealer_score[hr]).astype(np.int8)
    state = np.where(h_dq, cmp + 2, NOT_QUALIFIED).astype(np.int8)
    csub = _C_OF_STATE[state]
    exp_ante, exp_play = settle(ante, play, state, pick(r["ante"]), pick(r["play"]))
    checkable = played & h_completed & hand_ok & dealer_ok[hr]
    off_ante = checkable & money_differs(net_ante, exp_ante, unit)
    off_play = checkable & money_differs(net_play, exp_play, unit)
    off = off_ante | off_play

    # (b): every checkable played hand of a round settled as under the opposite qualification
    bad_round = np.bincount(hr[off], minlength=n) > 0
    b_round = np.zeros(n, dtype=bool)
    in_b = np.zeros(h, dtype=bool)
    b_disc = np.zeros(n)
    if bad_round.any():
        sub = np.flatnonzero(checkable & bad_round[hr])
        opp_state = np.where(h_dq[sub], NOT_QUALIFIED, cmp[sub] + 2).astype(np.int8)
        rt = None if tab is None else tab[sub]
        opp_ante, opp_play = settle(ante[sub], play[sub], opp_state,
                                    r["ante"][0] if rt is None else r["ante"][rt],
                                    r["play"][0] if rt is None else r["play"][rt])
        as_opp = ~money_differs(net_ante[sub], opp_ante, unit) & ~money_differs(net_play[sub], opp_play, unit)
        cand = np.bincount(hr[sub], minlength=n)
        b_round = bad_round & (cand == np.bincount(hr[sub[as_opp]], minlength=n))
        in_b[sub] = b_round[hr[sub]]
        bi = np.flatnonzero(in_b)
        diff = (net_ante[bi] + net_play[bi]) - (money_round(exp_ante[bi], unit, rounding)
                                                 + money_round(exp_play[bi], unit, rounding))
        b_disc = np.bincount(hr[bi], weights=diff, minlength=n)

    # wins may be paid above the 1:1 minimum (paytable); losses and pushes must be exact (strict)
    ia = np.flatnonzero(off_ante & ~in_b)
    min_ante, _ = settle(ante[ia], play[ia], state[ia])
    ante_class = _classify(ia, net_ante[ia], min_ante, (state[ia] == LOSE) | (state[ia] == TIE), unit, h)
    ip = np.flatnonzero(off_play & ~in_b)
    _, min_play = settle(ante[ip], play[ip], state[ip])
    play_class = _classify(ip, net_play[ip], min_play, state[ip] != WIN, unit, h)

    # (d): ante bonus of played straight flushes, trips and straights, whatever the dealer holds; none elsewhere
    has_bonus = played & hand_ok & (category >= STRAIGHT) & (category != FLUSH)
    bonus_cat = np.where(has_bonus, category, -1).astype(np.int8)
    exp_bonus = ante * np.where(has_bonus, _by_category(r["bonus"], tab, category), 0.0)
    checked = h_completed & ~(played & ~hand_ok)  # an unreadable played hand: its category is unknown
    ib = np.flatnonzero(checked & money_differs(bonus, exp_bonus, unit))
    bonus_min = np.select([bonus_cat[ib] == c for c in ANTE_BONUS_MIN], list(ANTE_BONUS_MIN.values()), 0.0)
    bonus_class = _classify(ib, bonus[ib], ante[ib] * bonus_min, bonus_cat[ib] < 0, unit, h)

    # pair plus: the patron's hand alone, folded or played
    exp_pp = pair_plus * _by_category(r["pair_plus"], tab, category)
    pp_bad = has_pp & h_completed & hand_ok & money_differs(net_pair_plus, exp_pp, unit)

    # void or dead rounds: every net and bonus 0
    void_bad = np.zeros(h, dtype=bool)
    if not completed.all():
        iv = np.flatnonzero(~h_completed)
        void_bad[iv] = ((net_ante[iv] != 0) | (net_play[iv] != 0) | (bonus[iv] != 0) | (net_pair_plus[iv] != 0))
        void_bad[iv] &= (money_differs(net_ante[iv], 0.0, unit) | money_differs(net_play[iv], 0.0, unit)
                         | money_differs(bonus[iv], 0.0, unit) | money_differs(net_pair_plus[iv], 0.0, unit))

    integrity_rows, integrity_msgs = _integrity(table, dealer, dealer_len, dealer_ok, hands, cards, hand_len, hand_ok, hr, seat)
    return TcpCtx(
        n=n, completed=completed, dealer=dealer, dq=dq, hand_round=hr, seat=seat, cards=cards, category=category,
        played=played, ante=ante, play=play, pair_plus=pair_plus, net_ante=net_ante, net_play=net_play,
        bonus=bonus, net_pair_plus=net_pair_plus, csub=csub, exp_ante=exp_ante, exp_play=exp_play,
        ante_class=ante_class, play_class=play_class, b_round=b_round, b_disc=b_disc, bonus_cat=bonus_cat,
        exp_bonus=exp_bonus, bonus_class=bonus_class, exp_pair_plus=exp_pp, pp_bad=pp_bad, void_bad=void_bad,
        unit=unit, rounding=rounding, integrity_rows=integrity_rows, integrity_msgs=integrity_msgs,
    )


# ---- integrity -----------------------------------------------------------------------
_BIT = np.zeros(54, dtype=np.uint64)
_BIT[:52] = np.left_shift(np.uint64(1), np.arange(52, dtype=np.uint64))


def _integrity(table: pa.Table, dealer: np.ndarray, dealer_len: np.ndarray, dealer_ok: np.ndarray, hands: pa.Array,
               cards: np.ndarray, hand_len: np.ndarray, hand_ok: np.ndarray, hr: np.ndarray,
               seat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rounds with a repeated card, a joker, or a hand of other than three cards, with messages."""
    n = table.num_rows
    dealer_all = padded(table["dealer_cards"])[0] if dealer_len.max(initial=0) > 3 else dealer
    hand_all = padded(hands.field("cards"))[0] if hand_len.max(initial=0) > 3 else cards
    per_round = lengths(table["hands"])
    starts = np.cumsum(per_round) - per_round
    some = per_round > 0
    # bits of the (up to) three cards of every hand and of the dealer; NO_CARD and the joker have none
    bits = _BIT[dealer[:, 0]] | _BIT[dealer[:, 1]] | _BIT[dealer[:, 2]]
    if len(hr):
        bits[some] |= np.bitwise_or.reduceat(_BIT[cards[:, 0]] | _BIT[cards[:, 1]] | _BIT[cards[:, 2]],
                                             starts[some])
    # a round of readable hands holds 3 distinct cards a hand; any unreadable hand is flagged anyway
    flagged = (np.bitwise_count(bits) < 3 * (per_round + 1)) | ~dealer_ok
    if not hand_ok.all():
        flagged |= np.bincount(hr[~hand_ok], minlength=n) > 0
    rows = np.flatnonzero(flagged)
    msgs = np.empty(len(rows), dtype=object)
    if not len(rows):
        return rows, msgs
    # a per-round matrix of every card, built for the flagged rounds only
    sel = flagged[hr]
    pos = np.arange(len(hr)) - starts[hr]
    w, dw = max(hand_all.shape[1], 1), max(dealer_all.shape[1], 1)
    local = np.searchsorted(rows, hr[sel])
    matrix = np.full((len(rows), dw + w * int(per_round[rows].max(initial=0))), -1, dtype=np.int8)
    matrix[:, :dealer_all.shape[1]] = dealer_all[rows]
    cols = dw + pos[sel][:, None] * w + np.arange(hand_all.shape[1])[None, :]
    matrix[local[:, None], cols] = hand_all[sel]
    has_rep, first = repeated_in_round(np.where(matrix == JOKER, -1, matrix).astype(np.int8))
    for i, r in enumerate(rows):  # flagged rounds only
        parts = []
        mine = range(int(starts[r]), int(starts[r] + per_round[r]))
        if has_rep[i]:
            code = int(first[i])
            holders = (["dealer"] if (dealer_all[r] == code).any() else []) + [
                f"seat {int(seat[j])}" for j in mine if (hand_all[j] == code).any()]
            parts.append(f"card {cards_str([code])} dealt twice in a one-deck round ({', '.join(holders)})")
        if (matrix[i] == JOKER).any():
            parts.append("a joker in three card poker")
        sizes = [f"dealer {int(dealer_len[r])}"] if dealer_len[r] != 3 else []
        sizes += [f"seat {int(seat[j])} {int(hand_len[j])}" for j in mine if hand_len[j] != 3]
        if sizes:
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
        lo, hi = np.searchsorted(ctx.hand_round, [r, r + 1])  # hands are in round order
        seats = ctx.seat[lo:hi][ctx.played[lo:hi]]
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
    exp_ante, exp_play = ctx.rounded(ctx.exp_ante[idx]), ctx.rounded(ctx.exp_play[idx])
    disc = (np.where(mask_ante[idx], ctx.net_ante[idx] - exp_ante, 0.0)
            + np.where(mask_play[idx], ctx.net_play[idx] - exp_play, 0.0))
    msgs, exp, rec = [], [], []
    for k, i in enumerate(idx):
        r = int(ctx.hand_round[i])
        parts_e, parts_r = [], []
        if mask_ante[i]:
            parts_e.append(f"ante {_m(exp_ante[k])}")
            parts_r.append(f"ante {_m(ctx.net_ante[i])}")
        if mask_play[i]:
            parts_e.append(f"play {_m(exp_play[k])}")
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
        here = ctx.csub == sub
        return _settlement_hits(ctx, here & (ctx.ante_class == SUB), here & (ctx.play_class == SUB), _C_TEXT[sub])
    return check


for _sub in (C1, C2, C3, C4):
    rule(f"tcp.c{_sub}", games=(GAME,), citation=f"{SECTION}(c)({_sub})", severity="high",
         summary=_C_TEXT[_sub])(_c_rule(_sub))


def _bonus_hits(ctx: TcpCtx, idx: np.ndarray, what: str) -> Hits:
    exp = ctx.rounded(ctx.exp_bonus[idx])
    msgs = np.array([f"{ctx.hand_text(i)} played, ante {ctx.ante[i]:g}: ante bonus {ctx.bonus[i]:g} {what} "
                     f"(expected {e:g})" for i, e in zip(idx, exp)], dtype=object)
    return Hits(rows=ctx.hand_round[idx], message=msgs,
                expected=np.array([f"ante bonus {e:g}" for e in exp], dtype=object),
                recorded=np.array([f"ante bonus {ctx.bonus[i]:g}" for i in idx], dtype=object),
                discrepancy=ctx.bonus[idx] - exp, seat=ctx.seat[idx])


def _bonus_rule(cat: int):
    def check(ctx: TcpCtx) -> Hits:
        idx = np.flatnonzero((ctx.bonus_cat == cat) & (ctx.bonus_class == SUB))
        return _bonus_hits(ctx, idx, f"below {ANTE_BONUS_MIN[cat]:g}:1")
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
    parts.append(_bonus_hits(ctx, idx, "differs from the posted paytable"))
    # pair plus on the patron's hand alone
    idx = np.flatnonzero(ctx.pp_bad)
    exp = ctx.rounded(ctx.exp_pair_plus[idx])
    parts.append(Hits(
        rows=ctx.hand_round[idx],
        message=np.array([f"{ctx.hand_text(i)}: pair plus {ctx.pair_plus[i]:g} net {_m(ctx.net_pair_plus[i])}, "
                          f"paytable gives {_m(e)}" for i, e in zip(idx, exp)], dtype=object),
        expected=np.array([f"pair plus {_m(e)}" for e in exp], dtype=object),
        recorded=np.array([f"pair plus {_m(ctx.net_pair_plus[i])}" for i in idx], dtype=object),
        discrepancy=ctx.net_pair_plus[idx] - exp, seat=ctx.seat[idx]))
    # void or dead rounds: every net and bonus 0
    idx = np.flatnonzero(ctx.void_bad)
    total = ctx.net_ante[idx] + ctx.net_play[idx] + ctx.bonus[idx] + ctx.net_pair_plus[idx]
    parts.append(Hits(
        rows=ctx.hand_round[idx],
        message=np.array([f"void/dead round: seat {int(ctx.seat[i])} recorded ante {_m(ctx.net_ante[i])}, "
                          f"play {_m(ctx.net_play[i])}, bonus {ctx.bonus[i]:g}, pair plus {_m(ctx.net_pair_plus[i])}"
                          for i in idx], dtype=object),
        expected="every net 0", recorded=np.array([f"nets {_m(t)}" for t in total], dtype=object),
        discrepancy=total, seat=ctx.seat[idx]))
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
