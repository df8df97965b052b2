"""The rules documentation is generated from the registry and cannot drift from it."""

from pathlib import Path

from auditkit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_rules_doc_matches_registry(capsys):
    main(["rules", "--markdown"])
    generated = capsys.readouterr().out
    doc = (ROOT / "docs" / "rules.md").read_text()
    assert generated in doc, "docs/rules.md is stale: run `auditkit rules --markdown` and paste the table"
