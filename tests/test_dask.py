"""The Dask engine: partitions as tasks on a local cluster of two worker processes give the serial findings,
and a worker killed mid-run loses and duplicates nothing."""

from __future__ import annotations

import os
import signal

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from auditkit.simulate import simulate_into_store  # noqa: E402
from auditkit.store import Store  # noqa: E402
from auditkit.validate import collect, sort_findings, validate_into_store  # noqa: E402


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
    """A worker killed (SIGKILL) while it runs a partition: Dask runs that task again elsewhere, and the
    findings stored are the serial run's, each once."""
    c, client = cluster
    serial, _ = collect(store)
    pids = client.run(os.getpid)  # worker address -> pid
    victim: dict[str, object] = {}

    def kill_one(n: int) -> None:  # after the first partition's findings arrived, a busy worker dies
        if victim:
            return
        busy = [(addr, keys) for addr, keys in client.processing().items() if keys]
        if busy:
            addr, keys = busy[0]
            victim.update(address=addr, pid=pids[addr], tasks=list(keys))
            os.kill(pids[addr], signal.SIGKILL)

    total, checked = validate_into_store(store, scheduler=client, batch_size=500, progress=kill_one)
    assert victim and victim["tasks"], "no worker was busy when the first findings arrived"
    assert victim["pid"] not in client.run(os.getpid).values()
    assert checked == 11000 and total == len(serial)
    stored = pd.concat([store.findings([g]) for g in store.games()], ignore_index=True)
    assert len(stored) == len(serial)
    assert not stored.duplicated(["round_id", "rule_id"]).any()
    pd.testing.assert_frame_equal(sort_findings(stored), serial)


def test_the_command_line_runs_on_workers_and_on_a_cluster(store, cluster, tmp_path):
    """``auditkit validate STORE --workers 2`` and ``--scheduler ADDRESS`` write the serial report, byte for byte."""
    from auditkit.cli import main

    _c, client = cluster
    outs = {}
    for name, extra in (("serial", ["--workers", "1"]), ("workers", ["--workers", "2"]),
                        ("dask", ["--scheduler", client.scheduler.address]),
                        ("engine", ["--engine", "dask", "--scheduler", client.scheduler.address])):
        outs[name] = tmp_path / f"{name}.csv"
        assert main(["validate", str(store.root), "--out", str(outs[name]), "-q", *extra]) == 1
    assert len({p.read_bytes() for p in outs.values()}) == 1


def test_a_job_on_the_cluster_writes_the_local_runs_outputs_and_record(cluster, tmp_path):
    """``[engine] kind = "dask"`` in the job file (and ``--engine``/``--scheduler`` on ``run``): the
    same outputs, byte for byte, and the same run record apart from times and ids, as one process."""
    from test_job import day_records, run_with, write_job, write_log

    _c, client = cluster
    for day in range(3):
        records = day_records(day, f"d{day}")
        records[5]["wagers"][0]["net"] += 5
        write_log(tmp_path / "logs" / f"day{day}.jsonl", records)
    job = write_job(tmp_path)
    local = run_with(tmp_path, "--workers", "1")
    on_cli = run_with(tmp_path, "--scheduler", client.scheduler.address)
    job.write_text(job.read_text() + f'[engine]\nkind = "dask"\nscheduler = "{client.scheduler.address}"\n')
    on_job = run_with(tmp_path)
    assert local[0]["counts"]["findings"] >= 3
    assert local == on_cli
    assert on_job[0].pop("job_sha256") != local[0].pop("job_sha256")  # the job file changed, nothing else
    assert on_job == local
