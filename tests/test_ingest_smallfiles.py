"""Small files read ahead in batches (auditkit.ingest.smallfiles): the store, index, quarantine, line
accounting, report and findings of reading each file alone, with one parse for many files."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import shutil
from pathlib import Path

import pytest
from test_parallel_ingest import _assert_same, _lines, _records

from auditkit.ingest import blocks, smallfiles
from auditkit.ingest.readers import jsonl as jsonl_reader
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _folder(folder: Path, renamed: bool = False) -> tuple[Path, Path]:
    """An earlier log (ingested first) and a folder of small logs with every case a line can be."""
    bac = _records("baccarat", 400, seed=31)
    earlier = folder / "earlier.jsonl"
    earlier.write_bytes(b"\n".join(_lines(bac[300:320])) + b"\n")
    logs = folder / "logs"
    logs.mkdir()
    for k in range(40):  # five rounds a file, as a table's day
        (logs / f"t-{k:03d}.jsonl").write_bytes(b"\n".join(_lines(bac[5 * k:5 * k + 5])) + b"\n")
    changed = dict(bac[3], wagers=[dict(w, net=w["net"] + 5) for w in bac[3]["wagers"]])
    odd = [b"{not json", b"", b"   ", json.dumps(bac[7]).encode(), json.dumps(changed).encode(),
           json.dumps(bac[305]).encode(), b"[1, 2]", b"\xef\xbb\xbf" + json.dumps(bac[210]).encode(),
           b'{"round_id": "\xff", "game": "baccarat"}', json.dumps(bac[211]).encode(), json.dumps(bac[211]).encode()]
    (logs / "t-020a-odd.jsonl").write_bytes(b"\r\n".join(odd))  # CRLF, no line break at the end
    (logs / "t-020b-empty.jsonl").write_bytes(b"")
    (logs / "t-020c-blank.jsonl").write_bytes(b"\n\n")
    with gzip.open(logs / "t-020d-small.jsonl.gz", "wb") as fh:
        fh.write(b"\n".join(_lines(bac[220:225])) + b"\n")
    (logs / "t-020e-same.jsonl").write_bytes((logs / "t-010.jsonl").read_bytes())  # one content, two names
    (logs / "t-020f-tcp.jsonl").write_bytes(b"\n".join(_lines(_records("three_card_poker", 6, seed=32))) + b"\n")
    (logs / "t-020g-big.jsonl").write_bytes(b"\n".join(_lines(bac[230:300] * 2)) + b"\n")  # past SMALL_BYTES
    shutil.copytree(ROOT / "sample_data" / "logs" / "csv", logs / "t-020h")  # a CSV log and its companion
    if renamed:  # a round id stored normalised (NFC): its source warns of its own
        (logs / "t-030-renamed.jsonl").write_bytes(json.dumps(dict(bac[240], round_id="Cafe\u0301-1")).encode() + b"\n")
    return earlier, logs


@pytest.fixture
def parses(monkeypatch) -> list[int]:
    """The lines of each block parsed, in order."""
    seen: list[int] = []

    def counted(block, **kw):
        seen.append(len(block))
        return real(block, **kw)

    real = blocks.parse_block
    monkeypatch.setattr(smallfiles, "parse_block", counted)
    monkeypatch.setattr(jsonl_reader, "parse_block", counted)
    return seen


def _both(tmp_path: Path, monkeypatch, parses: list[int], renamed: bool = False, **kw):
    earlier, logs = _folder(tmp_path, renamed)
    monkeypatch.setattr(smallfiles, "SMALL_BYTES", 16 << 10)  # the big file is not small
    assert (logs / "t-020g-big.jsonl").stat().st_size > smallfiles.SMALL_BYTES
    out = []
    for name, small in (("alone", 0), ("batched", 16 << 10)):
        monkeypatch.setattr(smallfiles, "SMALL_BYTES", small)
        store = Store(tmp_path / name)
        ingest_paths([earlier], store)
        parses.clear()
        out.append((store, ingest_paths([logs], store, **kw), list(parses)))
    return out


def test_small_files_batched_store_what_each_read_alone_stores(tmp_path, monkeypatch, parses):
    (alone, r1, p1), (batched, r2, p2) = _both(tmp_path, monkeypatch, parses)
    _assert_same(alone, batched, r1, r2)
    by_name = {Path(r.path).name: r for r in r2.sources}
    odd = by_name["t-020a-odd.jsonl"]
    assert odd.balanced and odd.blank == 2 and odd.already_stored == 3 and odd.quarantined == 5
    q = batched.quarantine()
    dup = q[q["reason"].str.contains("with different content")]
    assert list(dup["line"]) == [5] and dup["raw"].iloc[0] == json.dumps(changed_round(tmp_path))
    assert by_name["t-020c-blank.jsonl"].blank == 2 and by_name["t-020b-empty.jsonl"].lines_read == 0
    assert any("already ingested" in why for _p, why in r2.skipped)
    assert len(p1) == 45  # each JSONL file parsed alone ...
    assert len(p2) == 3   # ... or the small ones together (the gzip file and the big one alone)


def changed_round(tmp_path: Path) -> dict:
    bac = _records("baccarat", 400, seed=31)
    return dict(bac[3], wagers=[dict(w, net=w["net"] + 5) for w in bac[3]["wagers"]])


def test_a_batch_with_a_normalised_round_id_is_read_file_by_file(tmp_path, monkeypatch, parses, caplog):
    with caplog.at_level(logging.WARNING, "auditkit.ingest"):
        (alone, r1, _p1), (batched, r2, p2) = _both(tmp_path, monkeypatch, parses, renamed=True)
    _assert_same(alone, batched, r1, r2)
    warned = [r.getMessage() for r in caplog.records if "normalised" in r.getMessage()]
    assert len(warned) == 2 and all("t-030-renamed.jsonl" in w for w in warned)  # once a run, its own source


def test_a_second_run_reads_nothing_ahead(tmp_path, monkeypatch, parses):
    (_alone, _r1, _p1), (batched, _r2, _p2) = _both(tmp_path, monkeypatch, parses)
    parses.clear()
    again = ingest_paths([tmp_path / "logs"], batched)
    assert not again.sources and not parses  # every file known by its quick key: none parsed


def test_a_file_changed_since_it_was_read_ahead_is_read_alone(tmp_path):
    store = Store(tmp_path / "store")
    files = []
    for k, rounds in enumerate(_records("baccarat", 15, seed=33)[i:i + 5] for i in (0, 5, 10)):
        files.append(tmp_path / f"{k}.jsonl")
        files[-1].write_bytes(b"\n".join(_lines(rounds)) + b"\n")
    ahead = smallfiles.SmallFiles(files, store, 1 << 20)
    assert ahead.blocks(files[0], "0" * 64) is None  # its bytes are not those of its SHA-256 now
    ((block, raw),) = ahead.blocks(files[1], hashlib.sha256(files[1].read_bytes()).hexdigest())
    assert list(block.lines) == [1, 2, 3, 4, 5] and block.lines_read == 5 and not block.bad
    assert raw(2) == files[1].read_bytes().split(b"\n")[1]
    assert ahead.blocks(tmp_path / "other.jsonl", "0" * 64) is None


def test_a_batch_is_let_go_once_its_files_are_passed(tmp_path, monkeypatch):
    """A file of a batch never asked for (a content already stored is skipped) does not keep the batch in memory."""
    monkeypatch.setattr(smallfiles, "BATCH_FILES", 2)
    files = []
    for k in range(4):
        files.append(tmp_path / f"{k}.jsonl")
        files[-1].write_bytes(b"\n".join(_lines(_records("baccarat", 20, seed=34)[5 * k:5 * k + 5])) + b"\n")
    ahead = smallfiles.SmallFiles(files, Store(tmp_path / "store"), 1 << 20)
    sha = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    assert ahead.blocks(files[0], sha[0]) is not None and set(ahead.ahead) == {files[1]}  # then files[1] skipped
    assert ahead.blocks(files[2], sha[2]) is not None and set(ahead.ahead) == {files[3]}  # its batch let go
