"""Done when (issue 40): a profiled source and the same rounds as JSONL give the same findings and
the same coverage on every citation, for every game: simulated rounds with faults, exported one row
per hand (wager) and one row per round, read through the profile the export comes with (which says
the export leaves events out, as the twin log does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditkit.ingest.jsonl import records_from_table
from auditkit.ingest.profiles import load_profile
from auditkit.ingest.sources import ingest_source
from auditkit.rules.tally import Tally
from auditkit.simulate import simulate
from auditkit.store import Store
from auditkit.validate import collect
from tests.profile_exports import export

GAMES = ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")
ROUNDS = 300


def _outcome(store: Store) -> tuple[list[tuple], list[dict]]:
    tally = Tally()
    found, checked = collect(store, tally=tally)
    assert checked > 0
    keys = sorted(zip(found["rule_id"], found["round_id"], found["discrepancy"].round(2).fillna(0), strict=True))
    cov = tally.table().drop(columns=["reasons"], errors="ignore").sort_values("rule_id").to_dict("records")
    return keys, cov


def _both(game: str, grain: str, folder: Path, left_out: bool = True, **shape) -> tuple[Store, Store]:
    records = list(records_from_table(simulate(game, ROUNDS, seed=7, fault_rate=0.1)[0], game))
    csv_path, profile, twins = export(records, folder, grain=grain, notation="auditkit", **shape)
    if left_out:
        profile.write_text(profile.read_text().replace('[source]', 'left_out = ["events"]\n[source]', 1))
    mine = Store(folder / "store")
    rec, _ = ingest_source(csv_path, mine, profile=load_profile(profile))
    assert rec.quarantined == 0 and rec.stored == len(records), mine.quarantine().to_dict("records")[:3]
    (folder / "twin.jsonl").write_text("".join(json.dumps(r) + "\n" for r in twins))
    twin = Store(folder / "twin-store")
    ingest_source(folder / "twin.jsonl", twin)
    return mine, twin


@pytest.mark.parametrize(("grain", "shape"), [
    ("hand", {}), ("round", {}), ("hand", {"nets": "returned", "money": "dollars", "times": "strftime"}),
    ("hand", {"nets": "bankroll", "cells": "split", "times": "epoch"})])
@pytest.mark.parametrize("game", GAMES)
def test_a_profiled_export_gives_its_jsonl_twins_findings_and_coverage_on_every_citation(game, grain, shape, tmp_path):
    mine, twin = _both(game, grain, tmp_path, **shape)
    found, coverage = _outcome(mine)
    twin_found, twin_coverage = _outcome(twin)
    assert twin_found, "the twin has findings: the comparison is not empty"
    assert found == twin_found
    assert coverage == twin_coverage


def test_without_left_out_a_pai_gow_export_without_events_is_not_checkable_where_its_log_is(tmp_path):
    mine, twin = _both("pai_gow_poker", "hand", tmp_path, left_out=False)
    (found, coverage), (twin_found, twin_coverage) = _outcome(mine), _outcome(twin)
    assert len(found) < len(twin_found)
    assert sum(c["rounds_not_checkable"] for c in coverage) > sum(c["rounds_not_checkable"] for c in twin_coverage)
