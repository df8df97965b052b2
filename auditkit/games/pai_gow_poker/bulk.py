"""The bulk reader of pai gow poker records: parsed JSON columns to stored columns, and the
rows they are right for (:mod:`auditkit.ingest.fields`); mirrors :func:`.parse.parse` and its
event readers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...ingest import fields as F
from .schema import HAND

__all__ = ["FIELDS", "EVENT_FIELDS", "read", "read_events"]

_CARDS = pa.list_(pa.string())
FIELDS = [
    pa.field("dice", pa.list_(pa.int64())),
    pa.field("first_position", pa.int64()), pa.field("cards_remaining", pa.int64()),
    pa.field("dealer", pa.struct([("cards", _CARDS), ("high", _CARDS), ("low", _CARDS)])),
    pa.field("hands", pa.list_(pa.struct([
        ("seat", pa.int64()), ("position", pa.int64()), ("cards", _CARDS), ("high", _CARDS), ("low", _CARDS),
        ("wager", pa.float64()), ("net", pa.float64())]))),
]
EVENT_FIELDS = [pa.field("count", pa.int64()), pa.field("dice", pa.list_(pa.int64())),
                pa.field("exposed", pa.bool_()), pa.field("misdeal", pa.bool_()),
                pa.field("high", _CARDS), pa.field("low", _CARDS)]
"""The fields of its events, as ``pyarrow.json`` parses them."""
_COUNTED = ("face_up_card", "stacks_dealt")


def read(t: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Stored pai gow poker columns of parsed rows, and the rows they are right for."""
    dice, ok = F.dice(t["dice"])
    ok &= F.integer(t["first_position"], 1, 7, True) & F.integer(t["cards_remaining"], 0, 53, False)
    dealer = t["dealer"]
    d_cards, ok_cards = F.cards(F.child(dealer, "cards"), required=True)
    d_high, ok_high = F.cards(F.child(dealer, "high"), required=False)
    d_low, ok_low = F.cards(F.child(dealer, "low"), required=False)
    ok &= F.valid(dealer) & ok_cards & ok_high & ok_low
    lengths, h, is_obj = F.struct_items(t["hands"])
    cards, ok_cards = F.cards(h["cards"], required=True)
    high, ok_high = F.cards(h["high"], required=False)
    low, ok_low = F.cards(h["low"], required=False)
    good = (is_obj & ok_cards & ok_high & ok_low & F.integer(h["seat"], 0, None, True)
            & F.integer(h["position"], 1, 7, False) & F.money(h["wager"], False, True) & F.money(h["net"], True, True))
    hands = pa.StructArray.from_arrays(
        [h["seat"].cast(pa.int32(), safe=False), h["position"].cast(pa.int8(), safe=False), cards, high, low,
         h["wager"], h["net"]], fields=list(HAND))
    ok &= F.valid(t["hands"]) & ~F.any_per_row(~good, lengths)
    return {"dice": dice, "first_position": t["first_position"].cast(pa.int8(), safe=False),
            "cards_remaining": t["cards_remaining"].cast(pa.int16(), safe=False),
            "dealer_cards": d_cards, "dealer_high": d_high, "dealer_low": d_low,
            "hands": F.rebuild_list(lengths, hands)}, ok


def read_events(kind: pa.Array, e: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    """The stored fields of pai gow poker events (a count, the dice of a roll, exposed, misdeal,
    a reset's high and low hands; none for the other types), and the events they are right for."""
    counted = F.choice(kind, _COUNTED)
    roll, out_of_order = F.choice(kind, ("roll",)), F.choice(kind, ("card_out_of_order",))
    supervisor, reset = F.choice(kind, ("supervisor_called",)), F.choice(kind, ("dealer_hand_reset",))
    dice, ok_dice = F.dice(e["dice"])
    high, ok_high = F.cards(e["high"], required=True)
    low, ok_low = F.cards(e["low"], required=True)
    ok = (~counted | F.integer(e["count"], 0, None, True)) & (~roll | ok_dice) & (~reset | (ok_high & ok_low))
    return {"count": F.only(counted, e["count"]), "dice": F.only(roll, dice),
            "exposed": F.only(out_of_order, F.flag(e["exposed"])), "misdeal": F.only(supervisor, F.flag(e["misdeal"])),
            "high": F.only(reset, high), "low": F.only(reset, low)}, ok
