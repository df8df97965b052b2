"""The Dask engine: partitions as tasks on a local cluster of two worker processes give the serial findings,
and a worker killed mid-run loses and duplicates nothing."""

from __future__ import annotations

import os
import signal
import threading

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from auditkit.simulate import simulate_into_store  # noqa: E402
from auditkit.store import Store  # noqa: E402
from auditkit.validate import collect, validate_into_store  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    st = Store(tmp_path_factory.mktemp("dask") / "store")
    simulate_into_store(st, "baccarat", 8000, seed=5, fault_rate=0.05, chunk=2000)
    simulate_into_store(st, "three_card_poker", 3000, seed=6, fault_rate=0.05, chunk=1000)
    return st


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  scheduler_port=0, host="127.0.0.1") as c, distributed.Client(c) as client:
        yield c, client


def test_dask_gives_the_serial_findings(store, cluster):
    _c, client = cluster
    serial, n1 = collect(store)
    on_dask, n2 = collect(store, scheduler=client)
    assert n1 == n2 == 11000 and len(serial) > 100
    pd.testing.assert_frame_equal(serial, on_dask)
    by_address, _ = collect(store, scheduler=client.scheduler.address)  # a scheduler address works too
    pd.testing.assert_frame_equal(serial, by_address)


def test_a_killed_worker_loses_and_duplicates_nothing(store, cluster, tmp_path):
    c, client = cluster
    serial, _ = collect(store)
    pids = list(client.run(os.getpid).values())

    killed = threading.Event()

    def kill_one(n: int) -> None:  # after the first partition's findings arrived, a worker dies
        if not killed.is_set():
            os.kill(pids[0], signal.SIGKILL)
            killed.set()

    total, checked = validate_into_store(store, scheduler=client, batch_size=500, progress=kill_one)
    assert killed.is_set() and pids[0] not in client.run(os.getpid).values()
    assert checked == 11000 and total == len(serial)
    stored = pd.concat([store.findings([g]) for g in store.games()], ignore_index=True)
    assert len(stored) == len(serial)
    assert not stored.duplicated(["round_id", "rule_id"]).any()
    key = ["round_id", "rule_id", "discrepancy"]
    assert sorted(map(tuple, stored[key].to_numpy())) == sorted(map(tuple, serial[key].to_numpy()))


def test_the_command_line_runs_on_workers_and_on_a_cluster(store, cluster, tmp_path):
    """``auditkit validate STORE --workers 2`` and ``--scheduler ADDRESS`` write the serial report, byte for byte."""
    from auditkit.cli import main

    _c, client = cluster
    outs = {}
    for name, extra in (("serial", []), ("workers", ["--workers", "2"]),
                        ("dask", ["--scheduler", client.scheduler.address])):
        outs[name] = tmp_path / f"{name}.csv"
        assert main(["validate", str(store.root), "--out", str(outs[name]), "-q", *extra]) == 1
    assert outs["serial"].read_bytes() == outs["workers"].read_bytes() == outs["dask"].read_bytes()
