"""A mapping that reaches every cell (issue 40): a pattern cutting a cell into fields or cards (tagged
tokens, a layout cell), an element of a split, a default, integer arithmetic, ``when`` on several
columns, nested JSON; a template with an empty cell says so; ``const`` is read with ``split``; and
every pattern and template is bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from auditkit.ingest.profiles import load_profile
from auditkit.ingest.profiles.mapping import map_rows
from auditkit.ingest.readers.profile import read_rows
from auditkit.ingest.sources import ingest_source
from auditkit.paytables import ConfigError
from auditkit.store import Store

BACCARAT = '''profile = 1
[fields]
game = {const = "baccarat"}
table_id = {const = "T1"}
shoe_id = {const = "S1"}
round_id = "Id"
round_seq = "Seq"
started_at = "Time"
outcome = {column = "Result", values = {P = "player", B = "banker", T = "tie"}}
%s
[cards]
%s
[times]
kind = "iso"
zone = "America/Chicago"
'''
TAGGED = '''player_cards = {column = "Cards", split = " ", pattern = '(?P<who>[PB]):(?P<card>\\d+:\\d)', group = "card", only = {who = "P"}}
banker_cards = {column = "Cards", split = " ", pattern = '(?P<who>[PB]):(?P<card>\\d+:\\d)', group = "card", only = {who = "B"}}'''
NUMBERED_SUITS = '''notation = "pattern"
pattern = '(?P<rank>\\d+):(?P<suit>\\d)'
suits = {"0" = "c", "1" = "d", "2" = "h", "3" = "s"}'''


def _map(tmp_path: Path, profile: str, data: str, name: str = "x.csv"):
    (tmp_path / "p.toml").write_text(profile)
    (tmp_path / name).write_text(data)
    prof = load_profile(tmp_path / "p.toml")
    table, bad, _, _ = read_rows(prof.source, tmp_path / name)
    return map_rows(table, prof)


def _recs(mapped) -> dict[str, dict]:
    return {rec["round_id"]: rec for _, rec in mapped.rounds}


def test_tagged_card_tokens_are_cut_into_each_hands_cards(tmp_path):
    data = ("Id,Seq,Time,Result,Cards\n"
            "R1,1,2025-06-01T10:00:00,B,P:3:0 B:11:1 P:12:2 B:1:3\n"
            "R2,2,2025-06-01T10:01:00,P,P:9:2 B:2:2 P:13:0 B:4:1 P:2:3\n"
            "R3,3,2025-06-01T10:02:00,P,P:9:2 X:2:2 P:13:0 B:4:1\n")
    out = _map(tmp_path, BACCARAT % (TAGGED, NUMBERED_SUITS), data)
    recs = _recs(out)
    assert recs["R1"]["player_cards"] == ["3c", "Qh"] and recs["R1"]["banker_cards"] == ["Jd", "As"]
    assert recs["R2"]["player_cards"] == ["9h", "Kc", "2s"] and recs["R2"]["banker_cards"] == ["2h", "4d"]
    assert [(row, why) for row, _, why, _ in out.bad] == [
        (4, "player_cards: 'X:2:2' does not match the pattern '(?P<who>[PB]):(?P<card>\\\\d+:\\\\d)'")]


def test_a_layout_cell_gives_several_fields_and_an_element_of_a_split_one(tmp_path):
    fields = '''player_cards = {column = "P", split = "/"}
banker_cards = {column = "P", split = "/", index = -1, pattern = '(?P<c>\\w+)'}
announced.player = {column = "Layout", pattern = '(?P<p>\\d)(?P<b>\\d)\\|(?P<code>\\w*)', group = "p"}
announced.banker = {column = "Layout", pattern = '(?P<p>\\d)(?P<b>\\d)\\|(?P<code>\\w*)', group = "b"}
deal_order = {column = "Layout", pattern = '(?P<p>\\d)(?P<b>\\d)\\|(?P<code>\\w*)', group = "code", values = {d4s = "PBPB"}}'''
    data = ("Id,Seq,Time,Result,P,Layout\n"
            "R1,1,2025-06-01T10:00:00,B,4h/Kd/2s,46|d4s\n"
            "R2,2,2025-06-01T10:01:00,B,4h/Kd/2s,4x|d4s\n")
    out = _map(tmp_path, BACCARAT % (fields, 'notation = "auditkit"'), data)
    rec = _recs(out)["R1"]
    assert rec["announced"] == {"player": 4, "banker": 6} and rec["deal_order"] == "PBPB"
    assert rec["player_cards"] == ["4h", "Kd", "2s"] and rec["banker_cards"] == ["2s"]
    assert len(out.bad) == 1 and "does not match the pattern" in out.bad[0][2] and out.bad[0][0] == 3


def test_a_default_fills_an_empty_cell_and_without_one_it_gives_no_value(tmp_path):
    fields = '''player_cards = {column = "P", split = " "}
banker_cards = {column = "B", split = " "}
dealer_id = {column = "Dealer", default = "unknown"}
table_id = {column = "Table", default = "T9"}'''
    text = (BACCARAT % (fields, 'notation = "auditkit"')).replace('table_id = {const = "T1"}\n', "")
    data = ("Id,Seq,Time,Result,P,B,Dealer,Table\n"
            "R1,1,2025-06-01T10:00:00,B,4h Kd,9s Ts,,\n"
            "R2,2,2025-06-01T10:01:00,B,4h Kd,9s Ts,D7,T2\n")
    recs = _recs(_map(tmp_path, text, data))
    assert recs["R1"]["dealer_id"] == "unknown" and recs["R1"]["table_id"] == "T9"
    assert recs["R2"]["dealer_id"] == "D7" and recs["R2"]["table_id"] == "T2"


def test_a_round_number_computed_from_a_game_counter_and_a_round_in_game_counter(tmp_path):
    fields = '''player_cards = {column = "P", split = " "}
banker_cards = {column = "B", split = " "}'''
    text = (BACCARAT % (fields, 'notation = "auditkit"')).replace(
        'round_seq = "Seq"', 'round_seq = {compute = "({Game} - 1) * 100 + {Round}"}').replace(
        'round_id = "Id"', 'round_id = {template = "T1-{Game}-{Round:03d}"}')
    data = ("Game,Round,Time,Result,P,B\n"
            "1,7,2025-06-01T10:00:00,B,4h Kd,9s Ts\n"
            "3,12,2025-06-01T10:01:00,B,4h Kd,9s Ts\n"
            ",13,2025-06-01T10:02:00,B,4h Kd,9s Ts\n"
            "x,13,2025-06-01T10:03:00,B,4h Kd,9s Ts\n")
    out = _map(tmp_path, text, data)
    recs = _recs(out)
    assert recs["T1-1-007"]["round_seq"] == 7 and recs["T1-3-012"]["round_seq"] == 212
    reasons = {row: why for row, _, why, _ in out.bad}
    assert set(reasons) == {4, 5}
    assert "{Game} is empty" in reasons[4]
    assert reasons[5] == "round_seq: compute '({Game} - 1) * 100 + {Round}': {Game}: not a whole number: 'x'"


@pytest.mark.parametrize("expr", ['__import__("os").system("true")', "{Game}.real", "{Game} ** 99", "{Game} / 2",
                                  "Game + 1", "[1][0] + {Game}", "{Game} if 1 else 2"])
def test_compute_allows_integer_arithmetic_on_columns_only(tmp_path, expr):
    text = BACCARAT % ('player_cards = "P"\nbanker_cards = "B"', 'notation = "auditkit"')
    text = text.replace('round_seq = "Seq"', f"round_seq = {{compute = '{expr}'}}")
    (tmp_path / "p.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"p\.toml: fields\.round_seq\.compute"):
        load_profile(tmp_path / "p.toml")


def test_when_on_several_columns_all_and_any(tmp_path):
    profile = '''profile = 1
[grain]
rows = "hand"
round = ["Round"]
[fields]
game = {const = "blackjack"}
table_id = {const = "BJ"}
round_id = "Round"
started_at = "Time"
dealer_cards = {column = "Cards", split = " ", when = {any = [{column = "Role", equals = "dealer"}, {column = "Role", equals = "house"}]}}
hands.seat = {column = "Seat", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", in = ["main"]}]}}
hands.cards = {column = "Cards", split = " ", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", in = ["main"]}]}}
hands.wager = {column = "Bet", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", in = ["main"]}]}}
hands.net = {column = "Net", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", in = ["main"]}]}}
wagers.seat = {column = "Seat", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", equals = "insurance"}]}}
wagers.bet = {column = "Kind", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", equals = "insurance"}]}}
wagers.amount = {column = "Bet", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", equals = "insurance"}]}}
wagers.net = {column = "Net", when = {all = [{column = "Role", equals = "player"}, {column = "Kind", equals = "insurance"}]}}
[times]
zone = "America/Chicago"
'''
    data = ("Round,Time,Role,Kind,Seat,Cards,Bet,Net\n"
            "1,2025-06-01T10:00:00,player,main,2,Th 9h,10,10\n"
            "1,2025-06-01T10:00:00,player,insurance,2,,5,-5\n"
            "1,2025-06-01T10:00:00,house,,,Ah 7d,,\n")
    out = _map(tmp_path, profile, data)
    assert not out.bad
    rec = _recs(out)["1"]
    assert rec["dealer_cards"] == ["Ah", "7d"]
    assert rec["hands"] == [{"seat": 2, "cards": ["Th", "9h"], "wager": 10, "net": 10}]
    assert rec["wagers"] == [{"seat": 2, "bet": "insurance", "amount": 5, "net": -5}]


def test_rows_from_nested_json_rounds_players_hands_with_their_parents_fields(tmp_path):
    doc = {"rounds": [
        {"id": "R1", "time": "2025-06-01T10:00:00", "dealer": ["Ah", "9c"],
         "players": [{"seat": 2, "hands": [{"hand": 0, "cards": ["Th", "7d"], "bet": 10, "net": -10}]},
                     {"seat": 3, "hands": [{"hand": 0, "cards": ["2h", "7d"], "bet": 5, "net": 5},
                                           {"hand": 1, "cards": ["2c", "9d"], "bet": 5, "net": -5}]}]},
        {"id": "R2", "time": "2025-06-01T10:01:00", "dealer": ["Kh", "9c"],
         "players": [{"seat": 1, "hands": [{"hand": 0, "cards": ["Th", "Jd"], "bet": 20, "net": 20}]}]}]}
    profile = '''profile = 1
[source]
format = "json"
records = "rounds[].players[].hands"
[grain]
rows = "hand"
round = ["rounds[].id"]
[fields]
game = {const = "blackjack"}
table_id = {const = "BJ"}
round_id = "rounds[].id"
started_at = "rounds[].time"
dealer_cards = {column = "rounds[].dealer", json = true}
hands.seat = "rounds[].players[].seat"
hands.hand = "hand"
hands.cards = {column = "cards", json = true}
hands.wager = "bet"
hands.net = "net"
[times]
zone = "America/Chicago"
'''
    out = _map(tmp_path, profile, json.dumps(doc), "x.json")
    assert not out.bad
    recs = _recs(out)
    assert recs["R1"]["dealer_cards"] == ["Ah", "9c"]
    assert [(h["seat"], h["hand"], h["cards"], h["net"]) for h in recs["R1"]["hands"]] == [
        (2, 0, ["Th", "7d"], -10), (3, 0, ["2h", "7d"], 5), (3, 1, ["2c", "9d"], -5)]
    assert recs["R2"]["hands"] == [{"seat": 1, "hand": 0, "cards": ["Th", "Jd"], "wager": 20, "net": 20}]
    store = Store(tmp_path / "s")
    rec, _ = ingest_source(tmp_path / "x.json", store, profile=load_profile(tmp_path / "p.toml"))
    assert rec.stored == 2 and rec.quarantined == 0


def test_a_template_naming_an_empty_cell_quarantines_its_row_with_the_reason(tmp_path):
    text = (BACCARAT % ('player_cards = {column = "P", split = " "}\nbanker_cards = {column = "B", split = " "}',
                        'notation = "auditkit"')).replace('round_id = "Id"', 'round_id = {template = "T1-{Shoe}-{Id}"}')
    data = ("Shoe,Id,Seq,Time,Result,P,B\n"
            "1,7,1,2025-06-01T10:00:00,B,4h Kd,9s Ts\n"
            ",8,2,2025-06-01T10:01:00,B,4h Kd,9s Ts\n")
    out = _map(tmp_path, text, data)
    assert list(_recs(out)) == ["T1-1-7"]
    assert [(row, why) for row, _, why, _ in out.bad] == [
        (3, "round_id: template 'T1-{Shoe}-{Id}': {Shoe} is empty (give the field a default)")]


def test_a_const_is_read_as_a_cell_with_its_split(tmp_path):
    profile = '''profile = 1
[fields]
game = {const = "pai_gow_poker"}
table_id = {const = "PG"}
round_id = "Id"
started_at = "Time"
dice = {const = "4-2-6", split = "-"}
first_position = {const = "5"}
dealer.cards = {column = "D", split = " "}
hands.seat = {const = 2}
hands.cards = {column = "H", split = " "}
hands.wager = "Bet"
hands.net = "Net"
[times]
zone = "America/Chicago"
'''
    data = "Id,Time,D,H,Bet,Net\nR1,2025-06-01T10:00:00,Ah Kh Qh Jh Th 9h 8h,2c 3c 4c 5c 6c 7c 8c,10,-10\n"
    out = _map(tmp_path, profile, data)
    rec = _recs(out)["R1"]
    assert rec["dice"] == [4, 2, 6] and rec["first_position"] == 5


@pytest.mark.parametrize(("where", "pattern"), [
    ("fields.player_cards.pattern", "(a+)+$"), ("fields.player_cards.pattern", "(\\\\d*)*x"),
    ("fields.player_cards.pattern", "(a|ab)*c"), ("fields.player_cards.pattern", "a{5000}"),
    ("fields.player_cards.pattern", ".*.*.*.*.*x"),
    ("cards.pattern", "(?P<rank>(\\\\w+\\\\s?)+)$")])
def test_a_pattern_that_can_backtrack_without_bound_is_refused_up_front(tmp_path, where, pattern):
    if where == "cards.pattern":
        fields, cards = 'player_cards = "P"\nbanker_cards = "B"', f"notation = \"pattern\"\npattern = '{pattern}'"
    else:
        fields = f"player_cards = {{column = \"P\", pattern = '{pattern}'}}\nbanker_cards = \"B\""
        cards = 'notation = "auditkit"'
    (tmp_path / "p.toml").write_text(BACCARAT % (fields, cards))
    with pytest.raises(ConfigError, match=rf"p\.toml: {where}: bad pattern"):
        load_profile(tmp_path / "p.toml")


def test_a_bounded_pattern_reads_a_hostile_cell_at_once(tmp_path):
    fields = '''player_cards = {column = "P", pattern = '(?P<c>(?:10|[2-9JQKA])+[cdhs])'}
banker_cards = "B"'''
    hostile = "1" * 32 + "!"
    data = f"Id,Seq,Time,Result,P,B\nR1,1,2025-06-01T10:00:00,B,{hostile},9s\n"
    started = time.monotonic()
    out = _map(tmp_path, BACCARAT % (fields, 'notation = "auditkit"'), data)
    assert time.monotonic() - started < 5 and len(out.bad) == 1


@pytest.mark.parametrize("template", ["{Id:999999999d}", "{Id:.5000}", "{Id:>99999}"])
def test_a_template_width_or_precision_beyond_the_cap_is_refused(tmp_path, template):
    text = (BACCARAT % ('player_cards = "P"\nbanker_cards = "B"', 'notation = "auditkit"')).replace(
        'round_id = "Id"', f'round_id = {{template = "{template}"}}')
    (tmp_path / "p.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"p\.toml: fields\.round_id\.template: .*above 1000"):
        load_profile(tmp_path / "p.toml")


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_a_field_of_an_object_is_reached_by_its_dotted_path(tmp_path, fmt):
    rounds = [{"id": "R1", "time": "2025-06-01T10:00:00", "dealer": {"cards": ["Th", "8d"], "id": "D4"},
               "hand": {"seat": 2, "cards": ["9h", "Td"], "result": {"wager": 10, "net": 10}}}]
    profile = f'''profile = 1
[source]
format = "{fmt}"
[fields]
game = {{const = "blackjack"}}
table_id = {{const = "BJ"}}
round_id = "id"
started_at = "time"
dealer_id = "dealer.id"
dealer_cards = {{column = "dealer.cards", json = true}}
hands.seat = "hand.seat"
hands.cards = {{column = "hand.cards", json = true}}
hands.wager = "hand.result.wager"
hands.net = "hand.result.net"
[times]
zone = "America/Chicago"
'''
    data = json.dumps(rounds) if fmt == "json" else "".join(json.dumps(r) + "\n" for r in rounds)
    out = _map(tmp_path, profile, data, f"x.{fmt}")
    assert not out.bad
    assert _recs(out)["R1"] == {
        "game": "blackjack", "table_id": "BJ", "round_id": "R1", "started_at": "2025-06-01T10:00:00-05:00",
        "dealer_id": "D4", "dealer_cards": ["Th", "8d"], "hands": [{"seat": 2, "cards": ["9h", "Td"], "wager": 10,
                                                                   "net": 10}]}


def test_tokens_written_without_a_separator_are_read_one_after_another(tmp_path):
    repeat = TAGGED.replace('split = " "', "repeat = true").replace("[PB]):(", "[PB])(")
    data = ("Id,Seq,Time,Result,Cards\n"
            "R1,1,2025-06-01T10:00:00,B,P3:0B11:1 P12:2B1:3\n"
            "R2,2,2025-06-01T10:01:00,B,P3:0B11:1-P12:2B1:3\n")
    out = _map(tmp_path, BACCARAT % (repeat, NUMBERED_SUITS), data)
    rec = _recs(out)["R1"]
    assert rec["player_cards"] == ["3c", "Qh"] and rec["banker_cards"] == ["Jd", "As"]
    assert [row for row, *_ in out.bad] == [3] and "'-P12:2B1:3' does not match the pattern" in out.bad[0][2]


def test_a_group_that_takes_no_part_is_no_value_for_one_value_and_a_reason_in_a_list(tmp_path):
    fields = '''player_cards = {column = "P", split = " ", pattern = '(?P<c>\\w\\w)?-', group = "c"}
banker_cards = {column = "B", split = " "}
dealer_id = {column = "Code", pattern = 'D(?P<id>\\d+)?', group = "id"}'''
    data = ("Id,Seq,Time,Result,P,B,Code\n"
            "R1,1,2025-06-01T10:00:00,B,4h- Kd-,9s Ts,D17\n"
            "R2,2,2025-06-01T10:01:00,B,4h- Kd-,9s Ts,D\n"
            "R3,3,2025-06-01T10:02:00,B,4h- -,9s Ts,D17\n")
    out = _map(tmp_path, BACCARAT % (fields, 'notation = "auditkit"'), data)
    recs = _recs(out)
    assert recs["R1"]["dealer_id"] == "17" and recs["R1"]["player_cards"] == ["4h", "Kd"]
    assert "dealer_id" not in recs["R2"]
    assert [(row, why) for row, _, why, _ in out.bad] == [(4, "player_cards: '4h- -': the group 'c' is empty in an element")]


def test_a_cell_on_a_row_its_field_does_not_take_cannot_fail(tmp_path):
    profile = '''profile = 1
[grain]
rows = "hand"
round = ["Round"]
[fields]
game = {const = "blackjack"}
table_id = {const = "BJ"}
round_id = "Round"
started_at = "Time"
dealer_cards = {column = "Cards", split = " ", when = {column = "Role", equals = "dealer"}}
hands.seat = {column = "Seat", when = {column = "Role", equals = "player"}}
hands.cards = {column = "Cards", split = " ", when = {column = "Role", equals = "player"}}
hands.wager = {column = "Bet", when = {column = "Role", equals = "player"}}
hands.net = {column = "Net", when = {column = "Role", equals = "player"}}
[times]
zone = "America/Chicago"
'''
    data = ("Round,Time,Role,Seat,Cards,Bet,Net\n"
            "1,2025-06-01T10:00:00,player,2,Th 9h,10,10\n"
            "1,2025-06-01T10:00:00,dealer,n/a,Ah 7d,n/a,n/a\n"
            "2,2025-06-01T10:01:00,player,2,Th 9h,n/a,10\n"
            "2,2025-06-01T10:01:00,dealer,,Ah 7d,,\n")
    out = _map(tmp_path, profile, data)
    assert list(_recs(out)) == ["1"]
    assert [(row, why) for row, _, why, _ in out.bad][0] == (4, "hands.wager: not an amount: 'n/a'")
