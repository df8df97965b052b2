"""64-bit hashes of round ids and of whole stored rows, computed over Arrow columns.

``id_hashes`` is the round-id hash of the store's index (BLAKE2b of the UTF-8 id,
8 bytes, little-endian), computed once per distinct value. ``row_hashes`` is the
content hash of stored rows ("same content" for a duplicate round id): it mixes
every column's values, so two records that store the same round (``10`` and
``10.0``, keys in any order, unknown extra fields) hash the same.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["hash64", "id_hashes", "row_hashes"]

_K = np.uint64(0x9E3779B97F4A7C15)
_NULL = np.uint64(0x5BD1E9955BD1E995)


def hash64(data: bytes) -> int:
    """BLAKE2b-64 of bytes as an unsigned integer (the index's id hash of one round id)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, elementwise on uint64 (wrapping)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def id_hashes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """:func:`hash64` of each string (nulls hash to a constant), one BLAKE2b per distinct value."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    encoded = pc.dictionary_encode(values)
    uniques = np.fromiter((hash64(s.encode()) for s in encoded.dictionary.to_pylist()), np.uint64,
                          count=len(encoded.dictionary))
    idx = encoded.indices.to_numpy(zero_copy_only=False)
    if encoded.null_count:
        out = np.full(len(values), _NULL, np.uint64)
        valid = encoded.indices.is_valid().to_numpy(zero_copy_only=False)
        out[valid] = uniques[idx[valid].astype(np.int64)]
        return out
    return uniques[idx]


def _valid(arr: pa.Array) -> np.ndarray | None:
    return None if not arr.null_count else arr.is_valid().to_numpy(zero_copy_only=False)


def _hash_array(arr: pa.Array) -> np.ndarray:
    """uint64 per element of any array (nested types included)."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        h = id_hashes(arr)
    elif pa.types.is_struct(t):
        h = np.full(len(arr), np.uint64(len(t)), np.uint64)
        for child in arr.flatten():
            h = _mix(h * _K + _hash_array(child))
    elif pa.types.is_list(t):
        lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        child = pc.list_flatten(arr)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        local = np.arange(len(child), dtype=np.uint64) - np.repeat(starts, lengths).astype(np.uint64)
        items = _mix(_hash_array(child) + local * _K) if len(child) else np.empty(0, np.uint64)
        sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(items, dtype=np.uint64)])
        h = _mix((sums[ends] - sums[starts]) ^ lengths.astype(np.uint64))
    elif pa.types.is_floating(t):
        v = pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False).astype(np.float64) + 0.0  # -0.0 == 0.0
        h = _mix(v.view(np.uint64))
    elif pa.types.is_timestamp(t):
        h = _mix(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).view(np.uint64))
    else:  # integers and booleans
        v = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        h = _mix(v.view(np.uint64) + _K)
    valid = _valid(arr)
    if valid is not None:
        h = np.where(valid, h, _NULL)
    return h


def row_hashes(table: pa.Table, columns: list[str]) -> np.ndarray:
    """Content hash of each row over ``columns`` (in that order)."""
    h = np.zeros(table.num_rows, np.uint64)
    for name in columns:
        col = table.column(name)
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        h = _mix(h * _K + _hash_array(col))
    return h
