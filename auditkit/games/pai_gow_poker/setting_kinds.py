"""Pai gow poker's own kinds of setting (``settings_schema.toml`` types), checked by
:mod:`auditkit.paytables` through ``Game.setting_kinds``: ``house_way``, the name of a built-in house
way or of a ``[pai_gow_poker.house_ways]`` table, and ``house_ways``, a licensee's house ways by name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .house_way import BUILTIN, HouseWayError, load_house_way

KINDS = ("house_way", "house_ways")


def value_reason(kind: str, value: Any) -> str | None:
    """Why ``value`` cannot be a setting of this kind on its own; None when it can."""
    if kind == "house_way":
        return None if isinstance(value, str) and value else (
            f"must be the name of a built-in house way ({', '.join(BUILTIN)}) or of a [pai_gow_poker.house_ways] table")
    return None if isinstance(value, dict) else "must be a table of house ways by name"


def item_reasons(kind: str, value: Any) -> Iterator[tuple[str, str]]:
    """(key, reason) of each part of a valid-shaped value that is wrong: a house way that does not load."""
    if kind != "house_ways":
        return
    for way, spec in value.items():
        try:
            load_house_way(spec if isinstance(spec, dict) else None)  # type: ignore[arg-type]
        except (HouseWayError, TypeError, ValueError) as exc:
            yield way, str(exc)


def merged_reason(kind: str, value: Any, section: Mapping[str, Any]) -> str | None:
    """Why ``value`` is wrong given the rest of its merged section: a house way named but not defined."""
    if kind == "house_way" and value not in BUILTIN and value not in section["house_ways"]:
        return (f"unknown house way (built-in: {', '.join(BUILTIN)}; defined: "
                f"{', '.join(section['house_ways']) or 'none'})")
    return None
