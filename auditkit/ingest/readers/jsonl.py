"""The reader of the hand-history log v1 (JSONL, gzip or not): blocks of lines parsed in bulk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..blocks import parse_block
from ..jsonl import read_blocks
from .base import ReadBlock

__all__ = ["read_jsonl"]


def read_jsonl(path: Path, name: str, bulk: bool, max_line: int) -> Iterator[ReadBlock]:
    """Parsed blocks of a JSONL log; ``bulk=False`` parses every line with the per-line reader."""
    for block in read_blocks(path, max_line=max_line):
        yield parse_block(block, bulk=bulk), len(block), 0, [], block.done
