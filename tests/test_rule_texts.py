"""Every rule reads like its subsection: its docstring quotes the regulation, and it reads only the
columns it declares."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from conftest import SHARED_SPEC

from auditkit import games
from auditkit.engine.checks import read_columns, select_rules
from auditkit.engine.findings import META
from auditkit.paytables import Config
from auditkit.rules.registry import rules_for
from auditkit.validate import check_rounds

REGULATIONS = SHARED_SPEC.parent / "regulations"


def _words(text: str) -> str:
    """Lower-case words only: quotes, line breaks and punctuation do not count."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@pytest.mark.parametrize("game", [g.name for g in games.games()])
def test_every_subsection_rule_quotes_its_subsection(game):
    spec = games.get(game)
    files = sorted(REGULATIONS.glob(f"{spec.section.replace(' ', '-')}-*.txt"))
    if not files:
        pytest.skip(f"the regulation text of {spec.section} is not beside this checkout")
    law = _words(files[0].read_text())
    for r in {r.rule_id: r for n in spec.names for r in rules_for(n)}.values():
        if not r.citation.startswith(spec.section):
            continue
        doc = r.func.__doc__ or ""
        quotes = re.findall(r"[\"“]([^\"”]{30,})[\"”]", doc, flags=re.S)
        assert quotes, f"{r.rule_id} ({r.func.__name__}): no quotation of {r.citation} in its docstring"
        assert any(_quoted(q, law) for q in quotes), f"{r.rule_id}: no quotation of it is in {files[0].name}"


def _quoted(quote: str, law: str) -> bool:
    """Every part of a quotation (parts elided with "..." may be left out) is in the text, and
    one of them is at least five words long."""
    parts = [_words(p) for p in re.split(r"\.\.\.|…", quote)]
    parts = [p for p in parts if p]
    return bool(parts) and all(p in law for p in parts) and max(len(p.split()) for p in parts) >= 5


@pytest.mark.parametrize("game", [g.name for g in games.games() if g.simulate])
def test_each_rule_finds_the_same_on_the_columns_it_declares(game):
    """Each round rule alone, on a batch cut to its declared columns (and the report's metadata):
    the findings of the whole batch."""
    table, _truth = games.get(game).simulate.simulate(4000, seed=21, fault_rate=0.3)
    assert read_columns(select_rules(game, "round"), []) is not None, "every round rule declares its columns"
    found = 0
    for rule in select_rules(game, "round"):
        lean = table.select([c for c in dict.fromkeys([*rule.columns, *META, "status"]) if c in table.column_names])
        full, cut = check_rounds(table, game, Config(), [rule]), check_rounds(lean, game, Config(), [rule])
        pd.testing.assert_frame_equal(full, cut, obj=rule.rule_id)
        found += len(full)
    assert found > 50
