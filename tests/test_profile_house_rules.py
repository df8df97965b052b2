"""House rules per row: an export that records each round's rules (a 6:5 blackjack payout, the decks of
its shoe) is checked against them, round by round, in bulk (ingest, validate) and live (watch)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from auditkit.ingest.profiles import load_profile
from auditkit.ingest.sources import ingest_source
from auditkit.live.profiled import ProfiledWatcher
from auditkit.paytables import ConfigError
from auditkit.store import Store
from auditkit.validate import collect

PROFILE = '''profile = 1
name = "bj-hands"
[grain]
rows = "hand"
round = ["round"]
[fields]
game = {const = "blackjack"}
table_id = {const = "BJ-7"}
round_id = {template = "BJ-7-{round:06d}"}
started_at = "time"
shoe_id = "shoe"
dealer_cards = {column = "cards", split = " ", when = {column = "role", equals = "dealer"}}
hands.seat = "seat"
hands.hand = "hand"
hands.cards = {column = "cards", split = " ", when = {column = "role", equals = "player"}}
hands.wager = "bet"
hands.net = {returned = "returned"}
RULES
[cards]
notation = "numeric-ace-14"
[times]
kind = "iso"
zone = "America/Indiana/Indianapolis"
'''
MAPPED = 'rules.blackjack = {column = "payout"}\nrules.decks = "decks"'
HEADER = "round,time,shoe,seat,hand,role,cards,bet,returned,payout,decks\n"
ROWS = [  # a natural at a 6:5 table paid 6:5, then paid 3:2; one at a 3:2 table paid 3:2
    "1,2025-06-01 10:00:05,S1,1,0,player,14s 13s,10,22,6:5,6", "1,2025-06-01 10:00:05,S1,,,dealer,10h 07d,,,6:5,6",
    "2,2025-06-01 10:01:05,S1,1,0,player,14d 12s,10,25,6:5,6", "2,2025-06-01 10:01:05,S1,,,dealer,10c 07c,,,6:5,6",
    "3,2025-06-01 10:02:05,S2,1,0,player,14h 11s,10,25,3 to 2,1", "3,2025-06-01 10:02:05,S2,,,dealer,09c 08c,,,3 to 2,1",
    # a one-deck shoe: a second ace of hearts in it is one more than its deck holds
    "4,2025-06-01 10:03:05,S2,1,0,player,14h 05s,10,0,3 to 2,1", "4,2025-06-01 10:03:05,S2,,,dealer,10d 09d,,,3 to 2,1",
]


def _export(tmp: Path, rules: str = MAPPED, rows: list[str] = ROWS) -> tuple[Path, Path]:
    (tmp / "p.toml").write_text(PROFILE.replace("RULES", rules))
    (tmp / "x.csv").write_text(HEADER + "".join(r + "\n" for r in rows))
    return tmp / "p.toml", tmp / "x.csv"


def _found(tmp: Path, rules: str = MAPPED, rows: list[str] = ROWS) -> tuple[pd.DataFrame, Store]:
    prof, data = _export(tmp, rules, rows)
    store = Store(tmp / "store")
    ingest_source(data, store, profile=load_profile(prof))
    found, _ = collect(store)
    return found, store


def test_each_round_is_paid_and_dealt_by_the_rules_its_row_records(tmp_path):
    found, store = _found(tmp_path)
    got = sorted(zip(found["round_id"], found["rule_id"], strict=True))
    assert got == [("BJ-7-000002", "blackjack.paytable"), ("BJ-7-000004", "blackjack.integrity_shoe")]
    paid = found.set_index("rule_id").loc["blackjack.paytable"]
    assert "blackjack pays 6:5 on 10.00" in paid["message"] and paid["discrepancy"] == pytest.approx(3.0)
    stored = {r["round_id"]: r["house_rules"] for g in store.games() for d in store.dates(g)
              for r in store.read(g, d).to_pylist()}
    assert stored["BJ-7-000001"] == [{"name": "blackjack", "value": 1.2}, {"name": "decks", "value": 6.0}]


def test_without_the_rules_the_configured_ones_apply(tmp_path):
    """The same rows, their rules columns not mapped: the 6:5 payout is short of the configured 3:2, and six
    decks hold two aces of hearts."""
    found, store = _found(tmp_path, rules="")
    assert sorted(zip(found["round_id"], found["rule_id"], strict=True)) == [("BJ-7-000001", "blackjack.paytable")]
    assert {r["house_rules"] for g in store.games() for d in store.dates(g)
            for r in store.read(g, d).select(["house_rules"]).to_pylist()} == {None}


def test_a_payout_that_is_not_a_ratio_is_quarantined_with_its_row(tmp_path):
    rows = [r.replace(",6:5,6", ",6::5,6") if r.startswith("2,") else r for r in ROWS]
    _found_, store = _found(tmp_path, rows=rows)
    q = store.quarantine().sort_values("line")
    assert q["line"].tolist() == [4, 5]
    assert "rules.blackjack" in q["reason"].iloc[0] and "6::5" in q["reason"].iloc[0]


def test_an_unknown_house_rule_is_refused_naming_the_file_and_key(tmp_path):
    prof, _ = _export(tmp_path, rules='rules.comp = "payout"')
    with pytest.raises(ConfigError, match=r"p\.toml: fields\.rules\.comp: 'comp' is not a house rule"):
        load_profile(prof)


def test_watch_checks_each_round_by_the_rules_its_row_records(tmp_path):
    prof, data = _export(tmp_path)
    found: list[pd.DataFrame] = []
    ProfiledWatcher([data], profile=load_profile(prof), stdout=None, stderr=io.StringIO(),
                    emit=found.append).run(once=True)
    f = pd.concat(found)
    assert sorted(zip(f["round_id"], f["rule_id"], strict=True)) == [
        ("BJ-7-000002", "blackjack.paytable"), ("BJ-7-000004", "blackjack.integrity_shoe")]


def test_a_house_rule_the_game_does_not_read_per_round_is_refused(tmp_path):
    """Baccarat's rules read no per-round blackjack payout: mapping one would be silently ignored."""
    prof, _ = _export(tmp_path, rules='rules.blackjack = "payout"')
    prof.write_text(prof.read_text().replace('game = {const = "blackjack"}', 'game = {const = "baccarat"}'))
    with pytest.raises(ConfigError, match=r"fields\.rules\.blackjack: the baccarat rules do not read 'blackjack'"):
        load_profile(prof)


def test_pai_gow_poker_reads_its_win_and_commission_per_round():
    """A pai gow round's own commission (a commission-free table) replaces the configured 5% for its hands."""
    import pyarrow as pa

    from auditkit.games.pai_gow_poker.context import PaiGowPoker
    from auditkit.games.pai_gow_poker.simulate import simulate
    from auditkit.paytables import Config

    table, _ = simulate(3, seed=1, fault_rate=0.0)
    at = table.schema.get_field_index("house_rules")
    own = pa.array([None, [{"name": "commission", "value": 0.0}], None], table.schema.field(at).type)
    ctx = PaiGowPoker(table.set_column(at, table.schema.field(at), own), Config())
    per_hand = ctx.hand_param("commission")
    rounds = ctx.hand_round
    assert set(per_hand[rounds == 1].tolist()) == {0.0} and set(per_hand[rounds != 1].tolist()) == {0.05}
