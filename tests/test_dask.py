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


# ---- the sample data and a multi-day store whose shoes cross midnight --------------------------------------
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _midnight_log(path) -> None:
    """A shoe of table M1 whose cut card comes out at 23:59 and two more hands dealt after midnight:
    the second is one too many (68 IAC 10-10-14(e)), which only the previous day's rounds show
    (in the middle of the store: the day is neither the first nor the last)."""
    import json

    def rnd(rid, seq, when, cut=False, shoe="MS1"):
        return {"round_id": rid, "game": "baccarat", "table_id": "M1", "started_at": when, "shoe_id": shoe,
                "round_seq": seq, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"], "outcome": "player",
                "cut_card": cut, "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}

    rounds = [rnd("M-A", 1, "2025-06-04T23:58:00-05:00"), rnd("M-B", 2, "2025-06-04T23:59:00-05:00", cut=True),
              rnd("M-C", 3, "2025-06-05T00:01:00-05:00"), rnd("M-D", 4, "2025-06-05T00:03:00-05:00"),
              rnd("M-E", 1, "2025-06-05T00:05:00-05:00", shoe="MS2")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rounds))


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Store:
    from auditkit.ingest.sources import ingest_paths

    st = Store(tmp_path_factory.mktemp("sample") / "store")
    report = ingest_paths([ROOT / "sample_data" / "logs"], st)
    assert report.sources and st.count() > 10_000
    return st


def _simulate_late(store: Store, game: str, n: int, seed: int, hours: int) -> None:
    """Simulated rounds of one table, dealt ``hours`` later than the simulator deals them (so a baccarat
    table deals on past midnight), committed as one source."""
    import hashlib

    import pyarrow as pa
    import pyarrow.compute as pc

    from auditkit.simulate import simulate
    from auditkit.store import SourceRecord

    table, _truth = simulate(game, n, seed=seed, fault_rate=0.2, tables=1)
    late = pc.add(table["started_at"], pa.scalar(hours * 3_600_000_000, pa.duration("us")))
    table = table.set_column(table.schema.get_field_index("started_at"), "started_at", late)
    local = pc.add(late, pc.multiply(table["utc_offset"].cast(pa.int64()), 60_000_000).cast(pa.duration("us")))
    days = pc.strftime(local, format="%Y-%m-%d")
    names = sorted(pc.unique(days).to_pylist())
    sha = hashlib.sha256(f"late {game} {seed}".encode()).hexdigest()
    for day in names:
        store.write_rounds(game, day, table.filter(pc.equal(days, day)), sha)
    store.commit_source(SourceRecord(sha256=sha, path=f"<late {game}>", size=0, format="simulated", stored=n,
                                     games={game: n}, partitions=[f"{game}/{d}" for d in names]))


def _shoes_across_midnight(store: Store) -> int:
    """How many shoes have rounds on two consecutive stored days."""
    n = 0
    for game in store.games():
        before: set[str] = set()
        for day in store.dates(game):
            t = store.read(game, day, columns=["table_id", "shoe_id"]).to_pandas()
            shoes = set(t["table_id"] + "|" + t["shoe_id"].fillna(""))
            n += len(before & shoes)
            before = shoes
    return n


@pytest.fixture(scope="module")
def midnight_store(tmp_path_factory) -> Store:
    """A simulated multi-day store whose shoes cross midnight (baccarat dealt three hours late, blackjack
    dealing 10:00-04:00), with the hand-made shoe above crossing from 2025-06-04 into 2025-06-05."""
    from auditkit.ingest.sources import ingest_paths

    folder = tmp_path_factory.mktemp("midnight")
    st = Store(folder / "store")
    _simulate_late(st, "baccarat", 6000, seed=3, hours=3)
    _simulate_late(st, "blackjack", 3000, seed=4, hours=0)
    _midnight_log(folder / "midnight.jsonl")
    ingest_paths([folder / "midnight.jsonl"], st)
    assert len(st.dates("baccarat")) >= 5 and len(st.dates("blackjack")) >= 4
    assert _shoes_across_midnight(st) >= 7
    return st


def _without_previous_days(store: Store) -> pd.DataFrame:
    """What a run that lost the open shoes between days would find: each day checked alone."""
    from auditkit.engine.plan import Partition, plan
    from auditkit.paytables import Config
    from auditkit.validate import validate_partition

    frames = [validate_partition(store, Partition(p.game, p.date, None), Config())[0] for p in plan(store)]
    return sort_findings(pd.concat([f for f in frames if len(f)], ignore_index=True))


def test_sample_data_on_workers_and_on_dask_gives_the_serial_findings(sample_store, cluster):
    _c, client = cluster
    serial, n1 = collect(sample_store, workers=1)
    assert n1 == sample_store.count() and len(serial) > 50
    for route in ({"workers": 2}, {"scheduler": client}):
        other, n2 = collect(sample_store, **route)
        assert n2 == n1
        pd.testing.assert_frame_equal(serial, other)


def test_shoes_crossing_midnight_on_workers_and_on_dask(midnight_store, cluster):
    """Each worker gets runs of partitions (one day each here: 2 workers x 8 runs > the days), so a day
    at the head of a run reads the previous day's open shoes from the store itself; the findings are
    the serial run's, including those only the previous day's rounds show."""
    _c, client = cluster
    serial, _ = collect(midnight_store, workers=1)
    alone = _without_previous_days(midnight_store)
    key = ["round_id", "rule_id"]
    only_with_previous = set(map(tuple, serial[key].values)) - set(map(tuple, alone[key].values))
    assert ("M-D", "baccarat.e") in only_with_previous  # the hand-made shoe: lost if the open shoes were
    for route in ({"workers": 2}, {"scheduler": client}):
        other, _ = collect(midnight_store, **route)
        pd.testing.assert_frame_equal(serial, other)


def test_ingest_on_dask_gives_the_serial_store(tmp_path, cluster, monkeypatch):
    """Files and byte ranges of 64 KiB parsed by the cluster's workers (which see the files at the same
    paths), committed in order by the client: the store of one process, row for row, with the store's
    hashes held and streamed."""
    from test_parallel_ingest import _assert_same, _ingest, make_inputs

    from auditkit.ingest import parallel

    _c, client = cluster
    (tmp_path / "inputs").mkdir()
    inputs = make_inputs(tmp_path / "inputs")
    serial = _ingest(tmp_path / "serial", inputs, workers=1)
    monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
    monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)
    on_dask = _ingest(tmp_path / "dask", inputs, scheduler=client)
    _assert_same(serial[0], on_dask[0], serial[1], on_dask[1])
    by_address = _ingest(tmp_path / "address", inputs, scheduler=client.scheduler.address)
    _assert_same(serial[0], by_address[0], serial[1], by_address[1])
    from auditkit.ingest import dedup

    monkeypatch.setattr(dedup, "LOAD_LIMIT", 0)  # the store's hashes streamed: a source sharing some read again
    streamed = _ingest(tmp_path / "streamed", inputs, scheduler=client)
    _assert_same(serial[0], streamed[0], serial[1], streamed[1])
