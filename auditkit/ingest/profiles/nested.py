"""The records of a JSON document at a ``[source] records`` path, at any depth: ``"export.rounds"``
names the array of records; ``"rounds[].players[].hands"`` steps into every element of each array
marked ``[]`` on the way, and each element of the last array is a row carrying its parents' fields,
named by their path (``rounds[].id``, ``rounds[].players[].seat``). A field holding an object is also
reached by a dotted path (``result.net``, ``rounds[].dealer.cards``): :func:`cells`."""

from __future__ import annotations

import json
from typing import Any

from .raw import json_text

__all__ = ["steps", "records", "cells"]


def steps(path: str) -> list[tuple[str, bool]]:
    """``(key, into every element)`` of each step of ``path`` (ValueError when it is not one)."""
    out: list[tuple[str, bool]] = []
    for k, part in enumerate(path.split(".")):
        each = part.endswith("[]")
        key = part[:-2] if each else part
        if "[" in key or "]" in key or (not key and not (each and k == 0)):
            raise ValueError(f"{part!r} is not a key (a name, name[] to step into each element, or [] first "
                             "for a document that is an array)")
        out.append((key, each))
    return out


def records(doc: Any, path: str | None) -> tuple[list[tuple[int, Any]], list[tuple[int, str, str]]]:
    """The rows at ``path`` (numbered from 1 in document order: the elements of the last array, each an
    object with its parents' fields added) and the parents that give none though they should
    (row number, reason, text). ValueError when the path does not lead to an array."""
    if not path:
        if not isinstance(doc, list):
            raise ValueError("the records are not a JSON array (source.records names it)")
        return list(enumerate(doc, 1)), []
    rows: list[tuple[int, Any]] = []
    bad: list[tuple[int, str, str]] = []
    _walk(doc, steps(path), "", {}, rows, bad, top=True)
    return rows, bad


def _walk(node: Any, rest: list[tuple[str, bool]], label: str, parents: dict[str, Any],
          rows: list[tuple[int, Any]], bad: list[tuple[int, str, str]], top: bool = False) -> None:
    key, each = rest[0]
    if key:
        if not isinstance(node, dict) or key not in node:
            if top:
                raise ValueError(f"no key {key!r} at {label or 'the document'}")
            bad.append((len(rows) + len(bad) + 1, f"{label or 'the document'} has no {key!r}",
                        json.dumps(node, ensure_ascii=False)[:4096]))
            return
        node = node[key]
    here = f"{label}.{key}" if label and key else label or key
    last = len(rest) == 1
    if (last or each) and not isinstance(node, list):
        if top:
            raise ValueError(f"{here or 'the document'} is not a JSON array")
        bad.append((len(rows) + len(bad) + 1, f"{here} is not a JSON array",
                    json.dumps(node, ensure_ascii=False)[:4096]))
        return
    if last:
        for item in node:
            n = len(rows) + len(bad) + 1
            rows.append((n, {**parents, **item} if isinstance(item, dict) and parents else item))
        return
    if not each:
        _walk(node, rest[1:], here, parents, rows, bad, top)
        return
    label = f"{here}[]"
    nxt = rest[1][0]
    for item in node:
        if not isinstance(item, dict):
            bad.append((len(rows) + len(bad) + 1, f"an element of {label} is not a JSON object",
                        json.dumps(item, ensure_ascii=False)[:4096]))
            continue
        mine = {f"{label}.{k}": v for k, v in item.items() if k != nxt}
        _walk(item, rest[1:], label, {**parents, **mine}, rows, bad)


def cells(obj: dict[str, Any]) -> dict[str, str | None]:
    """A JSON record's cells: each field as text (an array or object as JSON text), and each field of an
    object, at any depth, also under its dotted path (``{"result": {"net": 5}}``: ``result.net`` is ``5``)."""
    out: dict[str, str | None] = {}
    stack = [("", obj)]
    while stack:
        prefix, node = stack.pop()
        for k, v in node.items():
            out[prefix + k] = json_text(v)
            if isinstance(v, dict):
                stack.append((f"{prefix}{k}.", v))
    return out
