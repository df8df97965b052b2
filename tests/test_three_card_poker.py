"""Three card poker rules, 68 IAC 10-11-6: one test per catalog citation, rounds that pass and fail."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from conftest import example_records, expected_findings

from auditkit.paytables import Config, load_config
from auditkit.validate import validate_records

SEC = "68 IAC 10-11-6"
_ids = itertools.count(1)


def hand(seat: int, cards: str, decision: str = "play", ante: float = 10, net_ante: float = 0, *,
         play: float | None = None, net_play: float = 0, bonus: float = 0,
         pp: float | None = None, net_pp: float | None = None) -> dict:
    """A hand record; ``play`` defaults to the ante when played and is omitted when folded."""
    h = {"seat": seat, "cards": cards.split(), "decision": decision, "ante": ante, "net_ante": net_ante,
         "net_play": net_play, "ante_bonus": bonus}
    if play is not None or decision == "play":
        h["play"] = ante if play is None else play
    if pp is not None:
        h["pair_plus"] = pp
        h["net_pair_plus"] = net_pp
    return h


def rnd(dealer: str, *hands: dict, status: str | None = None, table_id: str = "TCP-T1") -> dict:
    rec = {"round_id": f"R{next(_ids)}", "game": "three_card_poker", "table_id": table_id,
           "started_at": "2025-06-02T10:00:00-05:00", "dealer_id": "D1", "dealer_cards": dealer.split(),
           "hands": list(hands)}
    if status:
        rec["status"] = status
    return rec


def found(*records: dict, config: Config | None = None) -> list[tuple[str, float]]:
    """(citation, discrepancy) of every finding, in record order."""
    f = validate_records(list(records), config)
    order = {r["round_id"]: i for i, r in enumerate(records)}
    f = f.assign(o=f["round_id"].map(order)).sort_values(["o", "citation"])
    return [(c, float(d)) for c, d in zip(f["citation"], f["discrepancy"], strict=True)]


def only(record: dict, config: Config | None = None) -> list[tuple[str, float]]:
    return found(record, config=config)


QUEEN_HIGH = "Qh 3c 2d"      # the lowest qualifying dealer hand
JACK_HIGH = "Jh 9c 8d"       # the best non-qualifying one


# ---- (a) ----------------------------------------------------------------------------------------
def test_68_IAC_10_11_6_a() -> None:
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 10, -10))) == []
    # ante 0 on a folded pair plus hand: (a) only, with no money discrepancy
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 0, 0, pp=5, net_pp=-5))) == [(f"{SEC}(a)", 0.0)]
    # a played hand with no ante (and so no play bet): (a) only
    assert only(rnd(JACK_HIGH, hand(2, "As Kh 7d", "play", 0, 0))) == [(f"{SEC}(a)", 0.0)]


# ---- (a)(1) -------------------------------------------------------------------------------------
def test_68_IAC_10_11_6_a_1() -> None:
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 37.5, -37.5))) == []
    # folded against a non-qualifying dealer still loses the ante
    assert only(rnd(JACK_HIGH, hand(1, "4s 5h 7d", "fold", 25, 25))) == [(f"{SEC}(a)(1)", 50.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 37.5, 0))) == [(f"{SEC}(a)(1)", 37.5)]
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 20, -10))) == [(f"{SEC}(a)(1)", 10.0)]
    # a play bet on a folded hand
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 20, -20, play=20))) == [(f"{SEC}(a)(1)", 0.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 20, -20, play=0, net_play=-20))) == [
        (f"{SEC}(a)(1)", -20.0)]
    # void round: the ante is returned, not lost
    assert only(rnd(QUEEN_HIGH, hand(1, "4s 5h 7d", "fold", 20, 0), status="void")) == []


# ---- (a)(2) -------------------------------------------------------------------------------------
def test_68_IAC_10_11_6_a_2() -> None:
    assert only(rnd(QUEEN_HIGH, hand(1, "Ks 5h 7d", "play", 10, 10, play=10, net_play=10))) == []
    # play 20 on ante 10, settled on the recorded play bet: (a)(2) alone
    assert only(rnd(QUEEN_HIGH, hand(1, "Ks 5h 7d", "play", 10, 10, play=20, net_play=20))) == [(f"{SEC}(a)(2)", 0.0)]
    assert only(rnd(JACK_HIGH, hand(2, "8c Kc 4c", "play", 20, 20, play=40, net_play=0))) == [(f"{SEC}(a)(2)", 0.0)]
    # a played hand without a play bet
    assert only(rnd(QUEEN_HIGH, hand(1, "2s 5h 7d", "play", 10, -10, play=0, net_play=0))) == [(f"{SEC}(a)(2)", 0.0)]


# ---- (b) ----------------------------------------------------------------------------------------
def test_68_IAC_10_11_6_b() -> None:
    # queen high qualifies: hands settled as if it did not -> one (b) for the round, no (c)
    r = rnd(QUEEN_HIGH, hand(1, "Kd 5s 2h", "play", 100, 100, net_play=0),
            hand(2, "Jd 9s 2c", "play", 20, 20, net_play=0),
            hand(3, "4s 5h 7d", "fold", 10, -10))
    # seat 1 should win 100/100 (recorded 100/0: -100); seat 2 should lose 20/20 (recorded +20/0: +60)
    assert only(r) == [(f"{SEC}(b)", -100.0 + 60)]
    # jack high does not qualify: hands settled as if it did (one wins both bets, one loses both)
    r = rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10, net_play=10), hand(2, "Td 9s 2c", "play", 10, -10,
                                                                             net_play=-10))
    assert only(r) == [(f"{SEC}(b)", (10.0 - 0) + (-10 - 10) + (-10 - 0))]
    # settled right: nothing
    assert only(rnd(QUEEN_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10, net_play=10),
                    hand(2, "Jd 9s 2c", "play", 10, -10, net_play=-10))) == []
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10), hand(2, "Td 9s 2c", "play", 10, 10))) == []
    # only one of two hands settled the opposite way: a (c) finding on that hand, not (b)
    r = rnd(QUEEN_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10, net_play=0), hand(2, "Jd 9s 2c", "play", 10, -10,
                                                                              net_play=-10))
    assert only(r) == [(f"{SEC}(c)(3)", -10.0)]


# ---- (c) ----------------------------------------------------------------------------------------
def test_68_IAC_10_11_6_c_1() -> None:
    ok = hand(2, "Td 9s 2c", "play", 10, 10)
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10), ok)) == []
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 5), ok)) == [(f"{SEC}(c)(1)", -5.0)]
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10, net_play=10), ok)) == [(f"{SEC}(c)(1)", 10.0)]
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, -10, net_play=0), ok)) == [(f"{SEC}(c)(1)", -20.0)]


def test_68_IAC_10_11_6_c_2() -> None:
    assert only(rnd(QUEEN_HIGH, hand(1, "Jc 9d 8h", "play", 10, -10, net_play=-10))) == []
    assert only(rnd(QUEEN_HIGH, hand(1, "Jc 9d 8h", "play", 10, 0, net_play=0))) == [(f"{SEC}(c)(2)", 20.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "Jc 9d 8h", "play", 10, -10, net_play=0))) == [(f"{SEC}(c)(2)", 10.0)]
    # the dealer wins on a kicker: K-8-2 beats K-7-6
    assert only(rnd("Ks 8s 2d", hand(1, "Kd 7h 6c", "play", 10, -10, net_play=-10))) == []
    assert only(rnd("Ks 8s 2d", hand(1, "Kd 7h 6c", "play", 10, 10, net_play=10))) == [(f"{SEC}(c)(2)", 40.0)]
    # pair rank before kicker: 9-9-2 beats 8-8-A
    assert only(rnd("9c 9d 2h", hand(1, "8c 8d Ah", "play", 10, 0, net_play=0))) == [(f"{SEC}(c)(2)", 20.0)]


def test_68_IAC_10_11_6_c_3() -> None:
    # Q-4-2 beats the queen-high dealer Q-3-2 on the second card
    assert only(rnd(QUEEN_HIGH, hand(1, "Qd 4c 2h", "play", 10, 10, net_play=10))) == []
    assert only(rnd(QUEEN_HIGH, hand(1, "Qd 4c 2h", "play", 10, 5, net_play=10))) == [(f"{SEC}(c)(3)", -5.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "Qd 4c 2h", "play", 100, 50, net_play=50),
                    hand(2, "Jc 9d 8h", "play", 10, -10, net_play=-10))) == [(f"{SEC}(c)(3)", -100.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "Qd 4c 2h", "play", 10, -10, net_play=-10),
                    hand(2, "Kc 9d 8h", "play", 10, 10, net_play=10))) == [(f"{SEC}(c)(3)", -40.0)]
    # straight beats flush; A-2-3 beats an ace-high dealer
    assert only(rnd("Qs Ts 8s", hand(1, "7h 6s 8h", "play", 50, 50, net_play=50, bonus=50))) == []
    assert only(rnd("Ac Kd 9h", hand(1, "Ah 2s 3h", "play", 10, -10, net_play=-10, bonus=10))) == [
        (f"{SEC}(c)(3)", -40.0)]


def test_68_IAC_10_11_6_c_4() -> None:
    assert only(rnd("4h 4d 8h", hand(1, "4s 4c 8c", "play", 10, 0, net_play=0))) == []
    assert only(rnd("4h 4d 8h", hand(1, "4s 4c 8c", "play", 10, -10, net_play=-10))) == [(f"{SEC}(c)(4)", -20.0)]
    # identical ranks in other suits tie, high card and straight alike
    assert only(rnd("Kc 8d 7h", hand(1, "8h Ks 7d", "play", 10, 0, net_play=0))) == []
    assert only(rnd("Qd Jd Th", hand(1, "Qc Js Ts", "play", 10, 0, net_play=0, bonus=10))) == []
    assert only(rnd("Qd Jd Th", hand(1, "Qc Js Ts", "play", 10, 10, net_play=10, bonus=10),
                    hand(2, "2c 3s 5d", "play", 10, -10, net_play=-10))) == [(f"{SEC}(c)(4)", 20.0)]
    assert only(rnd("Kc 8d 7h", hand(1, "8h Ks 7d", "play", 10, -10, net_play=0),
                    hand(2, "Ac 3s 5d", "play", 10, 10, net_play=10))) == [(f"{SEC}(c)(4)", -10.0)]


# ---- (d) ----------------------------------------------------------------------------------------
def test_68_IAC_10_11_6_d_1() -> None:
    assert only(rnd("Qd Jd Th", hand(6, "5d 4d 3d", "play", 20, 20, net_play=20, bonus=100))) == []
    # paid whatever the dealer holds: a higher straight flush beats the hand
    assert only(rnd("Kh Qh Jh", hand(6, "5d 4d 3d", "play", 20, -20, net_play=-20, bonus=100))) == []
    assert only(rnd("Qd Jd Th", hand(6, "5d 4d 3d", "play", 20, 20, net_play=20, bonus=0))) == [
        (f"{SEC}(d)(1)", -100.0)]
    assert only(rnd(JACK_HIGH, hand(6, "Ac 2c 3c", "play", 20, 20, bonus=80))) == [(f"{SEC}(d)(1)", -20.0)]


def test_68_IAC_10_11_6_d_2() -> None:
    assert only(rnd("7h 8c 3s", hand(5, "Kh Kd Ks", "play", 15, 15, bonus=60))) == []
    assert only(rnd("Ah Ad Ac", hand(5, "Kh Kd Ks", "play", 15, -15, net_play=-15, bonus=60))) == []
    assert only(rnd("7h 8c 3s", hand(5, "Kh Kd Ks", "play", 15, 15, bonus=0))) == [(f"{SEC}(d)(2)", -60.0)]
    assert only(rnd("7h 8c 3s", hand(5, "2h 2d 2s", "play", 15, 15, bonus=45))) == [(f"{SEC}(d)(2)", -15.0)]


def test_68_IAC_10_11_6_d_3() -> None:
    assert only(rnd("6c Ks 4h", hand(3, "Ah 2s 3h", "play", 37.5, 37.5, net_play=37.5, bonus=37.5))) == []
    assert only(rnd("4c Td 5c", hand(5, "As Ks Qh", "play", 15, 15, bonus=15))) == []
    assert only(rnd("Qd Jd Th", hand(4, "7d 6d 5s", "play", 15, -15, net_play=-15, bonus=15))) == []
    assert only(rnd("4d Kh Ac", hand(1, "5d 4c 3h", "play", 20, 20, net_play=20, bonus=0))) == [
        (f"{SEC}(d)(3)", -20.0)]
    assert only(rnd("4c Td 5c", hand(5, "As Ks Qh", "play", 15, 15, bonus=10))) == [(f"{SEC}(d)(3)", -5.0)]


def test_68_IAC_10_11_6_d() -> None:
    assert only(rnd(JACK_HIGH, hand(3, "8h 3d Js", "fold", 15, -15), hand(4, "2c 2s 8c", "play", 50, 50))) == []
    # folded high card, folded straight, played flush, played pair: no ante bonus
    assert only(rnd(JACK_HIGH, hand(3, "8h 3d Qs", "fold", 15, -15, bonus=15))) == [(f"{SEC}(d)", 15.0)]
    assert only(rnd(JACK_HIGH, hand(3, "8h 9d Ts", "fold", 15, -15, bonus=15))) == [(f"{SEC}(d)", 15.0)]
    assert only(rnd(JACK_HIGH, hand(3, "2h 6h Th", "play", 10, 10, bonus=10))) == [(f"{SEC}(d)", 10.0)]
    assert only(rnd(JACK_HIGH, hand(3, "2c 2s 8c", "play", 10, 10, bonus=5))) == [(f"{SEC}(d)", 5.0)]


# ---- paytable -----------------------------------------------------------------------------------
def _config(tmp_path: Path, text: str) -> Config:
    p = tmp_path / "house.toml"
    p.write_text(text)
    return load_config(p)


def test_paytable(tmp_path: Path) -> None:
    # ante win paid 2:1 (above the posted 1:1): paytable, not (c)(1)
    assert only(rnd("5h 8s 3c", hand(6, "5d 3d 7d", "play", 25, 50))) == [("paytable", 25.0)]
    assert only(rnd(QUEEN_HIGH, hand(6, "Kd 3d 7c", "play", 25, 25, net_play=30))) == [("paytable", 5.0)]
    # ante bonus above the posted rate
    assert only(rnd(JACK_HIGH, hand(6, "Ac 2c 3c", "play", 20, 20, bonus=120))) == [("paytable", 20.0)]
    # pair plus 40/30/6/3/1 on the hand alone, folded or not
    ok = rnd(JACK_HIGH, hand(1, "Jd Jc Js", "play", 20, 20, bonus=80, pp=25, net_pp=750),
             hand(2, "4c 6c Tc", "play", 10, 10, pp=5, net_pp=15),
             hand(3, "Ah As 3h", "fold", 10, -10, pp=10, net_pp=10),
             hand(4, "7h 8h 9h", "play", 10, 10, bonus=50, pp=5, net_pp=200),
             hand(5, "5h 6d 7s", "fold", 10, -10, pp=5, net_pp=30),
             hand(6, "Ks 9s 3d", "play", 10, 10, pp=5, net_pp=-5))
    assert only(ok) == []
    bad = rnd(JACK_HIGH, hand(2, "4c 6c Tc", "play", 10, 10, pp=5, net_pp=20),
              hand(3, "Ah As 3h", "fold", 10, -10, pp=10, net_pp=0),
              hand(6, "Ks 9s 3d", "play", 10, 10, pp=5, net_pp=0))
    assert only(bad) == [("paytable", 5.0 - 10 + 5)]

    # a posted 40/30/6/4/1 pair plus and a richer ante bonus, from TOML
    cfg = _config(tmp_path, "[three_card_poker.pair_plus]\nflush = 4.0\n"
                            "[three_card_poker.ante_bonus]\nstraight = 2.0\nstraight_flush = 6.0\n")
    assert cfg.get("three_card_poker", "pair_plus")["flush"] == 4.0
    flush_pp = rnd(JACK_HIGH, hand(2, "4c 6c Tc", "play", 10, 10, pp=5, net_pp=20))
    assert only(flush_pp, cfg) == [] and only(flush_pp) == [("paytable", 5.0)]
    straight = rnd(JACK_HIGH, hand(3, "8h 9d Ts", "play", 10, 10, bonus=20))
    assert only(straight, cfg) == [] and only(straight) == [("paytable", 10.0)]
    # below the posted rate but at least 1:1: paytable; below 1:1: (d)(3)
    assert only(rnd(JACK_HIGH, hand(3, "8h 9d Ts", "play", 10, 10, bonus=10)), cfg) == [("paytable", -10.0)]
    assert only(rnd(JACK_HIGH, hand(3, "8h 9d Ts", "play", 10, 10, bonus=5)), cfg) == [(f"{SEC}(d)(3)", -15.0)]
    assert only(rnd(JACK_HIGH, hand(6, "Ac 2c 3c", "play", 20, 20, bonus=100)), cfg) == [("paytable", -20.0)]

    # an ante paying 2:1 at some tables only: 1:1 there is paytable, 1:2 is (c)(1)
    cfg = _config(tmp_path, '[tables."VIP-*".three_card_poker]\nante = 2.0\n')
    vip = rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 20), table_id="VIP-1")
    assert only(vip, cfg) == [] and only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10)), cfg) == []
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10), table_id="VIP-2"), cfg) == [("paytable", -10.0)]
    assert only(rnd(JACK_HIGH, hand(1, "Kd 5s 2h", "play", 10, 5), table_id="VIP-2"), cfg) == [(f"{SEC}(c)(1)", -15.0)]


# ---- void ---------------------------------------------------------------------------------------
def test_void() -> None:
    # void and dead rounds: every net 0, and no settlement rule of a completed round applies
    assert only(rnd(QUEEN_HIGH, hand(1, "Kd 5s 2h", "play", 10, 0), hand(2, "4s 5h 7d", "fold", 10, 0, pp=5,
                                                                            net_pp=0), status="void")) == []
    assert only(rnd(QUEEN_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10, net_play=10, bonus=0),
                    hand(2, "4s 5h 7d", "fold", 10, -10), status="dead")) == [("void", 10.0)]
    # an ante bonus and a pair plus net count too, one finding for the round
    r = rnd(JACK_HIGH, hand(1, "Ac 2c 3c", "play", 20, 0, bonus=100, pp=5, net_pp=200), status="void")
    assert only(r) == [("void", 300.0)]
    f = validate_records([r]).iloc[0]
    assert f["expected_amount"] == 0 and f["recorded_amount"] == 300
    assert "ante bonus" in f["message"] and "+200.00" in f["message"]


# ---- integrity ----------------------------------------------------------------------------------
def test_integrity() -> None:
    clean = rnd("2c Tc 3c", hand(4, "2h 2s Jh", "play", 100, -100, net_play=-100, pp=5, net_pp=5))
    assert only(clean) == []
    # a card of the dealer's in a patron's hand (settled as dealt: integrity only)
    r = rnd("2c Tc 3c", hand(6, "3c Qh Kc", "play", 20, -20, net_play=-20))
    assert only(r) == [("integrity", 0.0)]
    msg = validate_records([r])["message"].iloc[0]
    assert "3c" in msg and "dealer" in msg and "seat 6" in msg
    # a card in two patrons' hands, and twice in one hand
    assert only(rnd(QUEEN_HIGH, hand(1, "Kd 5s 9h", "play", 10, 10, net_play=10),
                    hand(2, "Kd 7s 4h", "fold", 10, -10))) == [("integrity", 0.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "Kd Kd 9h", "play", 10, 10, net_play=10))) == [("integrity", 0.0)]
    # a joker, or a hand of four cards: integrity, and the cards are not settled on
    assert only(rnd(QUEEN_HIGH, hand(1, "JK 5s 9h", "play", 10, 99, net_play=99))) == [("integrity", 0.0)]
    assert only(rnd(QUEEN_HIGH, hand(1, "Ad 5s 9h 4c", "play", 10, 10, net_play=10))) == [("integrity", 0.0)]
    assert only(rnd("Qh 3c", hand(1, "Ad 5s 9h", "play", 10, 10, net_play=10))) == [("integrity", 0.0)]


def test_only_three_card_poker_findings_on_many_rounds() -> None:
    """One batch mixing clean and faulty rounds: each finding lands on its own round."""
    recs = [rnd(QUEEN_HIGH, hand(1, "Kd 5s 2h", "play", 10, 10, net_play=10)) for _ in range(50)]
    recs[7]["hands"][0]["net_ante"] = 5
    recs[31]["hands"][0]["ante_bonus"] = 10
    f = validate_records(recs)
    assert set(zip(f["round_id"], f["citation"], strict=True)) == {(recs[7]["round_id"], f"{SEC}(c)(3)"),
                                                      (recs[31]["round_id"], f"{SEC}(d)")}


# ---- the spec's worked examples -----------------------------------------------------------------
def test_worked_examples() -> None:
    f = validate_records(example_records("three_card_poker"))
    e = expected_findings("three_card_poker")
    got = {(r, c): d for r, c, d in zip(f["round_id"], f["citation"], f["discrepancy"], strict=True)}
    want = {(r, c): float(d) for r, c, d in zip(e["round_id"], e["citation"], e["discrepancy"], strict=True)}
    assert set(got) == set(want)
    for key, d in want.items():
        assert got[key] == pytest.approx(d, abs=0.005), key
    assert len(f) == len(e)


def test_findings_carry_amounts() -> None:
    """Money findings: the expected and recorded nets of the wagers they cover; others leave them empty."""
    f = validate_records([rnd(QUEEN_HIGH, hand(1, "Qd 4c 2h", "play", 100, 50, net_play=50)),
                          rnd(QUEEN_HIGH, hand(2, "Jc 9d 8h", "play", 10, -10, net_play=0)),
                          rnd(JACK_HIGH, hand(3, "2h 6h Th", "play", 10, 10, bonus=10)),
                          rnd(QUEEN_HIGH, hand(4, "4s 5h 7d", "fold", 0, 0))]).set_index("citation")
    c3 = f.loc[f"{SEC}(c)(3)"]
    assert (c3["expected_amount"], c3["recorded_amount"], c3["discrepancy"]) == (200.0, 100.0, -100.0)
    assert c3["expected"] == "ante +100.00, play +100.00" and c3["recorded"] == "ante +50.00, play +50.00"
    assert "ante 100.00 play 100.00" in c3["message"]
    c2 = f.loc[f"{SEC}(c)(2)"]  # only the play net is wrong: only the play bet counts
    assert (c2["expected_amount"], c2["recorded_amount"], c2["discrepancy"]) == (-10.0, 0.0, 10.0)
    d = f.loc[f"{SEC}(d)"]
    assert (d["expected_amount"], d["recorded_amount"], d["discrepancy"]) == (0.0, 10.0, 10.0)
    a = f.loc[f"{SEC}(a)"]
    assert np.isnan(a["expected_amount"]) and np.isnan(a["recorded_amount"]) and a["discrepancy"] == 0


def test_rules_read_only_their_declared_columns() -> None:
    """Each rule finds the same on a batch cut to its declared columns plus the report's metadata."""
    from auditkit.engine.checks import select_rules
    from auditkit.engine.findings import META
    from auditkit.games.three_card_poker.simulate import simulate
    from auditkit.validate import check_rounds

    table, _ = simulate(6_000, seed=9, fault_rate=0.3, void_rate=0.02)
    for r in select_rules("three_card_poker", "round"):
        cut = table.select([c for c in table.column_names if c in {*r.columns, *META}])
        full = check_rounds(table, "three_card_poker", Config(), [r])
        assert len(full) and full.equals(check_rounds(cut, "three_card_poker", Config(), [r])), r.rule_id
