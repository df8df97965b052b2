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


# ---- CPU time per test -----------------------------------------------------------------------------
# ``--cpu-durations N`` lists the N tests that used the most CPU time (this process and the children it
# waited for: subprocesses, process pools), setup, call and teardown together. Wall time (``--durations``)
# grows with the machine's load; CPU time does not, so this is the list to read on a shared machine.
# Under pytest-xdist each worker measures its tests and the controller, which gets every report, lists them.
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="list the N tests using the most CPU time (0: all), and the suite's total")


def _cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _measured(item: pytest.Item, when: str):
    if item.config.getoption("cpu_durations") is None:
        yield
        return
    start = _cpu_seconds()
    yield
    item.user_properties.append((f"cpu_{when}", round(_cpu_seconds() - start, 3)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _measured(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _measured(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield from _measured(item, "teardown")


_CPU: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == f"cpu_{report.when}":
            _CPU[report.nodeid] = _CPU.get(report.nodeid, 0.0) + float(value)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    n = config.getoption("cpu_durations")
    if n is None or not _CPU:
        return
    ranked = sorted(_CPU.items(), key=lambda kv: -kv[1])
    terminalreporter.write_sep("=", f"CPU time: {sum(_CPU.values()):.0f} s in {len(_CPU)} tests; the most")
    for nodeid, seconds in ranked[:n] if n else ranked:
        terminalreporter.write_line(f"{seconds:8.2f}s {nodeid}")
