"""A model test of live mode's exactly-once: watchers SIGKILLed at random points of their loop (a real
SIGKILL of a forked child, at the k-th call of a step: a poll, an emit, half a write, a store commit, a
checkpoint), with rotations and copytruncates of the logs while they are down; then one watch to the end.
The store, ``--out`` and ``--csv`` must hold what ``auditkit validate`` finds on the same lines, each once."""

from __future__ import annotations

import csv
import os
import random
import shutil
import signal
import time
from collections import Counter

import pytest
from test_live import emitted, keys, nightly, streams

import auditkit.live.outputs as outputs
import auditkit.live.tail as tail
from auditkit.live import Watcher
from auditkit.live.checkpoint import Checkpoint
from auditkit.schema import FINDINGS
from auditkit.store import Store

HEADER = [f.name for f in FINDINGS]
POINTS = [("poll", Watcher, "poll_once", "before"), ("process", Watcher, "_process", "before"),
          ("emit", Watcher, "_emit", "before"), ("emitted", Watcher, "_emit", "after"),
          ("half a write", outputs, "_write", "half"), ("register", Checkpoint, "register", "before"),
          ("parts", Store, "write_rounds", "after"), ("manifest", Store, "commit_source", "before"),
          ("committed", Store, "commit_source", "after"), ("checkpoint", Checkpoint, "write", "before"),
          ("checkpointed", Checkpoint, "write", "after")]


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _arm(owner, name: str, when: str, k: int) -> None:
    """SIGKILL this process at the k-th call of ``owner.name`` (before it, after it, or half way
    through a write)."""
    orig, calls = getattr(owner, name), [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] != k:
            return orig(*args, **kwargs)
        if when == "before":
            _die()
        if when == "half":
            fh, data = args[0], args[1]
            fh.write(data[:max(len(data) // 2, 1)])
            fh.flush()
            _die()
        result = orig(*args, **kwargs)
        _die()
        return result

    setattr(owner, name, wrapper if owner is not Watcher and owner is not Store else wrapper)


def _watch(tmp, logs, point, k: int, every: float) -> int:
    """Run a watcher with --once in a forked child, killed at ``point``'s k-th call; its exit status
    (-9 when killed)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        code = 3
        try:
            tail.READ_BUDGET, tail.READ_MIN = 4096, 1024  # many small polls: many places to die
            if point is not None:
                _arm(point[1], point[2], point[3], k)
            w = Watcher([str(logs)], out=tmp / "f.jsonl", csv=tmp / "f.csv", checkpoint=tmp / "state.json",
                        store=Store(tmp / "store"), stderr=open(os.devnull, "w"), gzip_settle=0.0,  # noqa: SIM115
                        poll=0.0, checkpoint_every=every)
            w.run(once=True)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _where(tmp) -> str:
    """The outputs' sizes and what the checkpoint says (for the story of a failure)."""
    import json

    out = (tmp / "f.jsonl").stat().st_size if (tmp / "f.jsonl").exists() else 0
    if not (tmp / "state.json").exists():
        return f"out {out}, no checkpoint"
    st = json.loads((tmp / "state.json").read_text())
    files = ", ".join(f"{f['ino'] % 1000}@{f['path'].rsplit('/', 1)[-1]}:{f['line']}" for f in st["files"])
    return f"out {out}, checkpoint out {st['out_offset']} files {files}"


def _known(tmp, log) -> bool:
    """True when the checkpoint knows ``log`` as it is now (its inode, and the hash of its first bytes): one
    rotation or truncation between two sightings. A file written and rotated away (or truncated twice)
    before a watcher saw it cannot be followed: its content is under a name that is not watched."""
    import hashlib
    import json

    if not (tmp / "state.json").exists() or not log.exists():
        return False
    for f in json.loads((tmp / "state.json").read_text())["files"]:
        if f["ino"] == log.stat().st_ino and f["head_len"]:
            with open(log, "rb") as fh:
                return hashlib.blake2b(fh.read(f["head_len"]), digest_size=16).hexdigest() == f["head"]
    return False


def _change(logs, every, name: str, how: str, gen: dict) -> None:
    """Rotate (rename away, new file) or copytruncate ``name``; the lines so far go to ``every``."""
    log = logs / name
    if not log.exists():
        return
    gen[name] = gen.get(name, 0) + 1
    shutil.copyfile(log, every / f"{name[:-6]}-{gen[name]}.jsonl")
    if how == "rotate":
        log.rename(logs / f"{name}.{gen[name]}")
    else:
        shutil.copyfile(log, logs / f"{name}.{gen[name]}")
        with open(log, "r+b") as fh:
            fh.truncate(0)


@pytest.mark.parametrize("seed", range(5))
def test_kills_rotations_and_truncations_keep_every_output_exactly_once(tmp_path, seed):
    rng = random.Random(seed)
    logs, every = tmp_path / "logs", tmp_path / "every"
    logs.mkdir()
    every.mkdir()
    data = streams("baccarat", tables=2, seed=seed + 10, fault_rate=0.15, pool=300)
    chunks = {tid: [lines[i:i + len(lines) // 4 + 1] for i in range(0, len(lines), len(lines) // 4 + 1)]
              for tid, lines in data.items()}
    gen: dict[str, int] = {}
    story = []
    for step in range(4):
        for tid, parts in chunks.items():
            name = f"{tid}.jsonl"
            if step and rng.random() < 0.5 and _known(tmp_path, logs / name):
                how = rng.choice(["rotate", "copytruncate"])
                story.append(f"{how} {name} (ino {(logs / name).stat().st_ino % 1000})")
                _change(logs, every, name, how, gen)
            if step < len(parts):
                with open(logs / name, "a", encoding="utf-8") as fh:
                    fh.write("".join(x + "\n" for x in parts[step]))
        point = rng.choice(POINTS)
        k, ckpt = rng.randint(1, 6), rng.choice([0.0, 0.05, 1000.0])
        status = _watch(tmp_path, logs, point, k, ckpt)
        story.append(f"watch killed at {point[0]} #{k} (checkpoint every {ckpt}): {status}; {_where(tmp_path)}")
        assert status in (0, -9), "\n".join(story)
    assert _watch(tmp_path, logs, None, 0, 0.05) == 0, "\n".join(story)
    for tid in chunks:
        shutil.copyfile(logs / f"{tid}.jsonl", every / f"{tid}-last.jsonl")
    live_found = emitted(tmp_path / "f.jsonl")
    assert max(keys(live_found).values(), default=1) == 1, "\n".join(story)
    assert keys(live_found) == nightly([every]), "\n".join(story)
    with open(tmp_path / "f.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == HEADER and sum(r == HEADER for r in rows) == 1, "\n".join(story)
    assert Counter((r[0], r[5]) for r in rows[1:]) == Counter((f["round_id"], f["rule_id"]) for f in live_found), "\n".join(story)
    store = Store(tmp_path / "store")
    ids = [rid for g in store.games() for d in store.dates(g) for rid in store.read(g, d, ["round_id"])["round_id"].to_pylist()]
    assert len(ids) == len(set(ids)) == sum(len(v) for v in data.values()), "\n".join(story)


def test_a_shoe_closed_in_the_poll_that_checks_it_reports_its_findings_once(tmp_path):
    """Issue 41 item 0: a poll holding a shoe's last rounds and the next shoe's first at the same table
    closed the old shoe (forgetting its reported findings) before checking it: its findings on rounds of
    earlier polls were reported again. Seven lines a poll: many shoe changes fall inside a poll."""
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams("baccarat", tables=3, seed=7, fault_rate=0.15, pool=900)
    w = Watcher([str(logs)], out=tmp_path / "f.jsonl", stderr=open(os.devnull, "w"), poll=0.0)  # noqa: SIM115
    w.open()
    try:
        for i in range(0, max(map(len, data.values())), 7):
            for tid, lines in data.items():
                if lines[i:i + 7]:
                    with open(logs / f"{tid}.jsonl", "a", encoding="utf-8") as fh:
                        fh.write("".join(x + "\n" for x in lines[i:i + 7]))
            while w.poll_once():
                pass
    finally:
        w.close()
    live = keys(emitted(tmp_path / "f.jsonl"))
    assert {k[1] for k in live} & {"baccarat.integrity_shoe"}  # the shoe rule found something across polls
    assert [k for k, n in live.items() if n > 1] == []
    assert live == nightly([logs])


def test_writers_at_1000_rounds_a_second_across_20_files_each_finding_once(tmp_path):
    """Issue 41 item 0 as reported: a writer appends simulated rounds to 20 table logs at 1,000 rounds a
    second while a watcher follows them (polls every 0.1 s); every finding once, the same as validate."""
    import threading

    from auditkit.simulate.follow import follow

    logs = tmp_path / "logs"
    written = []
    writer = threading.Thread(target=lambda: written.append(
        follow("baccarat", logs, rate=1000.0, tables=20, seconds=5.0, seed=7, fault_rate=0.1)))
    w = Watcher([str(logs)], out=tmp_path / "f.jsonl", stderr=open(os.devnull, "w"), poll=0.1)  # noqa: SIM115
    w.open()
    writer.start()
    try:
        while writer.is_alive():
            w.poll_once()
            time.sleep(0.1)
        while w.poll_once():
            pass
    finally:
        writer.join()
        w.close()
    live = keys(emitted(tmp_path / "f.jsonl"))
    assert written[0] >= 3000 and w.stats["rounds"] == written[0]
    assert {k[1] for k in live} & {"baccarat.integrity_shoe"}
    assert [k for k, n in live.items() if n > 1] == []
    assert live == nightly([logs])
