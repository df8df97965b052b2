"""Sample vendor exports: twins of rounds of the sample logs, written as other systems write them.

``python -m auditkit.simulate.exports sample_data`` writes ``sample_data/exports/`` from the rounds
in ``sample_data/logs/`` (deterministic: the same logs give the same files); each export has its
import profile beside it (docs/profiles.md):

- ``baccarat_rounds.csv``: one row per round, cards as point values only (no suits, ``0`` for
  T J Q K) in separate columns, US dates to the minute, outcome words (``banker win``), a gaming
  day, shoe number and hand number instead of a round id; no wagers, no announced totals;
- ``blackjack_hands.xlsx``: one row per hand (the dealer's its own row), cards as ``02s 11s 14c``
  (numeric ranks, ace 14), ``Y``/``N`` flags, the amount returned rather than the net,
  side bets (insurance, even money) a row each;
- ``pai_gow_poker.db``: a SQLite table, one row per hand (the banker's its own row), cards as
  ``10H,AD,JOKER``, dice as ``4-2-6``, each hand's bankroll before and after instead of a net.
"""

from __future__ import annotations

import csv
import gzip
import json
import sqlite3
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["write_exports"]

RANKS = "23456789TJQKA"
POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0, **{str(n): n for n in range(2, 10)}}


def _records(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                yield rec


def _rank(card: str) -> str:
    return "T" if card[:-1] == "10" else card[0]


def _local(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def baccarat_csv(log: Path, out: Path) -> int:
    """One row per round, point values, US dates; returns the rounds written."""
    rows = 0
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(["Table", "Gaming Day", "Shoe", "Hand", "Date", "Dealer", "Status",
                    "P1", "P2", "P3", "B1", "B2", "B3", "Result"])
        for r in _records(log):
            table, day, shoe, hand = r["round_id"].rsplit("-", 3)[0], *r["round_id"].rsplit("-", 3)[1:]
            when = _local(r["started_at"])
            p = [str(POINTS[_rank(c)]) if c != "JK" else "" for c in r.get("player_cards", [])] + ["", "", ""]
            b = [str(POINTS[_rank(c)]) if c != "JK" else "" for c in r.get("banker_cards", [])] + ["", "", ""]
            if any(c == "JK" for c in r.get("player_cards", []) + r.get("banker_cards", [])) \
                    or max(len(r.get("player_cards", [])), len(r.get("banker_cards", []))) > 3:
                continue  # a joker, or a fourth card, has no column in this export: that round is not exported
            result = {"player": "player win", "banker": "banker win", "tie": "tie"}.get(r.get("outcome"), "")
            w.writerow([table, day, int(shoe[1:]), int(hand), f"{when.month}/{when.day}/{when.year} "
                        f"{when.hour:02d}:{when.minute:02d}", r.get("dealer_id", ""), r.get("status", "completed"),
                        *p[:3], *b[:3], result])
            rows += 1
    return rows


def _numeric(card: str) -> str:
    """``Ts`` as ``10s``, ``Ac`` as ``14c``, ``2h`` as ``02h``."""
    rank = _rank(card)
    return f"{RANKS.index(rank) + 2:02d}{card[-1]}"


def blackjack_xlsx(log: Path, out: Path) -> int:
    """One row per hand and one for the dealer's, numeric ranks, amounts returned; returns the rounds."""
    import xlsxwriter

    book = xlsxwriter.Workbook(str(out))
    book.set_properties({"created": datetime(2025, 7, 1)})  # a fixed date: the same logs, the same file
    sheet = book.add_worksheet("Hands")
    stamp = book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
    header = ["Game ID", "Time", "Table", "Dealer", "Shoe", "Min", "Max", "Status", "Role", "Seat", "Hand", "Cards",
              "Bet", "Initial Bet", "Doubled", "is_split", "surrendered", "Returned", "Side Bet"]
    sheet.write_row(0, 0, header)
    row, rounds = 1, 0
    for r in _records(log):
        when = _local(r["started_at"]).replace(tzinfo=None)
        common = [r["round_id"], when, r["table_id"], r.get("dealer_id", ""), r.get("shoe_id", ""),
                  r.get("table_min"), r.get("table_max"), r.get("status", "completed")]
        cards = [c for h in r.get("hands", []) for c in h.get("cards", [])] + r.get("dealer_cards", [])
        if any(c == "JK" for c in cards):
            continue
        for h in r.get("hands", []):
            sheet.write_row(row, 0, [*common, "player", h.get("seat"), h.get("hand"),
                                     " ".join(_numeric(c) for c in h.get("cards", [])), h.get("wager"),
                                     h.get("initial_wager"), "Y" if h.get("doubled") else "N",
                                     "Y" if h.get("split") else "N", "Y" if h.get("surrendered") else "N",
                                     h["wager"] + h["net"]])
            sheet.write_datetime(row, 1, when, stamp)
            row += 1
        for wager in r.get("wagers", []):  # side bets (insurance, even money): a row each, amount returned
            sheet.write_row(row, 0, [*common, "side bet", wager.get("seat"), None, None, wager.get("amount"), None,
                                     None, None, None, wager["amount"] + wager["net"], wager.get("bet")])
            sheet.write_datetime(row, 1, when, stamp)
            row += 1
        sheet.write_row(row, 0, [*common, "dealer", None, None, " ".join(_numeric(c) for c in r.get("dealer_cards", []))])
        sheet.write_datetime(row, 1, when, stamp)
        row += 1
        rounds += 1
    book.close()
    return rounds


def _pgp(card: str) -> str:
    return "JOKER" if card == "JK" else f"{'10' if _rank(card) == 'T' else _rank(card)}{card[-1].upper()}"


def pai_gow_sqlite(log: Path, out: Path) -> int:
    """A SQLite table ``hands``: one row per hand and one for the banker's; returns the rounds."""
    out.unlink(missing_ok=True)
    rounds = 0
    with sqlite3.connect(out) as db:
        db.execute("CREATE TABLE hands (id INTEGER PRIMARY KEY, game_no TEXT, played TEXT, tbl TEXT, dealer TEXT,"
                   " status TEXT, dice TEXT, first_position INTEGER, cards_remaining INTEGER, role TEXT, seat INTEGER,"
                   " position INTEGER, hand TEXT, high TEXT, low TEXT, bet REAL, bank_before REAL, bank_after REAL)")
        rows = []
        for r in _records(log):
            when = _local(r["started_at"]).strftime("%Y-%m-%d %H:%M:%S")
            common = (r["round_id"], when, r["table_id"], r.get("dealer_id"), r.get("status", "completed"),
                      "-".join(map(str, r.get("dice", []))),
                      r.get("first_position"), r.get("cards_remaining"))
            d = r.get("dealer", {})
            rows.append((*common, "banker", None, None, ",".join(map(_pgp, d.get("cards", []))),
                         ",".join(map(_pgp, d.get("high", []))), ",".join(map(_pgp, d.get("low", []))),
                         None, None, None))
            for h in r.get("hands", []):
                before = 1000.0
                rows.append((*common, "player", h.get("seat"), h.get("position"), ",".join(map(_pgp, h["cards"])),
                             ",".join(map(_pgp, h.get("high", []))), ",".join(map(_pgp, h.get("low", []))),
                             h.get("wager"), before, before + h["net"]))
            rounds += 1
        db.executemany("INSERT INTO hands (game_no, played, tbl, dealer, status, dice, first_position, cards_remaining,"
                       " role, seat, position, hand, high, low, bet, bank_before, bank_after)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return rounds


def write_exports(root: Path) -> dict[str, int]:
    """Write the sample exports from ``root/logs`` into ``root/exports``; rounds written per export."""
    logs, out = root / "logs", root / "exports"
    out.mkdir(parents=True, exist_ok=True)
    return {"baccarat_rounds.csv": baccarat_csv(logs / "baccarat.jsonl", out / "baccarat_rounds.csv"),
            "blackjack_hands.xlsx": blackjack_xlsx(logs / "blackjack.jsonl.gz", out / "blackjack_hands.xlsx"),
            "pai_gow_poker.db": pai_gow_sqlite(logs / "pai_gow_poker.jsonl.gz", out / "pai_gow_poker.db")}


if __name__ == "__main__":
    for name, n in write_exports(Path(sys.argv[1] if len(sys.argv) > 1 else "sample_data")).items():
        print(f"{name}: {n} rounds")
