"""Benchmark of the baccarat checks (a script, not a test).

Simulates N rounds (default 10 million) in a child process into a temporary
folder of Parquet files partitioned by date
(``rounds/game=baccarat/date=<d>/part-<k>.parquet``), then times

(a) the round checks alone: ``auditkit.validate.check_rounds`` on batches of
    about ``--batch`` rounds read from the files (reading not timed), and (a')
    the same batches through the preparer and rule functions only (without the
    engine's findings frames);
(b) end to end: reading the files and running the round checks, then the
    shoe checks ((e), shoe composition) day by day with the previous day carried.

Prints rounds per second (wall clock and CPU time: the machine may be shared)
and the peak resident memory of the checking process (``resource.getrusage``).

    python bench/bench_baccarat.py --rounds 3000000
"""

from __future__ import annotations

import argparse
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

from auditkit.paytables import Config  # noqa: E402
from auditkit.rules.registry import PREPARERS  # noqa: E402
from auditkit.simulate.baccarat import simulate  # noqa: E402
from auditkit.validate import check_rounds, check_shoes, select_rules, shoe_columns  # noqa: E402

GAME = "baccarat"
CHUNK = 500_000


def write_rounds(root: Path, n_rounds: int, tables: int, fault_rate: float, seed: int) -> tuple[int, int]:
    """Simulate in chunks and write one Parquet file per chunk and local date; returns (rounds, faults)."""
    start = date(2025, 6, 1)
    written = faults = 0
    k = 0
    while written < n_rounds:
        n = min(CHUNK, n_rounds - written)
        table, truth = simulate(n, seed=seed + k, fault_rate=fault_rate, tables=tables, start=start.isoformat())
        secs = table["started_at"].cast(pa.int64()).to_numpy() // 1_000_000
        local_day = (secs + table["utc_offset"].to_numpy().astype(np.int64) * 60) // 86400
        cuts = np.flatnonzero(np.r_[True, local_day[1:] != local_day[:-1], True])  # rows sorted by time
        for a, b in zip(cuts[:-1], cuts[1:]):
            d = (date(1970, 1, 1) + timedelta(days=int(local_day[a]))).isoformat()
            folder = root / "rounds" / f"game={GAME}" / f"date={d}"
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(table.slice(a, b - a), folder / f"part-{k}.parquet", compression="zstd")
        written += n
        faults += len(truth)
        start = date(1970, 1, 1) + timedelta(days=int(local_day[-1]) + 1)
        k += 1
        del table, truth
    return written, faults


def _child(root: str, n: int, tables: int, fault_rate: float, seed: int, out: mp.Queue) -> None:
    t = time.perf_counter()
    rounds, faults = write_rounds(Path(root), n, tables, fault_rate, seed)
    out.put((rounds, faults, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))


def day_files(root: Path) -> list[tuple[str, list[Path]]]:
    folder = root / "rounds" / f"game={GAME}"
    return [(p.name[5:], sorted(p.glob("*.parquet"))) for p in sorted(folder.glob("date=*"))]


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
    ap.add_argument("--batch", type=int, default=131_072)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = ap.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-baccarat-"))
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
        for batch in batches(days, args.batch):
            t0, c0 = time.perf_counter(), time.process_time()
            found += len(check_rounds(batch, GAME, config, rules))
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
        print(f"(a) round checks alone: {rounds / wall / 1e6:.2f} M rounds/s wall, "
              f"{rounds / cpu / 1e6:.2f} M rounds/s CPU ({wall:.1f} s wall, {cpu:.1f} s CPU), {found:,} findings")

        # (a') the same batches through the preparer and rule functions only (no findings frames)
        wall = cpu = 0.0
        for batch in batches(days, args.batch):
            t0, c0 = time.perf_counter(), time.process_time()
            ctx = PREPARERS[GAME](batch, config)
            for r in rules:
                r.func(ctx)
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
        print(f"(a') preparer and rule functions only: {rounds / wall / 1e6:.2f} M rounds/s wall, "
              f"{rounds / cpu / 1e6:.2f} M rounds/s CPU")

        # (b) end to end: read, round checks, then shoe checks by day with the previous day carried
        shoe_rules = select_rules(GAME, "shoe")
        cols = shoe_columns(shoe_rules)
        t0, c0 = time.perf_counter(), time.process_time()
        found_r = sum(len(check_rounds(b, GAME, config, rules)) for b in batches(days, args.batch))
        t_rounds = time.perf_counter() - t0
        found_s, carry = 0, None
        for d, files in days:
            day = pa.concat_tables([pq.read_table(f, columns=cols) for f in files])
            emit = np.ones(day.num_rows, bool)
            if carry is not None:
                emit = np.r_[np.zeros(carry.num_rows, bool), emit]
                day = pa.concat_tables([carry, day])
            found_s += len(check_shoes(day, GAME, config, shoe_rules, emit=emit, date=d))
            carry = day.filter(pa.array(emit))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"(b) end to end: {rounds / wall / 1e6:.2f} M rounds/s wall, {rounds / cpu / 1e6:.2f} M rounds/s CPU "
              f"({wall:.1f} s wall of which reading + round checks {t_rounds:.1f} s), "
              f"{found_r + found_s:,} findings ({found_s:,} from shoe checks)")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"peak RSS of the checking process: {rss / 1024:.0f} MiB")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
