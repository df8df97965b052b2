"""``auditkit profile check`` as a preview (issue 40): the first rounds beside their source rows in words,
the coverage per citation the rounds read will get, the rows that cannot be mapped grouped by reason."""

from __future__ import annotations

from auditkit.cli.main import main
from auditkit.ingest.profiles.preview import card_words, round_words, unmapped_lines
from tests.conftest import example_records
from tests.profile_exports import export


def test_cards_in_words_with_suit_symbols_and_without_suits_not_recorded():
    assert card_words(["Ac", "Td", "Qh", "9s", "JK"]) == "A♣ 10♦ Q♥ 9♠ joker"
    assert card_words(["7s", "Ts"], suits=False) == "7 10"


def test_a_round_in_words_says_the_cards_each_wager_and_net_and_who_won():
    rec = example_records("baccarat")[0]
    words = round_words(rec)
    assert words[0].startswith("baccarat, table EX-BAC-1, 2025-06-02T09:21:45-05:00, dealer D1103")
    assert "player: A♣ J♦ 4♠ (5)" in words and "banker: J♦ 5♣ 5♥ (0)" in words
    assert "outcome: player wins" in words
    assert "seat 1: player 100 won 100" in words and "seat 2: banker 150 lost 150" in words
    assert words[-1] == "players won 355"  # 100 - 150 - 25 + 50 + 200 + 200 - 20
    tcp = round_words(example_records("three_card_poker")[0])
    assert "seat 2: 4♠ 8♠ 5♥; decision fold; ante 100 lost 100; pair plus 25 lost 25" in tcp
    assert tcp[-1] == "the house won 125"
    blackjack = round_words(example_records("blackjack")[0])
    assert "seat 1: 8♣ 3♦ 9♦; initial wager 25; doubled; wager 55 lost 55" in blackjack
    assert "low joker K♦" in round_words(example_records("pai_gow_poker")[0])[4]


def test_unmapped_rows_are_grouped_by_reason_with_a_count():
    bad = [(7, "started_at: time '6/2/20x5' does not match"), (4, "started_at: time '6/1/20y5' does not match"),
           (9, "outcome: value 'draw' is not in the profile's table (player, banker, tie)")]
    lines = unmapped_lines(bad, limit=200)
    assert lines[0] == "3 row(s) could not be mapped, for 2 reason(s):"
    assert lines[1] == "  2 row(s): started_at: time '6/1/20y5' does not match"
    assert lines[2:4] == ["    row 4: started_at: time '6/1/20y5' does not match",
                          "    row 7: started_at: time '6/2/20x5' does not match"]
    assert lines[4].startswith("  1 row(s): outcome: value 'draw'")
    assert unmapped_lines(bad, limit=1)[-1] == "  ... 2 more row(s) not listed (--max-rows)"


def test_profile_check_previews_rounds_beside_their_rows_with_coverage_per_citation(tmp_path, capsys):
    csv_path, profile, _ = export(example_records("baccarat"), tmp_path, grain="hand", times="strftime",
                                  money="dollars", notation="rank-suit")
    assert main(["profile", "check", str(profile), str(csv_path), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    block = out.split("round from row 2: ", 1)[1].split("\n\n", 1)[0]
    assert "| baccarat, table EX-BAC-1" in block and "| player: A♣ J♦ 4♠ (5)" in block
    assert "| seat 1: player 100 won 100" in block and "| players won 355" in block
    assert "row 2" in block.splitlines()[1]  # the source row beside the words
    assert "coverage of the 78 baccarat round(s) read, per citation:" in out
    assert any(line.split()[:4] == ["68", "IAC", "10-10-14(b)(5)", "baccarat.b5"] and "checks all 78" in line
               for line in out.splitlines())
    broken = tmp_path / "broken.csv"
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    for k in (3, 30, 60):
        lines[k] = lines[k].replace("/2025 ", "/20x5 ")
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["profile", "check", str(profile), str(broken)]) == 1
    out = capsys.readouterr().out
    assert "could not be mapped, for 2 reason(s):" in out  # the bad times, and their rounds' other rows
    assert "  3 row(s): started_at: time" in out


def test_profile_check_names_the_evidence_left_out_beside_what_is_not_recorded(tmp_path, capsys):
    csv_path, profile, _ = export(example_records("pai_gow_poker"), tmp_path)
    text = profile.read_text()
    assert main(["profile", "check", str(csv_path), "--profile", str(profile)]) in (0, 1)
    out = capsys.readouterr().out
    assert "not recorded by this export" in out and "left out, read as a log" not in out
    profile.write_text(text.replace("[source]", 'left_out = ["events"]\n[source]', 1))
    assert main(["profile", "check", str(csv_path), "--profile", str(profile)]) in (0, 1)
    out = capsys.readouterr().out
    assert "left out, read as a log that leaves it out (rules check what remains): events" in out
