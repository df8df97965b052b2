"""Baccarat kernels against their plain readings, on random and edge inputs (hypothesis)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.cards import BACCARAT_POINTS, JOKER
from auditkit.columns import padded
from auditkit.games.baccarat.kernels import main_bet_kinds, read_hand, wager_payouts
from auditkit.games.baccarat.paytable import BETS, OTHER, PAY_KEYS, net_per_unit


def plain_hand(col: pa.Array) -> dict[str, np.ndarray]:
    """A hand column read plainly: a padded card matrix and its point values."""
    cards, count = padded(col)
    points = BACCARAT_POINTS[cards].astype(np.int64)  # padding (NO_CARD) counts 0
    return {"count": count, "two": points[:, :2].sum(axis=1) % 10,
            "third": np.where(count >= 3, points[:, 2] if points.shape[1] > 2 else 0, 0),
            "final": points.sum(axis=1) % 10}


def plain_bet_kinds(bet: pa.Array) -> np.ndarray:
    """Each bet's kind plainly: its index among the bet names, OTHER for anything else."""
    return pc.fill_null(pc.index_in(bet, value_set=pa.array(BETS)), OTHER).to_numpy(zero_copy_only=False)


CARD = st.sampled_from([*range(52), JOKER])
HANDS = st.lists(st.none() | st.lists(CARD, max_size=6), max_size=40)


def _hand_column(hands: list, cut: tuple[int, int] | None) -> pa.Array:
    arr = pa.array(hands, pa.list_(pa.int8()))
    if cut is not None:
        start = min(cut[0], len(arr))
        arr = arr.slice(start, cut[1])
    return arr


@settings(max_examples=300, deadline=None)
@given(HANDS, st.none() | st.tuples(st.integers(0, 40), st.integers(0, 40)))
def test_read_hand_is_the_plain_reading(hands, cut):
    col = _hand_column(hands, cut)
    got, want = read_hand(col), plain_hand(col)
    for name, value in want.items():
        assert (getattr(got, name).astype(np.int64) == value).all(), name
    for i, cards in enumerate(col.to_pylist()):
        assert list(got.cards(i)) == (cards or [])
    jokers = [i for i, cards in enumerate(col.to_pylist()) for x in (cards or []) if x == JOKER]
    assert list(got.rows_with(JOKER)) == jokers


def test_read_hand_edges():
    """Empty batch, every hand empty, chunked columns, four cards and more."""
    for hands in ([], [[]], [[], []], [[0, 1, 2, 3, 4, 5]], [[51] * 3, [], None, [JOKER, 7]]):
        col = pa.array(hands, pa.list_(pa.int8()))
        got, want = read_hand(col), plain_hand(col)
        assert all((getattr(got, k).astype(np.int64) == v).all() for k, v in want.items())
    chunked = pa.chunked_array([pa.array([[1, 2]], pa.list_(pa.int8())), pa.array([[3, 4, 5]], pa.list_(pa.int8()))])
    assert list(read_hand(chunked).final) == [(BACCARAT_POINTS[[1, 2]].sum()) % 10, BACCARAT_POINTS[[3, 4, 5]].sum() % 10]


NAMES = st.sampled_from(["player", "banker", "tie", "Player", "pxxxxx", "bunker", "tix", "ti", "tie ", "p", "",
                         "player_pair", "banker_pair", "players", "tiebanker", "dragon", "é"])


def _same_reading(bets: pa.Array) -> None:
    """Every player, banker and tie bet reads as its kind; a wager read as OTHER is another bet."""
    quick, plain = main_bet_kinds(bets), plain_bet_kinds(bets)
    assert quick.dtype == np.uint8 and len(quick) == len(bets)
    assert (quick[plain != OTHER] == plain[plain != OTHER]).all()
    assert (plain[quick == OTHER] == OTHER).all()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | NAMES | st.text(max_size=9), max_size=40),
       st.none() | st.tuples(st.integers(0, 40), st.integers(0, 40)))
def test_main_bet_kinds_is_the_plain_reading(names, cut):
    bets = pa.array(names, pa.string())
    if cut is not None:
        bets = bets.slice(min(cut[0], len(bets)), cut[1])
    _same_reading(bets)
    _same_reading(bets.cast(pa.large_string()))  # another layout: read by name


def test_main_bet_kinds_edges():
    """Empty names at the very end of the text buffer, no text at all, a buffer built by hand."""
    names = ["player", "banker", "tie", None, "pxxxxx", "tix", "Player", "", "banker", "tie", ""]
    text = "".join(x or "" for x in names).encode()
    offsets = np.cumsum([0] + [len(x or "") for x in names]).astype(np.int32)
    valid = pa.array([x is not None for x in names]).buffers()[1]
    bets = pa.Array.from_buffers(pa.string(), len(names), [valid, pa.py_buffer(offsets.tobytes()),
                                                            pa.py_buffer(text)], null_count=1)
    for arr in (bets, bets.slice(2), bets.slice(1, 7), bets.slice(9), bets.slice(11), pa.array(["", ""]),
                pa.array([None, None], pa.string()), pa.array([], pa.string())):
        _same_reading(arr)
    assert list(main_bet_kinds(bets)[:3]) == [0, 1, 2]


PAY = st.fixed_dictionaries({k: st.sampled_from([0.0, 0.05, 0.5, 1.0, 8.0, 9.0]) for k in PAY_KEYS})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9), st.booleans(),
                          st.lists(st.integers(0, OTHER), max_size=5)), max_size=30),
       st.lists(PAY, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_wager_payouts_is_the_plain_reading(rounds, paytables, rnd):
    """The settlement code of each round and the payout table give each wager ``net_per_unit`` of its bet
    under its round's paytable (NaN where the round is not settled), as the context builds them."""
    from auditkit.games.baccarat.rules import Baccarat

    outcome = np.array([r[0] for r in rounds], np.int8)
    banker_final = np.array([r[1] for r in rounds], np.int8)
    settled = np.array([r[2] for r in rounds], bool)
    per_round = np.array([len(r[3]) for r in rounds], np.int64)
    kind = np.array([k for r in rounds for k in r[3]], np.uint8)
    table = np.array([rnd.randrange(len(paytables)) for _ in rounds], np.intp)

    facts = SimpleNamespace(dealt=outcome, settled=settled, banker_final=banker_final,  # what the settlement reads
                            paytables=(table, {k: np.array([p[k] for p in paytables]) for k in PAY_KEYS}))
    state, payout = Baccarat.settlement.func(facts)
    got = wager_payouts(state, per_round, kind, payout)
    at = np.repeat(np.arange(len(rounds)), per_round)
    pay = {k: np.array([paytables[t][k] for t in table[at]]) for k in PAY_KEYS}
    want = np.where(settled[at], net_per_unit(kind, outcome[at], banker_final[at], pay), np.nan)
    assert np.array_equal(got, want, equal_nan=True)


def test_banker_draws_is_the_tableau_read_plainly():
    """The one-lookup banker_draws against the regulation's tables read case by case, on every input."""
    from auditkit.games.baccarat.tableau import (
        BANKER_DRAWS_WHEN_PLAYER_DREW,
        BANKER_DRAWS_WHEN_PLAYER_STOOD,
        NATURALS,
        banker_draws,
    )

    p, b, drew, third = (a.ravel() for a in np.meshgrid(np.arange(10), np.arange(10), [False, True], np.arange(10),
                                                        indexing="ij"))
    got = banker_draws(p.astype(np.uint8), b.astype(np.uint8), drew, third.astype(np.uint8))
    want = [not (pt in NATURALS or bt in NATURALS) and
            (th in BANKER_DRAWS_WHEN_PLAYER_DREW.get(bt, ()) if d else bt in BANKER_DRAWS_WHEN_PLAYER_STOOD)
            for pt, bt, d, th in zip(p, b, drew, third, strict=True)]
    assert got.tolist() == want


WAGER_LISTS = st.lists(st.none() | st.lists(st.tuples(st.integers(0, 6), st.sampled_from([*BETS, "lucky 6"])),
                                            max_size=5), max_size=30)


@settings(max_examples=200, deadline=None)
@given(WAGER_LISTS, st.data())
def test_context_wager_indexing_is_the_plain_reading(rounds, data):
    """Context.wagers_of and round_of (read from the offsets) against wager_round read plainly."""
    from auditkit.paytables import Config
    from auditkit.rules.context import Context

    wagers = pa.array([None if r is None else [{"seat": s, "bet": b, "amount": 10.0, "net": 0.0} for s, b in r]
                       for r in rounds],
                      pa.list_(pa.struct([("seat", pa.int32()), ("bet", pa.string()), ("amount", pa.float64()),
                                          ("net", pa.float64())])))
    cut = data.draw(st.integers(0, len(rounds)))  # a batch sliced from a longer table, as streamed batches are
    ctx = Context(pa.table({"wagers": wagers}).slice(cut), Config())
    rounds = rounds[cut:]
    plain_round = np.array([i for i, r in enumerate(rounds) for _ in (r or [])], dtype=np.int64)
    assert ctx.wager_round.tolist() == plain_round.tolist()
    assert ctx.round_of(np.arange(len(plain_round))).tolist() == plain_round.tolist()
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(rounds), max_size=len(rounds))), dtype=bool)
    assert ctx.wagers_of(np.flatnonzero(mask)).tolist() == np.flatnonzero(mask[plain_round]).tolist()
    assert ctx.wager_seat.tolist() == [s for r in rounds for s, _ in (r or [])]
