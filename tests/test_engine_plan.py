"""A run loads only the rules of the games it checks: a game's rules come from its own module, in the
catalog's order whichever modules were imported before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from auditkit import games
from auditkit.rules.registry import RULES, rules_for

ROOT = Path(__file__).resolve().parents[1]


def _in_a_fresh_process(code: str) -> str:
    """The output of ``code`` run in a new interpreter on this tree (nothing imported before it)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return out.stdout


def _rules_modules() -> set[str]:
    return {f"{g.package}.rules" for g in games.games()}


def test_every_rule_is_registered_by_the_rules_module_of_its_games():
    for g in games.games():
        _ = g.rules
    for r in RULES.values():
        owners = {f"{games.get(name).package}.rules" for name in r.games}
        assert owners == {r.func.__module__}, (r.rule_id, r.func.__module__, r.games)


@pytest.mark.parametrize("game", [g.name for g in games.games()])
def test_rules_for_imports_only_its_games_rules_in_the_catalog_order(game):
    code = ("import json, sys\nfrom auditkit.rules.registry import rules_for\n"
            f"ids = [r.rule_id for r in rules_for({game!r})]\n"
            "print(json.dumps([ids, sorted(m for m in sys.modules if m.endswith('.rules'))]))")
    ids, loaded = json.loads(_in_a_fresh_process(code))
    assert ids == [r.rule_id for r in rules_for(game)]  # here every game's rules are imported
    assert {m for m in loaded if m.startswith("auditkit.games.")} == {f"{games.get(game).package}.rules"}
    assert len(ids) > 5


def test_a_run_over_one_games_rounds_loads_no_other_games_rules(tmp_path):
    log = tmp_path / "bac.jsonl"
    from conftest import example_records

    log.write_text("".join(json.dumps(r) + "\n" for r in example_records("baccarat")))
    code = ("import json, sys\nfrom auditkit.cli.main import main\n"
            f"sys.argv = ['auditkit', '-q', 'validate', {str(log)!r}, '--out', {str(tmp_path / 'f.csv')!r}, "
            "'--workers', '1']\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.endswith('.rules'))))")
    loaded = json.loads(_in_a_fresh_process(code))
    assert {m for m in loaded if m.startswith("auditkit.games.")} == {"auditkit.games.baccarat.rules"}
    assert (tmp_path / "f.csv").read_text().startswith("round_id,")
