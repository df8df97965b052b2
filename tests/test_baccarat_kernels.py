"""Baccarat kernels against their plain readings, on random and edge inputs (hypothesis)."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.cards import JOKER
from auditkit.columns import padded
from auditkit.games.baccarat import kernels
from auditkit.games.baccarat.kernels import ROUNDS_PER_STEP, mispaid_wagers, read_hand
from auditkit.games.baccarat.paytable import BETS, OTHER, PAY_KEYS, net_per_unit
from auditkit.games.baccarat.tableau import BACCARAT_POINTS
from auditkit.money import money_differs


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


@contextmanager
def rounds_per_step(step: int):
    """The kernel's rounds per step set to ``step`` for a while (to cross step boundaries in small batches)."""
    saved, kernels.ROUNDS_PER_STEP = kernels.ROUNDS_PER_STEP, step
    try:
        yield
    finally:
        kernels.ROUNDS_PER_STEP = saved


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
PAY = st.fixed_dictionaries({k: st.sampled_from([0.0, 0.05, 0.5, 1.0, 8.0, 9.0]) for k in PAY_KEYS})
NET = st.tuples(st.sampled_from([1.0, -1.0, 0.0, 0.95, 8.0, 0.475, 0.5, 9.0]),  # times the amount
                st.sampled_from([0.0, 0.0, 0.004, 0.005, 0.0099, 0.01, -0.01, 0.02, -0.5]))  # plus this
WAGER = st.tuples(st.none() | NAMES | st.text(max_size=9), st.sampled_from([0.0, 0.01, 5.0, 10.0, 12.5, 100.33, 1e6]),
                  NET)
ROUND = st.tuples(st.integers(0, 2), st.integers(0, 9), st.booleans(), st.lists(WAGER, max_size=5))


def plain_mispaid(bets: pa.Array, amount: np.ndarray, net: np.ndarray, per_round: np.ndarray, outcome: np.ndarray,
                  banker_final: np.ndarray, settled: np.ndarray, pay: list[dict], unit: float):
    """The paytable check read plainly, wager by wager: the kind by name, the net per unit of
    ``net_per_unit`` under the round's paytable (NaN in a round not settled), ``money_differs``."""
    kind = plain_bet_kinds(bets)
    at = np.repeat(np.arange(len(per_round)), per_round)
    pay_at = {k: np.array([pay[r][k] for r in at], dtype=np.float64) for k in PAY_KEYS}
    per_unit = np.where(settled[at], net_per_unit(kind, outcome[at], banker_final[at], pay_at), np.nan)
    expected = amount * per_unit
    wrong = np.flatnonzero(money_differs(net, expected, unit))
    return wrong, expected[wrong]


def _kernel(bets: pa.Array, amount: np.ndarray, net: np.ndarray, per_round: np.ndarray, outcome: np.ndarray,
            banker_final: np.ndarray, settled: np.ndarray, paytables: list[dict], table: np.ndarray, unit: float):
    """mispaid_wagers on the settlement codes and payout table the context builds from these facts."""
    from auditkit.games.baccarat.context import Baccarat

    facts = SimpleNamespace(dealt=outcome, settled=settled, banker_final=banker_final,  # what the settlement reads
                            paytables=(table, {k: np.array([p[k] for p in paytables]) for k in PAY_KEYS}))
    state, payout = Baccarat.settlement.func(facts)
    offsets = np.concatenate([[0], np.cumsum(per_round)]).astype(np.int64)
    return mispaid_wagers(bets, amount, net, offsets, state, payout, unit)


def _same(got, want) -> None:
    assert got[0].tolist() == want[0].tolist()
    assert np.array_equal(got[1], want[1])  # the exact expected nets, to the bit


@settings(max_examples=300, deadline=None)
@given(st.lists(ROUND, max_size=30), st.lists(PAY, min_size=1, max_size=3), st.sampled_from([0.01, 0.05, 1.0]),
       st.sampled_from([1, 2, 7, ROUNDS_PER_STEP]), st.integers(0, 3), st.randoms(use_true_random=False))
def test_mispaid_wagers_is_the_plain_reading(rounds, paytables, unit, step, cut, rnd):
    """Random rounds, bets (main bets, bets that read alike, any text, none), amounts and nets near the
    paytable's, one to three paytables, any number of rounds per step; the bets also as a slice of a
    longer array and in another string layout."""
    outcome = np.array([r[0] for r in rounds], np.int8)
    banker_final = np.array([r[1] for r in rounds], np.int8)
    settled = np.array([r[2] for r in rounds], bool)
    per_round = np.array([len(r[3]) for r in rounds], np.int64)
    wagers = [w for r in rounds for w in r[3]]
    amount = np.array([w[1] for w in wagers], np.float64)
    net = np.array([w[1] * w[2][0] + w[2][1] for w in wagers], np.float64)
    table = np.array([rnd.randrange(len(paytables)) for _ in rounds], np.intp)
    pay = [paytables[t] for t in table]
    names = [w[0] for w in wagers]
    for bets in (pa.array(names, pa.string()), pa.array(["x"] * cut + names, pa.string()).slice(cut),
                 pa.array(names, pa.large_string())):
        want = plain_mispaid(bets, amount, net, per_round, outcome, banker_final, settled, pay, unit)
        with rounds_per_step(step):
            got = _kernel(bets, amount, net, per_round, outcome, banker_final, settled, paytables, table, unit)
        _same(got, want)


def test_mispaid_wagers_edges():
    """No round, rounds without wagers, empty and null names at the very end of the text buffer, no text
    at all, a buffer built by hand; every main bet paid wrongly, so each must be found."""
    pay = {"player": 1.0, "banker": 1.0, "banker_commission": 0.05, "banker_six": 1.0, "tie": 8.0}
    names = ["player", "banker", "tie", None, "pxxxxx", "tix", "Player", "", "banker", "tie", "", None]
    text = "".join(x or "" for x in names).encode()
    offsets = np.cumsum([0] + [len(x or "") for x in names]).astype(np.int32)
    valid = pa.array([x is not None for x in names]).buffers()[1]
    built = pa.Array.from_buffers(pa.string(), len(names), [valid, pa.py_buffer(offsets.tobytes()),
                                                             pa.py_buffer(text)], null_count=2)
    for step in (1, 3, ROUNDS_PER_STEP):
        for bets in (built, built.slice(2), built.slice(1, 7), built.slice(9), built.slice(12), pa.array(["", ""]),
                     pa.array([None, None], pa.string()), pa.array([], pa.string())):
            n = len(bets)
            for per_round in ([n], [0, n, 0], [1] * n + [0], [n // 2, 0, n - n // 2]):
                per_round = np.array(per_round, np.int64)
                rounds = len(per_round)
                amount, net = np.full(n, 10.0), np.full(n, 1234.5)
                facts = (np.arange(rounds, dtype=np.int8) % 3, np.full(rounds, 6, np.int8), np.ones(rounds, bool))
                want = plain_mispaid(bets, amount, net, per_round, *facts, [pay] * rounds, 0.01)
                with rounds_per_step(step):
                    got = _kernel(bets, amount, net, per_round, *facts, [pay], np.zeros(rounds, np.intp), 0.01)
                _same(got, want)
                assert len(got[0]) == int((plain_bet_kinds(bets) != OTHER).sum())


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
