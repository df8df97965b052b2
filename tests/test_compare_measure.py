"""bench/compare.py measures each route's own peak memory, not the benchmark's (Linux counts what a process
held before its exec in its peak RSS: every route of a 2M-round store reported the script's 667 MiB)."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _compare():
    spec = importlib.util.spec_from_file_location("bench_compare", BENCH / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(sys.platform != "linux", reason="Linux's rusage")
def test_a_routes_peak_memory_is_its_own_not_the_benchmarks():
    compare = _compare()
    held = bytearray(400 << 20)
    held[::4096] = b"\1" * len(held[::4096])  # 400 MiB resident in the benchmark's process
    cpu, wall, rss, code = compare._measure([sys.executable, "-c", "x = bytearray(50 << 20); x[::4096] = b'1' * len(x[::4096])"], (0,))
    assert code == 0 and cpu > 0 and wall > 0
    assert 50 <= rss < 200, rss  # its 50 MiB and an interpreter, not the 400 MiB held here
    del held


def test_a_route_that_fails_stops_the_benchmark_with_its_message():
    compare = _compare()
    with pytest.raises(SystemExit, match="boom"):
        compare._measure([sys.executable, "-c", "import sys; sys.exit('boom')"], (0,))


def test_auditkit_is_byte_compiled_before_any_route_is_timed(tmp_path):
    """A fresh tree under PYTHONDONTWRITEBYTECODE compiled every module in every timed process."""
    import os
    import subprocess

    package = tmp_path / "auditkit"
    (package / "sub").mkdir(parents=True)
    for rel in ("__init__.py", "one.py", "sub/__init__.py", "sub/two.py"):
        (package / rel).write_text("X = 1\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(BENCH)!r}); import compare; "
                    "compare.byte_compiled()"], env=env, check=True, cwd=tmp_path)
    compiled = {p.name.split(".")[0] for p in package.rglob("__pycache__/*.pyc")}
    assert compiled == {"__init__", "one", "two"}
