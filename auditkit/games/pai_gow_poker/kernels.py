"""Tuned kernels of the pai gow poker context, kept because the benchmark needs them.

Each computes what a plain form computes (tests/test_pai_gow_kernels.py checks them equal on
random and edge inputs, with hypothesis); ``docs/benchmarks.md`` has the figures.

* :func:`cards_matrix`: a ``list<int8>`` column as a padded matrix, as
  :func:`auditkit.columns.padded` gives it, filled as fixed-width items when the lists are
  empty or full (every setting and seven-card hand);
* :func:`card_union`: per segment of card codes, the OR of the cards' bits and how many
  codes are valid cards, a block of segments at a time (``integrity``);
* :func:`same_seven`: whether a setting splits exactly the seven cards dealt, by a sorting
  network over columns (``(f)``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...cards import NO_CARD
from ...columns import flat_values, lengths, padded
from .hands import sort_columns_desc
from .house_way import _NET7

__all__ = ["cards_matrix", "card_bits", "row_bits", "card_union", "bounds", "same_seven"]


def cards_matrix(arr: pa.Array | pa.ChunkedArray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """A list column of cards as a padded int8 matrix and the list lengths (as :func:`auditkit.columns.padded`).

    Rows of exactly ``width`` cards are copied as ``width``-byte items, others by an element mask;
    a list longer than ``width`` falls back to the general helper (which cuts it).
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


def card_bits(codes: np.ndarray) -> np.ndarray:
    """Each int8 card code (0..52) as one bit of a uint64; NO_CARD and invalid codes as 0."""
    return _BITS[np.asarray(codes, dtype=np.int8).view(np.uint8)]


def row_bits(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a bit matrix, the sum and the OR of its bits (a loop over card positions, not rows)."""
    total = bits[:, 0].copy()
    union = bits[:, 0].copy()
    for k in range(1, bits.shape[1]):
        total += bits[:, k]
        union |= bits[:, k]
    return total, union


def bounds(lens: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """``[0, cumsum(lens)]``: where each list of a flattened column starts, then the end."""
    out = np.zeros(len(lens) + 1, dtype=dtype)
    np.cumsum(lens, out=out[1:])
    return out


_CHUNK = 1 << 16  # cards per block of :func:`card_union` (its uint64 bits stay in cache)


def card_union(codes: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per segment ``codes[at[i]:at[i + 1]]`` of int8 card codes: the OR of their bits
    (:func:`card_bits`; 0 for an empty segment) and how many codes are valid cards (0..52).

    The bits are made and reduced a block of whole segments at a time (a loop over blocks of
    about ``_CHUNK`` cards, never over segments).
    """
    u = codes.view(np.uint8)
    union = np.zeros(len(at) - 1, dtype=np.uint64)
    count = np.diff(at) if u.max(initial=0) <= 52 else np.diff(np.r_[0, np.cumsum(u <= 52)][at])
    some = np.flatnonzero(at[1:] > at[:-1])
    starts, ends = at[some], at[some + 1]
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


def same_seven(split: np.ndarray, dealt: np.ndarray) -> np.ndarray:
    """Per row of two int8 ``[m, 7]`` card matrices: the split holds seven distinct cards that are
    the dealt ones (codes outside 0..52 count as no card).

    Rows of valid codes compare the codes sorted by a network over columns; the others (rare)
    compare the sum and OR of the cards' bits.
    """
    a = sort_columns_desc(list(np.ascontiguousarray(split.T)), _NET7)
    b = sort_columns_desc(list(np.ascontiguousarray(dealt.T)), _NET7)
    out = (a[6] >= 0) & (a[0] <= 52) & (b[6] >= 0) & (b[0] <= 52)  # valid codes, then as said
    weird = np.flatnonzero(~out)
    for k in range(7):
        out &= a[k] == b[k]
    for k in range(6):
        out &= a[k] != a[k + 1]
    if len(weird):
        s_sum, s_or = row_bits(card_bits(split[weird]))
        _, d_or = row_bits(card_bits(dealt[weird]))
        out[weird] = (s_or == d_or) & (s_sum == s_or)
    return out
