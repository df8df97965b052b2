"""Stored columns of a baccarat (and mini baccarat) round, after the common ones."""

from __future__ import annotations

import pyarrow as pa

from ...schema import CARDS

__all__ = ["COLUMNS"]

COLUMNS = [
    pa.field("player_cards", CARDS), pa.field("banker_cards", CARDS),
    pa.field("outcome", pa.string()),
    pa.field("announced_player", pa.int16()), pa.field("announced_banker", pa.int16()),
    pa.field("deal_order", pa.string()),
    pa.field("cut_card", pa.bool_()),
]
