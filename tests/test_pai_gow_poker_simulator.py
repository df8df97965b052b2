"""The pai gow poker simulator: correct play, pure labelled faults, and the round trip through the rules."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

from auditkit.columns import flat_values, padded
from auditkit.games.pai_gow_poker.deal import dice_position
from auditkit.games.pai_gow_poker.house_way import set_hands
from auditkit.games.pai_gow_poker.simulate import CITATIONS, simulate
from auditkit.schema import schema_for
from auditkit.validate import validate_tables

GAME = "pai_gow_poker"


@pytest.fixture(scope="module")
def faulty() -> tuple:
    table, truth = simulate(10_000, seed=7, fault_rate=0.15)
    return table, truth, validate_tables({GAME: table})


def test_schema_and_shape() -> None:
    table, truth = simulate(2_000, seed=3)
    assert table.schema.equals(schema_for(GAME), check_metadata=False)
    assert truth.empty and list(truth.columns) == ["round_id", "citation"]
    assert table.num_rows == 2_000 and len(set(table["round_id"].to_pylist())) == 2_000
    assert set(pc.unique(table["utc_offset"]).to_pylist()) == {-300}


def test_clean_rounds_are_correct_play() -> None:
    table, _ = simulate(5_000, seed=11, irregular_rate=0.0)
    assert validate_tables({GAME: table}).empty
    done = pc.equal(table["status"], "completed").to_numpy(zero_copy_only=False)
    assert done.all()
    # 53 distinct cards per round: seven stacks, with four left over
    dealer, _ = padded(table["dealer_cards"], 7)
    hands = flat_values(table["hands"])
    h_cards, n = padded(hands.field("cards"), 7)
    assert (n == 7).all()
    dice, _ = padded(table["dice"], 3)
    first = table["first_position"].to_numpy()
    assert (first == dice_position(dice.sum(axis=1))).all()
    assert (table["cards_remaining"].to_numpy() == 4).all()
    # the dealer is set the house way
    high, _ = padded(table["dealer_high"], 5)
    hw_high, _ = set_hands(dealer)
    assert (np.sort(high, axis=1) == np.sort(hw_high, axis=1)).all()
    # patrons sit at positions 2-7 as seats 1-6, and settlements include wins, pushes and losses
    pos = hands.field("position").to_numpy()
    assert ((pos >= 2) & (pos <= 7)).all() and (hands.field("seat").to_numpy() == pos - 1).all()
    net = hands.field("net").to_numpy()
    assert (net > 0).any() and (net == 0).any() and (net < 0).any()
    wager = hands.field("wager").to_numpy()
    wins = net > 0
    assert np.allclose(net[wins], np.round(wager[wins] * 0.95 + 1e-9, 2), atol=0.0051)


def test_irregularities_remedied_right_are_clean() -> None:
    table, truth = simulate(10_000, seed=5, irregular_rate=0.5)
    assert truth.empty
    types = set(pc.unique(flat_values(table["events"]).field("type")).to_pylist())
    assert types >= {"face_up_card", "no_roll", "roll", "card_out_of_order", "dealer_card_exposed",
                     "card_exposed_during_stacks", "stacks_dealt", "supervisor_called", "dealer_hand_reset",
                     "reshuffle"}
    assert set(pc.unique(table["status"]).to_pylist()) == {"completed", "void", "dead"}
    assert validate_tables({GAME: table}).empty


def test_round_trip(faulty: tuple) -> None:
    """Every injected fault found, no clean round flagged, no extra finding on a faulty round."""
    table, truth, found = faulty
    assert set(truth["citation"]) == set(CITATIONS.values())
    got = set(zip(found["round_id"], found["citation"], strict=False))
    want = set(zip(truth["round_id"], truth["citation"], strict=False))
    assert want - got == set(), sorted(want - got)[:5]
    assert got - want == set(), sorted(got - want)[:5]


def test_faults_carry_money_only_where_money_is_wrong(faulty: tuple) -> None:
    _, _, found = faulty
    money = found["citation"].isin(["void", "paytable"])
    assert (found.loc[money, "discrepancy"] != 0).all()
    assert (found.loc[~money, "discrepancy"] == 0).all()


def test_timestamps_over_days() -> None:
    table, _ = simulate(3 * 360 * 2 + 10, seed=1, tables=3)
    ts = table["started_at"].to_pandas().dt.tz_convert("-05:00")
    assert ts.dt.date.nunique() == 3
    assert ts.dt.hour.min() >= 10 and ts.dt.hour.max() <= 23
    assert (ts.groupby(table["table_id"].to_pandas()).apply(lambda s: s.is_monotonic_increasing)).all()
