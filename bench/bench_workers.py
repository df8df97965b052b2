"""Benchmark of parallel validation (a script, not a test): one worker, N local workers, a Dask cluster.

Simulates N baccarat rounds (default 10 million) into a temporary store, then
validates the whole store (round and shoe checks, as ``auditkit validate STORE``)
three ways, each in its own child process so that CPU time and peak memory are
its own:

(a) ``collect(store, workers=1)``, the serial engine;
(b) ``collect(store, workers=W)``, partitions on this process and a pool of W-1;
(c) ``collect(store, scheduler=client)`` on a ``LocalCluster`` of W worker
    processes (needs the ``dask`` extra), as Dask starts them, then with
    ``MALLOC_MMAP_THRESHOLD_`` set (16 MiB) in their environment: Dask's nanny
    sets ``MALLOC_TRIM_THRESHOLD_`` (64 KiB), which also fixes glibc's mmap
    threshold at 128 KiB, so that each numpy array of a batch is mapped and
    faulted in afresh (docs/scaling.md, "Starting a cluster").

With ``--ingest LOG`` it times the ingest of a log instead (``ingest_paths``
with ``workers=1``, ``workers=W`` and, unless ``--no-dask``, on a ``LocalCluster``
of W processes; each into an empty store, in its own child): wall and CPU
seconds, peak RSS of the client and of the largest worker, where the client's
time went (waiting for workers, the duplicate check, Parquet writes), the
client's share of the CPU, when the first byte range went out to a worker, the
bound the CPU sets on the speed-up (W times the CPU of one worker over the CPU
of W: what the wall ratio reaches on W idle cores with perfect overlap; on a
shared machine the wall ratio is noisy, this one much less), and a check that
the stores hold the same rows, index and quarantine. ``--repeat N`` does it N
times and gives the best and median of each figure; ``--against TREE`` runs the
auditkit of another tree (a worktree of main, say) by the same script, in
turns with this one's. The CPU is that of the whole process tree: the fork
server that forks the workers is stopped and reaped before it is read.

Prints wall and CPU seconds (the children's CPU included), the speed-up over
(a), peak RSS of the client process and of the largest worker, the machine's
load average before and after (the machine may be shared), and checks that the
three give the same findings.

    python bench/bench_workers.py --rounds 10000000 --workers 2
    python bench/bench_workers.py --ingest rounds.jsonl --workers 2
    python bench/bench_workers.py --ingest rounds.jsonl --no-dask --repeat 5 --against ../main
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from auditkit.store import Store
from auditkit.validate import collect

mode, store, workers = sys.argv[1], Store(sys.argv[2]), int(sys.argv[3])
cluster = client = None
worker_rss = worker_cpu = worker_sys = 0
if mode.startswith("dask"):
    from distributed import Client, LocalCluster
    if mode == "dask-mmap":  # the workers inherit it (the nanny adds Dask's MALLOC_TRIM_THRESHOLD_)
        __import__("os").environ["MALLOC_MMAP_THRESHOLD_"] = str(16 * 2**20)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           host="127.0.0.1")
    client = Client(cluster)
t0 = time.perf_counter()
findings, checked = collect(store, workers=workers if mode == "pool" else 1, scheduler=client)
wall = time.perf_counter() - t0
if client is not None:
    usage = client.run(lambda: __import__("resource").getrusage(0)[:3]).values()  # utime, stime, maxrss
    worker_rss, worker_cpu = max(u[2] for u in usage), sum(u[0] + u[1] for u in usage)
    worker_sys = sum(u[1] for u in usage)
    client.close(); cluster.close()
elif mode == "pool":  # the pool's processes have ended: the largest of them
    worker_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
key = sorted(zip(findings["round_id"], findings["rule_id"], findings["discrepancy"].round(2)))
digest = __import__("hashlib").sha256(json.dumps(key).encode()).hexdigest()
print(json.dumps({{"wall": wall, "checked": checked, "findings": len(findings), "key": digest,
                  "worker_rss_kib": worker_rss, "worker_cpu": worker_cpu, "worker_sys": worker_sys, "self_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

INGEST_CHILD = r"""
import hashlib, json, resource, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from auditkit.ingest import dedup, parallel, sources, writer
from auditkit.ingest.readers import jsonl as jsonl_reader
from auditkit.store import ParquetStream, Store

log, root, workers, mode = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
spent = {{"dedup": 0.0, "parts": 0.0, "streams": 0.0, "parse": 0.0}}
cluster = client = None
if mode.startswith("dask"):
    from distributed import Client, LocalCluster
    if mode == "dask-mmap":  # the workers inherit it (the nanny adds Dask's MALLOC_TRIM_THRESHOLD_)
        __import__("os").environ["MALLOC_MMAP_THRESHOLD_"] = str(16 * 2**20)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           host="127.0.0.1")
    client = Client(cluster)

def timed(owner, name, key):
    real = getattr(owner, name)
    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return real(*a, **kw)
        finally:
            spent[key] += time.perf_counter() - t0
    setattr(owner, name, wrapper)

timed(dedup.SeenRounds, "check", "dedup")            # the client's duplicate check
timed(writer._Parts, "_flush", "parts")             # the client's Parquet writes of parts
timed(ParquetStream, "write", "streams")             # index and quarantine
timed(writer, "hash_block", "parse")                # in this process only when workers = 1 (plus parse_block)
timed(jsonl_reader, "parse_block", "parse")
runs = []
real_init = parallel.ParallelIngest.__init__
def init(self, *a, **kw):
    real_init(self, *a, **kw)
    runs.append(self)
parallel.ParallelIngest.__init__ = init
first_range = []  # when the first byte range went out to a worker (before it: this process alone)
real_submit = parallel._Executor.submit
def submit(self, fn, *a):
    if fn.__name__ == "write_range" and not first_range:
        first_range.append(time.perf_counter() - t0)
    return real_submit(self, fn, *a)
parallel._Executor.submit = submit
store = Store(root)
t0 = time.perf_counter()
report = sources.ingest_paths([log], store, workers=workers, scheduler=client)
wall = time.perf_counter() - t0
self_cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before the check below reads the index
if client is not None:  # the Dask workers' own figures (their processes outlive this point)
    usage = client.run(lambda: __import__("resource").getrusage(0)[:3]).values()  # utime, stime, maxrss
    worker_rss, cpu = max(u[2] for u in usage), self_cpu + sum(u[0] + u[1] for u in usage)
    client.close(); cluster.close()
else:  # the fork server reaps the workers it forked: stopped and reaped here, their CPU is in ours
    from multiprocessing import forkserver
    forkserver._forkserver._stop()  # (no server: nothing to do)
    cpu = self_cpu + sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])
    worker_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if runs else 0
digest = hashlib.sha256(repr(sorted(r.partitions for r in store.manifest())).encode())
# the index holds every stored round's id, content hash (line_hash) and line: the rows, in line order
index = store.index().sort_by([("source_line", "ascending")])
for name in ("id_hash", "line_hash", "source_line"):
    digest.update(index[name].to_numpy().tobytes())
digest.update("\n".join(index["round_id"].to_pylist()).encode())
digest.update(store.quarantine().to_csv().encode())
print(json.dumps({{"wall": wall, "lines": report.total("lines_read"), "stored": report.total("stored"),
                  "quarantined": report.total("quarantined"), "key": digest.hexdigest(),
                  "waited": runs[0].waited if runs else 0.0, **spent,
                  "first_range": first_range[0] if first_range else None,
                  "cpu": cpu, "self_cpu": self_cpu,
                  "self_rss_kib": self_rss, "worker_rss_kib": worker_rss}}))
"""


def run_ingest(log: Path, workers: int, mode: str = "pool", s3: str | None = None, root: Path = ROOT) -> dict:
    """One ingest in its own child (a fresh store, local or in the S3 server at ``s3``) with the auditkit
    of the tree ``root``: its figures, CPU time with its workers' included (``mode`` "dask", "dask-mmap":
    on a LocalCluster of ``workers`` processes, the second with ``MALLOC_MMAP_THRESHOLD_`` set)."""
    import uuid

    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile("w+") as out:
        load = os.getloadavg()[0]
        store = (f"s3://{BUCKET}/{uuid.uuid4().hex[:8]}/store?endpoint_override={s3}&scheme=http&region=us-east-1"
                 if s3 else str(Path(tmp) / "store"))
        child = subprocess.Popen([sys.executable, "-c", INGEST_CHILD.format(root=str(root)), str(log),
                                  store, str(workers), mode], stdout=out,
                                 stderr=subprocess.DEVNULL if mode.startswith("dask") else None, text=True)
        if child.wait():
            raise SystemExit(f"ingest with {workers} worker(s) ({mode}) failed")
        out.seek(0)
        result = json.loads(out.read().strip().splitlines()[-1])
    result.update(load_before=load, load_after=os.getloadavg()[0])  # CPU: the child's and its workers' to the end of ingest
    return result


BUCKET = "bench"


def _moto() -> tuple[object, str]:
    """moto's S3 server on 127.0.0.1 with one bucket (fake credentials in the environment, inherited by
    the children): (the server, its host:port)."""
    import logging

    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise

    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"})
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1").create_bucket(Bucket=BUCKET)
    return server, f"{host}:{port}"


def ingest_main(log: Path, workers: int, dask: bool, s3: bool = False, repeat: int = 1,
                against: Path | None = None) -> None:
    """``repeat`` times: one worker, then ``workers``, with this tree's auditkit (after the tree ``against``'s,
    in turns, when given); each run's figures, then the best and median of each tree's."""
    import statistics

    print(f"{log}: {log.stat().st_size / 2**20:,.0f} MiB; {os.cpu_count()} cores"
          + ("; into a moto S3 store (its server in this process)" if s3 else ""))
    server, endpoint = _moto() if s3 else (None, None)
    trees = {"against": against, "this": ROOT} if against else {"this": ROOT}
    for root in trees.values():  # compiled as an installed package is (as compare.py does)
        compileall.compile_dir(str(Path(root) / "auditkit"), quiet=1)
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for k in range(repeat):
        for name, root in trees.items():
            results = {w: run_ingest(log, w, s3=endpoint, root=root) for w in (1, workers)}
            if dask:
                results[f"dask {workers}"] = run_ingest(log, workers, "dask", endpoint, root)
                results[f"dask-mmap {workers}"] = run_ingest(log, workers, "dask-mmap", endpoint, root)
            print(f"\n{name} tree ({root}), run {k + 1} of {repeat}:")
            runs[name].append(_ingest_table(results, workers))
    if server is not None:
        server.stop()  # type: ignore[attr-defined]
    if repeat > 1 or against:
        print(f"\n{'tree':<8}{'':<8}{'wall 1':>8}{'wall ' + str(workers):>8}{'ratio':>8}{'CPU 1':>8}"
              f"{'CPU ' + str(workers):>8}{'CPU bound':>10}{'client':>8}{'busy':>7}")
        for name, rows in runs.items():
            for label, pick in (("best", min), ("median", statistics.median)):
                # the best of the ratios and of the workers' busy share is the highest; of the others the lowest
                value = {key: (max if pick is min and key in ("ratio", "bound", "busy") else pick)([r[key] for r in rows])
                         for key in rows[0]}
                print(f"{name:<8}{label:<8}{value['wall1']:>8.2f}{value['wallN']:>8.2f}{value['ratio']:>7.2f}x"
                      f"{value['cpu1']:>8.2f}{value['cpuN']:>8.2f}{value['bound']:>9.2f}x{value['client']:>8.1%}"
                      f"{value['busy']:>7.0%}")


def _ingest_table(results: dict, workers: int) -> dict:
    """Print one run's table (one worker, ``workers``, Dask's); its figures for the summary."""
    base = results[1]["wall"]
    print(f"{'workers':<13}{'wall s':>8}{'CPU s':>8}{'speed-up':>10}{'lines/s':>11}{'client RSS':>12}{'worker RSS':>12}"
          f"{'client waits':>14}{'dedup':>7}{'parts':>7}{'index+q':>9}{'load':>11}")
    for w, r in results.items():
        worker = f"{r['worker_rss_kib'] / 1024:.0f} MiB" if r["worker_rss_kib"] else "-"
        print(f"{w:<13}{r['wall']:>8.1f}{r['cpu']:>8.1f}{base / r['wall']:>9.2f}x{r['lines'] / r['wall']:>11,.0f}"
              f"{r['self_rss_kib'] / 1024:>8.0f} MiB{worker:>12}{r['waited']:>13.1f}s{r['dedup']:>6.1f}s"
              f"{r['parts']:>6.1f}s{r['streams']:>8.1f}s{r['load_before']:>5.1f}->{r['load_after']:.1f}")
    many = results[workers]
    print(f"(workers 1: {results[1]['parse']:.1f} s parsing and hashing in the one process; "
          f"client CPU with {workers} workers: {many['self_cpu']:.2f} s, "
          f"{many['self_cpu'] / many['cpu']:.1%} of the CPU; its first byte range out to a worker "
          + (f"{many['first_range']:.2f} s after the start" if many["first_range"] is not None else "never")
          + f"; the CPU's bound on the speed-up, {workers} x CPU(1) / CPU({workers}): "
          f"{workers * results[1]['cpu'] / many['cpu']:.2f}x)")
    for name, r in results.items():
        if str(name).startswith("dask"):
            print(f"({name}: {r['wall'] / results[workers]['wall']:.2f}x the time of workers {workers})")
    same = len({r["key"] for r in results.values()}) == 1
    print("same rows, index and quarantine" if same else "STORES DIFFER")
    return {"wall1": base, "wallN": many["wall"], "ratio": base / many["wall"], "cpu1": results[1]["cpu"],
            "cpuN": many["cpu"], "bound": workers * results[1]["cpu"] / many["cpu"],
            "client": many["self_cpu"] / many["cpu"], "busy": many["cpu"] / (workers * many["wall"])}


def run(mode: str, store: Path, workers: int) -> dict:
    """One route in its own child: its findings digest, wall time, CPU time (its workers' included)
    and peak RSS (``os.wait4`` gives the child's own usage; a Dask worker reports its own)."""
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT)), mode, str(store),
                                  str(workers)], stdout=out, stderr=subprocess.DEVNULL, text=True)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            raise SystemExit(f"{mode} route failed with exit {child.returncode}")
        out.seek(0)
        result = json.loads(out.read().strip().splitlines()[-1])
    result["cpu"] = usage.ru_utime + usage.ru_stime  # the child's and its pool's, the Dask workers' when reaped
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask cluster")
    ap.add_argument("--store", type=Path, help="reuse (or keep) this store instead of a temporary one")
    ap.add_argument("--ingest", type=Path, metavar="LOG", help="time the ingest of this log instead")
    ap.add_argument("--s3", action="store_true", help="with --ingest: into a store on a moto S3 server")
    ap.add_argument("--repeat", type=int, default=1, help="with --ingest: this many runs, then the best and median")
    ap.add_argument("--against", type=Path, metavar="TREE",
                    help="with --ingest: also the auditkit of this tree (e.g. a worktree of main), in turns")
    args = ap.parse_args()
    if args.ingest:
        ingest_main(args.ingest, args.workers, not args.no_dask, args.s3, args.repeat, args.against)
        return
    sys.path.insert(0, str(ROOT))
    from auditkit.simulate import simulate_into_store
    from auditkit.store import Store

    tmp = tempfile.TemporaryDirectory()
    root = args.store or Path(tmp.name) / "store"
    store = Store(root)
    if not store.count():
        t0 = time.perf_counter()
        simulate_into_store(store, "baccarat", args.rounds, seed=11, fault_rate=0.0001)
        print(f"simulated {store.count():,} rounds over {len(store.dates('baccarat'))} days "
              f"in {time.perf_counter() - t0:.0f} s")
    modes = [("serial", 1), ("pool", args.workers)] + ([] if args.no_dask else [("dask", args.workers),
                                                                                ("dask-mmap", args.workers)])
    load = os.getloadavg()
    results = {m: run(m, root, w) for m, w in modes}
    print(f"load average (1, 5, 15 min) before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"after: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    base = results["serial"]["wall"]
    print(f"{'route':<28}{'wall s':>8}{'CPU s':>8}{'speed-up':>10}{'client RSS MiB':>16}{'worker RSS MiB':>16}"
          f"{'findings':>10}")
    for (mode, w), r in zip(modes, results.values(), strict=True):
        label = {"serial": "workers 1", "pool": f"workers {w}", "dask": f"dask, {w} local workers",
                 "dask-mmap": "dask, MALLOC_MMAP_THRESHOLD_"}[mode]
        worker = f"{r['worker_rss_kib'] / 1024:.0f}" if r["worker_rss_kib"] else "-"
        print(f"{label:<28}{r['wall']:>8.1f}{r['cpu']:>8.1f}{base / r['wall']:>9.2f}x{r['self_rss_kib'] / 1024:>16.0f}"
              f"{worker:>16}{r['findings']:>10,}")
    for mode in ("dask", "dask-mmap"):
        if mode in results:
            r = results[mode]
            print(f"({mode}: the workers' own CPU, from getrusage in each: {r['worker_cpu']:.1f} s, "
                  f"{r['worker_sys']:.1f} s of it in the kernel; {r['wall'] / results['pool']['wall']:.2f}x "
                  f"the time of workers {args.workers})")
    same = len({r["key"] for r in results.values()}) == 1
    print("same findings on every route" if same else "FINDINGS DIFFER between routes")


if __name__ == "__main__":
    main()
