"""Per-game parts of the bulk reader: each game's JSON fields and its vectorized field checks.

A game module defines ``FIELDS`` (the game's own top-level fields as
``pyarrow.json`` should parse them) and ``read(table) -> (columns, ok)``: the
game's stored columns and the rows it vouches for. A game without a module here
is read line by line.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from . import baccarat

__all__ = ["BULK", "GameReader"]

GameReader = Callable[[dict[str, pa.Array]], tuple[dict[str, pa.Array], np.ndarray]]

BULK: dict[str, tuple[list[pa.Field], GameReader]] = {
    "baccarat": (baccarat.FIELDS, baccarat.read),
    "mini_baccarat": (baccarat.FIELDS, baccarat.read),
}
"""game -> (its JSON fields, its reader)."""
