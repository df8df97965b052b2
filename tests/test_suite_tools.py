"""The suite's own tools (issue 42, item 8): ``--cpu-durations`` lists the tests by CPU time, with every
worker's tests under pytest-xdist; a test polling a running watcher's output reads whole lines only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_live import emitted

TESTS = Path(__file__).resolve().parent
BUSY_AND_IDLE = '''import time

def test_busy():
    end = time.process_time() + 0.6
    while time.process_time() < end:
        pass

def test_idle():
    time.sleep(0.6)
'''


@pytest.mark.parametrize("workers", ["0", "2"])
def test_cpu_durations_ranks_the_tests_by_cpu_time_not_wall_time(tmp_path, workers):
    (tmp_path / "test_x.py").write_text(BUSY_AND_IDLE)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
                           "-n", workers, "--cpu-durations=5", "test_x.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(TESTS)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = proc.stdout.split("CPU time: ", 1)[1].splitlines()
    assert listed[0].split(" s in ")[1].startswith("2 tests")
    (busy, first), (idle, second) = ((float(line.split("s ")[0]), line.split()[-1]) for line in listed[1:3])
    assert first.endswith("::test_busy") and second.endswith("::test_idle")
    assert busy >= 0.5 and idle < 0.3  # the idle test's 0.6 s of wall is no CPU


def test_a_line_the_watcher_is_still_writing_is_not_read(tmp_path):
    out = tmp_path / "f.jsonl"
    out.write_text('{"round_id": "R1"}\n{"round_id": "R2", "ga')
    assert emitted(out) == [{"round_id": "R1"}]
    out.write_text('{"round_id": "R1"}\n{"round_id": "R2"}\n')
    assert emitted(out) == [{"round_id": "R1"}, {"round_id": "R2"}]
    assert emitted(tmp_path / "none.jsonl") == []
