"""The bulk reader of blackjack records: parsed JSON columns to stored columns, and the rows
they are right for (:mod:`auditkit.ingest.fields`); mirrors :func:`.parse.parse` and its
wager events."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...ingest import fields as F
from .hands import ACTIONS
from .schema import HAND

__all__ = ["FIELDS", "EVENT_FIELDS", "read", "read_events"]

FIELDS = [
    pa.field("dealer_cards", pa.list_(pa.string())),
    pa.field("table_min", pa.float64()), pa.field("table_max", pa.float64()),
    pa.field("hands", pa.list_(pa.struct([
        ("seat", pa.int64()), ("hand", pa.int64()), ("cards", pa.list_(pa.string())), ("wager", pa.float64()),
        ("initial_wager", pa.float64()), ("doubled", pa.bool_()), ("split", pa.bool_()),
        ("surrendered", pa.bool_()), ("net", pa.float64())]))),
]
EVENT_FIELDS = [pa.field("seat", pa.int64()), pa.field("action", pa.string()), pa.field("amount", pa.float64())]
"""The fields of its events, as ``pyarrow.json`` parses them (a ``wager`` event's)."""


def read(t: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Stored blackjack columns of parsed rows, and the rows they are right for."""
    dealer, ok = F.cards(t["dealer_cards"], required=True)
    ok &= F.money(t["table_min"], False, False) & F.money(t["table_max"], False, False)
    lengths, h, is_obj = F.struct_items(t["hands"])
    cards, ok_cards = F.cards(h["cards"], required=True)
    wager, doubled, given = h["wager"], F.flag(h["doubled"]), h["initial_wager"]
    # absent: half the wager when doubled, else the wager (numpy on filled values: an all-null
    # parsed column's values are never read)
    w = pc.fill_null(wager, 0.0).to_numpy(zero_copy_only=False)
    initial = pa.array(np.where(F.valid(given), pc.fill_null(given, 0.0).to_numpy(zero_copy_only=False),
                                np.where(F.np_mask(doubled), w / 2, w)))
    good = (is_obj & ok_cards & F.integer(h["seat"], 0, None, True) & F.integer(h["hand"], 0, None, False)
            & F.money(wager, False, True) & F.money(h["initial_wager"], False, False) & F.money(h["net"], True, True))
    hands = pa.StructArray.from_arrays(
        [h["seat"].cast(pa.int32(), safe=False), pc.fill_null(h["hand"], 0).cast(pa.int32(), safe=False), cards,
         wager, initial, doubled, F.flag(h["split"]), F.flag(h["surrendered"]), h["net"]], fields=list(HAND))
    ok &= F.valid(t["hands"]) & ~F.any_per_row(~good, lengths)
    return {"dealer_cards": dealer, "table_min": t["table_min"], "table_max": t["table_max"],
            "hands": F.rebuild_list(lengths, hands)}, ok


def read_events(kind: pa.Array, e: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    """The stored fields of blackjack events (a ``wager`` event's seat, action and amount;
    ``first_card`` has none), and the events they are right for."""
    wager = F.choice(kind, ("wager",))
    ok = ~wager | (F.integer(e["seat"], 0, None, True) & F.choice(e["action"], ACTIONS)
                   & F.money(e["amount"], False, True))
    return {name: F.only(wager, e[name]) for name in ("seat", "action", "amount")}, ok
