"""Scheduled batch validation (``auditkit run JOB.toml``): incremental ingest, crash safety, lock, exit codes."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import SPEC

from auditkit.cli import main
from auditkit.job import JobError, load_job
from auditkit.store import Store
from auditkit.validate import validate_records

ROOT = Path(__file__).resolve().parents[1]


# ---- inputs: the spec's baccarat example shoe, copied to other days with new ids --------------
def base_records() -> list[dict]:
    path = SPEC / "examples" / "baccarat.jsonl"
    if not path.exists():
        pytest.skip(f"spec examples not found at {path}")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def day_records(day: int, tag: str) -> list[dict]:
    """The example shoe on 2025-06-(02+day), round and shoe ids suffixed with ``tag``."""
    out = []
    for r in base_records():
        r = copy.deepcopy(r)
        r["round_id"] = f"{r['round_id']}-{tag}"
        r["shoe_id"] = f"{r['shoe_id']}-{tag}"
        r["started_at"] = f"2025-06-{2 + day:02d}{r['started_at'][10:]}"
        out.append(r)
    return out


def write_log(path: Path, records: list[dict]) -> list[dict]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def clean_round(rid: str = "R1", **over) -> dict:
    rec = {"round_id": rid, "game": "baccarat", "table_id": "T", "started_at": "2025-06-02T09:00:00-05:00",
           "shoe_id": "S", "round_seq": 1, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"],
           "outcome": "player", "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}
    rec.update(over)
    return rec


def toml_value(v) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v)


def write_job(folder: Path, filename: str = "nightly.toml", **keys) -> Path:
    """A job file: inputs logs/**/*.jsonl*, store, output, plus ``keys`` (tables as inline tables)."""
    keys = {"inputs": ["logs/**/*.jsonl*"], "store": "store", "output": "reports", **keys}
    path = folder / filename
    path.write_text("".join(f"{k} = {toml_value(v)}\n" for k, v in keys.items()))
    return path


def key(frame: pd.DataFrame) -> set[tuple[str, str, float]]:
    return {(r.round_id, r.citation, round(float(r.discrepancy), 2)) for r in frame.itertuples()}


def run_folders(output: Path) -> list[Path]:
    """Completed run folders, oldest first."""
    return sorted((p for p in output.glob("*/*") if p.is_dir() and not p.name.startswith(".")),
                  key=lambda p: json.loads((p / "run.json").read_text())["started_at"] + p.name)


def last_record(output: Path) -> dict:
    return json.loads((run_folders(output)[-1] / "run.json").read_text())


def stored_round_ids(store: Path) -> list[str]:
    s = Store(store)
    return [rid for g in s.games() for d in s.dates(g) for rid in s.read(g, d, ["round_id"])["round_id"].to_pylist()]


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file() and p.name != ".auditkit.lock"}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    write_log(tmp_path / "logs" / "day0.jsonl", day_records(0, "a"))
    write_job(tmp_path)
    return tmp_path


# ---- incremental ingest ------------------------------------------------------------------------
def test_second_run_on_the_same_inputs_does_nothing(work):
    job = work / "nightly.toml"
    assert main(["run", str(job)]) == 1
    first = last_record(work / "reports")
    assert first["status"] == "findings" and first["counts"]["rounds_stored"] == 78
    before = snapshot(work / "store")
    assert main(["run", str(job)]) == 0
    second = last_record(work / "reports")
    assert second["status"] == "nothing new" and second["exit_code"] == 0
    c = second["counts"]
    assert (c["files_ingested"], c["files_already_ingested"], c["rounds_checked"], c["findings"]) == (0, 1, 0, 0)
    assert second["partitions_validated"] == []
    assert snapshot(work / "store") == before  # the store is not touched at all
    assert pd.read_csv(run_folders(work / "reports")[-1] / "findings.csv").empty
    assert len(stored_round_ids(work / "store")) == 78


def test_new_file_is_picked_up(work):
    job = work / "nightly.toml"
    assert main(["run", str(job)]) == 1
    new = write_log(work / "logs" / "sub" / "day1.jsonl.gz.jsonl", day_records(1, "b"))
    assert main(["run", str(job)]) == 1
    rec = last_record(work / "reports")
    assert rec["counts"]["files_ingested"] == 1 and rec["counts"]["files_already_ingested"] == 1
    assert rec["partitions_validated"] == ["baccarat/2025-06-03"]
    got = pd.read_csv(run_folders(work / "reports")[-1] / "findings.csv")
    assert key(got) == key(validate_records(new))  # this run reports the new day only
    assert sorted(stored_round_ids(work / "store")) == sorted(r["round_id"] for r in day_records(0, "a") + new)


def test_renamed_file_is_not_reingested(work):
    job = work / "nightly.toml"
    assert main(["run", str(job)]) == 1
    (work / "logs" / "day0.jsonl").rename(work / "logs" / "renamed.jsonl")
    assert main(["run", str(job)]) == 0
    rec = last_record(work / "reports")
    assert rec["status"] == "nothing new"
    (entry,) = rec["inputs"]["files"]
    assert entry["status"] == "already ingested" and entry["first_ingested_as"].endswith("day0.jsonl")
    assert entry["path"].endswith("renamed.jsonl")
    assert len(stored_round_ids(work / "store")) == 78


def test_changed_file_is_ingested_again_storing_only_new_rounds(work):
    job = work / "nightly.toml"
    assert main(["run", str(job)]) == 1
    path = work / "logs" / "day0.jsonl"
    extra = clean_round("EXTRA-1", shoe_id="S-extra")
    path.write_text(path.read_text() + json.dumps(extra) + "\n")
    assert main(["run", str(job)]) == 1  # the partition is redone: its findings are reported again
    rec = last_record(work / "reports")
    (entry,) = rec["inputs"]["files"]
    assert entry["status"] == "ingested" and entry["stored"] == 1 and entry["already_stored"] == 78
    ids = stored_round_ids(work / "store")
    assert len(ids) == len(set(ids)) == 79


# ---- exit codes --------------------------------------------------------------------------------
def test_exit_0_clean(tmp_path):
    write_log(tmp_path / "logs" / "clean.jsonl", [clean_round()])
    job = write_job(tmp_path)
    assert main(["run", str(job)]) == 0
    rec = last_record(tmp_path / "reports")
    assert rec["status"] == "clean" and rec["counts"]["rounds_checked"] == 1 and rec["counts"]["findings"] == 0


def test_exit_1_findings_and_fail_on_threshold(tmp_path, capsys):
    write_log(tmp_path / "logs" / "day0.jsonl", day_records(0, "a"))
    medium = ["68 IAC 10-10-14(c)", "68 IAC 10-10-14(e)"]  # the two medium-severity findings of the shoe
    job = write_job(tmp_path, citations=medium, fail_on="high")
    assert main(["run", str(job)]) == 0  # two findings, none high
    rec = last_record(tmp_path / "reports")
    assert rec["counts"]["findings"] == 2 and rec["findings_failing"] == 0 and rec["status"] == "findings"
    assert set(pd.read_csv(run_folders(tmp_path / "reports")[-1] / "findings.csv")["severity"]) == {"medium"}
    for fail_on, code in (("medium", 1), ("any", 1), ("low", 1), ("none", 0), ("high", 0)):
        job = write_job(tmp_path, filename=f"{fail_on}.toml", citations=medium, fail_on=fail_on)
        assert main(["run", str(job)]) == code, fail_on  # each job (its own name) validates the store once
    job = write_job(tmp_path, filename="override.toml", citations=medium, fail_on="high")
    assert main(["run", str(job), "--fail-on", "medium"]) == 1
    assert last_record(tmp_path / "reports")["fail_on"] == "medium"
    capsys.readouterr()


@pytest.mark.parametrize("content, message", [
    (None, "cannot read job file"),
    ("inputs = [", "not valid TOML"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\nbogus = 1\n', "unknown key"),
    ('store = "s"\noutput = "o"\n', "inputs is required"),
    ('inputs = ["logs"]\noutput = "o"\n', "store is required"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\nfail_on = "sometimes"\n', 'fail_on = "sometimes": must be one of'),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\ngames = ["roulette"]\n', "unknown game"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\ncitations = ["68 IAC 10-99"]\n', "unknown citation"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\nlock_timeout = -1\n', "lock_timeout"),
    ('inputs = ["missing-folder"]\nstore = "s"\noutput = "o"\n', "does not exist"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\nconfig = "nope.toml"\n', "cannot read configuration"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\n[settings.baccarat]\ntie_bet = 9\n', "unknown setting"),
    ('inputs = ["logs"]\nstore = "s"\noutput = "o"\n[limits]\n"BJ-*" = { min = 50, max = 10 }\n', "min is above max"),
])
def test_exit_2_job_cannot_run(tmp_path, capsys, content, message):
    (tmp_path / "logs").mkdir()
    job = tmp_path / "job.toml"
    if content is not None:
        job.write_text(content)
    assert main(["run", str(job)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_exit_2_on_an_unexpected_error_never_1(work, monkeypatch, capsys):
    import auditkit.validate

    def boom(*a, **k):
        raise RuntimeError("a bug")

    monkeypatch.setattr(auditkit.validate, "validate_into_store", boom)
    assert main(["run", str(work / "nightly.toml")]) == 2
    assert "a bug" in capsys.readouterr().err
    assert not run_folders(work / "reports")


# ---- job file --------------------------------------------------------------------------------
def test_job_paths_globs_and_names(tmp_path):
    write_log(tmp_path / "a" / "one.jsonl", day_records(0, "a"))
    write_log(tmp_path / "a" / ".hidden.jsonl", day_records(1, "h"))  # hidden: not matched by a glob
    write_log(tmp_path / "b" / "deep" / "two.jsonl", day_records(1, "b"))
    write_log(tmp_path / "c.jsonl", day_records(2, "c"))
    (tmp_path / "jobs").mkdir()
    job = write_job(tmp_path / "jobs", filename="j.toml", inputs=["../a/*.jsonl", "../b", "../c.jsonl", "../none/*.gz"],
                    store="../store", output="../out", name="../../evil name")
    loaded = load_job(job)
    assert loaded.store == tmp_path / "store" and loaded.output == tmp_path / "out"
    assert loaded.name == "evil_name"
    assert main(["run", str(job)]) == 1
    rec = last_record(tmp_path / "out")
    assert rec["inputs"]["unmatched_globs"] == ["../none/*.gz"]
    assert sorted(Path(f["path"]).name for f in rec["inputs"]["files"]) == ["c.jsonl", "one.jsonl", "two.jsonl"]
    assert len(stored_round_ids(tmp_path / "store")) == 3 * 78
    (folder,) = run_folders(tmp_path / "out")
    assert folder.parent.parent == tmp_path / "out" and folder.name.startswith("evil_name-")
    assert (tmp_path / "store" / "_jobs" / "evil_name.json").exists()


def test_job_settings_and_limits_reach_the_configuration(tmp_path):
    (tmp_path / "logs").mkdir()
    cfg = tmp_path / "casino.toml"
    cfg.write_text('[baccarat]\ntie = 9.0\n[tables."BJ-7".blackjack]\nblackjack = 1.2\n')
    job = tmp_path / "job.toml"
    job.write_text('inputs = ["logs"]\nstore = "s"\noutput = "o"\nconfig = "casino.toml"\n'
                   '[settings.baccarat]\nbanker_commission = 0.04\n'
                   '[limits]\n"BJ-*" = { min = 25, max = 1000 }\n"BJ-7" = { max = 200 }\n')
    config = load_job(job).config()
    assert config.get("baccarat", "tie") == 9.0  # from the config file
    assert config.get("baccarat", "banker_commission") == 0.04  # from [settings]
    assert config.get("blackjack", "table_min", "BJ-1") == 25 and config.get("blackjack", "table_max", "BJ-1") == 1000
    assert config.get("blackjack", "table_max", "BJ-7") == 200 and config.get("blackjack", "blackjack", "BJ-7") == 1.2
    plain = tmp_path / "plain.toml"
    plain.write_text('inputs = ["logs"]\nstore = "s"\noutput = "o"\nconfig = "casino.toml"\n')
    assert load_job(plain).config().digest() != config.digest()


def test_run_record_is_an_audit_trail(work):
    job = work / "nightly.toml"
    assert main(["run", str(job)]) == 1
    folder = run_folders(work / "reports")[0]
    rec = json.loads((folder / "run.json").read_text())
    log = work / "logs" / "day0.jsonl"
    (entry,) = rec["inputs"]["files"]
    assert entry["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest() and entry["size"] == log.stat().st_size
    assert rec["job_sha256"] == hashlib.sha256(job.read_bytes()).hexdigest()
    assert rec["configuration"]["sha256"] == load_job(job).config().digest()
    assert rec["version"] and rec["started_at"] <= rec["ended_at"] and rec["duration_s"] >= 0
    assert folder.parent.name == time.strftime("%Y-%m-%d", time.localtime(
        pd.Timestamp(rec["started_at"]).timestamp()))
    findings = pd.read_csv(folder / "findings.csv")
    assert key(findings) == key(validate_records(day_records(0, "a")))
    assert rec["counts"]["findings"] == len(findings) == len(pd.read_parquet(folder / "findings.parquet"))
    by_table = pd.read_csv(folder / "summary_by_table.csv")
    assert by_table["findings"].sum() == len(findings)
    assert pd.read_csv(folder / "summary_by_dealer.csv")["findings"].sum() == len(findings)
    assert pd.read_csv(folder / "summary_by_citation.csv")["findings"].sum() == len(findings)
    assert sorted(p.name for p in folder.iterdir()) == sorted(rec["outputs"].values())


def test_quarantine_report_lists_this_runs_bad_lines(work):
    job = work / "nightly.toml"
    bad = work / "logs" / "bad.jsonl"
    bad.write_text(json.dumps(clean_round("OK-1", shoe_id="S-ok")) + "\n{not json\n")
    assert main(["run", str(job)]) == 1
    folder = run_folders(work / "reports")[-1]
    q = pd.read_csv(folder / "quarantine.csv")
    assert len(q) == 1 and q["line"].iloc[0] == 2 and "not valid JSON" in q["reason"].iloc[0]
    assert last_record(work / "reports")["counts"]["lines_quarantined"] == 1
    assert main(["run", str(job)]) == 0
    assert pd.read_csv(run_folders(work / "reports")[-1] / "quarantine.csv").empty


# ---- logging ---------------------------------------------------------------------------------
def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "auditkit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_logging_quiet_for_cron_verbose_for_debugging_no_bar_without_tty(work):
    quiet = _cli("-q", "run", "nightly.toml", cwd=work)
    assert quiet.returncode == 1 and quiet.stdout == "" and quiet.stderr == ""
    write_log(work / "logs" / "day1.jsonl", day_records(1, "b"))
    loud = _cli("-vv", "run", "nightly.toml", cwd=work)
    assert loud.returncode == 1
    assert "INFO auditkit.ingest: ingested" in loud.stderr and "INFO auditkit.ingest: skip" in loud.stderr
    assert "\r" not in loud.stderr and "rounds/s" not in loud.stderr  # stderr is not a TTY: no bar
    assert "outputs:" in loud.stdout


# ---- crashes ---------------------------------------------------------------------------------
HARNESS = r'''
import importlib, os, signal, sys, time
from pathlib import Path
target, when, nth, job = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
module, attr = target.split(":")
owner = importlib.import_module(module)
names = attr.split(".")
for n in names[:-1]:
    owner = getattr(owner, n)
original = getattr(owner, names[-1])
calls = [0]

def patched(*args, **kwargs):
    calls[0] += 1
    if calls[0] == nth and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    if calls[0] == nth and when == "block":  # hold the lock until the test releases us
        Path(job + ".started").touch()
        deadline = time.time() + 60
        while not Path(job + ".release").exists() and time.time() < deadline:
            time.sleep(0.05)
    out = original(*args, **kwargs)
    if calls[0] == nth and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
    return out

setattr(owner, names[-1], patched)
from auditkit.cli import main
sys.exit(main(["-q", "run", job]))
'''


def _harness(tmp_path: Path, target: str, when: str, nth: int, job: Path) -> subprocess.Popen:
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(script), target, when, str(nth), str(job)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _check_consistent(work: Path, records: list[dict]) -> None:
    """Every round stored once, store findings = a clean one-shot run, every finding reported by some run."""
    ids = stored_round_ids(work / "store")
    assert len(ids) == len(set(ids)), "duplicate rounds in the store"
    assert set(ids) == {r["round_id"] for r in records}, "lost rounds"
    reference = key(validate_records(records))
    assert key(Store(work / "store").findings()) == reference
    reported = set()
    for folder in run_folders(work / "reports"):
        rec = json.loads((folder / "run.json").read_text())
        got = key(pd.read_csv(folder / "findings.csv"))
        assert got <= reference and len(got) == rec["counts"]["findings"]
        reported |= got
    assert reported == reference, "a finding never reached a run's report"
    assert not list((work / "reports").glob("*/.*.partial")), "an unfinished output folder is left"


CRASH_POINTS = [
    ("auditkit.store:Store.write_rounds", "after", 1),        # a part written, its source not committed
    ("pyarrow.parquet:write_table", "after", 2),              # a temporary file written, not renamed
    ("auditkit.store:Store.commit_source", "before", 2),      # one source committed, the next half done
    ("auditkit.store:Store.commit_source", "after", 3),       # all ingested, nothing validated
    ("auditkit.store:Store.write_findings", "after", 1),      # findings of one partition written
    ("auditkit.report:write_csv", "after", 2),                # outputs half written
    ("auditkit.jobrun:_save_state", "before", 1),               # outputs published, job state not saved
]


@pytest.mark.parametrize("target, when, nth", CRASH_POINTS, ids=[f"{t.split(':')[1]}-{w}-{n}" for t, w, n in CRASH_POINTS])
def test_run_killed_mid_write_next_run_finishes_the_work(work, target, when, nth):
    job = work / "nightly.toml"
    assert main(["-q", "run", str(job)]) == 1  # day 0 done cleanly
    records = day_records(0, "a")
    for day, tag in ((1, "b"), (2, "c"), (3, "d")):
        records += write_log(work / "logs" / f"day{day}.jsonl", day_records(day, tag))
    proc = _harness(work, target, when, nth, job)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err  # it died at the crash point
    # whatever the crash left is invisible: the store holds whole sources only
    ids = stored_round_ids(work / "store")
    assert len(ids) == len(set(ids)) and len(ids) % 78 == 0
    assert main(["-q", "run", str(job)]) == 1
    _check_consistent(work, records)
    assert main(["-q", "run", str(job)]) == 0
    assert last_record(work / "reports")["status"] == "nothing new"


def test_run_killed_from_outside_next_run_finishes_the_work(work):
    job = work / "nightly.toml"
    records = day_records(0, "a")
    for day in range(1, 8):
        records += write_log(work / "logs" / f"day{day}.jsonl", day_records(day, f"x{day}"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "auditkit", "-q", "run", str(job)], env=env)
    manifest = work / "store" / "_manifest"
    deadline = time.time() + 60
    while proc.poll() is None and time.time() < deadline and len(list(manifest.glob("*.json"))) < 3:
        time.sleep(0.005)
    proc.kill()  # SIGKILL wherever it is (usually mid-ingest)
    proc.wait(timeout=60)
    assert main(["-q", "run", str(job)]) in (0, 1)
    _check_consistent(work, records)


# ---- the lock ----------------------------------------------------------------------------------
def test_concurrent_runs_one_refuses_one_waits(work, capsys):
    job = work / "nightly.toml"
    write_log(work / "logs" / "day1.jsonl", day_records(1, "b"))
    holder = _harness(work, "auditkit.validate:validate_into_store", "block", 1, job)
    deadline = time.time() + 60
    while not Path(str(job) + ".started").exists():
        assert holder.poll() is None and time.time() < deadline, holder.communicate()
        time.sleep(0.02)
    # a second run with lock_timeout = 0 refuses at once
    assert main(["run", str(job)]) == 2
    assert "is locked by pid" in capsys.readouterr().err
    # a third one waits for the lock, then finds nothing new
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    waiter = subprocess.Popen([sys.executable, "-m", "auditkit", "-q", "run", str(job), "--lock-timeout", "60"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert waiter.poll() is None  # still waiting
    Path(str(job) + ".release").touch()
    assert holder.wait(timeout=60) == 1
    assert waiter.wait(timeout=60) == 0, waiter.communicate()
    records = [json.loads((f / "run.json").read_text()) for f in run_folders(work / "reports")]
    assert [r["status"] for r in records] == ["findings", "nothing new"]
    ids = stored_round_ids(work / "store")
    assert len(ids) == len(set(ids)) == 2 * 78


def test_lock_is_released_when_a_run_is_killed(work):
    job = work / "nightly.toml"
    proc = _harness(work, "auditkit.store:Store.commit_source", "before", 1, job)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert main(["-q", "run", str(job)]) == 1  # no stale lock


def test_load_job_rejects_non_string_inputs(tmp_path):
    job = tmp_path / "j.toml"
    job.write_text('inputs = [1]\nstore = "s"\noutput = "o"\n')
    with pytest.raises(JobError, match=r"inputs = \[1\]: must be a list"):
        load_job(job)


def _run_on_terminal(work: Path, *args: str) -> str:
    """Run the CLI with stderr on a pseudo-terminal (100 columns); what the terminal showed."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "auditkit", *args], cwd=work, env=env, stderr=slave,
                            stdout=subprocess.DEVNULL)
    os.close(slave)
    chunks: list[bytes] = []

    def pump() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO once the child has closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=pump)
    reader.start()
    proc.wait(timeout=120)
    reader.join(timeout=10)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_only(work):
    shown = _run_on_terminal(work, "run", "nightly.toml")
    assert "ingest" in shown and "validate" in shown and "rounds" in shown
    write_log(work / "logs" / "day1.jsonl", day_records(1, "b"))
    assert "validate" not in _run_on_terminal(work, "run", "nightly.toml", "--no-progress")


def test_outputs_and_store_inside_an_input_folder_are_never_ingested(tmp_path):
    write_log(tmp_path / "day0.jsonl", day_records(0, "a"))
    job = write_job(tmp_path, inputs=["."])  # the job's own folder holds the store and the reports
    assert main(["-q", "run", str(job)]) == 1
    assert main(["-q", "run", str(job)]) == 0
    rec = last_record(tmp_path / "reports")
    assert rec["status"] == "nothing new"
    assert [Path(f["path"]).name for f in rec["inputs"]["files"]] == ["day0.jsonl"]
    assert len(stored_round_ids(tmp_path / "store")) == 78


def test_job_renders_the_chosen_notebooks_to_html(tmp_path):
    pytest.importorskip("papermill")
    write_log(tmp_path / "logs" / "day0.jsonl", day_records(0, "a"))
    job = write_job(tmp_path, notebooks=["01_overview"])
    assert main(["run", str(job)]) == 1
    folder = run_folders(tmp_path / "reports")[-1]
    html = folder / "notebooks" / "01_overview.html"
    assert html.exists() and "<html" in html.read_text()[:2000].lower()
    assert last_record(tmp_path / "reports")["notebooks"] == ["notebooks/01_overview.html"]


def test_job_file_rejects_unknown_notebook(tmp_path):
    write_log(tmp_path / "logs" / "day0.jsonl", day_records(0, "a"))
    job = write_job(tmp_path, notebooks=["99_nope"])
    assert main(["run", str(job)]) == 2


# ---- workers and engine ----------------------------------------------------------------------
ENGINE_ERRORS = {
    "zero": ("workers = 0\n", "job.toml: workers = 0: must be an integer >= 1"),
    "text": ('workers = "2"\n', 'job.toml: workers = "2": must be an integer >= 1'),
    "bool": ("workers = true\n", "job.toml: workers = true: must be an integer >= 1"),
    "float": ("workers = 1.5\n", "job.toml: workers = 1.5: must be an integer >= 1"),
    "kind": ('[engine]\nkind = "spark"\n', 'job.toml: engine.kind = "spark": must be one of local, dask'),
    "no_scheduler": ('[engine]\nkind = "dask"\n', 'job.toml: engine.kind = "dask": needs engine.scheduler'),
    "bad_scheduler": ('[engine]\nkind = "dask"\nscheduler = "10.0.0.5"\n',
                      'job.toml: engine.scheduler = "10.0.0.5": must be a scheduler address'),
    "local_scheduler": ('[engine]\nscheduler = "tcp://h:8786"\n',
                        'job.toml: engine.scheduler = "tcp://h:8786": only with engine.kind = "dask"'),
    "unknown": ('[engine]\nkind = "local"\nthreads = 4\n', "job.toml: unknown key(s) engine.threads"),
    "not_a_table": ('engine = "dask"\n', 'job.toml: engine = "dask": must be a table'),
}


@pytest.mark.parametrize("name", ENGINE_ERRORS)
def test_workers_and_engine_are_checked_exit_2_naming_file_key_and_reason(name, tmp_path, capsys):
    content, message = ENGINE_ERRORS[name]
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    top, _, table = content.partition("[")
    job = tmp_path / "job.toml"
    job.write_text(f'inputs = ["logs"]\nstore = "s"\noutput = "o"\n{top}' + (f"[{table}" if table else ""))
    assert main(["run", str(job)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "o").exists()


def test_command_line_engine_is_checked(tmp_path, capsys):
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    job = write_job(tmp_path)
    assert main(["run", str(job), "--engine", "dask"]) == 2
    assert 'command line: --engine = "dask": needs --scheduler' in capsys.readouterr().err
    assert main(["run", str(job), "--workers", "0"]) == 2  # argparse: at least 1
    assert not (tmp_path / "store").exists()


def test_load_job_reads_workers_and_engine(tmp_path):
    job = write_job(tmp_path, workers=3)
    assert (load_job(job).workers, load_job(job).engine, load_job(job).scheduler) == (3, "local", None)
    job.write_text(job.read_text() + '[engine]\nkind = "dask"\nscheduler = "tcp://10.0.0.5:8786"\n')
    assert (load_job(job).workers, load_job(job).engine, load_job(job).scheduler) == (3, "dask", "tcp://10.0.0.5:8786")
    assert load_job(write_job(tmp_path, "other.toml")).workers is None  # default: the machine's cores


TIMINGS = ("run_id", "started_at", "ended_at", "duration_s", "output")


def run_with(folder: Path, *args: str) -> tuple[dict, dict[str, bytes]]:
    """Run the job in ``folder`` on a fresh store; its record without timings and its output files."""
    import shutil

    for name in ("store", "reports"):
        shutil.rmtree(folder / name, ignore_errors=True)
    assert main(["-q", "run", str(folder / "nightly.toml"), *args]) == 1
    out = run_folders(folder / "reports")[-1]
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    record = json.loads(files.pop("run.json"))
    return {k: v for k, v in record.items() if k not in TIMINGS}, files


def test_findings_and_run_record_are_the_same_whatever_the_workers(tmp_path, monkeypatch):
    """Four days of logs (four partitions): one process, two, and the job file's workers give the same
    outputs, byte for byte, and the same run record apart from times and ids."""
    import auditkit.ingest.parallel
    from auditkit.engine import executors

    for day in range(4):
        records = day_records(day, f"d{day}")
        records[3]["wagers"][0]["net"] += 5  # a payout finding on every day
        write_log(tmp_path / "logs" / f"day{day}.jsonl", records)
    write_job(tmp_path, workers=2)
    pools = []
    real = executors.pooled
    monkeypatch.setattr(executors, "pooled", lambda plan, pool, workers: pools.append(workers) or real(plan, pool, workers))
    ingests = []  # the ingest step parses on the same workers

    class Spy(auditkit.ingest.parallel.ParallelIngest):
        def __init__(self, *a, **kw):
            ingests.append(kw["workers"])
            super().__init__(*a, **kw)

    monkeypatch.setattr(auditkit.ingest.parallel, "ParallelIngest", Spy)
    one = run_with(tmp_path, "--workers", "1")
    assert pools == ingests == []
    two = run_with(tmp_path)  # the job's workers = 2
    assert pools == ingests == [2]
    three = run_with(tmp_path, "--workers", "3")  # the command line wins
    assert pools == ingests == [2, 3]
    assert one[0]["counts"]["findings"] >= 4 and len(one[0]["partitions_validated"]) == 4
    assert one == two == three


ENGINE_OPTION_ERRORS = {
    "dask_without_scheduler": (["--engine", "dask"],
                               'command line: --engine = "dask": needs --scheduler (the cluster\'s scheduler address'),
    "local_with_scheduler": (["--engine", "local", "--scheduler", "tcp://127.0.0.1:1"],
                             'command line: --scheduler = "tcp://127.0.0.1:1": only with --engine = "dask"'),
    "bad_scheduler": (["--scheduler", "foo://x"], 'command line: --scheduler = "foo://x": must be a scheduler address'),
}


@pytest.mark.parametrize("command", ["validate", "ingest", "run"])
@pytest.mark.parametrize("name", ENGINE_OPTION_ERRORS)
def test_engine_options_are_checked_once_with_the_same_message_on_every_command(command, name, tmp_path, capsys):
    """validate, ingest and run check --workers, --engine and --scheduler by one function: the same
    message (where, the option, its value, the reason), exit 2, before any work."""
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    options, message = ENGINE_OPTION_ERRORS[name]
    argv = {"validate": ["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv")],
            "ingest": ["ingest", str(tmp_path / "logs"), "--store", str(tmp_path / "store")],
            "run": ["run", str(write_job(tmp_path))]}[command]
    assert main([*argv, *options]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert not (tmp_path / "store").exists() and not (tmp_path / "r.csv").exists()


def test_engine_options_are_one_check_for_the_command_line_and_the_job_file():
    from auditkit.engine.options import COMMAND_LINE, JOB_FILE, Engine, engine_options
    from auditkit.paytables import ConfigError

    assert engine_options(None, None, None, "command line") == Engine(None, "local", None)
    assert engine_options(2, None, "tcp://h:8786", "command line") == Engine(2, "dask", "tcp://h:8786")  # implied
    assert engine_options(3, "local", None, "job.toml", JOB_FILE) == Engine(3, "local", None)
    with pytest.raises(ConfigError, match=r'^job.toml: engine.kind = "dask": needs engine.scheduler'):
        engine_options(None, "dask", None, "job.toml", JOB_FILE)
    with pytest.raises(ConfigError, match=r"^command line: --workers = 0: must be an integer >= 1$"):
        engine_options(0, None, None, "command line", COMMAND_LINE)


def test_validate_runs_with_local_engine_options(tmp_path):
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    out = str(tmp_path / "r.csv")
    assert main(["-q", "validate", str(tmp_path / "logs"), "--out", out, "--engine", "local", "--workers", "2"]) == 0
