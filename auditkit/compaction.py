"""Moved to :mod:`auditkit.store.compaction`: these names stay importable from here for this session's
other branches (set its constants there: this module's copies are not read)."""

from __future__ import annotations

from .store.compaction import FOLDER, HELD_PARTS, HELD_ROWS, MIN_PARTS, SMALL_ROWS, Compactor, apply, records

__all__ = ["FOLDER", "HELD_PARTS", "HELD_ROWS", "MIN_PARTS", "SMALL_ROWS", "Compactor", "apply", "records"]
