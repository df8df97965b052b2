"""The engine: streaming gives the same findings whatever the batch size, and shoe rules cross midnight."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
from conftest import example_records

from auditkit.ingest.sources import ingest_paths
from auditkit.store import Store
from auditkit.validate import collect, validate_into_store, validate_records


def _baccarat_round(rid: str, seq: int, when: str, cut: bool = False, shoe: str = "S1") -> dict:
    return {"round_id": rid, "game": "baccarat", "table_id": "T1", "started_at": when, "shoe_id": shoe,
            "round_seq": seq, "player_cards": ["9c", "Qh"], "banker_cards": ["4c", "9h"], "outcome": "player",
            "cut_card": cut, "wagers": [{"seat": 1, "bet": "player", "amount": 10, "net": 10}]}


def _store(tmp_path: Path, records: list[dict], name: str = "log.jsonl") -> Store:
    log = tmp_path / name
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    store = Store(tmp_path / "store")
    ingest_paths([log], store)
    return store


def test_cut_card_rule_crosses_midnight(tmp_path):
    rounds = [
        _baccarat_round("A", 1, "2025-06-02T23:58:00-05:00"),
        _baccarat_round("B", 2, "2025-06-02T23:59:00-05:00", cut=True),
        _baccarat_round("C", 3, "2025-06-03T00:01:00-05:00"),   # the last hand: fine
        _baccarat_round("D", 4, "2025-06-03T00:03:00-05:00"),   # one too many: (e)
        _baccarat_round("E", 1, "2025-06-03T00:05:00-05:00", shoe="S2"),
    ]
    store = _store(tmp_path, rounds)
    assert store.dates("baccarat") == ["2025-06-02", "2025-06-03"]
    findings, checked = collect(store)
    assert checked == 5
    assert list(zip(findings["round_id"], findings["citation"], strict=True)) == [("D", "68 IAC 10-10-14(e)")]
    assert findings["date"].tolist() == ["2025-06-03"]
    # the in-memory route agrees
    mem = validate_records(rounds)
    assert list(zip(mem["round_id"], mem["citation"], strict=True)) == [("D", "68 IAC 10-10-14(e)")]


def test_streaming_batch_size_does_not_change_findings(tmp_path):
    records = [r for g in ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker") for r in example_records(g)]
    store = _store(tmp_path, records)
    big, n1 = collect(store, batch_size=1_000_000)
    small, n2 = collect(store, batch_size=7)
    assert n1 == n2 == len(records) and len(big) > 0
    pd.testing.assert_frame_equal(big, small)


def test_findings_written_per_partition_equal_collect(tmp_path):
    store = _store(tmp_path, example_records("baccarat") + example_records("three_card_poker"))
    total, checked = validate_into_store(store)
    stored = store.findings().sort_values(["started_at", "round_id", "rule_id"]).reset_index(drop=True)
    found, _ = collect(store)
    assert total == len(found) and checked == 112
    pd.testing.assert_frame_equal(stored, found, check_dtype=False)


def test_workers_give_the_same_findings_row_for_row(tmp_path):
    """Partitions validated by two processes: the same findings, in the same order, as one process,
    on a multi-day store whose shoes cross midnight."""
    from auditkit.simulate import simulate_into_store

    store = Store(tmp_path / "store")
    for game, seed in (("baccarat", 3), ("blackjack", 4)):
        simulate_into_store(store, game, 6000, seed=seed, fault_rate=0.05, chunk=2000)
    assert len(store.dates("baccarat")) > 2
    one, n1 = collect(store, workers=1)
    two, n2 = collect(store, workers=2)
    assert n1 == n2 == 12000 and len(one) > 100
    pd.testing.assert_frame_equal(one, two)
    assert (one["rule_id"] == "baccarat.e").any()  # a cut-card finding: the shoe rules ran in each worker


def test_workers_give_each_partition_its_own_findings(tmp_path, monkeypatch):
    """Partition by partition, two processes yield what one yields: a task returns the findings of its
    run of partitions as one table, cut back into partitions, days without findings among them."""
    from auditkit.engine import executors
    from auditkit.simulate import simulate_into_store
    from auditkit.validate import validate_partitions

    store = Store(tmp_path / "store")
    simulate_into_store(store, "baccarat", 20000, seed=11, fault_rate=0.0003, chunk=2000)
    monkeypatch.setattr(executors, "SHARE", 1)  # a task runs five of the ten days, then three, one, one
    one = list(validate_partitions(store, workers=1))
    two = list(validate_partitions(store, workers=2))
    assert [(g, d) for g, d, _ in one] == [(g, d) for g, d, _ in two]
    sizes = [len(f) for *_, f in one]
    assert 0 in sizes[1:-1] and sum(n > 0 for n in sizes) >= 2, sizes  # empty days between days with findings
    for (_g, _d, a), (*_, b) in zip(one, two, strict=True):
        pd.testing.assert_frame_equal(a, b)


def test_a_run_given_up_early_hands_out_no_more_partitions(tmp_path, monkeypatch):
    """A caller that stops reading (a write failed, Ctrl-C) does not wait for the rest of the store to
    be validated: the pool is given a run more than it has workers, never the whole plan, and the
    runs it holds are abandoned with it."""
    import contextlib

    from auditkit.engine import executors
    from auditkit.simulate import simulate_into_store
    from auditkit.validate import validate_partitions

    store = Store(tmp_path / "store")
    simulate_into_store(store, "baccarat", 60000, seed=11, fault_rate=0.0003, chunk=6000)
    monkeypatch.setattr(executors, "SHARE", 100)  # a run per day (twenty)
    submitted = []
    real = executors._pool

    @contextlib.contextmanager
    def spied(workers):
        with real(workers) as pool:
            submit = pool.submit
            pool.submit = lambda *a: submitted.append(submit(*a)) or submitted[-1]
            yield pool

    monkeypatch.setattr(executors, "_pool", spied)
    run = validate_partitions(store, workers=2)
    next(run)
    run.close()
    assert 2 <= len(submitted) <= 4  # one process in the pool: a run at work and one queued, at a time


def test_small_days_checked_together_give_each_days_findings(tmp_path):
    """Days smaller than a batch go through the round rules together (each round stamped with its
    day): the same findings, day by day and row for row, as each day checked alone; whatever the
    batch size that cuts the run of small days into groups."""
    from auditkit.engine.plan import plan
    from auditkit.paytables import Config
    from auditkit.simulate import simulate_into_store
    from auditkit.validate import sort_findings, validate_partition

    store = Store(tmp_path / "store")
    for game, seed in (("baccarat", 5), ("three_card_poker", 6), ("blackjack", 7), ("pai_gow_poker", 8)):
        simulate_into_store(store, game, 3000, seed=seed, fault_rate=0.05, chunk=1000)
    parts = plan(store)
    alone = [validate_partition(store, p, Config(), batch_size=1_000_000)[0] for p in parts]
    expected = sort_findings(pd.concat(alone, ignore_index=True))  # as collect orders a run's findings
    assert len(parts) > 6 and expected["date"].nunique() >= 3 and (expected["rule_id"] == "baccarat.e").any()
    day_rounds = max(store.count(p.game, p.date) for p in parts)
    for batch_size in (1_000_000, day_rounds + 1, 2 * day_rounds + 1):
        together, checked = collect(store, batch_size=batch_size)
        assert checked == 12000
        pd.testing.assert_frame_equal(together, expected)


def test_the_automatic_worker_count_reads_footers_only_until_it_knows(tmp_path, monkeypatch):
    """``workers=None`` runs one process under AUTO_MIN_ROUNDS rounds; the rounds are counted from
    the part files' metadata only until the threshold is reached."""
    from auditkit.engine.plan import at_least as _at_least
    from auditkit.engine.plan import plan
    from auditkit.simulate import simulate_into_store

    store = Store(tmp_path / "store")
    simulate_into_store(store, "baccarat", 3000, seed=5, chunk=1000)
    parts = plan(store)
    first = store.count(parts[0].game, parts[0].date)
    assert len(parts) == 3 and 0 < first < 3000
    assert _at_least(store, parts, 3000) and not _at_least(store, parts, 3001)
    counted = []
    real = Store.count
    monkeypatch.setattr(Store, "count", lambda self, g=None, d=None: (counted.append(d), real(self, g, d))[1])
    assert _at_least(store, parts, first) and counted == [parts[0].date]


def _each_day_alone(store: Store) -> pd.DataFrame:
    """The findings of a store as the engine defines them, day by day, in plain code: the round rules
    over the day's rounds; the shoe rules over the previous stored day's rounds of the shoes dealt
    again that day, then the day's, reporting the day's rounds only."""
    import pyarrow.compute as pc

    from auditkit.engine.checks import shoe_key
    from auditkit.paytables import Config
    from auditkit.validate import check_rounds, check_shoes, sort_findings

    frames = []
    for game in store.games():
        dates = store.dates(game)
        for i, date in enumerate(dates):
            day = store.read(game, date)
            both, emit = day, [True] * day.num_rows
            if i:
                prior = store.read(game, dates[i - 1])
                prior = prior.filter(pc.is_in(shoe_key(prior), value_set=shoe_key(day)))
                both, emit = pa.concat_tables([prior, day]), [False] * prior.num_rows + emit
            frames += [check_rounds(day, game, Config(), date=date),
                       check_shoes(both, game, Config(), emit=emit, date=date)]
    return sort_findings(pd.concat(frames, ignore_index=True))


def test_small_days_shoe_rules_run_once_each_day_seeing_only_its_previous_day(tmp_path, monkeypatch):
    """The shoe rules of a run of small days run once over every day's view side by side: each day's
    findings are still those of its own rounds with its previous day's of the same shoes, not those of
    a shoe seen over more days (a shoe id used again every day, a shoe dealt over three days)."""
    from auditkit.engine import partitions
    from auditkit.simulate import simulate_into_store

    days = [f"2025-06-0{d}" for d in range(2, 7)]
    rounds = [_baccarat_round(f"R{d}-{s}", s, f"{day}T12:0{s}:00-05:00", cut=s == 1)  # S1 again every day:
              for d, day in enumerate(days) for s in (1, 2, 3)]                      # (e) and no excess copy
    rounds += [_baccarat_round(f"L{k}", k + 1, when, cut=k == 0, shoe="S9") for k, when in enumerate(
        ["2025-06-02T23:59:00-05:00", "2025-06-03T12:30:00-05:00", "2025-06-04T00:01:00-05:00"])]
    store = _store(tmp_path, rounds)
    simulate_into_store(store, "blackjack", 3000, seed=7, fault_rate=0.05, chunk=1000)
    calls = []
    real = partitions.shoe_findings
    monkeypatch.setattr(partitions, "shoe_findings", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    found, checked = collect(store)
    expected = _each_day_alone(store)
    assert checked == len(rounds) + 3000 and len(store.dates("baccarat")) == 5
    assert calls == ["baccarat", "blackjack"]  # once a game: every day smaller than a batch
    flagged = set(found.loc[found["rule_id"] == "baccarat.e", "round_id"])
    assert "R4-3" in flagged and "L2" not in flagged  # L2's day sees L1 only, not L0's cut card two days back
    assert "baccarat.integrity_shoe" not in set(found["rule_id"])  # nine copies over the days, six in a view
    pd.testing.assert_frame_equal(found, expected)


def test_shoe_views_leave_the_report_metadata_to_the_findings(tmp_path, monkeypatch):
    """The shoe views hold the columns the shoe rules read, not the report's metadata: the findings read
    a flagged round's id, dealer and source line from the days' rounds, the same as each day alone."""
    from auditkit.engine import partitions

    days = [f"2025-06-0{d}" for d in range(2, 5)]
    rounds = [_baccarat_round(f"R{d}-{s}", s, f"{day}T12:0{s}:00-05:00", cut=s == 1)
              for d, day in enumerate(days) for s in (1, 2, 3)]
    store = _store(tmp_path, rounds)
    views = []
    real = partitions.shoe_findings
    monkeypatch.setattr(partitions, "shoe_findings", lambda *a, **k: views.append(a[0]) or real(*a, **k))
    found, _checked = collect(store)
    assert views and not {"round_id", "dealer_id", "source_file", "source_line"} & set(views[0].column_names)
    assert "baccarat.e" in set(found["rule_id"])
    pd.testing.assert_frame_equal(found, _each_day_alone(store))


def test_a_part_that_does_not_open_is_named_by_the_read(tmp_path):
    """A part file overwritten with something that is not Parquet (of its recorded size, so the layout's
    check passes): the error of the read that meets it names the file."""
    import pytest

    store = _store(tmp_path, example_records("baccarat"))
    part = next((tmp_path / "store" / "rounds").rglob("*.parquet"))
    part.write_bytes(b"x" * part.stat().st_size)
    with pytest.raises((pa.ArrowInvalid, OSError), match=part.name):
        collect(store)
