"""Blackjack: 68 IAC 10-2-4 (wagers, wagering rules, outcomes), plus paytable, integrity
and the house rule of the dealer's drawing.

Everything is computed over flattened hands (one numpy element per hand, with
the row of its round), never with a loop per round or per hand. A hand's total
counts one ace as 11 when that does not bust it (a *soft* total); a blackjack
is a two-card 21 on a hand that is not from a split.

Outcome findings cite the rule the correct result rests on (rules catalog):
``(a)(1)`` dealer busts, ``(a)(2)`` higher total, ``(a)(3)`` player blackjack,
``(b)`` equal totals, both blackjack, or dealer blackjack against a player 21,
``loss`` player busts or the dealer's total (or blackjack) beats the player's.
A hand whose result has the right direction (win / push / loss) but the wrong
amount is a ``paytable`` finding instead.

Not checked here: rounds that are not ``completed`` (void/dead: every net must be
0, a ``paytable`` finding) skip the outcome, paytable and dealer-play checks;
a round holding a joker is an ``integrity`` finding and skips them too (its
cards are not a blackjack deal). A seat that took even money is settled by
that wager, so its hand is not compared with the dealer's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import BLACKJACK_POINTS, IS_ACE, JOKER, cards_str
from ...columns import combine, flat_values, lengths, padded, parents, struct_field, to_numpy
from ...money import money_differs, money_round
from ...paytables import Config
from ...rules.integrity import shoe_excess, shoe_groups
from ...rules.registry import Hits, preparer, rule

__all__ = ["hand_totals", "dealer_must_draw", "Ctx", "prepare", "OUTCOME_CITATION"]

GAME = "blackjack"
SECTION = "68 IAC 10-2-4"
ACTIONS = ("place", "increase", "withdraw", "double", "split", "surrender", "insurance", "even_money")
INCREASE, WITHDRAW = 1, 2
# Indexed by action code; the extra last entry answers for -1 (not a wager event).
CONFIRMING = np.array([False, False, False, True, True, True, True, True, False])  # (e): double .. even_money
CHANGING = np.array([True, True, True, False, False, False, False, False, False])  # (c): place, increase, withdraw
RATE_KEYS = ("win", "blackjack", "insurance", "even_money", "surrender", "dealer_hits_soft_17",
             "check_dealer_play")  # [blackjack] settings read per round

# Correct result of a hand: a kind, its citation, its payout (multiple of the wager) and a reason.
LOSS_BUST, LOSS_BEATEN, LOSS_DEALER_BJ, B_LOSS_21, B_PUSH_BJ, B_PUSH, A1, A2, A3 = range(9)
OUTCOME_CITATION = np.array([
    "loss", "loss", "loss", f"{SECTION}(b)", f"{SECTION}(b)", f"{SECTION}(b)",
    f"{SECTION}(a)(1)", f"{SECTION}(a)(2)", f"{SECTION}(a)(3)",
], dtype=object)
DIRECTION = np.array([-1, -1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int8)
REASON = np.array([
    "player busts: the hand loses",
    "dealer's total beats the player's: the hand loses",
    "dealer blackjack: the hand loses",
    "dealer blackjack against a player 21 that is not a blackjack: the hand loses",
    "both blackjack: push",
    "equal totals: push",
    "dealer busts, player 21 or less: the hand wins",
    "player's total beats the dealer's without exceeding 21: the hand wins",
    "player blackjack, dealer none: the hand wins at the blackjack rate",
], dtype=object)


# ---- hand arithmetic ----------------------------------------------------------------
def hand_totals(cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best total and softness of each row of a padded card matrix (A = 11 unless that busts)."""
    hard = BLACKJACK_POINTS[cards].sum(axis=1, dtype=np.int16)
    soft = IS_ACE[cards].any(axis=1) & (hard <= 11)
    return hard + 10 * soft, soft


def dealer_must_draw(total: np.ndarray, soft: np.ndarray, hits_soft_17: np.ndarray | bool) -> np.ndarray:
    """The dealer draws below 17, and on a soft 17 when the house hits it."""
    return (total < 17) | ((total == 17) & soft & np.asarray(hits_soft_17, dtype=bool))


def _fmt(x: float) -> str:
    """An amount as written in messages: 100, -22.5, 12.25."""
    return f"{x:.2f}".rstrip("0").rstrip(".").replace("-0", "0") if abs(x) < 1e15 else str(x)


def _fmt_all(values: np.ndarray) -> np.ndarray:
    return np.array([_fmt(float(v)) for v in values], dtype=object)


# ---- context ------------------------------------------------------------------------
@dataclass
class Ctx:
    """Derived arrays of one batch of blackjack rounds (rounds ``r``, hands ``h``, wagers ``w``, events ``e``).

    Cards stay flat: ``dealer_flat[dealer_start[r]:dealer_start[r] + dealer_n[r]]`` are round
    ``r``'s dealer cards, ``card_flat[card_start[i]:card_start[i] + n_cards[i]]`` hand ``i``'s.
    """

    n: int
    config: Config
    money_unit: float
    rounding: str
    checked: np.ndarray          # per round: completed and without a joker (outcome/paytable apply)
    completed: np.ndarray
    joker: np.ndarray
    table_min: np.ndarray
    table_max: np.ndarray
    dealer_col: pa.ChunkedArray | pa.Array
    dealer_flat: np.ndarray
    dealer_start: np.ndarray
    dealer_n: np.ndarray
    dealer_total: np.ndarray
    dealer_bj: np.ndarray
    h_round: np.ndarray
    seat: np.ndarray
    hand_no: np.ndarray
    card_flat: np.ndarray
    card_start: np.ndarray
    n_cards: np.ndarray
    wager: np.ndarray
    initial: np.ndarray
    doubled: np.ndarray
    split: np.ndarray
    surrendered: np.ndarray
    net: np.ndarray
    total: np.ndarray
    bj: np.ndarray
    even_money_hand: np.ndarray  # the hand's seat took even money
    w_round: np.ndarray
    w_seat: np.ndarray
    w_kind: np.ndarray           # 0 insurance, 1 even money, -1 other side bets
    w_amount: np.ndarray
    w_net: np.ndarray
    e_round: np.ndarray
    e_first: np.ndarray          # the event is a first_card marker
    e_seat: np.ndarray
    e_action: np.ndarray         # index in ACTIONS, -1 for non-wager events
    e_amount: np.ndarray
    e_pos: np.ndarray            # position of the event in its round
    rate: dict[str, np.ndarray]  # per round: win, blackjack, insurance, even_money, surrender, ...
    cache: dict[str, Any] = field(default_factory=dict)

    def expected_round(self, exact: np.ndarray) -> np.ndarray:
        return money_round(exact, self.money_unit, self.rounding)

    def hand_cards(self, i: int) -> str:
        return cards_str(self.card_flat[self.card_start[i]:self.card_start[i] + self.n_cards[i]])

    def dealer_cards(self, r: int) -> str:
        return cards_str(self.dealer_flat[self.dealer_start[r]:self.dealer_start[r] + self.dealer_n[r]])


def _field(arr: pa.Array, name: str, fill: object, dtype: Any) -> np.ndarray:
    """One struct field as numpy (nulls filled only when there are any)."""
    col = struct_field(arr, name)
    if col.null_count:
        col = pc.fill_null(col, fill)
    return col.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _seat_key(rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
    return rows.astype(np.int64) * (1 << 32) + seats.astype(np.int64)


def _lengths(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """List lengths, straight from the offsets when the column has no null list."""
    arr = combine(col)
    if arr.null_count:
        return lengths(arr)
    return np.diff(arr.offsets.to_numpy()).astype(np.int64, copy=False)


def _parents(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """For each flattened child of a list column, the row of its parent list."""
    return np.repeat(np.arange(len(col), dtype=np.int64), _lengths(col))


def _flat_cards(col: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat int8 codes of a ``list<int8>`` column, each list's start in them, and its length."""
    n = _lengths(col)
    flat = flat_values(col).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
    start = np.zeros(len(n), dtype=np.int64)
    np.cumsum(n[:-1], out=start[1:])
    return flat, start, n


# hard value + 256 x (is an ace), per card code: one prefix sum gives both per list
_VALUE_ACE = BLACKJACK_POINTS.astype(np.int64) + 256 * IS_ACE.astype(np.int64)


def _list_totals(flat: np.ndarray, start: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best blackjack total and joker count of each list of flat cards (sums by prefix differences)."""
    def sums(values: np.ndarray) -> np.ndarray:
        cs = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum(values, out=cs[1:])
        return cs[start + n] - cs[start]

    both = sums(_VALUE_ACE[flat])
    hard = both & 255
    soft = (both > 255) & (hard <= 11)
    is_joker = flat == JOKER
    joker = sums(is_joker) if is_joker.any() else np.zeros(len(n), dtype=np.int64)
    return (hard + 10 * soft).astype(np.int16), joker


def _np(col: pa.Array | pa.ChunkedArray, fill: object, dtype: Any) -> np.ndarray:
    """A primitive column as numpy, nulls filled only when there are any."""
    if col.null_count:
        col = pc.fill_null(col, fill)
    return combine(col).to_numpy(zero_copy_only=False).astype(dtype, copy=False)


@preparer(GAME)
def prepare(table: pa.Table, config: Config) -> Ctx:
    """Totals of every hand and of the dealer, settings per round, flattened wagers and events."""
    n = table.num_rows
    tids = table["table_id"]  # the Arrow column: Config encodes it once for every param
    completed = _np(pc.equal(table["status"], "completed"), False, bool)

    dealer_flat, dealer_start, dealer_n = _flat_cards(table["dealer_cards"])
    dealer_total, dealer_jokers = _list_totals(dealer_flat, dealer_start, dealer_n)
    dealer_bj = (dealer_n == 2) & (dealer_total == 21)

    h = flat_values(table["hands"])
    h_round = _parents(table["hands"])
    card_flat, card_start, n_cards = _flat_cards(struct_field(h, "cards"))
    total, hand_jokers = _list_totals(card_flat, card_start, n_cards)
    split = _field(h, "split", False, bool)
    bj = (n_cards == 2) & (total == 21) & ~split
    joker = (dealer_jokers > 0) | (np.bincount(h_round[hand_jokers > 0], minlength=n)[:n] > 0)

    round_min = _np(table["table_min"], np.nan, np.float64)
    round_max = _np(table["table_max"], np.nan, np.float64)
    table_min = np.where(np.isnan(round_min), config.param(GAME, "table_min", tids), round_min)
    table_max = np.where(np.isnan(round_max), config.param(GAME, "table_max", tids), round_max)

    w = flat_values(table["wagers"])
    w_round = _parents(table["wagers"])
    w_kind = to_numpy(pc.index_in(struct_field(w, "bet"), value_set=pa.array(["insurance", "even_money"])), -1)
    w_kind = w_kind.astype(np.int64, copy=False)
    w_seat = _field(w, "seat", -1, np.int64)
    seat = _field(h, "seat", -1, np.int64)
    even_money_hand = np.zeros(len(h), dtype=bool)
    em = w_kind == 1
    if em.any():  # only hands of rounds with an even money wager are looked up
        in_round = np.flatnonzero((np.bincount(w_round[em], minlength=n)[:n] > 0)[h_round])
        even_money_hand[in_round] = np.isin(_seat_key(h_round[in_round], seat[in_round]),
                                            _seat_key(w_round[em], w_seat[em]))

    e = flat_values(table["events"])
    e_len = _lengths(table["events"])
    e_round = np.repeat(np.arange(n, dtype=np.int64), e_len)
    e_start = np.zeros(n, dtype=np.int64)
    np.cumsum(e_len[:-1], out=e_start[1:])
    e_pos = np.arange(len(e), dtype=np.int64) - e_start[e_round]
    e_first = _np(pc.equal(struct_field(e, "type"), "first_card"), False, bool)
    e_action = to_numpy(pc.index_in(struct_field(e, "action"), value_set=pa.array(list(ACTIONS))), -1)

    rate = {k: config.param(GAME, k, tids) for k in RATE_KEYS}
    return Ctx(
        n=n, config=config, money_unit=float(config.money["rounding_unit"]), rounding=config.money["rounding"],
        checked=completed & ~joker, completed=completed, joker=joker,
        table_min=table_min, table_max=table_max, dealer_col=table["dealer_cards"],
        dealer_flat=dealer_flat, dealer_start=dealer_start, dealer_n=dealer_n,
        dealer_total=dealer_total, dealer_bj=dealer_bj,
        h_round=h_round, seat=seat, hand_no=_field(h, "hand", 0, np.int64),
        card_flat=card_flat, card_start=card_start, n_cards=n_cards, wager=_field(h, "wager", 0.0, np.float64),
        initial=_field(h, "initial_wager", np.nan, np.float64),
        doubled=_field(h, "doubled", False, bool), split=split,
        surrendered=_field(h, "surrendered", False, bool),
        net=_field(h, "net", 0.0, np.float64), total=total, bj=bj, even_money_hand=even_money_hand,
        w_round=w_round, w_seat=w_seat, w_kind=w_kind,
        w_amount=_field(w, "amount", 0.0, np.float64), w_net=_field(w, "net", 0.0, np.float64),
        e_round=e_round, e_first=e_first, e_seat=_field(e, "seat", -1, np.int64),
        e_action=e_action.astype(np.int64, copy=False), e_amount=_field(e, "amount", 0.0, np.float64),
        e_pos=e_pos, rate=rate,
    )


# ---- outcomes -----------------------------------------------------------------------
def _outcome_kind(ctx: Ctx) -> np.ndarray:
    """The correct result of every hand as one of the kinds above."""
    r = ctx.h_round
    d_total, d_bj = ctx.dealer_total[r], ctx.dealer_bj[r]
    p, p_bj = ctx.total, ctx.bj
    conditions = [
        p > 21,
        d_bj & p_bj,
        d_bj & (p == 21),
        d_bj,
        p_bj,
        d_total > 21,
        p > d_total,
        p == d_total,
    ]
    choices = [LOSS_BUST, B_PUSH_BJ, B_LOSS_21, LOSS_DEALER_BJ, A3, A1, A2, B_PUSH]
    return np.select(conditions, choices, default=LOSS_BEATEN).astype(np.int64)




def _rate_str(rate: float) -> str:
    """A payout multiple as odds: 1.5 -> 3:2, 1.2 -> 6:5, 2 -> 2:1."""
    f = Fraction(float(rate)).limit_denominator(100)
    return f"{f.numerator}:{f.denominator}"


def _settlement_str(kind: int, rate: float, wager: float) -> str:
    """How a hand of this kind is settled: 'blackjack pays 3:2 on 20', 'loses the wager 25'."""
    if DIRECTION[kind] < 0:
        return f"loses the wager {_fmt(wager)}"
    return f"{'blackjack pays' if kind == A3 else 'win pays'} {_rate_str(rate)} on {_fmt(wager)}"


def _total_str(total: int, blackjack: bool) -> str:
    return "blackjack" if blackjack else str(int(total))


def _hand_desc(ctx: Ctx, idx: np.ndarray) -> np.ndarray:
    """'seat 5 hand 0: 4d 3s 3d Qd (20) v dealer 7s Kh (17)' for the given hand indices."""
    out = np.empty(len(idx), dtype=object)
    for k, i in enumerate(idx):  # flagged hands only
        r = ctx.h_round[i]
        out[k] = (f"seat {ctx.seat[i]} hand {ctx.hand_no[i]}: {ctx.hand_cards(i)} "
                  f"({_total_str(ctx.total[i], ctx.bj[i])}) v dealer {ctx.dealer_cards(r)} "
                  f"({_total_str(ctx.dealer_total[r], ctx.dealer_bj[r])})")
    return out


def _direction(net: np.ndarray, unit: float) -> np.ndarray:
    """Recorded direction of a net: 1 won, 0 push (within half a rounding unit), -1 lost."""
    return np.where(np.abs(net) < unit / 2, 0, np.sign(net)).astype(np.int8)


def _settlement(ctx: Ctx) -> dict[str, np.ndarray]:
    """Correct result of every hand and where the recorded one departs from it (cached per batch)."""
    if "settlement" in ctx.cache:
        return ctx.cache["settlement"]
    r = ctx.h_round
    kind = _outcome_kind(ctx)
    direction = DIRECTION[kind]
    rate = np.select([direction < 0, direction == 0, kind == A3],
                     [-1.0, 0.0, ctx.rate["blackjack"][r]], default=ctx.rate["win"][r])
    exact = ctx.wager * rate
    compared = ctx.checked[r] & ~ctx.surrendered & ~ctx.even_money_hand
    wrong_direction = compared & (_direction(ctx.net, ctx.money_unit) != direction)
    wrong_amount = compared & ~wrong_direction & money_differs(ctx.net, exact, ctx.money_unit)
    out = {"kind": kind, "rate": rate, "exact": exact,
           "wrong_direction": wrong_direction, "wrong_amount": wrong_amount}
    ctx.cache["settlement"] = out
    return out


def _outcome_hits(ctx: Ctx, kinds: tuple[int, ...]) -> Hits:
    """Hands settled in the wrong direction whose correct result is one of ``kinds``."""
    s = _settlement(ctx)
    idx = np.flatnonzero(s["wrong_direction"] & np.isin(s["kind"], kinds))
    if not len(idx):
        return Hits(rows=np.empty(0, np.int64), message="")
    expected = ctx.expected_round(s["exact"][idx])
    recorded = ctx.net[idx]
    desc = _hand_desc(ctx, idx)
    msgs = np.array([f"{d}: {REASON[k]}; recorded {_fmt(n)}, expected {_fmt(x)}"
                     for d, k, n, x in zip(desc, s["kind"][idx], recorded, expected)], dtype=object)
    return Hits(rows=ctx.h_round[idx], message=msgs, expected=_fmt_all(expected), recorded=_fmt_all(recorded),
                discrepancy=recorded - expected, seat=ctx.seat[idx])


def _concat(parts: list[Hits]) -> Hits:
    parts = [p for p in parts if len(p)]
    if not parts:
        return Hits(rows=np.empty(0, np.int64), message="")

    def arr(p: Hits, name: str, dtype: Any) -> np.ndarray:
        v = getattr(p, name)
        return v if isinstance(v, np.ndarray) else np.full(len(p), v, dtype=dtype)

    seats = [p.seat if p.seat is not None else np.full(len(p), -1) for p in parts]
    return Hits(rows=np.concatenate([p.rows for p in parts]),
                message=np.concatenate([arr(p, "message", object) for p in parts]),
                expected=np.concatenate([arr(p, "expected", object) for p in parts]),
                recorded=np.concatenate([arr(p, "recorded", object) for p in parts]),
                discrepancy=np.concatenate([arr(p, "discrepancy", np.float64) for p in parts]),
                seat=np.concatenate(seats))


# ---- (a) table limits -------------------------------------------------------------------
@rule("blackjack.a", games=(GAME,), citation=f"{SECTION}(a)", severity="medium",
      summary="Each hand's initial wager (before any double) is within the table minimum and maximum")
def wager_limits(ctx: Ctx) -> Hits:
    """Limits come from the round (table_min/table_max), else from [blackjack] table_min/table_max.

    Every hand is checked, as the catalog says; split hands repeat the seat's
    original wager, so one hit per seat (its first offending hand) is kept.
    Where no limit is known the check is skipped.
    """
    r = ctx.h_round
    lo, hi = ctx.table_min[r], ctx.table_max[r]
    below = ctx.initial < lo - 1e-9
    above = ctx.initial > hi + 1e-9
    bad = np.flatnonzero(below | above)
    if not len(bad):
        return Hits(rows=np.empty(0, np.int64), message="")
    _, first = np.unique(_seat_key(r[bad], ctx.seat[bad]), return_index=True)
    idx = bad[np.sort(first)]
    msgs = np.array([
        f"seat {ctx.seat[i]} hand {ctx.hand_no[i]}: initial wager {_fmt(ctx.initial[i])} "
        + (f"below the table minimum {_fmt(lo[i])}" if below[i] else f"above the table maximum {_fmt(hi[i])}")
        + (f" (wager {_fmt(ctx.wager[i])} doubled)" if ctx.doubled[i] else "")
        for i in idx], dtype=object)
    limits = np.array([f"{_fmt(lo[i])}-{_fmt(hi[i])}" for i in idx], dtype=object)
    return Hits(rows=r[idx], message=msgs, expected=limits, recorded=_fmt_all(ctx.initial[idx]), seat=ctx.seat[idx])


# ---- outcomes: (a)(1), (a)(2), (a)(3), (b), loss ---------------------------------------
@rule("blackjack.a1", games=(GAME,), citation=f"{SECTION}(a)(1)", severity="high",
      summary="Player 21 or less and dealer over 21: the hand wins")
def dealer_busts(ctx: Ctx) -> Hits:
    return _outcome_hits(ctx, (A1,))


@rule("blackjack.a2", games=(GAME,), citation=f"{SECTION}(a)(2)", severity="high",
      summary="Player total beats the dealer's without exceeding 21: the hand wins")
def player_higher(ctx: Ctx) -> Hits:
    return _outcome_hits(ctx, (A2,))


@rule("blackjack.a3", games=(GAME,), citation=f"{SECTION}(a)(3)", severity="high",
      summary="Player blackjack, dealer none: the hand wins at the blackjack rate")
def player_blackjack(ctx: Ctx) -> Hits:
    return _outcome_hits(ctx, (A3,))


@rule("blackjack.b", games=(GAME,), citation=f"{SECTION}(b)", severity="high",
      summary="Equal totals or both blackjack push; dealer blackjack beats a player 21 that is not a blackjack")
def push_or_dealer_blackjack(ctx: Ctx) -> Hits:
    return _outcome_hits(ctx, (B_PUSH, B_PUSH_BJ, B_LOSS_21))


@rule("blackjack.loss", games=(GAME,), citation="loss", severity="high",
      summary="Player busts, or the dealer's total or blackjack beats the player's: the hand loses")
def hand_loses(ctx: Ctx) -> Hits:
    return _outcome_hits(ctx, (LOSS_BUST, LOSS_BEATEN, LOSS_DEALER_BJ))


# ---- (c), (e): wager changes --------------------------------------------------------------
def _action_str(ctx: Ctx, idx: np.ndarray) -> list[str]:
    return [f"seat {ctx.e_seat[i]} {ACTIONS[ctx.e_action[i]]} {_fmt(ctx.e_amount[i])}" for i in idx]


@rule("blackjack.c", games=(GAME,), citation=f"{SECTION}(c)", severity="high",
      summary="No wager placed, increased or withdrawn after the first card (double, split, surrender, "
              "insurance, even money excepted)")
def no_change_after_first_card(ctx: Ctx) -> Hits:
    """Only rounds whose events carry a ``first_card`` marker can show this."""
    if not len(ctx.e_round):
        return Hits(rows=np.empty(0, np.int64), message="")
    markers_before = np.cumsum(ctx.e_first) - ctx.e_first
    start = np.arange(len(ctx.e_round)) - ctx.e_pos
    after_first = (markers_before - markers_before[start]) > 0
    idx = np.flatnonzero(after_first & CHANGING[ctx.e_action])
    msgs = np.array([f"{a} after the first card" for a in _action_str(ctx, idx)], dtype=object)
    return Hits(rows=ctx.e_round[idx], message=msgs, expected="no wager change after the first card",
                recorded=np.array([ACTIONS[a] for a in ctx.e_action[idx]], dtype=object), seat=ctx.e_seat[idx])


@rule("blackjack.e", games=(GAME,), citation=f"{SECTION}(e)", severity="high",
      summary="After a double, split, surrender, insurance or even money wager, the seat's wagers are not "
              "increased or withdrawn in the round")
def no_change_after_confirmed(ctx: Ctx) -> Hits:
    conf_round = np.bincount(ctx.e_round[CONFIRMING[ctx.e_action]], minlength=ctx.n)[:ctx.n] > 0
    wager_ev = np.flatnonzero((ctx.e_action >= 0) & conf_round[ctx.e_round])  # rounds with a confirmed wager
    if not len(wager_ev):
        return Hits(rows=np.empty(0, np.int64), message="")
    key = _seat_key(ctx.e_round[wager_ev], ctx.e_seat[wager_ev])
    order = wager_ev[np.argsort(key, kind="stable")]  # by round and seat, event order kept
    k = np.sort(key, kind="stable")
    conf = CONFIRMING[ctx.e_action[order]].astype(np.int64)
    before = np.cumsum(conf) - conf
    new_group = np.ones(len(k), dtype=bool)
    new_group[1:] = k[1:] != k[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(len(k)), 0))
    confirmed_before = (before - before[group_start]) > 0
    act = ctx.e_action[order]
    idx = np.sort(order[confirmed_before & ((act == INCREASE) | (act == WITHDRAW))])
    msgs = np.array([f"{a} after a confirmed double/split/surrender/insurance/even money wager"
                     for a in _action_str(ctx, idx)], dtype=object)
    return Hits(rows=ctx.e_round[idx], message=msgs, expected="no wager change after a confirmed wager",
                recorded=np.array([ACTIONS[a] for a in ctx.e_action[idx]], dtype=object), seat=ctx.e_seat[idx])


# ---- paytable and void ----------------------------------------------------------------------
@rule("blackjack.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Net matches the paytable: win 1:1, blackjack 3:2, surrender loses half, insurance 2:1, "
              "even money 1:1")
def paytable(ctx: Ctx) -> Hits:
    """Hands settled in the right direction for the wrong amount, surrenders, insurance and even money."""
    s = _settlement(ctx)
    unit = ctx.money_unit
    r = ctx.h_round
    parts: list[Hits] = []

    idx = np.flatnonzero(s["wrong_amount"])
    if len(idx):
        exp = ctx.expected_round(s["exact"][idx])
        desc = _hand_desc(ctx, idx)
        msgs = np.array([f"{d}: {_settlement_str(k, rt, w)}; recorded {_fmt(n)}, expected {_fmt(x)}"
                         for d, k, rt, w, n, x in zip(desc, s["kind"][idx], s["rate"][idx], ctx.wager[idx],
                                                      ctx.net[idx], exp)], dtype=object)
        parts.append(Hits(rows=r[idx], message=msgs, expected=_fmt_all(exp), recorded=_fmt_all(ctx.net[idx]),
                          discrepancy=ctx.net[idx] - exp, seat=ctx.seat[idx]))

    sur_exact = -ctx.rate["surrender"][r] * ctx.wager
    idx = np.flatnonzero(ctx.checked[r] & ctx.surrendered & ~ctx.even_money_hand
                         & money_differs(ctx.net, sur_exact, unit))
    if len(idx):
        exp = ctx.expected_round(sur_exact[idx])
        msgs = np.array([f"seat {ctx.seat[i]} hand {ctx.hand_no[i]}: surrendered {_fmt(ctx.wager[i])} loses "
                         f"{_fmt(ctx.rate['surrender'][r[i]] * 100)}%; recorded {_fmt(ctx.net[i])}, "
                         f"expected {_fmt(x)}" for i, x in zip(idx, exp)], dtype=object)
        parts.append(Hits(rows=r[idx], message=msgs, expected=_fmt_all(exp), recorded=_fmt_all(ctx.net[idx]),
                          discrepancy=ctx.net[idx] - exp, seat=ctx.seat[idx]))

    wr = ctx.w_round
    ins = ctx.w_kind == 0
    ins_exact = np.where(ctx.dealer_bj[wr], ctx.rate["insurance"][wr] * ctx.w_amount, -ctx.w_amount)
    idx = np.flatnonzero(ins & ctx.checked[wr] & money_differs(ctx.w_net, ins_exact, unit))
    if len(idx):
        exp = ctx.expected_round(ins_exact[idx])
        msgs = np.array([
            f"seat {ctx.w_seat[i]} insurance {_fmt(ctx.w_amount[i])}: "
            + (f"dealer blackjack, pays {_rate_str(ctx.rate['insurance'][wr[i]])}" if ctx.dealer_bj[wr[i]]
               else "dealer has no blackjack, the insurance is lost")
            + f"; recorded {_fmt(ctx.w_net[i])}, expected {_fmt(x)}" for i, x in zip(idx, exp)], dtype=object)
        parts.append(Hits(rows=wr[idx], message=msgs, expected=_fmt_all(exp), recorded=_fmt_all(ctx.w_net[idx]),
                          discrepancy=ctx.w_net[idx] - exp, seat=ctx.w_seat[idx]))

    parts.append(_even_money(ctx))
    return _concat(parts)


def _even_money(ctx: Ctx) -> Hits:
    """A seat that took even money gains ``even_money`` x the wager in all (hand net plus even money net)."""
    em = np.flatnonzero((ctx.w_kind == 1) & ctx.checked[ctx.w_round])
    if not len(em):
        return Hits(rows=np.empty(0, np.int64), message="")
    keys, first = np.unique(_seat_key(ctx.w_round[em], ctx.w_seat[em]), return_index=True)
    em = em[first]
    recorded = ctx.w_net[em].copy()
    hand_keys = _seat_key(ctx.h_round, ctx.seat)
    pos = np.searchsorted(keys, hand_keys)
    pos_c = np.minimum(pos, len(keys) - 1)
    match = keys[pos_c] == hand_keys
    np.add.at(recorded, pos_c[match], ctx.net[match])
    exact = ctx.rate["even_money"][ctx.w_round[em]] * ctx.w_amount[em]
    bad = money_differs(recorded, exact, ctx.money_unit)
    em, recorded, exact = em[bad], recorded[bad], exact[bad]
    exp = ctx.expected_round(exact)
    msgs = np.array([f"seat {ctx.w_seat[i]} even money on {_fmt(ctx.w_amount[i])} pays "
                     f"{_rate_str(ctx.rate['even_money'][ctx.w_round[i]])}; recorded {_fmt(n)} "
                     f"(hand and even money), expected {_fmt(x)}" for i, n, x in zip(em, recorded, exp)],
                    dtype=object)
    return Hits(rows=ctx.w_round[em], message=msgs, expected=_fmt_all(exp), recorded=_fmt_all(recorded),
                discrepancy=recorded - exp, seat=ctx.w_seat[em])


@rule("blackjack.void", games=(GAME,), citation="paytable", severity="high",
      summary="In a void or dead round every wager's net is 0")
def void_round(ctx: Ctx) -> Hits:
    unit = ctx.money_unit
    parts = []
    idx = np.flatnonzero(~ctx.completed[ctx.h_round] & money_differs(ctx.net, 0.0, unit))
    if len(idx):
        msgs = np.array([f"seat {ctx.seat[i]} hand {ctx.hand_no[i]}: net {_fmt(ctx.net[i])} in a void/dead round"
                         for i in idx], dtype=object)
        parts.append(Hits(rows=ctx.h_round[idx], message=msgs, expected="0", recorded=_fmt_all(ctx.net[idx]),
                          discrepancy=ctx.net[idx], seat=ctx.seat[idx]))
    idx = np.flatnonzero(~ctx.completed[ctx.w_round] & money_differs(ctx.w_net, 0.0, unit))
    if len(idx):
        msgs = np.array([f"seat {ctx.w_seat[i]} side wager net {_fmt(ctx.w_net[i])} in a void/dead round"
                         for i in idx], dtype=object)
        parts.append(Hits(rows=ctx.w_round[idx], message=msgs, expected="0", recorded=_fmt_all(ctx.w_net[idx]),
                          discrepancy=ctx.w_net[idx], seat=ctx.w_seat[idx]))
    return _concat(parts)


# ---- integrity ---------------------------------------------------------------------------------
@rule("blackjack.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="No joker in a blackjack round")
def joker_in_round(ctx: Ctx) -> Hits:
    idx = np.flatnonzero(ctx.joker)
    return Hits(rows=idx, message="a joker (JK) recorded in a blackjack round", expected="no joker",
                recorded="JK")


@rule("blackjack.integrity_shoe", games=(GAME,), citation="integrity", severity="high",
      summary="No more copies of a card in a shoe than its decks hold", scope="shoe",
      columns=("dealer_cards", "hands"))
def shoe_copies(table: pa.Table, config: Config) -> Hits:
    """Copies counted per (table_id, shoe_id) in round_seq order; rounds without shoe_id are skipped.

    A first pass counts each card of each shoe (order-free, one bincount); only the
    shoes holding a card more often than their decks go through
    :func:`integrity.shoe_excess`, which finds the round of each excess copy.
    """
    has_shoe = to_numpy(pc.is_valid(table["shoe_id"]), False).astype(bool)
    rows = np.flatnonzero(has_shoe)
    if not len(rows):
        return Hits(rows=np.empty(0, np.int64), message="")
    sub = table if len(rows) == table.num_rows else table.take(pa.array(rows))
    decks = config.param(GAME, "decks", sub["table_id"])
    group = shoe_groups(sub)
    dealer_flat, _, dealer_n = _flat_cards(sub["dealer_cards"])
    hands = flat_values(sub["hands"])
    card_flat, _, n_cards = _flat_cards(struct_field(hands, "cards"))
    code = np.concatenate([dealer_flat, card_flat]).astype(np.int64)
    card_row = np.concatenate([np.repeat(np.arange(len(dealer_n)), dealer_n),
                               np.repeat(parents(sub["hands"]), n_cards)])
    real = (code >= 0) & (code < JOKER)
    key = group[card_row[real]] * 64 + code[real]
    copies = np.bincount(key)
    group_decks = np.zeros(int(group.max()) + 1)
    group_decks[group] = decks
    excess_groups = np.unique(key[copies[key] > group_decks[key // 64]] // 64)
    if not len(excess_groups):
        return Hits(rows=np.empty(0, np.int64), message="")
    keep = np.flatnonzero(np.isin(group, excess_groups))
    hit_rows, msgs = shoe_excess(sub.take(pa.array(keep)), ["dealer_cards", "hands.cards"], decks[keep])
    return Hits(rows=rows[keep[hit_rows]], message=msgs, expected="at most the shoe's copies of each card",
                recorded="excess copy")


# ---- house rules: the dealer's drawing ----------------------------------------------------------
@rule("blackjack.dealer_play", games=(GAME,), citation="house-rules", severity="high",
      summary="The dealer draws below 17 and stands at 17 or more (hits soft 17 when the house does); "
              "checked when check_dealer_play is on")
def dealer_play(ctx: Ctx) -> Hits:
    """Only rounds where some hand is still live (not busted, surrendered, blackjack or even money)."""
    on = ctx.rate["check_dealer_play"] > 0
    if not on.any():
        return Hits(rows=np.empty(0, np.int64), message="")
    live = (ctx.total <= 21) & ~ctx.surrendered & ~ctx.bj & ~ctx.even_money_hand
    live_round = np.bincount(ctx.h_round[live], minlength=ctx.n)[:ctx.n] > 0
    sel = np.flatnonzero(on & ctx.checked & live_round & (ctx.dealer_n >= 2))
    if not len(sel):
        return Hits(rows=np.empty(0, np.int64), message="")
    d, dealer_n = padded(pc.take(ctx.dealer_col, pa.array(sel)))
    hard = np.cumsum(BLACKJACK_POINTS[d], axis=1, dtype=np.int16)
    soft = (np.cumsum(IS_ACE[d], axis=1) > 0) & (hard <= 11)
    total = hard + 10 * soft
    h17 = (ctx.rate["dealer_hits_soft_17"][sel] > 0)[:, None]
    draw = dealer_must_draw(total, soft, h17)        # after k + 1 cards
    k = np.arange(d.shape[1])[None, :]
    drew_on_stand = ((k >= 1) & (k <= dealer_n[:, None] - 2) & ~draw).any(axis=1)
    last = dealer_n - 1
    stood_low = draw[np.arange(len(sel)), last]
    bad = np.flatnonzero(drew_on_stand | stood_low)
    msgs = np.empty(len(bad), dtype=object)
    for j, i in enumerate(bad):  # flagged rounds only
        rule_text = "hits soft 17" if h17[i, 0] else "stands on soft 17"
        if drew_on_stand[i]:
            at = int(np.flatnonzero((k[0] >= 1) & (k[0] <= dealer_n[i] - 2) & ~draw[i])[0])
            what = f"drew after reaching {'soft ' if soft[i, at] else ''}{total[i, at]}"
        else:
            what = f"stood on {'soft ' if soft[i, last[i]] else ''}{total[i, last[i]]}"
        msgs[j] = f"dealer {cards_str(d[i])}: {what} (house {rule_text})"
    bad = sel[bad]
    return Hits(rows=bad, message=msgs, expected="draw below 17, stand at 17+", recorded="dealer's drawing")
