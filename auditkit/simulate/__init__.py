"""Honest simulators: correct play from a real shoe or deck, plus labelled injected faults.

Each game package has ``simulate(n_rounds, *, seed, fault_rate, ...) -> (table, truth)``
(its :class:`~auditkit.games.Game` names it):
the rounds in the game's stored schema and a ground-truth frame of
``(round_id, citation)`` for every injected fault.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import games

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["simulate", "simulate_to_jsonl", "simulate_into_store"]


def simulate(game: str, n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, **kwargs):
    """Simulated rounds of ``game`` and their ground truth."""
    try:
        spec = games.get(game)
    except KeyError:
        raise ValueError(f"unknown game {game!r}") from None
    if game != spec.name:  # a variant (mini baccarat) is simulated by its game's simulator
        kwargs["game"] = game
    return spec.simulator()(n_rounds, seed=seed, fault_rate=fault_rate, **kwargs)


def simulate_to_jsonl(game: str, n_rounds: int, out: Path, truth: Path | None = None, *, seed: int = 0,
                      fault_rate: float = 0.0, progress: Callable[[int], None] | None = None) -> tuple[int, int]:
    """Write simulated rounds as a spec JSONL log (and the ground truth CSV); returns (rounds, faults).
    ``progress`` is called with 1 for each round written."""
    from ..ingest.jsonl import records_from_table, write_jsonl
    from ..report import write_csv

    table, faults = simulate(game, n_rounds, seed=seed, fault_rate=fault_rate)
    n = write_jsonl(_counted(records_from_table(table, game), progress), out)
    if truth is not None:
        write_csv(pd.DataFrame(faults)[["round_id", "citation"]], truth)
    return n, len(faults)


def _counted(records: Iterable[dict], progress: Callable[[int], None] | None) -> Iterator[dict]:
    for rec in records:
        yield rec
        if progress is not None:
            progress(1)


def simulate_into_store(store: Store, game: str, n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0,
                        chunk: int = 500_000, start: str = "2025-06-01", **kwargs: Any) -> tuple[int, pd.DataFrame]:
    """Simulate rounds straight into a store (no log in between), ``chunk`` rounds at a time.

    Each chunk is split by gaming day, written as parts and committed as one
    simulated source; the next chunk starts on the day after the last one, so
    round and shoe ids never repeat. Returns (rounds stored, ground truth). For
    benchmarks and test stores; logs go through ``auditkit ingest``.
    """
    import hashlib
    from datetime import date, timedelta

    import pyarrow as pa
    import pyarrow.compute as pc

    from ..store import SourceRecord

    day, done, truths = date.fromisoformat(start), 0, []
    for k in range(0, n_rounds, chunk):
        n = min(chunk, n_rounds - k)
        table, truth = simulate(game, n, seed=seed + k // chunk, fault_rate=fault_rate, start=day.isoformat(),
                                **kwargs)
        local = pc.add(table["started_at"], pc.multiply(table["utc_offset"].cast(pa.int64()), 60_000_000)
                       .cast(pa.duration("us")))
        days = pc.strftime(local, format="%Y-%m-%d")
        names = sorted(pc.unique(days).to_pylist())
        sha = hashlib.sha256(f"simulated {game} seed {seed} chunk {k} of {n_rounds}".encode()).hexdigest()
        for d in names:
            store.write_rounds(game, d, table.filter(pc.equal(days, d)), sha)
        store.commit_source(SourceRecord(sha256=sha, path=f"<simulated {game}, chunk {k // chunk}>", size=0,
                                         format="simulated", stored=n, games={game: n},
                                         partitions=[f"{game}/{d}" for d in names]))
        truths.append(truth)
        done += n
        day = date.fromisoformat(names[-1]) + timedelta(days=1)
    return done, pd.concat(truths, ignore_index=True) if truths else pd.DataFrame(columns=["round_id", "citation"])
