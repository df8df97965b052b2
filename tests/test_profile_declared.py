"""Declared means checked (issue 40): a field mapped counts as recorded, an empty amount is never read
as 0, several hands of one seat are split hands, evidence an export leaves out is read as a log
leaves it out (``left_out``), and an unknown field name is refused with the nearest known one."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditkit.cli.main import main
from auditkit.ingest.jsonl import records_from_table
from auditkit.ingest.profiles import load_profile
from auditkit.ingest.sources import ingest_source
from auditkit.paytables import ConfigError
from auditkit.rules.tally import Tally
from auditkit.simulate import simulate
from auditkit.store import Store
from auditkit.validate import collect
from tests.profile_exports import export

TCP = '''profile = 1
%s
[grain]
rows = "hand"
round = ["Round"]
[fields]
game = {const = "three_card_poker"}
table_id = {const = "TCP-1"}
round_id = "Round"
started_at = "Time"
dealer_cards = {column = "Dealer", split = " "}
hands.seat = "Seat"
hands.cards = {column = "Cards", split = " "}
hands.decision = "Decision"
hands.ante = "Ante"
hands.play = "Play"
hands.pair_plus = "PP"
hands.net_ante = "NetAnte"
hands.net_play = "NetPlay"
hands.net_pair_plus = %s
[times]
zone = "America/Chicago"
'''
TCP_ROWS = ("Round,Time,Dealer,Seat,Cards,Decision,Ante,Play,PP,NetAnte,NetPlay,NetPP\n"
            "R1,2025-06-01T10:00:00,Kh Qd 4s,1,Ah Ad 7c,play,10,10,5,10,10,5\n"
            "R2,2025-06-01T10:01:00,Kh Qd 4s,1,Ah Ad 7c,play,10,10,5,10,10,\n"
            "R3,2025-06-01T10:02:00,Kh Qd 4s,1,2h 5d 9c,fold,10,0,,-10,0,\n")


def _ingest(tmp_path: Path, profile: str, data: str) -> tuple[Store, object]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "p.toml").write_text(profile)
    (tmp_path / "x.csv").write_text(data)
    store = Store(tmp_path / "s")
    rec, _ = ingest_source(tmp_path / "x.csv", store, profile=load_profile(tmp_path / "p.toml"))
    return store, rec


def _coverage(store: Store):
    tally = Tally()
    found, _ = collect(store, tally=tally)
    return found, tally.table().set_index("rule_id")


def test_three_card_poker_wagers_mapped_as_ante_play_and_pair_plus_are_recorded(tmp_path):
    prof_text = TCP % ("", '"NetPP"')
    (tmp_path / "p.toml").write_text(prof_text)
    assert "wagers" not in load_profile(tmp_path / "p.toml").not_recorded
    store, rec = _ingest(tmp_path, prof_text, TCP_ROWS.replace(",10,10,\n", ",10,10,5\n"))
    assert rec.stored == 3
    _, coverage = _coverage(store)
    assert (coverage.loc[coverage["game"] == "three_card_poker", "rounds_not_checkable"] == 0).all()
    assert coverage.loc["tcp.paytable", "rounds_checked"] == 3


def test_an_empty_net_beside_a_pair_plus_wager_is_quarantined_never_read_as_0(tmp_path):
    store, rec = _ingest(tmp_path, TCP % ("", '"NetPP"'), TCP_ROWS)
    assert rec.stored == 2 and rec.quarantined == 1  # R3: no pair plus at all, as a log leaves it out
    q = store.quarantine()
    assert q["line"].tolist() == [3]
    assert q["reason"].iloc[0] == ("hands.net_pair_plus: empty cell, though hands.pair_plus is 5: an empty amount "
                                   'is never read as 0 (default = "0" if the export writes 0 as empty)')
    found, _ = _coverage(store)
    assert not (found["rule_id"] == "tcp.paytable").any()


def test_a_default_says_an_empty_amount_is_0(tmp_path):
    store, rec = _ingest(tmp_path, TCP % ("", '{column = "NetPP", default = "0"}'), TCP_ROWS)
    assert rec.stored == 3 and rec.quarantined == 0
    found, _ = _coverage(store)
    assert set(found.loc[found["rule_id"] == "tcp.paytable", "round_id"]) == {"R2"}  # a pair paid 0: a finding


def test_with_wagers_not_recorded_an_empty_net_is_not_a_reason_and_payouts_are_not_checkable(tmp_path):
    store, rec = _ingest(tmp_path, TCP % ('not_recorded = ["wagers"]', '"NetPP"'), TCP_ROWS)
    assert rec.stored == 3
    _, coverage = _coverage(store)
    assert coverage.loc["tcp.paytable", "rounds_checked"] == 0


BJ = '''profile = 1
left_out = ["events"]
[grain]
rows = "hand"
round = ["Round"]
[fields]
game = {const = "blackjack"}
table_id = {const = "BJ-1"}
round_id = "Round"
started_at = "Time"
dealer_cards = {column = "Dealer", split = " "}
hands.seat = "Seat"
hands.hand = "Hand"
hands.cards = {column = "Cards", split = " "}
hands.wager = "Bet"
hands.net = "Net"
%s
[times]
zone = "America/Chicago"
'''
BJ_ROWS = ("Round,Time,Dealer,Seat,Hand,Cards,Bet,Net,Split\n"
           "R1,2025-06-01T10:00:00,Th 8d,1,0,Ah Kd,10,10,Y\n"
           "R1,2025-06-01T10:00:00,Th 8d,1,1,Ac 5d,10,-10,Y\n"
           "R1,2025-06-01T10:00:00,Th 8d,2,0,9h Td,10,10,N\n")


def test_several_hands_of_one_seat_without_a_split_flag_are_split_hands(tmp_path):
    flagged, _ = _ingest(tmp_path / "a", BJ % 'hands.split = {column = "Split", values = {Y = true, N = false}}',
                         BJ_ROWS)
    plain, rec = _ingest(tmp_path / "b", BJ % "", BJ_ROWS)
    assert rec.stored == 1
    hands = plain.read("blackjack", "2025-06-01")["hands"].to_pylist()[0]
    assert [(h["seat"], h["hand"], h["split"]) for h in hands] == [(1, 0, True), (1, 1, True), (2, 0, False)]
    found, _ = _coverage(plain)
    assert found.empty  # a two-card 21 on a split hand paid even money: not a blackjack
    assert _coverage(flagged)[0].empty


def test_left_out_events_reads_rounds_as_a_log_without_events(tmp_path):
    records = list(records_from_table(simulate("pai_gow_poker", 5, seed=3)[0], "pai_gow_poker"))
    _, profile, _ = export(records, tmp_path)
    text = profile.read_text()
    assert "events" in load_profile(profile).not_recorded
    profile.write_text(text.replace("[source]", 'left_out = ["events"]\n[source]', 1))
    assert "events" not in load_profile(profile).not_recorded


@pytest.mark.parametrize(("edit", "why"), [
    ('left_out = ["events"]\nnot_recorded = ["events"]', "also in not_recorded"),
    ('left_out = ["suits"]', "'suits' is not one of"),
    ('left_out = ["dealer"]', "the profile maps dealer_id"),
])
def test_left_out_refuses_what_contradicts_the_profile(tmp_path, edit, why):
    text = (BJ % "").replace('left_out = ["events"]\n', edit + "\n", 1)
    text = text.replace('hands.net = "Net"', 'hands.net = "Net"\ndealer_id = "Dealer"')
    (tmp_path / "p.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"p\.toml: left_out: .*" + why):
        load_profile(tmp_path / "p.toml")


@pytest.mark.parametrize(("key", "message"), [
    ('dealer_idd = "Dealer"', "fields.dealer_idd: not a field of a round (did you mean dealer_id?)"),
    ('hands.bogus = "Seat"', "fields.hands.bogus: not a field of 'hands' (see docs/log-format.md)"),
    ('hands.neet = "Net"', "fields.hands.neet: not a field of 'hands' (did you mean hands.net?)"),
    ('annouced.player = "Seat"', "fields.annouced.player: not a field of a round (did you mean announced.player?)"),
])
def test_an_unknown_field_name_is_refused_with_the_nearest_known_one(tmp_path, capsys, key, message):
    (tmp_path / "p.toml").write_text(BJ % key)
    (tmp_path / "x.csv").write_text(BJ_ROWS)
    with pytest.raises(ConfigError) as exc:
        load_profile(tmp_path / "p.toml")
    assert str(exc.value) == f"{tmp_path / 'p.toml'}: {message}"
    assert main(["profile", "check", str(tmp_path / "p.toml"), str(tmp_path / "x.csv")]) == 2
    assert message in capsys.readouterr().err
