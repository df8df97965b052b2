"""Test helper: exports written as other programs write them (issue 40, "Done when"), each from rounds
of auditkit's simulators with faults injected, with their JSONL twin (the same rounds as far as the
export carries them). ``profile suggest`` drafts each; tests/test_profile_suggest.py compares the
findings of the draft (after at most two edits: round ids, time zone) with the twin's."""

from __future__ import annotations

import copy
import csv
import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ZONE = "Etc/GMT+5"  # the simulators' -05:00
SUITS = "cdhs"
RANKS = {"A": 1, "T": 10, "J": 11, "Q": 12, "K": 13}


@dataclass
class Export:
    """An export: its file (or database name), its JSONL twin, how to draft it, and the edits a draft may need."""

    path: Path
    twin: Path
    fmt: str | None = None
    table: str | None = None
    url: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def rounds(game: str, n: int = 160, seed: int = 11, fault_rate: float = 0.1) -> list[dict]:
    from auditkit.ingest.jsonl import records_from_table
    from auditkit.simulate import simulate

    table = simulate(game, n, seed=seed, fault_rate=fault_rate)[0]
    return list(records_from_table(table, game))


def _twin(records: list[dict], folder: Path, name: str, drop: tuple[str, ...] = ("events",)) -> Path:
    out = folder / f"{name}.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for rec in records:
            rec = copy.deepcopy(rec)
            for key in drop:
                rec.pop(key, None)
            fh.write(json.dumps(rec) + "\n")
    return out


def _local(stamp: str, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return datetime.fromisoformat(stamp).strftime(fmt)


def _csv(path: Path, header: list[str], rows: list[list[Any]], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter=delimiter)
        w.writerow(header)
        w.writerows([["" if v is None else v for v in r] for r in rows])
    return path


def _numeric(card: str) -> str:
    """``Ts`` as ``10s``, ``Ac`` as ``14c``, ``2h`` as ``02h``."""
    if card == "JK":
        return "JKR"
    n = {"A": 14, **RANKS}.get(card[0]) or int(card[0])
    return f"{n:02d}{card[1]}"


def tagged_tokens(folder: Path) -> Export:
    """Baccarat, one row per round: every card of the round in one cell as ``who:rank:suit`` tokens
    (``P:3:0 B:11:1``: rank 1-13, suit 0-3 = c d h s), the wagers' total stake and net per side."""
    recs = [r for r in rounds("baccarat") if "JK" not in r["player_cards"] + r["banker_cards"]]
    rows = []
    for r in recs:
        toks = [f"{who}:{RANKS.get(c[0]) or int(c[0])}:{SUITS.index(c[1])}" for who, key in (("P", "player_cards"),
                ("B", "banker_cards")) for c in r[key]]
        rows.append([r["round_id"], r["started_at"], r["table_id"], r.get("status", "completed"), r["shoe_id"],
                     r["round_seq"], " ".join(toks),
                     {"player": "P", "banker": "B", "tie": "T"}[r["outcome"]]])
    path = _csv(folder / "tagged.csv", ["RoundRef", "Started", "Table", "Status", "Shoe", "Seq", "Cards", "Win"], rows)
    twin = [{k: v for k, v in r.items() if k not in ("wagers", "announced", "deal_order", "cut_card", "dealer_id")}
            for r in recs]
    return Export(path, _twin(twin, folder, "tagged"))


def layout_cell(folder: Path) -> Export:
    """Baccarat, one row per round: the totals the dealer announced and the order the cards were dealt in
    one layout cell (``46|PBPBPB``: player 4, banker 6), the cards as ``4h/Kd/2s``."""
    recs = [r for r in rounds("baccarat", seed=21) if r.get("announced") and r.get("deal_order")]
    rows = []
    for r in recs:
        a = r["announced"]
        rows.append([r["round_id"], r["started_at"], r["table_id"], r.get("status", "completed"), r["shoe_id"],
                     r["round_seq"], "/".join(r["player_cards"]), "/".join(r["banker_cards"]), r["outcome"],
                     f"{a['player']}{a['banker']}|{r['deal_order']}"])
    path = _csv(folder / "layout.csv", ["Id", "Time", "Table", "Status", "Shoe", "Seq", "P", "B", "Result", "Layout"],
                rows)
    twin = [{k: v for k, v in r.items() if k not in ("wagers", "cut_card", "dealer_id")} for r in recs]
    return Export(path, _twin(twin, folder, "layout"))


def _bj_twin(r: dict, keep: tuple[str, ...]) -> dict:
    out = {k: v for k, v in r.items() if k not in ("events", "hands", "dealer_id", "shoe_id", "round_seq",
                                                   "table_min", "table_max")}
    out["hands"] = [{k: h[k] for k in keep if k in h} for h in r["hands"]]
    return out


def game_counter(folder: Path) -> Export:
    """Baccarat, one row per wager, no round id: a numeric ``game`` column counts each table's games
    (1, 2, 3... on every table), with shoe and hand numbers, cards as ``Kd 5c``, the winner in words, the stake and the net."""
    recs = rounds("baccarat", seed=12)
    rows, twin = [], []
    counters: dict[str, int] = {}
    for r in recs:
        if not r.get("wagers"):
            continue
        k = counters[r["table_id"]] = counters.get(r["table_id"], 0) + 1  # each table counts its own games
        for w in r["wagers"]:
            rows.append([k, r["table_id"], _local(r["started_at"]), r.get("status", "completed"), r["shoe_id"],
                         r["round_seq"],
                         " ".join(r["player_cards"]), " ".join(r["banker_cards"]), f"{r['outcome']} wins",
                         w["seat"], w["bet"], w["amount"], w["net"]])
        t = {key: v for key, v in r.items() if key not in ("announced", "deal_order", "cut_card", "dealer_id")}
        twin.append({**t, "round_id": f"{r['table_id']}-{k}"})  # an id of the table and its game number
    path = _csv(folder / "counter.csv", ["game", "table", "time", "status", "shoe", "hand", "player", "banker", "winner",
                                         "seat", "bet_on", "stake", "net"], rows)
    return Export(path, _twin(twin, folder, "counter"))


def _bj_rows(recs: list[dict], net: str) -> tuple[list[str], list[list[Any]]]:
    """Blackjack, one row per hand, the dealer's and each side bet a row of their own (a ``type`` column)."""
    header = ["round", "time", "table", "status", "type", "seat", "hand", "cards", "bet", net, "double", "split",
              "surrender", "side"]
    rows = []
    for r in recs:
        when, status = _local(r["started_at"]), r.get("status", "completed")
        rows.append([r["round_id"], when, r["table_id"], status, "dealer", "", "", " ".join(r["dealer_cards"]), "", "",
                     "", "", "", ""])
        for h in r["hands"]:
            amount = h["net"] + h["wager"] if net == "payout" else h["net"]
            rows.append([r["round_id"], when, r["table_id"], status, "player", h["seat"], h["hand"], " ".join(h["cards"]),
                         h["wager"], amount, "Y" if h.get("doubled") else "N", "Y" if h.get("split") else "N",
                         "Y" if h.get("surrendered") else "N", ""])
        for w in r.get("wagers", []):
            amount = w["net"] + w["amount"] if net == "payout" else w["net"]
            rows.append([r["round_id"], when, r["table_id"], status, "side bet", w["seat"], "", "", w["amount"], amount,
                         "", "", "", w["bet"]])
    return header, rows


def _bj_full_twin(r: dict) -> dict:
    out = {k: v for k, v in r.items() if k not in ("events", "dealer_id", "shoe_id", "round_seq", "table_min",
                                                   "table_max")}
    out["hands"] = [{k: v for k, v in h.items() if k != "initial_wager"} for h in r["hands"]]
    return out


def stake_delta(folder: Path) -> Export:
    """Blackjack, one row per hand: the stake in ``bet`` (5, 10, 20: a number, not the bet's side), the net in ``delta``."""
    recs = rounds("blackjack", seed=13)
    header, rows = _bj_rows(recs, "delta")
    path = _csv(folder / "stake_delta.csv", header, rows)
    return Export(path, _twin([_bj_full_twin(r) for r in recs], folder, "stake_delta"))


def decimal_commas(folder: Path) -> Export:
    """Baccarat, one row per wager, ``;`` between cells and a decimal comma (``10,00``, ``-9,50``), European dates."""
    recs = rounds("baccarat", seed=14)
    rows, twin = [], []
    for r in recs:
        if not r.get("wagers"):
            continue
        for w in r["wagers"]:
            rows.append([r["round_id"], _local(r["started_at"], "%d.%m.%Y %H:%M:%S"), r["table_id"],
                         r.get("status", "completed"), r["shoe_id"],
                         r["round_seq"], " ".join(r["player_cards"]), " ".join(r["banker_cards"]), r["outcome"],
                         w["seat"], w["bet"], f"{w['amount']:.2f}".replace(".", ","),
                         f"{w['net']:.2f}".replace(".", ",")])
        twin.append({k: v for k, v in r.items() if k not in ("announced", "deal_order", "cut_card", "dealer_id")})
    path = _csv(folder / "commas.csv", ["Round", "Time", "Table", "Status", "Shoe", "Hand", "Player Cards", "Banker Cards",
                                        "Result", "Seat", "Bet", "Stake", "Net"], rows, delimiter=";")
    return Export(path, _twin(twin, folder, "commas"))


def three_card(folder: Path) -> Export:
    """Three card poker, one row per hand: the dealer's cards on every row, ante, play and pair plus and their nets."""
    recs = rounds("three_card_poker", seed=15)
    rows = []
    for r in recs:
        for h in r["hands"]:
            rows.append([r["round_id"], r["started_at"], r["table_id"], r.get("status", "completed"),
                         " ".join(r["dealer_cards"]), h["seat"],
                         " ".join(h["cards"]), h["decision"], h["ante"], h.get("play"), h.get("pair_plus"),
                         h["net_ante"], h.get("net_play"), h.get("net_pair_plus"), h.get("ante_bonus")])
    path = _csv(folder / "tcp.csv", ["hand_id", "dealt", "table", "status", "dealer_hand", "seat", "player_hand", "decision",
                                     "ante", "play", "pair_plus", "net_ante", "net_play", "net_pair_plus",
                                     "ante_bonus"], rows)
    twin = [{k: v for k, v in r.items() if k not in ("dealer_id",)} for r in recs]
    return Export(path, _twin(twin, folder, "tcp"))


def pai_gow_no_events(folder: Path) -> Export:
    """Pai gow poker, one row per hand and one for the banker's, no events; cards ``10h Ad JKR``."""
    recs = rounds("pai_gow_poker", seed=16)
    rows = []
    for r in recs:
        base = [r["round_id"], _local(r["started_at"]), r["table_id"], r.get("status", "completed"),
                "-".join(map(str, r["dice"])),
                r["first_position"]]
        d = r["dealer"]
        rows.append([*base, "banker", "", 1, *(" ".join(map(_numeric, d.get(k, []))) for k in ("cards", "high", "low")),
                     "", ""])
        for h in r["hands"]:
            rows.append([*base, "player", h["seat"], h["position"],
                         *(" ".join(map(_numeric, h.get(k, []))) for k in ("cards", "high", "low")), h["wager"],
                         h["net"]])
    path = _csv(folder / "pgp.csv", ["game_no", "played", "table", "status", "dice", "first_position", "role", "seat",
                                     "position", "hand", "high", "low", "bet", "win_loss"], rows)
    twin = [{k: v for k, v in r.items() if k not in ("dealer_id", "cards_remaining")} for r in recs]
    return Export(path, _twin(twin, folder, "pgp"))


def hands_without_split_flag(folder: Path) -> Export:
    """Blackjack, one row per hand, no split flag: a seat's hands 0 and 1 in one round say it was split."""
    recs = rounds("blackjack", seed=17, n=300)
    header, rows = _bj_rows(recs, "delta")
    drop = [header.index("split")]
    rows = [[v for k, v in enumerate(row) if k not in drop] for row in rows]
    header = [h for k, h in enumerate(header) if k not in drop]
    path = _csv(folder / "nosplit.csv", header, rows)
    return Export(path, _twin([_bj_full_twin(r) for r in recs], folder, "nosplit"),
                  notes={"splits": sum(h.get("split", False) for r in recs for h in r["hands"])})


def nested_json(folder: Path) -> Export:
    """Blackjack as one JSON document: rounds, each with its players, each with their hands."""
    recs = rounds("blackjack", seed=18)
    doc = {"export": {"rounds": []}}
    for r in recs:
        players: dict[int, dict] = {}
        for h in r["hands"]:
            players.setdefault(h["seat"], {"seat": h["seat"], "hands": []})["hands"].append(
                {"hand": h["hand"], "cards": h["cards"], "bet": h["wager"], "net": h["net"],
                 "doubled": h.get("doubled", False), "split": h.get("split", False),
                 "surrendered": h.get("surrendered", False)})
        doc["export"]["rounds"].append({"id": r["round_id"], "table": r["table_id"], "start": r["started_at"],
                                        "status": r.get("status", "completed"), "dealer_cards": r["dealer_cards"],
                                        "players": list(players.values())})
    path = folder / "nested.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    twin = [_bj_full_twin({k: v for k, v in r.items() if k != "wagers"}) for r in recs]
    return Export(path, _twin(twin, folder, "nested"))


def sqlite_table(folder: Path) -> Export:
    """Blackjack hands in a SQLite table beside another table: amounts returned in ``payout``."""
    recs = rounds("blackjack", seed=19)
    header, rows = _bj_rows(recs, "payout")
    db = folder / "casino.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE tables_list (name TEXT)")
        cols = ", ".join(f'"{c}" {"REAL" if c in ("bet", "payout") else "INTEGER" if c in ("seat", "hand") else "TEXT"}'
                         for c in header)
        con.execute(f"CREATE TABLE bj_hands (id INTEGER PRIMARY KEY, {cols})")
        con.executemany(f"INSERT INTO bj_hands ({', '.join(repr(c) for c in header)}) VALUES "
                        f"({', '.join('?' * len(header))})", [[v if v != "" else None for v in r] for r in rows])
    return Export(db, _twin([_bj_full_twin(r) for r in recs], folder, "sqlite"), table="bj_hands")


def postgresql_table(folder: Path, url: str) -> Export:
    """Baccarat wagers in a PostgreSQL table (``numeric`` amounts, a ``timestamptz``), one row per wager."""
    import adbc_driver_postgresql.dbapi as pg

    recs = [r for r in rounds("baccarat", seed=20) if r.get("wagers")]
    with pg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS bac_wagers")
        cur.execute("CREATE TABLE bac_wagers (id serial PRIMARY KEY, round_id text, table_id text, "
                    "started_at timestamptz, status text, shoe_id text, round_seq integer, player_cards text, banker_cards text, "
                    "outcome text, seat integer, bet text, amount numeric(10,2), net numeric(10,2))")
        for r in recs:
            for w in r["wagers"]:
                cur.execute("INSERT INTO bac_wagers (round_id, table_id, started_at, status, shoe_id, round_seq, "
                            "player_cards, banker_cards, outcome, seat, bet, amount, net) VALUES ($1, $2, "
                            "$3::timestamptz, $4, $5, $6, $7, $8, $9, $10, $11, $12::numeric, $13::numeric)",
                            (r["round_id"], r["table_id"], r["started_at"], r.get("status", "completed"), r["shoe_id"], r["round_seq"],
                             " ".join(r["player_cards"]), " ".join(r["banker_cards"]), r["outcome"], w["seat"],
                             w["bet"], str(w["amount"]), str(w["net"])))
    twin = [{k: v for k, v in r.items() if k not in ("announced", "deal_order", "cut_card", "dealer_id")}
            for r in recs]
    return Export(Path("casino"), _twin(twin, folder, "pg"), fmt="postgresql", table="bac_wagers", url=url)


SHAPES = {"tagged_tokens": tagged_tokens, "layout_cell": layout_cell, "game_counter": game_counter,
          "stake_delta": stake_delta, "decimal_commas": decimal_commas, "three_card": three_card,
          "pai_gow_no_events": pai_gow_no_events, "hands_without_split_flag": hands_without_split_flag,
          "nested_json": nested_json, "sqlite_table": sqlite_table}
