"""The bundled sample data: every planted fault is found, nothing else is flagged."""

import gzip
import json
from pathlib import Path

import pandas as pd

from auditkit.cli import main
from auditkit.simulate.samples import write_samples

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def test_sample_data_findings_match_ground_truth(tmp_path):
    out = tmp_path / "findings.csv"
    assert main(["validate", str(SAMPLE / "logs"), "--out", str(out)]) == 1
    found = pd.read_csv(out)
    truth = pd.concat([pd.read_csv(p) for p in (SAMPLE / "truth").glob("*.truth.csv")])
    assert set(zip(found["round_id"], found["citation"], strict=True)) == set(zip(truth["round_id"], truth["citation"], strict=True))
    assert truth["citation"].nunique() >= 30  # faults of many kinds
    _stories_show(found, json.loads((SAMPLE / "truth" / "story.json").read_text()))


def _stories_show(found: pd.DataFrame, story: dict) -> None:
    """Each game's planted story is what its findings put first; the background stays under 1 %."""
    games = story["games"]
    assert set(games) == {"blackjack", "three_card_poker", "pai_gow_poker"}
    for game, told in games.items():
        mine = found[found["game"] == game]
        by = "table_id" if "table_id" in told else "dealer_id"
        counts = mine[by].value_counts()
        assert counts.index[0] == told[by] and counts.iloc[0] >= 2 * counts.iloc[1], (game, counts.head())
        assert mine[by].eq(told[by]).sum() >= told["rounds"] >= 20
        background = mine[mine[by] != told[by]]["round_id"].nunique()
        with gzip.open(SAMPLE / told["log"], "rt") as fh:
            rounds = sum(1 for _ in fh)
        assert background < 0.01 * rounds, (game, background, rounds)
    bj = found[(found["game"] == "blackjack") & (found["table_id"] == games["blackjack"]["table_id"])]
    start = pd.Timestamp(games["blackjack"]["from"])
    before = (pd.to_datetime(bj["date"]) < start).sum()
    assert before <= 2 and len(bj) - before >= 50  # 6:5 from week 3 on
    tcp = found[found["dealer_id"] == games["three_card_poker"]["dealer_id"]]
    hours = pd.to_datetime(tcp["started_at"].str.slice(0, 19)).dt.hour
    assert (hours.between(14, 21)).mean() > 0.9  # the swing shift


def test_sample_data_is_what_the_generator_writes(tmp_path):
    write_samples(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.*"))
    assert written == sorted(p.relative_to(SAMPLE) for p in (SAMPLE / "logs").rglob("*.*")) + \
        sorted(p.relative_to(SAMPLE) for p in (SAMPLE / "truth").rglob("*.*"))
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (SAMPLE / rel).read_bytes(), rel


def test_sample_data_tells_its_story(tmp_path):
    """Five weeks at four baccarat tables: the drifting dealer's overpayments grow, the biased table is flagged."""
    from auditkit import analysis as A
    from auditkit.ingest.sources import ingest_paths
    from auditkit.simulate import samples
    from auditkit.store import Store
    from auditkit.validate import validate_into_store

    story = json.loads((SAMPLE / "truth" / "story.json").read_text())
    store = Store(tmp_path / "store")
    ingest_paths([SAMPLE / "logs" / samples.STORY_FILE], store)
    validate_into_store(store)
    f = A.load_findings(store)
    assert set(f["dealer_id"]) == {story["drifting_dealer"]["dealer_id"]} and set(f["citation"]) == {"paytable"}
    weekly = f.groupby(pd.to_datetime(f["day"]).dt.to_period("W"))["discrepancy"].sum()
    assert len(weekly) >= 5 and weekly.iloc[-1] > 3 * weekly.iloc[0] > 0  # the drift
    counts = A.round_counts(store, by=["table_id", "dealer_id", "date", "shift"])
    assert counts["date"].nunique() >= 30 and counts["table_id"].nunique() == 4
    assert counts["dealer_id"].nunique() == len(story["dealers"]) and set(counts["shift"]) == {"day", "swing", "grave"}
    flagged = A.flagged_groups(A.outcome_counts(store), ("table_id", "dealer_id"))
    assert set(flagged["group"]) == {story["biased_table"]["table_id"]}
