"""``auditkit profile check`` as a preview: the first rounds side by side with their source rows, in
words (cards with suit symbols, wagers and nets, who won), the coverage per citation the rounds read
will get, and the rows that cannot be mapped grouped by reason, with a count."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["round_words", "side_by_side", "source_cells", "coverage_lines", "unmapped_lines", "card_words"]

SUIT = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
_SHOWN = ("game", "table_id", "started_at", "dealer_id", "shoe_id", "round_seq", "round_id", "status")


def card_words(cards: Iterable[str], suits: bool = True) -> str:
    """Card codes as a reader writes them: ``As Td JK`` -> ``A♠ 10♦ joker`` (without suits when the
    export does not record them: the profile's placeholder suit is not shown)."""
    out = []
    for c in cards:
        if c == "JK":
            out.append("joker")
            continue
        rank = "10" if c[0] == "T" else c[0]
        out.append(rank + (SUIT.get(c[1:], c[1:]) if suits else ""))
    return " ".join(out) or "(none)"


def _money(v: Any) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    return f"{int(v):,}" if isinstance(v, (int, float)) else str(v)


def _result(net: Any) -> str:
    if not isinstance(net, (int, float)):
        return "net not recorded"
    return f"won {_money(net)}" if net > 0 else f"lost {_money(-net)}" if net < 0 else "push"


def _bets(item: dict[str, Any]) -> tuple[list[str], float]:
    """The stakes of a wager or hand with their nets in words, and the sum of the nets."""
    words, total = [], 0.0
    for key, value in item.items():
        net_key = "net" if key == "amount" or key == "wager" else f"net_{key}"
        if net_key not in item or not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        net = item[net_key]
        name = item.get("bet", "") if key == "amount" else key.replace("_", " ")
        words.append(f"{name + ' ' if name else ''}{_money(value)} {_result(net)}")
        total += net if isinstance(net, (int, float)) else 0.0
    return words, total


def _hand_total(game: str, cards: Sequence[str]) -> str:
    """`` (7)`` where the game announces a hand's total (its words' ``hand_total``), else nothing."""
    from ... import games

    try:
        words = games.get(game).words
    except (KeyError, ValueError):
        return ""
    total = getattr(words, "hand_total", None)
    try:
        return f" ({total(cards)})" if total and cards else ""
    except (KeyError, ValueError, IndexError):
        return ""


def round_words(rec: dict[str, Any], not_recorded: Sequence[str] = ()) -> list[str]:
    """A round record (log-v1) in words, a line per fact."""
    suits = "suits" not in not_recorded
    game = str(rec.get("game", "?"))
    head = [game.replace("_", " "), f"table {rec.get('table_id', '?')}", str(rec.get("started_at", "?"))]
    head += [f"dealer {rec['dealer_id']}"] if rec.get("dealer_id") else []
    head += [f"shoe {rec['shoe_id']}"] if rec.get("shoe_id") else []
    head += [f"round {rec['round_seq']} of the shoe"] if rec.get("round_seq") is not None else []
    lines = [", ".join(head) + (f" ({rec['status']})" if rec.get("status") not in (None, "completed") else "")]
    for key, value in rec.items():
        if key.endswith("cards") and isinstance(value, list):
            label = key[:-len("_cards")] if key != "cards" else "cards"
            total = _hand_total(game, value)
            lines.append(f"{label}: {card_words(value, suits)}{total}")
        elif key == "dealer" and isinstance(value, dict):
            parts = [f"{k} {card_words(v, suits)}" for k, v in value.items() if isinstance(v, list)]
            lines.append("dealer: " + "; ".join(parts))
        elif key == "dice" and isinstance(value, list):
            lines.append("dice: " + " ".join(map(str, value)))
    if rec.get("outcome"):
        lines.append(f"outcome: {rec['outcome']}" + (" wins" if rec["outcome"] != "tie" else ""))
    total, any_net = 0.0, False
    for w in rec.get("wagers") or []:
        words, net = _bets(w)
        any_net |= bool(words)
        total += net
        lines.append(f"seat {w.get('seat', '?')}: " + ("; ".join(words) or f"{w.get('bet', '')} "
                                                        f"{_money(w.get('amount', '?'))}".strip()))
    for h in rec.get("hands") or []:
        words, net = _bets(h)
        any_net |= bool(words)
        total += net
        cards = [f"{k} {card_words(v, suits)}" if k != "cards" else card_words(v, suits)
                 for k, v in h.items() if isinstance(v, list) and (k == "cards" or k in ("high", "low"))]
        flags = [k.replace("_", " ") if v is True else f"{k.replace('_', ' ')} {v}" for k, v in h.items()
                 if k not in ("seat", "hand") and not isinstance(v, (list, dict)) and v is not False
                 and not k.startswith("net") and f"net_{k}" not in h and k not in ("wager", "amount")]
        seat = f"seat {h.get('seat', '?')}" + (f" hand {h['hand']}" if "hand" in h else "")
        lines.append(f"{seat}: " + "; ".join(cards + flags + words))
    if any_net:
        lines.append("players won " + _money(total) if total > 0 else
                     "the house won " + _money(-total) if total < 0 else "players and house even")
    return lines


def source_cells(rows: Sequence[dict[str, Any]], row_key: str) -> list[str]:
    """A round's source rows as ``column: cell`` lines under ``row N`` (empty cells left out)."""
    out: list[str] = []
    for r in rows:
        out.append(f"row {r[row_key]}")
        out += [f"  {k}: {v}" for k, v in r.items() if k != row_key and v is not None]
    return out


def side_by_side(left: list[str], right: list[str], width: int = 44) -> list[str]:
    """Two columns of lines, the left cut to ``width`` characters."""
    cut = [line if len(line) <= width else line[:width - 1] + "…" for line in left]
    return [f"  {a:<{width}} | {b}".rstrip() for a, b in itertools.zip_longest(cut, right, fillvalue="")]


def round_rows(table: pa.Table, first: int, raw: str, row_key: str) -> list[dict[str, Any]]:
    """The source rows of the round whose first row is ``first`` and whose rows' texts are ``raw``
    (cells joined by commas, a line a row, as the mapping gives them), in the source's order."""
    rows = table[row_key].to_numpy()
    at = int(np.searchsorted(rows, first)) if len(rows) and np.all(np.diff(rows) > 0) else \
        int(np.flatnonzero(rows == first)[0])
    lines = raw.split("\n")
    if len(lines) == 1:
        return table.slice(at, 1).to_pylist()
    data = [c for c in table.column_names if c != row_key]
    want = list(lines)
    out = []
    for r in table.slice(at).to_pylist():  # a round's other rows follow its first one
        text = ",".join("" if r[c] is None else r[c] for c in data)
        if text in want:
            want.remove(text)
            out.append(r)
            if not want:
                break
    return out


def coverage_lines(tables: dict[str, pa.Table]) -> list[str]:
    """Per game and citation, the rounds each check will check and those it cannot (and why)."""
    from ...rules.coverage import cannot, lacking
    from ...rules.registry import rules_for

    out = []
    for game, t in tables.items():
        if not t.num_rows:
            continue
        lack = lacking(t, game)
        out.append(f"coverage of the {t.num_rows} {game.replace('_', ' ')} round(s) read, per citation:")
        rules = rules_for(game)
        width, ids = max(len(r.citation) for r in rules), max(len(r.rule_id) for r in rules)
        for r in rules:
            nc = cannot(lack, r.needs)
            n_nc = 0 if nc is None else int(nc.sum())
            why = ", ".join(k for k in r.needs if k in lack and (lack[k] & nc).any()) if n_nc else ""
            state = (f"checks all {t.num_rows}" if not n_nc else f"not checkable: {n_nc} of {t.num_rows} "
                     f"(lacking {why})" if n_nc == t.num_rows else
                     f"checks {t.num_rows - n_nc}, not checkable {n_nc} (lacking {why})")
            out.append(f"  {r.citation:<{width}}  {r.rule_id:<{ids}}  {state}")
    return out


_VARIES = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d[\d.,:/-]*\b")


def unmapped_lines(bad: Sequence[tuple[int, str]], limit: int) -> list[str]:
    """The rows that cannot be mapped grouped by reason (the quoted values and numbers of a reason
    set aside), most rows first, each group counted and its rows listed; ``limit`` rows in all."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for row, reason in sorted(bad):
        groups.setdefault(_VARIES.sub("…", reason), []).append((row, reason))
    order = sorted(groups.values(), key=lambda g: (-len(g), g[0][0]))
    out = [f"{len(bad)} row(s) could not be mapped, for {len(order)} reason(s):"]
    shown = 0
    for group in order:
        out.append(f"  {len(group)} row(s): {group[0][1]}")
        for row, reason in group:
            if shown >= limit:
                break
            out.append(f"    row {row}: {reason}")
            shown += 1
        if len(group) > 1 and shown >= limit:
            out.append(f"    ... ({len(group)} in all)")
    if len(bad) > shown:
        out.append(f"  ... {len(bad) - shown} more row(s) not listed (--max-rows)")
    return out
