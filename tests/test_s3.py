"""A store on object storage (``s3://``), against moto's S3 server started on 127.0.0.1 by this module:
ingest, validate and report round-trip, on local workers and on a Dask cluster, and a commit interrupted
before the manifest entry leaves nothing visible."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pandas as pd
import pytest
from python_calamine import CalamineWorkbook
from test_job import day_records, run_folders, write_job, write_log

from auditkit.cli import main
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store, StoreLocked
from auditkit.validate import collect, validate_into_store

moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install 'auditkit[dev]')")
boto3 = pytest.importorskip("boto3", reason="boto3 (a dependency of moto) is not installed")

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "audit-store"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture(scope="module")
def endpoint():
    """moto's S3 server on 127.0.0.1 (a free port) with one bucket; fake credentials in the environment
    (inherited by the worker processes and the subprocesses of the tests)."""
    saved = {k: os.environ.get(k) for k in CREDENTIALS}
    os.environ.update(CREDENTIALS)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1").create_bucket(Bucket=BUCKET)
    try:
        yield f"{host}:{port}"
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def uri(endpoint) -> str:
    """A fresh store prefix in the bucket."""
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:8]}/store?endpoint_override={endpoint}&scheme=http&region=us-east-1"


def logs(folder: Path) -> Path:
    """Three days of logs with a payout fault a day (shoes dealt over several days)."""
    for day in range(3):
        records = day_records(day, f"d{day}")
        records[4]["wagers"][0]["net"] += 5
        write_log(folder / "logs" / f"day{day}.jsonl", records)
    (folder / "logs" / "bad.jsonl").write_text('{"round_id": \n')  # one quarantined line
    return folder / "logs"


def objects(store: Store) -> list[str]:
    """Every object under the store's prefix (whatever the store's reading rules say)."""
    import pyarrow.fs as pafs

    base = store._files.base
    infos = store.filesystem.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    return sorted(i.path.lstrip("/")[len(base.lstrip("/")) + 1:] for i in infos if i.type == pafs.FileType.File)


def test_ingest_validate_and_report_round_trip(uri, tmp_path):
    """The command line on an s3:// store gives the local store's report, byte for byte; the store holds
    the same rounds, index, quarantine and findings; local workers read it too."""
    folder = logs(tmp_path)
    local = tmp_path / "local"
    for store in (str(local), uri):
        assert main(["-q", "ingest", "--store", store, str(folder)]) == 0
        assert main(["-q", "validate", store, "--out", str(tmp_path / f"{'s3' if store == uri else 'local'}.csv"),
                     "--workers", "1"]) == 1
    assert (tmp_path / "s3.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    s3, disk = Store(uri), Store(local)
    assert s3.remote and not disk.remote
    assert s3.games() == disk.games() == ["baccarat"] and s3.dates("baccarat") == disk.dates("baccarat")
    assert s3.count() == disk.count() == 3 * 78
    assert [r.sha256 for r in s3.manifest()] == [r.sha256 for r in disk.manifest()]
    assert s3.index().sort_by("round_id").equals(disk.index().sort_by("round_id"))
    pd.testing.assert_frame_equal(s3.quarantine(), disk.quarantine())
    assert len(s3.quarantine()) == 1

    assert validate_into_store(s3) == validate_into_store(disk)
    pd.testing.assert_frame_equal(s3.findings(), disk.findings())
    assert len(s3.findings()) >= 3
    two, _ = collect(s3, workers=2)  # worker processes open the store from its pickle (URI and file system)
    pd.testing.assert_frame_equal(two, collect(disk)[0])
    assert not [o for o in objects(s3) if o.endswith(".tmp")]  # no rename on object storage: no temporaries
    for store, name in ((uri, "s3"), (str(local), "local")):  # the stored findings, read back by report
        assert main(["-q", "report", "--store", store, "--out", str(tmp_path / f"report-{name}.csv")]) == 0
    assert (tmp_path / "report-s3.csv").read_bytes() == (tmp_path / "report-local.csv").read_bytes()


@pytest.mark.parametrize("streamed", [False, True])
def test_workers_write_the_parts_of_an_s3_store(uri, tmp_path, monkeypatch, streamed):
    """Byte ranges of 64 KiB parsed by two worker processes, each writing its rows as parts straight into
    the bucket (the client commits): the store of one process on a local disk, row for row; also with
    the store's hashes streamed from the bucket (a source sharing some read again)."""
    from test_parallel_ingest import MAX_LINE, _assert_same, _ingest, make_inputs

    from auditkit.ingest import dedup, parallel

    (tmp_path / "inputs").mkdir()
    inputs = make_inputs(tmp_path / "inputs")
    serial = _ingest(tmp_path / "serial", inputs, workers=1)
    monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
    monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)
    if streamed:
        monkeypatch.setattr(dedup, "LOAD_LIMIT", 0)
    store = Store(uri)
    earlier, folder = inputs
    ingest_paths([earlier], store, max_line=MAX_LINE)
    report = ingest_paths([folder], store, max_line=MAX_LINE, workers=2)
    _assert_same(serial[0], store, serial[1], report)
    assert not [o for o in objects(store) if o.endswith(".tmp")]
    listed = {f["path"] for r in store.manifest() for f in r.files or []}
    assert {o for o in objects(store) if o.startswith("rounds/")} == {p for p in listed if p.startswith("rounds/")}


def test_a_job_on_an_s3_store_writes_the_local_jobs_outputs(uri, tmp_path):
    """``auditkit run`` with ``store = "s3://..."``: ingest, validate, dated reports and the job state in
    the bucket; the outputs are the local store's, byte for byte; a second run has nothing new."""
    logs(tmp_path)
    outputs = {}
    for name, store in (("local", "store"), ("s3", uri)):
        job = write_job(tmp_path, f"{name}.toml", name="nightly", store=store, output=f"reports-{name}")
        assert main(["-q", "run", str(job), "--workers", "1"]) == 1
        folder = run_folders(tmp_path / f"reports-{name}")[-1]
        outputs[name] = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
                         if p.is_file() and p.name != "run.json"}
        record = json.loads((folder / "run.json").read_text())
        assert record["store"] == str(store if name == "s3" else tmp_path / "store")
        assert main(["-q", "run", str(job)]) == 0  # the job state in the store: nothing new
    for name in ("s3", "local"):  # the pages name their own store and command in their provenance
        page = outputs[name].pop("report.html").decode()
        assert "<h2>Provenance</h2>" in page
        outputs[name]["report.html"] = re.sub(r"<h2>Provenance</h2>.*?</footer>", "", page, flags=re.S).encode()
        book = CalamineWorkbook.from_object(io.BytesIO(outputs[name].pop("findings.xlsx")))
        outputs[name]["findings.xlsx"] = [[row for row in book.get_sheet_by_name(sheet).to_python()
                                           if not str(row[0]).startswith("provenance:")]
                                          for sheet in book.sheet_names]
    assert outputs["s3"] == outputs["local"] and "findings.csv" in outputs["s3"]
    assert "_jobs/nightly.json" in objects(Store(uri))


def test_dask_workers_read_the_s3_store(uri, tmp_path):
    distributed = pytest.importorskip("distributed")
    folder = logs(tmp_path)
    assert main(["-q", "ingest", "--store", uri, str(folder)]) == 0
    store = Store(uri)
    serial, checked = collect(store, workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  scheduler_port=0, host="127.0.0.1") as cluster, distributed.Client(cluster) as client:
        on_dask, n = collect(store, scheduler=client)
    assert n == checked == 3 * 78
    pd.testing.assert_frame_equal(serial, on_dask)


KILL_BEFORE_COMMIT = r'''
import os, signal, sys
import auditkit.store.files as fl
write_bytes = fl._ObjectFiles.write_bytes
def killed_at_the_entry(self, rel, data):  # the source's files closed, its manifest entry not written
    if rel.startswith("_manifest/"):
        os.kill(os.getpid(), signal.SIGKILL)
    return write_bytes(self, rel, data)
fl._ObjectFiles.write_bytes = killed_at_the_entry
from auditkit.cli import main
sys.exit(main(["-q", "ingest", "--store", sys.argv[1], sys.argv[2]]))
'''


def test_a_commit_interrupted_before_the_manifest_leaves_nothing_visible(uri, tmp_path):
    """An ingest killed (SIGKILL) just before writing the manifest entry: its parts, index and quarantine
    objects are in the bucket, yet the store shows nothing; the next ingest removes them and stores
    every round once."""
    folder = logs(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", KILL_BEFORE_COMMIT, uri, str(folder / "day0.jsonl")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    store = Store(uri)
    left = objects(store)
    assert any(o.startswith("rounds/") for o in left) and any(o.startswith("_index/") for o in left)
    assert not any(o.startswith("_manifest/") for o in left)
    assert store.manifest() == [] and store.count() == 0 and store.dates("baccarat") == []
    assert store.index().num_rows == 0 and store.quarantine().empty
    findings, checked = collect(store)
    assert checked == 0 and findings.empty

    assert main(["-q", "ingest", "--store", uri, str(folder / "day0.jsonl")]) == 0
    assert store.count() == 78 and len(store.manifest()) == 1
    parts = [o for o in objects(store) if o.startswith("rounds/")]
    assert all(o not in left for o in parts)  # the killed attempt's parts were removed, new ones written
    assert store.index().num_rows == 78


def test_the_lock_of_an_s3_store_is_a_local_lock_file(uri):
    """One client host commits to an object store: its writers are serialized by a local lock file
    (``$TMPDIR/auditkit-locks``), named by the store's URI without its options."""
    store = Store(uri)
    lock = store._files.lock_file()
    assert lock.parent.name == "auditkit-locks"
    assert Store(uri.split("?")[0] + "?region=us-east-1")._files.lock_file() == lock
    with store.lock(0, command="ingest"):
        assert "ingest" in lock.read_text()
        with pytest.raises(StoreLocked, match="locked by pid"), Store(uri).lock(0):
            pass
    with Store(uri).lock(0):
        pass


def test_any_fsspec_file_system_serves_a_store(tmp_path):
    """``Store(path, filesystem=fs)`` with an fsspec file system (here in memory): the same findings as a
    local store of the same logs."""
    fsspec = pytest.importorskip("fsspec")
    from auditkit.ingest.sources import ingest_paths

    folder = logs(tmp_path)
    memory = fsspec.filesystem("memory")
    root = f"audit-{uuid.uuid4().hex[:8]}/store"
    store, disk = Store(root, filesystem=memory), Store(tmp_path / "local")
    for st in (store, disk):
        ingest_paths([folder], st)
        validate_into_store(st, workers=1)
    assert store.remote and Store.is_store(root, filesystem=memory)
    assert store.count() == disk.count() == 3 * 78
    pd.testing.assert_frame_equal(store.findings(), disk.findings())
    assert memory.exists(f"{root}/_manifest") and not memory.exists(f"{root}/.auditkit.lock")


def test_a_validation_run_lists_the_manifest_once(uri, tmp_path, monkeypatch):
    """On object storage a listing is a request: a run pins the committed sources once (one commit point
    for every partition) instead of listing the manifest for every partition."""
    import auditkit.store

    folder = logs(tmp_path)
    assert main(["-q", "ingest", "--store", uri, str(folder)]) == 0
    store = Store(uri)
    assert len(store.dates("baccarat")) == 3
    listed: list[str] = []
    real = auditkit.store._ObjectFiles.files
    monkeypatch.setattr(auditkit.store._ObjectFiles, "files", lambda self, p: listed.append(p) or real(self, p))
    entries = auditkit.store._ObjectFiles.entries  # the manifest's listing (store format 2: with sizes and times)
    monkeypatch.setattr(auditkit.store._ObjectFiles, "entries", lambda self, f: listed.append(f) or entries(self, f))
    findings, checked = collect(store, workers=1)
    assert checked == 3 * 78 and len(findings) >= 3
    assert listed.count("_manifest/*.json") + listed.count("_manifest") == 1


def test_a_file_is_uploaded_in_bounded_memory(uri):
    """An object written from a local file (an index or quarantine stream is spooled to one) holds at
    most a few parts in memory, not the file: a stream uploads in the background and, written in one
    go, would queue all of it (100 MiB of Arrow memory for a 100 MiB file)."""
    import io
    import threading
    import time

    import pyarrow as pa

    files = Store(uri)._files
    data = os.urandom(64 << 20)
    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], pa.total_allocated_bytes())
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        files.upload("_index/big.bin", io.BytesIO(data))
    finally:
        done.set()
        watcher.join()
    assert files.read_bytes("_index/big.bin") == data
    assert peak[0] < 40 << 20
