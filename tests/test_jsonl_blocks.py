"""read_blocks (the bulk reader's blocks of lines) against read_lines (one line at a time), the plain reference:
the same lines, numbered the same, however the file is cut into read chunks and blocks."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.ingest import jsonl
from auditkit.ingest.jsonl import read_blocks, read_lines

LINE = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ").replace(b"\x1f", b" ")),  # no gzip magic
    st.sampled_from([b"", b"\r", b"{}", b'{"round_id": "r1"}', b"x" * 300]),
)


def newlines_plain(buf: bytes | memoryview, at: int = 0) -> np.ndarray:
    """The reference of ``jsonl.newlines``: the whole buffer compared at once."""
    return np.flatnonzero(np.frombuffer(buf, np.uint8) == 10) + at


def _blocks(path: Path, block_bytes: int, max_line: int, **kw: int) -> list[tuple[int, bytes]]:
    out = []
    for block in read_blocks(path, block_bytes=block_bytes, max_line=max_line, **kw):
        assert len(block.starts) == len(block.ends)
        assert all(block.data[e] == 10 for e in block.ends)  # every line ends at its break
        assert block.ends.tolist() == newlines_plain(block.data).tolist()  # found as read: every break
        for i in range(len(block)):
            raw = block.errors[i][0] if i in block.errors else block.raw(i)
            out.append((block.first + i, raw))
    return out


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(LINE, max_size=60), end=st.sampled_from([b"", b"\n", b"\r\n"]), chunk=st.sampled_from([7, 64, 1 << 20]),
       block_bytes=st.sampled_from([1, 50, 400, 1 << 24]), zipped=st.booleans())
def test_read_blocks_gives_the_lines_read_lines_gives(lines, end, chunk, block_bytes, zipped):
    body = b"\n".join(lines) + (end if lines else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        path.write_bytes(gzip.compress(body) if zipped else body)
        expected = list(read_lines(path))
        old = jsonl._CHUNK
        jsonl._CHUNK = chunk  # lines cut across the read chunks
        try:
            got = _blocks(path, block_bytes, max_line=1 << 20)
        finally:
            jsonl._CHUNK = old
    assert got == expected


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=40), chunk=st.sampled_from([7, 64, 1 << 20]),
       block_bytes=st.sampled_from([1, 50, 400, 1 << 24]))
def test_read_blocks_keeps_the_head_of_a_line_too_long(lines, chunk, block_bytes):
    body = b"\n".join(lines) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        path.write_bytes(body)
        expected = list(read_lines(path))
        old = jsonl._CHUNK
        jsonl._CHUNK = chunk
        try:
            got = _blocks(path, block_bytes, max_line=100)
        finally:
            jsonl._CHUNK = old
    assert [n for n, _ in got] == [n for n, _ in expected]
    for (_, raw), (_, line) in zip(got, expected, strict=True):
        if len(line) <= 100:
            assert raw == line
        else:  # a too-long line keeps a head of itself (at most RAW_KEPT bytes), never another line's bytes
            assert line.startswith(raw) and len(raw) <= jsonl.RAW_KEPT


def test_read_blocks_of_a_byte_range_numbers_its_lines_from_one(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"a\nbb\nccc\ndddd\n")
    assert _blocks(path, 1 << 24, 1 << 20, start=2, stop=9) == [(1, b"bb"), (2, b"ccc")]


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300).map(lambda b: b.replace(b"a", b"\n")), window=st.sampled_from([1, 3, 16, 1 << 18]),
       at=st.integers(0, 1000))
def test_newlines_is_the_plain_search_a_window_at_a_time(data, window, at):
    old = jsonl._WINDOW
    jsonl._WINDOW = window
    try:
        got = jsonl.newlines(data, at)
        view = jsonl.newlines(memoryview(data)[1:], at)
    finally:
        jsonl._WINDOW = old
    assert got.tolist() == newlines_plain(data, at).tolist()
    assert view.tolist() == newlines_plain(data[1:], at).tolist()
