"""Stored columns of a blackjack round, after the common ones: one struct per hand."""

from __future__ import annotations

import pyarrow as pa

from ...schema import CARDS

__all__ = ["HAND", "COLUMNS"]

HAND = pa.struct([
    ("seat", pa.int32()), ("hand", pa.int32()), ("cards", CARDS),
    ("wager", pa.float64()), ("initial_wager", pa.float64()),
    ("doubled", pa.bool_()), ("split", pa.bool_()), ("surrendered", pa.bool_()),
    ("net", pa.float64()),
])
COLUMNS = [
    pa.field("dealer_cards", CARDS),
    pa.field("table_min", pa.float64()), pa.field("table_max", pa.float64()),
    pa.field("hands", pa.list_(HAND)),
]
