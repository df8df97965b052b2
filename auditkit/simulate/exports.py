"""Sample vendor exports written from the rounds of the sample logs (issue 26), each with the import
profile that reads it (``sample_data/exports/``). Deterministic: the same logs give the same files.

    python -m auditkit.simulate.exports sample_data

- ``baccarat_rounds.csv``: one row per round, point values only (``0`` for T J Q K, no suits), US
  dates to the minute, outcome words, a shoe number and a hand number instead of a round id;
- ``blackjack_hands.xlsx``: one row per hand (player hands, split hands and the dealer's), cards as
  ``02s 11s 14c`` (numeric ranks, ace 14), flags ``Y``/``N``, amounts returned rather than nets;
- ``pai_gow_poker.sqlite``: a table ``hands``, one row per player hand, the banker's hand on each.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ZONE = "Etc/GMT+5"  # the sample logs' -05:00 all year
_NUMERIC = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}


def rounds(path: Path) -> Iterator[dict[str, Any]]:
    """The round records of a sample log (JSONL, gzipped or not)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _local(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.timezone(dt.timedelta(hours=-5))).replace(tzinfo=None)


def _points(card: str) -> str:
    """``0`` for T J Q K, ``1`` for an ace; a card that is no rank and suit (a planted joker) as it is."""
    if len(card) != 2 or card[1] not in "cdhs" or card[0] not in "23456789TJQKA":
        return card
    return "0" if card[0] in "TJQK" else "1" if card[0] == "A" else card[0]


def _numeric(card: str) -> str:
    """``02s``, ``11s``, ``14c``; a card that is no rank and suit (a planted fault) as it is."""
    if len(card) != 2 or card[1] not in "cdhs" or card[0] not in "23456789TJQKA":
        return card
    return f"{_NUMERIC.get(card[0]) or int(card[0]):02d}{card[1]}"


def _money(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def baccarat_csv(log: Path, target: Path) -> int:
    """The one-row-per-round baccarat CSV of the baccarat rounds of ``log`` (read twice, not held);
    the number of rounds written."""
    words = {"player": "player win", "banker": "banker win", "tie": "tie"}

    def chosen() -> Iterator[dict[str, Any]]:
        return (r for r in rounds(log) if r.get("game", "baccarat") == "baccarat"
                and r.get("status", "complete") == "complete" and r.get("outcome") in words)

    k = max([3] + [len(r[side]) for r in chosen() for side in ("player_cards", "banker_cards")])  # a fault may add
    shoes: dict[tuple[str, str], int] = {}
    per_table: dict[str, int] = {}
    n = 0
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(",".join(["Date", "Table", "Dealer", "Shoe", "Hand", *(f"P{i}" for i in range(1, k + 1)),
                          *(f"B{i}" for i in range(1, k + 1)), "Result"]) + "\r\n")
        for r in chosen():
            key = (r["table_id"], r["shoe_id"])
            if key not in shoes:
                per_table[r["table_id"]] = shoes[key] = per_table.get(r["table_id"], 0) + 1
            t = _local(r["started_at"])
            p = [_points(c) for c in r["player_cards"]] + [""] * (k - len(r["player_cards"]))
            b = [_points(c) for c in r["banker_cards"]] + [""] * (k - len(r["banker_cards"]))
            f.write(",".join([f"{t.month}/{t.day}/{t.year} {t:%H:%M}", r["table_id"], r["dealer_id"], str(shoes[key]),
                              str(r["round_seq"]), *p, *b, words[r["outcome"]]]) + "\r\n")
            n += 1
    tmp.replace(target)
    return n


def blackjack_xlsx(logs: Path, out: Path) -> int:
    """``blackjack_hands.xlsx`` (sheet ``Hands``) from ``logs/blackjack.jsonl.gz``; the rounds written."""
    import xlsxwriter
    target = out / "blackjack_hands.xlsx"
    tmp = target.with_name(target.name + ".tmp")
    book = xlsxwriter.Workbook(str(tmp), {"strings_to_numbers": False})
    book.set_properties({"created": dt.datetime(2025, 6, 1)})
    when = book.add_format({"num_format": "m/d/yyyy h:mm:ss"})
    sheet = book.add_worksheet("Hands")
    sheet.write_row(0, 0, ["round", "time", "table", "dealer", "shoe", "seq", "min", "max", "role", "seat", "hand",
                           "cards", "bet", "initial_bet", "returned", "is_doubled", "is_split", "surrendered"])
    row = n = 0
    yn = {True: "Y", False: "N"}
    for r in rounds(logs / "blackjack.jsonl.gz"):
        if r.get("status", "complete") != "complete":
            continue
        n += 1
        common = [r["round_id"], None, r["table_id"], r["dealer_id"], r["shoe_id"], r["round_seq"],
                  r["table_min"], r["table_max"]]
        for h in r["hands"]:
            row += 1
            sheet.write_row(row, 0, common + ["player", h["seat"], h["hand"], " ".join(map(_numeric, h["cards"])),
                                              h["wager"], h["initial_wager"], h["wager"] + h["net"],
                                              yn[h["doubled"]], yn[h["split"]], yn[h["surrendered"]]])
            sheet.write_datetime(row, 1, _local(r["started_at"]), when)
        row += 1
        sheet.write_row(row, 0, common + ["dealer", None, None, " ".join(map(_numeric, r["dealer_cards"]))])
        sheet.write_datetime(row, 1, _local(r["started_at"]), when)
    book.close()
    tmp.replace(target)
    return n


def pai_gow_sqlite(logs: Path, out: Path) -> int:
    """``pai_gow_poker.sqlite`` (table ``hands``) from ``logs/pai_gow_poker.jsonl.gz``; the rounds written."""
    target = out / "pai_gow_poker.sqlite"
    tmp = target.with_name(target.name + ".tmp")
    tmp.unlink(missing_ok=True)
    n = 0
    with sqlite3.connect(tmp) as db:
        db.execute("CREATE TABLE hands (id INTEGER PRIMARY KEY, game_no TEXT, tbl TEXT, played TEXT, dealer TEXT,"
                   " dice TEXT, first_position INTEGER, cards_remaining INTEGER, banker_hand TEXT, banker_high TEXT,"
                   " banker_low TEXT, seat INTEGER, position INTEGER, hand TEXT, high TEXT, low TEXT, bet REAL, net REAL)")
        for r in rounds(logs / "pai_gow_poker.jsonl.gz"):
            if r.get("status", "complete") != "complete":
                continue
            n += 1
            d = r["dealer"]
            for h in r["hands"]:
                db.execute("INSERT INTO hands (game_no, tbl, played, dealer, dice, first_position, cards_remaining,"
                           " banker_hand, banker_high, banker_low, seat, position, hand, high, low, bet, net)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (r["round_id"], r["table_id"], f"{_local(r['started_at']):%Y-%m-%d %H:%M:%S}",
                            r["dealer_id"], "-".join(map(str, r["dice"])), r.get("first_position"), r.get("cards_remaining"),
                            _join(d.get("cards")), _join(d.get("high")), _join(d.get("low")), h["seat"],
                            h.get("position"), _join(h.get("cards")), _join(h.get("high")), _join(h.get("low")),
                            h["wager"], h["net"]))
    tmp.replace(target)
    return n


def _join(cards: list[str] | None) -> str | None:
    return None if cards is None else ",".join(cards)


def write_exports(sample: Path) -> dict[str, int]:
    """Write the exports of ``sample/logs`` into ``sample/exports`` (the profiles beside them are kept
    in the repository); the rounds written per file."""
    logs, out = sample / "logs", sample / "exports"
    out.mkdir(parents=True, exist_ok=True)
    return {"baccarat_rounds.csv": baccarat_csv(logs / "baccarat.jsonl", out / "baccarat_rounds.csv"), "blackjack_hands.xlsx": blackjack_xlsx(logs, out),
            "pai_gow_poker.sqlite": pai_gow_sqlite(logs, out)}


if __name__ == "__main__":  # pragma: no cover
    for name, count in write_exports(Path(sys.argv[1] if len(sys.argv) > 1 else "sample_data")).items():
        print(f"{name}: {count} rounds")
