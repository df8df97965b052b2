"""Every citation the checks can report has a test named after it, and the catalog's are all checked."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import SHARED_SPEC

from auditkit import games
from auditkit.rules.registry import rules_for

TESTS = Path(__file__).parent


def _test_names(prefix: str) -> set[str]:
    """Names of the test functions in ``tests/<prefix>*.py``."""
    names = set()
    for path in TESTS.glob(f"{prefix}*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def named_test(citation: str) -> str:
    """``68 IAC 10-10-14(b)(5)`` -> ``test_68_IAC_10_10_14_b_5``; ``house-rules`` -> ``test_house_rules``."""
    return "test_" + "_".join(re.findall(r"[A-Za-z0-9]+", citation))


def test_named_test():
    assert named_test("68 IAC 10-10-14(b)(5)") == "test_68_IAC_10_10_14_b_5"
    assert named_test("paytable") == "test_paytable"


@pytest.mark.parametrize("game", [g.name for g in games.games()])
def test_every_citation_has_a_test_named_after_it(game):
    names = _test_names(f"test_{game}")
    citations = {r.citation for n in games.get(game).names for r in rules_for(n)}
    missing = sorted(c for c in citations if not any(t.startswith(named_test(c)) for t in names))
    assert not missing, f"no test named after {missing} in tests/test_{game}*.py"


def _catalog_citations() -> dict[str, set[str]]:
    """Per regulation section, the citations the rules catalog lists (``68 IAC 10-10-14(b)(5)``, bare words)."""
    text = (SHARED_SPEC / "rules-catalog.md").read_text()
    out: dict[str, set[str]] = {}
    section = None
    for line in text.splitlines():
        head = re.match(r"## .*?(68 IAC [\d-]+)", line)
        if head:
            section = head.group(1)
            continue
        if line.startswith("## "):
            section = "every game"
        cell = re.match(r"\| `([^`]+)` \|", line)
        if cell and section:
            code = cell.group(1)
            out.setdefault(section, set()).add(code if not code.startswith("(") else section + code)
    return out


def test_every_catalog_citation_is_checked():
    if not (SHARED_SPEC / "rules-catalog.md").exists():
        pytest.skip("the shared spec is not beside this checkout")
    registered = {g.section: {r.citation for n in g.names for r in rules_for(n)} for g in games.games()}
    catalog = _catalog_citations()
    assert set(catalog) - {"every game"} == set(registered)
    for section, citations in catalog.items():
        for citation in citations:
            holders = [s for s, c in registered.items() if citation in c]
            assert holders if section == "every game" else section in holders, (section, citation)
