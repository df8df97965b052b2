"""Three card poker kernels (``auditkit.games.three_card_poker.kernels``) against their plain forms."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.cards import JOKER, NO_CARD
from auditkit.games.three_card_poker.context import ThreeCardPoker
from auditkit.games.three_card_poker.kernels import distinct_cards_short
from auditkit.games.three_card_poker.simulate import simulate
from auditkit.paytables import Config
from auditkit.rules.void import void_round_nets

CODES = st.sampled_from([NO_CARD, JOKER, 53, 0, 1, 2, 51, *range(3, 51, 7)])
"""Card codes with padding, the joker, an out-of-range code and few distinct real cards (so repeats are common)."""


def plain_distinct_cards_short(dealer: np.ndarray, cards: np.ndarray, hand_round: np.ndarray) -> np.ndarray:
    """Per round, readably: count the distinct real cards (0..51) of the dealer's and every hand's three."""
    out = np.zeros(len(dealer), dtype=bool)
    for r in range(len(dealer)):
        hands = cards[hand_round == r]
        every = [int(c) for c in dealer[r]] + [int(c) for h in hands for c in h]
        out[r] = len({c for c in every if 0 <= c < 52}) < 3 * (len(hands) + 1)
    return out


@st.composite
def rounds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 12))
    per_round = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    hand_round = np.repeat(np.arange(n), per_round)
    three = st.lists(CODES, min_size=3, max_size=3)
    dealer = np.array(draw(st.lists(three, min_size=n, max_size=n)), dtype=np.int8).reshape(n, 3)
    cards = np.array(draw(st.lists(three, min_size=len(hand_round), max_size=len(hand_round))),
                     dtype=np.int8).reshape(-1, 3)
    return dealer, cards, hand_round


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_distinct_cards_short_matches_plain_form(batch: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    dealer, cards, hand_round = batch
    assert (distinct_cards_short(dealer, cards, hand_round) == plain_distinct_cards_short(dealer, cards, hand_round)).all()


def test_distinct_cards_short_on_dealt_rounds() -> None:
    """Rounds dealt from one deck are never short; a card copied from another hand or the dealer always is."""
    rng = np.random.default_rng(5)
    n = 3_000
    per_round = rng.integers(0, 7, n)
    hand_round = np.repeat(np.arange(n), per_round)
    deck = np.argsort(rng.random((n, 52)), axis=1).astype(np.int8)
    position = np.arange(len(hand_round)) - (np.cumsum(per_round) - per_round)[hand_round]
    cards = deck[hand_round[:, None], 3 + 3 * position[:, None] + np.arange(3)]
    dealer = deck[:, :3].copy()
    assert not distinct_cards_short(dealer, cards, hand_round).any()
    copied = rng.random(len(hand_round)) < 0.1
    cards[copied, rng.integers(0, 3, copied.sum())] = dealer[hand_round[copied], 0]
    cards[rng.random(len(hand_round)) < 0.02, 1] = JOKER
    got = distinct_cards_short(dealer, cards, hand_round)
    assert got.any() and (got == plain_distinct_cards_short(dealer, cards, hand_round)).all()
    # edge cases: no hands at all, a round without hands between others, an empty batch
    assert not distinct_cards_short(dealer, cards[:0], hand_round[:0]).any()
    assert distinct_cards_short(dealer[:0], cards[:0], hand_round[:0]).shape == (0,)


def test_void_check_on_void_round_nets_equals_every_wager() -> None:
    """The void check on the nets of the void and dead rounds alone (``nets_of`` builds them from
    those rounds) finds what it finds on the nets of every wager of the batch."""
    table, _ = simulate(20_000, seed=4, fault_rate=0.3, void_rate=0.05)
    ctx = ThreeCardPoker(table, Config())
    every = ThreeCardPoker(table, Config())
    assert len(every.nets.net) == 3 * len(ctx.hand_round) + int(ctx.has_pair_plus.sum())  # every wager, built
    fast, plain = void_round_nets(ctx), void_round_nets(every)
    assert "nets" not in vars(ctx)  # the fast path never built every wager's net
    assert len(fast) > 100
    for name in ("rows", "discrepancy", "seat", "expected_amount", "recorded_amount"):
        assert np.array_equal(getattr(fast, name), getattr(plain, name)), name
    for name in ("seat", "bet", "net", "status"):
        assert np.array_equal(fast.evidence[name], plain.evidence[name]), name
