"""Events mapped through a profile: each row of a round may add one, in row order; the rules that need
them are checked (a wager raised after the first card is 10-2-4(c)), not reported as not checkable."""

from __future__ import annotations

from pathlib import Path

from test_profiles import _doc_examples

from auditkit.ingest.profiles import load_profile
from auditkit.ingest.sources import ingest_source
from auditkit.rules.tally import Tally
from auditkit.store import Store
from auditkit.validate import collect

ROUNDS = """round,time,seat,hand,role,cards,bet,returned,event,amount
1,2025-06-01 10:00:05,1,,event,,,,bet,10
1,2025-06-01 10:00:05,,,event,,,,deal,
1,2025-06-01 10:00:05,1,0,player,13s 09s,10,20,,
1,2025-06-01 10:00:05,,,dealer,10h 07d,,,,
2,2025-06-01 10:01:05,1,,event,,,,bet,10
2,2025-06-01 10:01:05,,,event,,,,deal,
2,2025-06-01 10:01:05,1,,event,,,,add,5
2,2025-06-01 10:01:05,2,,event,,,,bet,20
2,2025-06-01 10:01:05,1,0,player,13d 09c,15,30,,
2,2025-06-01 10:01:05,2,0,player,05d 09h,20,0,,
2,2025-06-01 10:01:05,,,dealer,10c 07c,,,,
"""


def _profile(tmp: Path) -> Path:
    (profile,) = [p for csv_text, p in _doc_examples() if 'name = "bj-events"' in p]
    (tmp / "p.toml").write_text(profile)
    return tmp / "p.toml"


def test_events_mapped_row_by_row_make_the_first_card_rule_checkable(tmp_path):
    (tmp_path / "x.csv").write_text(ROUNDS)
    store = Store(tmp_path / "s")
    rec, _ = ingest_source(tmp_path / "x.csv", store, profile=load_profile(_profile(tmp_path)))
    assert (rec.stored, rec.attached, rec.quarantined) == (2, 9, 0)
    rows = {r["round_id"]: r for g in store.games() for d in store.dates(g) for r in store.read(g, d).to_pylist()}
    two = [(e["type"], e["seat"], e["action"], e["amount"]) for e in rows["BJ-7-000002"]["events"]]
    assert two == [("wager", 1, "place", 10.0), ("first_card", None, None, None), ("wager", 1, "increase", 5.0),
                   ("wager", 2, "place", 20.0)]  # in row order; a seat's second event is no duplicate
    assert "events" not in (rows["BJ-7-000001"]["not_recorded"] or [])
    tally = Tally()
    found, _ = collect(store, tally=tally)
    c = found[found["rule_id"] == "blackjack.c"]
    assert c["round_id"].tolist() == ["BJ-7-000002"]  # seat 1 raised, seat 2 bet after the deal: one finding
    assert "seat 1 increase 5.00" in c["message"].item() and "seat 2" in c["message"].item(), c["message"].item()
    cov = tally.table().set_index("rule_id").loc["blackjack.c"]
    assert cov["rounds_checked"] == 2 and cov["rounds_not_checkable"] == 0
