"""Benchmark: the pai gow poker checks (68 IAC 10-9-17) over a Parquet store.

    python bench/bench_pai_gow_poker.py --rounds 2000000

Simulates full tables (six patrons and the dealer), one gaming day at a time,
into ``<tmp>/rounds/game=pai_gow_poker/date=<d>/part-*.parquet`` (through
:class:`auditkit.store.Store`), then times the round checks batch by batch
(checks only, on batches already in memory) and end to end (reading the store
and checking, :func:`auditkit.validate.validate_store`). Prints rounds per
second of wall and CPU time and the peak RSS. Run by hand; not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from auditkit.columns import lengths
from auditkit.games.pai_gow_poker.simulate import PER_DAY, simulate
from auditkit.paytables import Config
from auditkit.store import SourceRecord, Store
from auditkit.validate import check_rounds, validate_store

GAME = "pai_gow_poker"


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_store(root: Path, rounds: int, tables: int, fault_rate: float) -> tuple[Store, int]:
    """Simulate ``rounds`` rounds, one day per part file; returns the store and the fault count."""
    store = Store(root)
    sha = hashlib.sha256(b"bench_pai_gow_poker").hexdigest()
    per_day = tables * PER_DAY
    day0 = np.datetime64("2025-06-01", "D")
    faults, done, d = 0, 0, 0
    dates = []
    while done < rounds:
        n = min(per_day, rounds - done)
        date = str(day0 + d)
        table, truth = simulate(n, seed=d, fault_rate=fault_rate, tables=tables, start=date, occupancy=1.0)
        store.write_rounds(GAME, date, table, sha)
        dates.append(date)
        faults += len(truth)
        done += n
        d += 1
    store.commit_source(SourceRecord(sha256=sha, path="<simulated>", size=0, format="simulated",
                                     stored=rounds, games={GAME: rounds},
                                     partitions=[f"{GAME}/{x}" for x in dates]))
    return store, faults


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2_000_000)
    ap.add_argument("--tables", type=int, default=200, help="tables per day (360 rounds each a day)")
    ap.add_argument("--batch-size", type=int, default=131_072, help="rounds per checked batch")
    ap.add_argument("--fault-rate", type=float, default=0.01)
    ap.add_argument("--tmp", type=Path, default=None, help="folder for the temporary store")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        t0 = time.perf_counter()
        store, faults = build_store(Path(tmp), args.rounds, args.tables, args.fault_rate)
        dt = time.perf_counter() - t0
        print(f"simulated and stored {args.rounds:,} rounds ({faults:,} faults) in {dt:.1f} s "
              f"= {args.rounds / dt:,.0f} rounds/s; {len(store.dates(GAME))} days")
        config = Config()

        # checks only: every batch read first, then each checked and timed
        wall = cpu = 0.0
        found = rounds = hands = batches = 0
        per_batch = []
        for date in store.dates(GAME):
            for batch in store.scan(GAME, date, batch_size=args.batch_size):
                w0, c0 = time.perf_counter(), time.process_time()
                f = check_rounds(batch, GAME, config, date=date)
                dw, dc = time.perf_counter() - w0, time.process_time() - c0
                wall, cpu = wall + dw, cpu + dc
                per_batch.append(batch.num_rows / dc if dc else float("inf"))
                found += len(f)
                rounds += batch.num_rows
                hands += int(lengths(batch["hands"]).sum())
                batches += 1
        print(f"checks: {rounds:,} rounds ({hands / rounds:.1f} patron hands + the dealer each) in {batches} batches, "
              f"{found:,} findings; wall {wall:.2f} s = {rounds / wall:,.0f} rounds/s, "
              f"CPU {cpu:.2f} s = {rounds / cpu:,.0f} rounds/s per core "
              f"(per batch: median {np.median(per_batch):,.0f}, min {np.min(per_batch):,.0f})")

        # end to end: read the store and check
        w0, c0 = time.perf_counter(), time.process_time()
        n_findings = sum(len(f) for f in validate_store(store, config, games=[GAME], batch_size=args.batch_size))
        dw, dc = time.perf_counter() - w0, time.process_time() - c0
        print(f"end to end (read + check): {rounds:,} rounds, {n_findings:,} findings; wall {dw:.2f} s "
              f"= {rounds / dw:,.0f} rounds/s, CPU {dc:.2f} s = {rounds / dc:,.0f} rounds/s per core")
        print(f"faults injected {faults:,}, findings {n_findings:,}; peak RSS {_peak_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
