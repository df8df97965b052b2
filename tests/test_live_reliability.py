"""Live mode as a writer like the others (issue 25): the store's lock for every commit, exactly-once from
the first line (a kill before the first checkpoint, then a rotation), one CSV header, a missing path
under ``--once``, a full disk naming its file, and a model test of kills x rotations x outputs."""

from __future__ import annotations

import dataclasses
import errno
import io
import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pytest
from test_live import _wait_for, append, emitted, keys, nightly, streams, watcher

from auditkit.cli import main
from auditkit.store import Store


def _lines(n: int, seed: int = 3) -> list[str]:
    """``n`` JSON lines of simulated baccarat rounds (a table after another, fixed times, 10% faults)."""
    data = streams("baccarat", tables=n // 150 + 1, seed=seed, pool=1000)
    lines = [line for table in data.values() for line in table]
    assert len(lines) >= n
    return lines[:n]


def _watch(log: Path, tmp: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "auditkit", "watch", str(log), "--store", str(tmp / "store"),
            "--out", str(tmp / "f.jsonl"), "--csv", str(tmp / "f.csv"), "--checkpoint", str(tmp / "cp.json"),
            "--poll", "0.05", "--no-stdout", *extra]


def _one_header(csv: Path) -> pd.DataFrame:
    text = csv.read_text("utf-8")
    assert text.count("round_id,game,") == 1 and text.startswith("round_id,game,"), text[:300]
    return pd.read_csv(csv)


def _copies(store: Store) -> int:
    """Rounds stored more than once (by round id)."""
    ids = store.index(["round_id"])["round_id"]
    return len(ids) - len(pc.unique(ids))


def test_killed_before_its_first_checkpoint_then_rotated_loses_nothing(tmp_path):
    """The issue's probe: --checkpoint-every 1000, kill -9 after the first findings, rotate t.jsonl to
    t.jsonl.1, a new t.jsonl, watch --once: every round stored once, the CSV has its header and every row."""
    lines = _lines(1100)
    log = tmp_path / "t.jsonl"
    append(log, lines[:1000])
    proc = subprocess.Popen(_watch(log, tmp_path, "--checkpoint-every", "1000"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: len(emitted(tmp_path / "f.jsonl")) > 0)
    finally:
        proc.kill()
        proc.wait()
    log.rename(tmp_path / "t.jsonl.1")
    append(log, lines[1000:])
    done = subprocess.run(_watch(log, tmp_path, "--once"), capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert Store(tmp_path / "store").count() == 1100 and _copies(Store(tmp_path / "store")) == 0
    both = [tmp_path / "t.jsonl.1", log]
    live = emitted(tmp_path / "f.jsonl")
    assert keys(live) == nightly(both)
    assert len(_one_header(tmp_path / "f.csv")) == len(live)


def test_csv_output_keeps_its_header_when_rows_after_the_checkpoint_are_cut(tmp_path):
    lines = _lines(300)
    log = tmp_path / "t.jsonl"
    append(log, lines[:150])
    w = watcher([log], tmp_path, csv=tmp_path / "f.csv", checkpoint=tmp_path / "cp.json")
    w.open()
    w.poll_once()   # findings written to the CSV; no checkpoint since the file was first seen
    w.outputs.csv_fh.close()   # the process dies here
    w.outputs.out_fh.close()
    append(log, lines[150:])
    w = watcher([log], tmp_path, csv=tmp_path / "f.csv", checkpoint=tmp_path / "cp.json")
    w.run(once=True)
    assert len(_one_header(tmp_path / "f.csv")) == len(emitted(tmp_path / "findings.jsonl")) > 0


@pytest.mark.parametrize("other", ["ingest", "watch"])
def test_watch_and_another_writer_on_one_store_keep_one_copy_of_each_round(tmp_path, other):
    """A watcher reads the log and holds its rounds; another writer (an ingest, a second watcher) stores
    the same rounds; then the watcher commits: it finds them stored and stores none again."""
    lines = _lines(3000, seed=5)
    log = tmp_path / "t.jsonl"
    append(log, lines)
    first = subprocess.Popen(_watch(log, tmp_path, "--checkpoint-every", "1000"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(emitted(tmp_path / "f.jsonl")) > 0)  # read and checked, not committed
        second = tmp_path / "second"
        second.mkdir()
        cmd = ([sys.executable, "-m", "auditkit", "ingest", str(log), "--store", str(tmp_path / "store")]
               if other == "ingest" else _watch(log, second, "--once"))
        if other == "watch":  # the second watcher writes the same store, its own outputs
            cmd[cmd.index("--store") + 1] = str(tmp_path / "store")
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        assert done.returncode in (0, 1), done.stderr
        assert Store(tmp_path / "store").count() == 3000
    finally:
        first.send_signal(signal.SIGTERM)  # the watcher's last commit
        _, err = first.communicate(timeout=180)
    assert first.returncode == 0, err
    store = Store(tmp_path / "store")
    assert store.count() == 3000 and _copies(store) == 0


def test_a_commit_while_another_writer_holds_the_lock_waits_for_the_next_checkpoint(tmp_path):
    lines = _lines(400)
    log = tmp_path / "t.jsonl"
    append(log, lines[:200])
    store = Store(tmp_path / "store")
    err = io.StringIO()
    w = watcher([log], tmp_path, store=store, stderr=err, lock_timeout=30)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with Store(tmp_path / "store").lock(5, command="ingest"):
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    w.open()
    w.poll_once()
    w.flush()                      # the store is locked: the rounds are kept, nothing is committed
    assert store.count() == 0 and "rounds kept for the next checkpoint" in err.getvalue()
    append(log, lines[200:])
    w.poll_once()
    release.set()
    t.join()
    w.close()                      # the last commit takes the lock and stores both polls' rounds
    assert store.count() == 400 and _copies(store) == 0


def test_watch_once_on_a_path_that_does_not_exist_is_exit_2(tmp_path, capsys):
    assert main(["watch", str(tmp_path / "nowhere.jsonl"), "--once", "--no-stdout"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_a_full_disk_names_the_file(tmp_path):
    log = tmp_path / "t.jsonl"
    append(log, _lines(200))
    w = watcher([log], tmp_path, csv=tmp_path / "f.csv")
    w.open()

    class Full:  # the CSV file on a disk that just filled up
        def __init__(self, real):
            self.real = real

        def write(self, b):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.real, name)

    w.outputs.csv_fh = Full(w.outputs.csv_fh)
    with pytest.raises(OSError) as exc:
        w.poll_once()
    assert exc.value.errno == errno.ENOSPC and exc.value.filename == str(tmp_path / "f.csv")
    done = subprocess.run([sys.executable, "-c", "from auditkit.cli.main import _describe\n"
                           f"print(_describe(OSError({errno.ENOSPC}, 'No space left on device', 'out/f.csv')))"],
                          capture_output=True, text=True)
    assert done.stdout.strip() == "out/f.csv: No space left on device"


def _seen(checkpoint: Path, log: Path) -> bool:
    """True once the watcher's checkpoint knows the file now at ``log``."""
    try:
        files = json.loads(checkpoint.read_text("utf-8"))["files"]
    except (OSError, ValueError, KeyError):
        return False
    return log.stat().st_ino in {f["ino"] for f in files}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_model_kills_and_rotations_give_what_validate_gives(tmp_path, seed):
    """Random SIGKILLs of a watcher while its log grows and is rotated (renamed away, a new file at the
    name), then a final --once: the store holds each round once, and --out / --csv hold what validate
    finds on the same lines, the CSV with one header. A rotation happens while a watcher runs and has
    seen the file (a file created and rotated away while no watcher ever ran is not known to be a log:
    docs/live.md); kills fall anywhere, between checkpoints and before the first one."""
    rng = random.Random(seed)
    lines = _lines(1200, seed=seed)
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "t.jsonl"
    log.touch()
    pos, generation = 0, 0
    while pos < len(lines):
        proc = subprocess.Popen(_watch(logs, tmp_path, "--checkpoint-every", rng.choice(["0.1", "0.5", "1000"])),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_for(lambda: _seen(tmp_path / "cp.json", log))
            for _ in range(rng.randint(1, 3)):
                step = rng.randint(50, 250)
                append(log, lines[pos:pos + step])
                pos += step
                time.sleep(rng.uniform(0.0, 0.4))
                if rng.random() < 0.4 and pos < len(lines):
                    generation += 1
                    log.rename(logs / f"t.jsonl.{generation}")
                    log.touch()
                    _wait_for(lambda: _seen(tmp_path / "cp.json", log))
            time.sleep(rng.uniform(0.0, 0.6))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    done = subprocess.run(_watch(logs, tmp_path, "--once"), capture_output=True, text=True, timeout=180)
    assert done.returncode in (0, 1), done.stderr
    files = sorted(logs.iterdir())
    store = Store(tmp_path / "store")
    assert store.count() == len(lines) and _copies(store) == 0
    live = emitted(tmp_path / "f.jsonl")
    assert max(keys(live).values(), default=1) == 1
    assert keys(live) == nightly(files)
    assert len(_one_header(tmp_path / "f.csv")) == len(live)


def _many_logs(folder: Path, files: int, per_file: int = 2) -> int:
    """``files`` small logs of simulated rounds (each table's rounds in order, ``per_file`` a file)."""
    folder.mkdir()
    chunks = [(tid, k, lines[k:k + per_file])
              for tid, lines in streams("baccarat", tables=4, seed=5, pool=2 * files * per_file).items()
              for k in range(0, len(lines) - per_file + 1, per_file)][:files]
    assert len(chunks) == files
    for tid, k, lines in chunks:
        append(folder / f"{tid}-{k // per_file:05d}.jsonl", lines)
    return files * per_file


def test_watch_of_more_files_than_the_open_files_limit(tmp_path):
    """Issue 41 item 5: ``watch`` kept every followed file open and exited 2 at the open-files limit
    ("Too many open files", no finding). Now it holds a bounded set open (a quarter of the limit), opening
    on demand: 600 files under a limit of 128, set in the child process, give what validate gives."""
    import resource

    logs = tmp_path / "logs"
    rounds = _many_logs(logs, 600)
    assert len(list(logs.iterdir())) == 600

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    done = subprocess.run([sys.executable, "-m", "auditkit", "watch", str(logs), "--once", "--out",
                           str(tmp_path / "f.jsonl"), "--no-stdout", "--poll", "0.05"],
                          capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert f"{rounds} round(s) checked" in done.stdout + done.stderr
    assert keys(emitted(tmp_path / "f.jsonl")) == nightly([logs])


def test_a_file_closed_as_least_recently_read_then_rotated_is_read_to_its_end(tmp_path):
    """One file held open at a time: a closed file renamed away (logrotate) is found again by its inode in
    its folder and read to its end; the new file under its name is read from its start."""
    logs = tmp_path / "logs"
    logs.mkdir()
    data = list(streams("baccarat", tables=3, seed=4, pool=400).values())
    names = [logs / f"t{k}.jsonl" for k in range(3)]
    for name, lines in zip(names, data, strict=True):
        append(name, lines[:20])
    w = watcher([logs], tmp_path)
    w.open()
    w.tail.max_open = 1
    try:
        while w.poll_once():
            pass
        assert len(w.tail.opened) == 1 and sum(t.fh is not None for t in w.tail.files.values()) == 1
        append(names[0], data[0][20:40])  # t0 (closed) grows, then is rotated before the next poll
        names[0].rename(logs / "t0.jsonl.1")
        append(names[0], data[0][40:60])
        for name, lines in zip(names[1:], data[1:], strict=True):
            append(name, lines[20:60])
        w.tail.settings = dataclasses.replace(w.tail.settings, orphan_grace=0.0)
        while w.poll_once():
            pass
    finally:
        w.close()
    assert w.stats["rounds"] == 180
    every = tmp_path / "every"
    every.mkdir()
    for k, lines in enumerate(data):
        append(every / f"t{k}.jsonl", lines[:60])
    assert keys(emitted(tmp_path / "findings.jsonl")) == nightly([every])
