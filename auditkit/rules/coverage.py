"""What the data cannot show: the kinds of evidence a rule needs, and which rounds lack them.

A source that does not record some evidence for a round (a vendor export without suits, say)
names it in the round's ``not_recorded`` column; a stored column a kind stands for that is null
for a round (a JSONL log without announced totals) also means the round lacks it. A rule that
needs a kind the round lacks cannot check it: the engine neither flags nor passes that round,
and counts it as *not checkable* (by kind) instead.

This module holds that vocabulary only (the kinds, the columns standing for them, the rounds lacking
them); the engine's counts per rule are :mod:`auditkit.rules.tally`, the coverage table of the reports
:mod:`auditkit.reportcoverage`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import combine, flat_values, lengths, parents, to_numpy

__all__ = ["EVIDENCE", "STANDS_FOR", "KINDS", "stands_for", "columns_for", "lacking", "cannot"]

EVIDENCE: dict[str, str] = {
    "suits": "the cards' suits (without them suits are invented)",
    "ranks": "the cards' ranks (without them only point values: T J Q K indistinguishable)",
    "announced": "the totals the dealer announced",
    "times": "the rounds' event times (without them started_at is made from a stated date and the order)",
    "order": "the order of the rounds in the shoe and of the cards in the hand",
    "deal_order": "the order the cards were dealt in across the hands (a deal_order field)",
    "cut_card": "the round in which the cutting card came out (a cut_card field)",
    "wagers": "the wagers and their nets",
    "events": "the events of the round (decisions, wager actions, dice, exposed cards)",
    "first_card": "the moment the round's first card was dealt (a first_card event)",
    "dealer": "the dealer's id",
    "shoe": "the shoe's id",
    "round_id": "the round's id as the table wrote it (without it the profile made the ids)",
}
"""The kinds of evidence a round may lack, each with what it is."""

STANDS_FOR: dict[str, tuple[str, ...]] = {"shoe": ("shoe_id",), "dealer": ("dealer_id",)}
"""The stored columns that stand for a kind of evidence in every game's rounds; a game adds its own in
its evidence module's ``STANDS_FOR`` (``Game.evidence``: baccarat's announced totals and wagers). A
round where one of them is null (or, a list, empty: a baccarat round without wagers has no payout to
check) lacks that kind. A kind with no column (suits, ranks, times, order, deal_order, cut_card,
events, round_id, and wagers carried inside the hands of blackjack, pai gow poker and three card
poker) is lacking only where ``not_recorded`` names it, or where the game's ``lacking`` says so."""

KINDS = tuple(EVIDENCE)


def stands_for(game: str) -> dict[str, tuple[str, ...]]:
    """The columns standing for each kind in a game's rounds: :data:`STANDS_FOR` and the game's own."""
    return {**STANDS_FOR, **_own(game).STANDS_FOR}


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
            if c not in table.column_names:
                continue
            if pa.types.is_list(table.schema.field(c).type):
                null = lengths(table[c]) == 0
                if not null.any():
                    continue
            elif table[c].null_count:
                null = to_numpy(pc.is_null(table[c]), False).astype(bool)
            else:
                continue
            out[kind] = out[kind] | null if kind in out else null
    for kind, mask in _own(game).lacking(table).items():  # what only the game knows a round lacks
        out[kind] = out[kind] | mask if kind in out else mask
    return out


class _Nothing:
    STANDS_FOR: dict[str, tuple[str, ...]] = {}

    @staticmethod
    def lacking(table: pa.Table) -> dict[str, np.ndarray]:
        return {}


def _own(game: str) -> Any:
    """The game's evidence module (``Game.evidence``), or one that knows of nothing lacking."""
    from .. import games

    return games.get(game).evidence or _Nothing


def cannot(lack: dict[str, np.ndarray], needs: Iterable[str]) -> np.ndarray | None:
    """The rounds a rule needing ``needs`` cannot check (None: it can check them all)."""
    masks = [lack[k] for k in needs if k in lack]
    if not masks:
        return None
    return functools.reduce(np.logical_or, masks)
