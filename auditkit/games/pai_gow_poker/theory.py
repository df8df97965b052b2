"""Pai gow poker in the analysis: stakes only (the dealer sets by the house way, so no outcome has fixed odds)."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["EVENTS", "EXCLUSIVE", "EVENT_COLUMNS", "STAKE_COLUMNS", "stakes_and_nets"]

EVENTS: tuple[str, ...] = ()
EXCLUSIVE = False
EVENT_COLUMNS: list[str] = []
STAKE_COLUMNS = ["hands"]


def stakes_and_nets(hands: pa.StructArray) -> tuple[list[pa.Array], list[pa.Array]]:
    """The stake and net of each hand."""
    return [hands.field("wager")], [hands.field("net")]
