"""Stored columns of a three card poker round, after the common ones: one struct per hand."""

from __future__ import annotations

import pyarrow as pa

from ...schema import CARDS

__all__ = ["HAND", "COLUMNS"]

HAND = pa.struct([
    ("seat", pa.int32()), ("cards", CARDS), ("decision", pa.string()),
    ("ante", pa.float64()), ("play", pa.float64()), ("pair_plus", pa.float64()),
    ("net_ante", pa.float64()), ("net_play", pa.float64()),
    ("ante_bonus", pa.float64()), ("net_pair_plus", pa.float64()),
])
COLUMNS = [
    pa.field("dealer_cards", CARDS),
    pa.field("hands", pa.list_(HAND)),
]
