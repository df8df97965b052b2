"""Test helper: rounds (log-v1 records) written as a vendor would export them, with the profile that
reads them back, and the same rounds as far as the export carries them (to ingest as the JSONL twin)."""

from __future__ import annotations

import copy
import csv
import datetime as dt
import json
from pathlib import Path
from typing import Any

LISTS = ("hands", "wagers")
SYMBOL = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
NUMERIC = {"T": 10, "J": 11, "Q": 12, "K": 13}
CARD_NOTATIONS = ("auditkit", "rank-suit", "symbols", "numeric-ace-14", "numeric-ace-1", "points", "rank-only")
TIME_KINDS = ("iso", "strftime", "excel", "epoch")
MONEY_STYLES = ("plain", "dollars", "minus-dollars")
ZONE = "Etc/GMT+5"  # the simulator's and the examples' -05:00 all year


def write_card(card: str, notation: str) -> str:
    if card == "JK":
        return card
    rank, suit = card[0], card[1]
    if notation == "auditkit":
        return card
    if notation == "rank-suit":
        return ("10" if rank == "T" else rank) + suit.upper()
    if notation == "symbols":
        return ("10" if rank == "T" else rank) + SYMBOL[suit]
    if notation in ("numeric-ace-14", "numeric-ace-1"):
        n = (14 if notation == "numeric-ace-14" else 1) if rank == "A" else NUMERIC.get(rank) or int(rank)
        return f"{n:02d}{suit}"
    if notation == "points":
        return "0" if rank in "TJQK" else "1" if rank == "A" else rank
    return "10" if rank == "T" else rank  # rank-only


def carried(card: str, notation: str) -> str:
    """The card as far as the notation carries it (the profile's placeholder suit is 's')."""
    if card == "JK" or notation in ("auditkit", "rank-suit", "symbols", "numeric-ace-14", "numeric-ace-1"):
        return card
    if notation == "points":
        return ("T" if card[0] in "TJQK" else card[0]) + "s"
    return card[0] + "s"


def write_time(text: str, kind: str) -> str:
    t = dt.datetime.fromisoformat(text)
    if kind == "iso":
        return text
    if kind == "epoch":
        return f"{t.timestamp():.0f}"
    local = t.replace(tzinfo=None)
    if kind == "strftime":
        return f"{local.month}/{local.day}/{local.year} {local:%H:%M:%S}"
    serial = (local - dt.datetime(1899, 12, 30)) / dt.timedelta(days=1)
    return repr(serial)


def write_money(v: float, style: str) -> str:
    if style == "plain":
        return repr(v)
    text = f"${abs(v):,.2f}"
    return text if v >= 0 else (f"({text})" if style == "dollars" else "-" + text)


def _is_cards(key: str) -> bool:
    return key.endswith("cards") or key in ("high", "low")


MONEY = {"amount", "net", "wager", "initial_wager", "ante", "play", "pair_plus", "ante_bonus", "table_min",
         "table_max"}


def _cell(key: str, value: Any, notation: str, money: str, cells: str) -> str:
    if value is None:
        return ""
    if _is_cards(key):
        cards = [write_card(c, notation) for c in value]
        return json.dumps(cards) if cells == "json" else " ".join(cards)
    if key == "dice":
        return " ".join(map(str, value))
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if (key in MONEY or key.startswith("net_")) and isinstance(value, int | float):
        return write_money(value, money)
    return str(value)


def export(records: list[dict], folder: Path, *, grain: str = "hand", notation: str = "auditkit",
           times: str = "iso", money: str = "plain", cells: str = "json", nets: str = "direct",
           encoding: str = "utf-8") -> tuple[Path, Path, list[dict]]:
    """(the export CSV, its profile, the rounds as the export carries them)."""
    game = records[0]["game"]
    item_list = "wagers" if game == "baccarat" else "hands"
    twins: list[dict] = []
    rows: list[dict[str, str]] = []
    columns: dict[str, str] = {}  # column -> target
    for rec in records:
        twin = copy.deepcopy(rec)
        twin.pop("events", None)
        lists = [k for k in LISTS if isinstance(twin.get(k), list)]
        for name in lists:
            if grain == "round":
                twin[name] = twin[name][:1]
            for item in twin[name]:
                for sub in list(item):
                    if _is_cards(sub):
                        item[sub] = [carried(c, notation) for c in item[sub]]
        for key, value in list(twin.items()):
            if _is_cards(key):
                twin[key] = [carried(c, notation) for c in value]
            elif isinstance(value, dict):
                for sub in value:
                    if _is_cards(sub):
                        value[sub] = [carried(c, notation) for c in value[sub]]
        twins.append(twin)
        base: dict[str, str] = {}
        for key, value in rec.items():
            if key == "events" or key in lists:
                continue
            if isinstance(value, dict):
                for sub, v in value.items():
                    columns[f"{key}_{sub}"] = f"{key}.{sub}"
                    base[f"{key}_{sub}"] = _cell(sub, v, notation, money, cells)
            elif key == "started_at":
                columns["When"] = key
                base["When"] = write_time(value, times)
            else:
                columns[key] = key
                base[key] = _cell(key, value, notation, money, cells)
        for k in range(max([len(twin[name]) for name in lists] + [1])):
            row = dict(base)
            for name in lists:
                if k >= len(twin[name]):
                    continue
                item = rec[name][k]
                for sub, v in item.items():
                    col = f"{name}_{sub}"
                    if sub == "net" and nets == "bankroll":
                        columns[col] = f"{name}.{sub}"
                        row[f"{name}_before"] = _cell("net", 1000, "", money, cells)
                        row[f"{name}_after"] = _cell("net", 1000 + v, "", money, cells)
                        continue
                    columns[col] = f"{name}.{sub}"
                    if sub == "net" and nets == "returned":
                        amount = item.get("amount", item.get("wager"))
                        row[col] = _cell("net", amount + v, "", money, cells)
                    else:
                        row[col] = _cell(sub, v, notation, money, cells)
            row["line_no"] = str(k)
            rows.append(row)
    header = list(dict.fromkeys(["round_id", *[c for r in rows for c in r]]))
    path = folder / "export.csv"
    with path.open("w", newline="", encoding=encoding) as fh:
        w = csv.DictWriter(fh, header)
        w.writeheader()
        w.writerows(rows)
    profile = folder / "export.toml"
    profile.write_text(_profile(columns, game, grain, notation, times, cells, nets, encoding, item_list), "utf-8")
    return path, profile, twins


def _profile(columns: dict[str, str], game: str, grain: str, notation: str, times: str, cells: str, nets: str,
             encoding: str, item_list: str) -> str:
    lines = ["profile = 1", f'name = "test-{game}-{grain}"', "[source]", 'format = "csv"', f'encoding = "{encoding}"',
             "[grain]", f'rows = "{"round" if grain == "round" else "wager" if item_list == "wagers" else "hand"}"']
    if grain != "round":
        lines.append('round = ["round_id"]')
    lines.append("[fields]")
    for col, target in columns.items():
        last = target.rsplit(".", 1)[-1]
        if target == "game":
            spec = f'{{const = "{game}"}}'
        elif _is_cards(last):
            spec = '{{column = "{}", {}}}'.format(col, "json = true" if cells == "json" else 'split = " "')
        elif last == "dice":
            spec = f'{{column = "{col}", split = " "}}'
        elif last == "net" and target.split(".")[0] in LISTS and nets == "returned":
            spec = f'{{returned = "{col}"}}'
        elif last == "net" and target.split(".")[0] in LISTS and nets == "bankroll":
            name = target.split(".")[0]
            spec = f'{{bankroll_before = "{name}_before", bankroll_after = "{name}_after"}}'
        elif last in ("doubled", "split", "surrendered"):
            spec = f'{{column = "{col}", values = {{Yes = true, No = false}}}}'
        else:
            spec = f'"{col}"'
        lines.append(f'"{target}" = {spec}' if "." not in target else f'{target} = {spec}')
    lines += ["[cards]", f'notation = "{notation}"', "[times]"]
    kind = {"iso": "iso", "strftime": "strftime", "excel": "excel", "epoch": "epoch"}[times]
    lines.append(f'kind = "{kind}"')
    if times == "strftime":
        lines.append('format = "%m/%d/%Y %H:%M:%S"')
    lines.append(f'zone = "{ZONE}"')
    return "\n".join(lines) + "\n"
