"""Arrow list columns to numpy: padded card matrices and flattened child rows.

Validators never loop per round: a list column becomes either a padded
``(rows, width)`` matrix or flat child arrays with the index of their parent row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .cards import NO_CARD

__all__ = ["combine", "lengths", "padded", "parents", "flat_values", "struct_field", "to_numpy", "strings"]


def combine(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous Array from a possibly chunked one."""
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def lengths(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Length of each list (0 for null), read from the list offsets."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    if not chunks:
        return np.empty(0, np.int64)
    if not all(isinstance(c, pa.ListArray) for c in chunks):  # large or fixed-size lists
        return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    out = np.concatenate([np.diff(c.offsets.to_numpy()) for c in chunks])
    if any(c.null_count for c in chunks):
        out[np.concatenate([c.is_null().to_numpy(zero_copy_only=False) for c in chunks])] = 0
    return out


def parents(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """For each flattened child value, the row index of its parent list."""
    return np.repeat(np.arange(len(arr), dtype=np.int64), lengths(arr))


def flat_values(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The child values of a list column, in row order (nulls and slices handled)."""
    return combine(pc.list_flatten(arr))


def to_numpy(arr: pa.Array | pa.ChunkedArray, fill: object = None) -> np.ndarray:
    """A numpy copy of a primitive column, nulls replaced by ``fill`` when given."""
    if fill is not None:
        arr = pc.fill_null(arr, fill)
    return combine(arr).to_numpy(zero_copy_only=False)


def padded(arr: pa.Array | pa.ChunkedArray, width: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A ``list<int8>`` column as an int8 matrix padded with NO_CARD, and the list lengths.

    ``width`` defaults to the longest list; longer lists are cut to ``width``
    (the lengths still tell the true size).
    """
    n = lengths(arr)
    w = int(n.max(initial=0)) if width is None else width
    values = flat_values(arr).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)
    if len(n) and len(values) == len(n) * w and (n == w).all():  # every list full: a reshape
        return values.reshape(len(n), w).copy(), n
    out = np.full((len(n), w), NO_CARD, dtype=np.int8)
    if len(values):
        starts = np.concatenate([[0], np.cumsum(n)[:-1]])
        for k in range(w):  # loop over card positions, never over rounds
            has = n > k
            out[has, k] = values[starts[has] + k]
    return out, n


def struct_field(arr: pa.Array | pa.ChunkedArray, name: str) -> pa.Array:
    """One field of a struct column (struct of a flattened list of structs)."""
    arr = combine(arr)
    if not arr.null_count:  # the child as stored (offset applied): no kernel call
        return arr.field(name)
    return pc.struct_field(arr, name)  # a null struct's fields read as null


def strings(arr: pa.Array | pa.ChunkedArray, fill: str) -> np.ndarray:
    """A string column of few distinct values (a status, say) as a numpy object array, nulls as ``fill``:
    read through its dictionary, so each distinct value becomes a Python string once."""
    enc = pc.dictionary_encode(pc.fill_null(combine(arr), fill))
    return np.array(enc.dictionary.to_pylist(), dtype=object)[enc.indices.to_numpy(zero_copy_only=False)]
