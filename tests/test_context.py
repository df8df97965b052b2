"""The shared Context: a batch's context is freed as soon as the engine drops it (no reference cycle)."""

from __future__ import annotations

import gc
import importlib
import weakref

import pytest

from auditkit.paytables import Config
from auditkit.rules.registry import PREPARERS
from auditkit.validate import select_rules


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "three_card_poker", "pai_gow_poker"])
def test_context_is_freed_without_the_cycle_collector(game):
    """A context that refers to itself (a cached fact pointing back at it) lives until the cycle collector
    runs: batch after batch of cached arrays pile up (1.7 GB peak instead of 0.4 on 2 M baccarat rounds)."""
    out = importlib.import_module(f"auditkit.games.{game}.simulate").simulate(500, seed=2, fault_rate=0.05)
    table = out[0] if isinstance(out, tuple) else out
    rules = select_rules(game, "round")
    enabled = gc.isenabled()
    gc.disable()
    try:
        ctx = PREPARERS[game](table, Config())
        for r in rules:
            r.func(ctx)
        ref = weakref.ref(ctx)
        del ctx
        assert ref() is None
    finally:
        if enabled:
            gc.enable()


def test_hits_concat_spreads_a_part_s_single_values_over_its_hits_and_none_is_empty():
    import numpy as np

    from auditkit.rules.registry import Hits

    a = Hits(rows=np.array([3, 1]), case="same", discrepancy=0.0, seat=np.array([1, 2]),
             evidence={"n": np.array([1, 2])})
    b = Hits(rows=np.array([7]), case=np.array(["own"], dtype=object), discrepancy=np.array([2.5]),
             seat=np.array([4]), expected_amount=np.array([1.0]), recorded_amount=np.array([3.5]), evidence={"n": 3})
    got = Hits.concat([Hits.none(), a, b])
    assert got.rows.tolist() == [3, 1, 7] and got.case.tolist() == ["same", "same", "own"]
    assert got.evidence["n"].tolist() == [1, 2, 3] and got.discrepancy.tolist() == [0.0, 0.0, 2.5]
    assert got.seat.tolist() == [1, 2, 4] and np.isnan(got.expected_amount[:2]).all() and got.recorded_amount[2] == 3.5
    assert Hits.concat([a]) is a and len(Hits.concat([])) == 0 and len(Hits.none()) == 0
