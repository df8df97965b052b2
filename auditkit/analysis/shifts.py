"""Shifts: a local hour's shift name, by hour ranges that may wrap midnight."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

DEFAULT_SHIFTS: dict[str, tuple[int, int]] = {"day": (6, 14), "swing": (14, 22), "grave": (22, 6)}
"""Shift name -> (first local hour, hour it ends), end exclusive; a range may wrap midnight."""


def shift_of(hours: Sequence[int] | np.ndarray | pd.Series,
             shifts: Mapping[str, tuple[int, int]] | None = None) -> np.ndarray:
    """The shift name of each local hour (``"other"`` for an hour no range covers)."""
    shifts = DEFAULT_SHIFTS if shifts is None else shifts
    h = np.asarray(hours, dtype=np.int64)
    out = np.full(h.shape, "other", dtype=object)
    for name, (start, end) in shifts.items():
        if not (0 <= start < 24 and 0 <= end <= 24):
            raise ValueError(f"shift {name!r}: hours must be within 0..24, got {(start, end)}")
        inside = (h >= start) & (h < end) if start < end else (h >= start) | (h < end)
        out[inside & (out == "other")] = name
    return out


def _local_hour(started_at: pd.Series) -> np.ndarray:
    """Local hour of ISO 8601 local timestamps (``2025-06-02T09:21:45-05:00`` -> 9)."""
    if started_at.empty:
        return np.empty(0, dtype=np.int64)
    return pd.to_numeric(started_at.astype(str).str.slice(11, 13), errors="coerce").fillna(0).astype(np.int64).to_numpy()
