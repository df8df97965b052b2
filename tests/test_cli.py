"""The command-line contract: exit statuses, reports, one-shot and store routes give the same findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from auditkit.cli import main
from conftest import SPEC, expected_findings

GAMES = ["baccarat", "blackjack", "three_card_poker", "pai_gow_poker"]


@pytest.fixture
def examples(tmp_path) -> Path:
    src = SPEC / "examples"
    if not src.exists():
        pytest.skip("spec examples not found")
    dst = tmp_path / "logs"
    dst.mkdir()
    for g in GAMES:
        shutil.copy(src / f"{g}.jsonl", dst / f"{g}.jsonl")
    return dst


def _key(frame: pd.DataFrame) -> set[tuple[str, str, float]]:
    return {(r.round_id, r.citation, round(float(r.discrepancy), 2)) for r in frame.itertuples()}


def test_validate_examples_gives_exactly_the_expected_findings(examples, tmp_path, capsys):
    out = tmp_path / "report.csv"
    assert main(["validate", str(examples), "--out", str(out)]) == 1
    got = pd.read_csv(out)
    expected = pd.concat([expected_findings(g) for g in GAMES])
    assert _key(got) == _key(expected)
    assert list(got.columns[:12]) == ["round_id", "game", "table_id", "dealer_id", "started_at", "rule_id",
                                      "citation", "severity", "message", "expected", "recorded", "discrepancy"]
    assert got["started_at"].str.endswith("-05:00").all()
    assert "findings:" in capsys.readouterr().out


def test_store_route_gives_the_same_findings(examples, tmp_path):
    store = tmp_path / "store"
    assert main(["ingest", str(examples), "--store", str(store)]) == 0
    assert main(["validate", str(store), "--out", str(tmp_path / "a.csv")]) == 1
    assert main(["validate", str(examples), "--out", str(tmp_path / "b.csv")]) == 1
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(a.drop(columns="source_file"), b.drop(columns="source_file"))


def test_clean_log_exits_0_with_header_only(tmp_path):
    log = tmp_path / "clean.jsonl"
    log.write_text(json.dumps({
        "round_id": "R1", "game": "baccarat", "table_id": "T", "started_at": "2025-06-02T09:00:00-05:00",
        "shoe_id": "S", "round_seq": 1, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"],
        "outcome": "player", "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}) + "\n")
    out = tmp_path / "r.csv"
    assert main(["validate", str(log), "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1


def test_quarantined_lines_are_reported_and_do_not_stop_the_run(tmp_path, capsys):
    log = tmp_path / "mixed.jsonl"
    log.write_text("{broken\n" + json.dumps({
        "round_id": "R1", "game": "baccarat", "table_id": "T", "started_at": "2025-06-02T09:00:00-05:00",
        "shoe_id": "S", "round_seq": 1, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"],
        "outcome": "player"}) + "\n")
    assert main(["validate", str(log), "--out", str(tmp_path / "r.csv")]) == 0
    err = capsys.readouterr().err
    assert "1 line(s) quarantined" in err and "mixed.jsonl:1: not valid JSON" in err


@pytest.mark.parametrize("argv", [
    ["validate", "does-not-exist.jsonl", "--out", "x.csv"],
    ["validate", "--out", "x.csv"],
    ["frobnicate"],
])
def test_bad_arguments_or_input_exit_2(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_bad_config_exits_2(examples, tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[baccarat]\nnope = 1\n")
    assert main(["validate", str(examples), "--out", str(tmp_path / "r.csv"), "--config", str(cfg)]) == 2
    assert "unknown setting baccarat.nope" in capsys.readouterr().err


def test_rules_lists_every_citation_of_the_catalog(capsys):
    assert main(["rules", "--markdown"]) == 0
    out = capsys.readouterr().out
    for citation in ["68 IAC 10-10-14(b)(5)", "68 IAC 10-10-14(e)", "68 IAC 10-2-4(a)(3)", "68 IAC 10-11-6(d)(1)",
                     "68 IAC 10-9-17(i)", "outcome", "loss", "paytable", "void", "integrity"]:
        assert f"`{citation}`" in out


def test_summaries_by_citation_table_dealer_and_day(examples, tmp_path):
    out = tmp_path / "sum"
    assert main(["validate", str(examples), "--out", str(tmp_path / "r.csv"), "--summaries", str(out)]) == 1
    total = len(pd.read_csv(tmp_path / "r.csv"))
    for name in ("citation", "table", "dealer", "day"):
        frame = pd.read_csv(out / f"summary_by_{name}.csv")
        assert frame["findings"].sum() == total, name
    day = pd.read_csv(out / "summary_by_day.csv")
    assert set(day["date"]) == {"2025-06-02"}


def test_validate_writes_the_quarantine_report(tmp_path):
    log = tmp_path / "bad.jsonl"
    log.write_text('{"round_id": "Q1"}\n=cmd|calc\n')
    q = tmp_path / "q.csv"
    assert main(["validate", str(log), "--out", str(tmp_path / "r.csv"), "--quarantine-report", str(q)]) == 0
    rows = pd.read_csv(q)
    assert list(rows["line"]) == [1, 2] and "missing required field" in rows["reason"].iloc[0]
    assert rows["raw"].iloc[1] == "'=cmd|calc"  # spreadsheet-safe
