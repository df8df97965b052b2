"""What the data cannot show is said: a rule neither flags nor passes a round that lacks the evidence
it needs, and every report counts those rounds per rule (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import example_records

from auditkit.cli import main
from auditkit.reportcoverage import from_parquet
from auditkit.rules.coverage import EVIDENCE
from auditkit.rules.tally import Tally
from auditkit.schema import schema_for
from auditkit.store import Store
from auditkit.validate import collect, validate_records, validate_tables


def _tables(records: list[dict], marks: dict[str, list[str]] | None = None) -> dict[str, pa.Table]:
    """Rounds as the store holds them, ``not_recorded`` set per round id (as an import profile sets it)."""
    from auditkit.ingest.records import parse_record

    rows: dict[str, list[dict]] = {}
    for i, rec in enumerate(records, start=1):
        game, date, row = parse_record(rec)
        row.update(source_file="<records>", source_line=i, date=date, not_recorded=(marks or {}).get(rec["round_id"]))
        rows.setdefault(game, []).append(row)
    return {g: pa.Table.from_pylist(r, schema=schema_for(g).append(pa.field("date", pa.string())))
            for g, r in rows.items()}


def _row(table: pd.DataFrame, rule_id: str, game: str | None = None) -> dict:
    rows = table[(table["rule_id"] == rule_id) & ((table["game"] == game) if game else True)]
    assert len(rows) == 1, rows
    return rows.iloc[0].to_dict()


def _pairs(findings: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(findings["round_id"], findings["rule_id"], strict=True))


def test_a_log_without_announced_totals_cannot_check_a_there_and_checks_it_elsewhere():
    records = example_records("baccarat")
    faulty = "BAC-20250602-b18f35"  # announced player 1 where the cards make 3
    with_totals = [r for r in records if "announced" in r]
    assert faulty in {r["round_id"] for r in with_totals} and 0 < len(with_totals) < len(records)
    tally = Tally()
    found = validate_records(records, tally=tally)
    row = _row(tally.table(), "baccarat.a", "baccarat")
    lacking = sum(r["game"] == "baccarat" and "announced" not in r for r in records)
    assert row["rounds_not_checkable"] == lacking and row["reasons"] == f"announced: {lacking}"
    assert row["rounds_checked"] == row["rounds_in_scope"] - lacking
    assert (faulty, "baccarat.a") in _pairs(found) and row["findings"] == 1
    # other rules check every round
    assert _row(tally.table(), "baccarat.b1", "baccarat")["rounds_not_checkable"] == 0

    without = [{k: v for k, v in r.items() if k != "announced"} if r["round_id"] == faulty else r for r in records]
    tally = Tally()
    found = validate_records(without, tally=tally)
    row = _row(tally.table(), "baccarat.a", "baccarat")
    assert (faulty, "baccarat.a") not in _pairs(found)
    assert row["rounds_not_checkable"] == lacking + 1 and row["findings"] == 0


def test_a_blackjack_round_without_a_first_card_event_cannot_check_c_and_is_counted():
    """10-2-4(c) counts from the first card: a round whose events carry no ``first_card`` marker cannot show
    a wager changed after it. It was passed silently; it is now not checkable, by that reason."""
    records = [r for r in example_records("blackjack") if r.get("events")]
    marked = [r for r in records if any(e.get("type") == "first_card" for e in r["events"])]
    unmarked = [r for r in records if r not in marked]
    assert marked and unmarked
    tally = Tally()
    found = validate_records(records, tally=tally)
    row = _row(tally.table(), "blackjack.c", "blackjack")
    assert row["rounds_not_checkable"] == len(unmarked) and row["reasons"] == f"first_card: {len(unmarked)}"
    assert row["rounds_checked"] == len(marked)
    # the same round with its marker removed: its (c) finding goes, counted as not checkable
    flagged = {rid for rid, rule in _pairs(found) if rule == "blackjack.c"}
    assert flagged
    rid = sorted(flagged)[0]
    stripped = [{**r, "events": [e for e in r["events"] if e.get("type") != "first_card"]} if r["round_id"] == rid
                else r for r in records]
    tally = Tally()
    again = validate_records(stripped, tally=tally)
    assert (rid, "blackjack.c") not in _pairs(again)
    assert _row(tally.table(), "blackjack.c", "blackjack")["rounds_not_checkable"] == len(unmarked) + 1
    assert "first_card" in EVIDENCE


def test_suits_not_recorded_the_shoe_composition_is_not_checkable_and_not_flagged():
    records = example_records("blackjack")
    shoe = "EX-BJ-1-20250602-S02"  # copies 7-9 of 2h in a 6-deck shoe
    in_shoe = [r["round_id"] for r in records if r.get("shoe_id") == shoe]
    plain = validate_tables(_tables(records))
    assert ("BJ-20250602-696ff5", "blackjack.integrity_shoe") in _pairs(plain)

    tally = Tally()
    marked = validate_tables(_tables(records, dict.fromkeys(in_shoe, ["suits"])), tally=tally)
    assert not (marked["rule_id"] == "blackjack.integrity_shoe").any()  # the 2h repeat is not flagged
    row = _row(tally.table(), "blackjack.integrity_shoe")
    assert row["rounds_not_checkable"] == len(in_shoe) and row["reasons"] == f"suits: {len(in_shoe)}"
    assert row["findings"] == 0
    # the rules that need no suits still check those rounds, with the same findings
    assert _row(tally.table(), "blackjack.a1")["rounds_not_checkable"] == 0
    assert _pairs(marked) == _pairs(plain) - {(r, "blackjack.integrity_shoe") for r in in_shoe}


@pytest.mark.parametrize("game, round_id", [("three_card_poker", "TCP-20250602-ff46a3"),
                                            ("pai_gow_poker", "PGP-20250602-74f555")])
def test_suits_not_recorded_a_card_repeated_in_a_round_is_not_flagged(game, round_id):
    records = example_records(game)
    rule_id = {"three_card_poker": "tcp.integrity", "pai_gow_poker": "paigow.integrity"}[game]
    assert (round_id, rule_id) in _pairs(validate_tables(_tables(records)))
    tally = Tally()
    found = validate_tables(_tables(records, {round_id: ["suits"]}), tally=tally)
    assert (round_id, rule_id) not in _pairs(found)
    assert _row(tally.table(), rule_id)["reasons"] == "suits: 1"


def test_a_round_without_wagers_is_not_checkable_by_the_payout_rules():
    records = example_records("baccarat")
    faulty = "BAC-20250602-3e9b44"  # a player win charged commission
    assert (faulty, "baccarat.paytable") in _pairs(validate_records(records))
    without = [{k: v for k, v in r.items() if k != "wagers"} if r["round_id"] == faulty else r for r in records]
    tally = Tally()
    found = validate_records(without, tally=tally)
    assert (faulty, "baccarat.paytable") not in _pairs(found)
    for rule_id in ("baccarat.paytable", "baccarat.void"):
        assert _row(tally.table(), rule_id, "baccarat")["reasons"] == "wagers: 1"
    assert _row(tally.table(), "baccarat.outcome", "baccarat")["rounds_not_checkable"] == 0

    # a profile that names the wagers not recorded (hands carry nets in three card poker): the hit is dropped
    tcp = example_records("three_card_poker")
    paid = "TCP-20250602-faf072"  # an ante win paid 2:1
    assert (paid, "tcp.paytable") in _pairs(validate_tables(_tables(tcp)))
    tally = Tally()
    found = validate_tables(_tables(tcp, {paid: ["wagers"]}), tally=tally)
    assert not found["round_id"].eq(paid).any()
    assert _row(tally.table(), "tcp.paytable")["rounds_not_checkable"] == 1
    assert _row(tally.table(), "tcp.integrity")["rounds_not_checkable"] == 0  # it needs no wagers


def _logs(tmp_path: Path) -> Path:
    """The worked examples, some baccarat rounds without announced totals and one without wagers."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for game in ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker"):
        records = example_records(game)
        if game == "baccarat":
            records = [{k: v for k, v in r.items() if k not in (("announced",) if i % 3 else ("wagers",))}
                       if i % 2 else r for i, r in enumerate(records)]
        (logs / f"{game}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return logs


def test_counts_are_the_same_one_shot_from_a_store_and_with_two_workers(tmp_path, capsys):
    logs, store = _logs(tmp_path), tmp_path / "store"
    assert main(["-q", "ingest", str(logs), "--store", str(store)]) == 0
    runs = {"one-shot": [str(logs), "--workers", "1"], "store": [str(store), "--workers", "1"],
            "workers": [str(store), "--workers", "2"]}
    tables, findings = {}, {}
    for name, args in runs.items():
        out = tmp_path / name
        capsys.readouterr()
        main(["validate", *args, "--out", str(out / "f.csv"), "--parquet", str(out / "f.parquet"),
              "--summaries", str(out), "--no-progress"])
        printed = capsys.readouterr().out
        tables[name] = pd.read_csv(out / "coverage.csv", keep_default_na=False)
        findings[name] = pd.read_csv(out / "f.csv")
        pd.testing.assert_frame_equal(from_parquet(out / "f.parquet").astype(tables[name].dtypes), tables[name])
        assert "not checkable" in printed and "announced:" in printed and "wagers:" in printed
    first = tables["one-shot"]
    for name in runs:
        pd.testing.assert_frame_equal(tables[name], first)
        pd.testing.assert_frame_equal(findings[name], findings["one-shot"])
    assert first["findings"].sum() == len(findings["one-shot"])
    a = _row(first, "baccarat.a", "baccarat")
    assert a["rounds_not_checkable"] > 0 and a["reasons"].startswith("announced: ")
    assert _row(first, "baccarat.paytable", "baccarat")["reasons"].startswith("wagers: ")
    assert (first["rounds_checked"] + first["rounds_not_checkable"] == first["rounds_in_scope"]).all()

    # the store's coverage, read without validating again, once its findings are stored
    from auditkit.analysis import coverage
    from auditkit.validate import validate_into_store

    tally = Tally()
    validate_into_store(Store(store), tally=tally)
    pd.testing.assert_frame_equal(coverage(store), tally.table())
    pd.testing.assert_frame_equal(tally.table().astype(str), first.astype(str))
    pd.testing.assert_frame_equal(coverage(tmp_path / "workers" / "f.parquet").astype(str), first.astype(str))
    capsys.readouterr()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "r.csv"),
                 "--parquet", str(tmp_path / "r.parquet")]) == 0
    assert "announced: " in capsys.readouterr().out
    pd.testing.assert_frame_equal(from_parquet(tmp_path / "r.parquet"), tally.table())


def test_a_store_written_before_the_column_reads_it_as_null(tmp_path):
    logs, root = _logs(tmp_path), tmp_path / "store"
    assert main(["-q", "ingest", str(logs), "--store", str(root)]) == 0
    store = Store(root)
    before_tally, after_tally = Tally(), Tally()
    before, _n = collect(store, tally=before_tally)
    for part in root.glob("rounds/game=*/date=*/part-*.parquet"):
        table = pq.read_table(part)
        pq.write_table(table.drop_columns(["not_recorded"]), part)
    for entry in root.glob("_manifest/*.json"):  # nor did its manifest record the files (issue 25)
        entry.write_text(json.dumps({k: v for k, v in json.loads(entry.read_text()).items() if k != "files"}))
    assert "not_recorded" not in pq.read_schema(next(root.glob("rounds/game=*/date=*/part-*.parquet"))).names
    after, _n = collect(store, tally=after_tally)
    pd.testing.assert_frame_equal(before, after)
    pd.testing.assert_frame_equal(before_tally.table(), after_tally.table())


def test_a_null_marker_leaves_the_round_hash_as_it_was_and_a_marker_changes_it():
    from auditkit.ingest.hashing import content_columns, row_hashes

    table = _tables(example_records("three_card_poker"))["three_card_poker"]
    old = table.drop_columns(["not_recorded"])
    same = row_hashes(table, content_columns(table.column_names))
    assert (same == row_hashes(old, content_columns(old.column_names))).all()
    marked = table.set_column(table.schema.get_field_index("not_recorded"), "not_recorded",
                              pa.array([["suits"]] * table.num_rows, pa.list_(pa.string())))
    assert (row_hashes(marked, content_columns(marked.column_names)) != same).all()


def test_every_rule_states_what_it_needs(capsys):
    from auditkit.rules.registry import catalog, rule, rules_for

    with pytest.raises(ValueError, match="needs"):
        rule("x.y", games=("baccarat",), citation="x", severity="low", summary="x", needs=("colour",), message="m")
    frame = catalog()
    assert set(", ".join(frame["needs"]).replace(" ", "").split(",")) - {""} <= set(EVIDENCE)
    needs = {r.rule_id: r.needs for g in ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")
             for r in rules_for(g)}
    assert needs["baccarat.a"] == ("announced",)
    assert {"suits", "ranks"} <= set(needs["blackjack.integrity_shoe"]) and "wagers" in needs["tcp.paytable"]
    assert main(["rules", "--game", "baccarat"]) == 0
    assert "needs: announced" in capsys.readouterr().out


def test_tally_adds_across_workers():
    a, b = Tally(), Tally()
    from auditkit.rules.registry import RULES

    rule_a = RULES["baccarat.a"]
    lack = {"announced": np.array([True, False, True])}
    a.add("baccarat", rule_a, 3, lack["announced"], lack, np.array([1]))
    b.add("baccarat", rule_a, 3, None, {}, np.array([0, 0, 2]))
    row = _row(a.merge(b).table(), "baccarat.a")
    assert (row["rounds_in_scope"], row["rounds_checked"], row["rounds_not_checkable"], row["findings"]) == (6, 4, 2, 3)
    assert row["reasons"] == "announced: 2"


def test_counts_are_the_same_on_dask(tmp_path):
    distributed = pytest.importorskip("distributed")
    from auditkit.simulate import simulate_into_store

    store = Store(tmp_path / "store")
    simulate_into_store(store, "baccarat", 4000, seed=5, fault_rate=0.05, chunk=1000)  # some without announced
    serial, on_dask = Tally(), Tally()
    found, _n = collect(store, tally=serial)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  scheduler_port=0, host="127.0.0.1") as c, distributed.Client(c) as client:
        again, _n = collect(store, scheduler=client, tally=on_dask)
    pd.testing.assert_frame_equal(found, again)
    pd.testing.assert_frame_equal(serial.table(), on_dask.table())
    assert _row(serial.table(), "baccarat.a")["rounds_not_checkable"] > 0
    assert serial.table()["findings"].sum() == len(found)


def test_watch_counts_what_it_could_not_check(tmp_path):
    import io

    from auditkit.live import Watcher

    logs = _logs(tmp_path)
    tally = Tally()
    validate_tables(_tables([json.loads(x) for x in (logs / "baccarat.jsonl").read_text().splitlines()]), tally=tally)
    w = Watcher([str(logs / "baccarat.jsonl")], stderr=io.StringIO(), stdout=io.StringIO(), gzip_settle=0.0,
                poll=0.05, checkpoint=tmp_path / "checkpoint.json")
    w.run(once=True)
    live = w.coverage.table()
    assert _row(live, "baccarat.a", "baccarat")["rounds_not_checkable"] > 0
    pd.testing.assert_frame_equal(live, tally.table())


def test_the_nightly_run_records_the_coverage(tmp_path):
    logs = _logs(tmp_path)
    (tmp_path / "nightly.toml").write_text(f'inputs = ["{logs}/*.jsonl"]\nstore = "store"\noutput = "reports"\n')
    main(["-q", "run", str(tmp_path / "nightly.toml")])
    (folder,) = [p for p in (tmp_path / "reports").glob("*/*") if p.is_dir() and not p.name.startswith(".")]
    record = json.loads((folder / "run.json").read_text())
    table = pd.DataFrame(record["coverage"])
    assert record["outputs"]["coverage"] == "coverage.csv" and "coverage.csv" in record["output_files"]
    a = _row(table, "baccarat.a", "baccarat")
    assert a["rounds_not_checkable"] > 0 and a["reasons"].startswith("announced: ")
    assert table["findings"].sum() == record["counts"]["findings"]
    pd.testing.assert_frame_equal(from_parquet(folder / "findings.parquet"), table)
    pd.testing.assert_frame_equal(pd.read_csv(folder / "coverage.csv", keep_default_na=False), table)
