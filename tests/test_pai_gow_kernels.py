"""The pai gow poker kernels (auditkit/games/pai_gow_poker/kernels.py) equal their plain forms,
on random and edge inputs (hypothesis, derandomized)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.columns import padded
from auditkit.games.pai_gow_poker import kernels as K

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)
CODE = st.integers(-128, 127)
CARD = st.one_of(st.integers(0, 52), st.sampled_from([-1, 53, 77, -128, 127]))


def _list_column(lists: list[list[int] | None], chunks: int, offset: int) -> pa.Array | pa.ChunkedArray:
    arr = pa.array([None] * offset + lists, pa.list_(pa.int8())).slice(offset)
    if chunks > 1 and len(lists) > 1:
        cut = len(lists) // 2
        return pa.chunked_array([arr.slice(0, cut), arr.slice(cut)])
    return arr


LISTS = st.lists(st.one_of(st.none(), st.lists(CODE, max_size=9)), max_size=40)


@SETTINGS
@given(LISTS, st.sampled_from([2, 5, 7]), st.integers(1, 2), st.integers(0, 2))
def test_cards_matrix_is_padded(lists: list, width: int, chunks: int, offset: int) -> None:
    arr = _list_column(lists, chunks, offset)
    got, n = K.cards_matrix(arr, width)
    want, wn = padded(arr, width)
    assert got.dtype == np.int8 and (got == want).all() and (n == wn).all()


@SETTINGS
@given(st.lists(st.sampled_from([None, 5, 7]), max_size=60), st.sampled_from([5, 7]))
def test_cards_matrix_empty_or_full(sizes: list, width: int) -> None:
    """The fixed-width path: every list null, empty or of ``width`` cards."""
    rng = np.random.default_rng(len(sizes))
    lists = [None if s is None else (rng.integers(0, 53, width).tolist() if s == width else []) for s in sizes]
    arr = pa.array(lists, pa.list_(pa.int8()))
    got, n = K.cards_matrix(arr, width)
    want, wn = padded(arr, width)
    assert (got == want).all() and (n == wn).all()


def _plain_union(codes: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per segment, the OR of 1 << code over its valid codes (0..52) and their number."""
    union = np.zeros(len(at) - 1, dtype=np.uint64)
    count = np.zeros(len(at) - 1, dtype=np.int64)
    for i in range(len(at) - 1):
        for c in codes[at[i]:at[i + 1]].tolist():
            if 0 <= c <= 52:
                union[i] |= np.uint64(1) << np.uint64(c)
                count[i] += 1
    return union, count


@SETTINGS
@given(st.lists(st.lists(CARD, max_size=60), max_size=30))
def test_card_union_is_the_plain_union(segments: list[list[int]]) -> None:
    codes = np.array([c for s in segments for c in s], dtype=np.int8)
    at = K.bounds(np.array([len(s) for s in segments], dtype=np.int64))
    union, count = K.card_union(codes, at)
    want_union, want_count = _plain_union(codes, at)
    assert (union == want_union).all() and (count == want_count).all()


def test_card_union_over_several_blocks() -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(0, 50, 6_000)
    sizes[::5] = 0
    sizes[3] = 3 * (1 << 16)  # one segment longer than a block
    codes = rng.integers(-3, 56, int(sizes.sum())).astype(np.int8)
    at = K.bounds(sizes)
    union, count = K.card_union(codes, at)
    bits = K.card_bits(codes)
    for r in [*range(20), *rng.integers(0, len(sizes), 100)]:
        seg = slice(at[r], at[r + 1])
        assert union[r] == np.bitwise_or.reduce(bits[seg], initial=np.uint64(0))
        assert count[r] == ((codes[seg] >= 0) & (codes[seg] <= 52)).sum()


def _plain_same_seven(split: np.ndarray, dealt: np.ndarray) -> np.ndarray:
    """The split's valid cards are seven distinct ones, the set of the dealt valid cards."""
    out = []
    for s, d in zip(split.tolist(), dealt.tolist(), strict=False):
        s_valid = [c for c in s if 0 <= c <= 52]
        d_valid = {c for c in d if 0 <= c <= 52}
        out.append(len(set(s_valid)) == len(s_valid) and set(s_valid) == d_valid)
    return np.array(out, dtype=bool)


@SETTINGS
@given(st.lists(st.tuples(st.permutations(range(53)), st.permutations(range(7)),
                          st.sampled_from(["same", "repeat", "missing", "invalid", "other", "dealt-repeat"]),
                          st.integers(0, 6)), min_size=1, max_size=40))
def test_same_seven_is_the_plain_check(rows: list) -> None:
    split, dealt = [], []
    for deck, order, kind, pos in rows:
        d = list(deck[:7])
        s = [d[i] for i in order]
        if kind == "repeat":
            s[pos] = s[(pos + 1) % 7]
        elif kind == "missing":
            s[pos] = -1
        elif kind == "invalid":
            d[pos] = 77
        elif kind == "other":
            s[pos] = deck[20]
        elif kind == "dealt-repeat":
            d[pos], s[pos] = d[(pos + 3) % 7], -1
        split.append(s)
        dealt.append(d)
    split_m, dealt_m = np.array(split, dtype=np.int8), np.array(dealt, dtype=np.int8)
    got = K.same_seven(split_m, dealt_m)
    assert (got == _plain_same_seven(split_m, dealt_m)).all()
    kinds = np.array([k for _, _, k, _ in rows])
    assert got[kinds == "same"].all() and not got[np.isin(kinds, ["repeat", "missing", "invalid", "other"])].any()


@SETTINGS
@given(st.lists(st.lists(CODE, min_size=7, max_size=7), min_size=1, max_size=30),
       st.lists(st.lists(CODE, min_size=7, max_size=7), min_size=1, max_size=30))
def test_same_seven_on_any_codes(split: list, dealt: list) -> None:
    m = min(len(split), len(dealt))
    s, d = np.array(split[:m], dtype=np.int8), np.array(dealt[:m], dtype=np.int8)
    assert (K.same_seven(s, d) == _plain_same_seven(s, d)).all()
    assert (K.same_seven(s, s) == _plain_same_seven(s, s)).all()
