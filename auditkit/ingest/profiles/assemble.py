"""A round's record from its rows' field values (:mod:`auditkit.ingest.profiles.mapping` converts them):
round fields agreed across rows, list items one per row, nets from amounts returned, and the record
made as the log writes it (lists left out, split hands without a flag). The amounts and nets a row
gives together are checked here too: an empty one is never read as 0."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .model import LISTS, Profile

__all__ = ["PAIRS", "empty_amounts", "plan", "record", "one_row_records", "nets", "as_logged", "num"]


def num(v: float) -> float | int:
    v = round(v, 6)
    return int(v) if float(v).is_integer() else v


def as_logged(prof: Profile, rec: dict[str, Any], infer_split: bool) -> None:
    """The record as the log would write it: the lists the export leaves out empty (``left_out``), and,
    where the export has no split flag, the hands of a seat that has several marked split."""
    for name in ("events", "wagers"):
        if name in prof.left_out:
            rec.setdefault(name, [])
    hands = rec.get("hands")
    if not infer_split or not hands or len(hands) < 2 or rec.get("game") not in _split_games():
        return
    seats: dict[Any, int] = {}
    for h in hands:
        seats[h.get("seat")] = seats.get(h.get("seat"), 0) + 1
    for h in hands:
        if seats[h.get("seat")] > 1 and h.get("seat") is not None:
            h.setdefault("split", True)


@functools.cache
def _split_games() -> frozenset[str]:
    """The games (by every name they answer to) whose hands carry a ``split`` flag."""
    from ... import games

    out: set[str] = set()
    for g in games.games():
        module = g.bulk
        for f in getattr(module, "FIELDS", []):
            if f.name == "hands" and f.type.value_type.get_field_index("split") >= 0:
                out.update(g.names)
    return frozenset(out)


PAIRS = {"hands": (("wager", "net"), ("ante", "net_ante"), ("play", "net_play"), ("pair_plus", "net_pair_plus")),
         "wagers": (("amount", "net"),)}
"""An amount and its net: where a row gives one, the other's empty cell is never read as 0."""


def empty_amounts(prof: Profile, values: dict[str, list[Any]], whens: dict[str, np.ndarray],
                   why: dict[int, str], n: int) -> None:
    """A reason for every row that gives an amount (not 0) and leaves its net's cell empty, or the other
    way round (unless the profile says the export does not record wagers)."""
    if "wagers" in prof.not_recorded:
        return
    every = np.ones(n, bool)
    for name, pairs in PAIRS.items():
        for stake, net in pairs:
            a, b = f"{name}.{stake}", f"{name}.{net}"
            if a not in values or b not in values:
                continue
            va, vb = np.array(values[a] + [0], dtype=object)[:-1], np.array(values[b] + [0], dtype=object)[:-1]
            rows = whens.get(a, every) & whens.get(b, every)
            none_a, none_b = np.equal(va, None), np.equal(vb, None)
            zero_a, zero_b = np.zeros(n, bool), np.zeros(n, bool)  # an amount of 0 with no net (a fold's play)
            zero_a[~none_a] = np.equal(va[~none_a], 0)
            zero_b[~none_b] = np.equal(vb[~none_b], 0)
            for i in np.flatnonzero(rows & none_b & ~none_a & ~zero_a).tolist():
                why.setdefault(i, f"{b}: empty cell, though {a} is {values[a][i]}: an empty amount is never "
                                  "read as 0 (default = \"0\" if the export writes 0 as empty)")
            for i in np.flatnonzero(rows & none_a & ~none_b & ~zero_b).tolist():
                why.setdefault(i, f"{a}: empty cell, though {b} is {values[b][i]}: an empty amount is never "
                                  "read as 0 (default = \"0\" if the export writes 0 as empty)")


ROUND, ITEM, COLLECT = 0, 1, 2


def plan(prof: Profile, values: dict[str, list[Any]], whens: dict[str, np.ndarray]) -> list[tuple]:
    """(head, tail, kind, values, rows mask or None) of every field, worked out once per source."""
    plan = []
    for target, vals in values.items():
        head, _, tail = target.partition(".")
        kind = ITEM if head in LISTS and tail else COLLECT if prof.fields[target].collect else ROUND
        plan.append((head, tail, kind, vals, whens.get(target)))
    return plan


def record(prof: Profile, idx: list[int], plan: list[tuple], lists: list[str]) -> dict[str, Any]:
    """The round record of the rows ``idx``; ValueError when they disagree."""
    rec: dict[str, Any] = {}
    if len(idx) == 1:  # one row, one round: nothing to agree or collect across rows
        return nets(prof, lists, one_row_records(plan, lists, idx)[0])
    per_row: dict[int, dict[str, dict[str, Any]]] = {i: {} for i in idx}
    for head, tail, kind, vals, mask in plan:
        rows = idx if mask is None else [i for i in idx if mask[i]]
        if kind == ITEM:
            for i in rows:
                if vals[i] is not None:
                    per_row[i].setdefault(head, {})[tail] = vals[i]
        elif kind == COLLECT:
            got: list[Any] = []
            for i in rows:
                v = vals[i]
                if v is not None:
                    got.extend(v if isinstance(v, list) else [v])
            if got:
                _put(rec, head, tail, got)
        else:
            distinct: list[Any] = []
            for i in rows:
                v = vals[i]
                if v is not None and v not in distinct:
                    distinct.append(v)
            if len(distinct) > 1:
                target = f"{head}.{tail}" if tail else head
                raise ValueError(f"its rows disagree on {target}: {', '.join(map(repr, distinct[:4]))}")
            if distinct:
                _put(rec, head, tail, distinct[0])
    for name in lists:
        lst = [per_row[i][name] for i in idx if name in per_row[i]]
        for item in lst:
            _net(prof, name, item)
        if name != "events":  # events repeat (a seat bets, then doubles): in the rows' order
            _no_twice(name, lst)
        rec[name] = lst
    return rec


def one_row_records(plan: list[tuple], lists: list[str], rows: list[int]) -> list[dict[str, Any]]:
    """The records of rounds of one row each (the rows ``rows``), built a field at a time; their nets
    from amounts returned are left to :func:`nets`."""
    recs: list[dict[str, Any]] = [{} for _ in rows]
    items = {name: [{} for _ in rows] for name in lists}
    for head, tail, kind, vals, mask in plan:
        keep = [vals[i] for i in rows] if mask is None else [vals[i] if mask[i] else None for i in rows]
        if kind == ITEM:
            for d, v in zip(items[head], keep, strict=True):
                if v is not None:
                    d[tail] = v
            continue
        if kind == COLLECT:
            keep = [v if v is None or isinstance(v, list) else [v] for v in keep]
        if tail:
            for rec, v in zip(recs, keep, strict=True):
                if v is not None:
                    rec.setdefault(head, {})[tail] = v
        else:
            for rec, v in zip(recs, keep, strict=True):
                if v is not None:
                    rec[head] = v
    for name in lists:
        for rec, item in zip(recs, items[name], strict=True):
            rec[name] = [item] if item else []
    return recs


def nets(prof: Profile, lists: list[str], rec: dict[str, Any]) -> dict[str, Any]:
    """The record with its hands' and wagers' nets from amounts returned (ValueError without the amount)."""
    for name in lists:
        for item in rec[name]:
            _net(prof, name, item)
    return rec


def _put(rec: dict[str, Any], head: str, tail: str, value: Any) -> None:
    if tail:
        rec.setdefault(head, {})[tail] = value
    else:
        rec[head] = value


def _net(prof: Profile, name: str, item: dict[str, Any]) -> None:
    """A net from the amount returned: returned - the amount wagered."""
    spec = prof.fields.get(f"{name}.net")
    if spec is None or not spec.returned or "net" not in item:
        return
    amount = item.get("amount" if name == "wagers" else "wager")
    if amount is None:
        raise ValueError(f"a {name[:-1]} has an amount returned but no amount wagered")
    item["net"] = num(item["net"] - amount)


def _no_twice(name: str, lst: list[dict[str, Any]]) -> None:
    keys = ("seat", "hand") if name == "hands" else ("seat", "bet")
    seen: set[tuple] = set()
    for item in lst:
        key = tuple(item.get(k) for k in keys)
        if all(v is None for v in key):
            continue
        if key in seen:
            desc = " ".join(f"{k} {v}" for k, v in zip(keys, key, strict=True) if v is not None)
            raise ValueError(f"{name[:-1]} {desc} twice")
        seen.add(key)
