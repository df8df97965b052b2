"""writer.by_day (rows grouped by their local day: slices or one take) against by_day_plain (a filter a day)."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.ingest.writer import by_day, by_day_plain

DAYS = st.sampled_from(["2026-01-01", "2026-01-02", "2026-01-03", "2025-12-31"])


@settings(max_examples=200, deadline=None)
@given(dates=st.lists(DAYS, max_size=40), runs=st.booleans(), chunks=st.integers(1, 3), nulls=st.booleans())
def test_by_day_is_a_filter_a_day(dates, runs, chunks, nulls):
    if runs:  # a log in time order: one run a day
        dates = sorted(dates)
    values = [None if nulls and i == 1 else d for i, d in enumerate(dates)]
    table = pa.table({"date": pa.array(values, pa.string()), "line": pa.array(range(len(dates)), pa.int64())})
    if chunks > 1 and len(dates) > 1:  # chunked as concatenated blocks are
        cut = len(dates) // chunks or 1
        table = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
    got, want = by_day(table), by_day_plain(table)
    assert [d for d, _ in got] == [d for d, _ in want]
    assert all(g.equals(w) for (_, g), (_, w) in zip(got, want, strict=True))
    assert sum(t.num_rows for _, t in got) == table.num_rows - (1 if nulls and len(dates) > 1 else 0)
