"""The coverage table in the reports: of a store's validated days without validating again
(:func:`of_store`), in the terminal (:func:`format_coverage`) and in a findings Parquet file's metadata
(:func:`to_json`, :func:`from_parquet`). Its columns are :data:`auditkit.rules.tally.COLUMNS`; the kinds
of evidence behind it :mod:`auditkit.rules.coverage`; ``coverage.csv`` is written with the other reports
(:func:`auditkit.report.write_coverage`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .columns import to_numpy
from .rules.coverage import cannot, columns_for, lacking
from .rules.tally import COLUMNS, Tally

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["of_store", "format_coverage", "METADATA_KEY", "to_json", "from_json", "from_parquet"]


def of_store(store: Any, games: Sequence[str] | None = None, start: str | None = None,
             end: str | None = None, *, tables: Sequence[str] | None = None, dealers: Sequence[str] | None = None,
             checks: Sequence[str] | None = None, findings: pd.DataFrame | None = None) -> pd.DataFrame:
    """The coverage table of a store's validated days (of some games, between two days), without
    validating again: which rounds each rule could not check is read from the few columns that tell
    (:func:`auditkit.rules.coverage.columns_for`), the findings from the stored findings (or ``findings``, when given: those a
    report selected). A report filtered to some ``tables`` (ids or globs), ``dealers`` or ``checks``
    (citations and rule ids) gets the coverage of the selected rounds and checks only."""
    from .rules.registry import rules_for

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
        tally.add_findings(game, rule_id, int(n))
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
