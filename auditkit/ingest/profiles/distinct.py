"""A column read one distinct value at a time: each distinct cell converted once, however many rows
hold it, with the reasons of the rows whose value failed (the profile readers' columns)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["column_codes", "code_reasons", "column_values", "encode"]


def column_codes(col: pa.ChunkedArray | pa.Array, read: Callable[[str], Any]
                 ) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """A column read one distinct value at a time: (the converted distinct values, an object array
    whose last entry, None, stands for a null cell; each row's index into it; the reason of each
    distinct value that failed, by its index)."""
    dictionary, indices = encode(col)
    values = np.empty(len(dictionary) + 1, dtype=object)  # filled one by one: a list value is one object
    failed: dict[int, str] = {}
    for k, text in enumerate(dictionary.to_pylist()):
        if text is None or not str(text).strip():
            continue
        try:
            values[k] = read(text)
        except ValueError as exc:
            failed[k] = str(exc)
    return values, indices, failed


def encode(col: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray]:
    """A column's distinct cells and each row's index into them (a null cell: one past the last)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    enc = pc.dictionary_encode(col)
    n = len(enc.dictionary)
    return enc.dictionary, pc.fill_null(enc.indices, n).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def code_reasons(indices: np.ndarray, failed: dict[int, str]) -> dict[int, str]:
    """The reason of every row whose distinct value failed, by row index."""
    if not failed:
        return {}
    bad = np.flatnonzero(np.isin(indices, np.fromiter(failed, np.int64)))
    return {int(i): failed[int(indices[i])] for i in bad}


def column_values(col: pa.ChunkedArray | pa.Array, read: Callable[[str], Any]) -> tuple[list[Any], dict[int, str]]:
    """Every row's converted value (None for an empty cell) and the reasons of the rows that failed,
    by row index. The column is dictionary-encoded: each distinct value is read once."""
    values, indices, failed = column_codes(col, read)
    return values[indices].tolist(), code_reasons(indices, failed)
