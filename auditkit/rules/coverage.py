"""What the data cannot show: the kinds of evidence a rule needs, and which rounds lack them.

A source that does not record some evidence for a round (a vendor export without suits, say)
names it in the round's ``not_recorded`` column; a stored column a kind stands for that is null
for a round (a JSONL log without announced totals) also means the round lacks it. A rule that
needs a kind the round lacks cannot check it: the engine neither flags nor passes that round,
and counts it as *not checkable* (by kind) instead.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import combine, flat_values, parents, to_numpy

if TYPE_CHECKING:
    import pandas as pd

    from .registry import Rule

__all__ = ["EVIDENCE", "STANDS_FOR", "stands_for", "columns_for", "lacking", "cannot", "Tally", "COLUMNS",
           "coverage_table"]

EVIDENCE: dict[str, str] = {
    "suits": "the cards' suits (without them suits are invented)",
    "ranks": "the cards' ranks (without them only point values: T J Q K indistinguishable)",
    "announced": "the totals the dealer announced",
    "times": "the rounds' event times (without them started_at is made from a stated date and the order)",
    "order": "the order of the rounds in the shoe and of the cards in the hand",
    "wagers": "the wagers and their nets",
    "events": "the events of the round (decisions, wager actions, dice, exposed cards)",
    "dealer": "the dealer's id",
    "shoe": "the shoe's id",
    "round_id": "the round's id as the table wrote it (without it the profile made the ids)",
}
"""The kinds of evidence a round may lack, each with what it is."""

STANDS_FOR: dict[str, dict[str, tuple[str, ...]]] = {
    "*": {"shoe": ("shoe_id",), "dealer": ("dealer_id",)},
    "baccarat": {"announced": ("announced_player", "announced_banker"), "wagers": ("wagers",)},
}
"""The stored columns that stand for a kind of evidence, for every game (``*``) and per game (by the
game's name, aliases included): a round where one of them is null lacks that kind. A kind with no
column here (suits, ranks, times, order, events, round_id, and wagers carried inside the hands of
blackjack, pai gow poker and three card poker, where an empty list is a fact, not an absence) is
lacking only where ``not_recorded`` names it."""

KINDS = tuple(EVIDENCE)


def stands_for(game: str) -> dict[str, tuple[str, ...]]:
    """The columns standing for each kind in a game's rounds (see :data:`STANDS_FOR`)."""
    from .. import games

    return {**STANDS_FOR["*"], **STANDS_FOR.get(games.get(game).name, {})}


def columns_for(game: str, needs: Iterable[str]) -> list[str]:
    """The stored columns the engine reads to know which rounds lack the kinds in ``needs``."""
    own = stands_for(game)
    cols = {"not_recorded": None}
    for kind in needs:
        cols.update(dict.fromkeys(own.get(kind, ())))
    return list(cols)


def lacking(table: pa.Table, game: str) -> dict[str, np.ndarray]:
    """Per kind of evidence that some round of ``table`` lacks, the mask of those rounds (empty when
    every round holds every kind: the usual case, found from null counts alone)."""
    n = table.num_rows
    out: dict[str, np.ndarray] = {}
    if "not_recorded" in table.column_names:
        marker = combine(table["not_recorded"])
        if marker.null_count < n:
            values = flat_values(marker)
            if len(values):
                rows = parents(marker)
                named = to_numpy(values, "")
                for kind in np.unique(named).tolist():
                    if kind in EVIDENCE:
                        out[kind] = np.bincount(rows[named == kind], minlength=n).astype(bool)
    for kind, cols in stands_for(game).items():
        for c in cols:
            if c in table.column_names and table[c].null_count:
                null = to_numpy(pc.is_null(table[c]), False).astype(bool)
                out[kind] = out[kind] | null if kind in out else null
    return out


def cannot(lack: dict[str, np.ndarray], needs: Iterable[str]) -> np.ndarray | None:
    """The rounds a rule needing ``needs`` cannot check (None: it can check them all)."""
    masks = [lack[k] for k in needs if k in lack]
    if not masks:
        return None
    return functools.reduce(np.logical_or, masks)


_IN_SCOPE, _NOT_CHECKABLE, _FINDINGS = 0, 1, 2


class Tally:
    """Counts per game and rule over a run: rounds in scope, rounds not checkable (in all and by kind
    of evidence: a round lacking two kinds counts under each), findings. Tallies of several workers add."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], np.ndarray] = {}

    def add(self, game: str, rule: Rule, in_scope: int, not_checkable: np.ndarray | None,
            lack: dict[str, np.ndarray], hit_rows: np.ndarray, emit: np.ndarray | None = None) -> None:
        """One rule over one batch: ``in_scope`` rounds, the mask of those it could not check (aligned with
        the rounds, or None), the masks of :func:`lacking`, and the rounds it found something in. ``emit``
        marks the rounds counted (the others are context from an earlier day)."""
        row = self.counts.setdefault((game, rule.rule_id), np.zeros(3 + len(KINDS), np.int64))
        row[_IN_SCOPE] += in_scope
        row[_FINDINGS] += len(np.unique(hit_rows))
        if not_checkable is not None:
            counted = not_checkable if emit is None else not_checkable & emit
            row[_NOT_CHECKABLE] += int(counted.sum())
            for k in rule.needs:
                if k in lack:
                    row[3 + KINDS.index(k)] += int((lack[k] & counted).sum())

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
