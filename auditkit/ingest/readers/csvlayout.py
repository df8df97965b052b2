"""The reader of the CSV layout of the log (a main file and its companions ``X.hands.csv``...)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..blocks import parse_objects
from ..csv import ATTACHED, read_csv_rounds
from ..csvblocks import read_csv_blocks
from .base import ReadBlock

__all__ = ["read_csv_layout", "FLUSH_ROWS"]

FLUSH_ROWS = 25_000  # CSV rows read as Python objects before they are checked and written


def read_csv_layout(path: Path, name: str, bulk: bool, max_line: int) -> Iterator[ReadBlock]:
    """Parsed blocks of a CSV-layout source: in bulk when the bulk reader takes it, else row by row."""
    if bulk and (blocks := read_csv_blocks(path, name)) is not None:
        yield from blocks
        return
    items: list[tuple[int, Any]] = []
    raws: dict[int, str] = {}
    other: list[tuple[str, int, Any, str]] = []
    lines = attached = blank = 0
    for file, line, raw, obj, error in read_csv_rounds(path):
        lines += line > 0
        if file != str(path):  # a companion line
            if error is not None:
                other.append((file, line, raw, error))
            elif obj is ATTACHED:
                attached += 1
            else:
                blank += 1
        elif error is not None:
            other.append((name, line, raw, error))
        elif obj is None:
            blank += 1
        else:
            items.append((line, obj))
            raws[line] = raw
        if len(items) >= FLUSH_ROWS:
            parsed = parse_objects(items, raws)
            parsed.blank += blank
            yield parsed, lines, attached, other, 0
            items, raws, other, lines, attached, blank = [], {}, [], 0, 0, 0
    parsed = parse_objects(items, raws)
    parsed.blank += blank
    yield parsed, lines, attached, other, path.stat().st_size
