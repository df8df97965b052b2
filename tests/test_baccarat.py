"""Baccarat and mini baccarat: 68 IAC 10-10-14, one test per catalog citation.

Rounds are built as spec records by :func:`rnd`, which fills in the outcome
and the nets of the cards as dealt with a small reference scorer written here
(independent of the rules engine), so that a round is clean unless a test
breaks one thing on purpose.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import example_records, expected_findings

from auditkit.games.baccarat.tableau import banker_draws, outcome_of, player_draws
from auditkit.ingest.records import parse_record
from auditkit.paytables import load_config
from auditkit.schema import schema_for
from auditkit.validate import validate_records, validate_tables

SEC = "68 IAC 10-10-14"
POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0, **{str(d): d for d in range(2, 10)}}
RANK_OF = {0: "K", 1: "A", **{d: str(d) for d in range(2, 10)}}
T0 = datetime(2025, 6, 2, 9, 0, tzinfo=timezone(timedelta(hours=-5)))
_ids = itertools.count(1)


def c(value: int, suit: str = "h") -> str:
    """A card of a baccarat point value (0 is a king)."""
    return RANK_OF[value] + suit


def total(cards: list[str]) -> int:
    return sum(POINTS[x[0].upper()] for x in cards) % 10


def ref_outcome(player: list[str], banker: list[str]) -> str:
    p, b = total(player), total(banker)
    return "player" if p > b else "banker" if b > p else "tie"


def ref_net(bet: str, amount: float, outcome: str, banker_total: int) -> float:
    """Default paytable: player 1:1, banker 0.95:1, tie 8:1, player/banker push on a tie."""
    if outcome == "tie" and bet in ("player", "banker"):
        return 0.0
    if bet == outcome:
        return {"player": amount, "banker": round(amount * 0.95, 2), "tie": 8 * amount}[bet]
    return -amount


def rnd(player: list[str], banker: list[str], *, outcome: str | None = None, wagers: list[dict] | None = None,
        rid: str | None = None, shoe: str | None = None, seq: int | None = None, table: str = "T1",
        game: str = "baccarat", **extra) -> dict:
    """A spec round record; outcome and missing nets are those of the cards as dealt.

    Each round has its own shoe unless ``shoe`` is given (so card counts stay within a shoe).
    """
    n = next(_ids)
    dealt = ref_outcome(player, banker)
    if wagers is None:
        wagers = [{"seat": 1, "bet": "player", "amount": 100}, {"seat": 2, "bet": "banker", "amount": 100},
                  {"seat": 3, "bet": "tie", "amount": 10}]
    wagers = [dict(w) for w in wagers]
    for w in wagers:
        w.setdefault("net", ref_net(w["bet"], w["amount"], dealt, total(banker)))
    return {"round_id": rid or f"R{n}", "game": game, "table_id": table,
            "started_at": (T0 + timedelta(seconds=60 * n)).isoformat(), "dealer_id": "D1",
            "shoe_id": shoe or f"S{n}", "round_seq": seq if seq is not None else n, "player_cards": player,
            "banker_cards": banker, "outcome": outcome or dealt, "wagers": wagers, **extra}


def found(records: list[dict], config=None) -> set[tuple[str, str]]:
    f = validate_records(records, config)
    return set(zip(f["round_id"], f["citation"], strict=True))


def check(records: list[dict], expected: dict[str, str | None], config=None) -> pd.DataFrame:
    """Validate and demand exactly ``{round_id: citation}`` (None: clean)."""
    f = validate_records(records, config)
    want = {(r, cit) for r, cit in expected.items() if cit is not None}
    assert set(zip(f["round_id"], f["citation"], strict=True)) == want, f[["round_id", "citation", "message"]].to_string()
    return f


# ---- (a) -------------------------------------------------------------------------------------
def test_68_IAC_10_10_14_a():
    recs = [
        rnd(["6d", "5c", "Th"], ["9h", "4d", "Th"], rid="ok", announced={"player": 1, "banker": 3}),
        rnd(["6d", "5c", "Th"], ["9h", "4d", "Th"], rid="ok_partial", announced={"banker": 3}),
        rnd(["6d", "5c", "Th"], ["9h", "4d", "Th"], rid="none"),
        rnd(["6d", "5c", "Th"], ["9h", "4d", "Th"], rid="bad_player", announced={"player": 3, "banker": 3}),
        rnd(["6d", "5c", "Th"], ["9h", "4d", "Th"], rid="bad_banker", announced={"player": 1, "banker": 2}),
        # the announcement is of the two-card totals, not the final ones
        rnd(["6d", "5c", "3h"], ["9h", "4d", "Th"], rid="final_announced", announced={"player": 4, "banker": 3}),
    ]
    f = check(recs, {"ok": None, "ok_partial": None, "none": None, "bad_player": f"{SEC}(a)",
                     "bad_banker": f"{SEC}(a)", "final_announced": f"{SEC}(a)"})
    msg = f.set_index("round_id").loc["bad_player", "message"]
    assert "player 1 (6d 5c) announced as 3" in msg


# ---- (b): the full tableau ---------------------------------------------------------------------
# Written from the regulation text, independently of the rules module: for a banker
# two-card total 0-7, the player third-card values on which the banker draws.
BANKER_DRAWS_ON = {0: set(range(10)), 1: set(range(10)), 2: set(range(10)), 3: set(range(10)) - {8},
                   4: set(range(2, 8)), 5: set(range(4, 8)), 6: {6, 7}, 7: set()}
SUB_AFTER_PLAYER_DREW = {0: "(b)(11)", 1: "(b)(11)", 2: "(b)(11)", 3: "(b)(5)", 4: "(b)(6)", 5: "(b)(7)",
                         6: "(b)(8)", 7: "(b)(4)"}


def test_tableau_every_cell():
    """Every banker total 0-7 x player third card 0-9 and 'player stood': right action clean, wrong one cited."""
    recs, want = [], {}
    for b2 in range(8):
        banker = ["Kc", c(b2, "c")]
        for p3 in list(range(10)) + [None]:
            if p3 is None:  # player 6 stands; banker 0-5 draws (b)(9), 6-7 stands (b)(10)
                player, draws, sub = ["Ks", "6s"], b2 <= 5, "(b)(9)" if b2 <= 5 else "(b)(10)"
            else:           # player 3 draws the third card p3
                player, draws, sub = ["Ks", "3s", c(p3, "d")], p3 in BANKER_DRAWS_ON[b2], SUB_AFTER_PLAYER_DREW[b2]
            right = banker + ["2h"] if draws else banker
            wrong = banker if draws else banker + ["2h"]
            tag = f"b{b2}_p{'stood' if p3 is None else p3}"
            recs += [rnd(player, right, rid=f"{tag}_right"), rnd(player, wrong, rid=f"{tag}_wrong")]
            want[f"{tag}_right"] = None
            want[f"{tag}_wrong"] = f"{SEC}{sub}"
    assert len(recs) == 8 * 11 * 2
    check(recs, want)


def test_tableau_function_matches_regulation():
    """The engine's draw functions agree with the table above on every cell (including naturals)."""
    for p2 in range(10):
        for b2 in range(10):
            nat = p2 >= 8 or b2 >= 8
            assert player_draws(np.array([p2]), np.array([b2]))[0] == (not nat and p2 <= 5)
            for p3 in range(10):
                got = banker_draws(np.array([p2]), np.array([b2]), np.array([True]), np.array([p3]))[0]
                assert got == (not nat and p3 in BANKER_DRAWS_ON.get(b2, set()))
            got = banker_draws(np.array([p2]), np.array([b2]), np.array([False]), np.array([0]))[0]
            assert got == (not nat and b2 <= 5)


def test_68_IAC_10_10_14_b_1():
    recs = [rnd(["Ks", c(p2)], ["Kc", "7c"], rid=f"stood{p2}") for p2 in range(6)]
    recs += [rnd(["Ks", c(p2), "2d"], ["Kc", "7c"], rid=f"drew{p2}") for p2 in range(6)]
    # player 5 stood against banker 0 that drew: banker drew correctly under either reading
    recs.append(rnd(["6d", "9s"], ["9c", "Ad", "5c"], rid="example"))
    want = {f"stood{p}": f"{SEC}(b)(1)" for p in range(6)} | {f"drew{p}": None for p in range(6)}
    f = check(recs, want | {"example": f"{SEC}(b)(1)"})
    assert "player 5 (6d 9s)" in f.set_index("round_id").loc["example", "message"]


def test_68_IAC_10_10_14_b_2():
    recs = []
    for p2 in (6, 7):
        recs.append(rnd(["Ks", c(p2)], ["Kc", "7c"], rid=f"stood{p2}"))
        recs.append(rnd(["Ks", c(p2), "Kd"], ["Kc", "7c"], rid=f"drew{p2}"))
    check(recs, {"stood6": None, "stood7": None, "drew6": f"{SEC}(b)(2)", "drew7": f"{SEC}(b)(2)"})


def test_68_IAC_10_10_14_b_3():
    recs, want = [], {}
    for side in ("player", "banker"):
        for nat in (8, 9):
            for other in (0, 3, 5, 6, 7):
                hand, opp = ["Kh", c(nat)], ["Qd", c(other, "d")]
                player, banker = (hand, opp) if side == "player" else (opp, hand)
                tag = f"{side}{nat}_v{other}"
                recs.append(rnd(player, banker, rid=f"{tag}_ok"))
                recs.append(rnd(player + ["4s"], banker, rid=f"{tag}_pdrew"))
                recs.append(rnd(player, banker + ["4s"], rid=f"{tag}_bdrew"))
                recs.append(rnd(player + ["4s"], banker + ["5s"], rid=f"{tag}_both"))
                want |= {f"{tag}_ok": None, f"{tag}_pdrew": f"{SEC}(b)(3)", f"{tag}_bdrew": f"{SEC}(b)(3)",
                         f"{tag}_both": f"{SEC}(b)(3)"}
    # both naturals: 8 v 9, 9 v 9
    recs += [rnd(["4s", "4h"], ["9d", "Kd"], rid="8v9"), rnd(["9s", "Jh"], ["9d", "Kd"], rid="9v9")]
    f = check(recs, want | {"8v9": None, "9v9": None})
    assert len(f) == 60  # one finding per faulty round (20 x 3), even when both hands drew
    msg = f.set_index("round_id").loc["banker8_v3_both", "message"]
    assert "banker natural 8" in msg and "player drew 4s" in msg and "banker drew 5s" in msg


def test_68_IAC_10_10_14_b_4():
    recs = [rnd(["Ks", "3s", c(p3)], ["Kc", "7c"], rid=f"ok{p3}") for p3 in range(10)]
    recs += [rnd(["Ks", "3s", c(p3)], ["Kc", "7c", "Ad"], rid=f"bad{p3}") for p3 in range(10)]
    check(recs, {f"ok{p}": None for p in range(10)} | {f"bad{p}": f"{SEC}(b)(4)" for p in range(10)})


def _banker_sub_test(b2: int, sub: str) -> None:
    recs, want = [], {}
    for p3 in range(10):
        draws = p3 in BANKER_DRAWS_ON[b2]
        banker = ["Kc", c(b2, "c")]
        right, wrong = (banker + ["9d"], banker) if draws else (banker, banker + ["9d"])
        recs += [rnd(["Ks", "3s", c(p3)], right, rid=f"ok{p3}"), rnd(["Ks", "3s", c(p3)], wrong, rid=f"bad{p3}")]
        want |= {f"ok{p3}": None, f"bad{p3}": f"{SEC}{sub}"}
    check(recs, want)


def test_68_IAC_10_10_14_b_5():
    _banker_sub_test(3, "(b)(5)")
    # banker 3 drew on a player third card 8: the worked example
    check([rnd(["Kh", "As", "8d"], ["Ad", "2c", "Kd"], rid="x")], {"x": f"{SEC}(b)(5)"})


def test_68_IAC_10_10_14_b_6():
    _banker_sub_test(4, "(b)(6)")


def test_68_IAC_10_10_14_b_7():
    _banker_sub_test(5, "(b)(7)")


def test_68_IAC_10_10_14_b_8():
    _banker_sub_test(6, "(b)(8)")


def test_68_IAC_10_10_14_b_9():
    recs, want = [], {}
    for p2 in (6, 7):
        for b2 in range(6):
            recs.append(rnd(["Ks", c(p2)], ["Kc", c(b2, "c"), "3d"], rid=f"ok{p2}{b2}"))
            recs.append(rnd(["Ks", c(p2)], ["Kc", c(b2, "c")], rid=f"bad{p2}{b2}"))
            want |= {f"ok{p2}{b2}": None, f"bad{p2}{b2}": f"{SEC}(b)(9)"}
    # player wrongly stood on 4: the banker is judged on the cards as dealt (player stood), so a
    # banker 5 that stood is a (b)(9) finding besides the player's (b)(1)
    recs.append(rnd(["Ks", "4s"], ["Kc", "5c"], rid="after_wrong"))
    f = validate_records(recs)
    got = set(zip(f["round_id"], f["citation"], strict=True))
    assert got == {(r, cit) for r, cit in want.items() if cit} | {("after_wrong", f"{SEC}(b)(1)"),
                                                                  ("after_wrong", f"{SEC}(b)(9)")}


def test_68_IAC_10_10_14_b_10():
    recs = [
        rnd(["Ks", "6s"], ["Kc", "6c"], rid="p6b6"),            # player 6 v banker 6: both stand, a tie
        rnd(["Ks", "7s"], ["Kc", "6c"], rid="p7b6"),
        rnd(["Ks", "6s"], ["Kc", "7c"], rid="p6b7"),
        rnd(["Ks", "6s"], ["Kc", "6c", "3d"], rid="p6b6_drew"),
        rnd(["Ks", "7s"], ["Kc", "7c", "Kd"], rid="p7b7_drew"),
        rnd(["Ks", "6s"], ["Kc", "6c"], outcome="banker", rid="p6b6_not_tie"),
    ]
    check(recs, {"p6b6": None, "p7b6": None, "p6b7": None, "p6b6_drew": f"{SEC}(b)(10)",
                     "p7b7_drew": f"{SEC}(b)(10)", "p6b6_not_tie": "outcome"})
    assert recs[0]["outcome"] == "tie"


def test_player_6_v_banker_6():
    """Player 6 v banker 6 is a tie: tie bets paid 8:1, player and banker bets push."""
    r = rnd(["Ks", "6s"], ["Kc", "6c"], rid="t")
    assert [w["net"] for w in r["wagers"]] == [0.0, 0.0, 80.0]
    check([r], {"t": None})
    bad = rnd(["Ks", "6s"], ["Kc", "6c"], rid="t2", wagers=[{"seat": 1, "bet": "banker", "amount": 100, "net": 95}])
    check([bad], {"t2": "paytable"})


def test_68_IAC_10_10_14_b_11():
    recs = []
    for b2 in range(3):
        for p3 in (0, 8, 9):
            recs.append(rnd(["Ks", "2s", c(p3)], ["Kc", c(b2, "c"), "Ad"], rid=f"ok{b2}{p3}"))
            recs.append(rnd(["Ks", "2s", c(p3)], ["Kc", c(b2, "c")], rid=f"bad{b2}{p3}"))
    want = {r["round_id"]: (f"{SEC}(b)(11)" if r["round_id"].startswith("bad") else None) for r in recs}
    check(recs, want)


# ---- (c), (d) --------------------------------------------------------------------------------
def test_68_IAC_10_10_14_c():
    p, b = ["4c", "Jc", "2h"], ["4d", "7h", "8d"]  # player 4 draws 2, banker 1 draws
    recs = [
        rnd(p, b, rid="default"),
        rnd(p, b, rid="ok", deal_order="PBPBPB"),
        rnd(p, b, rid="bad", deal_order="PBPBBP"),
        rnd(p, b, rid="bad2", deal_order="PPBBBP"),
        rnd(["6c", "Kh"], ["Jc", "Th", "Kd"], rid="banker_only", deal_order="PBPBB"),
        rnd(["4c", "Jc", "2h"], ["6d", "Kh"], rid="player_only", deal_order="PBPBP"),
    ]
    f = check(recs, {"default": None, "ok": None, "bad": f"{SEC}(c)", "bad2": f"{SEC}(c)",
                     "banker_only": None, "player_only": None})
    assert "8d dealt before the player's 2h" in f.set_index("round_id").loc["bad", "message"]


def test_68_IAC_10_10_14_d():
    recs = [
        rnd(["4d", "6h", "Qd"], ["2d", "4c"], rid="three"),
        rnd(["4d", "6h", "Qd", "Ts"], ["2d", "4c"], rid="player4"),
        rnd(["4d", "6h", "Qd"], ["2d", "Kc", "Qs", "Js"], rid="banker4"),
        rnd(["4d", "6h", "Qd", "Ts", "Kh"], ["2d", "4c"], rid="player5"),
    ]
    f = check(recs, {"three": None, "player4": f"{SEC}(d)", "banker4": f"{SEC}(d)", "player5": f"{SEC}(d)"})
    assert "player hand holds 5 cards" in f.set_index("round_id").loc["player5", "message"]


# ---- (e) -------------------------------------------------------------------------------------
def test_68_IAC_10_10_14_e():
    hand = (["Ks", "7s"], ["Kc", "7c"])
    shoe1 = [rnd(*hand, rid=f"A{s}", shoe="A", seq=s, cut_card=(s == 3)) for s in range(1, 7)]
    shoe2 = [rnd(*hand, rid=f"B{s}", shoe="B", seq=s, cut_card=(s == 5)) for s in range(1, 7)]
    shoe3 = [rnd(*hand, rid=f"C{s}", shoe="C", seq=s) for s in range(1, 9)]           # no cut card seen
    shoe4 = [rnd(*hand, rid=f"D{s}", shoe="D", seq=s, cut_card=(s == 4)) for s in range(1, 5)]  # last hand missing
    recs = shoe1 + shoe2 + shoe3 + shoe4
    recs = recs[::-1]  # round_seq order decides, not record order
    want = {r["round_id"]: None for r in recs} | {"A5": f"{SEC}(e)", "A6": f"{SEC}(e)"}
    f = check(recs, want)
    assert "cutting card appeared in round_seq 3" in f.set_index("round_id").loc["A6", "message"]
    # the same shoe id at another table is another shoe
    other = [rnd(*hand, rid=f"X{s}", shoe="A", table="T2", seq=s, cut_card=(s == 1)) for s in range(1, 3)]
    check(shoe1 + other, {"A5": f"{SEC}(e)", "A6": f"{SEC}(e)"})


# ---- outcome ------------------------------------------------------------------------------------
def test_outcome():
    p, b = ["Ts", "Jd", "7h"], ["Kh", "7d"]  # 7 v 7
    recs = [rnd(p, b, rid="tie"), rnd(p, b, outcome="banker", rid="as_banker"),
            rnd(["9s", "Kd"], ["2c", "5d"], rid="pwin"), rnd(["9s", "Kd"], ["2c", "5d"], outcome="tie", rid="p_as_tie"),
            rnd(["2s", "Kd", "Kh"], ["Qc", "2d", "3h"], rid="bwin", game="mini_baccarat"),
            rnd(["2s", "Kd", "Kh"], ["Qc", "2d", "3h"], rid="b_as_p", outcome="player", game="mini_baccarat")]
    # nets follow the cards as dealt, so only the recorded outcome is wrong
    f = check(recs, {"tie": None, "as_banker": "outcome", "pwin": None, "p_as_tie": "outcome", "bwin": None,
                     "b_as_p": "outcome"})
    row = f.set_index("round_id").loc["as_banker"]
    assert (row["expected"], row["recorded"]) == ("tie", "banker")
    assert set(f["game"]) == {"baccarat", "mini_baccarat"}


# ---- paytable ------------------------------------------------------------------------------------
def W(seat: int, bet: str, amount: float, net: float) -> dict:
    return {"seat": seat, "bet": bet, "amount": amount, "net": net}


def test_paytable():
    pwin, bwin, tie = (["9s", "Kd"], ["2c", "5d"]), (["2s", "Kd", "Kh"], ["Qc", "5d"]), (["Ks", "6s"], ["Kc", "6c"])
    recs = [
        rnd(*pwin, rid="pwin_ok", wagers=[W(1, "player", 25, 25), W(2, "banker", 50, -50), W(3, "tie", 5, -5)]),
        rnd(*pwin, rid="pwin_commission", wagers=[W(10, "player", 25, 23.75)]),
        rnd(*bwin, rid="bwin_ok", wagers=[W(1, "banker", 100, 95), W(2, "banker", 37.5, 35.62),
                                          W(3, "banker", 37.5, 35.63), W(4, "player", 10, -10)]),
        rnd(*bwin, rid="bwin_no_commission", wagers=[W(1, "banker", 100, 100), W(2, "banker", 20, 20)]),
        rnd(*bwin, rid="bwin_off_cent", wagers=[W(2, "banker", 37.5, 35.61)]),
        rnd(*tie, rid="tie_ok", wagers=[W(1, "tie", 12.5, 100), W(2, "player", 50, 0), W(3, "banker", 50, 0)]),
        rnd(*tie, rid="tie_lost_stakes", wagers=[W(2, "player", 50, -50), W(3, "banker", 50, -50)]),
        rnd(*tie, rid="tie_9to1", wagers=[W(1, "tie", 10, 90)]),
        rnd(*pwin, rid="side_bets", wagers=[W(1, "player_pair", 10, 110), W(2, "dragon", 5, -5)]),
        rnd(*pwin, rid="void_ok", status="void", wagers=[W(1, "player", 10, 0), W(2, "player_pair", 10, 0)]),
        rnd(*pwin, rid="void_paid", status="void", wagers=[W(1, "player", 10, 10), W(2, "player_pair", 5, -5)]),
        rnd(*pwin, rid="dead_paid", status="dead", wagers=[W(1, "banker", 10, -10)]),
    ]
    f = check(recs, {"pwin_ok": None, "pwin_commission": "paytable", "bwin_ok": None, "bwin_no_commission": "paytable",
                     "bwin_off_cent": "paytable", "tie_ok": None, "tie_lost_stakes": "paytable",
                     "tie_9to1": "paytable", "side_bets": None, "void_ok": None, "void_paid": "void",
                     "dead_paid": "void"}).set_index("round_id")
    disc = f["discrepancy"].to_dict()
    assert disc["pwin_commission"] == pytest.approx(-1.25)
    assert disc["bwin_no_commission"] == pytest.approx(5 + 1)        # summed over the round's wagers
    assert disc["bwin_off_cent"] == pytest.approx(35.61 - 35.63)
    assert disc["tie_lost_stakes"] == pytest.approx(-100)
    assert disc["tie_9to1"] == pytest.approx(10)
    assert disc["void_paid"] == pytest.approx(10 - 5)
    assert f.loc["pwin_commission", "seats"] == "10"
    assert f.loc["bwin_no_commission", "seats"] == "1,2"
    assert "seat 10 player bet 25.00" in f.loc["pwin_commission", "message"]
    assert "net +23.75, expected +25.00" in f.loc["pwin_commission", "message"]
    assert (f.loc["bwin_off_cent", "expected"], f.loc["bwin_off_cent", "recorded"]) == ("+35.63", "+35.61")
    # findings as data: the expected and recorded nets of the wagers each finding covers
    amounts = f[["expected_amount", "recorded_amount"]].to_dict("index")
    assert amounts["pwin_commission"] == pytest.approx({"expected_amount": 25.0, "recorded_amount": 23.75})
    assert amounts["bwin_no_commission"] == pytest.approx({"expected_amount": 95 + 19, "recorded_amount": 120})
    assert amounts["tie_lost_stakes"] == pytest.approx({"expected_amount": 0, "recorded_amount": -100})
    assert amounts["void_paid"] == pytest.approx({"expected_amount": 0, "recorded_amount": 5})
    assert np.allclose(f["discrepancy"], f["recorded_amount"] - f["expected_amount"], atol=1e-9)


def test_paytable_configured(tmp_path):
    """A 9:1 tie table and a commission-free banker (banker six pays half), loaded from TOML."""
    (tmp_path / "nine.toml").write_text("[baccarat]\ntie = 9.0\n")
    (tmp_path / "ez.toml").write_text(
        "[baccarat]\nbanker_commission = 0.0\nbanker_six = 0.5\n\n"
        '[tables."HIGH-*".baccarat]\ntie = 9.0\n')
    nine, ez = load_config(tmp_path / "nine.toml"), load_config(tmp_path / "ez.toml")
    tie, b7, b6 = (["Ks", "6s"], ["Kc", "6c"]), (["2s", "Kd", "Kh"], ["Qc", "7d"]), (["2s", "Kd", "Kh"], ["Qc", "6d"])
    recs = [rnd(*tie, rid="tie9", wagers=[W(1, "tie", 10, 90)]),
            rnd(*tie, rid="tie8", wagers=[W(1, "tie", 10, 80)])]
    check(recs, {"tie9": None, "tie8": "paytable"}, config=nine)
    check(recs, {"tie9": "paytable", "tie8": None})
    recs = [rnd(*b7, rid="b7_full", wagers=[W(1, "banker", 100, 100)]),
            rnd(*b7, rid="b7_commission", wagers=[W(1, "banker", 100, 95)]),
            rnd(*b6, rid="b6_half", wagers=[W(1, "banker", 100, 50), W(2, "banker", 25, 12.5)]),
            rnd(*b6, rid="b6_full", wagers=[W(1, "banker", 100, 100)]),
            rnd(*tie, rid="tie_std_table", wagers=[W(1, "tie", 10, 80)]),
            rnd(*tie, rid="tie_high_table", table="HIGH-1", wagers=[W(1, "tie", 10, 90)]),
            rnd(*tie, rid="tie_high_table_8", table="HIGH-2", wagers=[W(1, "tie", 10, 80)])]
    f = check(recs, {"b7_full": None, "b7_commission": "paytable", "b6_half": None, "b6_full": "paytable",
                     "tie_std_table": None, "tie_high_table": None, "tie_high_table_8": "paytable"}, config=ez)
    assert f.set_index("round_id").loc["b6_full", "discrepancy"] == pytest.approx(50)


def test_paytable_bets_that_look_like_main_bets():
    """Bets are told apart by their whole name: ``pxxxxx``, ``bunker``, ``tix`` and ``Tie`` are other bets
    (not checked in a settled round, net 0 in a void one); a main bet beside them is still checked."""
    pwin, tie = (["9s", "Kd"], ["2c", "5d"]), (["Ks", "6s"], ["Kc", "6c"])
    look = [W(1, "pxxxxx", 10, 10), W(2, "bunker", 10, 9.5), W(3, "tix", 5, 40), W(4, "Tie", 5, 45),
            W(5, "p", 5, 7), W(6, "players", 10, 10), W(7, "t", 5, 40)]
    recs = [rnd(*pwin, rid="others_ok", wagers=look),
            rnd(*tie, rid="others_tie_ok", wagers=look),
            rnd(*pwin, rid="others_and_bad_tie", wagers=look + [W(8, "tie", 5, 40)]),
            rnd(*tie, rid="others_and_bad_player", wagers=look + [W(8, "player", 10, 10)]),
            rnd(*pwin, rid="void_others_paid", status="void", wagers=look),
            rnd(*pwin, rid="void_others_ok", status="void", wagers=[{**x, "net": 0} for x in look])]
    f = check(recs, {"others_ok": None, "others_tie_ok": None, "others_and_bad_tie": "paytable",
                     "others_and_bad_player": "paytable", "void_others_paid": "void",
                     "void_others_ok": None}).set_index("round_id")
    assert f.loc["others_and_bad_tie", "seats"] == "8"
    assert f.loc["others_and_bad_tie", "discrepancy"] == pytest.approx(45)
    assert f.loc["others_and_bad_player", "discrepancy"] == pytest.approx(10)
    assert f.loc["void_others_paid", "seats"] == "1,2,3,4,5,6,7"
    assert f.loc["void_others_paid", "discrepancy"] == pytest.approx(10 + 9.5 + 40 + 45 + 7 + 10 + 40)


def test_paytable_empty_and_null_bets():
    """A table built directly (not from a log) may hold empty or null bet names, last in the batch too:
    such wagers are other bets, checked only in void rounds."""
    pwin = (["9s", "Kd"], ["2c", "5d"])
    recs = [rnd(*pwin, rid="settled", wagers=[W(1, "player", 10, 10), W(2, "x", 5, 5), W(3, "x", 5, 5)]),
            rnd(*pwin, rid="void", status="void", wagers=[W(1, "player", 10, 0), W(2, "x", 5, 5), W(3, "x", 5, 5)])]
    rows = []
    for rec in recs:
        _game, date, row = parse_record(rec)
        row["wagers"][1]["bet"], row["wagers"][2]["bet"] = None, ""
        rows.append(row | {"source_file": "<records>", "source_line": len(rows) + 1, "date": date})
    table = pa.Table.from_pylist(rows, schema=schema_for("baccarat").append(pa.field("date", pa.string())))
    f = validate_tables({"baccarat": table})
    assert list(zip(f["round_id"], f["citation"], f["seats"], strict=True)) == [("void", "void", "2,3")]
    assert f["discrepancy"].iloc[0] == pytest.approx(10)


def test_paytable_configured_many_tables(tmp_path):
    """Per-table paytables over more tables than fit a one-byte settlement code (24 tables)."""
    (tmp_path / "t.toml").write_text('[tables."T1*".baccarat]\ntie = 9.0\n')
    cfg = load_config(tmp_path / "t.toml")
    tie = (["Ks", "6s"], ["Kc", "6c"])
    recs, want = [], {}
    for k in range(24):
        table = f"T{k:02d}"
        nine = table.startswith("T1")
        recs += [rnd(*tie, rid=f"{table}_9", table=table, wagers=[W(1, "tie", 10, 90), W(2, "player", 10, 0)]),
                 rnd(*tie, rid=f"{table}_8", table=table, wagers=[W(1, "tie", 10, 80), W(2, "banker", 10, 0)])]
        want |= {f"{table}_9": None if nine else "paytable", f"{table}_8": "paytable" if nine else None}
    f = check(recs, want, config=cfg).set_index("round_id")
    assert f.loc["T12_8", "discrepancy"] == pytest.approx(-10)
    assert f.loc["T05_9", "discrepancy"] == pytest.approx(10)


# ---- integrity ------------------------------------------------------------------------------------
def test_integrity():
    recs = [
        rnd(["JK", "7s"], ["Kc", "7c"], rid="joker_player"),
        rnd(["4s", "5s"], ["JK", "7c"], rid="joker_banker"),
        rnd(["4s", "5s"], ["Kc", "7c"], rid="clean"),
        rnd(["4s"], ["Kc", "7c"], rid="short_completed"),
        rnd(["4s"], [], rid="short_void", status="void", wagers=[W(1, "player", 10, 0)]),
        rnd(["4s", "5s"], ["Kc", "7c"], rid="void_complete", status="void", wagers=[W(1, "player", 10, 0)]),
    ]
    f = check(recs, {"joker_player": "integrity", "joker_banker": "integrity", "clean": None,
                     "short_completed": "integrity", "short_void": None, "void_complete": None}).set_index("round_id")
    assert "joker in the player hand" in f.loc["joker_player", "message"]
    assert "two cards" in f.loc["short_completed", "message"]

    # a card seen more often in a shoe than its decks hold: reported where the excess copy appears
    shoe = [rnd(["As", "As", "As"], ["As", "As", "As"], rid="S1", shoe="X", seq=1),   # copies 1-6
            rnd(["As", "As", "As"], ["Kc", "7c"], rid="S2", shoe="X", seq=2),         # copies 7-9
            rnd(["Ks", "7s"], ["Kc", "7c"], rid="S3", shoe="X", seq=3),
            rnd(["As", "Kd", "2d"], ["Kc", "7c"], rid="S4", shoe="X", seq=4)]
    f = check(shoe, {"S2": "integrity", "S4": "integrity"}).set_index("round_id")
    assert "As (copy 9)" in f.loc["S2", "message"] and "copy 8" not in f.loc["S2", "message"]
    assert "As (copy 10)" in f.loc["S4", "message"]


def test_integrity_decks_configured(tmp_path):
    (tmp_path / "six.toml").write_text("[baccarat]\ndecks = 6\n")
    shoe = [rnd(["As", "As", "As"], ["As", "As", "As"], rid="S1", shoe="X", seq=1),
            rnd(["As", "Kd", "2d"], ["Kc", "7c"], rid="S2", shoe="X", seq=2)]
    check(shoe, {"S1": None, "S2": None})
    check(shoe, {"S2": "integrity"}, config=load_config(tmp_path / "six.toml"))


def test_incomplete_rounds_skip_play_checks():
    """A hand with fewer than two cards: no drawing, outcome or payout findings, only integrity."""
    recs = [rnd(["4s"], ["Kc", "5c"], rid="one_card", outcome="banker", announced={"player": 9},
                wagers=[W(1, "player", 10, 10)]),
            rnd([], ["Kc"], rid="void_empty", status="void", outcome="tie", wagers=[W(1, "player", 10, 0)])]
    check(recs, {"one_card": "integrity", "void_empty": None})


# ---- exact distribution ------------------------------------------------------------------------------
def test_exact_distribution_8_decks():
    """Six cards from an 8-deck shoe, weighted by rank multiplicities, through the engine's tableau."""
    counts = np.array([128] + [32] * 9, dtype=np.float64)  # point value 0 (T J Q K) and 1-9
    grid = np.stack(np.meshgrid(*[np.arange(10)] * 6, indexing="ij"), axis=-1).reshape(-1, 6)
    weight = np.ones(len(grid))
    for k in range(6):
        prior = (grid[:, :k] == grid[:, [k]]).sum(axis=1)
        weight *= (counts[grid[:, k]] - prior) / (416 - k)
    assert weight.sum() == pytest.approx(1.0, abs=1e-12)
    p1, b1, p2c, b2c, c5, c6 = grid.T
    p2, b2 = (p1 + p2c) % 10, (b1 + b2c) % 10
    pd_ = player_draws(p2, b2)
    bd = banker_draws(p2, b2, pd_, c5)
    pf = (p2 + np.where(pd_, c5, 0)) % 10
    bf = (b2 + np.where(bd, np.where(pd_, c6, c5), 0)) % 10
    o = outcome_of(pf, bf)
    prob = [weight[o == k].sum() for k in range(3)]
    assert prob == pytest.approx([0.446247, 0.458597, 0.095156], abs=5e-7)


# ---- worked examples ----------------------------------------------------------------------------------
def test_worked_examples():
    recs = example_records("baccarat")
    want = expected_findings("baccarat")
    got = validate_records(recs)
    assert set(zip(got["round_id"], got["citation"], strict=True)) == set(zip(want["round_id"], want["citation"], strict=True))
    merged = got.merge(want, on=["round_id", "citation"], suffixes=("", "_want"))
    assert len(merged) == len(want)
    assert np.allclose(merged["discrepancy"], merged["discrepancy_want"], atol=0.005)
    assert ("BAC-20250602-6add10", f"{SEC}(e)") in set(zip(got["round_id"], got["citation"], strict=True))


def test_void():
    """Void/dead rounds: nets must be 0 (void), the outcome is not checked, dealt cards still are."""
    returned = [W(1, "player", 10, 0), W(2, "banker", 10, 0)]
    recs = [
        rnd(["Ks", "3s"], ["Kc", "7c"], rid="void_wrong_outcome", status="void", outcome="tie", wagers=returned),
        rnd(["Ks", "3s"], ["Kc", "7c"], rid="void_wrong_draw", status="dead", wagers=returned),
        rnd(["Ks", "3s", "4d"], ["Kc", "7c"], rid="void_ok", status="void", wagers=returned),
        rnd(["Ks", "3s", "4d"], ["Kc", "7c"], rid="dead_paid", status="dead",
            wagers=[W(1, "player", 10, 10), W(2, "banker", 10, -10), W(3, "tie", 5, -5)]),
    ]
    f = check(recs, {"void_wrong_outcome": f"{SEC}(b)(1)", "void_wrong_draw": f"{SEC}(b)(1)", "void_ok": None,
                     "dead_paid": "void"}).set_index("round_id")
    assert f.loc["dead_paid", "discrepancy"] == pytest.approx(10 - 10 - 5)
    assert f.loc["dead_paid", "recorded_amount"] == pytest.approx(10 - 10 - 5)
    assert f.loc["dead_paid", "expected_amount"] == 0
    assert "seat 1 player: net +10.00 in a dead round" in f.loc["dead_paid", "message"]
    assert f.loc["void_wrong_draw", "expected_amount"] != f.loc["void_wrong_draw", "expected_amount"]  # NaN: no money
