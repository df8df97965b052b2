"""Benchmark: three card poker checks over a Parquet store of simulated rounds.

    python bench/bench_three_card_poker.py --rounds 5000000

Simulates rounds in chunks (with a few labelled faults), writes them into an
``auditkit.store.Store`` (``rounds/game=three_card_poker/date=<d>/part-*.parquet``),
then times the round checks batch by batch (reading excluded) and the whole
``validate_store`` pass end to end (reading included). Prints hands per
second by wall clock and by CPU time of this process (the per-core figure on a
shared machine), peak RSS, and whether the findings are exactly the injected
faults. Run by hand; not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditkit.engine.checks import select_rules
from auditkit.games.three_card_poker.simulate import simulate
from auditkit.paytables import Config
from auditkit.rules.registry import PREPARERS
from auditkit.store import SourceRecord, Store
from auditkit.validate import check_rounds, validate_store

GAME = "three_card_poker"


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def build_store(store: Store, rounds: int, chunk: int, tables: int, fault_rate: float) -> tuple[int, pd.DataFrame]:
    """Simulate ``rounds`` rounds chunk by chunk into the store; returns (hands, truth)."""
    start, hands, truths = date(2025, 6, 1), 0, []
    for i, lo in enumerate(range(0, rounds, chunk)):
        n = min(chunk, rounds - lo)
        table, truth = simulate(n, seed=i, fault_rate=fault_rate, tables=tables, start=start.isoformat())
        truths.append(truth)
        hands += pc.sum(pc.list_value_length(table["hands"])).as_py()
        local = pa.array(pc.cast(table["started_at"], pa.int64()).to_numpy() - 5 * 3_600_000_000,
                         pa.timestamp("us"))
        day = pc.strftime(local, format="%Y-%m-%d")
        sha = hashlib.sha256(f"bench-{GAME}-{i}".encode()).hexdigest()
        dates = pc.unique(day).to_pylist()
        for d in dates:
            store.write_rounds(GAME, d, table.filter(pc.equal(day, d)), sha)
        store.commit_source(SourceRecord(sha256=sha, path=f"<simulated chunk {i}>", size=0, format="simulated",
                                         lines_read=n, stored=n, games={GAME: n},
                                         partitions=[f"{GAME}/{d}" for d in dates]))
        start = date.fromisoformat(max(dates)) + timedelta(days=1)
    return hands, pd.concat(truths, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5_000_000)
    ap.add_argument("--chunk", type=int, default=500_000, help="rounds simulated at a time")
    ap.add_argument("--tables", type=int, default=60)
    ap.add_argument("--fault-rate", type=float, default=0.001)
    ap.add_argument("--batch-size", type=int, default=131_072)
    ap.add_argument("--tmp", type=Path, default=None, help="folder for the store (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        store = Store(Path(tmp))
        t = _clock()
        hands, truth = build_store(store, args.rounds, args.chunk, args.tables, args.fault_rate)
        wall, _ = _since(t)
        days = store.dates(GAME)
        print(f"simulated and stored {args.rounds:,} rounds ({hands:,} hands, {len(truth):,} faults, "
              f"{len(days)} days) in {wall:.1f} s")

        # checks only, batch by batch (reading the store excluded)
        config, rules = Config(), select_rules(GAME, "round")
        check_wall = check_cpu = rules_wall = rules_cpu = 0.0
        batches, found = 0, []
        per_batch = []
        for d in days:
            for batch in store.scan(GAME, d, batch_size=args.batch_size):
                t = _clock()  # the game's preparer and rules alone (no findings frame)
                ctx = PREPARERS[GAME](batch, config)
                for r in rules:
                    r.func(ctx)
                w, c = _since(t)
                rules_wall, rules_cpu = rules_wall + w, rules_cpu + c
                t = _clock()
                f = check_rounds(batch, GAME, config, rules, d)
                w, c = _since(t)
                check_wall, check_cpu, batches = check_wall + w, check_cpu + c, batches + 1
                per_batch.append(w / batch.num_rows * 1e6)
                found.append(f[["round_id", "citation"]])
        print(f"rules alone (preparer + rules): {rules_wall:.2f} s wall / {rules_cpu:.2f} s CPU = "
              f"{hands / rules_wall / 1e6:.2f} M hands/s wall, {hands / rules_cpu / 1e6:.2f} M hands/s per core (CPU)")
        print(f"check_rounds (with findings frames): {batches} batches, {check_wall:.2f} s wall / {check_cpu:.2f} s CPU = "
              f"{hands / check_wall / 1e6:.2f} M hands/s wall, {hands / check_cpu / 1e6:.2f} M hands/s per core (CPU); "
              f"per batch median {np.median(per_batch):.2f} us/round")

        # end to end: streaming validation of the store, reading included
        t = _clock()
        total = sum(len(f) for f in validate_store(store, config, games=[GAME], batch_size=args.batch_size))
        wall, cpu = _since(t)
        print(f"end to end validate_store: {wall:.2f} s wall / {cpu:.2f} s CPU = {hands / wall / 1e6:.2f} M hands/s "
              f"wall, {hands / cpu / 1e6:.2f} M hands/s per core (CPU); {total:,} findings")

        got = pd.concat(found, ignore_index=True)
        pairs = set(zip(got["round_id"], got["citation"], strict=True))
        want = set(zip(truth["round_id"], truth["citation"], strict=True))
        print(f"findings vs injected faults: {len(want - pairs)} missed, {len(pairs - want)} extra")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
