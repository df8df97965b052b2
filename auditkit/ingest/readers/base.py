"""The readers' one interface: a reader turns one source into parsed blocks of rounds with their line
accounting (see :mod:`auditkit.ingest.readers`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["ReadBlock", "Reader"]

ReadBlock = tuple[Any, int, int, list, int]  # (Parsed, lines read, attached, other files' bad lines, bytes read)
Reader = Callable[[Path, str, bool, int], Iterator[ReadBlock]]
