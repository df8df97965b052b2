"""A source's rows to log-v1 round records: fields converted a column at a time, rows grouped into
rounds by the profile's key columns, every row accounted for.

A row is *blank* (every cell empty), part of a *round* (the round's first row gives its line
number; its other rows are *attached*), or *quarantined* with its row number and reason: a cell
that does not convert, a row without its round key, or any row of a round whose rows disagree
(two outcomes, a hand twice) or that holds a row that could not be mapped (the round is
quarantined whole). The records then go through the same record reader as a JSONL log's, so the
stored rounds are those of the same rounds written as JSONL.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .assemble import as_logged, empty_amounts, nets, num, one_row_records, plan, record
from .compute import compute_column
from .distinct import code_reasons, column_codes, column_values
from .model import LISTS, FieldSpec, Profile, kind_of
from .notation import converter, money_reader, time_values
from .template import format_column, names

__all__ = ["Mapped", "map_rows", "ROW", "house_rules"]

ROW = "__row"  # the row's number as a user finds it in the source
NUMBERED = 2.0**62  # combinations of cells numbered in an int64 below this; a row at a time above


@dataclass
class Mapped:
    """What the rows of a source became."""

    rounds: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (first row, record)
    raws: dict[int, str] = field(default_factory=dict)  # first row -> the round's rows as text
    bad: list[tuple[int, str, str, str | None]] = field(default_factory=list)  # (row, raw, reason, round id)
    blank: int = 0
    attached: int = 0
    rows: int = 0
    groups: int = 0  # rounds found, quarantined ones too (the next call's first_ordinal goes on from them)


def _row_texts(table: pa.Table, data: list[str]) -> list[str]:
    cols = [pc.fill_null(table[c], "") for c in data]
    if not cols:
        return [""] * table.num_rows
    return pc.binary_join_element_wise(*cols, ",").to_pylist()


def _field_values(table: pa.Table, target: str, spec: FieldSpec, prof: Profile, n: int
                  ) -> tuple[list[Any], dict[int, str]]:
    """Every row's value of one field and the reasons of the rows it failed for."""
    kind = kind_of(target, spec)
    if spec.const is not None:
        return [_const(target, spec, kind, prof)] * n, {}
    if spec.default is not None:  # an empty cell reads as the default's text
        table = _defaulted(table, spec)
    if spec.bankroll_before:
        read = money_reader(prof)
        before, r1 = column_values(table[spec.bankroll_before], read)
        after, r2 = column_values(table[spec.bankroll_after], read)
        out = [None if a is None or b is None else num(a - b) for a, b in zip(after, before, strict=True)]
        return out, {**r1, **r2}
    if spec.returned:
        return column_values(table[spec.returned], money_reader(prof))
    read = converter(kind, spec, prof)
    if spec.template is not None or spec.compute is not None:
        if spec.template is not None:
            texts, reasons = format_column(table, spec.template)
            reasons = {i: f"{target}: template {spec.template!r}: {why}" for i, why in reasons.items()}
            for name in names(spec.template):  # an empty cell fills no template: a reason, never a silent gap
                for i in np.flatnonzero(table[name].is_null().to_numpy(zero_copy_only=False)).tolist():
                    reasons.setdefault(i, f"{target}: template {spec.template!r}: {{{name}}} is empty "
                                          "(give the field a default)")
        else:
            texts, reasons = compute_column(table, spec.compute)  # type: ignore[arg-type]
            reasons = {i: f"{target}: compute {spec.compute!r}: {why}" for i, why in reasons.items()}
        if kind == "text" and spec.values is None:
            return texts.to_pylist(), reasons
        out, more = column_values(texts, read)
        return out, {**reasons, **more}
    if spec.columns:
        codes = [column_codes(table[c], read) for c in spec.columns]
        reasons = {}
        for _, idx, failed in codes:
            reasons.update(code_reasons(idx, failed))
        return _joined(codes, n), reasons
    if kind == "time" and spec.values is None:
        return time_values(table[spec.column], prof)  # type: ignore[index]
    return column_values(table[spec.column], read)  # type: ignore[index]


def _const(target: str, spec: FieldSpec, kind: str, prof: Profile) -> Any:
    """A constant: a string read as a cell is (split, pattern, values, the field's type), else as given."""
    if not isinstance(spec.const, str) or (kind == "text" and spec.values is None and not spec.cuts
                                           and spec.split is None and not spec.json):
        return spec.const
    try:
        return converter(kind, spec, prof)(spec.const)
    except ValueError as exc:
        from ...paytables import ConfigError

        raise ConfigError(f"{prof.where}: fields.{target}.const: {exc}") from exc


def _defaulted(table: pa.Table, spec: FieldSpec) -> pa.Table:
    """``table`` with the empty cells (null or only spaces) of the columns ``spec`` reads set to its default."""
    for name in dict.fromkeys(spec.source_columns()):
        if spec.when and name in {c["column"] for c in spec.when["conds"]}:
            continue
        col = table[name]
        blank = pc.or_kleene(pc.is_null(col), pc.equal(pc.utf8_trim_whitespace(col), ""))
        filled = pc.if_else(blank, pa.scalar(spec.default, pa.string()), col)
        table = table.set_column(table.column_names.index(name), name, filled)
    return table


def _items(values: list[Any]) -> list[Any] | None:
    """One row's cells of a ``columns`` field as one list (a list cell's items in place; empty ones left out)."""
    items: list[Any] = []
    for v in values:
        if v is not None:
            items.extend(v if isinstance(v, list) else [v])
    return items or None


def _joined(codes: list[tuple[np.ndarray, np.ndarray, dict[int, str]]], n: int) -> list[Any]:
    """Every row's :func:`_items` of the columns' distinct values (:func:`column_codes`), made once per
    distinct combination of cells, each numbered by its codes; a row at a time if they are too many."""
    sizes = [len(vals) for vals, _, _ in codes]
    if float(np.prod(sizes, dtype=np.float64)) >= NUMBERED:
        return [_items(row) for row in zip(*(vals[idx].tolist() for vals, idx, _ in codes), strict=True)]
    key = np.zeros(n, np.int64)
    for (_, idx, _), size in zip(codes, sizes, strict=True):
        key = key * size + idx
    found, inverse = np.unique(key, return_inverse=True)
    digits = np.empty((len(found), len(codes)), np.int64)
    rest = found.copy()
    for j in range(len(codes) - 1, -1, -1):
        rest, digits[:, j] = np.divmod(rest, sizes[j])
    made = np.empty(len(found), dtype=object)
    for k, row in enumerate(digits.tolist()):
        made[k] = _items([vals[c] for (vals, _, _), c in zip(codes, row, strict=True)])
    return made[inverse.reshape(-1)].tolist()


def house_rules(rec: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Take a round record's own house rules (a profile's ``rules.*`` fields) out of it, as the stored
    ``house_rules`` column holds them (``[{"name": "blackjack", "value": 1.2}]``); None when it has none."""
    rules = rec.pop("rules", None)
    if not rules:
        return None
    return [{"name": k, "value": float(v)} for k, v in sorted(rules.items())]


def map_rows(table: pa.Table, prof: Profile, first_ordinal: int = 0, seq: dict[Any, int] | None = None) -> Mapped:
    """The rounds of ``table`` (string columns and :data:`ROW`), mapped through ``prof``; ``first_ordinal``
    (rounds before these, for made times) and ``seq`` (rounds seen per shoe) continue an earlier call's."""
    out = Mapped(rows=table.num_rows)
    data = [c for c in table.column_names if c != ROW]
    missing = sorted({c for s in prof.fields.values() for c in s.source_columns()}
                     | set(prof.round_key) | set(prof.shoe_key) - set(data))
    missing = [c for c in missing if c not in data]
    if missing:
        from ...paytables import ConfigError

        raise ConfigError(f"{prof.where}: the source has no column {', '.join(map(repr, missing))} "
                          f"(its columns: {', '.join(map(repr, data))})")
    rows = table[ROW].to_numpy().tolist()
    texts = _row_texts(table, data)
    empty = blank_rows(table, data)
    out.blank = int(empty.sum())
    values, why, whens = field_values(table, prof)
    steps = plan(prof, values, whens)
    lists = [name for name in LISTS if any(t.startswith(name + ".") for t in prof.fields)]
    groups = _groups(table, prof, empty, why)
    zone = ZoneInfo(prof.zone) if prof.zone else None
    seq = {} if seq is None else seq  # rounds seen per shoe, for a round_seq the export lacks
    made = None if prof.round_key else one_row_records(steps, lists, [idx[0] for idx in groups])
    out.groups = len(groups)
    day = dt.datetime.fromisoformat(prof.start_date).replace(tzinfo=zone) if prof.time_kind == "none" else None
    count_seq = "round_seq" not in prof.fields
    infer_split = "hands.split" not in prof.fields and any(t.startswith("hands.") for t in prof.fields)
    for k, idx in enumerate(groups):
        first = rows[idx[0]]
        failed = [i for i in idx if i in why]
        raw = texts[idx[0]] if len(idx) == 1 else "\n".join([texts[i] for i in idx])
        if failed:
            first_bad = rows[failed[0]]
            for i in idx:
                out.bad.append((rows[i], texts[i], why.get(i) or
                                f"another row of the round could not be mapped (row {first_bad}: {why[failed[0]]})", None))
            continue
        try:
            rec = record(prof, idx, steps, lists) if made is None else nets(prof, lists, made[k])
        except ValueError as exc:
            for i in idx:
                out.bad.append((rows[i], texts[i], f"round of rows {rows[idx[0]]}-{rows[idx[-1]]} "
                                f"quarantined whole: {exc}", None))
            continue
        if "round_id" not in rec:
            rec["round_id"] = _made_id(prof, table, idx[0], rec, first)
        as_logged(prof, rec, infer_split)
        if day is not None:
            rec["started_at"] = (day + dt.timedelta(seconds=(first_ordinal + k) * prof.spacing_seconds)).isoformat()
        if count_seq and "shoe_id" in rec:
            seq[rec["shoe_id"]] = rec["round_seq"] = seq.get(rec["shoe_id"], 0) + 1
        out.rounds.append((first, rec))
        out.raws[first] = raw
        out.attached += len(idx) - 1
    return out


def blank_rows(table: pa.Table, data: list[str]) -> np.ndarray:
    """The rows whose every cell (of the columns ``data``) is empty or only spaces."""
    empty = np.ones(table.num_rows, bool)
    for c in data:
        empty &= ~pc.fill_null(pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(table[c])), 0), False).to_numpy(
            zero_copy_only=False)
    return empty


def field_values(table: pa.Table, prof: Profile) -> tuple[dict[str, list[Any]], dict[int, str], dict[str, np.ndarray]]:
    """Every field's value on every row, the reason of each row that cannot be mapped (its first), and
    each ``when`` field's rows (:func:`map_rows`; :mod:`.onerow` for sources whose rows are rounds)."""
    n = table.num_rows
    values: dict[str, list[Any]] = {}
    why: dict[int, str] = {}
    whens = {t: _when(table, s) for t, s in prof.fields.items() if s.when}
    for target, spec in prof.fields.items():
        vals, reasons = _field_values(table, target, spec, prof, n)
        values[target] = vals
        mask = whens.get(target)
        for i, r in reasons.items():
            if mask is None or mask[i]:  # a field fails only on the rows it is taken from
                why.setdefault(i, f"{target}: {r}" if not r.startswith(target) else r)
    empty_amounts(prof, values, whens, why, n)
    return values, why, whens


def _when(table: pa.Table, spec: FieldSpec) -> np.ndarray:
    """The rows a field is taken from: all its conditions hold, or any of them."""
    w = spec.when or {}
    masks = []
    for c in w["conds"]:
        col = pc.utf8_trim_whitespace(table[c["column"]])
        masks.append(pc.fill_null(pc.is_in(col, value_set=pa.array(c["in"], pa.string())), False).to_numpy(
            zero_copy_only=False))
    return np.logical_and.reduce(masks) if w["mode"] == "all" else np.logical_or.reduce(masks)


def _groups(table: pa.Table, prof: Profile, empty: np.ndarray, why: dict[int, str]) -> list[list[int]]:
    """Row indices of each round, in the order of their first rows (blank rows left out)."""
    idx = np.flatnonzero(~empty)
    if not prof.round_key:
        return [[int(i)] for i in idx]
    keys = [table[c].to_pylist() for c in prof.round_key]
    found: dict[tuple, list[int]] = {}
    for i in idx.tolist():
        key = tuple(k[i].strip() if k[i] is not None else None for k in keys)
        if any(v is None or v == "" for v in key):
            why.setdefault(i, f"no round key: {', '.join(prof.round_key)} must all have a value")
            found[("\0missing", i)] = [i]
            continue
        found.setdefault(key, []).append(i)
    return list(found.values())


def _made_id(prof: Profile, table: pa.Table, i: int, rec: dict[str, Any], first: int) -> str:
    """A round id made from the table and the round key (or the row number when rows are rounds)."""
    parts = [str(table[c][i].as_py()).strip() for c in prof.round_key] or [str(first)]
    return "-".join([str(rec.get("table_id", "")), *parts])
