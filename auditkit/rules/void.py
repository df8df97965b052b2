"""The check every game shares: in a void or dead round every wager is returned (net 0)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..money import money_differs
from .context import Context
from .registry import Hits

__all__ = ["void_round_nets", "VOID_SUMMARY", "VOID_WORDS"]

VOID_SUMMARY = "In a void or dead round every wager is returned (net 0)"
VOID_WORDS = {"message": "seat {seat:int} {bet}: net {net:net} in a {status} round",
              "expected": "every wager returned (net 0)", "recorded": "net {net:net}"}
"""The words of every game's ``void`` finding (``@rule(..., **VOID_WORDS)``)."""


def void_round_nets(ctx: Context) -> Hits:
    """``void``: each wager of a void or dead round whose net is not 0 (to the rounding unit).

    One hit per wager (the engine merges them into one finding per round); the
    expected net is 0, so the discrepancy is the recorded net.
    """
    nets = ctx.nets_of(ctx.void_or_dead)
    bad = money_differs(nets.net, np.zeros(len(nets.net)), ctx.unit)
    rows, seat, what, net = nets.round[bad], nets.seat[bad], nets.what[bad], nets.net[bad]
    status = np.array(ctx.table["status"].take(pa.array(rows, pa.int64())).to_pylist(), dtype=object)
    return Hits(rows=rows, evidence={"seat": seat, "bet": what, "net": net, "status": status},
                seat=seat, expected_amount=np.zeros(len(rows)), recorded_amount=net)
