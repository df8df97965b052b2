"""Live mode (``auditkit watch``): rotation, truncation, partial lines, gzip, crashes, shoe rules across
polls, quarantine, the store, and the same findings as ``auditkit validate`` on the same files."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from auditkit.ingest.sources import ingest_paths
from auditkit.live import Watcher
from auditkit.simulate.follow import _stamp, table_streams
from auditkit.store import Store
from auditkit.validate import collect

T0 = datetime(2025, 6, 2, 15, 0, tzinfo=UTC)
SHOE_RULES = {"baccarat.e", "baccarat.integrity_shoe", "blackjack.integrity_shoe"}


def streams(game: str, tables: int = 3, seed: int = 3, fault_rate: float = 0.1, pool: int = 600) -> dict[str, list[str]]:
    """Per-table JSON lines of simulated rounds (fixed times), with faults."""
    out = {}
    for k, (tid, recs) in enumerate(table_streams(game, tables, seed=seed, fault_rate=fault_rate, pool=pool)):
        out[tid] = [json.dumps(_stamp(r, tid, 0, T0 + timedelta(seconds=30 * i + k)))
                    for i, r in enumerate(recs)]
    return out


def append(path: Path, lines: list[str], end: str = "\n") -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines[:-1]) + (lines[-1] + end if lines else ""))


def watcher(paths, tmp: Path, **kw) -> Watcher:
    kw.setdefault("out", tmp / "findings.jsonl")
    kw.setdefault("checkpoint", tmp / "checkpoint.json")
    return Watcher([str(p) for p in paths], stderr=kw.pop("stderr", io.StringIO()), gzip_settle=0.0, poll=0.05,
                   **kw)


def once(paths, tmp: Path, **kw) -> Watcher:
    w = watcher(paths, tmp, **kw)
    w.run(once=True)
    return w


def emitted(path: Path) -> list[dict]:
    """The findings a watcher has written to ``path`` so far: its complete lines (one it is still writing,
    without its newline yet, is not one: a test polling a running watcher may read the file mid-line)."""
    return [json.loads(x) for x in path.read_text("utf-8").split("\n")[:-1]] if path.exists() else []


def keys(findings) -> Counter:
    return Counter((f["round_id"], f["rule_id"], round(float(f["discrepancy"]), 2)) for f in findings)


def nightly(paths) -> Counter:
    """What ``auditkit validate`` finds on the same files (ingest into a fresh store, validate)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        ingest_paths([str(p) for p in paths], store)
        found, _ = collect(store)
    return keys(found.to_dict("records"))


# ---- the same findings as the nightly job --------------------------------------------------------
@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_same_findings_as_validate_across_polls(tmp_path, game):
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams(game)
    for step in range(4):  # rounds arrive in four polls (a new watcher each time: resumed from the checkpoint)
        for tid, lines in data.items():
            chunk = lines[step * len(lines) // 4:(step + 1) * len(lines) // 4]
            append(logs / f"{tid}.jsonl", chunk)
        once([logs], tmp_path)
    live = emitted(tmp_path / "findings.jsonl")
    assert max(keys(live).values()) == 1  # none reported twice
    assert keys(live) == nightly([logs])
    assert {f["rule_id"] for f in live} & SHOE_RULES  # the shoe rules found something across polls


def test_findings_have_the_report_columns_and_csv_matches(tmp_path):
    from auditkit.schema import FINDINGS

    logs = tmp_path / "logs"
    logs.mkdir()
    for tid, lines in streams("baccarat", tables=2).items():
        append(logs / f"{tid}.jsonl", lines)
    out = io.StringIO()
    once([logs], tmp_path, csv=tmp_path / "f.csv", stdout=out)
    live = emitted(tmp_path / "findings.jsonl")
    assert live and all(list(f) == FINDINGS.names for f in live)
    assert [json.loads(x) for x in out.getvalue().splitlines()] == live
    csv = pd.read_csv(tmp_path / "f.csv")
    assert list(csv.columns) == FINDINGS.names and len(csv) == len(live)


def test_shoe_rules_across_polls(tmp_path):
    """The cutting card in round 2 of a shoe, round 4 dealt in a later poll: (e) reported on round 4."""
    tid, recs = table_streams("baccarat", 1, seed=1)[0]
    shoe = [r for r in recs if r["shoe_id"] == recs[0]["shoe_id"]][:4]
    lines = []
    for i, r in enumerate(shoe):
        r = _stamp(r, tid, 0, T0 + timedelta(minutes=i))
        r.pop("cut_card", None)
        if i == 1:
            r["cut_card"] = True
        lines.append(json.dumps(r))
    log = tmp_path / "t.jsonl"
    append(log, lines[:2])
    once([log], tmp_path)
    assert not any(f["rule_id"] == "baccarat.e" for f in emitted(tmp_path / "findings.jsonl"))
    append(log, lines[2:3])
    once([log], tmp_path)
    assert not any(f["rule_id"] == "baccarat.e" for f in emitted(tmp_path / "findings.jsonl"))
    append(log, lines[3:])
    once([log], tmp_path)
    cut = [f for f in emitted(tmp_path / "findings.jsonl") if f["rule_id"] == "baccarat.e"]
    assert [f["source_line"] for f in cut] == [4]
    assert keys(emitted(tmp_path / "findings.jsonl")) == nightly([log])


# ---- files that move, shrink, grow by halves ----------------------------------------------------
def test_rotation_old_file_read_to_its_end_new_file_from_its_start(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (tid, lines), = streams("baccarat", tables=1).items()
    log = logs / "table.jsonl"
    append(log, lines[:100])
    once([logs], tmp_path)
    os.rename(log, logs / "table.jsonl.1")      # rotated away (not a log name any more) ...
    append(logs / "table.jsonl.1", lines[100:120])  # ... while the writer still appends to it
    append(log, lines[120:200])                  # and a new file at the old name
    w = once([logs], tmp_path, orphan_grace=0.0)
    assert w.stats["rounds"] == 20 + len(lines[120:200])
    got = emitted(tmp_path / "findings.jsonl")
    assert max(keys(got).values()) == 1
    assert {f["round_id"] for f in got} == {f[0] for f in nightly([logs / "table.jsonl.1", log])}
    assert keys(got) == nightly([logs / "table.jsonl.1", log])


def test_truncation_reads_the_file_again_from_its_start(tmp_path):
    (tid, lines), = streams("baccarat", tables=1).items()
    log = tmp_path / "t.jsonl"
    append(log, lines[:50])
    once([log], tmp_path)
    log.write_text("")                        # copytruncate
    append(log, lines[50:80])
    err = io.StringIO()
    w = once([log], tmp_path, stderr=err)
    assert w.stats["rounds"] == 30
    assert "truncated" in err.getvalue()


def test_partial_line_waits_for_its_newline(tmp_path):
    (tid, lines), = streams("baccarat", tables=1).items()
    log = tmp_path / "t.jsonl"
    append(log, lines[:3])
    with open(log, "a") as fh:
        fh.write(lines[3][:40])
    w = once([log], tmp_path)
    assert w.stats["rounds"] == 3 and w.stats["quarantined"] == 0
    with open(log, "a") as fh:
        fh.write(lines[3][40:] + "\n")
    w = once([log], tmp_path)
    assert w.stats["rounds"] == 1 and w.stats["quarantined"] == 0


def test_gzip_read_once_complete(tmp_path):
    (tid, lines), = streams("baccarat", tables=1).items()
    data = gzip.compress(("\n".join(lines[:40]) + "\n").encode())
    gz = tmp_path / "old.jsonl.gz"
    gz.write_bytes(data[: len(data) // 2])     # still being written
    w = once([tmp_path], tmp_path, out=tmp_path / "out" / "f.jsonl")
    assert w.stats["rounds"] == 0
    gz.write_bytes(data)
    w = once([tmp_path], tmp_path, out=tmp_path / "out" / "f.jsonl")
    assert w.stats["rounds"] == 40
    w = once([tmp_path], tmp_path, out=tmp_path / "out" / "f.jsonl")
    assert w.stats["rounds"] == 0              # read once


# ---- bad lines and the store --------------------------------------------------------------------
def test_bad_lines_quarantined_as_ingest_does(tmp_path):
    (tid, lines), = streams("baccarat", tables=1).items()
    log = tmp_path / "logs" / "t.jsonl"
    log.parent.mkdir()
    bad = ['{"round_id": "X1", "game": "roulette"}', "not json", json.dumps(json.loads(lines[5]) | {"outcome": "x"}),
           json.dumps(json.loads(lines[5]) | {"dealer_id": "D-OTHER"})]
    append(log, lines[:10] + bad + lines[10:20] + [""])
    err = io.StringIO()
    live_store = Store(tmp_path / "live")
    once([log.parent], tmp_path, store=live_store, stderr=err)
    q = live_store.quarantine()
    nightly_store = Store(tmp_path / "nightly")
    ingest_paths([str(log.parent)], nightly_store)
    expected = nightly_store.quarantine()
    assert sorted(zip(q["source_file"], q["line"], q["reason"], strict=True)) == \
        sorted(zip(expected["source_file"], expected["line"], expected["reason"], strict=True))
    assert len(q) == 4  # three bad lines and a duplicate round_id with other content
    for f, n, reason in zip(q["source_file"], q["line"], q["reason"], strict=True):
        assert f"{f}:{n}: {reason}" in err.getvalue()


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_line_longer_than_max_line_is_quarantined_as_ingest_does(tmp_path, monkeypatch, gz):
    """A too-long line (written in pieces, its end arriving polls later) is one entry with its head
    and ingest's reason; the lines around it are checked; the file is not held whole."""
    import auditkit.live.tail as live

    monkeypatch.setattr(live, "SCAN", 1000)  # several reads to find its end
    monkeypatch.setattr(live, "READ_BUDGET", 8192)  # and a poll's share smaller than the line
    (tid, lines), = streams("baccarat", tables=1).items()
    long_line = '{"round_id": "LONG", "pad": "' + "x" * 100_000 + '"}'
    logs = tmp_path / "logs"
    logs.mkdir()
    live_store = Store(tmp_path / "live")
    if gz:
        log = logs / "t.jsonl.gz"
        log.write_bytes(gzip.compress(("\n".join(lines[:5] + [long_line] + lines[5:10]) + "\n").encode()))
        w = once([logs], tmp_path, store=live_store, max_line=4096)
    else:
        log = logs / "t.jsonl"
        append(log, lines[:5], end="\n")
        with open(log, "a") as fh:
            fh.write(long_line[:80_000])  # the writer is half way through it
        w = once([logs], tmp_path, store=live_store, max_line=4096)
        assert (w.stats["rounds"], w.stats["quarantined"]) == (5, 0)  # it waits for the line's end
        with open(log, "a") as fh:
            fh.write(long_line[80_000:] + "\n")
        append(log, lines[5:10])
        w = once([logs], tmp_path, store=live_store, max_line=4096)
        assert (w.stats["rounds"], w.stats["quarantined"]) == (5, 1)
    nightly_store = Store(tmp_path / "nightly")
    ingest_paths([str(logs)], nightly_store, max_line=4096)
    q, expected = live_store.quarantine(), nightly_store.quarantine()
    assert list(q["line"]) == list(expected["line"]) == [6]
    assert list(q["reason"]) == list(expected["reason"]) == ["line longer than 4,096 bytes"]
    assert list(q["raw"]) == list(expected["raw"])
    assert q["raw"][0].startswith('{"round_id": "LONG"') and len(q["raw"][0]) < 70_000  # its head only
    assert live_store.count() == nightly_store.count() == 10
    assert all(s.balanced for s in live_store.manifest())


def test_a_too_long_last_line_of_a_rotated_file_ends_at_the_files_end(tmp_path):
    """A rotated-away file's last line has no line break: read to the end, still one entry."""
    (tid, lines), = streams("baccarat", tables=1).items()
    log = tmp_path / "t.jsonl"
    append(log, lines[:3] + ['{"round_id": "LONG", "pad": "' + "x" * 10_000], end="")
    w = watcher([log], tmp_path, orphan_grace=0.0, max_line=4096)
    w.open()
    w.poll_once()
    assert (w.stats["rounds"], w.stats["quarantined"]) == (3, 0)
    log.rename(tmp_path / "t.jsonl.1")  # rotated away: its last line is complete as it stands
    w.poll_once()
    w.poll_once()
    w.close()
    assert (w.stats["rounds"], w.stats["quarantined"]) == (3, 1)


def test_store_rounds_are_already_stored_for_the_nightly_job(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams("baccarat", tables=2)
    store = Store(tmp_path / "store")
    for half in (0, 1):
        for tid, lines in data.items():
            append(logs / f"{tid}.jsonl", lines[half * len(lines) // 2:(half + 1) * len(lines) // 2])
        once([logs], tmp_path, store=store)
    total = sum(len(v) for v in data.values())
    assert store.count() == total
    assert all(s.balanced for s in store.manifest())
    report = ingest_paths([str(logs)], store)  # the nightly job on the same files
    assert report.total("stored") == 0 and report.total("already_stored") == total
    found, _ = collect(store)
    assert keys(found.to_dict("records")) == keys(emitted(tmp_path / "findings.jsonl"))


# ---- crashes ------------------------------------------------------------------------------------
def test_crash_after_emit_before_checkpoint_reports_nothing_twice(tmp_path):
    """Findings written to --out, then the process dies before its checkpoint (no close)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams("baccarat", tables=2)
    for tid, lines in data.items():
        append(logs / f"{tid}.jsonl", lines[:100])
    once([logs], tmp_path, csv=tmp_path / "f.csv")
    for tid, lines in data.items():
        append(logs / f"{tid}.jsonl", lines[100:200])
    w = watcher([logs], tmp_path, csv=tmp_path / "f.csv", store=Store(tmp_path / "store"))
    w.open()
    w.poll_once()                               # emitted ...
    w.outputs.out_fh.write(b'{"round_id": "half a lin')  # ... and died writing one more line
    w.outputs.out_fh.flush()
    for tid, lines in data.items():
        append(logs / f"{tid}.jsonl", lines[200:])
    once([logs], tmp_path, csv=tmp_path / "f.csv", store=Store(tmp_path / "store"))
    live = emitted(tmp_path / "findings.jsonl")
    assert max(keys(live).values()) == 1
    assert keys(live) == nightly([logs])
    assert len(pd.read_csv(tmp_path / "f.csv")) == len(live)


def _watch_process(logs: Path, tmp: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "auditkit", "watch", str(logs), "--out", str(tmp / "findings.jsonl"),
                             "--checkpoint", str(tmp / "checkpoint.json"), "--store", str(tmp / "store"),
                             "--poll", "0.05", "--checkpoint-every", "0.3", "--no-stdout"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_for(cond, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.05)


def test_sigkill_between_checkpoints_no_loss_no_duplicate(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams("baccarat", tables=3)
    proc = _watch_process(logs, tmp_path)
    try:
        for step in range(6):
            for tid, lines in data.items():
                append(logs / f"{tid}.jsonl", lines[step * len(lines) // 10:(step + 1) * len(lines) // 10])
            time.sleep(0.15)
        _wait_for(lambda: (tmp_path / "checkpoint.json").exists() and (tmp_path / "findings.jsonl").exists())
        time.sleep(0.4)
    finally:
        proc.kill()                            # SIGKILL: no checkpoint at exit
        proc.wait()
    for step in range(6, 10):
        for tid, lines in data.items():
            append(logs / f"{tid}.jsonl", lines[step * len(lines) // 10:(step + 1) * len(lines) // 10])
    proc = _watch_process(logs, tmp_path)
    total = sum(len(v) for v in data.values())
    _wait_for(lambda: Store(tmp_path / "store").count() == total)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    live = emitted(tmp_path / "findings.jsonl")
    assert max(keys(live).values()) == 1
    assert keys(live) == nightly([logs])
    assert Store(tmp_path / "store").count() == total  # every round stored once


# ---- the command line ---------------------------------------------------------------------------
def test_cli_watch_once_and_simulate_follow(tmp_path):
    from auditkit.cli import main

    assert main(["simulate", "baccarat", "--follow", "--rate", "400", "--tables", "3", "--out-dir",
                 str(tmp_path / "logs"), "--seconds", "0.5", "--fault-rate", "0.2"]) == 0
    files = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(files) == 3 and all(f.stat().st_size for f in files)
    rc = main(["watch", str(tmp_path / "logs"), "--once", "--no-stdout", "--out", str(tmp_path / "f.jsonl"),
               "--poll", "0.05"])
    live = emitted(tmp_path / "f.jsonl")
    assert rc == (1 if live else 0)
    assert keys(live) == nightly([tmp_path / "logs"])
    assert main(["simulate", "baccarat", "--rounds", "5"]) == 2  # --out still needed without --follow


# ---- memory bounded by design --------------------------------------------------------------------
def test_recent_round_ids_stay_within_their_capacity():
    from auditkit.live import RecentRounds

    recent = RecentRounds(1000)
    arrays = [recent.id_hash, recent.line_hash, recent.file, recent.line]
    for i in range(20_000):  # 20 windows' worth, from 2,000 file names (a rotation every 10 rounds)
        recent.add(10**12 + i, 7 * i, f"logs/t{i // 10}.jsonl", i)
    assert len(recent) == len(recent.slot) == 1000
    assert [a.shape for a in arrays] == [(1000,)] * 4 and all(a is b for a, b in zip(
        arrays, [recent.id_hash, recent.line_hash, recent.file, recent.line], strict=True))  # never reallocated
    assert len(recent.files) <= 2 * 100 + 1  # the 100 names of the rounds in the ring, not the 2,000 seen
    assert recent.get(10**12 + 18_999) is None
    assert recent.get(10**12 + 19_000) == (7 * 19_000, "logs/t1900.jsonl", 19_000)
    assert recent.get(10**12 + 19_999) == (7 * 19_999, "logs/t1999.jsonl", 19_999)
    again = RecentRounds(1000)
    again.restore(recent.state())
    assert all(again.get(10**12 + i) == recent.get(10**12 + i) for i in range(18_500, 20_000))
    smaller = RecentRounds(10)  # a checkpoint of a larger window: the newest rounds kept
    smaller.restore(recent.state())
    assert len(smaller) == 10 and smaller.get(10**12 + 19_990) is not None and smaller.get(10**12 + 19_989) is None


def test_open_shoes_poll_times_and_round_ids_stay_bounded_over_many_rounds(tmp_path):
    """Many polls of 12 tables: the shoes, round ids and poll times kept never pass their bounds."""
    from auditkit.live import OpenShoes, PollTimes

    logs = tmp_path / "logs"
    logs.mkdir()
    data = {tid: lines for tid, lines in streams("baccarat", tables=12, fault_rate=0.0, pool=2400).items()}
    w = watcher([logs], tmp_path, recent=500, stdout=None)
    w.poll_times = PollTimes(16)
    shoes = w.shoes["baccarat"] = OpenShoes("baccarat", w._rules("baccarat")[1], max_rounds=30, max_shoes=5)
    w.open()
    longest = most = 0
    n = max(map(len, data.values()))
    for start in range(0, n, 10):  # 10 rounds per table per poll
        for tid, lines in data.items():
            append(logs / f"{tid}.jsonl", lines[start:start + 10])
        w.poll_once()
        most = max(most, len(shoes.shoes))
        longest = max(longest, max(t.num_rows for t in shoes.shoes.values()))
        assert len(shoes.seen) == len(shoes.shoes) and len(shoes.current) <= len(shoes.shoes)
        assert len(w.recent) <= 500 and len(w.recent.slot) <= 500
    w.close()
    assert w.stats["rounds"] == sum(map(len, data.values())) > 2000
    assert most == 5 and longest == 30  # both bounds reached, never passed
    assert len(w.recent) == 500 and len(w.poll_times) == 16 and w.poll_times.count > 16
    assert shoes.expire(time.monotonic() + shoes.idle + 1) == 5
    assert not shoes.shoes and not shoes.seen and not shoes.current


def test_warned_files_are_remembered_up_to_a_bound(tmp_path, monkeypatch):
    import auditkit.live.watcher as live

    monkeypatch.setattr(live, "WARNED", 3)
    w = watcher([tmp_path], tmp_path)
    for i in range(10):
        w._warn(f"f{i}", f"file {i}")
    assert list(w.warned) == ["f7", "f8", "f9"]


def test_a_poll_reads_at_most_its_budget_shared_over_the_files(tmp_path, monkeypatch):
    """A watcher behind 30 files reads about READ_BUDGET bytes a poll in all, some of each file, however many."""
    import auditkit.live.tail as live

    monkeypatch.setattr(live, "READ_BUDGET", 30 * 4096)
    monkeypatch.setattr(live, "READ_MIN", 1024)
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams("baccarat", tables=30, fault_rate=0.05)
    for tid, lines in data.items():
        append(logs / f"{tid}.jsonl", lines)
    long_line = json.dumps({"round_id": "LONG", "note": "x" * 20_000})  # longer than a file's share: read whole
    append(logs / "long.jsonl", [long_line])
    w = watcher([logs], tmp_path, stdout=None)
    w.open()
    assert w.poll_once()  # more to read
    share = live.READ_BUDGET // 31
    offsets = {t.path.name: t.offset for t in w.tail.files.values()}
    assert offsets.pop("long.jsonl") == len(long_line) + 1
    assert all(0 < o <= share for o in offsets.values()) and sum(offsets.values()) <= live.READ_BUDGET
    while w.poll_once():
        pass
    w.close()
    assert w.stats["rounds"] == sum(map(len, data.values()))
    assert keys(emitted(tmp_path / "findings.jsonl")) == nightly([logs])


def test_a_shoe_round_arriving_late_reports_the_finding_it_puts_on_a_round_already_checked(tmp_path):
    """A shoe's rounds out of round_seq order in the log: ``validate`` reports the ninth ace of spades of an
    8-deck shoe on S2 (seq 2). The watcher reads S2 first (three aces: nothing yet), then S1 (six aces, seq 1):
    S2's finding is reported then, once; after a restart it is not reported again, and S4's tenth ace is."""
    from test_baccarat import rnd

    logs, log = tmp_path / "logs", tmp_path / "logs" / "T1.jsonl"
    logs.mkdir()
    s1 = rnd(["As", "As", "As"], ["As", "As", "As"], rid="S1", shoe="X", seq=1)
    s2 = rnd(["As", "As", "As"], ["Kc", "7c"], rid="S2", shoe="X", seq=2)
    s3 = rnd(["Ks", "7s"], ["Kc", "7c"], rid="S3", shoe="X", seq=3)
    s4 = rnd(["As", "Kd", "2d"], ["Kc", "7c"], rid="S4", shoe="X", seq=4)
    w = watcher([logs], tmp_path)
    w.open()
    for rec in (s2, s1, s3):
        append(log, [json.dumps(rec)])
        w.poll_once()
    w.close()
    shoe_found = [(f["round_id"], f["rule_id"]) for f in emitted(tmp_path / "findings.jsonl")]
    assert shoe_found == [("S2", "baccarat.integrity_shoe")]
    append(log, [json.dumps(s4)])
    once([logs], tmp_path)  # a restart from the checkpoint: the open shoe restored
    shoe_found = [(f["round_id"], f["rule_id"]) for f in emitted(tmp_path / "findings.jsonl")]
    assert shoe_found == [("S2", "baccarat.integrity_shoe"), ("S4", "baccarat.integrity_shoe")]
    assert keys(emitted(tmp_path / "findings.jsonl")) == nightly([log])


def test_a_poll_of_more_files_than_its_budget_shares_stops_at_the_budget(tmp_path, monkeypatch):
    """Issue 41 (20,000 files): every file got at least READ_MIN a poll, so a poll of many files behind read
    READ_MIN times the files (20,000 x 16 KiB), whatever the budget. Now a poll stops once the budget is
    read; the next starts with the files it did not reach, without stat'ing every file again."""
    import auditkit.live.tail as live

    monkeypatch.setattr(live, "READ_BUDGET", 8192)
    monkeypatch.setattr(live, "READ_MIN", 1024)
    logs = tmp_path / "logs"
    logs.mkdir()
    data = streams("baccarat", tables=40, fault_rate=0.05, pool=2000)
    for tid, lines in data.items():
        append(logs / f"{tid}.jsonl", lines[:6])
    w = watcher([logs], tmp_path, stdout=None)
    w.open()
    assert w.poll_once()
    read = sum(t.offset for t in w.tail.files.values())
    assert 8192 <= read < 8192 + 2048 and 0 < sum(t.offset > 0 for t in w.tail.files.values()) < 40
    polls, stats = 1, []
    w.tail.settings, known = dataclasses.replace(w.tail.settings, rescan=3600.0), w.tail.known
    w.tail.known = lambda: stats.append(1) or known()  # catching up: the files are not stat'ed again every poll
    while w.poll_once():
        polls += 1
    w.close()
    assert polls > 3 and w.stats["rounds"] == 240 and len(stats) < polls / 2
    assert keys(emitted(tmp_path / "findings.jsonl")) == nightly([logs])


def test_the_watchers_options_are_one_frozen_settings_object(tmp_path):
    """The options are one frozen WatchSettings, made once (from the object, keywords overriding it), and
    the watcher holds its parts: tail, outputs, checkpoint and, with a store, the writer."""
    from auditkit.live.settings import WatchSettings

    base = WatchSettings(poll=0.5, orphan_grace=0.0)
    w = Watcher([str(tmp_path)], settings=base, max_line=4096, stderr=io.StringIO())
    assert w.settings == dataclasses.replace(base, max_line=4096) and w.settings.rescan == 1.0
    assert Watcher([str(tmp_path)], poll=2.0, stderr=io.StringIO()).settings.rescan == 2.0  # at least a poll
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.settings.poll = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError, match="polll"):
        Watcher([str(tmp_path)], polll=1.0)
    assert w.tail.settings is w.settings and w.writer is None
    assert Watcher([str(tmp_path)], store=Store(tmp_path / "s"), stderr=io.StringIO()).writer.seen is not None
