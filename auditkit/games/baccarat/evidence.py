"""What a baccarat round can lack, for the coverage table (``rules/coverage.py`` reads it).

A round without announced totals cannot show 10-10-14(a) (the dealer announces each hand's total);
a round without wagers has no payout to check.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

STANDS_FOR = {"announced": ("announced_player", "announced_banker"), "wagers": ("wagers",)}
"""The stored columns each kind is read from: a round where one is null (a list: empty) lacks it."""


def lacking(table: pa.Table) -> dict[str, np.ndarray]:
    """Nothing beyond :data:`STANDS_FOR`."""
    return {}
