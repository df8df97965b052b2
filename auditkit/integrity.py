"""Moved to :mod:`auditkit.store.layout` (and ``HashingFile`` to :mod:`auditkit.store.parquet`, ``file_entry``
to :mod:`auditkit.store.manifest`): these names stay importable from here for this session's other branches."""

from __future__ import annotations

from .store.layout import Layout, build_layout, check_index, partition_of, rebuild_index
from .store.manifest import file_entry
from .store.parquet import HashingFile

__all__ = ["HashingFile", "Layout", "build_layout", "check_index", "file_entry", "partition_of", "rebuild_index"]
