"""A three card poker record's own fields (dealer cards, hands) to stored columns, and back."""

from __future__ import annotations

from typing import Any

from ...ingest.jsonl import drop_none, spec_cards, spec_money
from ...ingest.records import BadRecord, read_cards, read_int, read_list, read_money, read_str

__all__ = ["parse", "to_record"]


def parse(obj: dict, row: dict[str, Any]) -> None:
    """Fill ``row`` with the three card poker fields of record ``obj``; BadRecord says what is wrong."""
    row["dealer_cards"] = read_cards(obj, "dealer_cards")
    hands = []
    for i, h in enumerate(read_list(obj, "hands", required=True)):
        where = f"hands[{i}]."
        decision = read_str(h, "decision", where)
        if decision not in ("play", "fold"):
            raise BadRecord(f"field {where}decision {decision!r} is not play or fold")
        hands.append({
            "seat": read_int(h, "seat", where, lo=0), "cards": read_cards(h, "cards", where), "decision": decision,
            "ante": read_money(h, "ante", where), "play": read_money(h, "play", where, required=False) or 0.0,
            "pair_plus": read_money(h, "pair_plus", where, required=False),
            "net_ante": read_money(h, "net_ante", where, signed=True),
            "net_play": read_money(h, "net_play", where, required=False, signed=True) or 0.0,
            "ante_bonus": read_money(h, "ante_bonus", where, required=False) or 0.0,
            "net_pair_plus": read_money(h, "net_pair_plus", where, required=False, signed=True),
        })
    row["hands"] = hands


def to_record(row: dict[str, Any], rec: dict[str, Any]) -> None:
    """The inverse of :func:`parse`: a stored row's three card poker fields into spec record ``rec``."""
    rec["dealer_cards"] = spec_cards(row["dealer_cards"])
    rec["hands"] = [drop_none({
        "seat": h["seat"], "cards": spec_cards(h["cards"]), "decision": h["decision"],
        "ante": spec_money(h["ante"]), "play": spec_money(h["play"]), "pair_plus": spec_money(h["pair_plus"]),
        "net_ante": spec_money(h["net_ante"]), "net_play": spec_money(h["net_play"]),
        "ante_bonus": spec_money(h["ante_bonus"]), "net_pair_plus": spec_money(h["net_pair_plus"])})
        for h in row["hands"] or []]
