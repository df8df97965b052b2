"""A small simulated store for the analysis, chart and notebook tests (built once per test process).

Three gaming days of every game from the simulators (with injected faults),
validated into the store, plus one baccarat table, ``BAC-BIASED``, dealt from
shoes stacked with sevens and eights (no aces, twos or nines), whose outcome frequencies
differ from theory (player 0.3997 and banker 0.4975 against 0.4462 and 0.4586).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa

from auditkit.schema import schema_for
from auditkit.simulate.samples import deal_baccarat

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
    """The sample store's folder, built on first use in a temporary folder kept for the process
    (removed when it exits)."""
    root = Path(tempfile.mkdtemp(prefix="auditkit-analysis-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return build_store(root)


BUNDLED = Path(__file__).resolve().parents[1] / "sample_data"
"""The bundled sample data: five weeks of every game, a story planted in each (truth/story.json)."""


@functools.lru_cache(maxsize=1)
def bundled_store() -> Path:
    """The bundled sample logs ingested and validated into a store (built once per process, as
    ``auditkit run sample_data/job.toml`` fills out/store), for the notebooks' default views."""
    from auditkit.ingest.sources import ingest_paths
    from auditkit.store import Store
    from auditkit.validate import validate_into_store

    root = Path(tempfile.mkdtemp(prefix="auditkit-bundled-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    store = Store(root / "store")
    ingest_paths([BUNDLED / "logs"], store)
    validate_into_store(store)
    return store.root
