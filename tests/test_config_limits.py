"""Configuration limits that mean something (issue 25, item 6; docs/configuration.md, docs/reliability.md)."""

from __future__ import annotations

import pytest
from test_job import clean_round, write_log

from auditkit.cli.main import main
from auditkit.paytables import glob_reason
from auditkit.values import number_reason

ABSURD = {  # a licensee file: what the message says after the file's name
    "tie_1e308": ("[baccarat]\ntie = 1e308\n", "baccarat.tie = 1e+308: must be a finite number from 0 to 10000"),
    "banker_1e20": ("[baccarat]\nbanker = 1e20\n", "baccarat.banker = 1e+20: must be a finite number from 0 to 10000"),
    "blackjack_ratio": ("[blackjack]\nblackjack = 10001\n", "blackjack.blackjack = 10001: must be a finite number from 0 to 10000"),
    "pair_plus_entry": ("[three_card_poker.pair_plus]\nflush = 1e5\n",
                        "three_card_poker.pair_plus.flush = 100000.0: must be a finite number from 0 to 10000"),
    "unit_tiny": ("[money]\nrounding_unit = 1e-300\n",
                  "money.rounding_unit = 1e-300: must be a finite number from 0.0001 to 100"),
    "unit_huge": ("[money]\nrounding_unit = 1e6\n",
                  "money.rounding_unit = 1000000.0: must be a finite number from 0.0001 to 100"),
    "commission_one": ("[baccarat]\nbanker_commission = 1\n",
                       "baccarat.banker_commission = 1: must be a finite number from 0 to less than 1"),
    "pai_gow_commission": ("[pai_gow_poker]\ncommission = 1.0\n",
                           "pai_gow_poker.commission = 1.0: must be a finite number from 0 to less than 1"),
    "table_ratio": ('[tables."BAC-*".baccarat]\ntie = inf\n',
                    'tables."BAC-*".baccarat.tie = inf: must be a finite number from 0 to 10000'),
    "glob_unclosed": ('[tables."["]\n[tables."[".baccarat]\ntie = 8\n', 'tables."[": not a valid glob: the [ at character 1'),
    "glob_empty": ('[tables.""]\n[tables."".baccarat]\ntie = 8\n', 'tables."": a table id or glob may not be empty'),
}


@pytest.mark.parametrize("name", ABSURD)
def test_an_absurd_setting_is_exit_2_naming_file_key_and_range(name, tmp_path, capsys):
    content, message = ABSURD[name]
    cfg = tmp_path / "casino.toml"
    cfg.write_text(content)
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    assert main(["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv"), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err == f"auditkit: error: {cfg}: {message}" + err.split(message, 1)[1] and "Traceback" not in err


@pytest.mark.parametrize("content", ["[money]\nrounding_unit = 0.0001\n", "[money]\nrounding_unit = 100\n",
                                     "[baccarat]\ntie = 10000\nbanker_commission = 0.9999\n",
                                     '[tables."BAC-[0-9]*".baccarat]\ntie = 9\n', '[tables."[]]".baccarat]\ntie = 9\n'])
def test_the_bounds_themselves_are_accepted(content, tmp_path):
    cfg = tmp_path / "casino.toml"
    cfg.write_text(content)
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    assert main(["-q", "validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv"), "--config", str(cfg)]) in (0, 1)


JOB_KEYS = {
    "lock_timeout_nan": ("lock_timeout = nan\n", "job.toml: lock_timeout = nan: must be a finite number >= 0"),
    "lock_timeout_inf": ("lock_timeout = inf\n", "job.toml: lock_timeout = inf: must be a finite number >= 0"),
    "lock_timeout_negative": ("lock_timeout = -1\n", "job.toml: lock_timeout = -1: must be a finite number >= 0"),
    "workers_zero": ("workers = 0\n", "job.toml: workers = 0: must be an integer >= 1"),
    "workers_float": ("workers = 2.5\n", "job.toml: workers = 2.5: must be an integer >= 1"),
    "dedup_memory_negative": ("dedup_memory = -1\n", "job.toml: dedup_memory = -1: must be a finite number >= 0"),
    "dedup_memory_text": ('dedup_memory = "lots"\n', 'job.toml: dedup_memory = "lots": must be a finite number >= 0'),
    "limits_glob": ('[limits]\n"BJ-[" = { max = 10 }\n', 'limits."BJ-[": not a valid glob'),
    "scheduler_scheme": ('[engine]\nkind = "dask"\nscheduler = "foo://x"\n',
                         'engine.scheduler = "foo://x": must be a scheduler address'),
}


@pytest.mark.parametrize("name", JOB_KEYS)
def test_a_jobs_numbers_are_checked_as_the_command_line_checks_them(name, tmp_path, capsys):
    content, message = JOB_KEYS[name]
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    job = tmp_path / "job.toml"
    job.write_text(f'inputs = ["logs"]\nstore = "s"\noutput = "o"\n{content}')
    assert main(["run", str(job)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("argv, message", [
    (["run", "JOB", "--lock-timeout", "nan"], "--lock-timeout: must be a finite number >= 0, not nan"),
    (["validate", "x", "--out", "r.csv", "--lock-timeout", "inf"], "--lock-timeout: must be a finite number >= 0"),
    (["ingest", "x", "--store", "s", "--dedup-memory", "-5"], "--dedup-memory: must be a finite number >= 0, not -5"),
])
def test_the_command_line_says_the_same(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_one_checker():
    assert number_reason(float("nan"), {"min": 0}) == number_reason(-1, {"min": 0}) == "must be a finite number >= 0"
    assert number_reason(1.0, {"min": 0, "below": 1}) and not number_reason(0.0, {"min": 0, "below": 1})
    assert glob_reason("[") and glob_reason("a[b") and glob_reason("[!") and glob_reason("[]")
    assert not glob_reason("BAC-0[1-3]") and not glob_reason("*") and not glob_reason("[!a]x") and not glob_reason("[]]")


def test_the_largest_ratio_on_the_largest_wager_keeps_every_summary_number_finite(tmp_path, capsys):
    """A 10,000:1 tie on a wager at ingest's limit (10**13): the report and summaries hold finite numbers
    (``tie = 1e308`` gave "expected +inf", "underpaid inf" before the limits)."""
    import numpy as np
    import pandas as pd

    cfg = tmp_path / "casino.toml"
    cfg.write_text("[baccarat]\ntie = 10000\n")
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round(banker_cards=["9h", "Kd"], outcome="tie",
                                                          wagers=[{"seat": 1, "bet": "tie", "amount": 1e13, "net": 0}])])
    out, summaries = tmp_path / "r.csv", tmp_path / "sum"
    assert main(["validate", str(tmp_path / "logs"), "--out", str(out), "--config", str(cfg),
                 "--summaries", str(summaries)]) == 1
    printed = capsys.readouterr().out
    assert "underpaid" in printed and "inf" not in printed.lower() and "nan" not in printed.lower()
    for path in [out, *summaries.iterdir()]:
        frame = pd.read_csv(path, thousands=",")
        numbers = frame.select_dtypes("number").dropna(axis=1, how="all").to_numpy(dtype=float)  # not empty cells
        assert np.isfinite(numbers).all(), path
        assert not frame.astype(str).apply(lambda c: c.str.contains(r"\binf\b|\bnan\b", case=False)).any().any(), path
