"""Pai gow poker fast paths of the evaluator (column scores, sorting networks) and the dice reader against
their plain forms; the context's kernels are tested in test_pai_gow_kernels.py."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from auditkit.columns import lengths, padded
from auditkit.games.pai_gow_poker import hands as F
from auditkit.games.pai_gow_poker.context import _dice_totals
from auditkit.games.pai_gow_poker.house_way import set_hands
from auditkit.games.pai_gow_poker.simulate import simulate
from auditkit.paytables import Config
from auditkit.validate import check_rounds

GAME = "pai_gow_poker"


def deals(n: int, seed: int) -> np.ndarray:
    """``n`` shuffled 53-card decks (int8 codes), one per row."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n, 53)), axis=1).astype(np.int8)


def test_sort_networks_sort_every_zero_one_input() -> None:
    from auditkit.games.pai_gow_poker.house_way import _NET7

    for width, net in ((5, F._NET5), (7, _NET7)):
        bits = (np.arange(2**width)[:, None] >> np.arange(width)) & 1  # every 0/1 row (0-1 principle)
        got = np.stack(F.sort_columns_desc(list(bits.T), net), axis=1)
        assert (got == -np.sort(-bits, axis=1)).all()


def test_column_scores_match_rank5_rank2_fouled() -> None:
    d = deals(20_000, 1)
    rng = np.random.default_rng(2)
    junk = rng.integers(-128, 128, (5_000, 7)).astype(np.int8)  # invalid codes, repeats, two jokers
    for m in (d[:, :7], junk, (d[:, :7] // 4) * 4):             # the last: many pairs and trips
        hi = F.rank5_columns(list(np.ascontiguousarray(m[:, :5].T)))
        lo = F.rank2_columns(np.ascontiguousarray(m[:, 5]), np.ascontiguousarray(m[:, 6]))
        assert hi.dtype == np.int32 and (hi == F.rank5(m[:, :5])).all()
        assert (lo == F.rank2(m[:, 5:])).all()
        assert (F.fouled_columns(hi, lo) == F.fouled_scores(F.rank5(m[:, :5]), F.rank2(m[:, 5:]))).all()
    assert (F.rank5(junk[:, :5]) == -1).any() and (F.rank5(junk[:, :5]) >= 0).any()


def test_fouled_columns_every_score_pair() -> None:
    five = np.r_[-1, np.unique(F.score_table()[F.score_table() >= 0])].astype(np.int32)
    two = np.r_[-1, np.unique(F.rank2(deals(5_000, 3)[:, :2]))].astype(np.int32)
    h, lo = np.repeat(five, len(two)), np.tile(two, len(five))
    assert (F.fouled_columns(h, lo) == F.fouled_scores(h, lo)).all()


@pytest.mark.parametrize("dtype", [np.int16, np.int64])
def test_evaluators_read_wide_ints_as_int16(dtype: type) -> None:
    """A code out of int8 range (300, -200) is invalid, never wrapped into a card."""
    m = deals(2_000, 4)[:, :7].astype(dtype)
    m[::7, 3] = 300 + 4 * 12  # wraps to a card in int8
    m[1::7, 0] = -200
    high, low = set_hands(m)
    assert (high[::7] == -1).all() and (high[1::7] == -1).all() and (high[2::7] >= 0).all()
    ok = np.ones(len(m), bool)
    ok[::7] = ok[1::7] = False
    h8, l8 = set_hands(m[ok].astype(np.int8))
    assert (high[ok] == h8).all() and (low[ok] == l8).all()
    assert (F.rank5(m[:, 1:6])[::7] == -1).all() and (F.rank2(m[:, 3:5])[::7] == -1).all()


def _lists() -> list[pa.Array | pa.ChunkedArray]:
    t = pa.list_(pa.int8())
    backed = pa.ListArray.from_arrays(pa.array([0, 3, 6, 9], pa.int32()), pa.array(range(9), pa.int8()),
                                      mask=pa.array([False, True, False]))  # a null list over values
    return [
        pa.array([[1, 2, 3], None, [], [4, 5, 6], None], t),
        pa.array([[1, 2], None, [3, -1, 2], [6, 6, 6, 6], [7, 8, 9, 10, 11, 12, 13, 14]], t),
        pa.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], None, []], t).slice(1),
        pa.chunked_array([pa.array([[1, 2, 3], None], t), pa.array([[4, 4, 4], [5, 5]], t)]),
        backed, backed.slice(1),
    ]


def test_list_readers_match_columns_helpers() -> None:
    for arr in _lists():
        assert (lengths(arr) == pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)).all()
        d, _ = padded(arr, None)
        assert (_dice_totals(arr) == np.where(d >= 0, d, 0).sum(axis=1)).all()


def _finding_keys(f) -> set:
    return set(zip(f["round_id"], f["rule_id"], f["message"], f["discrepancy"].round(6), strict=False))


def test_findings_same_on_slices_and_chunks() -> None:
    """Batches that are slices of a table, or tables of several chunks, give the same findings."""
    table, truth = simulate(3_000, seed=11, fault_rate=0.2, tables=4, occupancy=0.7)
    config = Config()
    whole = _finding_keys(check_rounds(table.combine_chunks(), GAME, config))
    assert len(whole) >= len(truth) > 0
    parts = set()
    for a in range(0, table.num_rows, 700):
        parts |= _finding_keys(check_rounds(table.slice(a, 700), GAME, config))
    assert parts == whole
    chunked = pa.Table.from_batches(table.combine_chunks().to_batches(max_chunksize=450))
    assert _finding_keys(check_rounds(chunked, GAME, config)) == whole
