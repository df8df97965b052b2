"""The bulk reader of three card poker records: parsed JSON columns to stored columns, and the
rows they are right for (:mod:`auditkit.ingest.fields`); mirrors :func:`.parse.parse`."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...ingest import fields as F
from .schema import HAND

__all__ = ["FIELDS", "read"]

_MONEY = ("ante", "play", "pair_plus", "net_ante", "net_play", "ante_bonus", "net_pair_plus")
FIELDS = [
    pa.field("dealer_cards", pa.list_(pa.string())),
    pa.field("hands", pa.list_(pa.struct([("seat", pa.int64()), ("cards", pa.list_(pa.string())),
                                          ("decision", pa.string()), *((m, pa.float64()) for m in _MONEY)]))),
]
_REQUIRED = {"ante": (True, False), "net_ante": (True, True), "play": (False, False), "pair_plus": (False, False),
             "net_play": (False, True), "ante_bonus": (False, False), "net_pair_plus": (False, True)}
"""Each amount: (required, signed)."""
_ZERO_WHEN_ABSENT = ("play", "net_play", "ante_bonus")


def read(t: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Stored three card poker columns of parsed rows, and the rows they are right for."""
    dealer, ok = F.cards(t["dealer_cards"], required=True)
    lengths, h, is_obj = F.struct_items(t["hands"])
    cards, ok_cards = F.cards(h["cards"], required=True)
    good = (is_obj & ok_cards & F.integer(h["seat"], 0, None, True) & F.choice(h["decision"], ("play", "fold")))
    for name, (required, signed) in _REQUIRED.items():
        good &= F.money(h[name], signed, required)
    money = {m: pc.add(pc.fill_null(h[m], 0.0), 0.0) if m in _ZERO_WHEN_ABSENT else h[m] for m in _MONEY}  # -0.0 too
    hands = pa.StructArray.from_arrays(
        [h["seat"].cast(pa.int32(), safe=False), cards, h["decision"], *(money[m] for m in _MONEY)], fields=list(HAND))
    ok &= F.valid(t["hands"]) & ~F.any_per_row(~good, lengths)
    return {"dealer_cards": dealer, "hands": F.rebuild_list(lengths, hands)}, ok
