"""The duplicate check at scale: ingest into a store of ``--stored`` rounds, with the store's id hashes
held from the start or streamed past each source at its commit (auditkit.ingest.dedup).

Three inputs, each into a fresh copy of the store, each route in a fresh process, interleaved:
``new`` (a log of ``--new`` rounds the store has none of), ``grown`` (a log the store holds the first
``--stored / --files`` rounds of, with ``--new`` appended), both with ``--workers``. Prints wall time,
the client's CPU, the workers' CPU and the client's peak RSS.

    python bench/bench_dedup.py --keep /tmp/dedup   # 4 M stored, 1 M new (the logs and store built once)
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def _log(folder: Path, name: str, rounds: int, seed: int) -> Path:
    """A simulated baccarat log with round ids of its own (prefixed by its seed)."""
    path = folder / f"{name}.jsonl"
    if not path.exists():
        raw = folder / f"{name}.raw.jsonl"
        subprocess.run([sys.executable, "-m", "auditkit", "-q", "simulate", "baccarat", "--rounds", str(rounds),
                        "--fault-rate", "0.01", "--seed", str(seed), "--out", str(raw)], check=True)
        with open(raw, "rb") as src, open(path, "wb") as out:
            for line in src:
                out.write(line.replace(b'"round_id": "', b'"round_id": "S%d-' % seed, 1))
        raw.unlink()
    return path


def _peak_mib() -> float:
    """This process's peak RSS since it began this program (ru_maxrss would carry its parent's over exec)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024


def _one(route: str, store: Path, log: Path, workers: int) -> None:
    from auditkit.ingest import dedup
    from auditkit.ingest.sources import ingest_paths
    from auditkit.store import Store

    if route == "held":
        dedup.STREAM_SOURCES = 0  # a run of one source holds them (as every run did before)
    s = Store(store)
    t0, c0 = time.perf_counter(), time.process_time()
    with s.lock(60):
        rec = ingest_paths([log], s, workers=workers).sources[0]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = _peak_mib()
    print(f"{route:8} {log.stem:6} wall {wall:6.2f} s  client CPU {cpu:6.2f} s  workers' CPU "
          f"{kids.ru_utime + kids.ru_stime:6.2f} s  client peak {peak:5.0f} MiB  "
          f"(stored {rec.stored}, already {rec.already_stored})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stored", type=int, default=4_000_000, help="rounds in the store")
    ap.add_argument("--files", type=int, default=4, help="logs the store is ingested from")
    ap.add_argument("--new", type=int, default=1_000_000, help="rounds of the log ingested into it")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="work folder to keep (logs and the store are reused)")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _one(args.one[0], Path(args.one[1]), Path(args.one[2]), args.workers)
        return
    if args.keep is None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            args.keep = Path(tmp)
            _run(args)
    else:
        args.keep.mkdir(parents=True, exist_ok=True)
        _run(args)


def _run(args: argparse.Namespace) -> None:
    work = args.keep
    per = args.stored // args.files
    logs = [_log(work, f"stored{k}", per, seed=100 + k) for k in range(args.files)]
    base = work / "store"
    if not base.exists():
        from auditkit.ingest.sources import ingest_paths
        from auditkit.store import Store

        ingest_paths(logs, Store(base), workers=args.workers)
    new = _log(work, "new", args.new, seed=99)
    grown = work / "grown.jsonl"
    if not grown.exists():
        with open(grown, "wb") as out:
            for part in (logs[0], new):
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
    counts: dict[str, set[str]] = {}
    for _ in range(args.repeat):
        for log in (new, grown):
            for route in ("held", "streamed"):
                copy = work / "copy"
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(base, copy)
                out = subprocess.run([sys.executable, __file__, "--keep", str(work), "--workers", str(args.workers),
                                      "--one", route, str(copy), str(log)], check=True, capture_output=True,
                                     text=True).stdout
                print(out, end="", flush=True)
                counts.setdefault(log.stem, set()).add(out[out.index("(stored"):].strip())
    print("same counts held and streamed" if all(len(c) == 1 for c in counts.values()) else f"DIFFERENT: {counts}")


if __name__ == "__main__":
    main()
