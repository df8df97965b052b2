"""writer.by_day (rows grouped by their local day: slices or one take) against by_day_plain (a filter a day)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.ingest.writer import by_day


def by_day_plain(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """The reference: a filter a day (what _Parts.add did before by_day)."""
    dates = table["date"]
    days = pc.unique(dates).to_pylist()
    return [(day, table if len(days) == 1 else table.filter(pc.equal(dates, day))) for day in days]


DAYS = st.sampled_from(["2026-01-01", "2026-01-02", "2026-01-03", "2025-12-31"])


@settings(max_examples=200, deadline=None)
@given(dates=st.lists(DAYS, max_size=40), runs=st.booleans(), chunks=st.integers(1, 3))
def test_by_day_is_a_filter_a_day(dates, runs, chunks):
    if runs:  # a log in time order: one run a day
        dates = sorted(dates)
    table = pa.table({"date": pa.array(dates, pa.string()), "line": pa.array(range(len(dates)), pa.int64())})
    if chunks > 1 and len(dates) > 1:  # chunked as concatenated blocks are
        cut = len(dates) // chunks or 1
        table = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
    got, want = by_day(table), by_day_plain(table)
    assert [d for d, _ in got] == [d for d, _ in want]
    assert all(g.equals(w) for (_, g), (_, w) in zip(got, want, strict=True))
    assert sum(t.num_rows for _, t in got) == table.num_rows


def test_by_day_refuses_a_row_without_a_day():
    with pytest.raises(pa.ArrowInvalid):
        by_day(pa.table({"date": pa.array(["2026-01-01", None], pa.string())}))
