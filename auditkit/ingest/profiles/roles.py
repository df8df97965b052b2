"""Rows of several kinds in one export (a ``Role`` column: a player's hand, the dealer's, a side bet):
each field drafted with the ``when`` of the rows it comes from (``auditkit profile suggest``)."""

from __future__ import annotations

import re

import pyarrow as pa

from .notation import BOOL_WORDS
from .sniff import JOKERS, card_notation, cells, exact_target, guess_target, norm, toml_text

__all__ = ["role_column", "role_fields", "pattern_lines", "round_key"]

ROLE_COLUMN = re.compile(r"^(role|row_?type|record_?type|line_?type|hand_?type|entry_?type|type|kind)$")
DEALER_ROLE = re.compile(r"dealer|banker|house", re.IGNORECASE)
PLAYER_ROLE = re.compile(r"player|seat|box|spot", re.IGNORECASE)
ROLE_ITEMS = [  # (pattern on the normalised name, the field of a player's row, of a side bet's row)
    (r"^(seat|box|spot)(_?(no|num|number|id))?$|^player_?(no|seat)$", "hands.seat", "wagers.seat"),
    (r"^hand(_?(no|num|number|index|seq))?$", "hands.hand", None),
    (r"^position$", "hands.position", None),
    (r"^(initial|original|first)_?(bet|wager|stake)", "hands.initial_wager", None),
    (r"doubl", "hands.doubled", None), (r"split", "hands.split", None), (r"surrend", "hands.surrendered", None),
    (r"^(bet|wager|stake|amount|bet_?(amount|size))$", "hands.wager", "wagers.amount"),
    (r"side_?bet|^bet_?(type|kind|name)$", None, "wagers.bet"),
    (r"return|paid|payout|collect", "hands.net", "wagers.net"),
]
BANKROLL = (re.compile(r"(bank|balance|bankroll|credit)\w*_(before|start|open|begin)"),
            re.compile(r"(bank|balance|bankroll|credit)\w*_(after|end|close)"))


def role_column(head: pa.Table, cols: list[str]) -> tuple[str, dict[str, list[str]]] | None:
    """A column that says what kind of row each is (``Role``: player, dealer, side bet), with its values
    by kind: one kind of row for the dealer's hand, one for a player's, the rest (side bets)."""
    for c in cols:
        if not ROLE_COLUMN.match(norm(c)):
            continue
        distinct = list(dict.fromkeys(v.strip() for v in head[c].to_pylist() if v is not None and v.strip()))
        if not 2 <= len(distinct) <= 6:
            continue
        dealer = [v for v in distinct if DEALER_ROLE.search(v)]
        player = [v for v in distinct if PLAYER_ROLE.search(v) and v not in dealer]
        if dealer and player:
            return c, {"dealer": dealer, "player": player, "side": [v for v in distinct if v not in dealer + player]}
    return None


def _when(column: str, values: list[str]) -> str:
    which = f"equals = {toml_text(values[0])}" if len(values) == 1 else f"in = [{', '.join(map(toml_text, values))}]"
    return f"when = {{column = {toml_text(column)}, {which}}}"


def _key(target: str) -> str:
    """A field's key as TOML writes it: ``"dealer.cards"`` quoted (a nested round field), ``hands.seat`` not."""
    return toml_text(target) if target.startswith(("dealer.", "announced.")) else target


def role_fields(head: pa.Table, cols: list[str], role: str, kinds: dict[str, list[str]]
                 ) -> tuple[list[str], list[str], set[str], str | None, str | None]:
    """The fields of the columns whose meaning depends on the kind of row, each with the ``when`` of
    its rows; (fields, value tables, columns used, card notation, the game they point to)."""
    fields: list[str] = []
    tables: list[str] = []
    used_cols = {role}
    notation: str | None = None
    cards_by_col: dict[str, tuple[str | None, list[str]]] = {}
    for c in cols:
        if (exact := exact_target(c)) is not None and not exact.endswith(("cards", "high", "low")):
            continue  # cards_remaining is a count
        vals = [v for v in head[c].to_pylist() if v is not None and v.strip()]
        how, cards = cells(vals) if vals else (None, [])
        found = card_notation(cards, c)
        if found:
            cards_by_col[c] = (how, cards)
            notation = notation or found
    jokers = any(card.strip().upper() in JOKERS for _, cards in cards_by_col.values() for card in cards)
    split_names = {norm(c) for c in cards_by_col}
    game = "pai_gow_poker" if jokers or {"high", "low"} <= split_names else None
    if game is None and any(re.search(r"doubl|split|surrend|insurance", norm(c)) for c in cols):
        game = "blackjack"
    player, dealer, side = (_when(role, kinds[k]) if kinds[k] else None for k in ("player", "dealer", "side"))
    for c, (how, _) in cards_by_col.items():
        n = norm(c)
        part = "high" if n.startswith("high") else "low" if n.startswith("low") else "cards"
        spec = {"json": "json = true", None: ""}.get(how, f"split = {toml_text(how or ' ')}")
        spec = spec + ", " if spec else ""
        fields.append(f"hands.{part} = {{column = {toml_text(c)}, {spec}{player}}}")
        mine = f"dealer.{part}" if game == "pai_gow_poker" else "dealer_cards" if part == "cards" else None
        if mine:
            fields.append(f"{_key(mine)} = {{column = {toml_text(c)}, {spec}{dealer}}}")
        used_cols.add(c)
    before = next((c for c in cols if BANKROLL[0].search(norm(c))), None)
    after = next((c for c in cols if BANKROLL[1].search(norm(c))), None)
    if before and after:
        fields.append(f"hands.net = {{bankroll_before = {toml_text(before)}, bankroll_after = {toml_text(after)}, {player}}}")
        used_cols |= {before, after}
    taken: set[str] = {f.split(" =", 1)[0] for f in fields}
    flags: list[str] = []
    for c in cols:
        if c in used_cols:
            continue
        n = norm(c)
        for pattern, mine, theirs in ROLE_ITEMS:
            if not re.search(pattern, n):
                continue
            vals = [v.strip() for v in head[c].to_pylist() if v is not None and v.strip()]
            for target, when in ((mine, player), (theirs, side)):
                if target is None or when is None or target in taken:
                    continue
                if target.endswith(".net"):
                    fields.append(f"{target} = {{returned = {toml_text(c)}, {when}}}")
                elif target.endswith(("doubled", "split", "surrendered")):
                    if not {v.lower() for v in vals} <= set(BOOL_WORDS):
                        continue
                    fields.append(f'{target} = {{column = {toml_text(c)}, values = "yn", {when}}}')
                    flags.append(c)
                else:
                    fields.append(f"{target} = {{column = {toml_text(c)}, {when}}}")
                taken.add(target)
                used_cols.add(c)
            break
    if flags:
        words = sorted({v.strip() for c in flags for v in head[c].to_pylist() if v is not None and v.strip()})
        tables.append("[values.yn]\n" + "".join(f"{toml_text(w)} = {str(BOOL_WORDS[w.lower()]).lower()}\n" for w in words))
    return fields, tables, used_cols, notation, game


def pattern_lines(cards: list[str]) -> list[str]:
    """The ``[cards]`` lines of a rank-and-suit notation with a joker word (``10H,AD,JOKER``)."""
    joker = next(c.strip() for c in cards if c.strip().upper() in JOKERS)
    return ['notation = "pattern"', f"pattern = '(?P<rank>10|[2-9TJQKAtjqka]|{joker})(?P<suit>[CDHScdhs])?'",
            f"ranks = {{{toml_text(joker)} = \"JK\"}}"]


def round_key(head: pa.Table, cols: list[str], shared: bool) -> str | None:
    """The column that names each row's round when rows share rounds (``shared``): the first named like a
    round id or number whose values repeat in the sample (a column unique to each row numbers rows)."""
    if not shared:
        return None
    for c in cols:
        if guess_target(c) in ("round_id", "round_seq"):
            vals = [v for v in head[c].to_pylist() if v is not None and v.strip()]
            if vals and len(set(vals)) < len(vals):
                return c
    return None
