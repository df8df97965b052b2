"""Issue 41, reliability (fourth round): walks that cannot loop, errors that name the file.
docs/reliability.md lists each case with its test."""

from __future__ import annotations

import errno
import glob
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_job import clean_round, run_folders, stored_round_ids, write_job, write_log

from auditkit.cli import main
from auditkit.store import Store

ROOT = Path(__file__).resolve().parents[1]
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def _looped_logs(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    write_log(logs / "a.jsonl", [clean_round("R1")])
    write_log(logs / "sub" / "b.jsonl", [clean_round("R2", shoe_id="S2")])
    (logs / "sub" / "loop").symlink_to(".")
    (logs / "sub" / "up").symlink_to("..")
    return logs


@pytest.mark.parametrize("follow", [False, True])
def test_a_jobs_glob_over_symlink_loops_ends_and_reports_each_loop_once(tmp_path, follow):
    """issue 41, item 4: `**` over `ln -s . loop; ln -s .. up` hung forever, with or without follow_symlinks."""
    _looped_logs(tmp_path)
    job = write_job(tmp_path, follow_symlinks=follow)  # inputs = ["logs/**/*.jsonl*"]
    proc = subprocess.run([sys.executable, "-m", "auditkit", "run", str(job)], env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for link, target in (("loop", tmp_path / "logs" / "sub"), ("up", tmp_path / "logs")):
        said = f"{tmp_path / 'logs' / 'sub' / link}: a symbolic link loop back to {target}; not walked again"
        assert proc.stderr.count(said) == 1, proc.stderr
    assert sorted(stored_round_ids(tmp_path / "store")) == ["R1", "R2"]
    rec = json.loads((run_folders(tmp_path / "reports")[0] / "run.json").read_text())
    assert rec["counts"]["files_skipped"] == 2


@pytest.mark.parametrize("follow", [[], ["--follow-symlinks"]])
def test_a_folder_walk_over_symlink_loops_reports_each_loop_once(tmp_path, follow, capsys):
    logs = _looped_logs(tmp_path)
    assert main(["ingest", str(logs), "--store", str(tmp_path / "store"), *follow]) == 0
    out = capsys.readouterr()
    assert (out.out + out.err).count("a symbolic link loop back to") == 2
    assert sorted(stored_round_ids(tmp_path / "store")) == ["R1", "R2"]


def test_a_glob_matches_what_pythons_glob_matches_on_a_tree_without_links(tmp_path):
    from auditkit.ingest.walk import glob_matches

    for rel in ("a.jsonl", "b.csv", ".hidden.jsonl", "x/c.jsonl", "x/y/d.jsonl.gz", "x/.h/e.jsonl", "z1/f.jsonl",
                "z2/g.jsonl", "z2/deep/er/h.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}\n")
    for pattern in ("**/*.jsonl*", "*.jsonl", "*/*.jsonl", "z?/*.jsonl", "z[2]/**", "**", "x/**/d.*", "**/er/*"):
        want = sorted(Path(p) for p in glob.glob(str(tmp_path / pattern), recursive=True))
        assert glob_matches(tmp_path, tuple(pattern.split("/")), False, []) == want, pattern


# ---- errors name the file; no temporary file survives a failed write (item 6) ----------------------------------
@pytest.fixture(scope="module")
def big_logs(tmp_path_factory):
    """Logs whose store (about 1 MB) and findings (about 1 MB of CSV) do not fit a 200 KiB disk."""
    folder = tmp_path_factory.mktemp("big")
    assert main(["-q", "simulate", "baccarat", "--rounds", "20000", "--seed", "2", "--fault-rate", "0.2",
                 "--out", str(folder / "logs" / "big.jsonl")]) == 0
    return folder / "logs"


@pytest.fixture
def small_disk(tmp_path):
    """A 200 KiB tmpfs (a real full disk); skipped where mounting needs privileges this process lacks."""
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(disk)], capture_output=True,
                          text=True)
    if proc.returncode:
        pytest.skip(f"cannot mount a small tmpfs here ({proc.stderr.strip() or proc.returncode}); "
                    "the monkeypatched tests below cover a full disk")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _leftovers(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if p.name.endswith((".tmp", ".partial")))


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditkit", "-q", *argv], env=ENV, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("command", ["ingest", "ingest-workers", "validate-csv", "validate-xlsx", "run"])
def test_a_real_full_disk_names_the_file_and_leaves_no_temporary_file(command, small_disk, big_logs, tmp_path):
    """issue 41, item 6: a full disk during ingest said `[Errno 28] No space left on device`, naming no file,
    and left the index's and the quarantine's `.tmp` files (a failed write's abort met the full disk again)."""
    store, job = small_disk / "store", tmp_path / "job.toml"
    job.write_text(f'inputs = ["{big_logs}/*.jsonl"]\nstore = "{store}"\noutput = "{small_disk / "reports"}"\n')
    argv = {"ingest": ["ingest", str(big_logs), "--store", str(store)],
            "ingest-workers": ["ingest", str(big_logs), "--store", str(store), "--workers", "2"],
            "validate-csv": ["validate", str(big_logs), "--out", str(small_disk / "f.csv")],
            "validate-xlsx": ["validate", str(big_logs), "--out", str(tmp_path / "f.csv"),
                              "--xlsx", str(small_disk / "f.xlsx")],
            "run": ["run", str(job)]}[command]
    proc = _cli(*argv)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith(f"auditkit: error: {small_disk}/") and line.endswith(": No space left on device"), line
    assert "\n" not in line and "internal error" not in line  # one line: no finalizer's traceback after it
    assert _leftovers(small_disk) == []
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True)
    assert _cli(*argv).returncode in (0, 1)  # with room, the same command does its work
    if command.startswith("ingest"):
        assert sum(r.stored for r in Store(store).manifest()) == 20000


def test_a_read_only_folder_names_the_file(small_disk, big_logs):
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    proc = _cli("ingest", str(big_logs), "--store", str(small_disk / "store"))
    assert proc.returncode == 2 and f"{small_disk / 'store'}" in proc.stderr and "Read-only file system" in proc.stderr
    proc = _cli("validate", str(big_logs), "--out", str(small_disk / "f.csv"))
    # refused before any work, by the output check (cli.common.check_writable), naming the file and why
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"{small_disk / 'f.csv'}" in proc.stderr and "Read-only file system" in proc.stderr


def _log(folder: Path) -> Path:
    write_log(folder / "a.jsonl", [clean_round("R1"), clean_round("R2", shoe_id="S2")])
    (folder / "a.jsonl").open("a").write("{not json\n")  # a quarantined line: the quarantine is written too
    return folder


@pytest.mark.parametrize("stream", ["_index", "_quarantine"])
def test_a_full_disk_while_a_store_file_streams_names_it_and_leaves_no_temporary_file(stream, tmp_path, monkeypatch,
                                                                                         capsys):
    """The same, on any machine: the system's write (no file named, as a kernel's ENOSPC through a write) fails
    while the index or the quarantine is written; so does every later write, as on a full disk."""
    from auditkit.store import parquet as integrity

    write = integrity.HashingFile.write
    full = [False]

    def filling(self, data):
        name = getattr(self.fh, "name", "")
        full[0] = full[0] or f"/{stream}/" in str(name)
        if full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(self, data)

    monkeypatch.setattr(integrity.HashingFile, "write", filling)
    store = tmp_path / "store"
    assert main(["ingest", str(_log(tmp_path / "logs")), "--store", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"auditkit: error: {store}/") and err.endswith(": No space left on device"), err
    assert f"/{stream}/" in err and ".tmp" not in err
    assert _leftovers(store) == []


def test_a_permission_problem_names_the_file_not_its_temporary_file(tmp_path, monkeypatch, capsys):
    """A folder the user may not write (root passes every permission check, so the refusal is simulated):
    the error names the file to be written, not the temporary sibling it was refused for."""
    import tempfile

    def refused(prefix="", suffix="", dir=None, **_k):
        raise PermissionError(errno.EACCES, "Permission denied", f"{dir}/{prefix}abc123{suffix}")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    out = tmp_path / "out" / "f.csv"
    assert main(["validate", str(_log(tmp_path / "logs")), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"\nauditkit: error: {out}: Permission denied")
