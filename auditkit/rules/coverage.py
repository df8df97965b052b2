"""What the data cannot show: the kinds of evidence a rule needs, and which rounds lack them.

A source that does not record some evidence for a round (a vendor export without suits, say)
names it in the round's ``not_recorded`` column; a stored column a kind stands for that is null
for a round (a JSONL log without announced totals) also means the round lacks it. A rule that
needs a kind the round lacks cannot check it: the engine neither flags nor passes that round,
and counts it as *not checkable* (by kind) instead.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import combine, flat_values, lengths, parents, to_numpy

if TYPE_CHECKING:
    import pandas as pd

    from .registry import Rule

__all__ = ["EVIDENCE", "STANDS_FOR", "stands_for", "columns_for", "lacking", "cannot", "Tally", "COLUMNS",
           "coverage_table", "of_store", "format_coverage", "METADATA_KEY", "to_json", "from_json", "from_parquet",
           "write_coverage"]

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


def of_store(store: Any, games: Sequence[str] | None = None, start: str | None = None,
             end: str | None = None, *, tables: Sequence[str] | None = None, dealers: Sequence[str] | None = None,
             checks: Sequence[str] | None = None, findings: pd.DataFrame | None = None) -> pd.DataFrame:
    """The coverage table of a store's validated days (of some games, between two days), without
    validating again: which rounds each rule could not check is read from the few columns that tell
    (:func:`columns_for`), the findings from the stored findings (or ``findings``, when given: those a
    report selected). A report filtered to some ``tables`` (ids or globs), ``dealers`` or ``checks``
    (citations and rule ids) gets the coverage of the selected rounds and checks only."""
    from .registry import rules_for

    tally = Tally()
    for game in games or store.games():
        rules = [r for r in rules_for(game) if not checks or r.rule_id in checks or r.citation in checks]
        cols = columns_for(game, {k for r in rules for k in r.needs})
        if tables or dealers:
            cols = list(dict.fromkeys([*cols, "table_id", "dealer_id"]))
        for date in store.dates(game, start, end):
            for batch in store.scan(game, date, columns=cols):
                if tables or dealers:
                    batch = batch.filter(_selected(batch, tables, dealers))
                    if not batch.num_rows:  # a game none of whose rounds is selected has no row
                        continue
                lack = lacking(batch, game)
                for r in rules:
                    tally.add(game, r, batch.num_rows, cannot(lack, r.needs), lack, np.empty(0, np.int64))
    found = store.findings(list(games) if games else None, start, end) if findings is None else findings
    if findings is None and (tables or dealers):
        found = found[_selected(found, tables, dealers)]
    for (game, rule_id), n in found.groupby(["game", "rule_id"]).size().items():
        if (game, rule_id) in tally.counts:
            tally.counts[game, rule_id][_FINDINGS] += int(n)
    return tally.table()


def _selected(rows: Any, tables: Sequence[str] | None, dealers: Sequence[str] | None) -> np.ndarray:
    """The mask of the rows (an Arrow table or a frame) at these tables (ids or globs) and dealers."""
    import fnmatch

    ids = np.asarray(to_numpy(rows["table_id"], None) if isinstance(rows, pa.Table) else rows["table_id"], object)
    keep = np.ones(len(ids), dtype=bool)
    if tables:
        ok = {t for t in set(ids.tolist()) if t is not None and any(fnmatch.fnmatchcase(t, p) for p in tables)}
        keep &= np.isin(ids, list(ok)) if ok else np.zeros(len(ids), dtype=bool)
    if dealers:
        who = np.asarray(to_numpy(rows["dealer_id"], None) if isinstance(rows, pa.Table) else rows["dealer_id"],
                         object)
        keep &= np.isin(who, list(dealers))
    return keep


def format_coverage(table: pd.DataFrame, see: str | None = None) -> str:
    """The terminal's coverage block: the rules that could not check some rounds, and why; ``see``: where
    the whole table was written (a file named only when it was written)."""
    if table.empty:  # nothing validated or selected: no round, not a clean one
        return "coverage: no round in scope"
    short = table[table["rounds_not_checkable"] > 0]
    if short.empty:
        return "coverage: every check could check every round in scope"
    where = f"; see {see}" if see else ""
    lines = [f"not checkable (the data does not show it{where}): {len(short)} check(s)"]
    width = max(len(c) for c in short["citation"])
    rule_width = max(len(c) for c in short["rule_id"])
    for r in short.itertuples(index=False):
        lines.append(f"  {r.game:<17} {r.citation:<{width}}  {r.rule_id:<{rule_width}}  "
                     f"{r.rounds_not_checkable:>7} of {r.rounds_in_scope} round(s): {r.reasons}")
    return "\n".join(lines)


METADATA_KEY = b"auditkit.coverage"
"""The key of the coverage table (JSON: a list of rows) in a findings Parquet file's schema metadata."""


def to_json(table: pd.DataFrame) -> str:
    """The coverage table as JSON (a list of rows)."""
    return json.dumps(table[COLUMNS].to_dict(orient="records"))


def from_json(text: str | bytes) -> pd.DataFrame:
    """A coverage table from :func:`to_json`."""
    import pandas as pd

    return pd.DataFrame(json.loads(text), columns=COLUMNS)


def from_parquet(path: str | Path) -> pd.DataFrame | None:
    """The coverage table a findings Parquet file carries (None: it carries none)."""
    import pyarrow.parquet as pq

    text = (pq.read_schema(path).metadata or {}).get(METADATA_KEY)
    return None if text is None else from_json(text)


def write_coverage(table: pd.DataFrame, folder: str | Path) -> str:
    """Write the coverage table as ``coverage.csv`` (spreadsheet-safe, atomic) in ``folder``; its name."""
    from ..report import write_csv

    write_csv(table[COLUMNS], Path(folder) / "coverage.csv")
    return "coverage.csv"
