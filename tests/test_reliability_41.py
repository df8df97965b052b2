"""Issue 41, reliability (fourth round): walks that cannot loop, errors that name the file.
docs/reliability.md lists each case with its test."""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_job import clean_round, run_folders, stored_round_ids, write_job, write_log

from auditkit.cli import main

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
