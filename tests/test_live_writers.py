"""Live mode beside the store's other writers: ``watch --store`` takes the store's lock for each commit and
checks again, under it, what another writer stored since (one copy of each round)."""

from __future__ import annotations

import io
import json
import threading

import pytest
from test_live import streams

from auditkit.cli.main import main
from auditkit.live import Watcher
from auditkit.store import Store, StoreLocked


def _logs(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    n = 0
    for tid, lines in streams("baccarat", tables=2, pool=150).items():
        (logs / f"{tid}.jsonl").write_text("".join(x + "\n" for x in lines), "utf-8")
        n += len(lines)
    return logs, n


def _watcher(logs, store, **kw):
    return Watcher([str(logs)], store=store, stderr=io.StringIO(), gzip_settle=0.0, poll=0.05, **kw)


def _rounds(store: Store) -> list[str]:
    """Round ids of every committed part (each stored copy once)."""
    return [rid for game in store.games() for date in store.dates(game)
            for rid in store.read(game, date, ["round_id"])["round_id"].to_pylist()]


@pytest.mark.parametrize("other", ["ingest", "run", "watch"])
def test_watch_beside_another_writer_keeps_one_copy_of_each_round(tmp_path, other):
    logs, n = _logs(tmp_path)
    store = Store(tmp_path / "store")
    w = _watcher(logs, store)
    w.open()
    while w.poll_once():  # every line read, nothing committed yet
        pass
    if other == "ingest":
        assert main(["-q", "ingest", str(logs), "--store", str(store.root)]) == 0
    elif other == "run":
        job = tmp_path / "nightly.toml"
        job.write_text(f'inputs = ["{logs}"]\nstore = "{store.root}"\noutput = "{tmp_path / "out"}"\n')
        assert main(["-q", "run", str(job)]) in (0, 1)
    else:
        w2 = _watcher(logs, store)
        w2.run(once=True)
    w.close()  # commits under the lock, after the other writer
    ids = _rounds(store)
    assert len(ids) == n and len(set(ids)) == n
    rec = [json.loads(p.read_text()) for p in (store.root / "_manifest").glob("*.json")]
    assert sum(r["stored"] for r in rec) == n  # the watcher's commit counts them as already stored
    assert all(r["lines_read"] == r["stored"] + r["already_stored"] + r["quarantined"] + r["blank"] for r in rec)


def test_watch_commits_under_the_stores_lock(tmp_path):
    logs, _n = _logs(tmp_path)
    store = Store(tmp_path / "store")
    w = _watcher(logs, store, lock_timeout=0.3)
    w.open()
    w.poll_once()
    held, release = threading.Event(), threading.Event()

    def hold():
        with Store(store.root).lock(5, command="test"):
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    try:
        w.flush()  # the store is locked: nothing committed, the rounds kept for the next checkpoint
        assert not list((store.root / "_manifest").glob("*.json"))
        with pytest.raises(StoreLocked):
            w.flush(final=True)  # the last commit waits lock_timeout, then names the holder
        assert not list((store.root / "_manifest").glob("*.json"))
    finally:
        release.set()
        t.join()
    w.close()
    assert list((store.root / "_manifest").glob("*.json"))


def test_the_watcher_commits_through_ingests_writer(tmp_path, monkeypatch):
    """One writer: the watcher's commit is ingest's SourceWriter (parts, index, quarantine, manifest)."""
    from auditkit.ingest.writer import SourceWriter

    logs, n = _logs(tmp_path)
    commits = []
    real = SourceWriter.commit
    monkeypatch.setattr(SourceWriter, "commit", lambda self: commits.append(self.rec.format) or real(self))
    store = Store(tmp_path / "store")
    _watcher(logs, store).run(once=True)
    assert commits == ["jsonl-live"] and store.count() == n


@pytest.mark.parametrize("same", [True, False])
def test_a_repeat_older_than_the_recent_window_is_stored_once(tmp_path, same):
    """A round id read again past the watcher's recent window, before its first copy was committed: the
    commit's duplicate check (the writer's, on hash columns against the store and the commit's own rounds)
    stores it once; the same line again counts as already stored, other content is quarantined as ingest does."""
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = streams("baccarat", tables=1, pool=60, fault_rate=0.0)
    first = json.loads(next(iter(lines.values()))[0])
    again = dict(first) if same else dict(first, dealer_id="someone else")
    table = next(iter(lines.values()))
    (logs / "t.jsonl").write_text("".join(x + "\n" for x in [*table, json.dumps(again)]), "utf-8")
    store = Store(tmp_path / "store")
    _watcher(logs, store, recent=10).run(once=True)
    ids = _rounds(store)
    assert len(ids) == len(set(ids)) == len(table)
    [rec] = store.manifest()
    assert (rec.stored, rec.already_stored, rec.quarantined) == (len(table), 1 if same else 0, 0 if same else 1)
    if not same:
        reason = store.quarantine_table(columns=["reason"])["reason"].to_pylist()
        assert reason == [f"duplicate round_id {first['round_id']!r} with different content (first stored from "
                          f"{logs / 't.jsonl'} line 1)"]
