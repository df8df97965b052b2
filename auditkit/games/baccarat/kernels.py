"""Tuned kernels of the baccarat context, each equal to a plain reading (``tests/test_baccarat_kernels.py``).

* :func:`read_hand`: a hand column's card counts and totals straight from its list
  offsets (one gather per card position, one-byte arrays, no division), where the plain
  reading pads a card matrix (``auditkit.columns.padded``) and sums its point values;
* :func:`main_bet_kinds`: each wager's bet kind from the length and first byte of its
  name, where the plain reading is ``pyarrow.compute.index_in`` (exact for every
  player, banker and tie bet; a flagged wager is read again by name);
* :func:`wager_payouts`: each wager's payout per unit from a small code of its round's
  settlement and its bet kind (one byte per wager), where the plain reading is
  :func:`auditkit.games.baccarat.paytable.net_per_unit` on every wager.

``docs/benchmarks.md`` gives the figures that keep them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import BACCARAT_POINTS
from ...columns import combine, padded
from .paytable import BANKER, BETS, OTHER, PLAYER, TIE

__all__ = ["Hand", "read_hand", "main_bet_kinds", "wager_payouts"]


@dataclass(frozen=True)
class Hand:
    """One hand of every round of a batch: its cards (flat codes and list offsets), per round the
    number of cards, the two-card total, the third card's value (0 when none) and the final total
    of every card dealt."""

    offsets: np.ndarray
    codes: np.ndarray
    count: np.ndarray
    two: np.ndarray
    third: np.ndarray
    final: np.ndarray

    def cards(self, i: int, part: slice = slice(None)) -> np.ndarray:
        """Round ``i``'s cards in dealing order (``part`` of them)."""
        return self.codes[self.offsets[i]:self.offsets[i + 1]][part]

    def rows_with(self, code: int) -> np.ndarray:
        """Rows holding card ``code`` (once per copy)."""
        at = np.flatnonzero(self.codes[:self.offsets[-1]] == code)
        return np.searchsorted(self.offsets, at, side="right") - 1


def read_hand(col: pa.Array | pa.ChunkedArray) -> Hand:
    """A ``list<int8>`` hand column read from its list offsets (a null hand holds no card)."""
    arr = combine(col)
    if arr.null_count:
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
    at = off[:-1].astype(np.intp)  # each hand's first, then second, then third card
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
    if len(longer):  # four or more cards ((d)): the final total counts every card dealt
        start = off[:-1]
        extra = np.zeros(len(longer), np.int64)
        for k in range(3, int(n[longer].max())):
            extra += np.where(n[longer] > k, pv[np.minimum(start[longer] + k, len(pv) - 1)], 0)
        final[longer] = (final[longer] + extra) % 10
    return Hand(offsets=off, codes=vals, count=n, two=two, third=third, final=final)


def _mod10(total: np.ndarray) -> None:
    """``total %= 10`` in place for totals 0-18 (a compare and a subtraction, no division)."""
    total -= (total >= 10).view(np.int8) * np.int8(10)


_FIRST = [ord(b[0]) for b in BETS]  # p, b, t: with the lengths 6, 6, 3 no two bets read alike


def main_bet_kinds(bet: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each wager's bet kind (uint8) as the length and first byte of its name read it.

    Every ``player``, ``banker`` and ``tie`` bet gets its kind (the index in :data:`BETS`), and a
    wager read as :data:`OTHER` is another bet; but another bet with the length and first letter
    of one (``pxxxxx``) reads as that one, so a wager a check flags is read again by name
    (``pc.index_in``, the plain reading). A bet column that is no plain string array is read by name.
    """
    bet = combine(bet)
    if bet.type != pa.string():
        return pc.fill_null(pc.index_in(bet, value_set=pa.array(BETS)), OTHER).to_numpy(
            zero_copy_only=False).astype(np.uint8)
    kind = np.full(len(bet), OTHER, np.uint8)
    bufs = bet.buffers()
    if not len(bet) or bufs[2] is None or not bufs[2].size:
        return kind  # no bet, or every name empty or null: none is a player, banker or tie bet
    off = np.frombuffer(bufs[1], np.int32, len(bet) + 1, bet.offset * 4)
    data = np.frombuffer(bufs[2], np.uint8)
    at = off[:-1].astype(np.intp)
    if int(at[-1]) >= len(data):  # empty names at the very end: any byte will do, their length is 0
        np.minimum(at, len(data) - 1, out=at)
    first = data[at]
    length = np.diff(off)
    six = length == 6  # player, banker
    kind -= ((first == _FIRST[PLAYER]) & six).view(np.uint8) * np.uint8(OTHER - PLAYER)
    kind -= ((first == _FIRST[BANKER]) & six).view(np.uint8) * np.uint8(OTHER - BANKER)
    kind -= ((first == _FIRST[TIE]) & (length == 3)).view(np.uint8) * np.uint8(OTHER - TIE)
    return kind


def wager_payouts(state: np.ndarray, wagers_per_round: np.ndarray, kind: np.ndarray,
                  payout: np.ndarray) -> np.ndarray:
    """``payout[state[round], kind]`` of each wager (rounds in order, ``wagers_per_round`` each).

    ``state`` is a small code per round (uint8 when ``payout`` has at most 64 rows), so the per-wager
    index is one byte: ``state`` repeated per wager, times 4, plus the bet kind.
    """
    dtype = np.uint8 if payout.size <= 256 else np.int32
    slot = np.repeat(state.astype(dtype, copy=False), wagers_per_round)
    slot <<= 2
    slot |= kind.astype(dtype, copy=False)
    return payout.reshape(-1)[slot]
