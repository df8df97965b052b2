"""Tuned kernels of the baccarat context, each equal to a plain reading (``tests/test_baccarat_kernels.py``).

* :func:`read_hand`: a hand column's card counts and totals straight from its list
  offsets (one gather per card position, one-byte arrays, no division), where the plain
  reading pads a card matrix (``auditkit.columns.padded``) and sums its point values;
* :func:`mispaid_wagers`: the paytable's pass over every wager in one kernel (each bet's
  kind from the length and first byte of its name, its payout per unit from a small code of
  its round's settlement, the expected net and the money comparison), a few thousand rounds
  at a time, where the plain reading reads each name with ``pyarrow.compute.index_in``
  (:func:`bet_kinds`) and builds each per-wager array for the whole batch.

``docs/benchmarks.md`` gives the figures that keep them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...columns import combine, padded
from .paytable import BANKER, BETS, OTHER, PLAYER, TIE
from .tableau import BACCARAT_POINTS

__all__ = ["Hand", "read_hand", "bet_kinds", "mispaid_wagers", "ROUNDS_PER_STEP"]


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
ROUNDS_PER_STEP = 16_384
"""Rounds per step of :func:`mispaid_wagers`: a step's temporaries (about four wagers a round, eight
bytes each) stay in the cache and are reused by the allocator instead of faulting fresh pages in."""


def bet_kinds(bet: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each wager's bet kind by its whole name: its index in :data:`BETS`, :data:`OTHER` for any other
    bet or none (the plain reading, ``pyarrow.compute.index_in``)."""
    return pc.fill_null(pc.index_in(bet, value_set=pa.array(BETS)), OTHER).to_numpy(
        zero_copy_only=False).astype(np.uint8)


def mispaid_wagers(bet: pa.Array | pa.ChunkedArray, amount: np.ndarray, net: np.ndarray,
                   wager_offsets: np.ndarray, state: np.ndarray, payout: np.ndarray,
                   unit: float) -> tuple[np.ndarray, np.ndarray]:
    """The wagers whose recorded net is a rounding unit or more from their expected net, and those
    expected nets (exact, not rounded).

    A wager's expected net is its ``amount`` times ``payout[state[r], kind]``: ``r`` its round (round
    ``r``'s wagers are ``wager_offsets[r]`` to ``wager_offsets[r + 1]``), ``kind`` its bet's index in
    :data:`BETS` (:data:`OTHER` for another bet). A NaN payout (another bet, a round not settled) never
    differs. The plain reading, which ``tests/test_baccarat_kernels.py`` holds this equal to::

        kind = bet_kinds(bet)
        expected = amount * payout[np.repeat(state, np.diff(wager_offsets)), kind]
        wrong = np.flatnonzero(money_differs(net, expected, unit))
        return wrong, expected[wrong]

    One pass, :data:`ROUNDS_PER_STEP` rounds at a time, without a per-wager array of the whole batch:
    the kind is read from the length and first byte of the name (exact for every player, banker and
    tie bet; another bet that reads as one of them, ``pxxxxx``, is read again by name if flagged), and
    the expected net, its difference and the comparison reuse one temporary.
    """
    if payout.ndim != 2 or payout.shape[1] != OTHER + 1:
        raise ValueError(f"payout: one row per settlement code, one column per bet kind (got {payout.shape})")
    n = len(state)
    flat = np.ascontiguousarray(payout, np.float64).reshape(-1)
    per_round = np.diff(wager_offsets)
    quick = _name_bytes(combine(bet))
    exact = bet_kinds(bet) if quick is None else None  # not a plain string array: read by name
    tolerance = unit - 1e-9  # as money_differs
    found = []
    for r0 in range(0, n, ROUNDS_PER_STEP):
        r1 = min(r0 + ROUNDS_PER_STEP, n)
        w0, w1 = int(wager_offsets[r0]), int(wager_offsets[r1])
        if w0 == w1:
            continue
        slot = np.repeat(state[r0:r1], per_round[r0:r1]).astype(np.intp)
        slot <<= 2  # four bet kinds (BETS and OTHER) per state
        slot |= exact[w0:w1] if quick is None else _read_kinds(*quick, w0, w1)
        diff = flat.take(slot)  # payout per unit staked
        diff *= amount[w0:w1]  # the expected net
        np.subtract(net[w0:w1], diff, out=diff)
        np.abs(diff, out=diff)
        hit = np.flatnonzero(diff >= tolerance)
        if len(hit):
            found.append(hit + w0)
    wrong = np.concatenate(found) if found else np.empty(0, np.intp)
    rounds = np.searchsorted(wager_offsets, wrong, side="right") - 1
    kind = bet_kinds(combine(bet).take(pa.array(wrong, pa.int64()))) if quick is not None else exact[wrong]
    expected = amount[wrong] * flat[state[rounds].astype(np.intp) * 4 + kind]
    keep = np.abs(net[wrong] - expected) >= tolerance  # False for a bet that only read as a main one
    return wrong[keep], expected[keep]


def _name_bytes(bet: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """A plain string array's offsets and text bytes (None for another layout)."""
    if bet.type != pa.string():
        return None
    bufs = bet.buffers()
    off = np.frombuffer(bufs[1], np.int32, len(bet) + 1, bet.offset * 4) if len(bet) else np.zeros(1, np.int32)
    text = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    return off, text


def _read_kinds(off: np.ndarray, text: np.ndarray, w0: int, w1: int) -> np.ndarray:
    """The bet kinds (uint8) of names ``w0`` to ``w1`` as their length and first byte read them: every
    player, banker and tie bet as its kind, and a wager read as :data:`OTHER` is another bet."""
    kind = np.full(w1 - w0, OTHER, np.uint8)
    if not len(text):
        return kind  # every name empty or null
    length = np.diff(off[w0:w1 + 1])
    at = off[w0:w1].astype(np.intp)
    if int(at[-1]) >= len(text):  # empty names at the very end of the text: any byte will do, their length is 0
        np.minimum(at, len(text) - 1, out=at)
    first = text.take(at)
    of_length = {size: length == size for size in {len(b) for b in BETS}}  # 6 (player, banker), 3 (tie)
    for k in (PLAYER, BANKER, TIE):
        kind -= ((first == _FIRST[k]) & of_length[len(BETS[k])]).view(np.uint8) * np.uint8(OTHER - k)
    return kind
