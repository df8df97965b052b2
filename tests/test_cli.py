"""The command-line contract: exit statuses, reports, one-shot and store routes give the same findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import SPEC, expected_findings

from auditkit.cli import main

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
    # every line quarantined: exit 2 (issue 26), the quarantine report written all the same
    assert main(["validate", str(log), "--out", str(tmp_path / "r.csv"), "--quarantine-report", str(q)]) == 2
    rows = pd.read_csv(q)
    assert list(rows["line"]) == [1, 2] and "missing required field" in rows["reason"].iloc[0]
    assert rows["raw"].iloc[1] == "'=cmd|calc"  # spreadsheet-safe


# ---- the command layer (issue 13) -------------------------------------------------------------
def _clean_log(folder: Path) -> Path:
    log = folder / "logs" / "clean.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps({
        "round_id": "R1", "game": "baccarat", "table_id": "T", "started_at": "2025-06-02T09:00:00-05:00",
        "shoe_id": "S", "round_seq": 1, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"],
        "outcome": "player", "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}) + "\n")
    return log.parent


def test_quiet_and_verbose_go_before_or_after_the_subcommand(tmp_path):
    from test_job import _cli

    from auditkit.cli import build_parser

    parse = build_parser().parse_args
    for argv in (["-vv", "rules"], ["rules", "-vv"], ["-v", "rules", "-v"]):
        args = parse(argv)
        assert (args.verbose, args.quiet) == (2 if argv != ["-v", "rules", "-v"] else 1, False), argv
    assert parse(["rules", "-q"]).quiet and parse(["-q", "rules"]).quiet and not parse(["rules"]).quiet
    _clean_log(tmp_path)
    for argv in (["-v", "ingest", "logs", "--store", "a"], ["ingest", "logs", "--store", "b", "-v"]):
        assert "auditkit: ingested" in _cli(*argv, cwd=tmp_path).stderr  # a message, not a raw log line
    for argv in (["-q", "report", "--store", "a", "--out", "r.csv"], ["report", "--store", "a", "--out", "r.csv", "-q"]):
        proc = _cli(*argv, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout == "" and "warning" in proc.stderr  # never validated by a run


def test_every_option_shows_its_default_in_the_help(capsys):
    from auditkit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        for action in command._actions:
            if action.option_strings and action.dest not in ("help", "verbose", "quiet"):
                assert action.help, (name, action.dest)
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for action in command._actions:
            if action.option_strings and action.dest not in ("help", "verbose", "quiet"):
                shown = " ".join(action.help.split())
                assert "default" in shown or "when not given" in shown or f"{shown} (default:" in text, (name, action.dest)
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "number of rounds (at least 1) (default: 1000)" in text and "(default: 0.0)" in text and "random seed" in text


def test_long_steps_show_progress_on_a_terminal_only(tmp_path):
    from test_job import _cli, _run_on_terminal

    _clean_log(tmp_path)
    shown = _run_on_terminal(tmp_path, "ingest", "logs", "--store", "store")
    assert "clean.jsonl" in shown and "B/s" in shown and "rounds/s" in shown  # the file's bytes, rounds a second
    shown = _run_on_terminal(tmp_path, "validate", "logs", "--out", "r.csv")
    assert "validate" in shown and "rounds" in shown
    shown = _run_on_terminal(tmp_path, "simulate", "baccarat", "--rounds", "2000", "--out", "s.jsonl")
    assert "simulate baccarat" in shown and "rounds" in shown
    for argv in (["validate", "logs", "--out", "r.csv"], ["simulate", "baccarat", "--rounds", "200", "--out", "s.jsonl"],
                 ["ingest", "logs", "--store", "store2"]):
        proc = _cli(*argv, cwd=tmp_path)
        assert proc.returncode in (0, 1) and "\r" not in proc.stderr and "rounds/s" not in proc.stderr


def test_score_compares_findings_with_the_truth(tmp_path, capsys):
    sample = Path(__file__).resolve().parents[1] / "sample_data"
    out = tmp_path / "findings.csv"
    assert main(["-q", "validate", str(sample / "logs"), "--out", str(out)]) == 1
    capsys.readouterr()
    truth = sorted(str(p) for p in (sample / "truth").glob("*.csv"))
    assert main(["score", str(out), *truth]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["citation", "planted", "found", "recall", "false", "positives"]
    total = lines[-1].split()
    assert total[0] == "total" and total[1] == total[2] and total[3:] == ["100.0%", "0"]
    assert any(line.startswith("68 IAC 10-10-14(b)(3)") and line.split()[-2:] == ["100.0%", "0"] for line in lines)
    found = pd.read_csv(out)
    missed = found.drop(index=[0, 1])
    extra = pd.concat([found, found.head(1).assign(round_id="NOT-PLANTED")])
    for frame in (missed, extra):
        frame.to_csv(tmp_path / "f.csv", index=False)
        assert main(["score", str(tmp_path / "f.csv"), *truth]) == 1
    last = capsys.readouterr().out.splitlines()[-1].split()
    assert last[0] == "total" and last[-1] == "1"


def test_the_quarantine_report_is_written_a_batch_at_a_time_as_one_frame_would_be(tmp_path, monkeypatch):
    """A quarantine of millions of lines is written in bounded memory: a batch at a time (here 7 lines),
    the header once, the same bytes as the whole frame, spreadsheet-safe in every batch."""
    from auditkit import store as store_module
    from auditkit.report import write_csv
    from auditkit.store import Store

    log = tmp_path / "bad.jsonl"
    log.write_text("".join(f"=cmd|{k}\n" if k % 5 == 0 else f'{{"round_id": "Q{k}", "x": 1.5}}\n'
                           for k in range(40)))
    store = Store(tmp_path / "s")
    assert main(["ingest", str(log), "--store", str(store.root), "--quarantine-report", str(tmp_path / "q.csv"),
                 "-q"]) == 2
    whole = write_csv(store.quarantine(), tmp_path / "whole.csv").read_bytes()
    monkeypatch.setattr(store_module.parquet, "ROW_GROUP", 7)
    frames = list(store.quarantine_frames())
    assert [len(f) for f in frames] == [7, 7, 7, 7, 7, 5]
    assert write_csv(iter(frames), tmp_path / "batches.csv").read_bytes() == whole
    assert (tmp_path / "q.csv").read_bytes() == whole and whole.count(b"source_file,line,round_id") == 1
    assert whole.count(b"'=cmd|") == 8
    assert write_csv(Store(tmp_path / "empty").quarantine_frames(), tmp_path / "e.csv").read_bytes() == \
        b"source_file,line,round_id,reason,raw,sha256\r\n"  # a header alone
