"""Every simulator through the JSONL route: the log written, read back and validated, finds the truth."""

import json

import pandas as pd
import pytest

from auditkit.cli import main
from auditkit.simulate import simulate_into_store, simulate_to_jsonl
from auditkit.validate import validate_records


@pytest.mark.parametrize("game", ["baccarat", "mini_baccarat", "blackjack", "three_card_poker", "pai_gow_poker"])
def test_simulated_log_round_trips_with_its_truth(tmp_path, game):
    log, truth_csv = tmp_path / f"{game}.jsonl", tmp_path / "truth.csv"
    n, faults = simulate_to_jsonl(game, 1_500, log, truth_csv, seed=3, fault_rate=0.1)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert n == len(records) == 1_500 and faults > 50
    assert {r["game"] for r in records} == {game} and records[0]["started_at"].endswith("-05:00")
    truth = pd.read_csv(truth_csv)
    assert len(truth) == faults
    found = validate_records(records)
    assert set(zip(found["round_id"], found["citation"], strict=True)) == set(zip(truth["round_id"], truth["citation"], strict=True))


@pytest.mark.parametrize("game", ["baccarat", "pai_gow_poker"])
def test_a_long_log_is_simulated_a_chunk_at_a_time(tmp_path, monkeypatch, game):
    """No more than a chunk of rounds is simulated (held) at once; the chunks follow one another day
    after day with unique round ids, and the whole log validates to the whole truth."""
    import auditkit.simulate as sim

    asked = []
    real = sim.simulate
    monkeypatch.setattr(sim, "simulate", lambda g, n, **kw: asked.append(n) or real(g, n, **kw))
    log, truth_csv = tmp_path / "long.jsonl", tmp_path / "truth.csv"
    n, faults = simulate_to_jsonl(game, 2_500, log, truth_csv, seed=3, fault_rate=0.05, chunk=1_000)
    assert asked == [1_000, 1_000, 500]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert n == len(records) == 2_500 and len({r["round_id"] for r in records}) == 2_500
    days = [r["started_at"][:10] for r in records]
    assert days[999] < days[1_000] and days[1_999] < days[2_000]  # each chunk from the day after the last
    truth = pd.read_csv(truth_csv)
    assert len(truth) == faults > 50
    found = validate_records(records)
    assert set(zip(found["round_id"], found["citation"], strict=True)) == set(zip(truth["round_id"], truth["citation"], strict=True))


def test_simulate_command(tmp_path, capsys):
    out = tmp_path / "sim.jsonl.gz"
    assert main(["simulate", "three_card_poker", "--rounds", "200", "--fault-rate", "0.05", "--out", str(out),
                 "--truth", str(tmp_path / "t.csv")]) == 0
    assert "200 three_card_poker round(s) written" in capsys.readouterr().out
    assert out.read_bytes()[:2] == b"\x1f\x8b"


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "three_card_poker", "pai_gow_poker"])
def test_simulate_into_store_in_chunks(tmp_path, game):
    """Chunks land on their own days with unique round ids, and the store validates to the ground truth."""
    from auditkit.store import Store
    from auditkit.validate import collect

    store = Store(tmp_path / "store")
    n, truth = simulate_into_store(store, game, 2_500, seed=5, fault_rate=0.05, chunk=1_000)
    assert n == 2_500 == store.count(game) and len(store.manifest()) == 3
    ids = pd.concat([store.read(game, d, columns=["round_id"]).to_pandas() for d in store.dates(game)])
    assert ids["round_id"].is_unique
    found, checked = collect(store)
    assert checked == n
    assert set(zip(found["round_id"], found["citation"], strict=True)) == set(zip(truth["round_id"], truth["citation"], strict=True))


def test_a_chunk_becomes_json_records_a_batch_at_a_time_with_the_same_bytes(tmp_path, monkeypatch):
    """The rows of a chunk are never all Python dicts at once (a 500,000-round chunk was 1.2 GB of
    them: 1M rounds peaked at 1.88 GiB, 0.70 GiB after); the log is the same byte for byte."""
    import auditkit.ingest.jsonl as jsonl
    import auditkit.simulate as sim

    whole = tmp_path / "whole.jsonl"
    monkeypatch.setattr(sim, "RECORD_BATCH", 10_000)
    simulate_to_jsonl("baccarat", 2_500, whole, seed=3, fault_rate=0.05, chunk=1_000)
    rows = []
    real = jsonl.records_from_table
    monkeypatch.setattr(jsonl, "records_from_table", lambda table, game: rows.append(table.num_rows) or real(table, game))
    monkeypatch.setattr(sim, "RECORD_BATCH", 300)
    batched = tmp_path / "batched.jsonl"
    simulate_to_jsonl("baccarat", 2_500, batched, seed=3, fault_rate=0.05, chunk=1_000)
    assert max(rows) == 300 and sum(rows) == 2_500
    assert batched.read_bytes() == whole.read_bytes()
