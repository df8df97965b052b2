"""A source whose every row is a round, mapped a column at a time (auditkit/ingest/profiles/onerow.py),
gives what the record path gives (map_rows, records, the JSON lines reader): the same stored rows, bad
rows and reasons, blank rows, rounds found and rounds per shoe, whatever the shape, notation, faults."""

from __future__ import annotations

import csv
import random

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import auditkit.ingest.profiles.onerow as onerow
from auditkit.ingest.jsonl import records_from_table
from auditkit.ingest.profiles import load_profile
from auditkit.ingest.profiles.source import open_source
from auditkit.ingest.readers.profile import mapped_block
from auditkit.simulate import simulate
from tests.profile_exports import CARD_NOTATIONS, MONEY_STYLES, TIME_KINDS, export

GAMES = ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")


def _both(prof, table, first_ordinal=5, seq=None):
    seq_fast, seq_slow = dict(seq or {}), dict(seq or {})
    fast = mapped_block(prof, table, [(2, "bad", "x")], 1, first_ordinal, seq_fast)
    real = onerow.one_row_rounds
    onerow.one_row_rounds = lambda *a, **k: None  # the record path
    try:
        slow = mapped_block(prof, table, [(2, "bad", "x")], 1, first_ordinal, seq_slow)
    finally:
        onerow.one_row_rounds = real
    return fast, slow, seq_fast, seq_slow


def _same(fast, slow):
    (pf, *nf), (ps, *ns) = fast, slow
    assert nf == ns
    assert sorted(pf.tables) == sorted(ps.tables)
    for g in pf.tables:
        assert pf.tables[g].equals(ps.tables[g]), g
    assert pf.bad == ps.bad and pf.blank == ps.blank and pf.renamed == ps.renamed


def _faulty(path, rng):
    """Some cells spoilt (an unknown card, a word for a number, an empty id), a blank row, a non-ASCII id."""
    with open(path, newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    for row in rows:
        if rng.random() < 0.15:
            j = rng.randrange(len(row))
            row[j] = rng.choice(["", "zz", "Zq 1x", "-3", "1.5", "true", "Réunion", "99999999999999999999999"])
    cards = next(j for j, h in enumerate(header) if "cards" in h)
    rows[rng.randrange(len(rows))][cards] = "Zq"  # one unknown card for sure
    rows.insert(rng.randrange(len(rows) + 1), [""] * len(header))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10_000), notation=st.sampled_from(CARD_NOTATIONS),
       times=st.sampled_from(TIME_KINDS), money=st.sampled_from(MONEY_STYLES), cells=st.sampled_from(["json", "split"]),
       nets=st.sampled_from(["direct", "bankroll"]), made=st.sampled_from(["", "ids", "seq", "times"]),
       faults=st.booleans(), left_out=st.booleans())
def test_one_row_rounds_map_a_column_at_a_time_as_records_do(tmp_path_factory, game, seed, notation, times, money,
                                                             cells, nets, made, faults, left_out):
    if game == "pai_gow_poker" and notation not in ("auditkit", "rank-suit"):
        notation = "auditkit"
    if notation == "points" and game != "baccarat":
        notation = "rank-only"
    records = list(records_from_table(simulate(game, 8, seed=seed)[0], game))
    folder = tmp_path_factory.mktemp("onerow")
    path, profile, _ = export(records, folder, grain="round", notation=notation, times=times, money=money,
                              cells=cells, nets=nets)
    text = profile.read_text()
    if made == "ids":
        text = text.replace('"round_id" = "round_id"\n', "")
    elif made == "seq":
        text = text.replace('"round_seq" = "round_seq"\n', "")
    elif made == "times":
        text = text.replace('"started_at" = "When"\n', "").split("[times]")[0] + \
            '[times]\nkind = "none"\nzone = "America/Chicago"\nstart_date = 2025-06-01\n'
    assert made == "" or text != profile.read_text() or f'"{ {"ids": "round_id", "seq": "round_seq"}.get(made)}"' \
        not in profile.read_text()
    if left_out:
        text = text.replace("[source]", 'left_out = ["events"]\n[source]', 1)
    profile.write_text(text)
    if faults:
        _faulty(path, random.Random(seed))
    prof = load_profile(profile)
    table = pa.concat_tables(list(open_source(prof.source, path).batches()))
    assert faults or onerow.one_row_rounds(table, prof) is not None  # the shape is one the path covers
    fast, slow, seq_fast, seq_slow = _both(prof, table, seq={"S-other": 3})
    _same(fast, slow)
    assert seq_fast == seq_slow
    assert fast[0].tables or fast[0].bad
    if faults:
        assert len(fast[0].bad) > 1  # the source's own bad row and some spoilt ones


def test_profiles_the_path_does_not_cover_go_the_record_way(tmp_path):
    records = list(records_from_table(simulate("baccarat", 4, seed=1)[0], "baccarat"))
    path, profile, _ = export(records, tmp_path, grain="round", nets="returned")
    prof = load_profile(profile)
    table = pa.concat_tables(list(open_source(prof.source, path).batches()))
    assert onerow.one_row_rounds(table, prof) is None  # nets from amounts returned
    _same(*_both(prof, table)[:2])


def test_a_value_the_json_parser_would_not_take_for_its_field_sends_the_records_the_json_way():
    from auditkit.ingest.recordtable import records_table

    refused = [{"round_seq": 1.0}, {"round_seq": 1.5}, {"table_min": True}, {"table_min": float("nan")},
               {"player_cards": "As"}, {"player_cards": [1]}, {"round_id": 5}, {"cut_card": 1},
               {"round_seq": 2**70}, {"announced": {"player": 1.0}}, {"dice": [1.0]}, {"hands": [{"seat": "1"}]}]
    for rec in refused:
        assert records_table([{"round_id": "R1"}, rec]) is None, rec
    table = records_table([{"round_id": "R1", "round_seq": 3, "player_cards": ["As", None], "table_min": 5,
                            "announced": {"player": 1}, "hands": [{"seat": 1, "wager": 2.5}], "extra": "x"}])
    assert table is not None and table.num_rows == 1
    row = table.to_pylist()[0]
    assert (row["round_seq"], row["player_cards"], row["table_min"], row["hands"][0]["wager"]) == (3, ["As", None],
                                                                                                 5.0, 2.5)
