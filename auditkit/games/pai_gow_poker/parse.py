"""A pai gow poker record's own fields (dice, positions, dealer and hands, events) to stored columns, and back."""

from __future__ import annotations

from typing import Any

from ...ingest.jsonl import drop_none, spec_cards, spec_money
from ...ingest.records import BadRecord, read_bool, read_cards, read_dice, read_int, read_list, read_money, read_value

__all__ = ["parse", "to_record", "EVENTS"]


def parse(obj: dict, row: dict[str, Any]) -> None:
    """Fill ``row`` with the pai gow poker fields of record ``obj``; BadRecord says what is wrong."""
    row["dice"] = read_dice(obj)
    row["first_position"] = read_int(obj, "first_position", lo=1, hi=7)
    row["cards_remaining"] = read_int(obj, "cards_remaining", required=False, lo=0, hi=53)
    dealer = read_value(obj, "dealer", "", True)
    if not isinstance(dealer, dict):
        raise BadRecord("field dealer must be an object {cards, high, low}")
    row["dealer_cards"] = read_cards(dealer, "cards", "dealer.")
    row["dealer_high"] = read_cards(dealer, "high", "dealer.", required=False)
    row["dealer_low"] = read_cards(dealer, "low", "dealer.", required=False)
    hands = []
    for i, h in enumerate(read_list(obj, "hands", required=True)):
        where = f"hands[{i}]."
        hands.append({
            "seat": read_int(h, "seat", where, lo=0), "position": read_int(h, "position", where, required=False, lo=1, hi=7),
            "cards": read_cards(h, "cards", where),
            "high": read_cards(h, "high", where, required=False), "low": read_cards(h, "low", where, required=False),
            "wager": read_money(h, "wager", where), "net": read_money(h, "net", where, signed=True),
        })
    row["hands"] = hands


def to_record(row: dict[str, Any], rec: dict[str, Any]) -> None:
    """The inverse of :func:`parse`: a stored row's pai gow poker fields into spec record ``rec``."""
    rec["dice"] = list(row["dice"])
    rec["first_position"] = row["first_position"]
    if row.get("cards_remaining") is not None:
        rec["cards_remaining"] = row["cards_remaining"]
    rec["dealer"] = drop_none({"cards": spec_cards(row["dealer_cards"]), "high": spec_cards(row["dealer_high"]),
                                "low": spec_cards(row["dealer_low"])})
    rec["hands"] = [drop_none({
        "seat": h["seat"], "position": h["position"], "cards": spec_cards(h["cards"]),
        "high": spec_cards(h["high"]), "low": spec_cards(h["low"]), "wager": spec_money(h["wager"]),
        "net": spec_money(h["net"])}) for h in row["hands"] or []]


def _count(e: dict, ev: dict[str, Any], where: str) -> None:
    ev["count"] = read_int(e, "count", where, lo=0)


def _roll(e: dict, ev: dict[str, Any], where: str) -> None:
    ev["dice"] = read_dice(e, where)


def _out_of_order(e: dict, ev: dict[str, Any], where: str) -> None:
    ev["exposed"] = read_bool(e, "exposed", where)


def _supervisor(e: dict, ev: dict[str, Any], where: str) -> None:
    ev["misdeal"] = read_bool(e, "misdeal", where)


def _reset(e: dict, ev: dict[str, Any], where: str) -> None:
    ev["high"] = read_cards(e, "high", where)
    ev["low"] = read_cards(e, "low", where)


EVENTS = {"face_up_card": _count, "no_roll": None, "roll": _roll, "card_out_of_order": _out_of_order,
          "dealer_card_exposed": None, "card_exposed_during_stacks": None, "stacks_dealt": _count,
          "supervisor_called": _supervisor, "dealer_hand_reset": _reset, "reshuffle": None}
"""Event types of a pai gow poker record and the reader of each one's fields."""
