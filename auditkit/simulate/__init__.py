"""Honest simulators: correct play from a real shoe or deck, plus labelled injected faults.

Each game module has ``simulate(n_rounds, *, seed, fault_rate, ...) -> (table, truth)``:
the rounds in the game's stored schema and a ground-truth frame of
``(round_id, citation)`` for every injected fault.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd

from ..schema import GAMES

__all__ = ["simulate", "simulate_to_jsonl"]

MODULES = {"baccarat": "baccarat", "mini_baccarat": "baccarat", "blackjack": "blackjack",
           "three_card_poker": "three_card_poker", "pai_gow_poker": "pai_gow_poker"}


def simulate(game: str, n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, **kwargs):
    """Simulated rounds of ``game`` and their ground truth."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}")
    module = importlib.import_module(f"{__name__}.{MODULES[game]}")
    if game == "mini_baccarat":
        kwargs["game"] = game
    return module.simulate(n_rounds, seed=seed, fault_rate=fault_rate, **kwargs)


def simulate_to_jsonl(game: str, n_rounds: int, out: Path, truth: Path | None = None, *, seed: int = 0,
                      fault_rate: float = 0.0) -> tuple[int, int]:
    """Write simulated rounds as a spec JSONL log (and the ground truth CSV); returns (rounds, faults)."""
    from ..ingest.jsonl import records_from_table, write_jsonl
    from ..report import write_csv

    table, faults = simulate(game, n_rounds, seed=seed, fault_rate=fault_rate)
    n = write_jsonl(records_from_table(table, game), out)
    if truth is not None:
        write_csv(pd.DataFrame(faults)[["round_id", "citation"]], truth)
    return n, len(faults)
