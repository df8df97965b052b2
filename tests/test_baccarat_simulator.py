"""The baccarat simulator against the rules engine: every injected fault found, nothing else."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auditkit.columns import flat_values
from auditkit.games.baccarat.simulate import CITATIONS, simulate
from auditkit.schema import schema_for
from auditkit.validate import validate_tables

EXACT = {"player": 0.446247, "banker": 0.458597, "tie": 0.095156}


@pytest.fixture(scope="module")
def faulty():
    return simulate(50_000, seed=7, fault_rate=0.04)


def test_round_trip(faulty):
    table, truth = faulty
    assert table.schema.equals(schema_for("baccarat"))
    assert truth["round_id"].is_unique                      # at most one fault per round
    counts = truth["citation"].value_counts()
    assert set(counts.index) == set(CITATIONS)              # every citation is injected ...
    assert counts.min() >= 5                                # ... several times
    found = validate_tables({"baccarat": table})
    got = set(zip(found["round_id"], found["citation"], strict=True))
    want = set(zip(truth["round_id"], truth["citation"], strict=True))
    assert want - got == set(), "injected faults not reported"
    assert got - want == set(), "findings on clean rounds, or extra findings on faulty rounds"
    assert len(found) == len(truth)                         # one finding per faulty round


def test_round_trip_mini_baccarat():
    table, truth = simulate(5_000, seed=3, fault_rate=0.05, tables=2, game="mini_baccarat")
    found = validate_tables({"mini_baccarat": table})
    assert set(zip(found["round_id"], found["citation"], strict=True)) == set(zip(truth["round_id"], truth["citation"], strict=True))
    assert set(found["game"]) == {"mini_baccarat"}


def test_clean_play():
    """Fault-free rounds: no finding, outcome frequencies near the exact 8-deck values, real shoes."""
    table, truth = simulate(200_000, seed=11, tables=6)
    assert len(truth) == 0
    assert len(validate_tables({"baccarat": table})) == 0
    outcome = pd.Series(table["outcome"].to_numpy(zero_copy_only=False)).value_counts(normalize=True)
    for k, p in EXACT.items():
        assert abs(outcome[k] - p) < 4 * np.sqrt(p * (1 - p) / table.num_rows)

    df = table.select(["table_id", "shoe_id", "round_seq", "cut_card", "started_at", "utc_offset",
                       "dealer_id"]).to_pandas()
    df = df.sort_values(["shoe_id", "round_seq"])
    per_shoe = df.groupby("shoe_id").agg(n=("round_seq", "size"), last=("round_seq", "max"),
                                         cuts=("cut_card", "sum"))
    done = per_shoe[per_shoe["cuts"] == 1]
    assert len(done) >= len(per_shoe) - 6                   # only shoes cut short at the end lack the cut card
    cut_seq = df[df["cut_card"]].set_index("shoe_id")["round_seq"]
    assert (done["last"] == cut_seq[done.index] + 1).all()  # exactly one more round after the cut card
    assert (per_shoe["n"] == per_shoe["last"]).all()
    assert 65 <= done["n"].mean() <= 90
    assert (df["utc_offset"] == -300).all()
    local = df["started_at"] + pd.Timedelta(minutes=-300)
    assert local.dt.hour.between(4, 23).all()               # 20 hours a day of dealing
    hourly = df.groupby([df["table_id"], local.dt.floor("h")]).size()
    assert 50 <= hourly.median() <= 70                      # about 60 rounds an hour per table
    assert df.groupby("table_id")["dealer_id"].nunique().min() > 1

    wagers = flat_values(table["wagers"])
    seats = wagers.field("seat").to_numpy()
    assert seats.min() >= 1 and seats.max() <= 14
    assert set(wagers.field("bet").to_pylist()) == {"player", "banker", "tie"}


def test_reproducible():
    a, ta = simulate(2_000, seed=5, fault_rate=0.1)
    b, tb = simulate(2_000, seed=5, fault_rate=0.1)
    assert a.equals(b) and ta.equals(tb)
    c, _ = simulate(2_000, seed=6, fault_rate=0.1)
    assert not a.equals(c)


def test_sliced_batches_give_the_same_findings(faulty):
    """Round checks on slices of a table (as streamed batches are) find what the whole table gives."""
    from auditkit.paytables import Config
    from auditkit.validate import check_rounds

    table = faulty[0].slice(0, 6_000)
    whole = check_rounds(table, "baccarat", Config())
    parts = pd.concat([check_rounds(table.slice(a, 1_000), "baccarat", Config()) for a in range(0, 6_000, 1_000)])
    assert len(whole) > 0
    assert sorted(zip(whole["round_id"], whole["rule_id"], whole["discrepancy"], strict=True)) == \
        sorted(zip(parts["round_id"], parts["rule_id"], parts["discrepancy"], strict=True))


def test_round_trip_catches_a_wrong_tableau_entry(monkeypatch):
    """The simulator plays its own copy of the tableau: one wrong entry in the rules' tables shows up as
    findings on clean rounds (here a banker 3 drawing on a player third card 8, then a player drawing on 6)."""
    from auditkit.games.baccarat import tableau

    table, truth = simulate(20_000, seed=13, tables=2)
    assert len(truth) == 0 and len(validate_tables({"baccarat": table})) == 0
    monkeypatch.setitem(tableau.BANKER_DRAWS_WHEN_PLAYER_DREW, 3, frozenset(range(10)))
    found = validate_tables({"baccarat": table})
    assert len(found) > 0 and set(found["citation"]) == {"68 IAC 10-10-14(b)(5)"}
    assert found["message"].str.contains(r"\(third card 8\): banker stood").all()
    monkeypatch.undo()
    monkeypatch.setattr(tableau, "PLAYER_DRAWS_ON", frozenset(range(7)))
    found = validate_tables({"baccarat": table})
    assert len(found) > 0 and "68 IAC 10-10-14(b)(1)" in set(found["citation"])
