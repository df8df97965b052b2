"""Stored columns of a pai gow poker round, after the common ones: one struct per hand."""

from __future__ import annotations

import pyarrow as pa

from ...schema import CARDS

__all__ = ["HAND", "COLUMNS"]

HAND = pa.struct([
    ("seat", pa.int32()), ("position", pa.int8()), ("cards", CARDS),
    ("high", CARDS), ("low", CARDS), ("wager", pa.float64()), ("net", pa.float64()),
])
COLUMNS = [
    pa.field("dice", CARDS),
    pa.field("first_position", pa.int8()),
    pa.field("cards_remaining", pa.int16()),
    pa.field("dealer_cards", CARDS), pa.field("dealer_high", CARDS), pa.field("dealer_low", CARDS),
    pa.field("hands", pa.list_(HAND)),
]
