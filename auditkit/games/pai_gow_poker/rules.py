"""Pai gow poker irregularities, 68 IAC 10-9-17, plus ``void``, ``paytable`` and ``integrity``.

Every check is vectorized over the batch: the ordered ``events`` are flattened
with their round and their position in it, and per-round facts (first or last
position of an event type, sums of counts) come from boundary masks over the
flattened, round-ordered events, never from a loop per round. The hand
evaluator and the house way (:mod:`auditkit.poker`) are used lazily, only by
``(f)`` and ``paytable``.

Remedies as the catalog reads them: ``(a)``, ``(c)(2)``, ``(c)(3)``, ``(e)``,
``(g)``, ``(h)`` require status ``void`` and a ``reshuffle`` event after the
irregularity; ``(c)(1)`` requires ``dead`` or ``void``; ``(i)`` requires a
supervisor call and, when it found a misdeal, ``void``; ``(d)`` forbids voiding
a round for an unexposed out-of-order card alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ... import money
from ...cards import NO_CARD, cards_str
from ...columns import combine, flat_values, lengths, padded, to_numpy
from ...paytables import Config
from ...rules.registry import Hits, preparer, rule

__all__ = ["EVENT_TYPES", "dice_position", "prepare", "PaiGowCtx"]

GAME = "pai_gow_poker"
EVENT_TYPES = ("face_up_card", "no_roll", "roll", "card_out_of_order", "dealer_card_exposed",
               "card_exposed_during_stacks", "stacks_dealt", "supervisor_called", "dealer_hand_reset",
               "reshuffle")
(FACE_UP, NO_ROLL, ROLL, OUT_OF_ORDER, DEALER_EXPOSED, STACK_EXPOSED, STACKS, SUPERVISOR, RESET,
 RESHUFFLE) = range(len(EVENT_TYPES))
NONE = np.iinfo(np.int64).max  # "no such event" for first positions (compares after any event)
_EVENT_VALUES = pa.array(EVENT_TYPES)


def dice_position(dice_total: np.ndarray) -> np.ndarray:
    """Position (1 = dealer) that receives the first stack for a dice total: ((total - 1) mod 7) + 1."""
    return (np.asarray(dice_total, dtype=np.int64) - 1) % 7 + 1


def _numpy(arr: pa.Array | pa.ChunkedArray, fill: object, dtype: Any) -> np.ndarray:
    """``to_numpy(arr, fill).astype(dtype)`` without filling when nothing is null, and without a copy
    when the type matches (then a read-only view of the Arrow buffer)."""
    arr = combine(arr)
    if arr.null_count:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _setting(arr: pa.Array | pa.ChunkedArray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """A list column of cards as a padded matrix, and the list lengths (see :func:`auditkit.columns.padded`).

    Lists are usually absent or of exactly ``width`` cards (settings, seven-card hands): those rows
    are filled as ``width``-byte items, others by an element mask; a list longer than ``width``
    falls back to the general helper (which cuts it).
    """
    n = lengths(arr)
    if n.max(initial=0) > width:
        return padded(arr, width)
    values = flat_values(arr).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
    out = np.full((len(n), width), NO_CARD, dtype=np.int8)
    full = n == width
    if len(values) == full.sum() * width:  # every list empty or full
        out.view(f"V{width}").ravel()[full] = np.ascontiguousarray(values).view(f"V{width}")
    else:
        out[np.arange(width) < n[:, None]] = values
    return out, n


_BITS = np.zeros(256, dtype=np.uint64)
_BITS[:53] = np.left_shift(np.uint64(1), np.arange(53, dtype=np.uint64))


def _card_bits(codes: np.ndarray) -> np.ndarray:
    """Each int8 card code (0..52) as one bit of a uint64; NO_CARD and invalid codes as 0."""
    return _BITS[np.asarray(codes, dtype=np.int8).view(np.uint8)]


def _row_bits(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a bit matrix, the sum and the OR of its bits (a loop over card positions, not rows)."""
    total = bits[:, 0].copy()
    union = bits[:, 0].copy()
    for k in range(1, bits.shape[1]):
        total += bits[:, k]
        union |= bits[:, k]
    return total, union


_CHUNK = 1 << 16  # cards per block of :func:`_union_count` (its uint64 bits stay in cache)


def _union_count(codes: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per segment ``codes[bounds[i]:bounds[i + 1]]`` of int8 card codes: the OR of their bits
    (:func:`_card_bits`; 0 for an empty segment) and how many codes are valid cards (0..52).

    The bits are made and reduced a block of whole segments at a time (a loop over blocks of
    about ``_CHUNK`` cards, never over segments).
    """
    u = codes.view(np.uint8)
    union = np.zeros(len(bounds) - 1, dtype=np.uint64)
    count = np.diff(bounds) if u.max(initial=0) <= 52 else np.diff(np.r_[0, np.cumsum(u <= 52)][bounds])
    some = np.flatnonzero(bounds[1:] > bounds[:-1])
    starts, ends = bounds[some], bounds[some + 1]
    buf = np.empty(_CHUNK, dtype=np.uint64)
    i = 0
    while i < len(some):
        a = starts[i]
        j = max(int(np.searchsorted(ends, a + _CHUNK, side="right")), i + 1)
        b = ends[j - 1]
        bits = buf[:b - a] if b - a <= _CHUNK else np.empty(b - a, dtype=np.uint64)
        np.take(_BITS, u[a:b], out=bits)
        union[some[i:j]] = np.bitwise_or.reduceat(bits, starts[i:j] - a)
        i = j
    return union, count


def _bounds(lens: np.ndarray, dtype: Any = np.int64) -> np.ndarray:
    """``[0, cumsum(lens)]``: where each list of a flattened column starts, then the end."""
    out = np.zeros(len(lens) + 1, dtype=dtype)
    np.cumsum(lens, out=out[1:])
    return out


def _sorted_cards(m: np.ndarray) -> np.ndarray:
    """Rows of a padded card matrix sorted descending (padding last): a card set comparable row to row."""
    return -np.sort(-m.astype(np.int16), axis=1)


@dataclass
class PaiGowCtx:
    """Derived arrays of one batch of pai gow rounds (events, hands, dealer)."""

    table: pa.Table
    config: Config
    n: int
    events_flat: pa.Array  # the child rows of ``events`` and ``hands``
    hands_flat: pa.Array
    # events, flattened in round order
    ev_type: np.ndarray
    ev_round: np.ndarray
    ev_pos: np.ndarray
    ev_count: np.ndarray
    ev_exposed: np.ndarray
    ev_misdeal: np.ndarray
    ev_dice_total: np.ndarray
    # hands, flattened in round order
    hand_round: np.ndarray
    hand_seat: np.ndarray
    hand_len: np.ndarray
    hand_wager: np.ndarray
    hand_net: np.ndarray
    dealer_cards: np.ndarray
    dealer_len: np.ndarray
    dice_total: np.ndarray
    first_position: np.ndarray
    cards_remaining: np.ndarray  # -1 when not recorded

    # ---- event helpers ----------------------------------------------------------
    def first(self, mask: np.ndarray) -> np.ndarray:
        """Per round, the position of the first event where ``mask`` holds (NONE if none)."""
        out = np.full(self.n, NONE, dtype=np.int64)
        r, p = self.ev_round[mask], self.ev_pos[mask]
        if len(r):
            keep = np.empty(len(r), dtype=bool)
            keep[0] = True
            keep[1:] = r[1:] != r[:-1]
            out[r[keep]] = p[keep]
        return out

    def last(self, mask: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
        """Per round, the position (or ``values``) of the last event where ``mask`` holds (-1 if none)."""
        out = np.full(self.n, -1, dtype=np.int64)
        r = self.ev_round[mask]
        v = (self.ev_pos if values is None else values)[mask]
        if len(r):
            keep = np.empty(len(r), dtype=bool)
            keep[-1] = True
            keep[:-1] = r[1:] != r[:-1]
            out[r[keep]] = v[keep]
        return out

    def any_event(self, mask: np.ndarray) -> np.ndarray:
        """Per round, whether some event satisfies ``mask``."""
        return np.bincount(self.ev_round[mask], minlength=self.n) > 0

    def is_type(self, kind: int) -> np.ndarray:
        return self.ev_type == kind

    # ---- lazily read columns --------------------------------------------------------
    @cached_property
    def status(self) -> np.ndarray:
        """Each round's status as strings (for messages), read through a dictionary of the few values."""
        status = combine(self.table["status"])
        if status.null_count:
            status = pc.fill_null(status, "completed")
        enc = status.dictionary_encode()
        return np.array(enc.dictionary.to_pylist(), dtype=object)[enc.indices.to_numpy(zero_copy_only=False)]

    @cached_property
    def hand_cards(self) -> np.ndarray:
        """Each hand's cards as a padded int8 matrix, at least seven wide."""
        cards = self.hands_flat.field("cards")
        return _setting(cards, max(7, int(self.hand_len.max(initial=0))))[0]

    @cached_property
    def hand_codes(self) -> np.ndarray:
        """Every patron card code (int8), hand after hand in round order."""
        return flat_values(self.hands_flat.field("cards")).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)

    @cached_property
    def card_union(self) -> tuple[np.ndarray, np.ndarray]:
        """Per round, the OR of the bits of every card dealt (dealer and patrons, see :func:`_card_bits`)
        and how many of those cards have a valid code."""
        codes = self.hand_codes
        h_or, h_count = _union_count(codes, _bounds(self.hand_len, np.int32)[_bounds(lengths(self.table["hands"]))])
        dealer = flat_values(self.table["dealer_cards"]).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
        d_or, d_count = _union_count(dealer, _bounds(self.dealer_len))
        return h_or | d_or, h_count + d_count

    # ---- per-round facts ----------------------------------------------------------
    def _status_is(self, value: str) -> np.ndarray:
        return to_numpy(pc.equal(self.table["status"], value), False).astype(bool)

    @cached_property
    def is_void(self) -> np.ndarray:
        return self._status_is("void")

    @cached_property
    def is_dead(self) -> np.ndarray:
        return self._status_is("dead")

    @cached_property
    def is_completed(self) -> np.ndarray:
        return self._status_is("completed")

    @cached_property
    def table_codes(self) -> tuple[np.ndarray, list[str]]:
        """Each round's index into the batch's distinct table ids, and those ids."""
        enc = combine(self.table["table_id"]).dictionary_encode()  # ids in order of first appearance
        codes = to_numpy(enc.indices, -1).astype(np.int64)
        return codes, [str(u) for u in enc.dictionary.to_pylist()]

    def param(self, key: str) -> np.ndarray:
        """A numeric ``[pai_gow_poker]`` setting per round, looked up once per distinct table."""
        codes, tables = self.table_codes
        vals = np.array([float(self.config.get(GAME, key, t)) for t in tables], dtype=np.float64)
        return vals[codes] if len(codes) else np.empty(0)

    def param_of(self, key: str, rows: np.ndarray) -> np.ndarray | float:
        """:meth:`param` of the rounds ``rows``: one float when every table of the batch has the same value."""
        codes, tables = self.table_codes
        vals = np.array([float(self.config.get(GAME, key, t)) for t in tables], dtype=np.float64)
        return float(vals[0]) if len(vals) and (vals == vals[0]).all() else vals[codes][rows]

    @cached_property
    def last_reshuffle(self) -> np.ndarray:
        return self.last(self.is_type(RESHUFFLE))

    def reshuffled_after(self, pos: np.ndarray) -> np.ndarray:
        """A reshuffle is recorded after event position ``pos`` (-1: anywhere in the round)."""
        return self.last_reshuffle > pos

    @cached_property
    def face_up_total(self) -> np.ndarray:
        sel = self.is_type(FACE_UP)
        return np.bincount(self.ev_round[sel], weights=self.ev_count[sel], minlength=self.n).astype(np.int64)

    @cached_property
    def face_up_many(self) -> np.ndarray:
        """More than one card found face up: counts summing over 1, or several face_up_card events."""
        events = np.bincount(self.ev_round[self.is_type(FACE_UP)], minlength=self.n)
        return (self.face_up_total > 1) | (events > 1)

    @cached_property
    def dice_used(self) -> np.ndarray:
        """Total of the dice used: the last ``roll`` event's, else the round's ``dice``."""
        last_roll = self.last(self.is_type(ROLL), self.ev_dice_total)
        return np.where(last_roll >= 0, last_roll, self.dice_total)

    @cached_property
    def wrong_position(self) -> np.ndarray:
        return self.first_position != dice_position(self.dice_used)

    @cached_property
    def bad_stacks(self) -> np.ndarray:
        """Position of the first ``stacks_dealt`` event with a count other than 7 (NONE if none)."""
        return self.first(self.is_type(STACKS) & (self.ev_count != 7))

    @cached_property
    def stacks_count(self) -> np.ndarray:
        return self.last(self.is_type(STACKS) & (self.ev_count != 7), self.ev_count)

    @cached_property
    def bad_hand_count(self) -> np.ndarray:
        """Per round, a hand or the dealer holds other than seven cards."""
        bad = self.hand_len != 7
        return (np.bincount(self.hand_round[bad], minlength=self.n) > 0) | (self.dealer_len != 7)

    @cached_property
    def remaining_wrong(self) -> np.ndarray:
        return (self.cards_remaining >= 0) & (self.cards_remaining != 4)

    @cached_property
    def supervisor(self) -> np.ndarray:
        return self.any_event(self.is_type(SUPERVISOR))

    @cached_property
    def misdeal(self) -> np.ndarray:
        return self.any_event(self.is_type(SUPERVISOR) & self.ev_misdeal)

    @cached_property
    def void_triggers(self) -> dict[str, np.ndarray]:
        """Per citation, the first event position of an irregularity that calls for a void round.

        NONE where the round has no such irregularity; -1 where it has one that no
        event marks (wrong card counts, a misdeal found by the supervisor).
        """
        ex = self.ev_exposed
        return {
            "a": np.where(self.face_up_many, self.first(self.is_type(FACE_UP)), NONE),
            "c2": self.first(self.is_type(OUT_OF_ORDER) & ex),
            "c3": self.first(self.is_type(DEALER_EXPOSED)),
            "e": np.where(self.bad_hand_count, -1, NONE),
            "g": self.first(self.is_type(STACK_EXPOSED)),
            "h": self.bad_stacks,
        }

    @cached_property
    def justified_void(self) -> np.ndarray:
        """The round has an irregularity (other than an unexposed out-of-order card) that voids it."""
        any_trigger = np.zeros(self.n, dtype=bool)
        for pos in self.void_triggers.values():
            any_trigger |= pos != NONE
        unresolved_count = self.remaining_wrong & ~(self.supervisor & ~self.misdeal)
        return any_trigger | self.wrong_position | unresolved_count

    # ---- evaluator-backed facts (lazy) ----------------------------------------------
    @cached_property
    def dealer_final(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dealer's final setting: the last ``dealer_hand_reset`` event's, else ``dealer.high/low``.

        Returns ``(high[n,5], low[n,2], ok[n])``; ``ok`` where a 5 + 2 setting is recorded.
        """
        t = self.table
        high, nh = _setting(t["dealer_high"], 5)
        low, nl = _setting(t["dealer_low"], 2)
        idx = self.last(self.is_type(RESET), np.arange(len(self.ev_type), dtype=np.int64))
        has = np.flatnonzero(idx >= 0)
        if len(has):  # the settings of the rounds' last reset events only
            at = pa.array(idx[has])
            high[has], nh[has] = _setting(self.events_flat.field("high").take(at), 5)
            low[has], nl[has] = _setting(self.events_flat.field("low").take(at), 2)
        return high, low, (nh == 5) & (nl == 2)

    @cached_property
    def dealer_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Scores (five-card, two-card) of the dealer's final setting in completed rounds; -1 elsewhere."""
        high, low, ok = self.dealer_final
        hi, lo = _scores(high, low)
        off = ~(ok & self.is_completed)
        hi[off] = -1
        lo[off] = -1
        return hi.astype(np.int64), lo.astype(np.int64)

    @cached_property
    def hand_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """int32 scores (five-card, two-card) of each hand's recorded setting (-1 where incomplete)."""
        high, low, _ = self.hand_settings
        return _scores(high, low)

    @cached_property
    def house_way(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The house way setting of the dealer's seven cards, for completed rounds with seven cards.

        Returns ``(high[n,5], low[n,2], checked[n])``. Tables may use different
        house ways (configuration ``[pai_gow_poker] house_way``, per table).
        """
        from .house_way import set_hands

        high = np.full((self.n, 5), NO_CARD, dtype=np.int8)
        low = np.full((self.n, 2), NO_CARD, dtype=np.int8)
        checked = self.is_completed & (self.dealer_len == 7)
        rows = np.flatnonzero(checked)
        if len(rows):
            codes, tables = self.table_codes
            ways = _house_ways(self.config, codes[rows], tables)
            if len(ways) == 1:  # one house way: set every row (no gathers), keep the checked ones
                high, low = set_hands(self.dealer_cards[:, :7], ways[0][0])
                high[~checked] = NO_CARD
                low[~checked] = NO_CARD
            for way, sel in ways if len(ways) > 1 else []:
                r = rows[sel]
                high[r], low[r] = set_hands(self.dealer_cards[r, :7], way)
        return high, low, checked

    @cached_property
    def hand_settings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each hand's recorded ``high[m,5]``, ``low[m,2]``, and whether both are complete."""
        h = self.hands_flat
        high, nh = _setting(h.field("high"), 5)
        low, nl = _setting(h.field("low"), 2)
        return high, low, (nh == 5) & (nl == 2)


def _scores(high: np.ndarray, low: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int32 :func:`~auditkit.games.pai_gow_poker.hands.rank5` and ``rank2`` scores of padded settings ``[m, 5]`` and ``[m, 2]``."""
    from .hands import rank2_columns, rank5_columns

    lo = np.ascontiguousarray(low.T)
    return rank5_columns(list(np.ascontiguousarray(high.T))), rank2_columns(lo[0], lo[1])


def _house_ways(config: Config, codes: np.ndarray, tables: list[str]) -> list[tuple[Any, np.ndarray]]:
    """The house way of each distinct table setting, with the mask of rows (table ``codes``) that use it."""
    from .house_way import load_house_way

    specs = [_house_way_spec(config, t) for t in tables]  # one lookup per distinct table
    keys, spec_of_key = pd.factorize(pd.Series([repr(s) for s in specs], dtype=object), sort=False)
    row_key = keys[codes]
    return [(load_house_way(specs[int(np.flatnonzero(keys == k)[0])]), row_key == k)
            for k in range(len(spec_of_key))]


def _house_way_spec(config: Config, table_id: str) -> Any:
    """The configured house way of a table: a built-in name, or a table of ``house_ways``."""
    section = config.section(GAME, table_id)
    spec = section.get("house_way", "default")
    named = section.get("house_ways", {})
    if isinstance(spec, str) and spec in named:
        return named[spec]
    return spec


def _dice_totals(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per row of a ``list<int8>`` dice column, the sum of its first three dice (a negative die as 0)."""
    n = lengths(arr)
    if n.max(initial=0) > 3:
        dice, _ = padded(arr, 3)
        return np.where(dice >= 0, dice, 0).sum(axis=1).astype(np.int64)
    values = flat_values(arr).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
    three = n == 3
    if len(values) == 3 * int(three.sum()):  # every list empty or of three dice
        v = np.maximum(values.reshape(-1, 3), 0).astype(np.int64)
        totals = np.zeros(len(n), dtype=np.int64)
        totals[three] = v[:, 0] + v[:, 1] + v[:, 2]
        return totals
    running = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.maximum(values, 0), out=running[1:])
    return np.diff(running[_bounds(n)])


@preparer(GAME)
def prepare(table: pa.Table, config: Config) -> PaiGowCtx:
    """Flatten events and hands of a batch of pai gow rounds into numpy arrays."""
    n = table.num_rows
    events = table["events"]
    ev = flat_values(events)
    ev_lens = lengths(events)
    ev_round = np.repeat(np.arange(n, dtype=np.int64), ev_lens)
    starts = _bounds(ev_lens)[:-1]
    m = len(ev)
    if m:
        ev_type = to_numpy(pc.index_in(ev.field("type"), value_set=_EVENT_VALUES), -1).astype(np.int8)
        ev_count = _numpy(ev.field("count"), 1, np.int64)
        ev_exposed = _numpy(ev.field("exposed"), False, bool)
        ev_misdeal = _numpy(ev.field("misdeal"), False, bool)
        ev_dice_total = _dice_totals(ev.field("dice"))
    else:
        ev_type = np.empty(0, np.int8)
        ev_count = ev_dice_total = np.empty(0, np.int64)
        ev_exposed = ev_misdeal = np.empty(0, bool)
    hands = table["hands"]
    h = flat_values(hands)
    cards = h.field("cards")
    dealer_len = lengths(table["dealer_cards"])
    dealer_cards, _ = _setting(table["dealer_cards"], max(7, int(dealer_len.max(initial=0))))
    return PaiGowCtx(
        table=table, config=config, n=n, events_flat=ev, hands_flat=h,
        ev_type=ev_type, ev_round=ev_round, ev_pos=np.arange(m, dtype=np.int64) - starts[ev_round],
        ev_count=ev_count, ev_exposed=ev_exposed, ev_misdeal=ev_misdeal, ev_dice_total=ev_dice_total,
        hand_round=np.repeat(np.arange(n, dtype=np.int32), lengths(hands)),
        hand_seat=_numpy(h.field("seat"), -1, np.int32),
        hand_len=lengths(cards),
        hand_wager=_numpy(h.field("wager"), 0.0, np.float64),
        hand_net=_numpy(h.field("net"), 0.0, np.float64),
        dealer_cards=dealer_cards, dealer_len=dealer_len,
        dice_total=_dice_totals(table["dice"]),
        first_position=_numpy(table["first_position"], 0, np.int64),
        cards_remaining=_numpy(table["cards_remaining"], -1, np.int64),
    )


# ---- void-and-reshuffle irregularities ---------------------------------------------------
def _void_reshuffle(ctx: PaiGowCtx, key: str, what: Callable[[np.ndarray], list[str]] | str) -> Hits:
    """Rounds with the irregularity ``key`` that are not void, or void without a later reshuffle.

    ``what`` describes the irregularity: a string, or a function of the flagged rows.
    """
    pos = ctx.void_triggers[key]
    has = pos != NONE
    not_void = has & ~ctx.is_void
    no_shuffle = has & ctx.is_void & ~ctx.reshuffled_after(pos)
    bad = not_void | no_shuffle
    rows = np.flatnonzero(bad)
    what_rows = [what] * len(rows) if isinstance(what, str) else what(rows)
    status = ctx.status[rows]
    msgs = np.array([
        f"({_label(key)}): {w}, " + (f"round {s}" if s != "void" else "round void but no reshuffle")
        for w, s in zip(what_rows, status)], dtype=object)
    expected = "round void, reshuffle recorded"
    recorded = np.array([f"status {s}" + ("" if s != "void" else ", no reshuffle after it") for s in status],
                        dtype=object)
    return Hits(rows=rows, message=msgs, expected=expected, recorded=recorded)


def _label(key: str) -> str:
    return {"c2": "c)(2", "c3": "c)(3"}.get(key, key)


@rule("paigow.a", games=(GAME,), citation="68 IAC 10-9-17(a)", severity="high",
      summary="More than one card found face up in the deck: all hands void and the cards reshuffled")
def face_up_cards(ctx: PaiGowCtx) -> Hits:
    return _void_reshuffle(ctx, "a", lambda rows: [f"{k} face-up cards found" for k in ctx.face_up_total[rows]])


@rule("paigow.b", games=(GAME,), citation="68 IAC 10-9-17(b)", severity="medium",
      summary="After a 'no roll' the dice are reshaken before the cards are dealt")
def no_roll(ctx: PaiGowCtx) -> Hits:
    deal = ctx.first(ctx.is_type(STACKS))
    last_no_roll = ctx.last(ctx.is_type(NO_ROLL))
    roll_before_deal = ctx.last(ctx.is_type(ROLL) & (ctx.ev_pos < deal[ctx.ev_round]))
    bad = (last_no_roll >= 0) & ((last_no_roll > deal) | (roll_before_deal < last_no_roll))
    return Hits.where(bad, "(b): no new roll before the deal after a no_roll",
                      expected="a roll after the no_roll, before the stacks are dealt",
                      recorded="no roll between the no_roll and the deal")


@rule("paigow.c1", games=(GAME,), citation="68 IAC 10-9-17(c)(1)", severity="high",
      summary="First stack delivered to the wrong position for the dice: all hands dead")
def wrong_position(ctx: PaiGowCtx) -> Hits:
    bad = ctx.wrong_position & ~(ctx.is_dead | ctx.is_void)
    rows = np.flatnonzero(bad)
    t = ctx.table
    dice = t["dice"].take(pa.array(rows)).to_pylist() if len(rows) else []
    used = ctx.dice_used[rows]
    msgs = np.array([
        f"(c)(1): first_position {ctx.first_position[r]}, dice total {u} gives {dice_position(u)}"
        + (f" (recorded dice {d})" if d is not None and sum(d) != u else "") + f"; round {ctx.status[r]}"
        for r, u, d in zip(rows, used, dice)], dtype=object)
    return Hits(rows=rows, message=msgs, expected="hands dead (status dead or void)",
                recorded=np.array([f"status {s}" for s in ctx.status[rows]], dtype=object))


@rule("paigow.c2", games=(GAME,), citation="68 IAC 10-9-17(c)(2)", severity="high",
      summary="A card drawn out of order and exposed: all hands void, cards reshuffled")
def out_of_order_exposed(ctx: PaiGowCtx) -> Hits:
    return _void_reshuffle(ctx, "c2", "card drawn out of order and exposed")


@rule("paigow.c3", games=(GAME,), citation="68 IAC 10-9-17(c)(3)", severity="high",
      summary="A card dealt to the dealer's hand exposed: all hands void, cards reshuffled")
def dealer_card_exposed(ctx: PaiGowCtx) -> Hits:
    return _void_reshuffle(ctx, "c3", "dealer card exposed")


@rule("paigow.d", games=(GAME,), citation="68 IAC 10-9-17(d)", severity="high",
      summary="A card drawn out of order unexposed is used as the next card: the round continues")
def out_of_order_unexposed(ctx: PaiGowCtx) -> Hits:
    unexposed = ctx.any_event(ctx.is_type(OUT_OF_ORDER) & ~ctx.ev_exposed)
    bad = unexposed & (ctx.is_void | ctx.is_dead) & ~ctx.justified_void
    rows = np.flatnonzero(bad)
    msgs = np.array([f"(d): unexposed out-of-order card, round {s}" for s in ctx.status[rows]], dtype=object)
    return Hits(rows=rows, message=msgs, expected="round continues (completed)",
                recorded=np.array([f"status {s}" for s in ctx.status[rows]], dtype=object))


@rule("paigow.e", games=(GAME,), citation="68 IAC 10-9-17(e)", severity="high",
      summary="A player or the dealer dealt other than seven cards: all hands void, cards reshuffled")
def wrong_card_count(ctx: PaiGowCtx) -> Hits:
    return _void_reshuffle(ctx, "e", lambda rows: _card_counts(ctx, rows))


def _card_counts(ctx: PaiGowCtx, rows: np.ndarray) -> list[str]:
    """``hands of 8 and 6 cards`` for each flagged round (a loop over those only)."""
    at = _bounds(np.bincount(ctx.hand_round, minlength=ctx.n))  # each round's first hand, then the end
    out = []
    for r in rows:
        parts = [str(c) for c in ctx.hand_len[at[r]:at[r + 1]] if c != 7]
        if ctx.dealer_len[r] != 7:
            parts.append(f"dealer {ctx.dealer_len[r]}")
        out.append(f"hands of {' and '.join(parts)} cards")
    return out


@rule("paigow.f", games=(GAME,), citation="68 IAC 10-9-17(f)", severity="high",
      summary="The dealer's hand is set (or reset) in the house way")
# Compared by value: the final setting must split the dealer's seven cards and score as
# the house way's setting does in both hands (suits of equal ranks may be swapped).
def dealer_house_way(ctx: PaiGowCtx) -> Hits:
    hw_high, hw_low, checked = ctx.house_way
    high, low, ok = ctx.dealer_final
    # every row is compared (no gathers), the checked ones judged: the final setting splits the
    # dealer's own seven cards ...
    own = _same_seven(np.concatenate([high, low], axis=1), ctx.dealer_cards[:, :7])
    # ... and is worth what the house way is worth (a suit swapped between equal ranks is the same setting)
    d_hi, d_lo = ctx.dealer_scores
    hw_hi, hw_lo = _scores(hw_high, hw_low)
    same = (d_hi == hw_hi) & (d_lo == hw_lo)
    rows = np.flatnonzero(checked & ~(ok & own & same))
    reset = ctx.any_event(ctx.is_type(RESET))
    msgs, exp, rec = (np.empty(len(rows), dtype=object) for _ in range(3))
    for i, r in enumerate(rows):
        set_ = f"{_show(high[r])} / {_show(low[r])}" if ok[r] else "no complete setting"
        way = f"{_show(hw_high[r])} / {_show(hw_low[r])}"
        msgs[i] = f"(f): dealer {'reset to' if reset[r] else 'set'} {set_}, house way {way}"
        exp[i], rec[i] = way, set_
    return Hits(rows=rows, message=msgs, expected=exp, recorded=rec)


def _same_seven(split: np.ndarray, dealt: np.ndarray) -> np.ndarray:
    """Per row of two int8 ``[m, 7]`` card matrices: the split holds seven distinct cards that are
    the dealt ones (codes outside 0..52 count as no card).

    Rows of valid codes compare the codes sorted by a network over columns; the others (rare)
    compare the sum and OR of the cards' bits.
    """
    from .hands import sort_columns_desc
    from .house_way import _NET7

    a = sort_columns_desc(list(np.ascontiguousarray(split.T)), _NET7)
    b = sort_columns_desc(list(np.ascontiguousarray(dealt.T)), _NET7)
    out = (a[6] >= 0) & (a[0] <= 52) & (b[6] >= 0) & (b[0] <= 52)  # valid codes, then as said
    weird = np.flatnonzero(~out)
    for k in range(7):
        out &= a[k] == b[k]
    for k in range(6):
        out &= a[k] != a[k + 1]
    if len(weird):
        s_sum, s_or = _row_bits(_card_bits(split[weird]))
        _, d_or = _row_bits(_card_bits(dealt[weird]))
        out[weird] = (s_or == d_or) & (s_sum == s_or)
    return out


def _show(cards: np.ndarray) -> str:
    return cards_str(_sorted_cards(cards[None, :])[0])


@rule("paigow.g", games=(GAME,), citation="68 IAC 10-9-17(g)", severity="high",
      summary="A card exposed while dealing the seven stacks: wagers void, cards reshuffled")
def stack_card_exposed(ctx: PaiGowCtx) -> Hits:
    return _void_reshuffle(ctx, "g", "card exposed while dealing the stacks")


@rule("paigow.h", games=(GAME,), citation="68 IAC 10-9-17(h)", severity="high",
      summary="Other than seven stacks dealt: wagers void, cards reshuffled")
def wrong_stacks(ctx: PaiGowCtx) -> Hits:
    return _void_reshuffle(ctx, "h", lambda rows: [f"{k} stacks dealt" for k in ctx.stacks_count[rows]])


@rule("paigow.i", games=(GAME,), citation="68 IAC 10-9-17(i)", severity="medium",
      summary="Other than four cards remaining: the supervisor is called; a misdeal voids the round")
def cards_remaining(ctx: PaiGowCtx) -> Hits:
    no_call = ctx.remaining_wrong & ~ctx.supervisor
    misdeal_kept = ctx.remaining_wrong & ctx.misdeal & ~ctx.is_void
    rows = np.flatnonzero(no_call | misdeal_kept)
    msgs = np.array([
        f"(i): {ctx.cards_remaining[r]} cards remaining, "
        + ("no supervisor call" if no_call[r] else f"supervisor found a misdeal, round {ctx.status[r]}")
        for r in rows], dtype=object)
    exp = np.where(no_call[rows], "supervisor called", "round void (misdeal)").astype(object)
    rec = np.where(no_call[rows], "no supervisor_called event", "status " + ctx.status[rows].astype(object))
    return Hits(rows=rows, message=msgs, expected=exp, recorded=rec.astype(object))


# ---- money ---------------------------------------------------------------------------------
@rule("paigow.void", games=(GAME,), citation="void", severity="high",
      summary="In a void or dead round every wager is returned (net 0)")
def void_nets(ctx: PaiGowCtx) -> Hits:
    unit = float(ctx.config.money["rounding_unit"])
    off_round = ctx.is_void | ctx.is_dead
    h = np.flatnonzero(off_round[ctx.hand_round])  # hands, then other wagers, of void or dead rounds
    h = h[money.money_differs(ctx.hand_net[h], np.zeros(len(h)), unit)]
    w_round = np.repeat(np.arange(ctx.n, dtype=np.int64), lengths(ctx.table["wagers"]))
    w = np.flatnonzero(off_round[w_round])
    w_seat, w_net = np.empty(0, np.int64), np.empty(0)
    if len(w):
        wagers = flat_values(ctx.table["wagers"])
        w_seat, w_net = _numpy(wagers.field("seat"), -1, np.int64)[w], _numpy(wagers.field("net"), 0.0, np.float64)[w]
        keep = money.money_differs(w_net, np.zeros(len(w)), unit)
        w, w_seat, w_net = w[keep], w_seat[keep], w_net[keep]
    seats = np.concatenate([ctx.hand_seat[h], w_seat])
    nets = np.concatenate([ctx.hand_net[h], w_net])
    rounds = np.concatenate([ctx.hand_round[h], w_round[w]])
    idx = np.arange(len(rounds))
    order = np.argsort(rounds[idx], kind="stable")
    idx = idx[order]
    msgs = np.array([f"void: {ctx.status[rounds[i]]} round pays seat {seats[i]} net {_amount(nets[i])}"
                     for i in idx], dtype=object)
    return Hits(rows=rounds[idx], message=msgs, expected="0",
                recorded=np.array([_amount(nets[i]) for i in idx], dtype=object),
                discrepancy=nets[idx], seat=seats[idx])


def _amount(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x == x else "?"


@rule("paigow.paytable", games=(GAME,), citation="paytable", severity="high",
      summary="Completed round: each hand's net matches its comparison with the dealer (1:1 less commission)")
def paytable(ctx: PaiGowCtx) -> Hits:
    from .hands import fouled_columns

    # computed over every hand; only hands of completed rounds with both settings complete are judged
    _, _, d_ok = ctx.dealer_final
    _, _, h_ok = ctx.hand_settings
    r = ctx.hand_round
    use = (ctx.is_completed & d_ok)[r] & h_ok
    if not use.any():
        return Hits(rows=np.empty(0, np.int64), message="")
    d_hi, d_lo = ctx.dealer_scores
    d_foul = fouled_columns(d_hi, d_lo)
    p_hi, p_lo = ctx.hand_scores
    p_foul = fouled_columns(p_hi, p_lo)
    # hands won: both (2), one (1: push) or none; all when the dealer fouls, none when the hand fouls
    wins = (p_hi > d_hi.astype(np.int32)[r]).view(np.int8) + (p_lo > d_lo.astype(np.int32)[r]).view(np.int8)
    wins[d_foul[r]] = 2  # copies (equal) go to the dealer
    wins[p_foul] = 0
    pay, commission = ctx.param_of("win", r), ctx.param_of("commission", r)
    wager = ctx.hand_wager
    won = wager * pay * (1.0 - commission)
    if np.isfinite(won).all() and np.isfinite(wager).all():
        # the payout by arithmetic (exact, up to the sign of a zero, which the comparison ignores)
        exact = won * (wins == 2) - wager * (wins == 0)
    else:
        exact = _exact(wins, won, wager)
    unit = float(ctx.config.money["rounding_unit"])
    net = ctx.hand_net
    b = np.flatnonzero(use & money.money_differs(net, exact, unit))
    expected = money.money_round(_exact(wins[b], won[b], wager[b]), unit, ctx.config.money["rounding"])
    outcome = np.array(["loss", "push", "win"], dtype=object)
    msgs = np.array([
        f"paytable: seat {ctx.hand_seat[i]} {outcome[wins[i]]}{' (fouled)' if p_foul[i] else ''} on "
        f"{_amount(wager[i])} pays {_amount(e)}, recorded {_amount(net[i])}" for i, e in zip(b, expected)],
        dtype=object)
    return Hits(rows=r[b], message=msgs,
                expected=np.array([_amount(x) for x in expected], dtype=object),
                recorded=np.array([_amount(x) for x in net[b]], dtype=object),
                discrepancy=net[b] - expected, seat=ctx.hand_seat[b])


def _exact(wins: np.ndarray, won: np.ndarray, wager: np.ndarray) -> np.ndarray:
    """The exact net of hands that won both (``won``), one (0) or none (``-wager``) of their hands."""
    return np.where(wins == 2, won, np.where(wins == 0, -wager, 0.0))


# ---- integrity -------------------------------------------------------------------------------
@rule("paigow.integrity", games=(GAME,), citation="integrity", severity="high",
      summary="A card repeated in the round (one 53-card deck), or more than one joker")
def integrity(ctx: PaiGowCtx) -> Hits:
    # a round's cards as bits of a uint64: a card repeats when their OR has fewer bits than there are cards
    union, count = ctx.card_union
    rows = np.flatnonzero(np.bitwise_count(union) != count)
    return Hits(rows=rows, message=_integrity_messages(ctx, rows))


def _integrity_messages(ctx: PaiGowCtx, rows: np.ndarray) -> np.ndarray:
    """``integrity: 7h dealt to dealer and seat 3`` for each flagged round (a loop over those only)."""
    msgs = np.empty(len(rows), dtype=object)
    for i, rec in enumerate(ctx.table.select(["dealer_cards", "hands"]).take(pa.array(rows)).to_pylist()):
        holders: dict[int, list[str]] = {}  # flagged rounds only: where each repeated card went
        for c in rec["dealer_cards"] or []:
            holders.setdefault(c, []).append("dealer")
        for h in rec["hands"] or []:
            for c in h["cards"] or []:
                holders.setdefault(c, []).append(f"seat {h['seat']}")
        parts = [f"{cards_str([c])} dealt to {' and '.join(h)}" for c, h in holders.items() if len(h) > 1]
        msgs[i] = "integrity: " + "; ".join(parts)
    return msgs
