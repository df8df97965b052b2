"""Live mode latency and memory: simulated tables write rounds in real time, ``auditkit watch`` follows them.

Latency is from a round's line being written (flushed by the writer) to its first
finding arriving on the watcher's stdout; the watcher runs in its own process
pinned to one core (the writer to another when there is one). Memory is the
watcher's resident set, sampled every 5 s (all samples in ``rss.csv`` in the run's
folder, and the RSS at each of ``--marks`` minutes printed). At the end the findings
written to ``--out`` are compared with ``auditkit validate`` on the same files.

    python bench/bench_live.py --rate 1000 --tables 50 --seconds 180
    python bench/bench_live.py --rate 400 --tables 20 --seconds 3600 --marks 10,30,60   # memory over an hour

The bench's own memory is bounded too (a round's write time is kept for
``LATENCY_HORIZON`` seconds), so an hour-long run does not measure the bench.

Run by hand, never as a timed test; figures in docs/live.md and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from pathlib import Path

import numpy as np

LATENCY_HORIZON = 600.0  # seconds a round's write time is kept waiting for its finding

from auditkit.ingest.sources import ingest_paths
from auditkit.simulate.follow import follow
from auditkit.store import Store
from auditkit.validate import collect


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="baccarat")
    ap.add_argument("--rate", type=float, default=1000.0, help="rounds per second over all tables")
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--fault-rate", type=float, default=0.02)
    ap.add_argument("--poll", type=float, default=0.2)
    ap.add_argument("--store", action="store_true", help="watch with --store (ingest as rounds arrive)")
    ap.add_argument("--keep", help="keep the logs and outputs in this folder")
    ap.add_argument("--marks", default="1,10,30,60", help="minutes at which to print the watcher's RSS")
    ap.add_argument("--nice", type=int, default=0,
                    help="niceness of the watcher (negative, as root, stands for a core of its own on a busy machine)")
    args = ap.parse_args()

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-live-"))
    logs = tmp / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    cores = sorted(os.sched_getaffinity(0))
    cmd = [sys.executable, "-m", "auditkit", "watch", str(logs), "--out", str(tmp / "findings.jsonl"),
           "--checkpoint", str(tmp / "checkpoint.json"), "--poll", str(args.poll)]
    if args.store:
        cmd += ["--store", str(tmp / "store")]
    err_file = open(tmp / "watch.stderr", "w+")  # noqa: SIM115 (a file, not a pipe: it never fills up)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, text=True, bufsize=1,
                            preexec_fn=lambda: (os.sched_setaffinity(0, {cores[0]}), os.nice(args.nice)))
    if len(cores) > 1:
        os.sched_setaffinity(0, set(cores[1:]))
    if args.nice:
        os.nice(max(args.nice // 2, -20 - os.nice(0)))  # the writer must keep its rate too

    written: dict[str, float] = {}  # round id -> when its line was flushed, for LATENCY_HORIZON seconds
    order: deque[tuple[float, str]] = deque()
    lock = threading.Lock()
    latency: list[float] = []  # of each round with findings, to its first finding
    seen: set[str] = set()
    unmatched = 0  # findings of rounds whose write time was not (or no longer) known

    def on_write(rid: str, t: float) -> None:
        with lock:
            written[rid] = t
            order.append((t, rid))
            while order[0][0] < t - LATENCY_HORIZON:
                written.pop(order.popleft()[1], None)

    def read_findings() -> None:
        nonlocal unmatched
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.time()
            rid = json.loads(line)["round_id"]
            if rid in seen:
                continue
            seen.add(rid)
            with lock:
                t = written.pop(rid, None)
            if t is None:
                unmatched += 1
            else:
                latency.append(now - t)

    reader = threading.Thread(target=read_findings, daemon=True)
    reader.start()
    time.sleep(3.0)  # the watcher imports and makes its first polls

    samples: list[tuple[float, float]] = []
    stop_sampling = threading.Event()
    marks = [float(m) * 60 for m in args.marks.split(",") if m]
    rss_log = open(tmp / "rss.csv", "w", buffering=1)  # noqa: SIM115 (written while the run lasts)
    rss_log.write("seconds,rss_mib,cpu_s\n")

    def sample() -> None:
        t0 = time.monotonic()
        todo = list(marks)
        while not stop_sampling.is_set():
            t, rss, c = time.monotonic() - t0, rss_mib(proc.pid), cpu_seconds(proc.pid) - cpu0
            samples.append((t, rss))
            rss_log.write(f"{t:.1f},{rss:.1f},{c:.1f}\n")
            if todo and t >= todo[0] - 2.5:  # the sample nearest the mark (the last one is just short of it)
                print(f"[{todo.pop(0) / 60:.0f} min] watcher RSS {rss:.1f} MiB, CPU {c:.0f} s", flush=True)
            stop_sampling.wait(5.0)

    sampler = threading.Thread(target=sample, daemon=True)
    cpu0 = cpu_seconds(proc.pid)
    t0 = time.monotonic()
    sampler.start()
    n = follow(args.game, logs, rate=args.rate, tables=args.tables, seconds=args.seconds, seed=7,
               fault_rate=args.fault_rate, on_write=on_write)
    wall = time.monotonic() - t0
    time.sleep(2.0)
    cpu = cpu_seconds(proc.pid) - cpu0
    stop_sampling.set()
    sampler.join()
    rss_log.close()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    reader.join(timeout=60)  # it reads stdout to its end
    err_file.seek(0)
    err = err_file.read()

    lat = np.array(latency)
    print(f"{args.game}: {n:,} rounds written to {args.tables} table files in {wall:.0f} s "
          f"({n / wall:,.0f} rounds/s); watcher exit status {proc.returncode}")
    if len(lat):
        p50, p99 = np.percentile(lat, [50, 99])
        print(f"latency (line written -> finding on stdout), {len(lat):,} rounds with findings: "
              f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {lat.max() * 1000:.0f} ms; "
              f"{unmatched} finding(s) of rounds without a known write time (over {LATENCY_HORIZON:.0f} s late)")
    print(f"watcher CPU {cpu:.1f} s over {wall + 2:.0f} s: {cpu / (wall + 2):.0%} of one core")
    rss = [r for _t, r in samples]
    if rss:
        print(f"watcher RSS: {rss[0]:.1f} MiB at start, {rss[-1]:.1f} MiB at end, peak {max(rss):.1f} MiB "
              f"({len(rss)} samples over {samples[-1][0]:.0f} s, in {tmp / 'rss.csv'})")
        half = len(rss) // 2
        if half >= 2:
            slope = np.polyfit([t for t, _ in samples[half:]], rss[half:], 1)[0]
            print(f"RSS slope over the second half: {slope * 3600:+.1f} MiB/hour")

    # a watcher stopped while behind leaves lines after its checkpoint: a restart (--once) reads them
    catch_up = subprocess.run([*cmd, "--once", "--no-stdout"], capture_output=True, text=True)
    said = [x for x in catch_up.stderr.splitlines() if "round(s) checked" in x]
    print(f"restart with --once after the stop (exit {catch_up.returncode}): "
          f"{said[-1].removeprefix('auditkit watch: ') if said else catch_up.stderr[-500:]}")
    with tempfile.TemporaryDirectory() as vt:
        store = Store(vt)
        ingest_paths([str(logs)], store)
        found, checked = collect(store)
    nightly = Counter(zip(found["round_id"], found["rule_id"], strict=True))
    live = Counter()
    for line in (tmp / "findings.jsonl").read_text("utf-8").splitlines():
        f = json.loads(line)
        live[(f["round_id"], f["rule_id"])] += 1
    dup = sum(c - 1 for c in live.values() if c > 1)
    print(f"findings: {sum(live.values()):,} live, {len(nightly):,} by validate on the same {checked:,} rounds; "
          f"{len(set(nightly) - set(live))} missed, {len(set(live) - set(nightly))} extra, {dup} duplicate")
    for line in err.splitlines():
        if "poll(s) read lines" in line:
            print(line.removeprefix("auditkit watch: "))
    with open("/proc/loadavg") as fh:
        print(f"load average at the end: {fh.read().split()[0]} on {os.cpu_count()} cores; watcher nice {args.nice}")
    if proc.returncode != 0:
        print(err[-2000:], file=sys.stderr)
    return 0 if proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
