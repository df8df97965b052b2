"""Arrow schemas of the stored rounds (the common columns; each game adds its own), findings and quarantine.

Variable-length parts (cards, hands, wagers, events) are list columns, so a
batch always holds whole rounds. The partition columns ``game`` and ``date``
(local date of ``started_at``) live in the store's paths, not in the files.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from . import games

__all__ = ["CARDS", "WAGER", "EVENT", "COMMON", "OPTIONAL", "schema_for", "table_of", "STATUSES", "FINDINGS",
           "SUMMARIES", "QUARANTINE"]

STATUSES = ("completed", "void", "dead")

CARDS = pa.list_(pa.int8())
WAGER = pa.struct([
    ("seat", pa.int32()), ("bet", pa.string()), ("amount", pa.float64()), ("net", pa.float64()),
])
EVENT = pa.struct([
    ("type", pa.string()),
    ("seat", pa.int32()), ("action", pa.string()), ("amount", pa.float64()),  # blackjack wager events
    ("count", pa.int32()), ("dice", CARDS), ("exposed", pa.bool_()),           # pai gow events
    ("misdeal", pa.bool_()), ("high", CARDS), ("low", CARDS),
])

COMMON = [
    pa.field("round_id", pa.string(), nullable=False),
    pa.field("table_id", pa.string(), nullable=False),
    pa.field("dealer_id", pa.string()),
    pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("utc_offset", pa.int16(), nullable=False),  # minutes east of UTC, as the log wrote it
    pa.field("shoe_id", pa.string()),
    pa.field("round_seq", pa.int32()),
    pa.field("status", pa.string(), nullable=False),
    pa.field("wagers", pa.list_(WAGER)),
    pa.field("events", pa.list_(EVENT)),
    pa.field("source_file", pa.string(), nullable=False),
    pa.field("source_line", pa.int64(), nullable=False),
    pa.field("not_recorded", pa.list_(pa.string())),
    pa.field("house_rules", pa.list_(pa.struct([("name", pa.string()), ("value", pa.float64())]))),
]
"""The common columns. ``not_recorded``: the kinds of evidence the source did not record for the round
(:data:`auditkit.rules.coverage.EVIDENCE`); null when it recorded all (the JSONL log, the CSV layout).
Stores written before it read it as null, and a null leaves the round's content hash as it was.
``house_rules``: the round's own house rules (name, value) where its export records them per row
(a profile's ``rules.*`` fields: docs/profiles.md), read by :meth:`auditkit.rules.context.Context.param`
instead of the table's configured value; null otherwise."""

OPTIONAL = frozenset({"not_recorded", "house_rules"})
"""Common columns a reader may leave out: they are null when absent (a null adds nothing to a round's hash)."""

def table_of(columns: dict[str, pa.Array], schema: pa.Schema, rows: int) -> pa.Table:
    """A table of ``schema`` from arrays by name; an absent :data:`OPTIONAL` column is all null."""
    return pa.Table.from_arrays([columns[f.name] if f.name in columns or f.name not in OPTIONAL
                                 else pa.nulls(rows, f.type) for f in schema], schema=schema)


def schema_for(game: str) -> pa.Schema:
    """The stored schema of a game's rounds: :data:`COMMON`, then the game's own columns (the game
    registry, :mod:`auditkit.games`, imports nothing of auditkit: the schema asks it, not the reverse)."""
    from . import games

    return _schema(games.get(game))


@functools.cache
def _schema(game: games.Game) -> pa.Schema:
    return pa.schema([*COMMON, *game.columns])


FINDINGS = pa.schema([
    ("round_id", pa.string()), ("game", pa.string()), ("table_id", pa.string()),
    ("dealer_id", pa.string()), ("started_at", pa.string()),
    ("rule_id", pa.string()), ("citation", pa.string()), ("severity", pa.string()),
    ("message", pa.string()), ("expected", pa.string()), ("recorded", pa.string()),
    ("discrepancy", pa.float64()), ("expected_amount", pa.float64()), ("recorded_amount", pa.float64()),
    ("seats", pa.string()), ("shoe_id", pa.string()), ("date", pa.string()),
    ("source_file", pa.string()), ("source_line", pa.int64()),
    ("evidence", pa.map_(pa.string(), pa.float64())),
])
"""The findings table: the spec's report columns in order, the expected and recorded nets as numbers
(empty where no money is involved), then context columns, then the numbers the finding rests on
(``evidence``: name to number, in the rule's order; a name repeats when a finding joins several seats)."""

SUMMARIES = {"citation": ["game", "citation", "rule_id", "severity"], "table": ["game", "table_id"],
             "dealer": ["game", "dealer_id"], "day": ["game", "date"]}
"""The summaries of findings a run writes: ``summary_by_<name>.csv`` grouped by these columns."""

QUARANTINE = pa.schema([
    ("source_file", pa.string()), ("line", pa.int64()), ("round_id", pa.string()),
    ("reason", pa.string()), ("raw", pa.string()), ("sha256", pa.string()),
])
