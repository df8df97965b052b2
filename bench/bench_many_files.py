"""Benchmark: many small logs against the same rounds as one log (ingest, validate, ``watch --once``).

    python bench/bench_many_files.py --files 1000 5000 20000 --rounds-per-file 5

A casino sends a file per table per day. For each count of files, simulates
``files * rounds-per-file`` baccarat rounds once and writes them twice: as that
many small logs (each table's rounds in order, ``rounds-per-file`` a file) and
as one log. Then runs, each in its own process, ``auditkit ingest`` of each into
a new store, ``auditkit validate`` of each store and ``auditkit watch --once`` of
each (the many files with the open-files limit lowered to 1,024, as systemd and
most shells set it). Prints CPU seconds (user + system of the command),
wall seconds and peak RSS of each, the per-file cost beyond the one log's
(``(cpu_many - cpu_one) / files``) and the ratio. Run by hand; not a test.

``--keep DIR`` writes the logs and stores of each count under ``DIR/<files>`` and keeps them: a later run with
the same ``DIR`` reuses the logs, and without ``ingest`` in ``--steps`` the stores too (validate re-measured in
seconds, not after a 20-minute ingest); with ``ingest``, the stores are ingested again from scratch.
``--repeat N`` runs validate and watch N times, in turns, and prints the runs of least CPU and the median runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOFILE = 1024  # the usual soft limit of open files


def _write_logs(root: Path, files: int, per_file: int, seed: int) -> int:
    """``files`` small logs under ``root/many`` and the same rounds as ``root/one.jsonl``; the rounds."""
    from auditkit.ingest.jsonl import records_from_table
    from auditkit.simulate import simulate

    table, _truth = simulate("baccarat", files * per_file, seed=seed, fault_rate=0.01)
    by_table: dict[str, list[str]] = {}
    for rec in records_from_table(table, "baccarat"):
        by_table.setdefault(rec["table_id"], []).append(json.dumps(rec, separators=(",", ":")))
    many = root / "many"
    many.mkdir()
    n = 0
    with open(root / "one.jsonl", "w", encoding="utf-8") as one:
        for tid, lines in by_table.items():
            one.write("".join(x + "\n" for x in lines))
            for k in range(0, len(lines), per_file):
                (many / f"{tid}-{k // per_file:06d}.jsonl").write_text("".join(x + "\n" for x in lines[k:k + per_file]),
                                                                       "utf-8")
                n += 1
    return n


def _write_logs_apart(root: Path, files: int, per_file: int, seed: int) -> int:
    """:func:`_write_logs` in a process of its own: this one, which starts the commands, stays small."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); from pathlib import Path; "
            f"import bench_many_files as b; print(b._write_logs(Path({str(root)!r}), {files}, {per_file}, {seed}))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                              env=env).stdout.split()[-1])


def _limit_files() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(NOFILE, hard), hard))


def _run(args: list[str], limit: bool = False) -> tuple[float, float, float, int, str]:
    """CPU seconds, wall seconds, peak RSS (MiB), exit status and the last stderr line of one command."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "auditkit", *args], stdout=subprocess.DEVNULL, stderr=err,
                                env=env, preexec_fn=_limit_files if limit else None)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, proc.returncode, tail[-1] if tail else ""


def _command(step: str, root: Path, src: Path, kind: str, w: list[str]) -> tuple[list[str], Path | None]:
    """The command line of one step on ``src`` (the many logs or the one), and the findings file it writes."""
    store = str(root / f"s-{kind}")
    if step == "ingest":
        return ["ingest", "-q", "--store", store, *w, str(src)], None
    if step == "validate":
        out = root / f"v-{kind}.csv"
        return ["validate", "-q", "--no-progress", *w, "--out", str(out), store], out
    out = root / f"w-{kind}.jsonl"
    return ["watch", "-q", "--once", "--no-stdout", "--poll", "0.05", "--out", str(out), str(src)], out


def _findings(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, encoding="utf-8") as fh:
        return max(sum(1 for _ in fh) - (1 if path.suffix == ".csv" else 0), 0)


def _root(stack: contextlib.ExitStack, keep: Path | None, files: int) -> Path:
    """The folder of one count's logs and stores: ``keep/<files>`` (kept), else a temporary one."""
    if keep is None:
        return Path(stack.enter_context(tempfile.TemporaryDirectory()))
    root = keep / str(files)
    root.mkdir(parents=True, exist_ok=True)
    return root


def _logs(root: Path, files: int, per_file: int, seed: int) -> int:
    """The number of small logs under ``root/many``, written first unless a finished earlier run left them."""
    done = root / "logs.json"
    want = {"files": files, "rounds_per_file": per_file, "seed": seed}
    if done.exists():
        got = json.loads(done.read_text("utf-8"))
        if {k: got.get(k) for k in want} == want:
            return int(got["logs"])
    shutil.rmtree(root / "many", ignore_errors=True)
    n = _write_logs_apart(root, files, per_file, seed)
    done.write_text(json.dumps({**want, "logs": n}), "utf-8")
    return n


def _median(runs: list[tuple]) -> tuple:
    """The run of median CPU (the upper one of an even number)."""
    return sorted(runs)[len(runs) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--rounds-per-file", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1, help="ingest and validate workers (default 1: CPU comparable)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--steps", nargs="+", choices=["ingest", "validate", "watch"], default=["ingest", "validate", "watch"],
                    help="validate needs ingest, or the stores kept by an earlier --keep run (default: all three)")
    ap.add_argument("--keep", type=Path, metavar="DIR",
                    help="write the logs and stores under DIR/<files> and keep them; reuse those there")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run validate and watch N times, the many files and the one log in turns, and print the "
                         "runs of least CPU and the median runs (the machine is shared: one pair says little)")
    args = ap.parse_args()
    w = ["--workers", str(args.workers)]
    print(f"{'files':>7} {'step':<9} {'CPU many':>9} {'CPU one':>8} {'ms/file':>8} {'ratio':>6} "
          f"{'wall many':>9} {'wall one':>8} {'RSS many':>9} {'RSS one':>8}  findings many/one")
    for files in args.files:
        with contextlib.ExitStack() as stack:
            root = _root(stack, args.keep, files)
            n = _logs(root, files, args.rounds_per_file, args.seed)
            if "ingest" in args.steps:
                for kind in ("many", "one"):
                    shutil.rmtree(root / f"s-{kind}", ignore_errors=True)
            elif not (root / "s-many").is_dir():
                sys.exit(f"no stores under {root}: run with ingest in --steps first")
            for step in args.steps:
                runs: dict[str, list[tuple]] = {"many": [], "one": []}
                for _ in range(1 if step == "ingest" else args.repeat):
                    for kind, src in (("many", root / "many"), ("one", root / "one.jsonl")):
                        cmd, out = _command(step, root, src, kind, w)
                        cpu, wall, rss, code, last = _run(cmd, limit=(kind == "many"))
                        if code not in (0, 1):
                            sys.exit(f"{step} of {kind}: exit {code}: {last}")
                        runs[kind].append((cpu, wall, rss, _findings(out) if out else None))
                for label, pick in (("", min), (" median", _median))[:1 + (len(runs["many"]) > 1)]:
                    (cm, wm, rm, fm), (co, wo, ro, fo) = pick(runs["many"]), pick(runs["one"])
                    same = "" if fm is None else f"{fm}/{fo}" + ("" if fm == fo else " DIFFERENT")
                    print(f"{n:>7,} {step + label:<9} {cm:>9.1f} {co:>8.1f} {1000 * (cm - co) / n:>8.2f} "
                          f"{cm / max(co, 1e-9):>6.2f} {wm:>9.1f} {wo:>8.1f} {rm:>8.0f}M {ro:>7.0f}M  {same}", flush=True)


if __name__ == "__main__":
    main()
