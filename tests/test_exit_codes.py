"""Exit codes that say what happened (issue 25, items 5 and 7; docs/reliability.md)."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from auditkit.cli.main import main


@pytest.mark.parametrize("argv, message", [
    (["simulate", "baccarat", "--seed", "-1", "--out", "x.jsonl"], "--seed: must be an integer >= 0, not -1"),
    (["validate", "logs", "--out", "r.csv", "--scheduler", "foo://x"], 'command line: --scheduler = "foo://x": must be a scheduler address'),
    (["ingest", "logs", "--store", "s", "--scheduler", "foo://x"], 'command line: --scheduler = "foo://x": must be a scheduler address'),
])
def test_a_bad_seed_or_scheduler_is_a_clear_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err, err


ROOT = Path(__file__).resolve().parents[1]


def spreadsheet_csv(folder: Path) -> Path:
    """The sample CSV (its rounds and their wagers) resaved by a spreadsheet: ``6/1/2025 04:02`` dates."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in (ROOT / "sample_data" / "logs" / "csv").iterdir():
        shutil.copy(f, folder / f.name)
    path = folder / "baccarat_table9.csv"
    rows = list(csv.reader(path.open(newline="")))
    col = rows[0].index("started_at")
    for r in rows[1:]:
        m = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)", r[col])
        r[col] = f"{int(m[2])}/{int(m[3])}/{m[1]} {m[4]}:{m[5]}"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return folder


with (ROOT / "sample_data" / "logs" / "csv" / "baccarat_table9.csv").open(newline="") as _fh:
    ROUNDS = sum(1 for _ in csv.reader(_fh)) - 1  # the sample CSV's rounds (its header left out)
with (ROOT / "sample_data" / "logs" / "baccarat.jsonl").open("rb") as _fh:
    GOOD = sum(1 for _ in _fh)  # the sample JSONL's lines
ALL_QUARANTINED = f"every line read was quarantined ({ROUNDS}), no round stored; most common: " \
                  f"{ROUNDS} x field started_at '…' is not an ISO 8601 timestamp"
PAST = f"{ROUNDS} of {ROUNDS + GOOD} line(s) quarantined ({100 * ROUNDS / (ROUNDS + GOOD):.1f}%)"


def test_validate_of_logs_whose_every_line_is_quarantined_is_exit_2_with_the_reasons(tmp_path, capsys):
    logs = spreadsheet_csv(tmp_path / "logs")
    assert main(["validate", str(logs), "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert f"auditkit: error: {ALL_QUARANTINED} (see the reasons above; " in err and "Traceback" not in err
    assert not (tmp_path / "r.csv").exists()  # refused before any check: no report that reads as clean


def test_ingest_whose_every_line_is_quarantined_is_exit_2(tmp_path, capsys):
    logs = spreadsheet_csv(tmp_path / "logs")
    assert main(["ingest", str(logs), "--store", str(tmp_path / "s")]) == 2
    assert f"auditkit: error: {ALL_QUARANTINED} (see the reasons above; " in capsys.readouterr().err


def test_max_quarantined_fails_a_run_past_that_share_after_writing_its_reports(tmp_path, capsys):
    logs = spreadsheet_csv(tmp_path / "logs")
    shutil.copy(ROOT / "sample_data" / "logs" / "baccarat.jsonl", logs)  # good rounds beside the quarantined ones
    out = tmp_path / "r.csv"
    assert main(["validate", str(logs), "--out", str(out), "--max-quarantined", "0.01"]) == 2
    err = capsys.readouterr().err
    assert f"{PAST}, more than max_quarantined = 0.01 (1.0%)" in err
    assert len(pd.read_csv(out)) > 0  # the findings of the good rounds are written
    assert main(["-q", "validate", str(logs), "--out", str(out), "--max-quarantined", "0.05"]) == 1
    assert main(["-q", "ingest", str(logs), "--store", str(tmp_path / "s"), "--max-quarantined", "0.01"]) == 2
    assert main(["validate", str(logs), "--out", str(out), "--max-quarantined", "1.5"]) == 2
    assert "--max-quarantined: must be a finite number from 0 to 1" in capsys.readouterr().err


def _job(tmp_path: Path, extra: str = "") -> Path:
    job = tmp_path / "job.toml"
    job.write_text(f'inputs = ["logs"]\nstore = "s"\noutput = "o"\n{extra}')
    return job


def test_a_job_whose_lines_are_all_quarantined_or_past_max_quarantined_is_exit_2(tmp_path, capsys):
    logs = spreadsheet_csv(tmp_path / "logs")
    assert main(["run", str(_job(tmp_path))]) == 2
    assert f"auditkit: error: {ALL_QUARANTINED}\n" in capsys.readouterr().err
    record = json.loads(next((tmp_path / "o").rglob("run.json")).read_text())
    assert record["status"] == "quarantined" and record["exit_code"] == 2 and record["problem"] == ALL_QUARANTINED
    shutil.copy(ROOT / "sample_data" / "logs" / "baccarat.jsonl", logs)
    assert main(["run", str(_job(tmp_path, "max_quarantined = 0.0001\n"))]) == 1  # the new file has no quarantine
    assert main(["run", str(_job(tmp_path, "max_quarantined = nan\n"))]) == 2
    assert "max_quarantined = nan: must be a finite number from 0 to 1" in capsys.readouterr().err


def test_a_job_past_max_quarantined_writes_its_reports_then_exits_2(tmp_path, capsys):
    logs = spreadsheet_csv(tmp_path / "logs")
    shutil.copy(ROOT / "sample_data" / "logs" / "baccarat.jsonl", logs)
    assert main(["run", str(_job(tmp_path, "max_quarantined = 0.01\n"))]) == 2
    assert PAST in capsys.readouterr().err
    folder = next((tmp_path / "o").rglob("run.json")).parent
    assert len(pd.read_csv(folder / "findings.csv")) > 0 and len(pd.read_csv(folder / "quarantine.csv")) == ROUNDS


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("filters")
    (root / "logs").mkdir()
    shutil.copy(ROOT / "sample_data" / "logs" / "baccarat.jsonl", root / "logs")
    (root / "job.toml").write_text('inputs = ["logs"]\nstore = "s"\noutput = "o"\n')
    assert main(["-q", "run", str(root / "job.toml")]) == 1
    return root / "s"


@pytest.mark.parametrize("argv, said", [
    (["--dealer", "D999"], "no rounds match --dealer D999"),
    (["--table", "ZZ-*"], "no rounds match --table ZZ-*"),
    (["--from", "2031-01-01", "--to", "2031-01-02"], "no rounds match --from 2031-01-01 --to 2031-01-02"),
    (["--game", "blackjack"], "no rounds match --game blackjack"),
])
def test_a_report_filter_that_matches_no_round_warns_and_says_so(argv, said, store, tmp_path, capsys):
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv"), *argv]) == 0
    out, err = capsys.readouterr()
    assert f"auditkit: warning: {said}\n" in err and f"; {said}\n" in out


def test_a_filter_that_matches_rounds_without_findings_does_not_warn(store, tmp_path, capsys):
    rounds = pq.read_table(next((store / "rounds").rglob("*.parquet")), columns=["dealer_id", "table_id"])
    dealer, table = rounds["dealer_id"][0].as_py(), rounds["table_id"][0].as_py()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv"), "--dealer", dealer,
                 "--table", table, "--severity", "high"]) == 0
    assert "no rounds match" not in "".join(capsys.readouterr())


def test_validate_of_a_store_with_none_of_the_games_warns(store, tmp_path, capsys):
    assert main(["validate", str(store), "--out", str(tmp_path / "r.csv"), "--game", "blackjack"]) == 0
    out, err = capsys.readouterr()
    assert "auditkit: warning: no rounds match --game blackjack" in err and "warning: no rounds match" in out


def test_a_job_whose_games_match_none_of_the_new_rounds_warns(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    shutil.copy(ROOT / "sample_data" / "logs" / "baccarat.jsonl", tmp_path / "logs")
    assert main(["run", str(_job(tmp_path, 'games = ["blackjack"]\n'))]) == 0
    assert "warning: no rounds match games = ['blackjack']" in capsys.readouterr().out
    assert json.loads(next((tmp_path / "o").rglob("run.json")).read_text())["warnings"]


# ---- logs that hold no round at all (an empty export): exit 0 as the contract says, but never silently clean --
def _empty_logs(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "empty.jsonl").write_text("")
    (folder / "blank.jsonl").write_text("\n \n")
    (folder / "header.csv").write_text("round_id,game,table_id,started_at\n")
    return folder


def test_validate_or_ingest_of_logs_holding_no_round_warns_that_nothing_was_checked(tmp_path, capsys):
    logs = _empty_logs(tmp_path / "logs")
    assert main(["validate", str(logs), "--out", str(tmp_path / "r.csv")]) == 0
    out, err = capsys.readouterr()
    said = "no round in the logs read: "
    assert f"auditkit: warning: {said}" in err and f"warning: {said}" in out and "nothing was checked" in err
    for name, what in [("empty.jsonl", "empty"), ("blank.jsonl", "2 line(s), none a round"),
                       ("header.csv", "1 line(s), none a round")]:
        assert f"{name} ({what})" in err
    assert main(["ingest", "--store", str(tmp_path / "s"), str(logs)]) == 0
    assert "no round in the logs read" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "s"), "--out", str(tmp_path / "r2.csv")]) == 0
    assert "auditkit: warning: no rounds in the store: nothing was checked" in capsys.readouterr().err


def test_logs_with_rounds_or_a_store_with_rounds_do_not_warn(tmp_path, store, capsys):
    logs = _empty_logs(tmp_path / "logs")
    shutil.copy(ROOT / "sample_data" / "logs" / "baccarat.jsonl", logs)
    assert main(["validate", str(logs), "--out", str(tmp_path / "r.csv")]) == 1
    assert main(["validate", str(store), "--out", str(tmp_path / "r2.csv")]) == 1
    assert "warning" not in capsys.readouterr().err


def test_a_job_whose_new_files_hold_no_round_is_nothing_new_with_a_warning(tmp_path, capsys):
    _empty_logs(tmp_path / "logs")
    assert main(["run", str(_job(tmp_path))]) == 0
    assert "warning: no round in the logs read" in capsys.readouterr().out
    record = json.loads(next((tmp_path / "o").rglob("run.json")).read_text())
    assert record["status"] == "nothing new" and "nothing new to check" in record["warnings"][0]


# ---- a run reads the quarantine of its own sources only, whatever the store's ----------------------------
def _bad_log(path: Path, tag: str, bad: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    good = (ROOT / "sample_data" / "logs" / "baccarat.jsonl").read_text().splitlines()[:50]
    path.write_text("\n".join([line.replace('"BAC-', f'"{tag}-BAC-') for line in good]
                              + [f"{{not json {tag} {k}" for k in range(bad)]) + "\n")
    return path


@pytest.mark.parametrize("command", ["ingest", "run"])
def test_a_run_reads_the_quarantine_of_its_own_sources_only(tmp_path, capsys, monkeypatch, command):
    """The store's older quarantine (here 300 lines of another file) is not read by the next run: its
    reasons, its report and its failure come from the run's own files, in memory of its own size."""
    from auditkit import store as store_module

    _bad_log(tmp_path / "logs" / "old.jsonl", "OLD", 300)
    job = _job(tmp_path, "max_quarantined = 0.1\n")
    argv = {"ingest": ["ingest", str(tmp_path / "logs"), "--store", str(tmp_path / "s"), "--max-quarantined", "0.1",
                       "--quarantine-report", str(tmp_path / "q.csv")], "run": ["run", str(job)]}[command]
    assert main(argv) == 2  # 300 of 350 lines
    (tmp_path / "logs" / "old.jsonl").unlink()
    _bad_log(tmp_path / "logs" / "new.jsonl", "NEW", 20)
    read: list[str] = []
    real = store_module._LocalFiles.dataset
    monkeypatch.setattr(store_module._LocalFiles, "dataset", lambda self, rels, schema: read.extend(rels) or
                        real(self, rels, schema))
    capsys.readouterr()
    assert main(argv) == 2  # 20 of 70 lines: past 10%
    err = capsys.readouterr().err
    assert "20 of 70 line(s) quarantined (28.6%), more than max_quarantined = 0.1" in err
    assert "most common: 20 x not valid JSON" in err and "OLD" not in err
    quarantine_read = {rel for rel in read if rel.startswith("_quarantine/")}
    assert len(quarantine_read) == 1  # the new file's, never the old one's
    report = tmp_path / "q.csv" if command == "ingest" else \
        max((tmp_path / "o").rglob("quarantine.csv"), key=lambda p: p.stat().st_mtime)  # the second run's
    lines = pd.read_csv(report)
    assert len(lines) == 20 and lines["raw"].str.contains("NEW").all()
