"""What only a blackjack round can lack, for the coverage table (``rules/coverage.py`` reads it).

68 IAC 10-2-4(c) counts from "the first card of the round": a round shows that moment only by a
``first_card`` event. Without one, no wager change can be placed before or after it, so (c) cannot
check the round, and says so, rather than pass it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...columns import flat_values, parents, struct_field, to_numpy

STANDS_FOR = {"first_card": ("events",)}
"""The stored columns each kind is read from."""


def lacking(table: pa.Table) -> dict[str, np.ndarray]:
    """The rounds of ``table`` with no ``first_card`` event (none when the events were not read)."""
    if "events" not in table.column_names:
        return {}
    events = table["events"]
    marker = to_numpy(pc.equal(struct_field(flat_values(events), "type"), "first_card"), False).astype(bool)
    shown = np.bincount(parents(events)[marker], minlength=table.num_rows) > 0
    return {"first_card": ~shown} if not shown.all() else {}
