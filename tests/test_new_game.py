"""A new game is one package: a fixture game outside auditkit goes through ingest, validate and report."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"

SCRIPT = r"""
import csv, json, sys
from pathlib import Path
import auditkit_war  # registers casino_war
from auditkit import games
from auditkit.cli import main
from auditkit.rules.registry import catalog

tmp = Path(sys.argv[1])
assert "casino_war" in games.names()
rows = catalog("casino_war")
print(json.dumps({"rules": rows["rule_id"].tolist(), "params": rows["params"].tolist()}))
assert main(["ingest", str(tmp / "war.jsonl"), "--store", str(tmp / "store")]) == 0
assert main(["validate", str(tmp / "store"), "--out", str(tmp / "store.csv")]) == 1
assert main(["validate", str(tmp / "war.jsonl"), "--out", str(tmp / "oneshot.csv")]) == 1
(tmp / "even.toml").write_text("[casino_war]\nwin = 0.0\n")  # its own settings, checked like any other
(tmp / "bad.toml").write_text("[casino_war]\nwin = -1\n")
assert main(["validate", str(tmp / "war.jsonl"), "--out", str(tmp / "even.csv"), "--config", str(tmp / "even.toml")]) == 1
assert main(["validate", str(tmp / "war.jsonl"), "--out", str(tmp / "bad.csv"), "--config", str(tmp / "bad.toml")]) == 2
"""


def _round(i: int, player: str, dealer: str, net: float) -> dict:
    return {"round_id": f"W-{i}", "game": "casino_war", "table_id": "WAR-1", "dealer_id": "D1",
            "started_at": f"2025-06-02T10:0{i}:00-05:00", "player_cards": [player], "dealer_cards": [dealer],
            "wagers": [{"seat": 1, "bet": "war", "amount": 10, "net": net}]}


def test_a_game_from_outside_auditkit_is_ingested_validated_and_reported(tmp_path):
    log = [_round(1, "Kh", "2c", 10), _round(2, "3d", "Qs", -10), _round(3, "Ah", "9c", -10),  # 3: paid as a loss
           _round(4, "7s", "7d", 0)]
    (tmp_path / "war.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout.splitlines()[0])
    assert listed == {"rules": ["war.paytable"], "params": ["casino_war.win = 1.0"]}
    for name in ("store.csv", "oneshot.csv"):
        with open(tmp_path / name, newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert [(r["round_id"], r["citation"], r["discrepancy"], r["expected_amount"], r["recorded_amount"])
                for r in rows] == [("W-3", "paytable", "-20.00", "10.00", "-10.00")]
    with open(tmp_path / "even.csv", newline="") as fh:  # at 0:1 a win nets 0
        even = list(csv.DictReader(fh))
    assert sorted((r["round_id"], r["discrepancy"]) for r in even) == [("W-1", "10.00"), ("W-3", "-10.00")]


def test_the_game_registry_imports_nothing_of_auditkit():
    """``auditkit.games`` (the registry) sits below the schema and the game packages: it imports no module
    of auditkit, not even inside a function (``Game.schema`` imported ``auditkit.schema`` while
    ``schema_for`` imported the registry: a cycle); game packages are imported by name on first use."""
    import ast

    tree = ast.parse((Path(__file__).resolve().parents[1] / "auditkit" / "games" / "__init__.py").read_text("utf-8"))
    imports = [ast.unparse(n) for n in ast.walk(tree)
               if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").split(".")[0] == "auditkit")
               or isinstance(n, ast.Import) and any(a.name.split(".")[0] == "auditkit" for a in n.names)]
    assert imports == []


def test_adding_a_game_lists_exactly_the_files_a_game_has():
    """docs/adding-a-game.md's package layout: every file of a built-in game or of casino war is listed
    and every listed file is some game's; those marked ``all`` (and ``required``) are in every built-in
    game; those marked ``asked`` are the modules auditkit asks a game for (``Game``'s properties); casino
    war, the least a game can be, has exactly the required ones."""
    import re

    from auditkit import games

    doc = (Path(__file__).resolve().parents[1] / "docs" / "adding-a-game.md").read_text("utf-8")
    block = doc.split("## 1. The package", 1)[1].split("```", 2)[1]
    listed = dict(re.findall(r"^  (\w+\.py) +((?:asked|required|all|own)(?:, (?:required|all))?) ", block, re.M))
    package = Path(games.__file__).parent
    files = {g: {p.name for p in (package / g).glob("*.py")} for g in games.BUILTIN}
    war = {p.name for p in (FIXTURES / "auditkit_war").glob("*.py")}
    assert set(listed) == set().union(*files.values(), war)
    for name, have in files.items():
        assert {f for f, m in listed.items() if "all" in m or "required" in m} <= have, name
    assert {f.removesuffix(".py") for f, m in listed.items() if "asked" in m} == set(games.MODULES)
    assert war == {f for f, m in listed.items() if "required" in m}
    assert all(isinstance(getattr(games.Game, m), property) for m in games.MODULES)


def test_a_game_s_modules_are_its_package_s_files_imported_on_first_use():
    import pickle

    from auditkit import games

    g = games.get("pai_gow_poker")
    assert g.rules.__name__ == "auditkit.games.pai_gow_poker.rules"
    assert g.setting_kinds.__name__ == "auditkit.games.pai_gow_poker.setting_kinds" and g.evidence is None
    assert games.get("baccarat").evidence.__name__ == "auditkit.games.baccarat.evidence"
    assert callable(games.get("blackjack").simulate.simulate) and games.get("mini_baccarat").theory.EVENTS
    assert games.get("three_card_poker").bulk.__name__.endswith(".bulk")
    assert pickle.loads(pickle.dumps(g)).name == "pai_gow_poker"  # workers get game records
