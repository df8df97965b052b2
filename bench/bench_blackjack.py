"""Benchmark: blackjack checks over a Parquet store (hands per second, peak memory).

    python bench/bench_blackjack.py --rounds 5000000

Simulates ``--rounds`` rounds (in chunks, 1 % faults) into a store
(``<tmp>/rounds/game=blackjack/date=<d>/part-*.parquet`` through
:class:`auditkit.store.Store`), then times

* the round checks batch by batch (``check_rounds`` on each scanned batch,
  Parquet reading timed apart),
* the shoe checks (one gaming day at a time, as ``validate_store`` does),
* ``validate_store`` end to end (read, round checks, shoe checks),

and prints hands per second of CPU time (``time.process_time``, so a shared machine does not
distort them; end to end also wall time) and the peak RSS. Run by hand; not a test.
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
import pyarrow as pa
import pyarrow.compute as pc

from auditkit.columns import lengths
from auditkit.engine.checks import select_rules, shoe_columns
from auditkit.games.blackjack.simulate import simulate
from auditkit.paytables import Config
from auditkit.store import SourceRecord, Store
from auditkit.validate import check_rounds, check_shoes, validate_store

GAME = "blackjack"
ROUNDS_PER_TABLE_DAY = 950  # about what the simulator deals in a table's 18-hour day


def build_store(root: Path, n_rounds: int, tables: int, chunk: int, fault_rate: float) -> tuple[int, int, int]:
    """Simulate into a store; returns (rounds, hands, faults)."""
    store = Store(root)
    day = date(2025, 6, 1)
    rounds = hands = faults = 0
    for k, first in enumerate(range(0, n_rounds, chunk)):
        n = min(chunk, n_rounds - first)
        table, truth = simulate(n, seed=1000 + k, fault_rate=fault_rate, tables=tables, start=day.isoformat())
        sha = hashlib.sha256(f"bench-blackjack-{k}".encode()).hexdigest()
        local = pc.strftime(pc.add(table["started_at"], pa.scalar(-5 * 3600 * 10**6, pa.duration("us"))),
                            format="%Y-%m-%d")
        days = sorted(set(local.to_pylist()))
        for d in days:
            store.write_rounds(GAME, d, table.filter(pc.equal(local, d)), sha)
        store.commit_source(SourceRecord(sha256=sha, path=f"simulate-{k}", size=0, format="simulate",
                                         stored=n, games={GAME: n}, partitions=days))
        rounds += n
        hands += int(lengths(table["hands"]).sum())
        faults += len(truth)
        day = date.fromisoformat(days[-1]) + timedelta(days=2)  # the next chunk's tables start on fresh days
    return rounds, hands, faults


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5_000_000)
    ap.add_argument("--tables", type=int, default=0, help="tables per chunk (default: a chunk fills ~2 days)")
    ap.add_argument("--chunk", type=int, default=250_000, help="rounds simulated at a time")
    ap.add_argument("--batch-size", type=int, default=131_072)
    ap.add_argument("--dealer-play", action="store_true", help="also check the dealer's drawing (house rule)")
    ap.add_argument("--store", type=Path, help="keep the store here (default: a temporary folder)")
    args = ap.parse_args()
    chunk = min(args.chunk, args.rounds)
    tables = args.tables or max(4, chunk // (ROUNDS_PER_TABLE_DAY * 2))
    cfg = Config()
    cfg.data[GAME]["check_dealer_play"] = args.dealer_play

    with tempfile.TemporaryDirectory() as tmp:
        root = args.store or Path(tmp) / "store"
        t0 = time.perf_counter()
        rounds, hands, faults = build_store(root, args.rounds, tables, chunk, fault_rate=0.01)
        dt = time.perf_counter() - t0
        print(f"simulated {rounds:,} rounds / {hands:,} hands ({faults:,} faults, {tables} tables per chunk) "
              f"into {root} in {dt:.1f} s ({rounds / dt:,.0f} rounds/s)")
        store = Store(root)
        dates = store.dates(GAME)

        # round checks, batch by batch
        read_s = check_s = 0.0
        n_batches = found = 0
        t_read = time.process_time()
        for d in dates:
            for batch in store.scan(GAME, d, batch_size=args.batch_size):
                t1 = time.process_time()
                read_s += t1 - t_read
                found += len(check_rounds(batch, GAME, cfg, date=d))
                t_read = time.process_time()
                check_s += t_read - t1
                n_batches += 1
        print(f"round checks: {n_batches} batches, {check_s:.1f} s CPU checking = {hands / check_s:,.0f} hands/s "
              f"({rounds / check_s:,.0f} rounds/s); Parquet reading {read_s:.1f} s; {found:,} findings")

        # shoe checks, one gaming day at a time
        shoe_rules = select_rules(GAME, "shoe")
        cols = shoe_columns(shoe_rules)
        shoe_s = shoe_read = 0.0
        found = 0
        for d in dates:
            t1 = time.process_time()
            day = store.read(GAME, d, columns=cols)
            t2 = time.process_time()
            found += len(check_shoes(day, GAME, cfg, shoe_rules, date=d))
            shoe_read += t2 - t1
            shoe_s += time.process_time() - t2
        print(f"shoe checks: {len(dates)} days, {shoe_s:.1f} s CPU = {hands / shoe_s:,.0f} hands/s; "
              f"reading {shoe_read:.1f} s; {found:,} findings")

        # end to end
        t1, c1 = time.perf_counter(), time.process_time()
        total = sum(len(f) for f in validate_store(store, cfg, games=[GAME], batch_size=args.batch_size))
        dt, cpu = time.perf_counter() - t1, time.process_time() - c1
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"validate_store end to end: {cpu:.1f} s CPU = {hands / cpu:,.0f} hands/s ({rounds / cpu:,.0f} rounds/s); "
              f"{dt:.1f} s wall; {total:,} findings (truth {faults:,}); peak RSS {peak:,.0f} MiB")
        if total != faults and not args.dealer_play:
            print(f"WARNING: {total} findings for {faults} injected faults")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
