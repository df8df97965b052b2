"""Import profiles: a vendor's export read through a profile stores the rounds its JSONL twin stores."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditkit.ingest.jsonl import records_from_table
from auditkit.ingest.profiles import load_profile
from auditkit.ingest.sources import ingest_source
from auditkit.paytables import ConfigError
from auditkit.simulate import simulate
from auditkit.store import Store
from tests.conftest import example_records
from tests.profile_exports import CARD_NOTATIONS, MONEY_STYLES, TIME_KINDS, export

GAMES = ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")


def _rows(store: Store) -> list[dict]:
    t = pa.concat_tables([store.read(g, d) for g in store.games() for d in store.dates(g)]).sort_by("round_id")
    return t.drop_columns(["source_file", "source_line", "not_recorded"]).to_pylist()


def _twin(records: list[dict], folder: Path) -> Store:
    path = folder / "twin.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    store = Store(folder / "twin-store")
    ingest_source(path, store)
    return store


def _through_profile(records: list[dict], folder: Path, **shape) -> tuple[Store, Store, object]:
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, profile, twins = export(records, folder, **shape)
    store = Store(folder / "store")
    rec, new = ingest_source(csv_path, store, profile=load_profile(profile))
    assert new and rec.balanced and rec.quarantined == 0, store.quarantine().to_dict("records")[:3]
    assert rec.stored == len(records) > 0
    return store, _twin(twins, folder), rec


@pytest.mark.parametrize("game", GAMES)
def test_an_export_of_the_worked_examples_stores_the_rounds_of_its_jsonl_twin(game, tmp_path):
    records = [r for r in example_records(game) if r.get("status", "completed") == "completed"]
    store, twin, rec = _through_profile(records, tmp_path, grain="hand", times="strftime", money="dollars",
                                        encoding="cp1252")
    assert rec.stored == len(records)
    assert _rows(store) == _rows(twin)


@pytest.mark.parametrize("nets", ["returned", "bankroll"])
def test_nets_from_amounts_returned_and_from_bankrolls(nets, tmp_path):
    records = example_records("baccarat")
    store, twin, _ = _through_profile(records, tmp_path, grain="hand", nets=nets)
    assert _rows(store) == _rows(twin)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10_000), grain=st.sampled_from(["round", "hand"]),
       notation=st.sampled_from(CARD_NOTATIONS), times=st.sampled_from(TIME_KINDS),
       money=st.sampled_from(MONEY_STYLES), cells=st.sampled_from(["json", "split"]),
       nets=st.sampled_from(["direct", "returned", "bankroll"]))
def test_random_rounds_of_every_shape_and_notation_read_back_as_the_same_rounds(
        tmp_path_factory, game, seed, grain, notation, times, money, cells, nets):
    if game == "pai_gow_poker" and notation not in ("auditkit", "rank-suit"):
        notation = "auditkit"  # the joker has no numeric, symbol or point notation
    if notation == "points" and game != "baccarat":
        notation = "rank-only"
    records = list(records_from_table(simulate(game, 6, seed=seed)[0], game))
    folder = tmp_path_factory.mktemp("shape")
    store, twin, _ = _through_profile(records, folder, grain=grain, notation=notation, times=times, money=money,
                                      cells=cells, nets=nets)
    assert _rows(store) == _rows(twin)


BASE = '''profile = 1
[grain]
rows = "hand"
round = ["Round"]
[fields]
game = {const = "baccarat"}
table_id = {const = "T1"}
shoe_id = {const = "S1"}
round_seq = "Hand"
player_cards = {column = "P", split = " "}
banker_cards = {column = "B", split = " "}
outcome = {column = "Result", values = {P = "player", B = "banker", T = "tie"}}
wagers.seat = "Seat"
wagers.bet = {column = "Bet", values = {P = "player", B = "banker", T = "tie"}}
wagers.amount = "Amount"
wagers.net = "Net"
[cards]
notation = "points"
[times]
kind = "none"
zone = "America/Chicago"
start_date = 2025-06-01
'''


def _write(tmp_path: Path, text: str, rows: list[str]) -> tuple[Path, Path]:
    prof = tmp_path / "p.toml"
    prof.write_text(text)
    data = tmp_path / "x.csv"
    data.write_text("Round,Hand,P,B,Result,Seat,Bet,Amount,Net\n" + "".join(r + "\n" for r in rows))
    return prof, data


@pytest.mark.parametrize(("edit", "key"), [
    (("[grain]", "[grain]\nbogus = 1"), "grain.bogus"),
    (('round_seq = "Hand"', "round_seq = {column = 3}"), "fields.round_seq.column"),
    (('notation = "points"', 'notation = "pattern"\npattern = "(?P<rank>[0-9"'), "cards.pattern"),
    (('round_seq = "Hand"', 'round_id = {template = "{Round.__class__}"}'), "fields.round_id.template"),
    (('round_seq = "Hand"', 'round_id = {template = "{Round!r}"}'), "fields.round_id.template"),
    (('zone = "America/Chicago"', 'zone = "Mars/Olympus"'), "times.zone"),
    (('rows = "hand"', 'rows = "shoe"'), "grain.rows"),
    (("profile = 1", "profile = 2"), "profile"),
    (('outcome = {column = "Result", values = {P = "player", B = "banker", T = "tie"}}',
      'outcome = {column = "Result", values = "nope"}'), "fields.outcome.values"),
])
def test_a_bad_profile_is_refused_up_front_naming_the_file_and_the_key(edit, key, tmp_path):
    prof = tmp_path / "bad.toml"
    prof.write_text(BASE.replace(*edit))
    with pytest.raises(ConfigError) as exc:
        load_profile(prof)
    assert str(prof) in str(exc.value) and f": {key}:" in str(exc.value)


@pytest.mark.parametrize(("edit", "key"), [
    (('zone = "America/Chicago"', 'zone = "TODO: the time zone the times were written in"'), "times.zone"),
    (('shoe_id = {const = "S1"}', 'shoe_id = {template = "TODO: {Round}"}'), "fields.shoe_id.template"),
    (('notation = "points"', 'notation = "points"\nnote = ["ok", " todo: the suit order"]'), "cards.note[1]"),
])
def test_a_question_the_draft_left_open_is_refused_until_answered(edit, key, tmp_path):
    prof = tmp_path / "draft.toml"
    prof.write_text(BASE.replace(*edit))
    with pytest.raises(ConfigError) as exc:
        load_profile(prof)
    assert f"{prof}: {key}: still a question of the draft" in str(exc.value)
    prof.write_text(BASE)
    assert load_profile(prof).fields  # the same profile answered is read


def test_rows_are_grouped_into_rounds_and_a_round_whose_rows_disagree_is_quarantined_whole(tmp_path):
    prof, data = _write(tmp_path, BASE, [
        "1,1,3 0 0,8 0,B,1,P,10,-10", "1,1,3 0 0,8 0,B,2,B,20,19", ",,,,,,,,",   # a round of two wagers, a blank row
        "2,2,7 1,6 0,P,1,P,10,10", "2,2,7 1,6 0,B,2,B,5,-5",                    # two outcomes: disagree
        "3,3,5 0,5 2,T,1,P,10,0", "3,3,5 0,5 2,T,1,P,10,0",                     # seat 1's player bet twice
        "4,4,9 0,2 X,B,1,P,10,-10", "4,4,9 0,2 2,B,3,T,5,-5",                   # a card it cannot read
    ])
    store = Store(tmp_path / "s")
    rec, _ = ingest_source(data, store, profile=load_profile(prof))
    assert (rec.lines_read, rec.stored, rec.attached, rec.blank, rec.quarantined) == (9, 1, 1, 1, 6)
    q = store.quarantine().sort_values("line")
    assert q["line"].tolist() == [5, 6, 7, 8, 9, 10]
    reasons = q["reason"].tolist()
    assert "disagree on outcome: 'player', 'banker'" in reasons[0] and reasons[0] == reasons[1]
    assert "wager seat 1 bet player twice" in reasons[2]
    assert "banker_cards" in reasons[4] and "'X'" in reasons[4] and "row 9" in reasons[5]
    (row,) = _rows_all(store)
    assert row["player_cards"] == [4 * 1 + 3, 4 * 8 + 3, 4 * 8 + 3]  # 3s Ts Ts: point values, suits invented
    assert row["round_id"] == "T1-1" and row["round_seq"] == 1
    assert sorted(row["not_recorded"]) == ["announced", "cut_card", "deal_order", "dealer", "events", "ranks", "round_id", "suits", "times"]
    assert str(row["started_at"]) == "2025-06-01 05:00:00+00:00"  # the start date, local midnight
    assert ingest_source(data, store, profile=load_profile(prof))[1] is False  # idempotent: the same content


def test_a_profiled_file_already_ingested_is_known_by_its_quick_key(tmp_path, monkeypatch):
    import auditkit.ingest.profiles.source as profile_source
    from auditkit.ingest.identity import quick_key

    prof, data = _write(tmp_path, BASE, ["1,1,3 0 0,8 0,B,1,P,10,-10", "2,2,7 1,6 0,P,1,P,10,10"])
    store = Store(tmp_path / "s")
    rec, new = ingest_source(data, store, profile=load_profile(prof))
    assert new and rec.quick == quick_key(data)

    def no_full_read(path):
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(profile_source, "_file_sha256", no_full_read)
    again, new = ingest_source(data, store, profile=load_profile(prof))
    assert not new and again.sha256 == rec.sha256


def _rows_all(store: Store) -> list[dict]:
    return pa.concat_tables([store.read(g, d) for g in store.games() for d in store.dates(g)]).to_pylist()


def test_a_column_the_source_lacks_is_a_configuration_error(tmp_path):
    prof, data = _write(tmp_path, BASE.replace('"Seat"', '"Place"'), ["1,1,3 0 0,8 0,B,1,P,10,-10"])
    with pytest.raises(ConfigError, match="no column 'Place'"):
        ingest_source(data, Store(tmp_path / "s"), profile=load_profile(prof))


def _doc_examples() -> list[tuple[str | None, str]]:
    """(the CSV shown before it or None, the profile) of every example profile in docs/profiles.md."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "profiles.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    out = []
    for k, (lang, body) in enumerate(blocks):
        if lang == "toml" and body.startswith("profile = 1"):
            before = blocks[k - 1] if k else ("x", "")
            out.append((before[1] if before[0] == "" else None, body))
    return out


@pytest.mark.parametrize("csv_text,profile", _doc_examples())
def test_every_example_of_the_docs_is_a_valid_profile_that_reads_its_example_rows(csv_text, profile, tmp_path):
    import tomllib

    from auditkit.ingest.blocks import parse_objects
    from auditkit.ingest.profiles import parse_profile
    from auditkit.ingest.profiles.mapping import map_rows
    from auditkit.ingest.readers.profile import read_rows

    prof = parse_profile(tomllib.loads(profile), "docs/profiles.md")
    if csv_text is None:
        return
    data = tmp_path / "x.csv"
    data.write_text(csv_text, encoding="utf-8")
    table, _, _, _ = read_rows({"format": "csv"}, data)
    mapped = map_rows(table, prof)
    assert not mapped.bad and mapped.rounds
    parsed = parse_objects(mapped.rounds, mapped.raws)
    assert not parsed.bad, parsed.bad


def test_a_row_with_more_cells_than_the_header_is_quarantined_with_its_row_number(tmp_path):
    prof, data = _write(tmp_path, BASE, ["1,1,3 0 0,8 0,B,1,P,10,-10", "2,2,7 1,6 0,P,1,P,10,10,surplus"])
    store = Store(tmp_path / "s")
    rec, _ = ingest_source(data, store, profile=load_profile(prof))
    assert (rec.lines_read, rec.stored, rec.quarantined) == (2, 1, 1) and rec.balanced
    assert store.quarantine()["line"].tolist() == [3] and "10 cells, the header has 9" in store.quarantine()["reason"][0]


@pytest.mark.parametrize("cells", [
    ["6/1/2025 04:02", "6/1/2025 4:02", "12/31/2025 23:59", None, "bad", "13/1/2025 00:00"],
    ["11/2/2025 01:30", "3/9/2025 01:59", "1/1/2025 00:00"],          # ambiguous (the earlier reading)
    ["3/9/2025 02:30", "6/1/2025 04:02"],                              # in the spring gap: cell by cell
])
def test_times_read_by_arrow_at_once_read_as_python_reads_them_one_by_one(cells):
    from auditkit.ingest.profiles import parse_profile
    from auditkit.ingest.profiles.distinct import column_values
    from auditkit.ingest.profiles.notation import time_reader, time_values

    prof = parse_profile({"profile": 1, "fields": {"game": {"const": "baccarat"}, "table_id": "T",
                                                   "started_at": "When"},
                          "times": {"format": "%m/%d/%Y %H:%M", "zone": "America/Chicago"}}, "t.toml")
    col = pa.array(cells, pa.string())
    assert time_values(col, prof) == column_values(col, time_reader(prof))


def test_a_sqlite_table_read_through_a_profile_stores_the_rounds_of_its_jsonl_twin(tmp_path):
    import csv
    import sqlite3

    records = example_records("blackjack")
    csv_path, profile, twins = export(records, tmp_path, grain="hand", notation="numeric-ace-14", nets="returned")
    with csv_path.open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    db = tmp_path / "hands.sqlite"
    with sqlite3.connect(db) as con:
        con.execute(f"CREATE TABLE hands (id INTEGER PRIMARY KEY, {', '.join(f'{c!r} TEXT' for c in rows[0])})")
        con.executemany(f"INSERT INTO hands ({', '.join(repr(c) for c in rows[0])}) VALUES "
                        f"({', '.join('?' * len(rows[0]))})", [[v or None for v in r] for r in rows[1:]])
    text = profile.read_text().replace('[source]\nformat = "csv"\nencoding = "utf-8"',
                                       '[source]\nformat = "sqlite"\nquery = "SELECT * FROM hands ORDER BY id"')
    sql_profile = tmp_path / "sql.toml"
    sql_profile.write_text(text)
    prof = load_profile(sql_profile)
    store = Store(tmp_path / "sql-store")
    rec, new = ingest_source(db, store, profile=prof)
    assert new and rec.balanced and rec.quarantined == 0 and rec.stored == len(records)
    assert _rows(store) == _rows(_twin(twins, tmp_path))
    assert ingest_source(db, store, profile=prof)[1] is False  # the same query and data: already ingested


def test_a_source_of_one_round_per_row_mapped_in_parts_stores_what_it_stores_mapped_whole(tmp_path, monkeypatch):
    """Rows that are rounds are mapped :data:`SEGMENT` rows at a time: made times, a round_seq counted
    per shoe, quarantined and blank rows and row numbers all go on across the parts."""
    from auditkit.ingest.readers import profile as reader

    sample = Path(__file__).resolve().parents[1] / "sample_data" / "exports"
    lines = (sample / "baccarat_rounds.csv").read_text().splitlines()[:400]
    lines[57] = lines[57].rsplit(",", 1)[0] + ",dragon win"  # quarantined, in the third part
    lines.insert(120, "")  # blank
    lines.insert(200, ",,,,,,,,,,,,,")  # blank too: every cell empty
    data = tmp_path / "rounds.csv"
    data.write_text("\n".join(lines) + "\n")
    prof = tmp_path / "rounds.toml"
    prof.write_text((sample / "baccarat_rounds.toml").read_text()
                    .replace('round_seq = "Hand"\n', "")
                    .replace('started_at = "Date"\n', "")
                    .replace('format = "%m/%d/%Y %H:%M"', 'kind = "none"\nstart_date = 2025-06-01'))
    stores = []
    for segment in (25, 1 << 20):
        monkeypatch.setattr(reader, "SEGMENT", segment)
        store = Store(tmp_path / f"store-{segment}")
        rec, _ = ingest_source(data, store, profile=load_profile(prof))
        assert (rec.lines_read, rec.stored, rec.quarantined, rec.blank, rec.balanced) == (401, 398, 1, 2, True)
        stores.append(store)
    parts, whole = stores
    assert _rows_all(parts) == _rows_all(whole)
    assert parts.quarantine()[["line", "reason"]].to_dict("records") == \
        whole.quarantine()[["line", "reason"]].to_dict("records")
    seqs = {(r["shoe_id"], r["round_seq"]) for r in _rows_all(parts)}
    assert len(seqs) == 398 and max(s for _, s in seqs) > 25  # counted on across parts
