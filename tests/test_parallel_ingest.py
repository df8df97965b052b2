"""Parallel ingest: files (and byte ranges of one file) parsed by worker processes give the store,
index, quarantine, line accounting and findings of one process, whatever the cut."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from auditkit.ingest import dedup, parallel, tasks
from auditkit.ingest.csv import write_csv_rounds
from auditkit.ingest.dedup import StoredOverlap
from auditkit.ingest.sources import ingest_paths
from auditkit.simulate import simulate
from auditkit.store import Store
from auditkit.validate import collect

ROOT = Path(__file__).resolve().parents[1]
MAX_LINE = 4000  # so a long line is cheap to write


def _records(game: str, n: int, seed: int) -> list[dict]:
    from auditkit.ingest.jsonl import records_from_table

    table, _faults = simulate(game, n, seed=seed, fault_rate=0.05)
    return list(records_from_table(table, game))


def _lines(records: list[dict]) -> list[bytes]:
    return [json.dumps(r).encode() for r in records]


@pytest.fixture
def overlaps(monkeypatch) -> list[int]:
    """The sizes of the overlaps found at commits (each source then read again), in order."""
    found: list[int] = []
    real = StoredOverlap.__init__

    def init(self, stored):
        found.append(len(stored[0]))
        real(self, stored)

    monkeypatch.setattr(StoredOverlap, "__init__", init)
    return found


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    return make_inputs(tmp_path_factory.mktemp("inputs"))


def make_inputs(folder: Path) -> tuple[Path, Path]:
    """An earlier file (ingested first, for duplicates against the store) and a folder of logs:
    a plain file of 3,000 rounds with bad, blank, long and duplicate lines (within it, against the
    earlier file, with the same and with other content) and no line break at its end; a second
    plain file repeating some of its rounds; a gzip file; the sample CSV with its companion."""
    bac = _records("baccarat", 3400, seed=21)
    earlier = folder / "earlier.jsonl"
    earlier.write_bytes(b"\n".join(_lines(bac[3000:3200])) + b"\n")
    logs = folder / "logs"
    logs.mkdir()
    lines = _lines(bac[:3000])
    changed = dict(bac[10], wagers=[dict(w, net=w["net"] + 5) for w in bac[10]["wagers"]])
    other = dict(bac[3001], wagers=[dict(w, net=w["net"] + 1) for w in bac[3001]["wagers"]])
    extras = {  # line index -> lines inserted before it
        5: [b"{not json", b"", b"   "],
        400: [json.dumps(bac[7]).encode()],            # the same round again: already stored
        900: [json.dumps(changed).encode()],           # same id, other content: quarantined, with its raw
        1500: [b'{"round_id": "x", "game": "baccarat"}', b"x" * (MAX_LINE + 10)],  # too few fields; too long
        2100: [json.dumps(bac[3000]).encode(), json.dumps(other).encode()],  # against the store: same, other
        2999: [b"[1, 2]", b"\x00"],
    }
    out = []
    for i, line in enumerate(lines):
        out += extras.get(i, [])
        out.append(line)
    (logs / "a_big.jsonl").write_bytes(b"\n".join(out))  # no line break at the end
    again = _lines(bac[2500:2600]) + [json.dumps(dict(bac[2600], outcome="tie")).encode()]
    (logs / "b_again.jsonl").write_bytes(b"\n".join(again) + b"\n")
    tcp = _lines(_records("three_card_poker", 800, seed=22))
    with gzip.open(logs / "c_tcp.jsonl.gz", "wb") as fh:
        fh.write(b"\n".join(tcp[:400] + [b"{broken", json.dumps(bac[5]).encode()] + tcp[400:]) + b"\n")
    shutil.copytree(ROOT / "sample_data" / "logs" / "csv", logs / "csv")
    dup = [dict(r, round_id=f"E-{i}") for i, r in enumerate(_records("baccarat", 3, seed=23))]
    write_csv_rounds(dup + [dict(dup[0], outcome="tie")], logs / "csv" / "e_dup.csv")  # its raw line read back
    (logs / "d_same_as_b.jsonl").write_bytes((logs / "b_again.jsonl").read_bytes())  # one content, two names
    return earlier, logs


def _ingest(tmp: Path, inputs: tuple[Path, Path], **kw) -> tuple[Store, object]:
    earlier, logs = inputs
    store = Store(tmp / "store")
    ingest_paths([earlier], store, max_line=MAX_LINE)
    return store, ingest_paths([logs], store, max_line=MAX_LINE, **kw)


def _rounds(store: Store) -> dict[tuple[str, str], pd.DataFrame]:
    out = {}
    for game in store.games():
        for day in store.dates(game):
            t = store.read(game, day).to_pandas()
            out[game, day] = t.sort_values(["source_file", "source_line"], kind="stable").reset_index(drop=True)
    return out


def _manifest(store: Store) -> list[dict]:
    return sorted(({**{k: v for k, v in vars(r).items() if k not in ("ingested_at", "files")},
                    "files": _files(r.files or [])} for r in store.manifest()), key=lambda r: r["sha256"])


def _files(files: list[dict]) -> list[tuple[str, int]]:
    """The files a manifest entry records: the rows of its parts per partition (workers write a part per
    byte range, one process per day and size), its index and quarantine as they are."""
    rows: dict[str, int] = {}
    for f in files:
        key = re.sub(r"/part-[0-9a-f]{16}-[0-9a-f]{12}\.parquet$", "/parts", f["path"])
        rows[key] = rows.get(key, 0) + f["rows"]
    return sorted(rows.items())


def _index(store: Store) -> pd.DataFrame:
    return store.index().to_pandas().sort_values(["source_file", "source_line"]).reset_index(drop=True)


def _entries(report) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "first_ingested_at"} for e in report.files]


def _assert_same(one: Store, other: Store, r1, r2, content_hashes: bool = True) -> None:
    """The same manifest, report, rounds, index (but for its content hashes, unless ``content_hashes``)
    and quarantine."""
    assert _manifest(one) == _manifest(other)
    assert _entries(r1) == _entries(r2) and r1.skipped == r2.skipped and r1.summary() == r2.summary()
    a, b = _rounds(one), _rounds(other)
    assert a.keys() == b.keys()
    for key in a:
        pd.testing.assert_frame_equal(a[key], b[key])
    drop = [] if content_hashes else ["line_hash"]
    pd.testing.assert_frame_equal(_index(one).drop(columns=drop), _index(other).drop(columns=drop))
    pd.testing.assert_frame_equal(one.quarantine(), other.quarantine())  # in order, too
    f1, n1 = collect(one)
    f2, n2 = collect(other)
    assert n1 == n2
    pd.testing.assert_frame_equal(f1, f2)


@pytest.fixture(scope="module")
def serial(tmp_path_factory, inputs):
    return _ingest(tmp_path_factory.mktemp("serial"), inputs, workers=1)


def test_serial_reference_holds_every_case(serial):
    """The inputs do what the parallel test relies on (so that its comparison means something)."""
    store, report = serial
    by_name = {Path(r.path).name: r for r in report.sources}
    big = by_name["a_big.jsonl"]
    assert big.balanced and big.already_stored == 2 and big.blank == 2
    q = store.quarantine()
    big_q = q[q["source_file"].str.endswith("a_big.jsonl")]
    reasons = " | ".join(big_q["reason"])
    assert "duplicate round_id" in reasons and "longer than" in reasons and len(big_q) == big.quarantined == 7
    dup = big_q[big_q["reason"].str.contains("with different content")]
    assert len(dup) == 2 and dup["raw"].str.startswith("{").all()
    assert big_q["line"].is_monotonic_increasing
    (long,) = big_q[big_q["reason"].str.contains("longer than")]["raw"]
    assert set(long) == {"x"}  # the long line's own head, never the lines after it
    assert by_name["b_again.jsonl"].already_stored == 100 and by_name["b_again.jsonl"].quarantined == 1
    assert any("already ingested" in why for _p, why in report.skipped)
    assert by_name["c_tcp.jsonl.gz"].quarantined == 1 and by_name["c_tcp.jsonl.gz"].already_stored == 1
    assert by_name["baccarat_table9.csv"].attached > 0
    assert by_name["e_dup.csv"].quarantined == 1
    (raw,) = q[q["source_file"].str.endswith("e_dup.csv")]["raw"]
    assert raw.startswith("E-0,") and ",tie," in raw


@pytest.mark.parametrize("step", [1 << 16, None])
def test_two_workers_give_the_serial_store(tmp_path, inputs, serial, monkeypatch, step):
    """Byte ranges of 64 KiB (the big file cut into about 30, its lines numbered across them, its
    duplicates and bad lines in several) and the default cut (1 MiB at least: two ranges of the big
    file, a small file whole): the same store, index, quarantine, accounting and findings."""
    if step:
        monkeypatch.setattr(parallel, "MIN_RANGE", step)
        monkeypatch.setattr(parallel, "BLOCK_BYTES", step)
    store, report = _ingest(tmp_path, inputs, workers=2)
    _assert_same(serial[0], store, serial[1], report)


def test_the_command_line_ingests_on_workers(tmp_path, inputs, serial):
    """``auditkit ingest LOGS --store S --workers 2``: the serial store, and the same summary."""
    from auditkit.cli import main

    earlier, logs = inputs
    store = Store(tmp_path / "store")
    ingest_paths([earlier], store, max_line=MAX_LINE)
    assert main(["-q", "ingest", str(logs), "--store", str(store.root), "--workers", "2",
                 "--max-line-bytes", str(MAX_LINE)]) == 0
    assert _manifest(store) == _manifest(serial[0])
    pd.testing.assert_frame_equal(store.quarantine(), serial[0].quarantine())
    assert main(["-q", "ingest", str(logs), "--store", str(store.root), "--engine", "dask"]) == 2


def test_cut_ranges_end_after_line_breaks(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"a\n" + b"b" * 50 + b"\nc\n\nd")
    for step in (1, 2, 3, 7, 60, 100):
        ranges = list(parallel.cut_ranges(path, step))
        assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
        data = path.read_bytes()
        assert all(data[stop - 1:stop] == b"\n" for _start, stop in ranges[:-1])


def test_an_unreadable_file_fails_at_its_turn(tmp_path, inputs, monkeypatch):
    """A file that cannot be read (met by the look-ahead while the one before it is parsed) fails the
    ingest when its turn comes, as in one process: the file before it is committed."""
    from auditkit.ingest.identity import InputError

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(inputs[1] / "b_again.jsonl", logs / "a.jsonl")
    (logs / "b.jsonl").write_text("{}\n")
    import auditkit.ingest.identity as identity

    real = identity.quick_key

    def quick(path: Path) -> str:
        if path.name == "b.jsonl":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(identity, "quick_key", quick)
    store = Store(tmp_path / "store")
    with pytest.raises(InputError, match="cannot read .*b.jsonl: Permission denied"):
        ingest_paths([logs], store, workers=2)
    assert [Path(r.path).name for r in store.manifest()] == ["a.jsonl"]


def test_a_ranges_lines_are_read_again_once_however_many_duplicates_ask(tmp_path, monkeypatch):
    """A re-export whose every line conflicts with the store asks for each line's raw text: the byte
    range is read once for all of them, not once each."""
    path = tmp_path / "log.jsonl"
    lines = [f'{{"n": {i}, "pad": "{"x" * 600}"}}'.encode() for i in range(5000)]  # 3 MB: blocks of 1 MiB
    path.write_bytes(b"\n".join(lines) + b"\n")
    start = len(lines[0]) + 1  # the range starts at line 2 of the file
    reads = []
    real = tasks.read_blocks
    monkeypatch.setattr(tasks, "read_blocks", lambda *a, **k: reads.append(1) or real(*a, **k, block_bytes=4096))
    got = tasks.RangeLines(path, start, path.stat().st_size, MAX_LINE)
    assert [got.raw(n) for n in range(1, 5000, 7)] == lines[1:5000:7]
    assert len(reads) == 1
    assert got.raw(3) == lines[3] and len(reads) == 2  # an earlier line: read from the start again
    with pytest.raises(IndexError):
        got.raw(6000)


def test_a_worker_killed_while_writing_parts_leaves_nothing_visible_and_the_rerun_stores_once(tmp_path):
    """Workers write a big file's parts where they parse its byte ranges; one killed (SIGKILL) while the
    ingest runs fails it (exit 2) with no manifest entry, so none of the parts written is read; the next
    run discards them and stores each round once."""
    import os
    import signal
    import subprocess
    import sys
    import time

    log = tmp_path / "big.jsonl"
    log.write_bytes(b"\n".join(_lines(_records("baccarat", 40_000, seed=31))) + b"\n")
    store = Store(tmp_path / "store")
    cmd = [sys.executable, "-m", "auditkit", "-q", "ingest", str(log), "--store", str(store.root), "--workers", "2"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    parts: list[Path] = []
    deadline = time.monotonic() + 120
    while not parts and proc.poll() is None and time.monotonic() < deadline:
        parts = list((store.root / "rounds").rglob("part-*.parquet")) if (store.root / "rounds").exists() else []
        time.sleep(0.02)
    assert parts, "no part written by a worker before the ingest ended"
    import psutil

    # the workers: forked by the fork server, a child of the ingest (the other, the resource tracker)
    workers = [w for c in psutil.Process(proc.pid).children() if "forkserver" in " ".join(c.cmdline())
               for w in c.children()]
    assert workers
    os.kill(workers[0].pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert store.manifest() == [] and store.count() == 0  # written, but not visible
    assert _main_ingest(log, store) == 0
    (rec,) = store.manifest()
    assert rec.stored == 40_000 and rec.balanced and store.count() == 40_000
    ids = store.index()["round_id"]
    assert len(set(ids.to_pylist())) == len(ids) == 40_000
    listed = {f["path"] for f in rec.files or []}
    assert {p.relative_to(store.root).as_posix() for p in (store.root / "rounds").rglob("*.parquet")} == \
        {p for p in listed if p.startswith("rounds/")}  # the killed run's parts are gone


def _main_ingest(log: Path, store: Store) -> int:
    from auditkit.cli import main

    return main(["-q", "ingest", str(log), "--store", str(store.root), "--workers", "2"])


@pytest.mark.parametrize("limit", [0, None])
def test_a_grown_file_stores_only_its_new_rounds_read_once_when_the_hashes_fit(tmp_path, overlaps, monkeypatch,
                                                                                limit):
    """Every row of the first 3,000 lines is already stored. A store too large to hold (``limit`` 0): the
    workers' parts are dropped at the commit, and the file read again stores the 500 new rounds only.
    One that fits: the first block's stored rounds load the hashes, and the file is read once."""
    if limit is not None:
        monkeypatch.setattr(dedup, "LOAD_LIMIT", limit)
    _small_ranges(monkeypatch)
    records = _records("baccarat", 3_500, seed=41)
    log = tmp_path / "day.jsonl"
    log.write_bytes(b"\n".join(_lines(records[:3_000])) + b"\n")
    store = Store(tmp_path / "store")
    assert ingest_paths([log], store, workers=2).sources[0].stored == 3_000
    with open(log, "ab") as fh:
        fh.write(b"\n".join(_lines(records[3_000:])) + b"\n")
    read_back = []
    real = Store.read_part
    monkeypatch.setattr(Store, "read_part", lambda self, rel, *a: read_back.append(rel) or real(self, rel, *a))
    grown = ingest_paths([log], store, workers=2).sources[0]
    assert (grown.stored, grown.already_stored, grown.lines_read) == (500, 3_000, 3_500) and grown.balanced
    assert overlaps == ([3_000] if limit == 0 else [])
    if limit is None:  # the ranges of old lines only: their parts deleted unread; the one mixed range's read
        assert 1 <= len(read_back) <= 2
    rows = pd.concat([store.read("baccarat", d).to_pandas() for d in store.dates("baccarat")])
    assert rows["round_id"].is_unique and len(rows) == 3_500
    assert (rows["source_line"] > 3_000).sum() == 500  # the appended lines, stored from the second run
    assert len(store.index()) == 3_500
    assert not list(store.root.rglob("*.tmp"))


def _small_ranges(monkeypatch) -> None:
    """Plain files cut into byte ranges of 64 KiB (a 3,000-round log into about 30)."""
    monkeypatch.setattr(parallel, "MIN_RANGE", 1 << 16)
    monkeypatch.setattr(parallel, "BLOCK_BYTES", 1 << 16)


def _temp_folder(tmp_path: Path, monkeypatch) -> Path:
    """An empty $TMPDIR of the test's own (where a parallel ingest makes its notes' folder)."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _big_log(path: Path, n: int = 3_000, seed: int = 51) -> Path:
    path.write_bytes(b"\n".join(_lines(_records("baccarat", n, seed=seed))) + b"\n")
    return path


def _parquet_on_disk(store: Store) -> set[str]:
    return {p.relative_to(store.root).as_posix() for p in (store.root / "rounds").rglob("*.parquet")}


def _listed(store: Store) -> set[str]:
    return {f["path"] for r in store.manifest() for f in r.files or [] if f["path"].startswith("rounds/")}


def test_a_big_file_is_hashed_by_a_worker_while_the_others_parse_it(tmp_path, monkeypatch):
    """A plain file of several byte ranges on two workers: this process never reads it whole (no SHA-256,
    no line count here: a worker does both while the others parse its ranges) and its ranges go out
    before its hash is in; the store is the one process's, under the same SHA-256."""
    import hashlib
    import types
    from concurrent.futures import ProcessPoolExecutor

    from auditkit.ingest import identity

    _small_ranges(monkeypatch)
    log = _big_log(tmp_path / "big.jsonl")
    read_here: list[str] = []
    real_sha = identity.source_sha256  # hash_and_number here hashes through tasks.hashlib (workers: their own)
    monkeypatch.setattr(tasks, "hashlib", types.SimpleNamespace(
        sha256=lambda *a: read_here.append("hash") or hashlib.sha256(*a)))
    monkeypatch.setattr(identity, "source_sha256", lambda p: read_here.append("sha") or real_sha(p))
    submitted: list[str] = []
    real_submit = ProcessPoolExecutor.submit

    def submit(self, fn, *args):
        submitted.append(fn.__name__)
        return real_submit(self, fn, *args)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
    one = Store(tmp_path / "one")
    ingest_paths([log], one, workers=1)
    read_here.clear()
    two = Store(tmp_path / "two")
    report = ingest_paths([log], two, workers=2)
    assert read_here == []
    assert submitted[:3] == ["hash_and_number", "write_range", "write_range"]
    (rec,) = two.manifest()
    assert rec.sha256 == real_sha(log) and rec.lines_read == 3_000 and rec.balanced
    _assert_same(one, two, ingest_paths([log], one, workers=1), ingest_paths([log], two, workers=2))
    assert report.sources[0].stored == 3_000
    assert _parquet_on_disk(two) == _listed(two)


def test_contents_hashed_by_workers_are_stored_once_whatever_their_names(tmp_path, monkeypatch):
    """Two names of one big content in one run, and the same content touched since it was stored (a new
    quick key: hashed again): each is found stored or met by its hash and skipped, its ranges write no
    part, as in one process."""
    import os

    _small_ranges(monkeypatch)
    logs = tmp_path / "logs"
    logs.mkdir()
    a = _big_log(logs / "a.jsonl")
    shutil.copy(a, logs / "b.jsonl")
    _big_log(logs / "c.jsonl", 2_000, seed=52)
    stores = {w: Store(tmp_path / f"w{w}") for w in (1, 2)}
    reports = {w: ingest_paths([logs], s, workers=w) for w, s in stores.items()}
    _assert_same(stores[1], stores[2], reports[1], reports[2])
    assert [why for p, why in reports[2].skipped if p.endswith("b.jsonl")] == [reports[1].skipped[0][1]]
    os.utime(a, ns=(1, 1))  # its quick key changes: read whole again, then found stored
    again = {w: ingest_paths([a], s, workers=w) for w, s in stores.items()}
    assert again[1].skipped == again[2].skipped and len(again[2].skipped) == 1 and not again[2].sources
    assert _parquet_on_disk(stores[2]) == _listed(stores[2])
    assert not list(stores[2].root.rglob("*.tmp"))


def test_a_big_file_gone_before_its_hash_fails_at_its_turn(tmp_path, monkeypatch):
    """A big file deleted once cut into ranges (the worker that hashes it cannot open it): the ingest
    fails at its turn naming it, the file before it committed, nothing of it left in the store."""
    from auditkit.ingest.identity import InputError

    _small_ranges(monkeypatch)
    logs = tmp_path / "logs"
    logs.mkdir()
    _big_log(logs / "a.jsonl", 500)
    gone = _big_log(logs / "b.jsonl")
    real = parallel.cut_ranges

    def cut(path, step):
        yield from real(path, step)
        if path == gone:
            path.unlink()

    monkeypatch.setattr(parallel, "cut_ranges", cut)
    store = Store(tmp_path / "store")
    with pytest.raises(InputError, match="cannot read .*b.jsonl: No such file"):
        ingest_paths([logs], store, workers=2)
    assert [Path(r.path).name for r in store.manifest()] == ["a.jsonl"]
    assert _parquet_on_disk(store) == _listed(store) and not list(store.root.rglob("*.tmp"))


def test_a_range_told_to_write_nothing_before_its_parse_reads_nothing(tmp_path, monkeypatch):
    """A range task whose note says the content is not to be stored ends at once; one whose note comes
    while it parses waits for it, then writes its parts under the hash and numbering the note gives."""
    import threading

    log = _big_log(tmp_path / "x.jsonl", 50)
    note = tmp_path / "1.json"
    note.write_text(json.dumps({"sha": None, "first": []}))
    monkeypatch.setattr(tasks, "read_blocks", lambda *a, **k: pytest.fail("read"))
    size = log.stat().st_size
    store = Store(tmp_path / "store")
    assert tasks.write_range(str(log), 0, size, True, MAX_LINE, store, "x", None, 0, str(note)) == ([], [])
    monkeypatch.undo()
    note.unlink()
    sha = "ab" * 32
    timer = threading.Timer(0.2, lambda: note.write_text(json.dumps({"sha": sha, "first": [1, 11]})))
    timer.start()
    blocks, parts = tasks.write_range(str(log), 0, size, True, MAX_LINE, store, "x", None, 1, str(note))
    timer.join()
    assert sum(b.lines_read for b in blocks) == 50 and blocks[0].lines[0] == 11
    assert parts and all(p["path"].split("/")[-1].startswith("part-" + sha[:16]) for p in parts)
    lines = pd.concat([store.read_part(p["path"]).to_pandas() for p in parts])["source_line"]
    assert sorted(lines) == list(range(11, 61))


def test_hash_and_number_gives_the_files_sha256_and_each_ranges_first_line(tmp_path):
    """Whatever the cut (lines blank, long, one range, many), each range's first line is one more than the
    line breaks before it, and the hash is the SHA-256 of every byte, those past the last range too."""
    import hashlib

    path = tmp_path / "x.jsonl"
    data = b"a\n" + b"b" * 3000 + b"\n\n\nc\n" + b"d\n" * 700 + b"e"
    path.write_bytes(data)
    for step in (1, 2, 5, 100, 1000, 5000, 10_000):
        ranges = list(parallel.cut_ranges(path, step))
        sha, numbered = tasks.hash_and_number(path, ranges)
        assert sha == hashlib.sha256(data).hexdigest()
        assert numbered == [(a, b, data[:a].count(b"\n") + 1) for a, b in ranges]
    with open(path, "ab") as fh:
        fh.write(b"\nf\n")  # grown since it was cut
    assert tasks.hash_and_number(path, ranges)[0] == hashlib.sha256(data + b"\nf\n").hexdigest()


def test_a_note_that_cannot_be_written_fails_the_ingest_naming_it_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    """The note to a big file's range tasks cannot be written (its disk full): exit 2 naming the note and
    the reason, the workers stopped, no manifest entry, no part, no temporary file, no notes folder."""
    import errno

    from auditkit.cli import main

    _small_ranges(monkeypatch)
    log = _big_log(tmp_path / "big.jsonl")
    notes = _temp_folder(tmp_path, monkeypatch)

    def full(said, fh):
        fh.write("{")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tasks.json, "dump", full)
    store = Store(tmp_path / "store")
    assert main(["-q", "ingest", str(log), "--store", str(store.root), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"auditkit-ingest-\d+-\w+/1\.json: No space left on device", err), err
    assert store.manifest() == [] and not list(store.root.rglob("*.parquet")) and not list(store.root.rglob("*.tmp"))
    assert list(notes.iterdir()) == []


def test_the_notes_of_a_killed_parallel_ingest_are_removed_by_the_next(tmp_path, monkeypatch, caplog):
    """A parallel ingest killed by SIGKILL leaves its folder of notes to the range tasks in $TMPDIR, named
    with its process id; the next one that makes its own removes it (saying so) and keeps a live run's."""
    import os
    import subprocess
    import sys

    _small_ranges(monkeypatch)
    log = _big_log(tmp_path / "big.jsonl")
    notes = _temp_folder(tmp_path, monkeypatch)
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)
    (notes / f"auditkit-ingest-{gone}-x1").mkdir()
    (notes / f"auditkit-ingest-{gone}-x1" / "1.json").write_text("{")
    (notes / f"auditkit-ingest-{os.getppid()}-x2").mkdir()  # a live process's
    (notes / "auditkit-ingest-other").mkdir()  # not named as this code names its folders
    store = Store(tmp_path / "store")
    ingest_paths([log], store, max_line=MAX_LINE, workers=2)
    assert sorted(p.name for p in notes.iterdir()) == [f"auditkit-ingest-{os.getppid()}-x2", "auditkit-ingest-other"]
    assert f"removing the notes of an interrupted ingest: {notes / f'auditkit-ingest-{gone}-x1'}" in caplog.text
    assert store.count() == 3_000


def test_a_parallel_ingest_left_before_a_big_files_turn_ends_its_waiting_tasks(tmp_path, monkeypatch):
    """Left without an error before a big file's turn (its hash and ranges out, their note never
    written by a commit): its range tasks are told to write nothing, so closing the pool ends rather
    than waits for them; nothing is written, the notes' folder is removed."""
    import threading

    _small_ranges(monkeypatch)
    log = _big_log(tmp_path / "big.jsonl")
    store = Store(tmp_path / "store")
    par = parallel.ParallelIngest([log], store, workers=2)
    par._fill()
    (src,) = par.ahead
    assert src.hashing is not None and src.tasks
    par.executor.result(src.hashing.future)  # hashed; a range parsed by now waits for its note
    closing = threading.Thread(target=par.__exit__, args=(None, None, None))
    closing.start()
    closing.join(60)
    try:
        assert not closing.is_alive(), "the pool waits for range tasks that wait for a note"
    finally:
        if closing.is_alive():  # release them, so that the test run ends
            tasks._write_note(src.note, {"sha": None, "first": []})
            closing.join()
    assert not (store.root / "rounds").exists() or not list((store.root / "rounds").rglob("*"))
    assert not Path(src.note).parent.exists()


@pytest.mark.parametrize("error, abandon", [(None, False), (OSError(28, "No space left on device"), False),
                                            (parallel.InputError("cannot read x"), False),
                                            (KeyboardInterrupt(), True), ("broken", True), ("note", True)])
def test_after_an_error_the_running_tasks_end_on_their_own_but_an_interrupt_or_a_dead_worker_kills_them(
        tmp_path, monkeypatch, error, abandon):
    """A failed ingest (a full disk, a file that cannot be read) lets the workers' running tasks end, so
    that a part being written deletes its own temporary file (killed mid-write, a worker leaves it); an
    interrupt, a dead worker, or a note that cannot be written (its range tasks would wait for ever)
    kill the workers."""
    from concurrent.futures.process import BrokenProcessPool

    closed = []
    monkeypatch.setattr(parallel._Executor, "close", lambda self, abandon=False: closed.append(abandon))
    par = parallel.ParallelIngest([], Store(tmp_path / "store"), workers=2)
    src = parallel._Source(tmp_path / "x.jsonl", note=str(tmp_path / "notes" / "1.json"))
    par.hashed.append(src)
    if error != "note":
        (tmp_path / "notes").mkdir()
    exc = {"broken": BrokenProcessPool("a worker died"), "note": OSError(28, "No space")}.get(error, error)
    par.__exit__(type(exc) if exc is not None else None, exc, None)
    assert closed == [abandon]
    if error != "note":
        assert json.loads(Path(src.note).read_text()) == {"sha": None, "first": []}


def test_the_workers_always_have_tasks_waiting(tmp_path, monkeypatch):
    """Each result taken frees room for one more task, submitted before the client waits for the next result:
    ``IN_FLIGHT`` tasks per worker are out whenever it waits, until the last ones. (The look-ahead used to
    submit only once every task submitted for the source was taken: a worker then idled until the last of
    them was done.)"""
    _small_ranges(monkeypatch)
    log = _big_log(tmp_path / "big.jsonl")
    out, waits, closing = [0], [], []
    real_submit, real_result, real_close = parallel._Executor.submit, parallel._Executor.result, parallel._Executor.close

    def submit(self, fn, *args):
        out[0] += 1
        return real_submit(self, fn, *args)

    def result(self, future):
        if not closing:  # (the pool's close waits for its futures again)
            waits.append(out[0])
            out[0] -= 1
        return real_result(self, future)

    monkeypatch.setattr(parallel._Executor, "submit", submit)
    monkeypatch.setattr(parallel._Executor, "result", result)
    monkeypatch.setattr(parallel._Executor, "close", lambda self, abandon=False: closing.append(1) or
                        real_close(self, abandon))
    ingest_paths([log], Store(tmp_path / "store"), workers=2)
    limit = parallel.IN_FLIGHT * 2
    assert len(waits) > 2 * limit
    assert waits == [limit] * (len(waits) - limit + 1) + list(range(limit - 1, 0, -1))


def _free_and_again() -> int:
    """In a worker: the page faults of five rounds of a task's allocations freed (a block's 24 MiB of bytes,
    its 200,000 lines), after two rounds to warm up."""
    import resource

    def task() -> int:
        return len((b"\n" * (24 << 20)).split(b"\n", 200_000))

    for _ in range(2):
        task()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        task()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's mallopt")
def test_a_pool_worker_keeps_the_memory_a_task_frees_for_the_next():
    """A task's big bytes (a block) and many small objects (its lines), freed, five times: glibc's defaults
    give the memory back and fault it in again each time (some 40,000 page faults here, 10,000 per 16 MiB
    range of a real ingest); a pool's workers keep it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from auditkit.workers import process_pool, stop_pool

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as plain:
        default = plain.submit(_free_and_again).result(60)
    pool = process_pool(1)
    try:
        worker = pool.submit(_free_and_again).result(60)
    finally:
        stop_pool(pool)
    assert default > 30_000 and worker < 3_000, (default, worker)


def test_the_command_line_keeps_the_memory_a_task_frees(monkeypatch, capsys):
    """The command line's process sets malloc as the pool's workers do (it checks partitions too)."""
    from auditkit import workers
    from auditkit.cli.main import main

    calls = []
    monkeypatch.setattr(workers, "keep_freed_memory", lambda: calls.append(1))
    assert main(["rules"]) == 0
    assert calls == [1]


def test_the_command_line_starts_the_fork_server_first_when_workers_are_asked_for(monkeypatch, tmp_path, capsys):
    """With --workers 2 the fork server starts before the command imports and plans (its imports overlap
    this process's); with one worker, or none asked for, it does not."""
    from auditkit import workers
    from auditkit.cli.main import main

    calls = []
    monkeypatch.setattr(workers, "start_fork_server", lambda: calls.append(1))
    log = tmp_path / "a.jsonl"
    assert main(["-q", "simulate", "baccarat", "--rounds", "50", "--out", str(log)]) == 0
    assert main(["-q", "ingest", str(log), "--store", str(tmp_path / "s1"), "--workers", "1"]) in (0, 1)
    assert calls == []
    assert main(["-q", "ingest", str(log), "--store", str(tmp_path / "s2"), "--workers", "2"]) in (0, 1)
    assert calls == [1]
