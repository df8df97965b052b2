"""A profile's template field: the columnar kernel the mapping runs equals the plain one-row reading."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.ingest.profiles.template import format_column, format_row, names

CELLS = st.one_of(
    st.none(),
    st.sampled_from(["", " ", "7", "007", " 12 ", "-3", "-0", "T1", "2025-06-01", "x y", "²", "--5", "-", "٣", "{a}"]),
    st.text(max_size=6),
)
TEMPLATES = st.sampled_from([
    "{a}", "{a}-{b}", "{a}-{b:02d}-{c:03d}", "S{b:02d}", "{a}{a}", "{c:>4}|{a:d}", "lit{{eral}}",
    "{b:x}-{c}", "{a:.2f}", "{a:%Y}",
])


def _reference(template: str, rows: list[dict[str, str | None]]) -> tuple[list[str | None], dict[int, str]]:
    out: list[str | None] = []
    why: dict[int, str] = {}
    for i, row in enumerate(rows):
        try:
            out.append(format_row(template, {c: row[c] for c in names(template)}))
        except (ValueError, TypeError) as exc:
            out.append(None)
            why[i] = str(exc)
    return out, why


@settings(max_examples=400, deadline=None)
@given(TEMPLATES, st.lists(st.fixed_dictionaries({"a": CELLS, "b": CELLS, "c": CELLS}), max_size=25))
def test_the_columnar_template_equals_the_row_reading(template, rows):
    table = pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in "abc"})
    got, why = format_column(table, template)
    assert (got.to_pylist(), why) == _reference(template, rows)


def test_a_template_pads_digits_and_names_the_cell_that_does_not_fit():
    table = pa.table({"Table": ["BAC-1", "BAC-1", None], "Shoe": ["3", "x", "4"]})
    got, why = format_column(table, "{Table}-S{Shoe:02d}")
    assert got.to_pylist() == ["BAC-1-S03", None, None]
    assert why == {1: "Unknown format code 'd' for object of type 'str'"}


CELL_VALUES = st.one_of(st.none(), st.integers(0, 9), st.lists(st.sampled_from(["As", "Td", "9h"]), max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(CELL_VALUES, min_size=1, max_size=5), min_size=1, max_size=4), st.data())
def test_a_columns_field_made_once_per_distinct_combination_equals_the_row_reading(columns, data):
    """``columns = [...]``: the lists made per distinct combination of codes equal each row's own."""
    from auditkit.ingest.profiles.mapping import _items, _joined

    n = data.draw(st.integers(0, 30))
    codes = []
    for distinct in columns:
        vals = np.empty(len(distinct) + 1, dtype=object)
        for k, v in enumerate(distinct):
            vals[k] = v
        idx = np.array(data.draw(st.lists(st.integers(0, len(distinct)), min_size=n, max_size=n)), np.int64)
        codes.append((vals, idx, {}))
    expected = [_items([vals[idx[i]] for vals, idx, _ in codes]) for i in range(n)]
    assert _joined(codes, n) == expected
    with mock.patch("auditkit.ingest.profiles.mapping.NUMBERED", 1.0):  # the row-at-a-time fallback
        assert _joined(codes, n) == expected
