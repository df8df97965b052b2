"""A small simulated store for the analysis, chart and notebook tests (built once per test process).

Three gaming days of every game from the simulators (with injected faults),
validated into the store, plus one baccarat table, ``BAC-BIASED``, dealt from
shoes stacked with sevens and eights (no aces, twos or nines), whose outcome frequencies
differ from theory (player 0.3997 and banker 0.4975 against 0.4462 and 0.4586).
"""

from __future__ import annotations

import functools
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa

from auditkit.cards import BACCARAT_POINTS
from auditkit.games.baccarat.rules import banker_draws, outcome_of, player_draws
from auditkit.schema import schema_for

DAYS = ("2025-06-01", "2025-06-02", "2025-06-03")
ROUNDS = {"baccarat": 800, "blackjack": 400, "three_card_poker": 500, "pai_gow_poker": 250}
BIASED_TABLE = "BAC-BIASED"
BIASED_COUNTS = (64, 0, 0, 16, 16, 16, 16, 144, 144, 0)
"""Cards per baccarat point value 0..9 in the biased shoe (416 cards, as eight decks)."""
TZ = timezone(timedelta(hours=-5))


def has_simulator(game: str) -> bool:
    """True when the game's package has a simulator."""
    from auditkit import games

    return games.get(game).simulate is not None


def _codes_of_value(v: int) -> np.ndarray:
    if v == 0:
        return np.arange(32, 48)  # T J Q K
    if v == 1:
        return np.arange(48, 52)  # aces
    return np.arange(4 * (v - 2), 4 * (v - 2) + 4)


def deal_baccarat(counts: tuple[int, ...], n_shoes: int, rounds_per_shoe: int, seed: int) -> dict[str, np.ndarray]:
    """Baccarat rounds dealt by the tableau from shoes of the given make-up (vectorized over shoes).

    Returns padded (n, 3) player and banker card matrices, card counts, shoe index,
    round number within the shoe and outcome code, shoe by shoe.
    """
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


def biased_table(day: str, n_shoes: int = 16, rounds_per_shoe: int = 60, seed: int = 7,
                 counts: tuple[int, ...] = BIASED_COUNTS, table_id: str = BIASED_TABLE) -> pa.Table:
    """One day of baccarat rounds at one table from the given shoes, correctly played and paid (banker 100)."""
    d = deal_baccarat(counts, n_shoes, rounds_per_shoe, seed)
    n = len(d["shoe"])
    t0 = datetime.fromisoformat(day).replace(hour=10, tzinfo=TZ)
    names = ("player", "banker", "tie")
    rows = []
    for i in range(n):  # building test records
        shoe_id = f"{table_id}-{day.replace('-', '')}-S{int(d['shoe'][i]) + 1:02d}"
        out = names[int(d["outcome"][i])]
        net = {"banker": 95.0, "player": -100.0, "tie": 0.0}[out]
        rows.append({
            "round_id": f"{shoe_id}-{int(d['seq'][i]):03d}", "table_id": table_id,
            "dealer_id": f"DB{int(d['shoe'][i]) % 3}", "started_at": t0 + timedelta(seconds=50 * i),
            "utc_offset": -300, "shoe_id": shoe_id, "round_seq": int(d["seq"][i]), "status": "completed",
            "wagers": [{"seat": 1, "bet": "banker", "amount": 100.0, "net": net}], "events": None,
            "source_file": "", "source_line": 0,
            "player_cards": [int(c) for c in d["P"][i] if c >= 0],
            "banker_cards": [int(c) for c in d["B"][i] if c >= 0],
            "outcome": out, "announced_player": None, "announced_banker": None, "deal_order": None,
            "cut_card": int(d["seq"][i]) == rounds_per_shoe - 1,
        })
    return pa.Table.from_pylist(rows, schema=schema_for("baccarat"))


def build_store(root: Path) -> Path:
    """Write the sample logs as JSONL, ingest them and validate into the store at ``root / 'store'``."""
    from auditkit.ingest.jsonl import records_from_table, write_jsonl
    from auditkit.ingest.sources import ingest_paths
    from auditkit.simulate import simulate
    from auditkit.store import Store
    from auditkit.validate import validate_into_store

    logs = root / "logs"
    for game, n in ROUNDS.items():
        if not has_simulator(game):
            continue
        for k, day in enumerate(DAYS):
            table, _truth = simulate(game, n, seed=k + 1, fault_rate=0.05, start=day)
            write_jsonl(records_from_table(table, game), logs / f"{game}-{day}.jsonl")
    for k, day in enumerate(DAYS):
        write_jsonl(records_from_table(biased_table(day, seed=100 + k), "baccarat"), logs / f"biased-{day}.jsonl")
    store = Store(root / "store")
    report = ingest_paths([logs], store)
    assert report.total("quarantined") == 0, report.summary()
    validate_into_store(store)
    return store.root


@functools.lru_cache(maxsize=1)
def sample_store() -> Path:
    """The sample store's folder, built on first use in a temporary folder kept for the process."""
    root = Path(tempfile.mkdtemp(prefix="auditkit-analysis-"))
    return build_store(root)
