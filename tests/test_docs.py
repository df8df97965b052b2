"""The rules documentation is generated from the registry and cannot drift from it."""

from pathlib import Path

from auditkit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_rules_doc_matches_registry(capsys):
    main(["rules", "--markdown"])
    generated = capsys.readouterr().out
    doc = (ROOT / "docs" / "rules.md").read_text()
    assert generated in doc, "docs/rules.md is stale: run `auditkit rules --markdown` and paste the table"


def test_rule_order_does_not_depend_on_import_order():
    """Importing one rule module first (as the analysis API does) leaves the catalog order alone."""
    import subprocess
    import sys

    code = ("import auditkit.games.pai_gow_poker.rules, auditkit.games.blackjack.rules\n"
            "from auditkit.cli import main\nmain(['rules', '--markdown'])")
    late = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert late in (ROOT / "docs" / "rules.md").read_text()
