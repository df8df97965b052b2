"""``auditkit watch --profile``: exports in a line format followed through an import profile, rounds
grouped by the profile's keys, an open round left for the next start, the same findings as the
rounds' JSONL twin, each round once."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from auditkit.ingest.profiles import load_profile
from auditkit.live import Watcher
from auditkit.live.profiled import ProfiledWatcher
from auditkit.paytables import ConfigError
from auditkit.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from profile_exports import export  # noqa: E402
from test_live import streams  # noqa: E402


def _records(n: int = 60) -> list[dict]:
    lines = next(iter(streams("blackjack", tables=1, pool=400, fault_rate=0.2).values()))
    return [json.loads(x) for x in lines][:n]


def _watcher(paths: list[Path], profile: Path, found: list[pd.DataFrame], **kw) -> ProfiledWatcher:
    return ProfiledWatcher(paths, profile=load_profile(profile), stdout=None, stderr=io.StringIO(),
                           emit=found.append, **kw)


def _findings(found: list[pd.DataFrame]) -> list[tuple[str, str]]:
    if not found:
        return []
    f = pd.concat(found)
    return sorted(zip(f["round_id"], f["rule_id"], strict=True))


def _twin_findings(twins: list[dict], folder: Path) -> list[tuple[str, str]]:
    path = folder / "twin.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in twins))
    found: list[pd.DataFrame] = []
    Watcher([path], stdout=None, stderr=io.StringIO(), emit=found.append).run(once=True)
    return _findings(found)


def _split(csv_path: Path) -> tuple[str, list[str]]:
    header, *rows = csv_path.read_text("utf-8").splitlines(keepends=True)
    return header, rows


def test_rows_arriving_poll_by_poll_give_the_findings_of_the_jsonl_twin_each_round_once(tmp_path):
    csv_path, profile, twins = export(_records(), tmp_path, grain="hand")
    header, rows = _split(csv_path)
    live = tmp_path / "live" / "bj.csv"
    live.parent.mkdir()
    live.write_text(header)
    found: list[pd.DataFrame] = []
    w = _watcher([live.parent], profile, found)
    w.open()
    try:
        for lo in range(0, len(rows), 7):  # rounds cut anywhere: a round's rows span polls
            with live.open("a") as fh:
                fh.write("".join(rows[lo:lo + 7]))
            w.poll_once()
        assert w.stats["rounds"] == len(twins) - 1  # the last round is still open
        w.take_open = True
    finally:
        w.close()
    assert w.stats["rounds"] == len(twins) and w.stats["quarantined"] == 0
    twin = _twin_findings(twins, tmp_path)
    assert twin, "the rounds carry faults: findings to compare"
    assert _findings(found) == twin


def test_an_open_round_is_left_for_the_next_start_and_stored_once_whole(tmp_path):
    records = _records(40)
    end = next(i for i, r in enumerate(records) if i >= 8 and len(r["hands"]) >= 2)
    records = records[:end + 1]  # the last round has several hands
    csv_path, profile, twins = export(records, tmp_path, grain="hand")
    header, rows = _split(csv_path)
    last_id = twins[-1]["round_id"]
    last_rows = [r for r in rows if r.startswith(last_id + ",")]
    assert len(last_rows) >= 2, "the last round has several hands"
    live = tmp_path / "bj.csv"
    live.write_text(header + "".join(rows[:len(rows) - len(last_rows) + 1]))  # its first hand only
    store, state = Store(tmp_path / "store"), tmp_path / "watch.state"
    found: list[pd.DataFrame] = []
    first = _watcher([live], profile, found, store=store, checkpoint=state)
    first.open()
    first.poll_once()
    first.close()  # as SIGTERM does: the open round is not taken
    assert first.stats["rounds"] == len(twins) - 1
    assert last_id not in store.index()["round_id"].to_pylist()
    with live.open("a") as fh:
        fh.write("".join(last_rows[1:]))
    again = _watcher([live], profile, found, store=store, checkpoint=state)
    again.run(once=True)
    assert again.stats["rounds"] == 1
    ids = store.index()["round_id"].to_pylist()
    assert sorted(ids) == sorted(t["round_id"] for t in twins)  # each round once
    stored = [r for g in store.games() for d in store.dates(g) for r in store.read(g, d).to_pylist()]
    last = next(r for r in stored if r["round_id"] == last_id)
    assert len(last["hands"]) == len(twins[-1]["hands"])  # whole: the hands of both runs
    assert all(s.balanced for s in store.manifest())


def test_at_once_the_open_round_is_taken(tmp_path):
    csv_path, profile, twins = export(_records(8), tmp_path, grain="hand")
    found: list[pd.DataFrame] = []
    w = _watcher([csv_path], profile, found)
    w.run(once=True)
    assert w.stats["rounds"] == len(twins)


def test_json_lines_of_another_shape_are_followed(tmp_path):
    csv_path, profile, twins = export(_records(20), tmp_path, grain="hand")
    import csv

    with csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    live = tmp_path / "bj.jsonl"
    live.write_text("".join(json.dumps({k: v for k, v in r.items() if v != ""}) + "\n" for r in rows))
    text = profile.read_text().replace('format = "csv"', 'format = "jsonl"')
    jprofile = tmp_path / "jsonl.toml"
    jprofile.write_text(text)
    found: list[pd.DataFrame] = []
    w = _watcher([live], jprofile, found)
    w.run(once=True)
    assert w.stats["rounds"] == len(twins) and w.stats["quarantined"] == 0
    assert _findings(found) == _twin_findings(twins, tmp_path)


def test_a_row_that_cannot_be_mapped_quarantines_its_round_whole_with_line_numbers(tmp_path):
    csv_path, profile, twins = export(_records(6), tmp_path, grain="hand")
    header, rows = _split(csv_path)
    cols = header.rstrip("\r\n").split(",")
    bad_id = twins[2]["round_id"]
    at = next(i for i, r in enumerate(rows) if r.startswith(bad_id + ","))
    cells = rows[at].rstrip("\r\n").split(",")
    cells[cols.index("hands_seat")] = "seven"
    rows[at] = ",".join(cells) + "\r\n"
    live = tmp_path / "bj.csv"
    live.write_text(header + "".join(rows))
    store = Store(tmp_path / "store")
    w = _watcher([live], profile, [], store=store)
    w.run(once=True)
    n_bad = sum(r.startswith(bad_id + ",") for r in rows)
    assert w.stats["rounds"] == len(twins) - 1 and w.stats["quarantined"] == n_bad
    q = store.quarantine()
    assert set(q["line"]) == {i + 2 for i, r in enumerate(rows) if r.startswith(bad_id + ",")}
    assert any("seven" in r for r in q["reason"])
    assert all(s.balanced for s in store.manifest())


@pytest.mark.parametrize("fmt", ["xlsx", "sqlite", "json"])
def test_a_profile_of_a_source_that_is_not_lines_is_refused_naming_it(fmt, tmp_path):
    csv_path, profile, _ = export(_records(3), tmp_path, grain="hand")
    text = profile.read_text().replace('format = "csv"', f'format = "{fmt}"')
    if fmt == "sqlite":
        text = text.replace("[source]\n", '[source]\nquery = "SELECT * FROM t"\n')
    profile.write_text(text)
    with pytest.raises(ConfigError, match="watch follows line formats only"):
        ProfiledWatcher([csv_path], profile=load_profile(profile))
    r = subprocess.run([sys.executable, "-m", "auditkit", "watch", "--once", "--profile", str(profile), str(csv_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert str(profile) in r.stderr and f"source.format = '{fmt}'" in r.stderr and "Traceback" not in r.stderr


def test_cli_watch_profile_once_exits_1_on_findings(tmp_path):
    csv_path, profile, twins = export(_records(), tmp_path, grain="hand")
    out = tmp_path / "f.jsonl"
    r = subprocess.run([sys.executable, "-m", "auditkit", "watch", "--once", "--no-stdout", "--profile", str(profile),
                        "--out", str(out), str(csv_path)], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    got = sorted((json.loads(x)["round_id"], json.loads(x)["rule_id"]) for x in out.read_text().splitlines())
    assert got == _twin_findings(twins, tmp_path)
    assert f"{len(twins)} round(s) checked" in r.stderr


def test_made_times_and_round_seq_go_on_across_polls_as_the_bulk_reader_makes_them(tmp_path):
    """A one-row-per-round export without times or round_seq: the watcher, fed poll by poll, stores
    the rounds the bulk reader stores (a quarantined round still takes its place in the order)."""
    sample = Path(__file__).resolve().parents[1] / "sample_data" / "exports"
    header, *rows = (sample / "baccarat_rounds.csv").read_text().splitlines(keepends=True)
    rows = rows[:60]
    rows[20] = rows[20].rstrip("\r\n").rsplit(",", 1)[0] + ",dragon win\n"  # quarantined
    profile = tmp_path / "p.toml"
    profile.write_text((sample / "baccarat_rounds.toml").read_text()
                       .replace('round_seq = "Hand"\n', "").replace('started_at = "Date"\n', "")
                       .replace('format = "%m/%d/%Y %H:%M"', 'kind = "none"\nstart_date = 2025-06-01'))
    whole = tmp_path / "whole.csv"
    whole.write_text(header + "".join(rows))
    bulk = Store(tmp_path / "bulk")
    from auditkit.ingest.sources import ingest_source

    ingest_source(whole, bulk, profile=load_profile(profile))
    live = tmp_path / "live" / "whole.csv"
    live.parent.mkdir()
    live.write_text(header)
    store = Store(tmp_path / "live-store")
    w = _watcher([live.parent], profile, [], store=store)
    w.open()
    try:
        for lo in range(0, len(rows), 9):
            with live.open("a") as fh:
                fh.write("".join(rows[lo:lo + 9]))
            w.poll_once()
        w.take_open = True
    finally:
        w.close()

    def stored(s: Store) -> list[tuple]:
        return sorted((r["source_line"], r["round_id"], r["started_at"], r["shoe_id"], r["round_seq"])
                      for g in s.games() for d in s.dates(g) for r in s.read(g, d).to_pylist())

    assert len(stored(bulk)) == 59 and stored(store) == stored(bulk)
