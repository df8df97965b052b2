"""The bundled sample data: small simulated logs of every game with their ground truth.

    python -m auditkit.simulate.samples sample_data

writes ``logs/`` (JSON Lines, a gzip log and a CSV-layout log) and ``truth/``
(one ``(round_id, citation)`` row per injected fault). Deterministic for a seed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc

from . import simulate

__all__ = ["SAMPLES", "write_samples"]

# game, rounds, fault rate, file name: enough faults for a few of every kind
SAMPLES = [
    ("baccarat", 6000, 0.05, "baccarat.jsonl"),
    ("mini_baccarat", 400, 0.0, "mini_baccarat.jsonl"),
    ("blackjack", 3000, 0.05, "blackjack.jsonl.gz"),
    ("three_card_poker", 3000, 0.06, "three_card_poker.jsonl.gz"),
    ("pai_gow_poker", 2000, 0.06, "pai_gow_poker.jsonl.gz"),
    ("baccarat", 200, 0.05, "csv/baccarat_table9.csv"),
]


def write_samples(folder: Path, seed: int = 2025) -> pd.DataFrame:
    """Write every sample log and its truth under ``folder``; returns faults per game and citation."""
    from ..ingest.csv import write_csv_rounds
    from ..ingest.jsonl import records_from_table, write_jsonl
    from ..report import write_csv

    counts = []
    for i, (game, rounds, rate, name) in enumerate(SAMPLES):
        kwargs = {"tables": 2} if name.startswith("csv/") else {}
        table, truth = simulate(game, rounds, seed=seed + i, fault_rate=rate, **kwargs)
        if name.startswith("csv/"):  # other tables than the JSONL baccarat log's
            for col in ("round_id", "table_id", "shoe_id"):
                table = table.set_column(table.schema.get_field_index(col), col,
                                         pc.binary_join_element_wise("CSV-", table[col], ""))
            truth = truth.assign(round_id="CSV-" + truth["round_id"])
        log = folder / "logs" / name
        log.parent.mkdir(parents=True, exist_ok=True)
        records = records_from_table(table, game)
        if name.endswith(".csv"):
            write_csv_rounds(list(records), log)
        else:
            write_jsonl(records, log)
        stem = Path(name).name.split(".")[0]
        write_csv(truth[["round_id", "citation"]], folder / "truth" / f"{stem}.truth.csv")
        counts.append(truth.assign(game=game, log=name).groupby(["log", "game", "citation"]).size())
    return pd.concat(counts).rename("faults").reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--seed", type=int, default=2025)
    args = ap.parse_args()
    counts = write_samples(args.folder, args.seed)
    print(counts.to_string(index=False))


if __name__ == "__main__":
    main()
