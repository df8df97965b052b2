"""The Arrow -> numpy helpers every game's context reads through."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.columns import strings, to_numpy


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["completed", "void", "dead", "", "é"])), max_size=50),
       st.integers(1, 2), st.integers(0, 3))
def test_strings_is_to_numpy(values: list, chunks: int, offset: int) -> None:
    """Read through the dictionary: what the plain per-value read gives, sliced and chunked columns too."""
    arr = pa.array([None] * offset + values, pa.string()).slice(offset)
    if chunks > 1 and len(values) > 1:
        arr = pa.chunked_array([arr.slice(0, len(values) // 2), arr.slice(len(values) // 2)])
    got = strings(arr, "completed")
    assert got.dtype == object and got.tolist() == to_numpy(arr, "completed").astype(object).tolist()
