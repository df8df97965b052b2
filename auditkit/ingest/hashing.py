"""64-bit hashes of round ids and of whole stored rows, computed over Arrow columns.

``id_hashes`` is the round-id hash of the store's index, ``row_hashes`` the
content hash of stored rows ("same content" for a duplicate round id): it mixes
every column's values, so two records that store the same round (``10`` and
``10.0``, keys in any order, unknown extra fields) hash the same. Both run over
whole Arrow columns in numpy (no Python call per row). Index files written
before these hashes (:data:`VERSION`) held BLAKE2b id hashes and hashes of the
lines' JSON text: :mod:`auditkit.ingest.dedup` recomputes theirs.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["id_hashes", "row_hashes", "content_columns", "VERSION", "VERSION_KEY"]

VERSION_KEY, VERSION = b"auditkit.hashes", b"2"
"""The index files' schema metadata naming the hashes they hold."""

_K = np.uint64(0x9E3779B97F4A7C15)
_NULL = np.uint64(0x5BD1E9955BD1E995)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, elementwise on uint64 (wrapping)."""
    x = x ^ (x >> np.uint64(30))  # a new array: the rest is done in place
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def id_hashes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The index's hash of each round id (nulls a constant): a 64-bit hash of its UTF-8 bytes,
    vectorized over the column (:data:`VERSION` of the index)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return _text_hashes(values)


def _text_hashes(arr: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string's bytes (nulls a constant), vectorized over the whole buffer:
    each byte mixed with its position, summed per string, mixed with the length."""
    n = len(arr)
    if not n:
        return np.zeros(0, np.uint64)
    if arr.null_count:  # no stray bytes under nulls
        arr = pc.fill_null(arr, "")
    wide = pa.types.is_large_string(arr.type)  # else 32-bit offsets, read as they are (no cast: a small
    offsets = np.frombuffer(arr.buffers()[1], np.int64 if wide else np.int32)  # table's fixed cost)
    offsets = offsets[arr.offset:arr.offset + n + 1].astype(np.int64)
    data = arr.buffers()[2]
    data = np.frombuffer(data, np.uint8)[offsets[0]:offsets[-1]] if data is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    width = int(lengths[0])
    if 0 < width <= _NEAR and (lengths == width).all():  # ids of one length: a matrix, a row a text
        keys = (np.arange(width, dtype=np.uint64) << np.uint64(8)) + data.reshape(n, width)
        return _mix(_near_bytes()[keys].sum(1, dtype=np.uint64) ^ np.uint64(width))  # the sum of _fold
    return _runs_hashes(data, lengths)


def _runs_hashes(data: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The hashes of texts of any lengths laid end to end in ``data`` (the reference of the one-length case)."""
    return _fold(_byte_hashes((_positions(lengths) << np.uint64(8)) + data), lengths)


_NEAR = 64
_FEW = 64  # rows below which a text column is hashed without finding its distinct values first


@functools.cache
def _near_bytes() -> np.ndarray:
    """The hashes of the bytes at the first :data:`_NEAR` positions of a text, by ``position << 8 | byte``."""
    return _mix(np.arange(_NEAR << 8, dtype=np.uint64) + _K)


def _byte_hashes(keys: np.ndarray) -> np.ndarray:
    """``_mix(key + _K)`` of each ``position << 8 | byte`` key: looked up in a table for the first
    :data:`_NEAR` positions of a text (the same values, computed once)."""
    table = _near_bytes()
    near = keys < np.uint64(_NEAR << 8)
    if near.all():
        return table[keys]
    out = _mix(keys + _K)
    out[near] = table[keys[near]]
    return out


def _positions(lengths: np.ndarray) -> np.ndarray:
    """The position of each item in its run, for runs of ``lengths`` items laid end to end: a
    running count of ones that steps back to 0 where a run starts."""
    lengths = lengths[lengths > 0]
    steps = np.ones(int(lengths.sum()), np.int64)
    if len(steps):
        steps[0] = 0
        steps[np.cumsum(lengths[:-1])] = 1 - lengths[:-1]
    return np.cumsum(steps, out=steps).view(np.uint64)


def _fold(items: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """One hash per run of ``lengths`` item hashes: their sum, mixed with the run's length."""
    ends = np.cumsum(lengths)
    sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(items, dtype=np.uint64)])
    return _mix((sums[ends] - sums[ends - lengths]) ^ lengths.astype(np.uint64))


def _small(lo: int, hi: int) -> tuple[np.ndarray, int]:
    """The hashes of the integers from ``lo`` to ``hi`` (as the integer branch of :func:`_hash_array`
    makes them), by value - lo."""
    return _mix(np.arange(lo, hi + 1, dtype=np.int64).view(np.uint64) + _K), -lo


_SMALL = {pa.int8(): _small(-128, 127), pa.uint8(): _small(0, 255), pa.bool_(): _small(0, 1)}


@functools.cache
def _small_items(t: pa.DataType) -> np.ndarray:
    """The item hashes of a list of small values (the list branch of :func:`_hash_array`), by
    position * (values + 1) + value - lo, a null at value - lo = values."""
    values = np.append(_SMALL[t][0], _NULL)
    return _mix(values[None, :] + np.arange(_NEAR, dtype=np.uint64)[:, None] * _K).ravel()


def _valid(arr: pa.Array) -> np.ndarray | None:
    return None if not arr.null_count else arr.is_valid().to_numpy(zero_copy_only=False)


def _hash_array(arr: pa.Array) -> np.ndarray:
    """uint64 per element of any array (nested types included)."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        encoded = pc.dictionary_encode(arr) if len(arr) >= _FEW else None  # tables, dealers, bets: a few
        if encoded is None:  # values, each hashed once; a few rows (a small file's) hashed as they are
            h = _text_hashes(arr)
        elif not len(encoded.dictionary):  # nothing but nulls
            h = np.zeros(len(arr), np.uint64)
        elif len(encoded.dictionary) * 2 < len(arr):
            h = _text_hashes(encoded.dictionary)[pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False)]
        else:
            h = _text_hashes(arr)
    elif pa.types.is_struct(t):
        h = np.full(len(arr), np.uint64(len(t)), np.uint64)
        for child in arr.flatten():
            h = _mix(h * _K + _hash_array(child))
    elif pa.types.is_list(t):
        lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        child = pc.list_flatten(arr)
        if not len(child):
            items = np.empty(0, np.uint64)
        elif child.type in _SMALL and lengths.max() <= _NEAR:  # cards: each (position, value) looked up
            table, offset = _SMALL[child.type]
            v = pc.fill_null(child, pa.scalar(0 if child.type != pa.bool_() else False, child.type))
            at = v.to_numpy(zero_copy_only=False).astype(np.int64) + offset
            if child.null_count:
                at[~child.is_valid().to_numpy(zero_copy_only=False)] = len(table)
            items = _small_items(child.type)[_positions(lengths).view(np.int64) * (len(table) + 1) + at]
        else:
            items = _mix(_hash_array(child) + _positions(lengths) * _K)
        h = _fold(items, lengths)
    elif pa.types.is_floating(t):
        v = pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False).astype(np.float64) + 0.0  # -0.0 == 0.0
        h = _mix(v.view(np.uint64))
    elif pa.types.is_timestamp(t):
        h = _mix(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).view(np.uint64))
    elif t in _SMALL:  # cards, positions, flags: each value's hash looked up
        table, offset = _SMALL[t]
        v = pc.fill_null(arr, pa.scalar(0 if t != pa.bool_() else False, t)).to_numpy(zero_copy_only=False)
        h = table[v.astype(np.int64) + offset]
    else:  # integers
        v = arr if t == pa.int64() else arr.cast(pa.int64())
        v = (pc.fill_null(v, 0) if arr.null_count else v).to_numpy(zero_copy_only=False)
        h = _mix(v.view(np.uint64) + _K)
    valid = _valid(arr)
    if valid is not None:
        h = np.where(valid, h, _NULL)
    return h


def row_hashes(table: pa.Table, columns: list[str]) -> np.ndarray:
    """Content hash of each row over ``columns`` (in that order). A null or empty value of an
    optional column (:data:`auditkit.schema.OPTIONAL`) adds nothing: a round hashes as before the column."""
    from ..schema import OPTIONAL

    h = np.zeros(table.num_rows, np.uint64)
    for name in columns:
        col = table.column(name)
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        mixed = _mix(h * _K + _hash_array(col))
        if name in OPTIONAL:
            present = pc.fill_null(pc.greater(pc.list_value_length(col), 0), False).to_numpy(zero_copy_only=False)
            mixed = np.where(present, mixed, h)
        h = mixed
    return h


def content_columns(names: list[str]) -> list[str]:
    """The columns of a stored (or staged) round that make its content: all but where it came from."""
    return [c for c in names if c not in ("source_file", "source_line", "date")]
