"""The command line's words (issue 27, item 5): --citation by rule id or prefix with suggestions, a
mistyped option named with the right one, -q quiet, citations sorted naturally, no -0.00."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from auditkit.cli import main
from auditkit.cli.score import natural
from auditkit.money import format_money, format_net
from auditkit.summaries import payout_totals

LOGS = Path(__file__).resolve().parents[1] / "sample_data" / "logs"


def _rules(path: Path) -> set[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["rule_id"] for row in csv.DictReader(fh)}


def test_citation_takes_a_rule_id_a_prefix_or_a_citation(tmp_path):
    log = tmp_path / "b.jsonl"
    assert main(["simulate", "baccarat", "--rounds", "3000", "--fault-rate", "0.3", "--seed", "5",
                 "--out", str(log)]) == 0
    out = tmp_path / "f.csv"
    assert main(["-q", "validate", str(log), "--out", str(out)]) == 1
    every = _rules(out)
    drawing = {r for r in every if r.startswith("baccarat.b")}
    assert len(drawing) >= 2 and every - drawing  # the selections below can show what they leave out
    one = sorted(drawing)[0]
    assert main(["-q", "validate", str(log), "--out", str(out), "--citation", one]) == 1
    assert _rules(out) == {one}
    assert main(["-q", "validate", str(log), "--out", str(out), "--citation", "68 IAC 10-10-14(b)"]) == 1
    assert _rules(out) == drawing


def test_an_unknown_citation_suggests_the_closest_one_per_line(tmp_path, capsys):
    assert main(["validate", str(LOGS), "--out", str(tmp_path / "f.csv"), "--citation", "baccarat.b5x"]) == 2
    err = capsys.readouterr().err
    suggested = err.split("the closest:\n", 1)[1].split("\n")
    assert suggested[0].strip() == "baccarat.b5" and len([s for s in suggested if s.strip()]) <= 5
    assert "68 IAC 10-2-4" not in err  # not every citation on one line any more


@pytest.mark.parametrize("typo, right", [("--ouput", "--out"), ("--citaton", "--citation")])
def test_a_mistyped_option_names_the_right_one(tmp_path, capsys, typo, right):
    assert main(["validate", str(LOGS), "--out", str(tmp_path / "f.csv"), typo, "x"]) == 2
    err = capsys.readouterr().err
    assert f"unknown option {typo}; did you mean {right}" in err and "usage: auditkit [-h]" not in err


def test_quiet_prints_no_ingest_lines(tmp_path, capsys):
    main(["-q", "validate", str(LOGS / "baccarat.jsonl"), "--out", str(tmp_path / "f.csv")])
    got = capsys.readouterr()
    assert "file(s) ingested" not in got.err
    assert got.out == "" and got.err == ""  # -q: errors and warnings only, not the summary


def test_citations_sort_naturally():
    cites = ["68 IAC 10-2-4(a)", "68 IAC 10-11-6(a)", "68 IAC 10-10-14(b)(10)", "68 IAC 10-10-14(b)(2)"]
    assert sorted(cites, key=natural) == ["68 IAC 10-2-4(a)", "68 IAC 10-10-14(b)(2)", "68 IAC 10-10-14(b)(10)",
                                          "68 IAC 10-11-6(a)"]


def test_no_negative_zero_anywhere():
    assert format_money(-0.001) == "0.00" and format_net(-0.004) == "+0.00" and format_net(-0.01) == "-0.01"
    import pandas as pd

    totals = payout_totals(pd.DataFrame({"discrepancy": [0.0, 5.0]}))
    assert f"{totals['underpaid']:.2f}" == "0.00" and f"{totals['net']:.2f}" == "5.00"
