"""Baccarat and mini baccarat: 68 IAC 10-10-14 (third-card rules, dealing order, cut card).

The preparer turns a batch of rounds into per-round arrays, read straight
from the list offsets of the card columns: two-card totals, naturals, who
drew, the third cards, what the tableau requires given the cards *as dealt*,
final totals and the outcome those cards give. Each rule is then a few
vectorized comparisons; messages are formatted for the flagged rows only.

How the catalog is read (see ``docs/baccarat.md``):

* a wrong draw or stand is one finding, on the subsection that governs the
  hand that acted wrongly; the banker's duty is judged on the cards as dealt
  (whether the player actually drew, and the player's third card as dealt);
* a round whose hands hold fewer than two cards cannot be played out: in a
  completed round that is an ``integrity`` finding, and the drawing,
  announcement, order, outcome and payout checks skip it (a void or dead round
  with missing cards is simply skipped);
* in a void or dead round every wager's net must be 0 (``paytable``); its
  recorded outcome is not checked;
* a joker is an ``integrity`` finding and counts 0 points elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import BACCARAT_POINTS, JOKER, cards_str
from ...columns import combine, flat_values, lengths, padded
from ...money import money_round
from ...paytables import Config
from ...rules.integrity import shoe_excess, shoe_groups
from ...rules.registry import Hits, preparer, rule

__all__ = ["BaccaratCtx", "HandCards", "prepare", "is_natural", "player_draws", "banker_draws",
           "banker_subsection", "outcome_of", "BANKER_DRAWS_AFTER_PLAYER", "OUTCOMES", "PAY_KEYS"]

GAMES = ("baccarat", "mini_baccarat")
SECTION = "68 IAC 10-10-14"
OUTCOMES = ("player", "banker", "tie")
"""Outcome codes 0, 1, 2 (index in this tuple); -1 for a recorded value that is none of them."""
_OUTCOME_SET = pa.array(OUTCOMES)
_FIRST_BYTE = np.array([ord(o[0]) for o in OUTCOMES], np.uint8)  # p, b, t: with the length 6, 6, 3
PAY_KEYS = ("player", "banker", "banker_commission", "banker_six", "tie")
"""Paytable settings of the ``[baccarat]`` configuration section."""

# ---- the tableau ---------------------------------------------------------------------
BANKER_DRAWS_AFTER_PLAYER = np.zeros((10, 10), dtype=bool)
"""``[banker two-card total, player third-card value]``: does the banker draw, when the player drew?"""
BANKER_DRAWS_AFTER_PLAYER[0:3, :] = True                 # (b)(11): 0-2 always draws
BANKER_DRAWS_AFTER_PLAYER[3, :] = np.arange(10) != 8     # (b)(5)
BANKER_DRAWS_AFTER_PLAYER[4, 2:8] = True                 # (b)(6): 2-7
BANKER_DRAWS_AFTER_PLAYER[5, 4:8] = True                 # (b)(7): 4-7
BANKER_DRAWS_AFTER_PLAYER[6, 6:8] = True                 # (b)(8): 6-7
#                                                          (b)(4): 7 stands; 8-9 are naturals

_FLAT_TABLE = BANKER_DRAWS_AFTER_PLAYER.ravel()
# [player drew (0/1), banker two-card total, player third-card value], flat: the tableau without
# naturals (player stood: the banker draws on 0-5)
_BANKER_MUST = np.stack([np.repeat(np.arange(10) <= 5, 10).reshape(10, 10), BANKER_DRAWS_AFTER_PLAYER]).ravel()

# Subsection governing the banker's action: [player drew (0/1), banker two-card total]
_B_SUB = np.array([
    ["(b)(9)"] * 6 + ["(b)(10)"] * 2 + ["(b)(3)"] * 2,
    ["(b)(11)"] * 3 + ["(b)(5)", "(b)(6)", "(b)(7)", "(b)(8)", "(b)(4)"] + ["(b)(3)"] * 2,
], dtype=object)


def is_natural(p2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """(b)(3): a two-card 8 or 9 on either hand."""
    return (p2 >= 8) | (b2 >= 8)


def player_draws(p2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """Must the player draw? (b)(1)-(b)(3): no natural and a two-card total 0-5."""
    return ~is_natural(p2, b2) & (p2 <= 5)


def banker_draws(p2: np.ndarray, b2: np.ndarray, player_drew: np.ndarray, p3: np.ndarray) -> np.ndarray:
    """Must the banker draw, given whether the player drew and the player's third-card value?

    ``p3`` is ignored where the player did not draw. Player stood: banker draws
    on 0-5 ((b)(9), (b)(10)); player drew: the table of (b)(4)-(b)(8), (b)(11).
    """
    b2 = np.asarray(b2, dtype=np.intp)
    after = _FLAT_TABLE[b2 * 10 + np.asarray(p3, dtype=np.intp)]
    return ~is_natural(p2, b2) & np.where(player_drew, after, b2 <= 5)


def banker_subsection(player_drew: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """The subsection that governs the banker's action (object array of ``(b)(k)``)."""
    return _B_SUB[np.asarray(player_drew, dtype=np.intp), np.asarray(b2, dtype=np.intp)]


# ---- context -------------------------------------------------------------------------
@dataclass
class BaccaratCtx:
    """Derived arrays of one batch of baccarat rounds (``n`` rounds)."""

    table: pa.Table
    config: Config
    n: int
    p: HandCards            # player cards (p[i] is round i's)
    b: HandCards            # banker cards
    np_: np.ndarray         # number of player cards
    nb: np.ndarray          # number of banker cards
    p2: np.ndarray          # two-card totals
    b2: np.ndarray
    p3: np.ndarray          # third-card values (0 when none)
    natural: np.ndarray
    p_drew: np.ndarray      # as dealt
    b_drew: np.ndarray
    p_must: np.ndarray      # what the tableau requires, on the cards as dealt
    b_must: np.ndarray
    pf: np.ndarray          # final totals of every card dealt
    bf: np.ndarray
    dealt: np.ndarray       # outcome code of the cards as dealt
    recorded: np.ndarray    # recorded outcome code (-1 none of them)
    completed: np.ndarray   # status completed
    complete: np.ndarray    # both hands hold at least two cards
    playable: np.ndarray    # complete: the drawing, announcement and order rules apply
    settled: np.ndarray     # completed and complete: outcome and payouts are checked
    p_wrong: np.ndarray     # rows where the player's draw or stand breaks the tableau (no natural)
    b_wrong: np.ndarray     # rows where the banker's does, and the subsection that governs it
    b_wrong_sub: np.ndarray

    def hand(self, i: int, side: str) -> str:
        """``Ac Jd 4s (5)``: the cards of one hand of round ``i`` and its final total."""
        cards, total = (self.p, self.pf) if side == "player" else (self.b, self.bf)
        return f"{cards_str(cards[i])} ({int(total[i])})"


class HandCards:
    """The cards of one hand column without padding: flat codes and list offsets.

    ``hand[i]`` is round ``i``'s cards in dealing order, ``hand[i, 2:3]`` a slice of them.
    """

    def __init__(self, off: np.ndarray, vals: np.ndarray):
        self.off, self.vals = off, vals

    def __getitem__(self, key: int | tuple[int, slice]) -> np.ndarray:
        i, part = key if isinstance(key, tuple) else (key, slice(None))
        return self.vals[self.off[i]:self.off[i + 1]][part]

    def rows_with(self, code: int) -> np.ndarray:
        """Rows holding a card ``code`` (once per occurrence)."""
        lo, hi = int(self.off[0]), int(self.off[-1])
        idx = np.flatnonzero(self.vals[lo:hi] == code) + lo
        return np.searchsorted(self.off, idx, side="right") - 1


def _hand(col: pa.ChunkedArray | pa.Array) -> tuple[HandCards, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A hand column: its cards, card counts, two-card totals, third-card values and final totals.

    Works on the list offsets directly (one gather per card position, never a loop per round);
    the offsets are read in place and the per-round arrays are one byte wide.
    """
    arr = combine(col)
    if arr.null_count:  # a null hand reads as no card
        m, n = padded(arr)
        off = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        vals = m[np.arange(m.shape[1]) < n[:, None]].astype(np.int8)
    else:
        off = arr.offsets.to_numpy()
        lo = int(off[0])  # a slice of a longer array: read only its own cards
        vals = arr.values.slice(lo, int(off[-1]) - lo).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
        if lo:
            off = off - lo
    n = np.diff(off)
    pv = np.zeros(len(vals) + 4, np.int8)  # point values, padded for the gathers past the last card
    if len(vals) and (int(vals.min()) < -len(BACCARAT_POINTS) or int(vals.max()) >= len(BACCARAT_POINTS)):
        pv[:len(vals)] = BACCARAT_POINTS[vals]  # raises IndexError on a code that is no card
    else:
        np.take(BACCARAT_POINTS, vals, out=pv[:len(vals)], mode="wrap")  # as BACCARAT_POINTS[vals]
    at = off[:-1].astype(np.intp)  # index of each hand's first, then second, then third card
    first = pv[at]
    at += 1
    two = pv[at]
    at += 1
    third = pv[at]
    shortest = int(n.min(initial=3))
    if shortest < 3:  # a card past the end of a hand counts 0
        if shortest < 2:
            first *= n >= 1
            two *= n >= 2
        third *= n >= 3
    two += first
    _mod10(two)
    final = two + third
    _mod10(final)
    longer = np.flatnonzero(n > 3)
    if len(longer):  # a hand of four or more cards ((d)): the outcome counts every card dealt
        start = off[:-1]
        extra = np.zeros(len(longer), np.int64)
        for k in range(3, int(n[longer].max())):
            extra += np.where(n[longer] > k, pv[np.minimum(start[longer] + k, len(pv) - 1)], 0)
        final[longer] = (final[longer] + extra) % 10
    return HandCards(off, vals), n, two, third, final


def _mod10(total: np.ndarray) -> None:
    """``total %= 10`` in place for totals 0-18 (a compare and a subtraction, no division)."""
    total -= (total >= 10).view(np.int8) * np.int8(10)


def _num(arr: pa.Array | pa.ChunkedArray, fill: object) -> np.ndarray:
    """A numeric column as numpy, nulls filled (no copy through fill_null when there is none)."""
    arr = combine(arr)
    if arr.null_count:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False)


def _bet_kind(bet: pa.Array, dtype: np.dtype) -> np.ndarray:
    """Kind of each wager: 0 player, 1 banker, 2 tie, 3 any other bet (or none)."""
    kind = pc.fill_null(pc.index_in(bet, value_set=_OUTCOME_SET), 3)
    return pc.cast(kind, pa.from_numpy_dtype(dtype)).to_numpy(zero_copy_only=False)


def _bet_kind_read(bet: pa.Array, dtype: np.dtype) -> np.ndarray | None:
    """Kind of each wager as ``_bet_kind`` reads it, from the length and first byte of the bet only.

    Every ``player``, ``banker`` and ``tie`` bet reads as its kind; another bet or a null may read
    as one of them too (``pxxxxx`` as player), so a wager flagged on this reading is read again
    with ``_bet_kind``. None when the bets are not a plain string column.
    """
    bufs = bet.buffers()
    if bet.type != pa.string() or len(bufs) < 3 or bufs[1] is None:
        return None
    off = np.frombuffer(bufs[1], np.int32, len(bet) + 1, bet.offset * 4)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    kind = np.full(len(bet), 3, dtype)
    if not len(bet) or not len(data):
        return kind  # no bet, or every bet empty or null: none is a player, banker or tie bet
    length = np.diff(off)
    at = off[:-1].astype(np.intp)
    if int(at[-1]) >= len(data):  # empty strings at the very end: any byte will do, their length is 0
        np.minimum(at, len(data) - 1, out=at)
    first = data[at]
    six = length == 6
    kind -= ((first == _FIRST_BYTE[0]) & six).view(np.uint8) * np.uint8(3)
    kind -= ((first == _FIRST_BYTE[1]) & six).view(np.uint8) * np.uint8(2)
    kind -= ((first == _FIRST_BYTE[2]) & (length == 3)).view(np.uint8)
    return kind


def _take_str(arr: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> np.ndarray:
    """Some rows of a string column as a Python object array (for messages)."""
    return np.array(combine(arr).take(pa.array(rows, pa.int64())).to_pylist(), dtype=object)


def outcome_of(pf: np.ndarray, bf: np.ndarray) -> np.ndarray:
    """Outcome code of final totals: 0 player, 1 banker, 2 tie."""
    return ((pf < bf).view(np.int8) + 2 * (pf == bf).view(np.int8)).astype(np.int8, copy=False)


@preparer(*GAMES)
def prepare(table: pa.Table, config: Config) -> BaccaratCtx:
    """Everything the rules read, computed once per batch."""
    p, n_p, p2, p3, pf = _hand(table["player_cards"])
    b, n_b, b2, _b3, bf = _hand(table["banker_cards"])
    p_drew = n_p >= 3
    b_drew = n_b >= 3
    complete = (n_p >= 2) & (n_b >= 2)
    completed = _num(pc.equal(table["status"], "completed"), False).astype(bool, copy=False)
    recorded = pc.fill_null(pc.index_in(combine(table["outcome"]), value_set=_OUTCOME_SET), -1)
    recorded = pc.cast(recorded, pa.int8()).to_numpy(zero_copy_only=False)
    natural = is_natural(p2, b2)
    p_must = player_draws(p2, b2)
    at = p_drew.view(np.uint8) * np.uint8(100)  # as banker_draws(p2, b2, p_drew, p3), by one lookup
    at += b2.view(np.uint8) * np.uint8(10)
    at += p3.view(np.uint8)
    b_must = _BANKER_MUST[at]
    b_must &= ~natural
    open_ = complete & ~natural
    b_wrong = np.flatnonzero(open_ & (b_drew != b_must))
    return BaccaratCtx(
        table=table, config=config, n=table.num_rows, p=p, b=b, np_=n_p, nb=n_b, p2=p2, b2=b2, p3=p3,
        natural=natural, p_drew=p_drew, b_drew=b_drew, p_must=p_must, b_must=b_must,
        pf=pf, bf=bf, dealt=outcome_of(pf, bf), recorded=recorded,
        completed=completed, complete=complete, playable=complete, settled=completed & complete,
        p_wrong=np.flatnonzero(open_ & (p_drew != p_must)),
        b_wrong=b_wrong, b_wrong_sub=banker_subsection(p_drew[b_wrong], b2[b_wrong]),
    )


# ---- (a) announcements ------------------------------------------------------------------
@rule("baccarat.a", games=GAMES, citation=f"{SECTION}(a)", severity="low",
      summary="The announced point counts equal the two-card totals")
def announced_totals(ctx: BaccaratCtx) -> Hits:
    cols = (ctx.table["announced_player"], ctx.table["announced_banker"])
    if all(c.null_count == len(c) for c in cols):
        return Hits(rows=np.empty(0, np.int64), message="")
    ap, ab = (_num(c, -1).astype(np.int16) for c in cols)
    bad = ctx.playable & (((ap >= 0) & (ap != ctx.p2)) | ((ab >= 0) & (ab != ctx.b2)))
    rows = np.flatnonzero(bad)
    msg, exp, rec = (np.empty(len(rows), object) for _ in range(3))
    for k, i in enumerate(rows):
        parts = []
        for side, ann, two, cards in (("player", ap, ctx.p2, ctx.p), ("banker", ab, ctx.b2, ctx.b)):
            if ann[i] >= 0 and ann[i] != two[i]:
                parts.append(f"{side} {int(two[i])} ({cards_str(cards[i, :2])}) announced as {int(ann[i])}")
        msg[k] = "; ".join(parts)
        exp[k] = f"player {int(ctx.p2[i])}, banker {int(ctx.b2[i])}"
        rec[k] = ", ".join(f"{s} {int(a[i])}" for s, a in (("player", ap), ("banker", ab)) if a[i] >= 0)
    return Hits(rows=rows, message=msg, expected=exp, recorded=rec)


# ---- (b) the tableau ----------------------------------------------------------------
def _two(ctx: BaccaratCtx, i: int, side: str) -> str:
    cards, two = (ctx.p, ctx.p2) if side == "player" else (ctx.b, ctx.b2)
    return f"{side} {int(two[i])} ({cards_str(cards[i, :2])})"


def _action(ctx: BaccaratCtx, i: int, side: str) -> str:
    cards, drew = (ctx.p, ctx.p_drew) if side == "player" else (ctx.b, ctx.b_drew)
    return f"{side} drew {cards_str(cards[i, 2:3])}" if drew[i] else f"{side} stood"


def _player_hits(ctx: BaccaratCtx, rows: np.ndarray, rule_text: str) -> Hits:
    msg = np.empty(len(rows), object)
    exp = np.empty(len(rows), object)
    rec = np.empty(len(rows), object)
    for k, i in enumerate(rows):
        msg[k] = f"{_two(ctx, i, 'player')} v {_two(ctx, i, 'banker')}: {_action(ctx, i, 'player')}; {rule_text}"
        exp[k] = "player draws" if ctx.p_must[i] else "player stands"
        rec[k] = _action(ctx, i, "player")
    return Hits(rows=rows, message=msg, expected=exp, recorded=rec)


def _banker_hits(ctx: BaccaratCtx, sub: str, rule_text: str) -> Hits:
    rows = ctx.b_wrong[ctx.b_wrong_sub == sub]
    msg = np.empty(len(rows), object)
    exp = np.empty(len(rows), object)
    rec = np.empty(len(rows), object)
    for k, i in enumerate(rows):
        if ctx.p_drew[i]:
            ctx_text = f"player drew {cards_str(ctx.p[i, 2:3])} (third card {int(ctx.p3[i])})"
        else:
            ctx_text = f"player {int(ctx.p2[i])} stood"
        need = "draws" if ctx.b_must[i] else "stands"
        msg[k] = f"{_two(ctx, i, 'banker')}, {ctx_text}: {_action(ctx, i, 'banker')}; {rule_text}"
        exp[k] = f"banker {need}"
        rec[k] = _action(ctx, i, "banker")
    return Hits(rows=rows, message=msg, expected=exp, recorded=rec)


@rule("baccarat.b1", games=GAMES, citation=f"{SECTION}(b)(1)", severity="high",
      summary="No natural, player two-card total 0-5: the player draws")
def player_draws_0_5(ctx: BaccaratCtx) -> Hits:
    rows = ctx.p_wrong[ctx.p_must[ctx.p_wrong]]
    return _player_hits(ctx, rows, "a player 0-5 draws")


@rule("baccarat.b2", games=GAMES, citation=f"{SECTION}(b)(2)", severity="high",
      summary="No natural, player two-card total 6-7: the player stands")
def player_stands_6_7(ctx: BaccaratCtx) -> Hits:
    rows = ctx.p_wrong[~ctx.p_must[ctx.p_wrong]]
    return _player_hits(ctx, rows, "a player 6-7 stands")


@rule("baccarat.b3", games=GAMES, citation=f"{SECTION}(b)(3)", severity="high",
      summary="A natural on either hand: neither hand receives a third card")
def natural_no_draw(ctx: BaccaratCtx) -> Hits:
    mask = ctx.playable & ctx.natural & (ctx.p_drew | ctx.b_drew)
    rows = np.flatnonzero(mask)
    msg = np.empty(len(rows), object)
    rec = np.empty(len(rows), object)
    for k, i in enumerate(rows):
        nat = [f"{s} natural {int(t[i])} ({cards_str(c[i, :2])})"
               for s, t, c in (("player", ctx.p2, ctx.p), ("banker", ctx.b2, ctx.b)) if t[i] >= 8]
        drew = [_action(ctx, i, s) for s, d in (("player", ctx.p_drew), ("banker", ctx.b_drew)) if d[i]]
        msg[k] = f"{' and '.join(nat)}: no third card may be dealt, but {' and '.join(drew)}"
        rec[k] = "; ".join(drew)
    return Hits(rows=rows, message=msg, expected="neither hand draws", recorded=rec)


@rule("baccarat.b4", games=GAMES, citation=f"{SECTION}(b)(4)", severity="high",
      summary="Player drew, banker 7: the banker stands")
def banker_7_stands(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(4)", "a banker 7 stands")


@rule("baccarat.b5", games=GAMES, citation=f"{SECTION}(b)(5)", severity="high",
      summary="Player drew, banker 3: the banker draws unless the player's third card is an 8")
def banker_3(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(5)", "a banker 3 draws unless the player's third card is an 8")


@rule("baccarat.b6", games=GAMES, citation=f"{SECTION}(b)(6)", severity="high",
      summary="Player drew, banker 4: the banker draws on a player third card 2-7")
def banker_4(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(6)", "a banker 4 draws only on a player third card 2-7")


@rule("baccarat.b7", games=GAMES, citation=f"{SECTION}(b)(7)", severity="high",
      summary="Player drew, banker 5: the banker draws on a player third card 4-7")
def banker_5(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(7)", "a banker 5 draws only on a player third card 4-7")


@rule("baccarat.b8", games=GAMES, citation=f"{SECTION}(b)(8)", severity="high",
      summary="Player drew, banker 6: the banker draws on a player third card 6-7")
def banker_6(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(8)", "a banker 6 draws only on a player third card 6-7")


@rule("baccarat.b9", games=GAMES, citation=f"{SECTION}(b)(9)", severity="high",
      summary="Player stood, banker 0-5: the banker draws")
def banker_draws_after_stand(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(9)", "a banker 0-5 draws when the player stands")


@rule("baccarat.b10", games=GAMES, citation=f"{SECTION}(b)(10)", severity="high",
      summary="Player stood, banker 6-7: the banker stands (player 6 v banker 6 is a tie)")
def banker_stands_after_stand(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(10)", "a banker 6-7 stands when the player stands")


@rule("baccarat.b11", games=GAMES, citation=f"{SECTION}(b)(11)", severity="high",
      summary="Player drew, banker 0-2: the banker draws")
def banker_0_2(ctx: BaccaratCtx) -> Hits:
    return _banker_hits(ctx, "(b)(11)", "a banker 0-2 always draws")


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
      summary="When both hands take a third card, the player's is dealt first")
def third_card_order(ctx: BaccaratCtx) -> Hits:
    both = ctx.playable & ctx.p_drew & ctx.b_drew
    col = combine(ctx.table["deal_order"])
    if col.null_count == len(col) or not both.any():
        return Hits(rows=np.empty(0, np.int64), message="")
    cand = np.flatnonzero(both)  # only rounds where both hands drew can break (c)
    enc = pc.dictionary_encode(col.take(pa.array(cand)))
    bad_code = np.array([_banker_third_first(s) for s in enc.dictionary.to_pylist()] + [False])
    rows = cand[bad_code[_num(enc.indices, -1).astype(np.int64)]]
    orders = _take_str(col, rows)
    msg = np.array([f"deal order {o}: banker's third card {cards_str(ctx.b[i, 2:3])} dealt before "
                    f"the player's {cards_str(ctx.p[i, 2:3])}" for i, o in zip(rows, orders)], dtype=object)
    return Hits(rows=rows, message=msg, expected="player's third card first", recorded=orders)


@rule("baccarat.d", games=GAMES, citation=f"{SECTION}(d)", severity="high",
      summary="No hand holds more than three cards")
def at_most_three(ctx: BaccaratCtx) -> Hits:
    mask = (ctx.np_ > 3) | (ctx.nb > 3)
    rows = np.flatnonzero(mask)
    msg = np.empty(len(rows), object)
    rec = np.empty(len(rows), object)
    for k, i in enumerate(rows):
        parts = [f"{s} hand holds {int(n[i])} cards ({cards_str(c[i])})"
                 for s, n, c in (("player", ctx.np_, ctx.p), ("banker", ctx.nb, ctx.b)) if n[i] > 3]
        msg[k] = "; ".join(parts) + ": at most one additional card per hand"
        rec[k] = f"player {int(ctx.np_[i])} cards, banker {int(ctx.nb[i])} cards"
    return Hits(rows=rows, message=msg, expected="at most 3 cards per hand", recorded=rec)


# ---- outcome and paytable -------------------------------------------------------------
@rule("baccarat.outcome", games=GAMES, citation="outcome", severity="high",
      summary="The recorded outcome is the outcome of the cards as dealt")
def outcome(ctx: BaccaratCtx) -> Hits:
    mask = ctx.settled & (ctx.recorded != ctx.dealt)
    rows = np.flatnonzero(mask)
    names = np.array(OUTCOMES, dtype=object)
    rec_names = _take_str(ctx.table["outcome"], rows)
    msg = np.array([f"player {ctx.hand(i, 'player')} v banker {ctx.hand(i, 'banker')}: "
                    f"{names[ctx.dealt[i]]}, recorded {r}" for i, r in zip(rows, rec_names)], dtype=object)
    return Hits(rows=rows, message=msg, expected=names[ctx.dealt[rows]] if len(rows) else "",
                recorded=rec_names)


def _fmt(x: float) -> str:
    return f"{x:.2f}"


@rule("baccarat.paytable", games=GAMES, citation="paytable", severity="high",
      summary="Each player, banker and tie wager's net matches the paytable for the outcome as dealt; "
              "void and dead rounds return every wager")
def paytable(ctx: BaccaratCtx) -> Hits:
    col = ctx.table["wagers"]
    w = flat_values(col)
    if len(w) == 0:
        return Hits(rows=np.empty(0, np.int64), message="")
    col = combine(col)
    per_round = np.diff(col.offsets.to_numpy()) if not col.null_count else lengths(col)
    state, factor = _settlement(ctx)
    kind = _bet_kind_read(w.field("bet"), state.dtype)
    read_again = kind is not None
    if kind is None:
        kind = _bet_kind(w.field("bet"), state.dtype)
    amount = _num(w.field("amount"), 0.0).astype(np.float64, copy=False)
    net = _num(w.field("net"), 0.0).astype(np.float64, copy=False)
    slot = np.repeat(state, per_round)  # a small integer dtype: one byte per wager in most batches
    slot <<= 2
    slot |= kind
    flat_factor = factor.ravel()
    # money_differs(net, amount * factor, unit), in place on one temporary; an unchecked wager's
    # factor is NaN, and NaN compares False
    diff = flat_factor[slot]
    np.multiply(amount, diff, out=diff)
    np.subtract(net, diff, out=diff)
    np.abs(diff, out=diff)
    unit = float(ctx.config.money["rounding_unit"])
    sel = np.flatnonzero(diff >= unit - 1e-9)
    if read_again and len(sel):  # the flagged wagers' kinds read exactly (no other wager can be flagged)
        kind_sel = _bet_kind(w.field("bet").take(pa.array(sel)), slot.dtype)
        exact = amount[sel] * flat_factor[(slot[sel] & ~np.array(3, slot.dtype)) | kind_sel]
        keep = np.abs(net[sel] - exact) >= unit - 1e-9
        sel, exact = sel[keep], exact[keep]
    else:
        exact = amount[sel] * flat_factor[slot[sel]]
    if not len(sel):
        return Hits(rows=np.empty(0, np.int64), message="")
    expected = money_round(exact, unit, ctx.config.money["rounding"])
    seat = _num(w.field("seat").take(pa.array(sel)), -1).astype(np.int64)
    bets = _take_str(w.field("bet"), sel)
    rows = np.repeat(np.arange(ctx.n), per_round)[sel] if len(sel) > 1000 else \
        np.searchsorted(np.cumsum(per_round), sel, side="right")
    status = _take_str(ctx.table["status"], rows)
    msg = np.empty(len(sel), object)
    for k, (j, i) in enumerate(zip(sel, rows)):  # flagged wagers only
        if not ctx.completed[i]:
            why = f"round {status[k]}: the wager is returned"
        else:
            why = f"player {int(ctx.pf[i])} v banker {int(ctx.bf[i])} ({OUTCOMES[ctx.dealt[i]]})"
        msg[k] = (f"seat {seat[k]} {bets[k]} bet {_fmt(amount[j])}: {why}; "
                  f"net {_fmt(net[j])}, expected {_fmt(expected[k])}")
    return Hits(rows=rows, message=msg, expected=np.array([_fmt(x) for x in expected], dtype=object),
                recorded=np.array([_fmt(x) for x in net[sel]], dtype=object),
                discrepancy=net[sel] - expected, seat=seat)


def _settlement(ctx: BaccaratCtx) -> tuple[np.ndarray, np.ndarray]:
    """How each round settles: a state per round and the net per unit staked over (state, bet kind).

    States: 0 player win, 1 banker win, 2 tie, 3 banker win on a 6, 4 void or dead (every wager
    returned), 5 not settled (cards missing); plus 6 per distinct table when tables have their own
    paytable. Kinds: player, banker, tie, other. ``factor`` is NaN for a wager that is not
    checked (other bets outside void rounds, every bet of a round that cannot be settled). The
    state's dtype leaves room for ``state * 4 + kind`` (one byte unless many tables override).
    """
    overrides = any("baccarat" in body for body in ctx.config.data.get("tables", {}).values())
    if overrides:  # look each distinct table of the batch up once
        enc = pc.dictionary_encode(combine(ctx.table["table_id"]))
        uniques = np.asarray(enc.dictionary.to_pylist(), dtype=object)
        tcode = _num(enc.indices, 0)
        par = {k: ctx.config.param("baccarat", k, uniques) for k in PAY_KEYS}
    else:
        uniques, tcode = [None], None
        par = {k: np.array([float(ctx.config.get("baccarat", k))]) for k in PAY_KEYS}
    factor = np.zeros((len(uniques), 6, 4))
    factor[:, 0] = np.array([1.0, -1.0, -1.0, 0.0])
    factor[:, 1] = np.array([-1.0, 1.0, -1.0, 0.0])
    factor[:, 2] = np.array([0.0, 0.0, 1.0, 0.0])
    factor[:, :3, 0] *= np.where(np.arange(3) == 0, par["player"][:, None], 1.0)
    factor[:, :3, 2] *= np.where(np.arange(3) == 2, par["tie"][:, None], 1.0)
    banker = par["banker"] * (1 - par["banker_commission"])
    factor[:, 1, 1] = banker
    factor[:, 3] = factor[:, 1]
    factor[:, 3, 1] = banker * par["banker_six"]
    factor[:, :4, 3] = np.nan  # other bets are checked in void and dead rounds only
    factor[:, 5] = np.nan
    dtype = np.uint8 if factor.size <= 256 else np.int32
    state = ctx.dealt.astype(dtype)
    if (par["banker_six"] != 1.0).any():
        state[(state == 1) & (ctx.bf == 6)] = 3
    if not ctx.settled.all():
        state[~ctx.settled] = 5
        state[~ctx.completed] = 4
    if tcode is not None:
        state += (6 * tcode).astype(dtype)
    return state, factor.reshape(-1, 4)


# ---- integrity ----------------------------------------------------------------------------
@rule("baccarat.integrity", games=GAMES, citation="integrity", severity="high",
      summary="No joker in a baccarat round; each hand of a completed round holds at least two cards")
def integrity_round(ctx: BaccaratCtx) -> Hits:
    short = np.flatnonzero(ctx.completed & ~ctx.complete)
    joker = np.concatenate([ctx.p.rows_with(JOKER), ctx.b.rows_with(JOKER)])
    rows = np.union1d(short, joker)
    msg = np.empty(len(rows), object)
    for k, i in enumerate(rows):  # flagged rounds only
        parts = []
        if i in joker:
            sides = [s for s, c in (("player", ctx.p), ("banker", ctx.b)) if (c[i] == JOKER).any()]
            parts.append(f"joker in the {' and '.join(sides)} hand: baccarat is dealt without jokers")
        if i in short:
            parts.append(f"player {cards_str(ctx.p[i]) or 'no card'}, banker {cards_str(ctx.b[i]) or 'no card'}: "
                         "a completed round deals each hand two cards")
        msg[k] = "; ".join(parts)
    rec = np.array([f"player {cards_str(ctx.p[i])}; banker {cards_str(ctx.b[i])}" for i in rows], dtype=object)
    return Hits(rows=rows, message=msg, recorded=rec)


@rule("baccarat.integrity_shoe", games=GAMES, citation="integrity", severity="high",
      summary="No card appears in a shoe more often than the shoe's decks hold",
      scope="shoe", columns=("player_cards", "banker_cards"))
def integrity_shoe(table: pa.Table, config: Config) -> Hits:
    decks = _per_round(config, table, "decks")
    rows, msgs = shoe_excess(table, ["player_cards", "banker_cards"], decks)
    return Hits(rows=rows, message=msgs)


def _per_round(config: Config, table: pa.Table, key: str) -> np.ndarray:
    """A numeric ``[baccarat]`` setting per round, looking tables up only when some table overrides it."""
    if not any("baccarat" in body for body in config.data.get("tables", {}).values()):
        return np.full(table.num_rows, float(config.get("baccarat", key)))
    enc = pc.dictionary_encode(combine(table["table_id"]))
    uniques = np.asarray(enc.dictionary.to_pylist(), dtype=object)
    return config.param("baccarat", key, uniques)[_num(enc.indices, 0).astype(np.int64)]


# ---- (e) cut card -----------------------------------------------------------------------
@rule("baccarat.e", games=GAMES, citation=f"{SECTION}(e)", severity="medium",
      summary="After the round in which the cutting card appeared, exactly one more round is dealt",
      scope="shoe", columns=("cut_card",))
def cut_card_last_hand(table: pa.Table, config: Config) -> Hits:
    n = table.num_rows
    group = shoe_groups(table)
    cut = _num(table["cut_card"], False).astype(bool)
    pos = np.arange(n, dtype=np.int64)
    first = np.full(int(group.max(initial=-1)) + 1, np.iinfo(np.int64).max // 2, dtype=np.int64)
    np.minimum.at(first, group[cut], pos[cut])
    cut_pos = first[group]
    rows = np.flatnonzero(pos > cut_pos + 1)
    seq = _num(table["round_seq"], -1).astype(np.int64)
    msg = np.array([f"round_seq {seq[i]} dealt after the last hand: the cutting card appeared in round_seq "
                    f"{seq[cut_pos[i]]}, round_seq {seq[cut_pos[i] + 1]} was the last hand" for i in rows],
                   dtype=object)
    return Hits(rows=rows, message=msg, expected="no round after the last hand",
                recorded=np.array([f"round_seq {seq[i]}" for i in rows], dtype=object))
