"""Exit codes that say what happened (issue 25, items 5 and 7; docs/reliability.md)."""

from __future__ import annotations

import pytest

from auditkit.cli.main import main


@pytest.mark.parametrize("argv, message", [
    (["simulate", "baccarat", "--seed", "-1", "--out", "x.jsonl"], "--seed: must be at least 0, not -1"),
    (["validate", "logs", "--out", "r.csv", "--scheduler", "foo://x"], "--scheduler 'foo://x': must be a scheduler address"),
    (["ingest", "logs", "--store", "s", "--scheduler", "foo://x"], "--scheduler 'foo://x': must be a scheduler address"),
])
def test_a_bad_seed_or_scheduler_is_a_clear_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err, err
