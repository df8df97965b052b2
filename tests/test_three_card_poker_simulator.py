"""The three card poker simulator: honest play, and every labelled fault found with nothing else."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from auditkit.columns import flat_values, padded
from auditkit.games.three_card_poker.hands import evaluate
from auditkit.games.three_card_poker.paytable import dealer_qualifies
from auditkit.games.three_card_poker.simulate import CITATIONS, PLAY_THRESHOLD, simulate
from auditkit.schema import schema_for
from auditkit.validate import validate_tables


def _pairs(frame: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(frame["round_id"], frame["citation"], strict=True))


def test_clean_rounds_are_honest() -> None:
    table, truth = simulate(20_000, seed=3)
    assert table.schema.equals(schema_for("three_card_poker")) and truth.empty
    assert validate_tables({"three_card_poker": table}).empty
    dealer, _ = padded(table["dealer_cards"], 3)
    hands = flat_values(table["hands"])
    cards, _ = padded(hands.field("cards"), 3)
    _, d_score = evaluate(dealer)
    _, score = evaluate(cards)
    assert 0.67 < dealer_qualifies(d_score).mean() < 0.72  # 15,380 / 22,100 = 0.696
    played = pc.equal(hands.field("decision"), "play").to_numpy(zero_copy_only=False)
    assert np.array_equal(played, score >= PLAY_THRESHOLD)
    seats = pc.list_value_length(table["hands"]).to_numpy()
    assert seats.min() >= 1 and seats.max() <= 6
    assert len(set(table["round_id"].to_pylist())) == table.num_rows
    assert set(pc.unique(table["utc_offset"]).to_pylist()) == {-300}


def test_round_trip_every_fault_found_and_nothing_else() -> None:
    table, truth = simulate(12_000, seed=7, fault_rate=0.25)
    assert set(truth["citation"]) == set(CITATIONS.values())  # every citation injected
    assert truth["round_id"].is_unique
    findings = validate_tables({"three_card_poker": table})
    assert _pairs(findings) == _pairs(truth)  # all found; no clean round flagged; no extra finding
    money = findings[findings["citation"].str.contains(r"\(c\)|\(d\)\(")]  # (b) sums may cancel out
    assert (money["discrepancy"] != 0).all()
