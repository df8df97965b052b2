"""Tuned kernels of the baccarat context, each equal to a plain reading (``tests/test_baccarat_kernels.py``).

* :func:`read_hand`: a hand column's card counts and totals straight from its list
  offsets (one gather per card position, one-byte arrays, no division), where the plain
  reading pads a card matrix (``auditkit.columns.padded``) and sums its point values;
* :func:`bet_kinds`: each wager's bet kind from the bytes of the bet names (its length,
  then its bytes against ``player``, ``banker``, ``tie``), where the plain reading is
  ``pyarrow.compute.index_in``.

``docs/benchmarks.md`` gives the figures that keep them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...cards import BACCARAT_POINTS
from ...columns import combine, padded
from .paytable import BETS, OTHER

__all__ = ["Hand", "read_hand", "bet_kinds"]


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


_NAMES = [(len(b), int.from_bytes(b.encode(), "little"), (1 << 8 * len(b)) - 1) for b in BETS]
"""Each bet name's length, its bytes as a little-endian integer and the mask of that many bytes."""


def bet_kinds(bet: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each wager's bet kind (uint8): the index of its name in :data:`BETS`, :data:`OTHER` for any
    other bet, an empty name or none; as ``pc.index_in(bet, BETS)`` with nulls as OTHER.

    The first eight bytes of every name are read as one little-endian integer (one gather per
    wager) and compared, with the name's length, to each bet's name.
    """
    bet = combine(bet)
    if bet.type != pa.string():
        kind = pc.fill_null(pc.index_in(bet, value_set=pa.array(BETS)), OTHER)
        return kind.to_numpy(zero_copy_only=False).astype(np.uint8)
    bufs = bet.buffers()
    off = np.frombuffer(bufs[1], np.int32, len(bet) + 1, bet.offset * 4) if len(bet) else np.zeros(1, np.int32)
    data = np.zeros(int(off[-1]) + 8, np.uint8)  # the names' bytes, padded to read eight bytes at any start
    if bufs[2] is not None:
        data[:int(off[-1])] = np.frombuffer(bufs[2], np.uint8, int(off[-1]))
    words = np.ndarray((int(off[-1]) + 1,), "<u8", data, 0, (1,))  # words[i]: the eight bytes from byte i
    first = words[off[:-1]]
    length = np.diff(off)
    if bet.null_count:
        length[~bet.is_valid().to_numpy(zero_copy_only=False)] = -1
    kind = np.full(len(bet), OTHER, np.uint8)
    for code, (size, name, mask) in enumerate(_NAMES):
        kind[(length == size) & ((first & np.uint64(mask)) == np.uint64(name))] = code
    return kind
