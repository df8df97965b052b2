"""Benchmark: ingest JSON Lines logs into a store (lines per second, peak memory).

    python bench/bench_ingest.py --rounds 200000

Simulates baccarat rounds, writes them as a gzip log, then times
``auditkit ingest`` into an empty store. Run by hand; not a test.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from auditkit.ingest.sources import ingest_paths
from auditkit.simulate import simulate_to_jsonl
from auditkit.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=200_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "rounds.jsonl.gz"
        t0 = time.perf_counter()
        simulate_to_jsonl("baccarat", args.rounds, log, seed=1, fault_rate=0.01)
        print(f"simulated and wrote {args.rounds:,} rounds in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        report = ingest_paths([log], Store(Path(tmp) / "store"))
        dt = time.perf_counter() - t0
        lines = report.total("lines_read")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"ingest: {lines:,} lines in {dt:.1f} s = {lines / dt:,.0f} lines/s; peak RSS {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
