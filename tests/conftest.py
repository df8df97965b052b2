"""Shared fixtures: the spec's worked examples."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_SPEC = ROOT.parent / "shared" / "spec"   # the contract, beside the repository
VENDORED_SPEC = Path(__file__).resolve().parent / "spec"  # a copy, so a lone clone still tests it
SPEC = Path(os.environ.get("AUDITKIT_SPEC", SHARED_SPEC if (SHARED_SPEC / "examples").is_dir() else VENDORED_SPEC))


def example_records(game: str) -> list[dict]:
    """The spec's worked example rounds of one game file."""
    path = SPEC / "examples" / f"{game}.jsonl"
    if not path.exists():
        pytest.skip(f"spec examples not found at {path} (set AUDITKIT_SPEC)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def expected_findings(game: str) -> pd.DataFrame:
    """The expected (round_id, citation, discrepancy) rows of the worked examples for one game."""
    frame = pd.read_csv(SPEC / "examples" / "expected.csv")
    games = ("baccarat", "mini_baccarat") if game == "baccarat" else (game,)
    return frame[frame["game"].isin(games)].reset_index(drop=True)


@pytest.fixture
def spec_dir() -> Path:
    return SPEC


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL server on a Unix socket (tests/pg.py): its libpq URL."""
    from pg import server

    with server() as url:
        yield url
