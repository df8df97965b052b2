"""The check every game shares: in a void or dead round every wager is returned (net 0)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..money import format_net, money_differs
from .context import Context
from .registry import Hits

__all__ = ["void_round_nets", "VOID_SUMMARY"]

VOID_SUMMARY = "In a void or dead round every wager is returned (net 0)"


def void_round_nets(ctx: Context) -> Hits:
    """``void``: each wager of a void or dead round whose net is not 0 (to the rounding unit).

    One hit per wager (the engine merges them into one finding per round); the
    discrepancy is the recorded net, as the expected net is 0.
    """
    nets = ctx.nets_of(ctx.void_or_dead)
    bad = money_differs(nets.net, np.zeros(len(nets.net)), ctx.unit)
    rows, seat, what, net = nets.round[bad], nets.seat[bad], nets.what[bad], nets.net[bad]
    status = ctx.table["status"].take(pa.array(rows)).to_pylist() if len(rows) else []
    message = np.array([f"seat {s} {w}: net {format_net(x)} in a {st} round" for s, w, x, st in
                        zip(seat, what, net, status, strict=True)], dtype=object)
    recorded = np.array([f"net {format_net(x)}" for x in net], dtype=object)
    return Hits(rows=rows, message=message, expected="every wager returned (net 0)", recorded=recorded,
                discrepancy=net, seat=seat, expected_amount=np.zeros(len(rows)), recorded_amount=net)
