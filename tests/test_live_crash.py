"""Live mode's exactly-once from the first line: a watcher killed before its first checkpoint, a rotation
or a truncation while it is down, then a restart."""

from __future__ import annotations

import csv
import errno
import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_live import emitted, keys, nightly, streams

from auditkit.cli.main import main
from auditkit.live import Watcher
from auditkit.schema import FINDINGS
from auditkit.store import Store

HEADER = ",".join(f.name for f in FINDINGS)


def csv_rows(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _args(logs, tmp, *more) -> list[str]:
    return ["watch", str(logs), "--out", str(tmp / "f.jsonl"), "--csv", str(tmp / "f.csv"),
            "--checkpoint", str(tmp / "state.json"), "--store", str(tmp / "store"), "--poll", "0.05",
            "--no-stdout", *more]


def _kill_after_findings(logs, tmp) -> None:
    """Start a watcher that checkpoints only every 1,000 s; SIGKILL it once it has emitted findings."""
    proc = subprocess.Popen([sys.executable, "-m", "auditkit", *_args(logs, tmp, "--checkpoint-every", "1000")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 60
        while not ((tmp / "f.jsonl").exists() and (tmp / "f.jsonl").stat().st_size > 0):
            assert time.monotonic() < end and proc.poll() is None, "no findings emitted"
            time.sleep(0.05)
        time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    store = tmp / "store"
    assert not (store / "_manifest").exists() or not list((store / "_manifest").glob("*.json"))  # nothing committed


@pytest.mark.parametrize("change", ["rotate", "copytruncate"])
def test_killed_before_its_first_checkpoint_then_rotated_keeps_every_round_once(tmp_path, change):
    logs, every = tmp_path / "logs", tmp_path / "every"
    logs.mkdir()
    every.mkdir()
    lines = [x for v in streams("baccarat", tables=2, fault_rate=0.05).values() for x in v]
    cut = len(lines) * 4 // 5
    log = logs / "t.jsonl"
    log.write_text("".join(x + "\n" for x in lines[:cut]), "utf-8")
    _kill_after_findings(logs, tmp_path)
    if change == "rotate":
        log.rename(logs / "t.jsonl.1")
    else:
        shutil.copyfile(log, logs / "t.jsonl.1")
        with open(log, "r+b") as fh:
            fh.truncate(0)
    log.write_text("".join(x + "\n" for x in lines[cut:]), "utf-8")
    (every / "a.jsonl").write_text("".join(x + "\n" for x in lines[:cut]), "utf-8")
    (every / "b.jsonl").write_text("".join(x + "\n" for x in lines[cut:]), "utf-8")
    assert main(_args(logs, tmp_path, "--once")) in (0, 1)
    live = emitted(tmp_path / "f.jsonl")
    assert max(keys(live).values()) == 1
    assert keys(live) == nightly([every])
    assert Store(tmp_path / "store").count() == len(lines)  # every round, once
    rows = csv_rows(tmp_path / "f.csv")
    assert ",".join(rows[0]) == HEADER and sum(",".join(r) == HEADER for r in rows) == 1
    assert sorted((r[0], r[5]) for r in rows[1:]) == sorted((f["round_id"], f["rule_id"]) for f in live)


def test_a_csv_rewritten_from_its_start_keeps_its_header_once(tmp_path):
    """No checkpoint: a second run rewrites the CSV from its start (truncate(0) then the header)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for tid, lines in streams("baccarat", tables=2).items():
        (logs / f"{tid}.jsonl").write_text("".join(x + "\n" for x in lines), "utf-8")
    args = ["watch", str(logs), "--csv", str(tmp_path / "f.csv"), "--no-stdout", "--once"]
    assert main(args) == 1
    first = csv_rows(tmp_path / "f.csv")
    assert main(args) == 1
    rows = csv_rows(tmp_path / "f.csv")
    assert ",".join(rows[0]) == HEADER and sum(",".join(r) == HEADER for r in rows) == 1
    assert rows == first and len(rows) > 1


def test_watch_once_on_a_path_that_does_not_exist_is_exit_2(tmp_path, capsys):
    assert main(["watch", str(tmp_path / "nope"), "--once", "--no-stdout"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


class _Full:
    """A file handle on a full disk."""

    def __init__(self, fh):
        self.fh, self.name = fh, fh.name

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.fh, name)


@pytest.mark.parametrize("where", ["out", "csv", "checkpoint", "store"])
def test_a_full_disk_names_the_file(tmp_path, monkeypatch, where):
    logs = tmp_path / "logs"
    logs.mkdir()
    for tid, lines in streams("baccarat", tables=2).items():
        (logs / f"{tid}.jsonl").write_text("".join(x + "\n" for x in lines), "utf-8")
    w = Watcher([str(logs)], out=tmp_path / "f.jsonl", csv=tmp_path / "f.csv", checkpoint=tmp_path / "state.json",
                store=Store(tmp_path / "store"), stderr=io.StringIO(), gzip_settle=0.0)
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    expect = {"out": tmp_path / "f.jsonl", "csv": tmp_path / "f.csv", "checkpoint": tmp_path / "state.json",
              "store": tmp_path / "store"}[where]
    if where == "checkpoint":
        w.open()
        monkeypatch.setattr(Path, "write_text", lambda *a, **k: (_ for _ in ()).throw(full))
    elif where == "store":
        w.open()
        monkeypatch.setattr(Store, "write_rounds", lambda *a, **k: (_ for _ in ()).throw(full))
    else:
        w.open()
        setattr(w.outputs, f"{where}_fh", _Full(getattr(w.outputs, f"{where}_fh")))
    with pytest.raises(OSError) as err:
        while w.poll_once():
            pass
        w.flush()
    assert err.value.errno == errno.ENOSPC and str(expect) in str(err.value)
