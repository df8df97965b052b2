"""The bulk reader of baccarat records: parsed JSON columns to stored columns, and the rows
they are right for (:mod:`auditkit.ingest.fields`); mirrors :func:`.parse.parse`."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...ingest import fields as F
from .tableau import OUTCOMES

__all__ = ["FIELDS", "read"]

FIELDS = [
    pa.field("player_cards", pa.list_(pa.string())), pa.field("banker_cards", pa.list_(pa.string())),
    pa.field("outcome", pa.string()),
    pa.field("announced", pa.struct([("player", pa.int64()), ("banker", pa.int64())])),
    pa.field("deal_order", pa.string()), pa.field("cut_card", pa.bool_()),
]


def read(t: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Stored baccarat columns of parsed rows, and the rows they are right for."""
    player, ok_player = F.cards(t["player_cards"], required=True)
    banker, ok_banker = F.cards(t["banker_cards"], required=True)
    a_player, a_banker = F.child(t["announced"], "player"), F.child(t["announced"], "banker")
    order = t["deal_order"]
    order_ok = ~F.valid(order) | F.np_mask(pc.match_substring_regex(order, r"^[PBpb]+$"))
    ok = (ok_player & ok_banker & F.choice(t["outcome"], OUTCOMES) & F.valid(t["shoe_id"])
          & F.valid(t["round_seq"]) & F.integer(a_player, 0, 9, False) & F.integer(a_banker, 0, 9, False)
          & order_ok)
    return {
        "player_cards": player, "banker_cards": banker, "outcome": t["outcome"],
        "announced_player": a_player.cast(pa.int16(), safe=False),
        "announced_banker": a_banker.cast(pa.int16(), safe=False),
        "deal_order": pc.ascii_upper(order), "cut_card": F.flag(t["cut_card"]),
    }, ok
