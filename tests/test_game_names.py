"""Game knowledge lives in the game's folder (issue 24): the shared modules that still name a game, in
code rather than in a docstring or a comment, are listed here with the reason each does. A new one
fails this test, and so does one that no longer names a game (the list stays true)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from auditkit import games

ROOT = Path(__file__).resolve().parents[1] / "auditkit"
GAME = re.compile("|".join(re.escape(n).replace("_", "[_ ]") for g in games.games() for n in g.names), re.IGNORECASE)

NAMED = {
    "cli/validate.py": "--citation's help shows a rule id as an example (baccarat.b5)",
    "simulate/exports.py": "builds the bundled sample exports, one per game",
    "simulate/samples.py": "builds the bundled sample logs of the four games",
    "simulate/stories.py": "the sample data's planted stories, one per game",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The string constants that document (a module's, class's or function's first statement, or a
    string statement after an assignment)."""
    out = set()
    for node in ast.walk(tree):
        for stmt in getattr(node, "body", []) if isinstance(getattr(node, "body", None), list) else []:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                out.add(id(stmt.value))
    return out


def names_in_code(source: str) -> list[str]:
    """The identifiers, imported modules and string constants (docstrings left out) that name a game."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.ImportFrom):
            text = node.module or ""
        elif isinstance(node, ast.alias):
            text = node.name
        else:
            continue
        if GAME.search(text):
            hits.append(text)
    return hits


def test_only_the_listed_shared_modules_name_a_game():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("games/"):
            continue
        hits = names_in_code(path.read_text(encoding="utf-8"))
        if hits:
            found[rel] = hits
    new = {f: hits[:3] for f, hits in found.items() if f not in NAMED}
    assert not new, f"shared modules that name a game (move the knowledge into the game, or list why): {new}"
    stale = sorted(set(NAMED) - set(found))
    assert not stale, f"listed but no longer naming a game (take them off the list): {stale}"


def test_the_scan_sees_names_in_code_and_not_in_docstrings():
    source = '"""Baccarat docs."""\nX = 1\n"""Blackjack docs of X."""\nfrom .games.pai_gow_poker import y\n' \
             'def f():\n    """three card poker."""\n    return "mini_baccarat" + blackjack_total\n'
    assert sorted(names_in_code(source)) == ["blackjack_total", "games.pai_gow_poker", "mini_baccarat"]
