"""The bundled sample data: small simulated logs of every game with their ground truth.

    python -m auditkit.simulate.samples sample_data

writes ``logs/`` (JSON Lines, a gzip log and a CSV-layout log) and ``truth/``
(one ``(round_id, citation)`` row per injected fault). Deterministic for a seed.

Besides the logs of every game, a **story** worth charting: five weeks of
baccarat at four tables, dealers rotating through the day, swing and grave
shifts, with two things planted (described in ``truth/story.json``): the
dealer :data:`DRIFTER` pays banker wins without the commission more and more
often (``paytable`` findings, in the truth), and the table :data:`BIASED_TABLE`
deals from shoes without fives to nines, legal cards in legal numbers, so no
rule fires but its ties and banker wins depart from theory.
"""

from __future__ import annotations

import argparse
import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from . import simulate

__all__ = ["SAMPLES", "write_samples", "deal_baccarat", "write_story", "STORY_DAYS", "DRIFTER", "BIASED_TABLE",
           "BIASED_SHOE"]

# game, rounds a day, tables, fault rate, dealers' first number, file name: five weeks of each
SAMPLES = [
    ("baccarat", 160, 4, 0.005, 1000, "baccarat.jsonl"),
    ("mini_baccarat", 12, 1, 0.0, 5000, "mini_baccarat.jsonl"),
    ("blackjack", 100, 2, 0.005, 2000, "blackjack.jsonl.gz"),
    ("three_card_poker", 100, 3, 0.005, 3100, "three_card_poker.jsonl.gz"),
    ("pai_gow_poker", 60, 2, 0.005, 4000, "pai_gow_poker.jsonl.gz"),
    ("baccarat", 8, 2, 0.01, 6000, "csv/baccarat_table9.csv"),
]
SEED_SHIFT = {"pai_gow_poker.jsonl.gz": 300}
"""Seeds moved so that the few background faults include the kinds a sample export's twin test needs
(pai gow: integrity and void, the rules its SQLite export can show; tests/test_sample_exports.py)."""


def _sample(game: str, per_day: int, tables: int, rate: float, first_dealer: int, name: str,
            seed: int) -> tuple[list[dict[str, Any]], pd.DataFrame, list[str]]:
    """Five weeks of one sample log: each day simulated, spread over the opening hours, its story planted."""
    from ..ingest.jsonl import records_from_table
    from . import stories

    dealers = tuple(f"D{first_dealer + k}" for k in range(10))
    plant, _ = stories.STORIES.get(game, (None, {}))
    records: list[dict[str, Any]] = []
    truths, told = [], []
    for k, day in enumerate(stories.days()):
        table, truth = simulate(game, per_day, seed=seed * 1000 + k, fault_rate=rate, tables=tables, start=day)
        if name.startswith("csv/"):  # other tables than the JSONL baccarat log's
            for col in ("round_id", "table_id", "shoe_id"):
                table = table.set_column(table.schema.get_field_index(col), col,
                                         pc.binary_join_element_wise("CSV-", table[col], ""))
            truth = truth.assign(round_id="CSV-" + truth["round_id"].astype(str))
        recs = list(records_from_table(table, game))
        stories.spread(recs, day, k, dealers)
        if plant is not None:
            faulty = set(truth["round_id"])  # the story only on rounds without a fault of their own
            today = pd.DataFrame(plant([r for r in recs if r["round_id"] not in faulty], k),
                                 columns=["round_id", "citation"])
            told += today["round_id"].tolist()
            truth = pd.concat([truth, today])
        records += recs
        truths.append(truth[["round_id", "citation"]])
    return records, pd.concat(truths, ignore_index=True).drop_duplicates(ignore_index=True), told


def _told(game: str, name: str, rounds: list[str]) -> dict[str, Any]:
    """What ``story.json`` says of a game's planted story."""
    from . import stories

    told = {**stories.STORIES[game][1], "log": f"logs/{name}", "rounds": len(set(rounds))}
    if "from" in told:
        told["from"] = stories.days()[told["from"]]
    return told


def write_samples(folder: Path, seed: int = 2025) -> pd.DataFrame:
    """Write every sample log and its truth under ``folder``; returns faults per game and citation."""
    from ..ingest.csv import write_csv_rounds
    from ..ingest.jsonl import write_jsonl
    from ..report import write_csv
    from . import stories

    counts, planted = [], {}
    for i, (game, per_day, tables, rate, first_dealer, name) in enumerate(SAMPLES):
        records, truth, told = _sample(game, per_day, tables, rate, first_dealer, name,
                                       seed + i + SEED_SHIFT.get(name, 0))
        log = folder / "logs" / name
        log.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".csv"):
            write_csv_rounds(records, log)
        else:
            write_jsonl(records, log)
        stem = Path(name).name.split(".")[0]
        write_csv(truth, folder / "truth" / f"{stem}.truth.csv")
        counts.append(truth.assign(game=game, log=name).groupby(["log", "game", "citation"]).size())
        if game in stories.STORIES and not name.startswith("csv/"):
            planted[game] = _told(game, name, told)
    story = write_story(folder, seed, planted)
    return pd.concat([pd.concat(counts).rename("faults").reset_index(), story], ignore_index=True)


STORY_START, STORY_DAYS = "2025-06-01", 35
STORY_FILE = "story_baccarat.jsonl.gz"
FAIR_TABLES = 3
DEALERS = tuple(f"D7{k:02d}" for k in range(10))
DRIFTER = "D705"
"""The dealer who pays banker wins without commission, on 5 % of them on the first day and 50 % on the last."""
BIASED_TABLE = "BAC-24"
BIASED_SHOE = (128, 32, 32, 32, 32, 0, 0, 0, 0, 0)
"""Cards per point value 0..9 in the biased table's shoes: eight decks' tens to fours, no fives to nines."""
SHIFT_STARTS = (6, 14, 22)
TZ = timezone(timedelta(hours=-5))


def _codes_of_value(v: int) -> np.ndarray:
    if v == 0:
        return np.arange(32, 48)  # T J Q K
    if v == 1:
        return np.arange(48, 52)  # aces
    return np.arange(4 * (v - 2), 4 * (v - 2) + 4)


def deal_baccarat(counts: tuple[int, ...], n_shoes: int, rounds_per_shoe: int, seed: int) -> dict[str, np.ndarray]:
    """Baccarat rounds dealt by the tableau from shoes of the given make-up (vectorized over shoes).

    ``counts``: cards per point value 0..9. Returns padded (n, 3) player and
    banker card matrices, shoe index, round number within the shoe and outcome
    code (0 player, 1 banker, 2 tie), shoe by shoe.
    """
    from ..games.baccarat.tableau import BACCARAT_POINTS, banker_draws, outcome_of, player_draws

    rng = np.random.default_rng(seed)
    shoe = np.concatenate([np.resize(_codes_of_value(v), c) for v, c in enumerate(counts)]).astype(np.int8)
    if rounds_per_shoe * 6 > len(shoe):
        raise ValueError("shoe too small for that many rounds")
    shoes = rng.permuted(np.tile(shoe, (n_shoes, 1)), axis=1)
    pos = np.zeros(n_shoes, dtype=np.int64)
    rows = np.arange(n_shoes)
    P = np.full((rounds_per_shoe, n_shoes, 3), -1, np.int8)
    B = np.full((rounds_per_shoe, n_shoes, 3), -1, np.int8)
    for r in range(rounds_per_shoe):  # rounds of a shoe are sequential; shoes are dealt side by side
        c = [shoes[rows, pos + k] for k in range(6)]
        p2 = (BACCARAT_POINTS[c[0]] + BACCARAT_POINTS[c[2]]) % 10
        b2 = (BACCARAT_POINTS[c[1]] + BACCARAT_POINTS[c[3]]) % 10
        pd_ = player_draws(p2, b2)
        p3 = np.where(pd_, BACCARAT_POINTS[c[4]], 0)
        bd = banker_draws(p2, b2, pd_, p3)
        P[r, :, 0], B[r, :, 0], P[r, :, 1], B[r, :, 1] = c[0], c[1], c[2], c[3]
        P[r, :, 2] = np.where(pd_, c[4], -1)
        B[r, :, 2] = np.where(bd, np.where(pd_, c[5], c[4]), -1)
        pos += 4 + pd_ + bd
    P = P.transpose(1, 0, 2).reshape(-1, 3)
    B = B.transpose(1, 0, 2).reshape(-1, 3)
    pf = BACCARAT_POINTS[P].sum(axis=1) % 10
    bf = BACCARAT_POINTS[B].sum(axis=1) % 10
    return {"P": P, "B": B, "shoe": np.repeat(np.arange(n_shoes), rounds_per_shoe),
            "seq": np.tile(np.arange(1, rounds_per_shoe + 1), n_shoes), "outcome": outcome_of(pf, bf)}


def _biased_records(day: str, seed: int, n_shoes: int = 2, rounds_per_shoe: int = 40) -> list[dict[str, Any]]:
    """A day of the biased table: dealt by the tableau from :data:`BIASED_SHOE`, recorded and paid correctly."""
    from ..cards import card_str

    rng = np.random.default_rng(seed)
    d = deal_baccarat(BIASED_SHOE, n_shoes, rounds_per_shoe, seed)
    names = ("player", "banker", "tie")
    out = []
    for i in range(len(d["shoe"])):  # building sample records
        shoe_id = f"{BIASED_TABLE}-{day.replace('-', '')}-S{int(d['shoe'][i]) + 1:02d}"
        seq, result = int(d["seq"][i]), names[int(d["outcome"][i])]
        p = [card_str(c) for c in d["P"][i] if c >= 0]
        b = [card_str(c) for c in d["B"][i] if c >= 0]
        wagers = []
        for seat in sorted(rng.choice(np.arange(1, 8), size=int(rng.integers(1, 5)), replace=False)):
            bet = str(rng.choice(["banker", "player", "tie"], p=[0.5, 0.4, 0.1]))
            amount = float(rng.choice([10, 25, 50, 100]))
            net = (-amount if result != bet else amount * {"player": 1.0, "banker": 0.95, "tie": 8.0}[bet]) \
                if result != "tie" or bet == "tie" else 0.0
            wagers.append({"seat": int(seat), "bet": bet, "amount": amount, "net": round(net, 2)})
        rec = {"round_id": f"{shoe_id}-{seq:03d}", "game": "baccarat", "table_id": BIASED_TABLE,
               "started_at": "", "dealer_id": "", "shoe_id": shoe_id, "round_seq": seq,
               "player_cards": p, "banker_cards": b, "outcome": result,
               "deal_order": "PBPB" + "P" * (len(p) == 3) + "B" * (len(b) == 3), "wagers": wagers}
        if seq == rounds_per_shoe - 1:
            rec["cut_card"] = True
        out.append(rec)
    return out


def _story_day(k: int, day: str, seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """One gaming day of the story: its records, times and dealers set, and the drifter's overpaid rounds."""
    from ..ingest.jsonl import records_from_table

    table, _truth = simulate("baccarat", 95 * FAIR_TABLES, seed=seed, fault_rate=0.0, tables=FAIR_TABLES, start=day)
    fair = [{**r, "round_id": r["round_id"].replace("BAC-0", "BAC-2", 1), "table_id": r["table_id"].replace(
        "BAC-0", "BAC-2", 1), "shoe_id": r["shoe_id"].replace("BAC-0", "BAC-2", 1)}
        for r in records_from_table(table, "baccarat")]
    records = fair + _biased_records(day, seed + 1)
    rng = np.random.default_rng(seed + 2)
    p_drift = 0.05 + 0.45 * k / (STORY_DAYS - 1)
    opens = datetime.fromisoformat(day).replace(hour=SHIFT_STARTS[0], tzinfo=TZ)
    overpaid = []
    tables = sorted({r["table_id"] for r in records})
    for t, table_id in enumerate(tables):
        rows = sorted((r for r in records if r["table_id"] == table_id), key=lambda r: r["started_at"])  # as dealt
        step = (18 * 3600 - 60) / len(rows)  # 06:00 to 23:59: day, swing and the start of grave
        for i, r in enumerate(rows):
            at = opens + timedelta(seconds=int(i * step))
            shift = sum(at.hour >= h for h in SHIFT_STARTS) - 1
            r["started_at"] = at.isoformat()
            r["dealer_id"] = DEALERS[(3 * t + shift + k) % len(DEALERS)]
            if (r["dealer_id"] == DRIFTER and r.get("outcome") == "banker" and r.get("status") is None
                    and any(w["bet"] == "banker" for w in r["wagers"]) and rng.random() < p_drift):
                for w in r["wagers"]:
                    if w["bet"] == "banker":  # paid 1:1, the commission forgotten
                        w["net"] = w["amount"]
                overpaid.append(r["round_id"])
    return records, overpaid


def write_story(folder: Path, seed: int = 2025, planted: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """Write the story log, its truth (``paytable`` on the drifter's overpaid rounds) and ``truth/story.json``."""
    from ..ingest.jsonl import write_jsonl
    from ..report import write_csv

    records, truth = [], []
    first = date.fromisoformat(STORY_START)
    for k in range(STORY_DAYS):
        day = (first + timedelta(days=k)).isoformat()
        recs, overpaid = _story_day(k, day, seed + 100 * k)
        records += recs
        truth += overpaid
    write_jsonl(records, folder / "logs" / STORY_FILE)
    frame = pd.DataFrame({"round_id": truth, "citation": "paytable"})
    write_csv(frame, folder / "truth" / "story_baccarat.truth.csv")
    story = {
        "log": f"logs/{STORY_FILE}", "days": [STORY_START, (first + timedelta(days=STORY_DAYS - 1)).isoformat()],
        "tables": [f"BAC-2{t + 1}" for t in range(FAIR_TABLES)] + [BIASED_TABLE], "dealers": list(DEALERS),
        "shifts": "dealers rotate daily through the day (06-14), swing (14-22) and grave (22-) shifts",
        "drifting_dealer": {"dealer_id": DRIFTER, "fault": "banker wins paid 1:1, no commission",
                            "citation": "paytable", "share_of_banker_wins": [0.05, 0.5],
                            "rounds": len(truth)},
        "biased_table": {"table_id": BIASED_TABLE, "cards_per_point_value_0_to_9": list(BIASED_SHOE),
                         "findings": 0, "shows_in": "expected versus observed: ties and banker wins"},
        "games": planted or {},
    }
    with open(folder / "truth" / "story.json", "w", encoding="utf-8") as fh:
        json.dump(story, fh, indent=1)
        fh.write("\n")
    return frame.assign(log=STORY_FILE, game="baccarat").groupby(["log", "game", "citation"]).size() \
        .rename("faults").reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--seed", type=int, default=2025)
    args = ap.parse_args()
    counts = write_samples(args.folder, args.seed)
    print(counts.to_string(index=False))


if __name__ == "__main__":
    main()
