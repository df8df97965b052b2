"""Honest simulators: correct play from a real shoe or deck, plus labelled injected faults.

Each game package has ``simulate(n_rounds, *, seed, fault_rate, ...) -> (table, truth)``
(its :class:`~auditkit.games.Game` names it):
the rounds in the game's stored schema and a ground-truth frame of
``(round_id, citation)`` for every injected fault.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import games

if TYPE_CHECKING:
    import pyarrow as pa

    from ..store import Store

__all__ = ["simulate", "simulate_chunks", "simulate_to_jsonl", "simulate_into_store", "CHUNK"]

CHUNK = 500_000
"""Rounds simulated at a time by the routes that write many (a chunk's table is held in memory)."""
RECORD_BATCH = 20_000
"""Rows of a chunk turned into JSON records at a time by :func:`simulate_to_jsonl`."""


def simulate(game: str, n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, **kwargs):
    """Simulated rounds of ``game`` and their ground truth."""
    try:
        spec = games.get(game)
    except KeyError:
        raise ValueError(f"unknown game {game!r}") from None
    if game != spec.name:  # a variant (mini baccarat) is simulated by its game's simulator
        kwargs["game"] = game
    if spec.simulate is None:
        raise ValueError(f"game {spec.name} has no simulator")
    return spec.simulate.simulate(n_rounds, seed=seed, fault_rate=fault_rate, **kwargs)


def simulate_to_jsonl(game: str, n_rounds: int, out: Path, truth: Path | None = None, *, seed: int = 0,
                      fault_rate: float = 0.0, progress: Callable[[int], None] | None = None,
                      chunk: int = CHUNK) -> tuple[int, int]:
    """Write simulated rounds as a spec JSONL log (and the ground truth CSV), ``chunk`` rounds at a
    time (memory is bounded by a chunk, whatever ``n_rounds``; see :func:`simulate_chunks`); returns
    (rounds, faults). ``progress`` is called with 1 for each round written."""
    from ..ingest.jsonl import records_from_table, write_jsonl
    from ..report import write_csv

    truths: list[pd.DataFrame] = []

    def records() -> Iterator[dict]:
        import pyarrow as pa

        for table, faults, _ in simulate_chunks(game, n_rounds, seed=seed, fault_rate=fault_rate, chunk=chunk):
            truths.append(faults[["round_id", "citation"]])
            del faults
            for batch in table.to_batches(max_chunksize=RECORD_BATCH):  # a chunk's rows as dicts: never all at once
                yield from records_from_table(pa.Table.from_batches([batch]), game)
            del table  # before the next chunk is simulated

    n = write_jsonl(_counted(records(), progress), out)
    faults = _concat(truths)
    if truth is not None:
        write_csv(faults, truth)
    return n, len(faults)


def simulate_chunks(game: str, n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0, chunk: int = CHUNK,
                    start: str = "2025-06-01", **kwargs: Any) -> Iterator[tuple[pa.Table, pd.DataFrame, pa.Array]]:
    """Simulated rounds of ``game``, ``chunk`` at a time: each chunk's rounds, its ground truth and
    each round's gaming day (local date). Chunk ``i`` is simulated with seed ``seed + i`` from the
    day after the last day of the chunk before, so round and shoe ids never repeat; ``n_rounds`` up
    to ``chunk`` is one chunk, what :func:`simulate` gives."""
    import pyarrow as pa
    import pyarrow.compute as pc

    day = date.fromisoformat(start)
    for k in range(0, n_rounds, chunk):
        table, truth = simulate(game, min(chunk, n_rounds - k), seed=seed + k // chunk, fault_rate=fault_rate,
                                start=day.isoformat(), **kwargs)
        local = pc.add(table["started_at"], pc.multiply(table["utc_offset"].cast(pa.int64()), 60_000_000)
                       .cast(pa.duration("us")))
        days = pc.strftime(local, format="%Y-%m-%d")
        last = pc.max(days).as_py()
        yield table, truth, days
        del table, truth, days, local  # the caller's copy only, while the next chunk is simulated
        day = date.fromisoformat(last) + timedelta(days=1)


def _concat(truths: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(truths, ignore_index=True) if truths else pd.DataFrame(columns=["round_id", "citation"])


def _counted(records: Iterable[dict], progress: Callable[[int], None] | None) -> Iterator[dict]:
    for rec in records:
        yield rec
        if progress is not None:
            progress(1)


def simulate_into_store(store: Store, game: str, n_rounds: int, *, seed: int = 0, fault_rate: float = 0.0,
                        chunk: int = CHUNK, start: str = "2025-06-01", **kwargs: Any) -> tuple[int, pd.DataFrame]:
    """Simulate rounds straight into a store (no log in between), ``chunk`` rounds at a time
    (:func:`simulate_chunks`).

    Each chunk is split by gaming day, written as parts and committed as one
    simulated source. Returns (rounds stored, ground truth). For benchmarks and
    test stores; logs go through ``auditkit ingest``.
    """
    import hashlib

    import pyarrow.compute as pc

    from ..store import SourceRecord

    done, truths = 0, []
    for i, (table, truth, days) in enumerate(simulate_chunks(game, n_rounds, seed=seed, fault_rate=fault_rate,
                                                              chunk=chunk, start=start, **kwargs)):
        n, k, names = table.num_rows, i * chunk, sorted(pc.unique(days).to_pylist())
        sha = hashlib.sha256(f"simulated {game} seed {seed} chunk {k} of {n_rounds}".encode()).hexdigest()
        for d in names:
            store.write_rounds(game, d, table.filter(pc.equal(days, d)), sha)
        store.commit_source(SourceRecord(sha256=sha, path=f"<simulated {game}, chunk {i}>", size=0,
                                         format="simulated", stored=n, games={game: n},
                                         partitions=[f"{game}/{d}" for d in names]))
        truths.append(truth)
        done += n
    return done, _concat(truths)
