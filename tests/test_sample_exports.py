"""The sample exports (sample_data/exports/): each, read through the profile beside it, gives the
findings of its JSONL twin (the same rounds of sample_data/logs) for every rule the export can show,
nothing for the rules it cannot, and the coverage table names those; the generator writes them again."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from auditkit.ingest.profiles import load_profile
from auditkit.ingest.sources import ingest_paths
from auditkit.rules.tally import Tally
from auditkit.simulate.exports import write_exports
from auditkit.store import Store
from auditkit.validate import collect

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
EXPORTS = {  # export, its profile, its twin among the logs
    "baccarat_rounds.csv": ("baccarat_rounds.toml", "baccarat.jsonl"),
    "blackjack_hands.xlsx": ("blackjack_hands.toml", "blackjack.jsonl.gz"),
    "pai_gow_poker.db": ("pai_gow_poker.toml", "pai_gow_poker.jsonl.gz"),
}


def _findings(store: Store):
    tally = Tally()
    found, checked = collect(store, tally=tally)
    return found, checked, tally.table()


@pytest.mark.parametrize("export", list(EXPORTS))
def test_an_export_gives_its_twins_findings_on_what_it_can_show(tmp_path, export):
    profile, twin = EXPORTS[export]
    mine = Store(tmp_path / "export")
    report = ingest_paths([SAMPLE / "exports" / export], mine, profile=load_profile(SAMPLE / "exports" / profile))
    assert report.total("quarantined") == 0 and report.total("stored") > 0
    theirs = Store(tmp_path / "twin")
    ingest_paths([SAMPLE / "logs" / twin], theirs)
    found, checked, coverage = _findings(mine)
    twin_found, _, _ = _findings(theirs)
    rounds = set(mine.index(["round_id"])["round_id"].to_pylist())
    assert checked == len(rounds) > 0
    lacking = coverage[coverage["rounds_not_checkable"] > 0]
    shown = set(coverage.loc[coverage["rounds_not_checkable"] == 0, "rule_id"])
    partly = set(lacking["rule_id"])
    assert shown and not (shown & partly)

    def keys(frame, rules):
        frame = frame[frame["rule_id"].isin(rules) & frame["round_id"].isin(rounds)]
        return Counter(zip(frame["round_id"], frame["rule_id"], frame["discrepancy"].round(2), strict=True))

    assert keys(found, shown) == keys(twin_found, shown)
    assert keys(twin_found, shown)  # the comparison is not empty: the twin has findings the export shows
    # a rule that cannot check a round never flags it: only rules checkable on some rounds may find
    unchecked = set(lacking.loc[lacking["rounds_not_checkable"] == lacking["rounds_in_scope"], "rule_id"])
    assert not set(found["rule_id"]) & unchecked
    assert (lacking["reasons"].str.len() > 0).all()


def test_the_baccarat_export_cannot_show_payouts_suits_or_announcements(tmp_path):
    store = Store(tmp_path / "s")
    ingest_paths([SAMPLE / "exports" / "baccarat_rounds.csv"], store,
                 profile=load_profile(SAMPLE / "exports" / "baccarat_rounds.toml"))
    _, _, coverage = _findings(store)
    by_rule = coverage.set_index("rule_id")
    for rule, why in [("baccarat.paytable", "wagers"), ("baccarat.a", "announced"),
                      ("baccarat.integrity_shoe", "suits")]:
        row = by_rule.loc[rule]
        assert row["rounds_checked"] == 0 and why in row["reasons"], (rule, row.to_dict())
    assert by_rule.loc["baccarat.b1", "rounds_not_checkable"] == 0


def test_the_generator_writes_the_committed_exports_again(tmp_path):
    (tmp_path / "logs").symlink_to(SAMPLE / "logs")
    counts = write_exports(tmp_path)
    assert all(counts.values())
    committed = SAMPLE / "exports"
    assert (tmp_path / "exports" / "baccarat_rounds.csv").read_bytes() == (committed / "baccarat_rounds.csv").read_bytes()
    from python_calamine import CalamineWorkbook

    def sheet(p):
        return CalamineWorkbook.from_path(str(p)).get_sheet_by_name("Hands").to_python()

    assert sheet(tmp_path / "exports" / "blackjack_hands.xlsx") == sheet(committed / "blackjack_hands.xlsx")

    def table(p):
        with sqlite3.connect(p) as db:
            return db.execute("SELECT * FROM hands ORDER BY id").fetchall()

    assert table(tmp_path / "exports" / "pai_gow_poker.db") == table(committed / "pai_gow_poker.db")
