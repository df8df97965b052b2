"""The coverage of a run, counted by the engine: per game and rule, the rounds in scope, those it could not
check (in all and by kind of evidence, :data:`auditkit.rules.coverage.EVIDENCE`) and its findings; and the
coverage table made of them, a row per game and rule in catalog order."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .coverage import KINDS

if TYPE_CHECKING:
    import pandas as pd

    from .registry import Rule

__all__ = ["Tally", "COLUMNS", "coverage_table"]

_IN_SCOPE, _NOT_CHECKABLE, _FINDINGS = 0, 1, 2


class Tally:
    """Counts per game and rule over a run: rounds in scope, rounds not checkable (in all and by kind
    of evidence: a round lacking two kinds counts under each), findings. Tallies of several workers add."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], np.ndarray] = {}

    def add(self, game: str, rule: Rule, in_scope: int, not_checkable: np.ndarray | None,
            lack: dict[str, np.ndarray], hit_rows: np.ndarray, emit: np.ndarray | None = None) -> None:
        """One rule over one batch: ``in_scope`` rounds, the mask of those it could not check (aligned with
        the rounds, or None), the masks of :func:`auditkit.rules.coverage.lacking`, and the rounds it found
        something in. ``emit`` marks the rounds counted (the others are context from an earlier day)."""
        row = self.counts.setdefault((game, rule.rule_id), np.zeros(3 + len(KINDS), np.int64))
        row[_IN_SCOPE] += in_scope
        row[_FINDINGS] += len(np.unique(hit_rows))
        if not_checkable is not None:
            counted = not_checkable if emit is None else not_checkable & emit
            row[_NOT_CHECKABLE] += int(counted.sum())
            for k in rule.needs:
                if k in lack:
                    row[3 + KINDS.index(k)] += int((lack[k] & counted).sum())

    def add_findings(self, game: str, rule_id: str, n: int) -> None:
        """Count ``n`` findings of a rule already tallied (stored findings, not found by this tally)."""
        if (game, rule_id) in self.counts:
            self.counts[game, rule_id][_FINDINGS] += n

    def merge(self, other: Tally | None) -> Tally:
        """Add another tally's counts to this one (and return it)."""
        for key, row in (other.counts if other else {}).items():
            if key in self.counts:
                self.counts[key] = self.counts[key] + row
            else:
                self.counts[key] = row.copy()
        return self

    def table(self) -> pd.DataFrame:
        """The coverage table: a row per game and rule, in catalog order (see :data:`COLUMNS`)."""
        return coverage_table(self.counts)


COLUMNS = ["game", "citation", "rule_id", "rounds_in_scope", "rounds_checked", "rounds_not_checkable", "reasons",
           "findings"]
"""The coverage table's columns; ``reasons``: ``kind: rounds`` per kind of evidence lacking (``; ``-joined)."""


def coverage_table(counts: dict[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    """The coverage table of a :class:`Tally`'s counts."""
    import pandas as pd

    from .registry import rules_for

    rows = []
    for game in dict.fromkeys(g for g, _ in counts):
        for r in rules_for(game):
            row = counts.get((game, r.rule_id))
            if row is None:
                continue
            reasons = "; ".join(f"{k}: {int(row[3 + i])}" for i, k in enumerate(KINDS) if row[3 + i])
            rows.append({"game": game, "citation": r.citation, "rule_id": r.rule_id,
                         "rounds_in_scope": int(row[_IN_SCOPE]),
                         "rounds_checked": int(row[_IN_SCOPE] - row[_NOT_CHECKABLE]),
                         "rounds_not_checkable": int(row[_NOT_CHECKABLE]), "reasons": reasons,
                         "findings": int(row[_FINDINGS])})
    return pd.DataFrame(rows, columns=COLUMNS).astype({c: "int64" for c in COLUMNS[3:6] + ["findings"]})
