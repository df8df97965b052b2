"""Arrow schemas of the stored rounds: one table per game, one row per round.

Variable-length parts (cards, hands, wagers, events) are list columns, so a
batch always holds whole rounds. The partition columns ``game`` and ``date``
(local date of ``started_at``) live in the store's paths, not in the files.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "GAMES", "BACCARAT_GAMES", "CARDS", "WAGER", "EVENT", "COMMON", "SCHEMAS", "schema_for",
    "STATUSES", "FINDINGS", "QUARANTINE",
]

GAMES = ("baccarat", "mini_baccarat", "blackjack", "three_card_poker", "pai_gow_poker")
BACCARAT_GAMES = ("baccarat", "mini_baccarat")
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
]

BACCARAT = pa.schema(COMMON + [
    pa.field("player_cards", CARDS), pa.field("banker_cards", CARDS),
    pa.field("outcome", pa.string()),
    pa.field("announced_player", pa.int16()), pa.field("announced_banker", pa.int16()),
    pa.field("deal_order", pa.string()),
    pa.field("cut_card", pa.bool_()),
])

BLACKJACK_HAND = pa.struct([
    ("seat", pa.int32()), ("hand", pa.int32()), ("cards", CARDS),
    ("wager", pa.float64()), ("initial_wager", pa.float64()),
    ("doubled", pa.bool_()), ("split", pa.bool_()), ("surrendered", pa.bool_()),
    ("net", pa.float64()),
])
BLACKJACK = pa.schema(COMMON + [
    pa.field("dealer_cards", CARDS),
    pa.field("table_min", pa.float64()), pa.field("table_max", pa.float64()),
    pa.field("hands", pa.list_(BLACKJACK_HAND)),
])

TCP_HAND = pa.struct([
    ("seat", pa.int32()), ("cards", CARDS), ("decision", pa.string()),
    ("ante", pa.float64()), ("play", pa.float64()), ("pair_plus", pa.float64()),
    ("net_ante", pa.float64()), ("net_play", pa.float64()),
    ("ante_bonus", pa.float64()), ("net_pair_plus", pa.float64()),
])
THREE_CARD_POKER = pa.schema(COMMON + [
    pa.field("dealer_cards", CARDS),
    pa.field("hands", pa.list_(TCP_HAND)),
])

PAI_GOW_HAND = pa.struct([
    ("seat", pa.int32()), ("position", pa.int8()), ("cards", CARDS),
    ("high", CARDS), ("low", CARDS), ("wager", pa.float64()), ("net", pa.float64()),
])
PAI_GOW_POKER = pa.schema(COMMON + [
    pa.field("dice", CARDS),
    pa.field("first_position", pa.int8()),
    pa.field("cards_remaining", pa.int16()),
    pa.field("dealer_cards", CARDS), pa.field("dealer_high", CARDS), pa.field("dealer_low", CARDS),
    pa.field("hands", pa.list_(PAI_GOW_HAND)),
])

SCHEMAS: dict[str, pa.Schema] = {
    "baccarat": BACCARAT,
    "mini_baccarat": BACCARAT,
    "blackjack": BLACKJACK,
    "three_card_poker": THREE_CARD_POKER,
    "pai_gow_poker": PAI_GOW_POKER,
}


def schema_for(game: str) -> pa.Schema:
    """The stored schema of a game's rounds."""
    return SCHEMAS[game]


FINDINGS = pa.schema([
    ("round_id", pa.string()), ("game", pa.string()), ("table_id", pa.string()),
    ("dealer_id", pa.string()), ("started_at", pa.string()),
    ("rule_id", pa.string()), ("citation", pa.string()), ("severity", pa.string()),
    ("message", pa.string()), ("expected", pa.string()), ("recorded", pa.string()),
    ("discrepancy", pa.float64()),
    ("seats", pa.string()), ("shoe_id", pa.string()), ("date", pa.string()),
    ("source_file", pa.string()), ("source_line", pa.int64()),
])
"""The findings table: the spec's report columns in order, then context columns."""

QUARANTINE = pa.schema([
    ("source_file", pa.string()), ("line", pa.int64()), ("round_id", pa.string()),
    ("reason", pa.string()), ("raw", pa.string()), ("sha256", pa.string()),
])
