"""hashing._text_hashes of texts of one length (a matrix, a row a text) against _runs_hashes, the general
reading of texts of any lengths: the index's hashes must not change."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.ingest import hashing


def _runs(arr: pa.Array) -> np.ndarray:
    offsets = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(arr.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]
    return hashing._runs_hashes(data, np.diff(offsets))


@settings(max_examples=200, deadline=None)
@given(width=st.integers(1, 70), rows=st.integers(1, 20), seed=st.integers(0, 2**32 - 1), at=st.integers(0, 3),
       odd=st.booleans())
def test_texts_of_one_length_hash_as_texts_of_any_lengths(width, rows, seed, at, odd):
    rng = np.random.default_rng(seed)
    texts = ["".join(rng.choice(list("abcXYZ019-é"), width)) for _ in range(rows)]
    if odd:
        texts[-1] = texts[-1][:-1]  # one shorter: the general path
    arr = pa.array(["pad"] * at + texts).slice(at)  # at an offset too
    got = hashing.id_hashes(arr)
    assert got.tolist() == _runs(arr).tolist()
    assert len(set(got.tolist())) == len(set(texts))
