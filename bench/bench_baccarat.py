"""Benchmark of the baccarat checks (a script, not a test).

Simulates N rounds (default 10 million) in a child process into a temporary
store (``rounds/game=baccarat/date=<d>/part-*.parquet``, through
:class:`auditkit.store.Store`), then times

(a) the round checks alone: ``auditkit.validate.check_rounds`` on batches of
    about ``--batch`` rounds read from the files (reading not timed), and (a')
    the same batches through the preparer and rule functions only (without the
    engine's findings frames);
(b) end to end: :func:`auditkit.validate.collect` over the store, as
    ``auditkit validate STORE`` runs it: batches read and checked, then the
    shoe checks ((e), shoe composition) day by day with the previous day's open shoes.

Prints rounds per second (wall clock and CPU time: the machine may be shared)
and the peak resident memory of the checking process (``resource.getrusage``).

    python bench/bench_baccarat.py --rounds 3000000
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import resource
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditkit.engine.checks import select_rules
from auditkit.games.baccarat.simulate import simulate  # noqa: E402
from auditkit.paytables import Config  # noqa: E402
from auditkit.rules.registry import PREPARERS  # noqa: E402
from auditkit.store import SourceRecord, Store  # noqa: E402
from auditkit.validate import check_rounds, collect  # noqa: E402

GAME = "baccarat"
CHUNK = 500_000


SHA = hashlib.sha256(b"bench_baccarat").hexdigest()


def write_rounds(root: Path, n_rounds: int, tables: int, fault_rate: float, seed: int) -> tuple[int, int]:
    """Simulate in chunks into a store, one part per chunk and local date; returns (rounds, faults)."""
    store = Store(root)
    start = date(2025, 6, 1)
    written = faults = 0
    partitions: set[str] = set()
    k = 0
    while written < n_rounds:
        n = min(CHUNK, n_rounds - written)
        table, truth = simulate(n, seed=seed + k, fault_rate=fault_rate, tables=tables, start=start.isoformat())
        secs = table["started_at"].cast(pa.int64()).to_numpy() // 1_000_000
        local_day = (secs + table["utc_offset"].to_numpy().astype(np.int64) * 60) // 86400
        cuts = np.flatnonzero(np.r_[True, local_day[1:] != local_day[:-1], True])  # rows sorted by time
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            d = (date(1970, 1, 1) + timedelta(days=int(local_day[a]))).isoformat()
            store.write_rounds(GAME, d, table.slice(a, b - a), SHA)
            partitions.add(f"{GAME}/{d}")
        written += n
        faults += len(truth)
        start = date(1970, 1, 1) + timedelta(days=int(local_day[-1]) + 1)
        k += 1
        del table, truth
    store.commit_source(SourceRecord(sha256=SHA, path="<simulated>", size=0, format="simulated", stored=written,
                                     games={GAME: written}, partitions=sorted(partitions)))
    return written, faults


def _child(root: str, n: int, tables: int, fault_rate: float, seed: int, out: mp.Queue) -> None:
    t = time.perf_counter()
    rounds, faults = write_rounds(Path(root), n, tables, fault_rate, seed)
    out.put((rounds, faults, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))


def day_files(root: Path) -> list[tuple[str, list[Path]]]:
    store = Store(root)
    return [(d, store.parts(GAME, d)) for d in store.dates(GAME)]


def batches(days: list[tuple[str, list[Path]]], size: int, columns: list[str] | None = None):
    """Tables of at least ``size`` rounds (whole files), read from the day files in order."""
    pending, rows = [], 0
    for _d, files in days:
        for f in files:
            t = pq.read_table(f, columns=columns)
            pending.append(t)
            rows += t.num_rows
            if rows >= size:
                yield pa.concat_tables(pending).combine_chunks()  # one chunk per column, as a scan gives
                pending, rows = [], 0
    if pending:
        yield pa.concat_tables(pending).combine_chunks()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10_000_000)
    ap.add_argument("--tables", type=int, default=40, help="baccarat tables dealing (about 24,000 rounds a day each 20)")
    ap.add_argument("--fault-rate", type=float, default=0.0001)
    ap.add_argument("--batch-size", type=int, default=131_072, help="rounds per checked batch")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", type=Path, help="keep the store here (default: a temporary folder)")
    args = ap.parse_args()

    root = args.store or Path(tempfile.mkdtemp(prefix="bench-baccarat-"))
    try:
        q: mp.Queue = mp.get_context("spawn").Queue()
        proc = mp.get_context("spawn").Process(target=_child, args=(str(root), args.rounds, args.tables,
                                                                    args.fault_rate, args.seed, q))
        proc.start()
        rounds, faults, sim_s, sim_rss = q.get()
        proc.join()
        days = day_files(root)
        size = sum(f.stat().st_size for _d, fs in days for f in fs)
        print(f"simulated {rounds:,} rounds ({faults:,} faults) over {len(days)} days in {sim_s:.1f} s "
              f"({rounds / sim_s / 1e6:.2f} M rounds/s), peak RSS {sim_rss / 1024:.0f} MiB; "
              f"Parquet {size / 2**20:.0f} MiB")

        config = Config()
        rules = select_rules(GAME, "round")
        # (a) round checks alone
        wall = cpu = 0.0
        found = 0
        for batch in batches(days, args.batch_size):
            t0, c0 = time.perf_counter(), time.process_time()
            found += len(check_rounds(batch, GAME, config, rules))
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
        print(f"(a) round checks alone: {rounds / wall / 1e6:.2f} M rounds/s wall, "
              f"{rounds / cpu / 1e6:.2f} M rounds/s CPU ({wall:.1f} s wall, {cpu:.1f} s CPU), {found:,} findings")

        # (a') the same batches through the preparer and rule functions only (no findings frames)
        wall = cpu = 0.0
        for batch in batches(days, args.batch_size):
            t0, c0 = time.perf_counter(), time.process_time()
            ctx = PREPARERS[GAME](batch, config)
            for r in rules:
                r.func(ctx)
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
        print(f"(a') preparer and rule functions only: {rounds / wall / 1e6:.2f} M rounds/s wall, "
              f"{rounds / cpu / 1e6:.2f} M rounds/s CPU")

        # (b) end to end through the engine: the store read batch by batch, round checks, shoe checks by day
        t0, c0 = time.perf_counter(), time.process_time()
        findings, checked = collect(Store(root), config, games=[GAME], batch_size=args.batch_size)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        shoe = int(findings["rule_id"].isin([r.rule_id for r in select_rules(GAME, "shoe")]).sum())
        print(f"(b) end to end (auditkit.validate.collect over the store): {checked / wall / 1e6:.2f} M rounds/s wall, "
              f"{checked / cpu / 1e6:.2f} M rounds/s CPU ({wall:.1f} s wall), {len(findings):,} findings "
              f"({shoe:,} from shoe checks)")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"peak RSS of the checking process: {rss / 1024:.0f} MiB")
    finally:
        if args.store is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
