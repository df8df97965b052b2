"""Issue 15, reliability: the store lock, job output folders, exit codes, configuration checks,
unknown filter names, symlinks and special files, leftovers. docs/reliability.md lists each case."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from test_job import clean_round, day_records, last_record, run_folders, stored_round_ids, write_job, write_log

from auditkit.cli import main
from auditkit.store import Store

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def rounds(prefix: str, start: int, stop: int) -> list[dict]:
    """Clean baccarat rounds ``prefix-start`` .. ``prefix-(stop-1)``, one shoe per 50 rounds."""
    return [clean_round(f"{prefix}-{i}", shoe_id=f"S{i // 50}", round_seq=i % 50 + 1) for i in range(start, stop)]


def dead_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


# ---- 1. the store lock ---------------------------------------------------------------------
GATED = r'''
import sys, time
from pathlib import Path
from auditkit.cli import main
gate = Path(sys.argv[1])
while not gate.exists():
    time.sleep(0.001)
sys.exit(main(sys.argv[2:]))
'''


def test_concurrent_ingests_store_every_round_once(tmp_path):
    logs = tmp_path / "logs"
    write_log(logs / "a.jsonl", rounds("R", 0, 3000))
    write_log(logs / "b.jsonl", rounds("R", 1500, 4500))        # overlaps a.jsonl: same rounds, same content
    write_log(logs / "copy" / "a.jsonl", rounds("R", 0, 3000))  # a.jsonl again under another name
    (logs / "c.jsonl").write_text((logs / "a.jsonl").read_text() + json.dumps(clean_round("R-x", shoe_id="Sx")) + "\n")
    script, gate, store = tmp_path / "gated.py", tmp_path / "go", tmp_path / "store"
    script.write_text(GATED)
    orders = [["a.jsonl", "b.jsonl"], ["b.jsonl", "a.jsonl"], ["copy/a.jsonl"], ["c.jsonl"], ["b.jsonl", "c.jsonl"],
              ["a.jsonl"]]
    procs = [subprocess.Popen([sys.executable, str(script), str(gate), "-q", "ingest",
                               *[str(logs / f) for f in files], "--store", str(store)],
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for files in orders]
    time.sleep(2.0)  # every process imported auditkit and waits at the gate
    gate.touch()
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    ids = stored_round_ids(store)
    assert len(ids) == len(set(ids)) == 4501
    assert [proc.returncode for proc in procs] == [0] * len(procs), errors
    manifest = Store(store).manifest()
    assert all(r.balanced for r in manifest)
    assert sum(r.stored for r in manifest) == 4501
    assert sorted(r.path.rsplit("/", 1)[-1] for r in manifest) == ["a.jsonl", "b.jsonl", "c.jsonl"]


def test_a_locked_store_is_refused_after_the_timeout_naming_the_holder(tmp_path, capsys):
    store = Store(tmp_path / "store")
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from auditkit.store import Store; "
                               f"l = Store({str(store.root)!r}).lock(0, command='a test holder'); l.__enter__(); "
                               "print('held', flush=True); time.sleep(60)"],
                              env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        assert main(["ingest", str(tmp_path / "logs"), "--store", str(store.root), "--lock-timeout", "0.5"]) == 2
        assert time.monotonic() - t0 >= 0.5
        err = capsys.readouterr().err
        assert f"is locked by pid {holder.pid} on " in err and "(a test holder) since 20" in err
        assert "Traceback" not in err
        for argv in (["validate", str(store.root), "--out", str(tmp_path / "r.csv")],
                     ["report", "--store", str(store.root), "--out", str(tmp_path / "r.csv")]):
            (store.root / "_manifest").mkdir(exist_ok=True)
            assert main([*argv, "--lock-timeout", "0"]) == 2
            assert "is locked by pid" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    assert main(["-q", "ingest", str(tmp_path / "logs"), "--store", str(store.root)]) == 0  # released by the kernel


def test_readers_share_the_lock(tmp_path):
    store = Store(tmp_path / "store")
    with store.lock(0, shared=True), store.lock(0, shared=True):
        pass
    with store.lock(0, shared=True), pytest.raises(OSError, match="locked by a reader"), store.lock(0):
        pass


def test_a_read_only_store_is_read_without_its_lock(tmp_path, monkeypatch):
    import auditkit.store

    store = Store(tmp_path / "store")
    store.root.mkdir()
    monkeypatch.setattr(auditkit.store.lock.os, "access", lambda path, mode: False)  # as on a read-only mount
    with store.lock(0, shared=True):
        pass
    assert not (store.root / ".auditkit.lock").exists()


# ---- 2. job output folders -------------------------------------------------------------------
def test_a_job_never_removes_the_running_output_of_a_job_whose_name_it_prefixes(tmp_path):
    write_log(tmp_path / "logs" / "day0.jsonl", [clean_round()])
    job = write_job(tmp_path, name="n")
    day = tmp_path / "reports" / "2025-06-02"
    other = day / ".n-x-20250602T020000Z-0a1b2c.partial"   # job "n-x", running
    own = day / ".n-20250602T020000Z-0a1b2c.partial"       # job "n", killed earlier
    for folder in (other, own):
        folder.mkdir(parents=True)
        (folder / "findings.csv").write_text("round_id\r\n")
    assert main(["-q", "run", str(job)]) == 0
    assert (other / "findings.csv").exists()
    assert not own.exists()


def test_a_run_folder_is_published_only_complete(tmp_path, monkeypatch, capsys):
    import auditkit.jobrun

    write_log(tmp_path / "logs" / "day0.jsonl", [clean_round()])
    job = write_job(tmp_path)
    fsync = auditkit.jobrun._fsync_dir

    def damage(path: Path) -> None:  # a file of the run folder lost or cut before the rename
        if path.name.endswith(".partial"):
            (path / "summary_by_day.csv").write_text("game,da")
            (path / "quarantine.csv").unlink()
        fsync(path)

    monkeypatch.setattr(auditkit.jobrun, "_fsync_dir", damage)
    assert main(["run", str(job)]) == 2
    err = capsys.readouterr().err
    assert "not published" in err and "quarantine.csv is missing" in err and "summary_by_day.csv is not" in err
    assert not run_folders(tmp_path / "reports")
    monkeypatch.undo()
    assert main(["-q", "run", str(job)]) == 0  # the next run redoes it; the unfinished folder is gone
    rec = last_record(tmp_path / "reports")
    assert rec["counts"]["rounds_checked"] == 1 and set(rec["output_files"]) == set(rec["outputs"].values()) - {"run.json"}
    assert not list((tmp_path / "reports").glob("*/.*.partial"))


# ---- 3. exit codes that never lie, over a table of failures ------------------------------------
def _truncate_a_part(store: Path) -> None:
    part = next((store / "rounds").rglob("part-*.parquet"))
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])


def _corrupt_manifest(store: Path) -> None:
    entry = next((store / "_manifest").glob("*.json"))
    entry.write_text(entry.read_text()[:40])


def _truncate_findings(store: Path) -> None:
    f = next((store / "findings").rglob("findings.parquet"))
    f.write_bytes(f.read_bytes()[:100])


CONFIGS = {  # a licensee file: the value, and what the message says
    "tie_text": ('[baccarat]\ntie = "nine"\n', 'baccarat.tie = "nine": must be a finite number from 0 to 10000'),
    "decks_text": ('[baccarat]\ndecks = "eight"\n', 'baccarat.decks = "eight": must be an integer from 1 to 100'),
    "soft17_text": ('[blackjack]\ndealer_hits_soft_17 = "yes"\n', 'dealer_hits_soft_17 = "yes": must be true or false'),
    "blackjack_list": ("[blackjack]\nblackjack = [1.5]\n", "blackjack.blackjack = [1.5]: must be a finite number"),
    "house_way_number": ("[pai_gow_poker]\nhouse_way = 5\n", "pai_gow_poker.house_way = 5: must be the name of"),
    "house_way_unknown": ('[pai_gow_poker]\nhouse_way = "mine"\n', 'house_way = "mine": unknown house way'),
    "tie_negative": ("[baccarat]\ntie = -9\n", "baccarat.tie = -9: must be a finite number from 0 to 10000"),
    "tie_nan": ("[baccarat]\ntie = nan\n", "baccarat.tie = nan: must be a finite number from 0 to 10000"),
    "commission_inf": ("[baccarat]\nbanker_commission = inf\n", "banker_commission = inf: must be a finite number from 0 to less than 1"),
    "decks_zero": ("[blackjack]\ndecks = 0\n", "blackjack.decks = 0: must be an integer from 1 to 100"),
    "min_negative": ("[blackjack]\ntable_min = -5\n", "blackjack.table_min = -5: must be a finite number >= 0"),
    "min_above_max": ("[blackjack]\ntable_min = 600\ntable_max = 500\n",
                      "blackjack.table_min = 600: must be at most table_max = 500"),
    "table_min_above_max": ('[blackjack]\ntable_max = 500\n[tables."BJ-*".blackjack]\ntable_min = 600\n',
                            'tables."BJ-*".blackjack.table_min = 600: must be at most table_max = 500'),
    "table_bad_type": ('[tables."EZ-*".baccarat]\nbanker_six = "half"\n',
                       'tables."EZ-*".baccarat.banker_six = "half": must be a finite number from 0 to 1'),
    "paytable_entry": ("[three_card_poker.pair_plus]\nflush = -3\n", "three_card_poker.pair_plus.flush = -3"),
    "paytable_value": ("[three_card_poker]\npair_plus = 40\n", "three_card_poker.pair_plus = 40: must be a table"),
    "rounding": ('[money]\nrounding = "banker"\n', 'money.rounding = "banker": must be one of half_up, down, up'),
    "rounding_unit": ("[money]\nrounding_unit = 0\n", "money.rounding_unit = 0: must be a finite number from 0.0001 to 100"),
    "section_value": ("baccarat = 5\n", "baccarat = 5: must be a table of settings"),
    "unknown_key": ("[baccarat]\ntye = 9\n", "unknown setting baccarat.tye"),
    "unknown_section": ("[roulette]\nzero = 35\n", "unknown section [roulette]"),
    "unknown_table_game": ('[tables."X".money]\nrounding = "up"\n', "unknown game section [money]"),
    "house_way_table": ("[pai_gow_poker.house_ways.mine]\nnonsense = 1\n", "pai_gow_poker.house_ways.mine: unknown house way"),
    "not_toml": ("[baccarat\n", "is not valid TOML"),
    "not_utf8": (b"[baccarat]\ntie = \xff\n", "cannot read configuration"),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_bad_configuration_is_exit_2_naming_file_key_value_and_reason(name, tmp_path, capsys):
    content, message = CONFIGS[name]
    cfg = tmp_path / "casino.toml"
    cfg.write_bytes(content if isinstance(content, bytes) else content.encode())
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    out = tmp_path / "r.csv"
    assert main(["validate", str(tmp_path / "logs"), "--out", str(out), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1 and (name in ("not_toml", "not_utf8") or err.startswith(f"auditkit: error: {cfg}: "))
    assert not out.exists()  # checked before any work


def test_the_briefs_example_message(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("casino.toml").write_text("[baccarat]\ntie = -9\n")
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    assert main(["validate", "logs", "--out", "r.csv", "--config", "casino.toml"]) == 2
    assert capsys.readouterr().err == "auditkit: error: casino.toml: baccarat.tie = -9: must be a finite number from 0 to 10000\n"


JOB_SETTINGS = {
    "settings": ('[settings.baccarat]\ntie = -9\n', "job.toml: settings.baccarat.tie = -9: must be a finite number from 0 to 10000"),
    "settings_table": ('[settings.tables."BJ-*".blackjack]\ndecks = 0\n',
                       'job.toml: settings.tables."BJ-*".blackjack.decks = 0: must be an integer from 1 to 100'),
    "limits_negative": ('[limits]\n"BJ-*" = { min = -5 }\n', 'job.toml: limits."BJ-*".min = -5: must be a finite number'),
    "limits_nan": ('[limits]\n"BJ-*" = { max = nan }\n', 'job.toml: limits."BJ-*".max = nan: must be a number >= 0'),
    "limits_text": ('[limits]\n"BJ-*" = { max = "lots" }\n', 'limits."BJ-*".max = "lots": must be a number >= 0'),
    "limits_against_settings": ('[settings.blackjack]\ntable_min = 50\n[limits]\n"BJ-7" = { max = 10 }\n',
                                'tables."BJ-7".blackjack.table_min = 50: must be at most table_max = 10'),
    "config_file": ('config = "casino.toml"\n', "casino.toml: baccarat.tie = inf: must be a finite number from 0 to 10000"),
}


@pytest.mark.parametrize("name", JOB_SETTINGS)
def test_a_jobs_settings_limits_and_config_are_checked_like_a_config_file(name, tmp_path, capsys):
    content, message = JOB_SETTINGS[name]
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    (tmp_path / "casino.toml").write_text("[baccarat]\ntie = inf\n")
    top, _, tables = content.partition("[")
    job = tmp_path / "job.toml"
    job.write_text(f'inputs = ["logs"]\nstore = "s"\noutput = "o"\n{top}' + (f"[{tables}" if tables else ""))
    assert main(["run", str(job)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "o").exists()


def _store_with_findings(tmp_path: Path) -> Path:
    write_log(tmp_path / "logs" / "day0.jsonl", day_records(0, "a"))
    assert main(["-q", "run", str(write_job(tmp_path))]) == 1
    return tmp_path / "store"


STORE_DAMAGE = {"part": _truncate_a_part, "manifest": _corrupt_manifest, "findings": _truncate_findings}


@pytest.mark.parametrize("damage", STORE_DAMAGE)
@pytest.mark.parametrize("command", ["validate", "report", "ingest", "run"])
def test_a_corrupt_store_file_is_exit_2(damage, command, tmp_path, capsys):
    store = _store_with_findings(tmp_path)
    STORE_DAMAGE[damage](store)
    if command == "run":  # a new day makes the job read the store again
        write_log(tmp_path / "logs" / "day1.jsonl", day_records(1, "b"))
    argv = {"validate": ["validate", str(store), "--out", str(tmp_path / "r.csv")],
            "report": ["report", "--store", str(store), "--out", str(tmp_path / "r.csv")],
            "ingest": ["ingest", str(tmp_path / "more"), "--store", str(store)],
            "run": ["run", str(tmp_path / "nightly.toml")]}[command]
    write_log(tmp_path / "more" / "b.jsonl", day_records(2, "c"))
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # a damaged file the command does not read is no error; one it reads is exit 2 with one line
    if code != 2:
        assert code in (0, 1) and err.count("auditkit: error") == 0
    else:
        assert err.count("auditkit: error") == 1 and "internal error" not in err, err


def test_every_damage_is_noticed_by_some_command(tmp_path, capsys):
    store = _store_with_findings(tmp_path)
    _truncate_a_part(store)
    assert main(["validate", str(store), "--out", str(tmp_path / "r.csv")]) == 2
    assert "store damaged: listed part rounds/" in capsys.readouterr().err  # its size is not the manifest's
    _corrupt_manifest(store)
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv")]) == 2
    assert "_manifest" in capsys.readouterr().err
    store = _store_with_findings(tmp_path / "again")
    _truncate_findings(store)
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv")]) == 2
    assert "cannot read a store file" in capsys.readouterr().err


BAD_ARGS = [
    (["simulate", "baccarat", "--rounds", "0", "--out", "x.jsonl"], "--rounds: must be an integer >= 1"),
    (["simulate", "baccarat", "--rounds", "-3", "--out", "x.jsonl"], "--rounds: must be an integer >= 1"),
    (["simulate", "baccarat", "--rounds", "many", "--out", "x.jsonl"], "--rounds: must be an integer"),
    (["simulate", "baccarat", "--fault-rate", "2", "--out", "x.jsonl"], "--fault-rate: must be a finite number from 0 to 1"),
    (["simulate", "baccarat", "--fault-rate", "nan", "--out", "x.jsonl"], "--fault-rate: must be a finite number"),
    (["simulate", "roulette", "--out", "x.jsonl"], "invalid choice"),
    (["ingest", "logs", "--store", "s", "--lock-timeout", "-1"], "--lock-timeout: must be a finite number >= 0"),
    (["validate", "logs", "--out", "r.csv", "--citation", "68 IAC 10-10-14(b)(6"], "unknown citation"),
    (["validate", "logs", "--out", "r.csv", "--game", "blackjack", "--citation", "68 IAC 10-10-14(b)(6)"],
     "unknown citation"),
    (["validate", "logs", "--out", "r.csv", "--game", "roulette"], "invalid choice"),
    (["report", "--store", "s", "--out", "r.csv", "--citation", "paytabel"], "unknown citation 'paytabel'"),
    (["validate", "nothing-here", "--out", "r.csv"], "no such file or folder"),
    (["validate", "empty", "--out", "r.csv"], "no log file"),
    (["validate", "only-json", "--out", "r.csv"], "no log file"),
    (["ingest", "empty", "--store", "s"], "no log file"),
    (["validate", "logs", "--out", "r.csv", "--config", "folder"], "cannot read configuration folder"),
    (["validate", "logs", "--out", "folder"], "folder"),
    (["score", "folder", "truth.csv"], "no such file"),
    (["score", "r.csv", "logs/a.jsonl"], "has no column"),
    (["run", "folder"], "cannot read job file"),
    (["frobnicate"], "unknown command 'frobnicate'; one of ingest, validate"),
    ([], "the following arguments are required"),
]


@pytest.mark.parametrize("argv, message", BAD_ARGS, ids=[" ".join(a[:3]) + f" {i}" for i, (a, _m) in enumerate(BAD_ARGS)])
def test_bad_arguments_and_inputs_are_exit_2_without_traceback(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    (tmp_path / "empty").mkdir()
    (tmp_path / "only-json").mkdir()
    (tmp_path / "only-json" / "a.json").write_text(json.dumps(clean_round()))
    (tmp_path / "folder").mkdir()
    Path("r.csv").write_text("round_id,citation\r\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "internal error" not in err


def test_an_unknown_citation_suggests_the_closest_ones(tmp_path, capsys):
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    assert main(["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv"),
                 "--citation", "68 IAC 10-10-14(b)(6"]) == 2
    err = capsys.readouterr().err
    closest = [line.strip() for line in err.split("the closest:\n", 1)[1].splitlines()]
    assert "'68 IAC 10-10-14(b)(6'" in err and closest[0] == "68 IAC 10-10-14(b)(6)" and len(closest) <= 5
    assert not (tmp_path / "r.csv").exists()


def test_a_job_glob_may_match_nothing_but_a_folder_must_hold_logs(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    assert main(["-q", "run", str(write_job(tmp_path))]) == 0  # inputs = ["logs/**/*.jsonl*"]: an empty night
    job = tmp_path / "folder.toml"
    job.write_text('inputs = ["logs"]\nstore = "store"\noutput = "reports"\n')
    assert main(["run", str(job)]) == 2
    assert "no log file" in capsys.readouterr().err


ENOSPC = OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("command", ["ingest", "validate", "validate-store", "run", "report", "simulate"])
def test_a_full_disk_is_exit_2_and_leaves_no_temporary_file(command, tmp_path, monkeypatch, capsys):
    import pyarrow.parquet as pq

    store = _store_with_findings(tmp_path / "base")
    write_log(tmp_path / "logs" / "day1.jsonl", day_records(1, "b"))
    job = write_job(tmp_path / "base", filename="more.toml", inputs=[str(tmp_path / "logs")])
    write = pq.write_table
    calls = [0]

    def full(table, where, *a, **k):  # the disk fills while a Parquet file is written
        calls[0] += 1
        write(table, where, *a, **k)
        raise OSError(errno.ENOSPC, "No space left on device", str(where))

    monkeypatch.setattr(pq, "write_table", full)
    monkeypatch.setattr(pd.DataFrame, "to_csv", lambda self, path, **k: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device", str(path))))

    def csv_full(frame, fh=None, **k):  # the disk fills while a CSV is written (its first bytes are)
        if fh is None:
            return write_csv_text(frame, **k)
        fh.write("round_id,")
        fh.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    from auditkit import report

    write_csv_text = report.csv_text
    monkeypatch.setattr(report, "csv_text", csv_full)
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(ENOSPC) if command == "simulate" else None)
    argv = {"ingest": ["ingest", str(tmp_path / "logs"), "--store", str(store)],
            "validate": ["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "out" / "r.csv")],
            "validate-store": ["validate", str(store), "--out", str(tmp_path / "out" / "r.csv")],
            "run": ["run", str(job)],
            "report": ["report", "--store", str(store), "--out", str(tmp_path / "out" / "r.csv")],
            "simulate": ["simulate", "baccarat", "--rounds", "10", "--out", str(tmp_path / "out" / "s.jsonl")]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err and "internal error" not in err
    left = [p for p in tmp_path.rglob("*.tmp")]
    assert not left


def test_an_unreadable_input_is_exit_2(tmp_path, monkeypatch, capsys):
    """A log the process may not read (chmod 000 as another user; tests run as root, so the denial is simulated)."""
    import builtins

    log = write_log(tmp_path / "logs" / "a.jsonl", [clean_round()]) and tmp_path / "logs" / "a.jsonl"
    real_open, real_os_open = builtins.open, os.open

    def denied(opener):
        def wrapper(file, *a, **k):
            if str(file) == str(log):
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return opener(file, *a, **k)
        return wrapper

    monkeypatch.setattr(builtins, "open", denied(real_open))
    monkeypatch.setattr(os, "open", denied(real_os_open))
    for argv in (["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv")],
                 ["ingest", str(log), "--store", str(tmp_path / "store")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"cannot read {log}: Permission denied" in err and "Traceback" not in err


def test_an_unexpected_exception_is_exit_2_internal_error_with_the_traceback_on_request(tmp_path, monkeypatch, capsys):
    import auditkit.validate

    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    monkeypatch.setattr(auditkit.validate, "collect", lambda *a, **k: [][0])
    argv = ["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == ("auditkit: error: internal error: IndexError: list index out of range "
                                    "(run with -v for the traceback)") and "Traceback" not in err
    assert main([*argv, "-v"]) == 2
    assert "Traceback (most recent call last)" in capsys.readouterr().err


# ---- 7. symlinks and special files -----------------------------------------------------------------
def test_a_symlink_out_of_the_log_folder_is_not_followed_unless_asked(tmp_path, capsys):
    logs = tmp_path / "logs"
    write_log(logs / "a.jsonl", [clean_round()])
    (logs / "evil.jsonl").symlink_to("/etc/passwd")
    (logs / "inside.jsonl").symlink_to(logs / "a.jsonl")   # inside the folder: fine (same content, once)
    outside = tmp_path / "elsewhere"
    write_log(outside / "b.jsonl", [clean_round("R2", shoe_id="S2")])
    (logs / "linked").symlink_to(outside)
    store = tmp_path / "store"
    assert main(["ingest", str(logs), "--store", str(store)]) == 0
    out = capsys.readouterr()
    assert "evil.jsonl: a symbolic link out of" in out.out and "linked: a symbolic link out of" in out.out
    assert Store(store).quarantine().empty
    assert stored_round_ids(store) == ["R1"]
    assert main(["-q", "ingest", str(logs), "--store", str(store), "--follow-symlinks"]) == 0
    assert sorted(stored_round_ids(store)) == ["R1", "R2"]
    assert set(Path(f).name for f in Store(store).quarantine()["source_file"]) == {"evil.jsonl"}


def _job_with_special_files(tmp_path: Path) -> Path:
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    os.mkfifo(tmp_path / "logs" / "pipe.jsonl")
    (tmp_path / "logs" / "zero.jsonl").symlink_to("/dev/zero")
    return write_job(tmp_path)


def test_a_fifo_or_device_matched_by_a_jobs_glob_is_skipped_with_a_warning(tmp_path):
    job = _job_with_special_files(tmp_path)
    for extra in ([], ["--no-progress"]):
        proc = subprocess.run([sys.executable, "-m", "auditkit", "run", str(job), *extra], env=ENV, capture_output=True,
                              text=True, timeout=120)
        assert "pipe.jsonl: a FIFO, not a regular file" in proc.stderr
        assert "zero.jsonl: a symbolic link out of" in proc.stderr
    rec = json.loads((run_folders(tmp_path / "reports")[0] / "run.json").read_text())
    assert rec["exit_code"] == 0 and rec["counts"]["files_skipped"] == 2 and rec["counts"]["rounds_stored"] == 1
    follow = write_job(tmp_path, filename="follow.toml", follow_symlinks=True)
    proc = subprocess.run([sys.executable, "-m", "auditkit", "run", str(follow)], env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "zero.jsonl: a device, not a regular file" in proc.stderr


def test_special_files_in_a_folder_or_named_are_skipped_with_a_warning(tmp_path, capsys):
    _job_with_special_files(tmp_path)
    logs = tmp_path / "logs"
    assert main(["validate", str(logs), "--out", str(tmp_path / "r.csv"), "--follow-symlinks"]) == 0
    err = capsys.readouterr().err
    assert "pipe.jsonl: a FIFO" in err and "zero.jsonl: a device" in err
    assert main(["validate", str(logs / "pipe.jsonl"), str(logs / "a.jsonl"), "--out", str(tmp_path / "r.csv")]) == 0
    assert "pipe.jsonl: a FIFO" in capsys.readouterr().err


# ---- 8. leftovers -----------------------------------------------------------------------------------
def test_stale_temporary_files_of_outputs_and_store_are_removed_at_start(tmp_path, monkeypatch):
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    pid = dead_pid()
    out = tmp_path / "out"
    out.mkdir()
    stale = [out / f".findings.csv.{pid}.x1y2z3.tmp", out / f".f.parquet.{pid}.abc.tmp",
             out / "sums" / f".summary_by_day.csv.{pid}.q.tmp"]
    alive = out / f".findings.csv.{os.getpid()}.mine.tmp"  # a writer still running: left alone
    for p in [*stale, alive]:
        p.parent.mkdir(exist_ok=True)
        p.write_text("half a file")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    old_store = tmpdir / f"auditkit-validate-{pid}-abcd"
    (old_store / "rounds").mkdir(parents=True)
    running = tmpdir / f"auditkit-validate-{os.getpid()}-efgh"
    running.mkdir()
    assert main(["-q", "validate", str(tmp_path / "logs"), "--out", str(out / "findings.csv"),
                 "--parquet", str(out / "f.parquet"), "--summaries", str(out / "sums")]) == 0
    assert not any(p.exists() for p in stale) and alive.exists()
    assert not old_store.exists() and running.exists()
    assert sorted(p.name for p in tmpdir.iterdir()) == [running.name]  # its own temporary store is gone too

    store = tmp_path / "store"
    assert main(["-q", "ingest", str(tmp_path / "logs"), "--store", str(store)]) == 0
    part = next((store / "rounds").rglob("part-*.parquet"))
    left = [part.parent / f".{part.name}.{pid}.zz.tmp", store / "_manifest" / f".{'0' * 64}.json.{pid}.zz.tmp",
            store / "_manifest" / ".legacy-name.tmp"]
    for p in left:
        p.write_text("x")
    os.utime(left[-1], (time.time() - 60, time.time() - 60))  # older than the lock: stale whatever its name
    write_log(tmp_path / "logs2" / "b.jsonl", [clean_round("R2", shoe_id="S2")])
    assert main(["-q", "ingest", str(tmp_path / "logs2"), "--store", str(store)]) == 0
    assert not any(p.exists() for p in left)


KILLED = r'''
import os, signal, sys
import auditkit.cli.validate
import auditkit.validate
from auditkit.cli import main

def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)

auditkit.cli.validate.HOLD_BYTES = 0  # a store held in memory spills every part to the folder
auditkit.cli.validate.HOLD_LOG_BYTES = 0  # on workers: the folder route, not a held store
auditkit.validate.collect = die
if __name__ == "__main__":  # not in the workers, which import this module
    sys.exit(main(sys.argv[1:]))
'''


@pytest.mark.parametrize("workers", ["1", "2"])  # the store held in memory (and spilled), or a folder
def test_the_temporary_store_of_a_killed_validate_is_removed_by_the_next_run(tmp_path, workers):
    write_log(tmp_path / "logs" / "a.jsonl", [clean_round()])
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {**ENV, "TMPDIR": str(tmpdir)}
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    argv = ["validate", str(tmp_path / "logs"), "--out", str(tmp_path / "r.csv"), "--workers", workers]
    proc = subprocess.run([sys.executable, str(script), *argv], env=env, capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    # (with workers, also multiprocessing's folder of the fork server's socket, pymp-*: not auditkit's to remove)
    (left,) = (p for p in tmpdir.iterdir() if not p.name.startswith("pymp-"))
    if workers == "1":
        assert list(left.glob("*.parquet"))  # the killed run's spilled parts
    else:
        assert (left / "_manifest").is_dir()  # the killed run's store, with what it ingested
    proc = subprocess.run([sys.executable, "-m", "auditkit", *argv], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "removing the temporary store of an interrupted validate" in proc.stderr
    assert [p for p in tmpdir.iterdir() if not p.name.startswith("pymp-")] == []
