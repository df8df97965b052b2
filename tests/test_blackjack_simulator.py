"""Blackjack simulator round trip: every injected fault found with its citation, nothing else."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

from auditkit.columns import flat_values, lengths
from auditkit.games.blackjack.simulate import CITATIONS, simulate
from auditkit.paytables import Config
from auditkit.schema import schema_for
from auditkit.validate import validate_tables


@pytest.fixture(scope="module")
def sample():
    return simulate(20_000, seed=7, fault_rate=0.05, dealer_faults=True)


def _pairs(frame) -> set[tuple[str, str]]:
    return set(zip(frame["round_id"], frame["citation"], strict=True))


def test_round_trip(sample) -> None:
    table, truth = sample
    cfg = Config()
    cfg.data["blackjack"]["check_dealer_play"] = True
    found = validate_tables({"blackjack": table}, cfg)
    want = _pairs(truth)
    got = _pairs(found)
    assert set(truth["citation"]) == set(CITATIONS)          # every citation injected
    assert truth["round_id"].is_unique                        # at most one fault per round
    assert want - got == set()                                # every fault found with its citation
    assert got - want == set()                                # no clean round flagged, no extra finding
    assert len(found) == len(truth)


def test_round_trip_default_config() -> None:
    """Without dealer faults the default configuration (dealer play unchecked) gives the truth exactly."""
    table, truth = simulate(5_000, seed=3, fault_rate=0.08)
    assert "house-rules" not in set(truth["citation"])
    assert _pairs(validate_tables({"blackjack": table})) == _pairs(truth)
    clean, none = simulate(3_000, seed=4)
    assert none.empty and validate_tables({"blackjack": clean}).empty


def test_simulated_play_is_realistic(sample) -> None:
    table, _ = sample
    assert table.schema.equals(schema_for("blackjack"))
    hands = flat_values(table["hands"])
    seats = hands.field("seat").to_numpy()
    assert seats.min() >= 1 and seats.max() <= 7
    per_round = lengths(table["hands"])
    assert per_round.min() >= 1 and 2 < per_round.mean() < 5
    for flag, lo, hi in (("doubled", 0.04, 0.2), ("split", 0.01, 0.12), ("surrendered", 0.005, 0.08)):
        rate = hands.field(flag).to_numpy(zero_copy_only=False).mean()
        assert lo < rate < hi, flag
    bets = set(flat_values(table["wagers"]).field("bet").to_pylist())
    assert bets == {"insurance", "even_money"}
    assert pc.all(pc.is_valid(table["table_min"])).as_py() and pc.all(pc.is_valid(table["table_max"])).as_py()
    assert set(table["utc_offset"].to_numpy()) == {-300}
    assert pc.max(table["round_seq"]).as_py() < 312 // 2          # shoes end at the cut card
    assert len(set(table["shoe_id"].to_pylist())) > 100
    events = flat_values(table["events"])
    assert "first_card" in set(events.field("type").to_pylist())
    statuses = set(table["status"].to_pylist())
    assert statuses == {"completed", "void", "dead"}
    again, _ = simulate(500, seed=7, fault_rate=0.05, dealer_faults=True)
    first, _ = simulate(500, seed=7, fault_rate=0.05, dealer_faults=True)
    assert again.equals(first)                                     # deterministic by seed
    assert not np.array_equal(simulate(500, seed=8)[0]["dealer_cards"].to_pylist(),
                              first["dealer_cards"].to_pylist())


def test_rules_read_only_their_declared_columns(sample) -> None:
    """Each round rule finds the same on a batch cut to its declared columns plus the report's metadata."""
    from auditkit.engine.checks import select_rules
    from auditkit.engine.findings import META
    from auditkit.validate import check_rounds

    table, _ = sample
    cfg = Config()
    cfg.data["blackjack"]["check_dealer_play"] = True
    for r in select_rules("blackjack", "round"):
        cut = table.select(list(dict.fromkeys([*META, *r.columns])))
        want = check_rounds(table, "blackjack", cfg, [r])
        got = check_rounds(cut, "blackjack", cfg, [r])
        assert len(want) and got.equals(want), r.rule_id
