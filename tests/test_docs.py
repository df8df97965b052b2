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


def layout_paths(doc: str) -> list[str]:
    """The paths docs/architecture.md's Layout block names: the first word of each of its lines that names one."""
    block = doc.split("\n## Layout\n", 1)[1].split("```", 2)[1]
    return [line.split()[0] for line in block.splitlines() if line.startswith("auditkit/")]


def test_the_layout_names_every_module_and_package_by_its_whole_path():
    """Every module of ``auditkit/`` and every package (a folder with ``__init__.py``) at any depth is in the
    Layout block by its whole path, and every path there is in the tree."""
    named = layout_paths((ROOT / "docs" / "architecture.md").read_text("utf-8"))
    assert len(named) == len(set(named)), "named twice in the Layout"
    there = {p.relative_to(ROOT).as_posix() for p in (ROOT / "auditkit").glob("*.py")} | {
        p.parent.relative_to(ROOT).as_posix() + "/" for p in (ROOT / "auditkit").rglob("*/__init__.py")}
    assert not there - set(named), f"missing from docs/architecture.md's Layout: {sorted(there - set(named))}"
    assert not set(named) - there, f"in docs/architecture.md's Layout but not in auditkit/: {sorted(set(named) - there)}"


def test_the_layout_reader_reads_the_paths_at_the_start_of_lines():
    doc = "x\n## Layout\n```\nauditkit/a.py   x\n                auditkit/not.py is prose\nauditkit/b/  y\n```\n## Next\n"
    assert layout_paths(doc) == ["auditkit/a.py", "auditkit/b/"]
