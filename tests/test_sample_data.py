"""The bundled sample data: every planted fault is found, nothing else is flagged."""

from pathlib import Path

import pandas as pd

from auditkit.cli import main
from auditkit.simulate.samples import write_samples

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def test_sample_data_findings_match_ground_truth(tmp_path):
    out = tmp_path / "findings.csv"
    assert main(["validate", str(SAMPLE / "logs"), "--out", str(out)]) == 1
    found = pd.read_csv(out)
    truth = pd.concat([pd.read_csv(p) for p in (SAMPLE / "truth").glob("*.truth.csv")])
    assert set(zip(found["round_id"], found["citation"])) == set(zip(truth["round_id"], truth["citation"]))
    assert truth.groupby("citation").size().min() >= 3  # a few faults of every kind


def test_sample_data_is_what_the_generator_writes(tmp_path):
    write_samples(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.*"))
    assert written == sorted(p.relative_to(SAMPLE) for p in (SAMPLE / "logs").rglob("*.*")) + \
        sorted(p.relative_to(SAMPLE) for p in (SAMPLE / "truth").rglob("*.*"))
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (SAMPLE / rel).read_bytes(), rel
