"""Small parts compacted (issue 41 item 1): a store of many small sources reads one part a partition,
with the same rounds and findings as its small parts; a compacted part that is gone, damaged or not
committed is never read, its small parts are."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from test_live import streams

from auditkit.cli import main
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store, compaction
from auditkit.validate import collect


def _logs(folder: Path, files: int, per_file: int = 3) -> Path:
    """``files`` logs of ``per_file`` simulated rounds each (each table's rounds in order)."""
    folder.mkdir()
    chunks = [(tid, k, lines[k:k + per_file])
              for tid, lines in streams("baccarat", tables=3, seed=9, fault_rate=0.15, pool=3 * files * per_file).items()
              for k in range(0, len(lines) - per_file + 1, per_file)][:files]
    for tid, k, lines in chunks:
        (folder / f"{tid}-{k:05d}.jsonl").write_text("".join(x + "\n" for x in lines), "utf-8")
    return folder


def _found(store: Store) -> Counter:
    findings, checked = collect(store)
    return Counter((f["round_id"], f["rule_id"], round(float(f["discrepancy"]), 2))
                   for f in findings.to_dict("records")), checked


def _ingest(logs: Path, root: Path, locked: bool) -> Store:
    store = Store(root)
    if locked:  # as `auditkit ingest`: the store's sole writer
        with store.lock(5, command="ingest"):
            ingest_paths([logs], store)
    else:
        ingest_paths([logs], store)
    return Store(root)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compaction")
    logs = _logs(tmp / "logs", 40)
    return _ingest(logs, tmp / "compacted", True), _ingest(logs, tmp / "plain", False)


def test_many_small_sources_are_read_from_one_part_a_partition_with_the_same_findings(stores):
    compacted, plain = stores
    partitions = [(g, d) for g in compacted.games() for d in compacted.dates(g)]
    assert partitions and all(len(compacted.parts(g, d)) == 1 for g, d in partitions)
    assert all(compacted.parts(g, d)[0].name.startswith("compact-") for g, d in partitions)
    assert sum(len(plain.parts(g, d)) for g, d in partitions) == 40
    assert compacted.count() == plain.count() == 120
    found, checked = _found(compacted)
    assert checked == 120 and found and (found, checked) == _found(plain)


def _copy(store: Store, to: Path) -> Store:
    import shutil

    shutil.copytree(store.root, to)
    return Store(to)


@pytest.mark.parametrize("damage", ["deleted", "other size", "record unreadable", "no record (a crash)"])
def test_a_compacted_part_gone_damaged_or_uncommitted_is_not_read_its_parts_are(stores, tmp_path, damage):
    compacted, plain = stores
    store = _copy(compacted, tmp_path / "s")
    part = next(iter(store.root.glob("rounds/*/*/compact-*.parquet")))
    record = next(iter(store.root.glob(f"{compaction.FOLDER}/*.json")))
    if damage == "deleted":
        part.unlink()
    elif damage == "other size":
        part.write_bytes(part.read_bytes() + b"x")
    elif damage == "record unreadable":
        record.write_text("{not json")
    else:
        record.unlink()
    store = Store(store.root)
    g, d = next((g, d) for g in store.games() for d in store.dates(g))
    assert not any(p.name.startswith("compact-") for p in store.parts(g, d))
    assert store.count() == 120 and _found(store) == _found(plain)


def test_fewer_small_parts_than_the_minimum_are_not_compacted(tmp_path):
    store = _ingest(_logs(tmp_path / "logs", compaction.MIN_PARTS - 1), tmp_path / "s", True)
    assert not list(store.root.glob("rounds/*/*/compact-*")) and not (store.root / compaction.FOLDER).exists()
    assert store.count() == 3 * (compaction.MIN_PARTS - 1)


def test_parts_written_by_ingest_workers_are_compacted_too(stores, tmp_path):
    """The parts a worker process wrote (adopted by the committing process) are read back and compacted."""
    _compacted, plain = stores
    store = Store(tmp_path / "s")
    with store.lock(5, command="ingest"):
        report = ingest_paths([_logs(tmp_path / "logs", 40)], store, workers=2)
    assert len(report.sources) == 40
    store = Store(tmp_path / "s")
    assert all(len(store.parts(g, d)) == 1 for g in store.games() for d in store.dates(g))
    assert store.count() == 120 and _found(store) == _found(plain)


def test_the_small_parts_held_are_bounded_and_written_as_they_reach_the_bound(stores, tmp_path, monkeypatch):
    """At most HELD_PARTS small parts are held (a five-round table costs ~30 KiB of columns: 20,000 of them
    peaked ingest at 777 MiB); past it they are written, a compacted part each time."""
    _compacted, plain = stores
    monkeypatch.setattr(compaction, "HELD_PARTS", 10)
    store = _ingest(_logs(tmp_path / "logs", 40), tmp_path / "s", True)
    g, d = next((g, d) for g in store.games() for d in store.dates(g))
    assert len(store.parts(g, d)) == 1 and all(p.name.startswith("compact-") for p in store.parts(g, d))
    assert store.count() == 120 and _found(store) == _found(plain)


@pytest.mark.parametrize("small_rows", [None, 20])
def test_a_compacted_part_still_small_is_compacted_again_with_the_next_parts_of_its_partition(
        stores, tmp_path, monkeypatch, capsys, small_rows):
    """Written as the held parts reach their bound, a partition's compacted parts would be one a compaction
    (111 files to read at 20,000 sources, not 24); one of fewer than SMALL_ROWS rows is written again with the
    next ones (its record and part removed), so a partition is read from few parts, each but the last large."""
    _compacted, plain = stores
    monkeypatch.setattr(compaction, "HELD_PARTS", 10)
    if small_rows is not None:
        monkeypatch.setattr(compaction, "SMALL_ROWS", small_rows)
    store = _ingest(_logs(tmp_path / "logs", 40), tmp_path / "s", True)
    records = compaction.records(store)
    assert {p.relative_to(store.root).as_posix() for p in store.root.glob("rounds/*/*/compact-*")} == \
        {r["path"] for r in records}  # no part of a record removed is left
    for g in store.games():
        for d in store.dates(g):
            parts = store.parts(g, d)
            assert all(p.name.startswith("compact-") for p in parts)
            rows = sorted(r["rows"] for r in records if r["partition"] == [g, d])
            assert len(parts) == len(rows) and all(n >= compaction.SMALL_ROWS for n in rows[:-1])
            assert len(parts) == 1 if small_rows is None else len(parts) > 1
    assert store.count() == 120 and _found(store) == _found(plain)
    capsys.readouterr()
    assert main(["verify", str(store.root)]) == 0, capsys.readouterr().out


def test_a_compacted_store_verifies(stores, capsys):
    """A compacted part is checked as its record lists it, not reported as unlisted (it was: exit 1)."""
    compacted, _plain = stores
    capsys.readouterr()
    assert main(["verify", str(compacted.root)]) == 0, capsys.readouterr().out
    assert "store agrees with its manifest" in capsys.readouterr().out


def test_the_small_parts_a_compacted_part_replaces_are_not_read_nor_their_sizes_checked(stores, tmp_path, capsys):
    """A reader checks the size of each part it reads: the compacted part, not the thousands of small parts it
    replaces (a ``stat`` each: 20,000 at 20,000 sources). A small part gone is still a damaged store; one of
    another size is reported by ``auditkit verify``, which checks every file."""
    compacted, plain = stores
    store = _copy(compacted, tmp_path / "s")
    small = sorted(store.root.glob("rounds/*/*/part-*.parquet"))
    small[0].write_bytes(small[0].read_bytes() + b"x")
    store = Store(store.root)
    assert store.count() == 120 and _found(store) == _found(plain)
    capsys.readouterr()
    assert main(["verify", str(store.root)]) == 1 and small[0].name in capsys.readouterr().out
    small[1].unlink()
    with pytest.raises(OSError, match=f"listed part .*{small[1].name} is missing"):
        Store(store.root).count()
