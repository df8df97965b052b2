"""Readers behind one interface: a reader turns one source into parsed blocks of rounds with their
line accounting, so that :mod:`auditkit.ingest.sources` orchestrates them without knowing their formats.

A reader is a callable ``read(path, name, bulk, max_line)`` yielding :class:`ReadBlock` tuples:
``(parsed, lines read, attached rows, bad lines of other files, bytes read)``. ``parsed`` is a
:class:`auditkit.ingest.blocks.Parsed` (stored-to-be rows per game, quarantined rows with their
reasons, blank rows); every row read is in exactly one of: a stored-to-be row, a quarantined row,
a blank row, or an attached row (a row read into another row's round: a CSV companion's, or a
profile's second row of a round).

- :mod:`.jsonl`: the hand-history log v1 (JSONL, gzip or not);
- :mod:`.csvlayout`: the CSV layout of the same (a main file with its companions);
- :mod:`.profile`: any export mapped through an import profile (:mod:`auditkit.ingest.profiles`).

The interface's types are in :mod:`.base` (the readers import it, never this package, which imports
them when asked for one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import ReadBlock, Reader

__all__ = ["ReadBlock", "Reader", "reader_for", "read_source"]


def reader_for(path: Path, profile: Any = None) -> Reader:
    """The reader of ``path``: the profile's when one is given, else by the file's name."""
    if profile is not None:
        from .profile import profile_reader

        return profile_reader(profile)
    if path.name.lower().endswith(".csv"):
        from .csvlayout import read_csv_layout

        return read_csv_layout
    from .jsonl import read_jsonl

    return read_jsonl


def read_source(path: Path, name: str, bulk: bool, max_line: int, profile: Any = None) -> Iterator[ReadBlock]:
    """The blocks of a source read by its reader (:func:`reader_for`)."""
    return reader_for(path, profile)(path, name, bulk, max_line)
