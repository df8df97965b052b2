"""How a pool's workers start (auditkit/workers.py): forked by a fork server that imported their task modules
once, with the environment of the process that made the pool, dying with it even when it died first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from auditkit.workers import PRELOAD, process_pool, stop_pool

ROOT = Path(__file__).resolve().parents[1]


def test_a_worker_starts_with_the_task_modules_imported():
    """Imported by the fork server before it forked the worker: a spawned worker imports them again (0.45 CPU s
    each), here before its first task."""
    pool = process_pool(1)
    try:
        names = pool.submit(eval, f"[m for m in {list(PRELOAD)!r} if m in __import__('sys').modules]").result(60)
    finally:
        stop_pool(pool)
    assert pool._mp_context.get_start_method() == "forkserver"
    assert names == list(PRELOAD)


def test_a_worker_has_the_environment_of_the_pool_maker_as_the_pool_is_made(monkeypatch):
    """The fork server keeps the environment of its start; a worker takes its pool maker's (the credentials of an
    S3 store set after an earlier pool, say)."""
    stop_pool(process_pool(1))  # the fork server runs
    monkeypatch.setenv("AUDITKIT_WORKER_ENV", "set after the fork server started")
    pool = process_pool(1)
    try:
        assert pool.submit(os.getenv, "AUDITKIT_WORKER_ENV").result(60) == "set after the fork server started"
    finally:
        stop_pool(pool)


DIE_FIRST = '''
import os, signal, sys, time
from multiprocessing import forkserver
from auditkit.workers import process_pool

if __name__ == "__main__":
    pool = process_pool(2)
    for _ in range(2):
        pool.submit(time.sleep, 600)
    # the workers are started (their pids known) but may not have run a line of their own yet
    print(pool._mp_context.get_start_method(), forkserver._forkserver._forkserver_pid or "",
          *pool._processes, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
'''


@pytest.mark.parametrize("depth", [0, 100])  # the fork server's; a TMPDIR too deep for its socket: spawned
def test_workers_whose_pool_maker_died_as_they_started_exit(tmp_path, depth):
    """The start-up race: the process that made the pool is killed just after the workers were started,
    maybe before their first line; they, and the fork server, must be gone within 10 s."""
    script = tmp_path / "die_first.py"
    script.write_text(DIE_FIRST)
    tmp = Path(tempfile.mkdtemp(prefix="ak-")) / ("d" * depth)  # short: the server's socket path fits
    tmp.mkdir(exist_ok=True)
    try:
        for _ in range(3):
            _die_first(script, tmp, "spawn" if depth else "forkserver")
    finally:  # with the folder the kill left (multiprocessing's pymp-*, the server's socket)
        shutil.rmtree(tmp.parent if depth else tmp)


def _die_first(script: Path, tmp: Path, method: str) -> None:
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)})
    assert done.returncode == -9, done.stderr
    started, *pids = done.stdout.split()
    assert started == method and len(pids) == (3 if method == "forkserver" else 2)
    deadline = time.monotonic() + 10
    while (left := [p for p in map(int, pids) if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    for p in left:  # leave nothing behind, whatever the outcome
        psutil.Process(p).kill()
    assert not left, f"{left} of {pids} (the fork server first, if any, then the workers) outlived the pool's maker"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_pool_in_a_deep_temporary_folder_spawns_its_workers(tmp_path):
    """The fork server's socket lives in the temporary folder, and AF_UNIX allows 107 bytes of path: under a
    deeper ``TMPDIR`` (pytest's, macOS's) the server cannot start, and the workers are spawned instead (the
    command failed: ``AF_UNIX path too long``); they die with the pool's maker all the same."""
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    code = ("from auditkit.workers import process_pool, stop_pool\n"
            "import multiprocessing, os\n"
            "pool = process_pool(1)\n"
            "print(pool.submit(os.getppid).result(60) == os.getpid(), pool._mp_context.get_start_method())\n"
            "stop_pool(pool)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(deep)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "spawn"]
