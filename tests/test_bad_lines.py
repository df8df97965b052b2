"""Bad lines get a clear, bounded reason and lose nothing (issue: reliability, items 6 and 9).

Each test here failed before the bulk reader's change: a 1.2 GB line was held
in memory whole; "at at column"; a NUL line was "not valid JSON"; reasons were
kept whole; a key named twice took its last value; ``10`` and ``10.0`` were
different content; round ids differing only by Unicode normalisation or an edge
space were two rounds, without a word.
"""

from __future__ import annotations

import gzip
import json
import logging
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from conftest import example_records

from auditkit.ingest.jsonl import MAX_LINE
from auditkit.ingest.sources import ingest_paths
from auditkit.ingest.writer import REASON_LIMIT
from auditkit.store import Store


def _record(**changes) -> dict:
    rec = dict(next(r for r in example_records("baccarat") if r["game"] == "baccarat"))
    rec.update(changes)
    return rec


def _ingest(tmp_path: Path, *lines: bytes | str, name: str = "log.jsonl", store: str = "store", **kw):
    path = tmp_path / name
    path.write_bytes(b"\n".join(x.encode() if isinstance(x, str) else x for x in lines) + b"\n")
    st = Store(tmp_path / store)
    report = ingest_paths([path], st, **kw)
    return report, st


def _reasons(store: Store) -> dict[int, str]:
    q = store.quarantine()
    return dict(zip(q["line"], q["reason"], strict=True))


def test_a_line_longer_than_the_limit_is_quarantined_without_being_held(tmp_path):
    """A 1.2 MB gzip file of one 1.2 GB line: read in bounded memory, one entry, the next line stored."""
    path = tmp_path / "huge.jsonl.gz"
    line = json.dumps(_record(round_id="after")).encode()
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(b'{"round_id": "big", "pad": "')
        chunk = b"x" * (1 << 24)
        for _ in range(72):  # 1.2 GB
            fh.write(chunk)
        fh.write(b'"}\n' + line + b"\n")
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            "from auditkit.ingest.sources import ingest_paths\nfrom auditkit.store import Store\n"
            f"r = ingest_paths([{str(path)!r}], Store({str(tmp_path / 'store')!r}))\n"
            # VmHWM, the peak of this program's own memory: ru_maxrss would count the pytest worker's
            # memory too (Linux carries a process's peak over its exec, and subprocess may fork)
            "peak = next(int(s.split()[1]) for s in open('/proc/self/status') if s.startswith('VmHWM:'))\n"
            "print(r.total('stored'), r.total('quarantined'), peak)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    stored, quarantined, peak_kib = map(int, out)
    assert (stored, quarantined) == (1, 1)
    assert peak_kib < 400 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB for a 1.2 GB line (4.5 GB before)"
    (reason,) = _reasons(Store(tmp_path / "store")).values()
    assert reason == f"line longer than {MAX_LINE:,} bytes"
    raw = Store(tmp_path / "store").quarantine()["raw"][0]
    assert raw.startswith('{"round_id": "big"') and len(raw) < 70_000  # the head kept, not the line


def test_json_reasons_say_at_column_once(tmp_path):
    _, store = _ingest(tmp_path, '{"round_id": "a\x01b"}', '{"round_id": }')
    reasons = _reasons(store)
    assert all("at at" not in r for r in reasons.values()), reasons
    assert reasons[1].startswith("not valid JSON: Invalid control character at column")


def test_a_line_of_nul_bytes_is_named_as_such(tmp_path):
    _, store = _ingest(tmp_path, json.dumps(_record()), b"\x00" * 40)
    assert _reasons(store) == {2: "line of NUL bytes (a file padded with zeros?)"}


def test_reasons_are_cut_to_a_fixed_length_and_the_raw_line_kept(tmp_path):
    game = "g" * 10_000
    _, store = _ingest(tmp_path, json.dumps(_record(game=game)))
    q = store.quarantine()
    reason = q["reason"][0]
    assert reason.startswith("unknown game 'ggg") and len(reason) < REASON_LIMIT + 40
    assert reason.endswith("more characters]")
    assert game in q["raw"][0]


def test_a_key_named_twice_is_a_bad_record_wherever_it_is(tmp_path):
    good = json.dumps(_record())
    twice = '{"outcome": "banker", ' + good[1:]
    unread = '{"note": 1, "note": 2, ' + json.dumps(_record(round_id="other"))[1:]
    nested = good.replace('"seat": 1,', '"seat": 1, "seat": 2,', 1)
    assert nested != good
    report, store = _ingest(tmp_path, twice, unread, nested, json.dumps(_record(round_id="fine")))
    assert report.total("stored") == 1
    assert _reasons(store) == {1: 'key "outcome" named twice in one object (a duplicate JSON key)',
                               2: 'key "note" named twice in one object (a duplicate JSON key)',
                               3: 'key "seat" named twice in one object (a duplicate JSON key)'}


def test_the_same_round_written_with_10_or_10_0_is_the_same_content(tmp_path):
    rec = _record()
    first = json.dumps(rec)
    again = json.dumps(dict(reversed(list(rec.items())))).replace(': 0,', ': 0.0,').replace(': 5,', ': 5.0,')
    assert again != first
    _ingest(tmp_path, first, name="a.jsonl")
    report, _ = _ingest(tmp_path, again, name="b.jsonl")
    assert (report.total("stored"), report.total("already_stored"), report.total("quarantined")) == (0, 1, 0)


def test_round_ids_are_normalised_with_a_warning(tmp_path, caplog):
    nfc = _record(round_id="Caf\u00e9-1")
    nfd = _record(round_id="Cafe\u0301-1 \u200b")
    with caplog.at_level(logging.WARNING, logger="auditkit.ingest"):
        report, store = _ingest(tmp_path, json.dumps(nfc), json.dumps(nfd))
    assert (report.total("stored"), report.total("already_stored")) == (1, 1)
    assert "round ids normalised" in caplog.text
    assert store.index()["round_id"].to_pylist() == ["Caf\u00e9-1"]


def test_stores_indexed_before_the_hash_columns_still_find_their_duplicates(tmp_path):
    """An index file of an earlier version (BLAKE2b id hashes, hashes of the JSON text) is read again."""
    import hashlib

    rec = _record()
    _ingest(tmp_path, json.dumps(rec), json.dumps(_record(round_id="second")), name="a.jsonl")
    store = Store(tmp_path / "store")
    (index_file,) = (tmp_path / "store" / "_index").glob("*.parquet")
    old = pq.read_table(index_file)
    blake = [int.from_bytes(hashlib.blake2b(r.encode(), digest_size=8).digest(), "little")
             for r in old["round_id"].to_pylist()]
    legacy = pa.table({"id_hash": pa.array(blake, pa.uint64()), "line_hash": pa.array([1, 2], pa.uint64()),
                       **{c: old[c] for c in ("round_id", "source_file", "source_line")}})
    pq.write_table(legacy, index_file)  # no version in its metadata
    for entry in (tmp_path / "store" / "_manifest").glob("*.json"):  # nor files recorded in its manifest
        entry.write_text(json.dumps({k: v for k, v in json.loads(entry.read_text()).items() if k != "files"}))
    same = json.dumps(dict(reversed(list(rec.items()))))
    other = json.dumps(_record(outcome="tie" if rec["outcome"] != "tie" else "banker"))
    report, store = _ingest(tmp_path, same, other, name="b.jsonl")
    assert (report.total("stored"), report.total("already_stored"), report.total("quarantined")) == (0, 1, 1)
    assert "with different content" in _reasons(store)[2]


def test_a_block_whose_optional_text_is_all_absent_is_stored(tmp_path):
    rows = [json.dumps({k: v for k, v in _record(round_id=f"r{i}").items() if k != "dealer_id"}) for i in range(3)]
    report, store = _ingest(tmp_path, *rows, rows[0])
    assert (report.total("stored"), report.total("already_stored")) == (3, 1)


def test_the_line_limit_is_set_on_the_command_line(tmp_path):
    from auditkit.cli import main

    (tmp_path / "log.jsonl").write_text(json.dumps(_record()) + "\n" + json.dumps(_record(round_id="x" * 5000)) + "\n")
    assert main(["-q", "ingest", str(tmp_path / "log.jsonl"), "--store", str(tmp_path / "s"),
                 "--max-line-bytes", "4096"]) == 0
    assert _reasons(Store(tmp_path / "s")) == {2: "line longer than 4,096 bytes"}


def test_a_too_long_lines_kept_head_stops_at_its_line_break(tmp_path):
    """A line over the limit but shorter than the head kept: its entry holds that line, not the next ones."""
    long_line = json.dumps(_record(round_id="x" * 5000))
    report, store = _ingest(tmp_path, long_line, json.dumps(_record(round_id="after")), max_line=4096)
    assert report.total("stored") == 1
    assert list(store.quarantine()["raw"]) == [long_line]
