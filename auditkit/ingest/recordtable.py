"""Round records already decoded (dicts, as an import profile's mapping makes them) read by the bulk
reader without writing them as JSON first: each field of :func:`~auditkit.ingest.blocks.json_schema`
becomes its Arrow column straight from the records' values, and the field checks of
:func:`~auditkit.ingest.blocks.bulk_rows` store them, exactly as the bulk JSON reader's table of the
same records would be stored.

Exactly: a column is made only when every value is what the JSON parser takes for that type (a string
for a string, an integer, not a boolean, for an integer, a finite number for a double, lists and
objects of such); otherwise :func:`records_table` gives None and the caller writes the records as
JSON lines (the reference). Records the field checks refuse are read one by one, as in the log.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np
import pyarrow as pa

from .blocks import Parsed, bulk_rows, in_line_order, json_schema, line_by_line

__all__ = ["records_table", "parse_records", "fits", "schema"]

_NONE = type(None)
_INTEGER, _NUMBER = {int, _NONE}, {int, float, _NONE}


@functools.cache
def schema() -> pa.Schema:
    """The bulk reader's schema of every game (a block of several games reads the same)."""
    return json_schema(None)


def fits(values: list[Any], t: pa.DataType) -> bool:
    """Whether the JSON parser would take every value (None: absent or null) as type ``t``, where
    ``pa.array`` would take more: a float for an integer (1.5 truncated), a boolean or a non-finite
    number for a double, a string for a list (its characters). Strings and booleans ``pa.array``
    refuses as the parser does (it raises; the caller then gives None)."""
    if _strict(t):
        return True
    kinds = set(map(type, values))
    if pa.types.is_integer(t):
        return kinds <= _INTEGER
    if pa.types.is_floating(t):
        if not kinds <= _NUMBER:
            return False
        return float not in kinds or all(math.isfinite(v) for v in values if type(v) is float)
    if pa.types.is_list(t):
        if not kinds <= {list, _NONE}:
            return False
        return _strict(t.value_type) or fits(list(itertools.chain.from_iterable(v for v in values if v)), t.value_type)
    if pa.types.is_struct(t):
        if not kinds <= {dict, _NONE}:
            return False
        items = [v for v in values if v is not None]
        return all(fits([d.get(f.name) for d in items], f.type) for f in t)
    return False


def _strict(t: pa.DataType) -> bool:
    """Whether ``pa.array`` refuses every value the JSON parser refuses for type ``t``."""
    return pa.types.is_string(t) or pa.types.is_boolean(t)


def records_table(records: list[dict[str, Any]]) -> pa.Table | None:
    """The bulk reader's table of ``records`` (every field of the schema of every game), or None when
    a value is not what the JSON parser would take for its field."""
    full = schema()
    present = set(itertools.chain.from_iterable(records))  # the records' keys (a field none has is null)
    arrays = []
    for f in full:
        if f.name not in present:
            arrays.append(pa.nulls(len(records), f.type))
            continue
        values = [r.get(f.name) for r in records]
        if not fits(values, f.type):
            return None
        try:
            arrays.append(pa.array(values, f.type))
        except (pa.ArrowException, OverflowError, TypeError):  # an integer past 64 bits
            return None
    return pa.Table.from_arrays(arrays, schema=full)


def parse_records(rounds: list[tuple[int, dict[str, Any]]], raws: dict[int, str]) -> Parsed | None:
    """The records (each with its first source row) parsed as the log's bulk reader parses their JSON
    lines, numbered by their rows; None when :func:`records_table` cannot make their table."""
    table = records_table([rec for _, rec in rounds])
    if table is None:
        return None
    parsed = Parsed(raw=raws.__getitem__)
    lines = np.array([row for row, _ in rounds], np.int64)
    refused = bulk_rows(table, lines, parsed)
    line_by_line(parsed, [rounds[int(i)] for i in np.sort(refused)], decoded=True)
    in_line_order(parsed)
    return parsed
