"""A source whose every row is a round, mapped a column at a time: each field's values (as
:mod:`.mapping` converts them) become the bulk reader's Arrow columns directly, with no record
dict per round and no JSON text in between, then :func:`~auditkit.ingest.blocks.bulk_rows` stores
them as it stores a log's rounds. The rounds, rows quarantined and reasons are those of
:func:`.mapping.map_rows` and the record reader (a property test holds them equal); a profile this
path does not cover (a round key, house rules, nets from amounts returned) or a value the JSON
parser would not take for its field gives None, and the caller maps the rows as records.
"""

from __future__ import annotations

import datetime as dt
import operator
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa

from ..blocks import Parsed, bulk_rows, in_line_order, line_by_line
from ..recordtable import fits, schema
from . import assemble
from . import mapping as m
from .model import LISTS, Profile

__all__ = ["one_row_rounds"]


def _covered(prof: Profile, table: pa.Table, lists: list[str]) -> bool:
    if prof.round_key or table.column_names == [m.ROW]:
        return False
    if any(t.partition(".")[0] == "rules" for t in prof.fields):  # house rules: the record path
        return False
    if any(getattr(prof.fields.get(f"{name}.net"), "returned", None) for name in lists):
        return False
    heads = [t.partition(".") for t in prof.fields]
    if {h for h, _, tail in heads if tail} & {h for h, _, tail in heads if not tail}:  # a field and its parts
        return False
    needed = {c for s in prof.fields.values() for c in s.source_columns()} | set(prof.shoe_key)
    return needed <= set(table.column_names)  # else map_rows says which column is missing


def _take(vals: list[Any], good: np.ndarray, mask: np.ndarray | None) -> list[Any]:
    if not len(good):
        return []
    got = operator.itemgetter(*good.tolist())(vals)
    got = list(got) if len(good) > 1 else [got]
    if mask is not None:
        keep = mask[good].tolist()
        got = [v if k else None for v, k in zip(got, keep, strict=True)]
    return got


def one_row_rounds(table: pa.Table, prof: Profile, first_ordinal: int = 0, seq: dict[Any, int] | None = None
                   ) -> tuple[Parsed, m.Mapped] | None:
    """The parsed rounds of ``table`` (a source's rows, every row a round) and what the mapping made
    of its rows (its bad and blank rows, rows, rounds found; no records), or None when the profile or
    a value needs the record path. ``first_ordinal`` and ``seq`` as in :func:`.mapping.map_rows`;
    ``seq`` is updated only when rounds are given."""
    lists = [name for name in LISTS if any(t.startswith(name + ".") for t in prof.fields)]
    if not _covered(prof, table, lists):
        return None
    n = table.num_rows
    out = m.Mapped(rows=n)
    data = [c for c in table.column_names if c != m.ROW]
    rows = table[m.ROW].to_numpy()
    texts = m._row_texts(table, data)
    empty = m.blank_rows(table, data)
    out.blank = int(empty.sum())
    values, why, whens = m.field_values(table, prof)
    plan = assemble.plan(prof, values, whens)
    found = np.flatnonzero(~empty)
    out.groups = len(found)
    failed = np.zeros(n, bool)
    failed[list(why)] = True
    good = found[~failed[found]]
    for i in found[failed[found]].tolist():
        out.bad.append((int(rows[i]), texts[i], why[i], None))
    cols = _columns(plan, lists, good)
    firsts = rows[good].tolist()
    if "round_id" not in cols or None in cols["round_id"]:  # made from the table and the row number
        ids = cols.get("round_id") or [None] * len(good)
        tables = cols.get("table_id") or [None] * len(good)
        cols["round_id"] = [rid if rid is not None else f"{'' if t is None else t}-{first}"
                            for rid, t, first in zip(ids, tables, firsts, strict=True)]
    if prof.time_kind == "none":
        day = dt.datetime.fromisoformat(prof.start_date).replace(tzinfo=ZoneInfo(prof.zone) if prof.zone else None)
        ordinal = np.searchsorted(found, good)  # the round's place among the rounds found, quarantined ones too
        cols["started_at"] = [(day + dt.timedelta(seconds=(first_ordinal + int(k)) * prof.spacing_seconds)).isoformat()
                              for k in ordinal]
    for name in ("events", "wagers"):  # the lists the export leaves out, empty as the log leaves them
        if name in prof.left_out:
            cols[name] = [[] if v is None else v for v in cols.get(name) or [None] * len(good)]
    counts = dict(seq or {})
    if "round_seq" not in prof.fields and "shoe_id" in cols:
        made = []
        for shoe in cols["shoe_id"]:
            if shoe is None:
                made.append(None)
                continue
            counts[shoe] = counts.get(shoe, 0) + 1
            made.append(counts[shoe])
        cols["round_seq"] = made
    table_out = _table(cols, len(good))
    if table_out is None:
        return None
    if seq is not None:
        seq.update(counts)
    raws = dict(zip(firsts, [texts[i] for i in good.tolist()], strict=True))
    parsed = Parsed(raw=raws.__getitem__)
    refused = bulk_rows(table_out, rows[good], parsed)
    line_by_line(parsed, [(firsts[j], _record(cols, j)) for j in np.sort(refused).tolist()], decoded=True)
    in_line_order(parsed)
    return parsed, out


def _columns(plan: list[tuple], lists: list[str], good: np.ndarray) -> dict[str, list[Any]]:
    """The values of the rounds' fields (the rows ``good``), a list per top-level field: as
    :func:`.mapping._one_row_records` puts them in records (an object of the fields given, a list of
    one item or none)."""
    cols: dict[str, list[Any]] = {}
    objects: dict[str, dict[str, list[Any]]] = {}
    items: dict[str, dict[str, list[Any]]] = {name: {} for name in lists}
    for head, tail, kind, vals, mask in plan:
        keep = _take(vals, good, mask)
        if kind == assemble.ITEM:
            items[head][tail] = keep
            continue
        if kind == assemble.COLLECT:
            keep = [v if v is None or isinstance(v, list) else [v] for v in keep]
        if tail:
            objects.setdefault(head, {})[tail] = keep
        else:
            cols[head] = keep
    for head, fields in {**objects, **items}.items():
        names = list(fields)
        made = []
        for cells in zip(*fields.values(), strict=True) if names else [()] * len(good):
            obj = {k: v for k, v in zip(names, cells, strict=True) if v is not None}
            made.append(([obj] if obj else []) if head in items else (obj or None))
        cols[head] = made
    return cols


def _table(cols: dict[str, list[Any]], n: int) -> pa.Table | None:
    arrays = []
    for f in schema():
        values = cols.get(f.name)
        if values is None:
            arrays.append(pa.nulls(n, f.type))
            continue
        if not fits(values, f.type):
            return None
        try:
            arrays.append(pa.array(values, f.type))
        except (pa.ArrowException, OverflowError, TypeError):
            return None
    return pa.Table.from_arrays(arrays, schema=schema())


def _record(cols: dict[str, list[Any]], j: int) -> dict[str, Any]:
    """The record of round ``j`` (for the record reader, which says why it cannot store it)."""
    return {k: v[j] for k, v in cols.items() if v[j] is not None}
