"""The benchmark scripts still run (on a few rounds; their timings are not tested)."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script, args, says", [
    ("bench_baccarat.py", ["--rounds", "3000", "--fault-rate", "0.01"], "end to end"),
    ("bench_blackjack.py", ["--rounds", "1500"], "end to end"),
    ("bench_three_card_poker.py", ["--rounds", "3000"], "0 missed, 0 extra"),
    ("bench_pai_gow_poker.py", ["--rounds", "2000"], "end to end"),
    ("bench_ingest.py", ["--rounds", "2000"], "lines/s"),
    ("compare.py", ["--rounds", "3000"], "same: DuckDB SQL over the JSONL, 1 thread"),
    ("compare.py", ["--store-only", "--rounds", "3000"], "same: DuckDB SQL over the store, 2 threads"),
    ("compare.py", ["--ingest-games", "--rounds", "1000"], "CSV layout"),
    ("compare.py", ["--profile", "--rounds", "2000"], "auditkit ingest EXPORT --profile P"),
    ("bench_workers.py", ["--rounds", "20000", "--workers", "2"], "same findings on every route"),
    ("bench_many_files.py", ["--files", "30"], "findings many/one"),
    ("bench_many_files.py", ["--files", "20", "--steps", "ingest", "validate", "--repeat", "2"], "validate median"),
    ("bench_dedup.py", ["--stored", "4000", "--files", "2", "--new", "1000", "--workers", "1", "--repeat", "1"],
     "same counts held and streamed"),
])
def test_bench_script_runs(script, args, says):
    done = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert says in done.stdout and "WARNING" not in done.stdout and "DIFFERENT" not in done.stdout


def test_rule_lengths_counts_every_registered_rule():
    from auditkit.rules.registry import _ordered

    done = subprocess.run([sys.executable, str(BENCH / "rule_lengths.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"{len(_ordered())} rules: median ")
