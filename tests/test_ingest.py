"""Loaders: every kind of bad input gets a clear reason, and every line is accounted for."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from auditkit.ingest.identity import InputError
from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store

GOOD = {
    "round_id": "R1", "game": "baccarat", "table_id": "T1", "started_at": "2025-06-02T09:21:45-05:00",
    "shoe_id": "S1", "round_seq": 1, "player_cards": ["Ac", "Jd", "4s"], "banker_cards": ["Jd", "5c", "5h"],
    "outcome": "player", "wagers": [{"seat": 1, "bet": "player", "amount": 100, "net": 100}],
}


def rec(**changes) -> dict:
    r = json.loads(json.dumps(GOOD))
    for k, v in changes.items():
        if v is None:
            r.pop(k, None)
        else:
            r[k] = v
    return r


def line(r: dict) -> str:
    return json.dumps(r)


def ingest_text(tmp_path: Path, text: str | bytes, name: str = "log.jsonl"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    store = Store(tmp_path / "store")
    report = ingest_paths([path], store)
    return report, store


def reasons(store: Store) -> list[tuple[int, str]]:
    q = store.quarantine().sort_values("line")
    return list(zip(q["line"], q["reason"], strict=True))


def test_good_lines_are_stored_and_counted(tmp_path):
    text = "\n".join(line(rec(round_id=f"R{i}", round_seq=i)) for i in range(1, 4))  # no final newline
    report, store = ingest_text(tmp_path, text + "\n\n")
    src = report.sources[0]
    assert (src.lines_read, src.stored, src.quarantined, src.blank) == (4, 3, 0, 1)
    assert src.balanced and store.count() == 3


@pytest.mark.parametrize("bad, reason", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (line(rec(player_cards=["Ac", "Zz"])), "unknown card 'Zz'"),
    (line(rec(player_cards=["Ac", 10])), "card 10 is not a string"),
    (line(rec(table_id=None)), "missing required field table_id"),
    (line(rec(round_seq="3")), "round_seq must be an integer"),
    (line(rec(round_seq=0)), "out of range"),
    (line(rec(game="roulette")), "unknown game 'roulette'"),
    (line(rec(started_at="yesterday")), "not an ISO 8601 timestamp"),
    (line(rec(started_at="2025-06-02T09:21:45")), "has no UTC offset"),
    (line(rec(wagers=[{"seat": 1, "bet": "player", "amount": -5, "net": 0}])), "negative amount"),
    (line(rec(wagers=[{"seat": 1, "bet": "player", "amount": "5", "net": 0}])), "must be a number"),
    (line(rec(outcome="dragon")), "outcome 'dragon'"),
    (line(rec(status="paused")), "status 'paused'"),
    (line(rec(shoe_id=None)), "missing required field shoe_id"),
])
def test_bad_records_are_quarantined_with_reason(tmp_path, bad, reason):
    text = line(rec(round_id="OK1")) + "\n" + bad + "\n" + line(rec(round_id="OK2", round_seq=2)) + "\n"
    report, store = ingest_text(tmp_path, text)
    src = report.sources[0]
    assert (src.lines_read, src.stored, src.quarantined) == (3, 2, 1) and src.balanced
    [(n, why)] = reasons(store)
    assert n == 2 and reason in why
    q = store.quarantine()
    assert q["raw"].iloc[0] == bad and q["source_file"].iloc[0].endswith("log.jsonl")


def test_rule_breaking_rounds_are_stored_not_quarantined(tmp_path):
    odd = rec(player_cards=["Ac", "2d", "3h", "4s"], wagers=[{"seat": 1, "bet": "player", "amount": 0, "net": 0}])
    report, store = ingest_text(tmp_path, line(odd) + "\n")
    assert report.sources[0].stored == 1 and report.sources[0].quarantined == 0


def test_cards_are_case_insensitive_and_accept_10(tmp_path):
    r = rec(player_cards=["ac", "10D", "4S"])
    report, store = ingest_text(tmp_path, line(r) + "\n")
    t = store.read("baccarat", "2025-06-02", columns=["player_cards"])
    assert t["player_cards"].to_pylist() == [[48, 33, 11]]


def test_non_utf8_line(tmp_path):
    text = line(rec(round_id="A")).encode() + b"\n" + b'{"round_id": "\xff"}\n'
    report, store = ingest_text(tmp_path, text)
    [(n, why)] = reasons(store)
    assert n == 2 and "not UTF-8" in why and report.sources[0].balanced


def test_duplicate_round_id_in_one_file(tmp_path):
    a = rec(round_id="DUP")
    b = rec(round_id="DUP", outcome="banker")
    report, store = ingest_text(tmp_path, line(a) + "\n" + line(b) + "\n")
    [(n, why)] = reasons(store)
    assert n == 2 and "duplicate round_id 'DUP'" in why and "line 1" in why
    assert store.count() == 1


def test_duplicate_round_id_across_files_and_identical_lines(tmp_path):
    store = Store(tmp_path / "store")
    first = tmp_path / "day1.jsonl"
    first.write_text(line(rec(round_id="X1")) + "\n")
    ingest_paths([first], store)
    second = tmp_path / "day1-appended.jsonl"  # the same log with more rounds appended, and one conflicting id
    second.write_text(line(rec(round_id="X1")) + "\n" + line(rec(round_id="X2", round_seq=2)) + "\n"
                      + line(rec(round_id="X1", outcome="tie")) + "\n")
    src = ingest_paths([second], store).sources[0]
    assert (src.stored, src.already_stored, src.quarantined) == (1, 1, 1) and src.balanced
    q = store.quarantine()
    assert "first stored from" in q["reason"].iloc[0] and "day1.jsonl" in q["reason"].iloc[0]
    assert store.count() == 2


def test_same_content_twice_is_skipped_even_renamed(tmp_path):
    store = Store(tmp_path / "store")
    p = tmp_path / "a.jsonl"
    p.write_text(line(rec()) + "\n")
    assert len(ingest_paths([p], store).sources) == 1
    p.rename(tmp_path / "b.jsonl")
    report = ingest_paths([tmp_path / "b.jsonl"], store)
    assert not report.sources and "already ingested" in report.skipped[0][1]
    assert store.count() == 1


def test_gzip_plain_and_truncated(tmp_path):
    lines = "".join(line(rec(round_id=f"G{i}", round_seq=i)) + "\n" for i in range(1, 200))
    data = gzip.compress(lines.encode())
    (tmp_path / "ok.jsonl.gz").write_bytes(data)
    store = Store(tmp_path / "s1")
    src = ingest_paths([tmp_path / "ok.jsonl.gz"], store).sources[0]
    assert src.stored == 199 and src.balanced

    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    store = Store(tmp_path / "s2")
    src = ingest_paths([tmp_path / "cut.jsonl.gz"], store).sources[0]
    q = store.quarantine()
    assert src.quarantined >= 1 and "truncated gzip" in q["reason"].iloc[-1]
    assert src.balanced and src.stored + src.quarantined == src.lines_read


def test_gzip_corrupt(tmp_path):
    data = bytearray(gzip.compress(("\n".join(line(rec(round_id=f"C{i}", round_seq=i)) for i in range(1, 50))).encode()))
    data[30:60] = b"\x00" * 30
    (tmp_path / "bad.jsonl.gz").write_bytes(bytes(data))
    store = Store(tmp_path / "s")
    src = ingest_paths([tmp_path / "bad.jsonl.gz"], store).sources[0]
    q = store.quarantine()
    assert "gzip" in q["reason"].iloc[-1] and src.balanced


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        ingest_paths([tmp_path / "nope.jsonl"], Store(tmp_path / "s"))


def test_crashed_ingest_leaves_nothing_visible(tmp_path, monkeypatch):
    store = Store(tmp_path / "store")
    p = tmp_path / "a.jsonl"
    p.write_text("".join(line(rec(round_id=f"K{i}", round_seq=i)) + "\n" for i in range(1, 6)))

    def boom(record, files=()):
        raise KeyboardInterrupt("killed before the manifest")

    monkeypatch.setattr(store, "commit_source", boom)
    with pytest.raises(KeyboardInterrupt):
        ingest_paths([p], store)
    assert store.count() == 0 and store.dates("baccarat") == []  # parts exist but are not committed
    monkeypatch.undo()
    src = ingest_paths([p], Store(tmp_path / "store")).sources[0]
    assert src.stored == 5
    assert Store(tmp_path / "store").count() == 5
    parts = list((tmp_path / "store" / "rounds").rglob("*.parquet"))
    assert len(parts) == 1  # the leftover part was discarded


def test_partition_names_never_come_from_table_id(tmp_path):
    r = rec(table_id="../../etc/passwd", round_id="P1")
    report, store = ingest_text(tmp_path, line(r) + "\n")
    files = [p.relative_to(tmp_path / "store").as_posix() for p in (tmp_path / "store").rglob("*.parquet")]
    assert all(".." not in f and "passwd" not in f for f in files)


def test_csv_layout_with_companions(tmp_path):
    (tmp_path / "r.csv").write_text(
        "round_id,game,table_id,started_at,dealer_id,shoe_id,round_seq,player_cards,banker_cards,outcome,"
        "announced_player,announced_banker,cut_card\n"
        "C1,baccarat,T1,2025-06-02T09:00:00-05:00,D1,S1,1,Ac Jd 4s,Jd 5c 5h,player,1,5,false\n"
        "C2,baccarat,T1,2025-06-02T09:01:00-05:00,D1,S1,2,9c Qh,4c 9h,player,,,\n"
        "C3,baccarat,T1,2025-06-02T09:02:00-05:00,D1,S1,3,9c Xx,4c 9h,player,,,\n")
    (tmp_path / "r.wagers.csv").write_text(
        "round_id,seat,bet,amount,net\nC1,1,player,100,100\nC1,2,banker,50,-50\nC2,3,player,10,10\nZZ,1,tie,5,-5\n")
    store = Store(tmp_path / "store")
    report = ingest_paths([tmp_path], store)
    src = report.sources[0]
    assert (src.stored, src.quarantined, src.attached) == (2, 2, 3) and src.balanced
    reasons_ = sorted(store.quarantine()["reason"])
    assert any("unknown card 'Xx'" in r for r in reasons_) and any("'ZZ'" in r for r in reasons_)
    t = store.read("baccarat", "2025-06-02").to_pylist()
    c1 = next(r for r in t if r["round_id"] == "C1")
    assert c1["announced_player"] == 1 and len(c1["wagers"]) == 2 and c1["cut_card"] is False


def test_folder_scan_skips_non_log_csv(tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    (tmp_path / "x.jsonl").write_text(line(rec()) + "\n")
    report = ingest_paths([tmp_path], Store(tmp_path / "store"))
    assert len(report.sources) == 1 and "not a round log" in report.skipped[0][1]


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "three_card_poker", "pai_gow_poker"])
def test_csv_layout_round_trips_every_game(tmp_path, game):
    """The worked examples written in the CSV layout ingest to exactly the rows the JSONL gives."""
    from conftest import example_records

    from auditkit.ingest.csv import write_csv_rounds

    records = example_records(game)
    (tmp_path / "j").mkdir()
    (tmp_path / "c").mkdir()
    (tmp_path / "j" / "x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    write_csv_rounds(records, tmp_path / "c" / "x.csv")
    a, b = Store(tmp_path / "sa"), Store(tmp_path / "sb")
    ra = ingest_paths([tmp_path / "j"], a).sources[0]
    rb = ingest_paths([tmp_path / "c"], b).sources[0]
    assert ra.stored == rb.stored == len(records) and rb.quarantined == 0 and rb.balanced
    drop = ["source_file", "source_line"]
    for d in a.dates(game):
        ta = a.read(game, d).drop_columns(drop).sort_by("round_id")
        tb = b.read(game, d).drop_columns(drop).sort_by("round_id")
        assert ta.equals(tb)


def test_amount_beyond_ten_trillion_is_a_bad_record(tmp_path):
    r = rec(wagers=[{"seat": 1, "bet": "player", "amount": 1e300, "net": 0}])
    report, store = ingest_text(tmp_path, line(r) + "\n")
    [(n, why)] = reasons(store)
    assert "out of range" in why and report.sources[0].stored == 0


def test_companion_without_its_main_file_is_reported(tmp_path):
    (tmp_path / "lost.wagers.csv").write_text("round_id,seat,bet,amount,net\nR1,1,player,10,10\n")
    (tmp_path / "x.jsonl").write_text(line(rec()) + "\n")
    report = ingest_paths([tmp_path], Store(tmp_path / "store"))
    assert len(report.sources) == 1
    assert any("lost.wagers.csv" in p and "without its main file" in why for p, why in report.skipped)


# ---- the quick key: a file already ingested is known without reading it whole (issue 28) ----------------
def _big_log(path: Path, rounds: int) -> None:
    """A log of ``rounds`` rounds, over 2 MiB for 12,000 or more (so its middle is outside the quick key)."""
    pad = "x" * 150
    path.write_text("".join(line(rec(round_id=f"Q{i}", round_seq=i, dealer_id=f"D{pad}")) + "\n"
                            for i in range(1, rounds + 1)))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_already_ingested_is_skipped_on_its_quick_key_without_a_full_read(tmp_path, monkeypatch, workers):
    import auditkit.ingest.identity as identity

    store = Store(tmp_path / "store")
    p = tmp_path / "big.jsonl"
    _big_log(p, 12_000)
    assert p.stat().st_size > 2 * identity.QUICK_BYTES
    first = ingest_paths([p], store, workers=workers).sources[0]
    assert first.quick == identity.quick_key(p)
    assert store.source(first.sha256).quick == first.quick  # kept in the manifest entry

    def no_full_read(path):
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(identity, "source_sha256", no_full_read)
    again = ingest_paths([p], store, workers=workers)
    assert not again.sources and "already ingested" in again.skipped[0][1] and store.count() == 12_000


def test_a_changed_file_or_a_copy_is_hashed_whole(tmp_path):
    from auditkit.ingest.identity import quick_key, source_sha256

    store = Store(tmp_path / "store")
    p = tmp_path / "big.jsonl"
    _big_log(p, 12_000)
    ingest_paths([p], store)
    copy = tmp_path / "copy" / "big.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(p.read_bytes())  # same bytes, another time: its quick key differs, its SHA-256 does not
    assert quick_key(copy) != quick_key(p)
    report = ingest_paths([copy], store)
    assert not report.sources and "already ingested" in report.skipped[0][1]
    # an edit in the middle with a new time: a new source (its rounds already stored, one changed)
    data = bytearray(p.read_bytes())
    at = data.index(b'"round_id": "Q6000"')
    data[at:at + 19] = b'"round_id": "Z6000"'
    p.write_bytes(bytes(data))
    src = ingest_paths([p], store).sources[0]
    assert src.sha256 == source_sha256(p) and (src.stored, src.already_stored) == (1, 11_999)


def test_the_quick_key_covers_a_csv_source_s_companions(tmp_path):
    from auditkit.ingest.identity import quick_key

    main_file = tmp_path / "r.csv"
    main_file.write_text("round_id,game,table_id,started_at\n")
    hands = tmp_path / "r.hands.csv"
    hands.write_text("round_id,seat\n")
    before = quick_key(main_file)
    hands.write_text("round_id,seat\nR1,1\n")
    assert quick_key(main_file) != before


def test_a_manifest_entry_without_a_quick_key_is_found_by_its_full_hash(tmp_path):
    import json as _json

    store = Store(tmp_path / "store")
    p = tmp_path / "a.jsonl"
    p.write_text(line(rec()) + "\n")
    sha = ingest_paths([p], store).sources[0].sha256
    entry = tmp_path / "store" / "_manifest" / f"{sha}.json"
    old = _json.loads(entry.read_text())
    old.pop("quick")  # as an entry written before quick keys
    entry.write_text(_json.dumps(old))
    report = ingest_paths([p], store)
    assert not report.sources and "already ingested" in report.skipped[0][1] and store.count() == 1


def test_a_quick_key_met_before_is_answered_without_listing_the_manifest(tmp_path, monkeypatch):
    from auditkit.ingest.identity import quick_key

    store = Store(tmp_path / "store")
    paths = []
    for i in range(3):
        p = tmp_path / f"day{i}.jsonl"
        p.write_text(line(rec(round_id=f"K{i}")) + "\n")
        paths.append(p)
    ingest_paths(paths, store)  # each file's key looked up (a miss each), then committed through this store
    keys = [quick_key(p) for p in paths]
    listings = []
    real = store._files.files
    monkeypatch.setattr(store._files, "files", lambda pattern: listings.append(pattern) or real(pattern))
    assert all(store.source_by_quick_key(k) is not None for k in keys)
    assert listings == []
    assert store.source_by_quick_key("not a key") is None and listings == []  # a miss too: read once (issue 41)
    other = Store(tmp_path / "store")  # another command: reads the manifest once, at its first lookup
    assert other.source_by_quick_key(keys[0]).sha256 == store.source_by_quick_key(keys[0]).sha256


def _counted(store: Store, monkeypatch) -> dict[str, int]:
    """Counts of the store's listings and of the manifest entries it reads."""
    counts = {"listings": 0, "entries read": 0}
    files, entry = store._files.files, store._source_record

    def listing(pattern):
        counts["listings"] += 1
        return files(pattern)

    def read(rel):
        counts["entries read"] += 1
        return entry(rel)

    monkeypatch.setattr(store._files, "files", listing)
    monkeypatch.setattr(store, "_source_record", read)
    return counts


def _small_logs(folder, n: int, first: int = 0) -> list:
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(first, first + n):
        p = folder / f"t{i:05d}.jsonl"
        p.write_text(line(rec(round_id=f"M{i}-1")) + "\n" + line(rec(round_id=f"M{i}-2")) + "\n")
        paths.append(p)
    return paths


@pytest.mark.parametrize("stored", [0, 30])
def test_ingest_of_many_files_lists_the_store_and_reads_its_manifest_once(tmp_path, monkeypatch, stored):
    """Issue 41 item 1: the manifest was read again for every file (its quick-key lookup) and every partition
    listed for every file (the leftovers of a killed run): N files cost N² entry reads. Now the listings do
    not grow with the files ingested, and each entry already in the store is read at most twice."""
    store = Store(tmp_path / "store")
    if stored:
        ingest_paths(_small_logs(tmp_path / "before", stored), store)
    runs = {}
    for n, first in ((5, 1000), (40, 2000)):
        command = Store(tmp_path / "store")  # a new command, as `auditkit ingest` under the lock
        counts = _counted(command, monkeypatch)
        with command.lock(5, command="ingest"):
            report = ingest_paths(_small_logs(tmp_path / f"logs{n}", n, first), command)
        assert len(report.sources) == n and report.total("stored") == 2 * n
        runs[n] = counts
    assert runs[40]["listings"] == runs[5]["listings"]
    # each entry read at most twice a command (the quick keys, the duplicate index's files), whatever the files
    assert runs[5]["entries read"] <= 2 * stored and runs[40]["entries read"] <= 2 * (stored + 5)
    again = ingest_paths(_small_logs(tmp_path / "logs40", 40, 2000), Store(tmp_path / "store"))
    assert not again.sources and len(again.skipped) == 40  # known by their quick keys
