"""The plain per-line reader: one raw JSONL line to a stored row or the reason it is a bad record.

This is the reference the bulk reader (:mod:`auditkit.ingest.blocks`) is
property-tested against, and the path every line the bulk reader cannot vouch
for takes: ``json.loads`` (a key named twice in one object, at any depth, makes the line a bad
record: which value was meant?), then :func:`~auditkit.ingest.records.parse_record`. Live mode
reads its lines here too.
"""

from __future__ import annotations

import json
from typing import Any

from .records import BadRecord, is_unicode, parse_record

__all__ = ["decode_line", "from_object", "storable"]


class _NamedTwice(ValueError):
    """A JSON object naming one key twice."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _NamedTwice(key)
            seen.add(key)
    return obj


def _long_int(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # more than 4,300 digits (Python's limit): read as a float
        return float(digits)


def _json(text: str) -> tuple[Any, str | None]:
    try:
        try:
            return json.loads(text, object_pairs_hook=_pairs), None
        except json.JSONDecodeError as exc:
            msg = exc.msg.removesuffix(" at")  # 'Invalid control character at' already ends in "at"
            return None, f"not valid JSON: {msg} at column {exc.colno}"
        except _NamedTwice:
            raise
        except ValueError:  # an integer of more than 4,300 digits: read as a float
            return json.loads(text, parse_int=_long_int, object_pairs_hook=_pairs), None
    except _NamedTwice as exc:
        return None, f"key {json.dumps(str(exc))[:200]} named twice in one object (a duplicate JSON key)"
    except RecursionError:
        return None, "not valid JSON: nested too deeply"


def decode_line(raw: bytes) -> tuple[Any, str | None]:
    """The JSON value of a non-blank line, or why it cannot be read."""
    if not raw.strip(b"\0"):
        return None, "line of NUL bytes (a file padded with zeros?)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"line is not UTF-8: {exc}"
    return _json(text)


def from_object(obj: Any) -> tuple[str, str, dict[str, Any]] | tuple[None, str, str | None]:
    """``(game, date, row)`` of a decoded round record (a JSON value or a CSV row), or
    ``(None, reason, round_id or None)``."""
    try:
        return parse_record(obj)
    except BadRecord as exc:
        round_id = obj.get("round_id") if isinstance(obj, dict) else None
        return None, str(exc), storable(round_id)


def storable(round_id: Any) -> str | None:
    """The round id of a bad record for its quarantine entry: a string UTF-8 can hold (no lone
    surrogate such as JSON ``"\\ud800"``), else None (the raw line keeps it)."""
    return round_id if isinstance(round_id, str) and is_unicode(round_id) else None
