"""A draft profile from an export's header and a sample of its values (``auditkit profile suggest``).

It guesses each column's field from its name and its values (card notation, time format, money,
vocabularies), and writes ``# TODO:`` where it could not decide; docs/profiles.md says what to edit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyarrow as pa

from .mapping import ROW
from .roles import pattern_lines, role_column, role_fields, round_key
from .sniff import MONEY, cells, exact_target, guess_target, norm, notation_of, time_of, toml_text

__all__ = ["suggest_profile", "SAMPLE"]

SAMPLE = 500  # rows looked at


def suggest_profile(table: pa.Table, file_name: str, source_lines: Sequence[str] = ()) -> str:
    """The draft profile's TOML text for a source's rows (string columns and ``__row``)."""
    cols = [c for c in table.column_names if c != ROW]
    head = table.slice(0, SAMPLE)
    out = [f"# Draft profile for {file_name}, written by `auditkit profile suggest` from its header and",
           f"# the first {min(SAMPLE, table.num_rows)} rows. Check every line; docs/profiles.md documents each key.",
           "profile = 1", f"name = {toml_text(norm(file_name.rsplit('.', 1)[0]) or 'export')}", "", *source_lines, ""]
    fields: list[str] = []
    todo: list[str] = []
    values_tables: list[str] = []
    notation: str | None = None
    times: tuple[str, str | None] | None = None
    used: set[str] = set()
    item_list = None
    roles = role_column(head, cols)
    skip: set[str] = set()
    game: str | None = None
    card_lines: list[str] = []
    if roles:  # rows of several kinds (a dealer's, a player's, a side bet's): each field from its rows
        fields, values_tables, skip, notation, game = role_fields(head, cols, *roles)
        used |= {f.split(" =", 1)[0].strip('"') for f in fields}
        item_list = "hands"
        if notation == "pattern":
            card_lines = pattern_lines([v for c in skip for v in cells(
                [x for x in head[c].to_pylist() if x is not None and x.strip()])[1]])
    key = round_key(head, cols, bool(roles))
    time_named = any(guess_target(c) == "started_at" for c in cols)
    groups: dict[str, list[str]] = {}
    for c in cols:
        m = re.match(r"^(p|b|player|banker)_?(card_?)?\d$", norm(c))
        if m:
            groups.setdefault("player_cards" if m[1].startswith("p") else "banker_cards", []).append(c)
    for target, members in groups.items():
        cards = [v.strip() for c in members for v in head[c].to_pylist() if v is not None and v.strip()]
        found = notation_of(cards, members[0])
        if found:
            notation = notation or found
            fields.append(f"{target} = {{columns = [{', '.join(toml_text(c) for c in members)}]}}")
            used.add(target)
    grouped = {c for members in groups.values() for c in members if any(f.startswith(
        ("player_cards", "banker_cards")) for f in fields)}
    for c in cols:
        if c in grouped or c in skip:
            continue
        vals = [v for v in head[c].to_pylist() if v is not None and v.strip()]
        target = "round_id" if c == key else guess_target(c)
        if target == "round_id" and key is not None and c != key:  # a row's own id when rows share a round
            todo.append(f"# TODO: column {toml_text(c)} numbers the rows, not the rounds ({toml_text(key)} does): "
                        "leave it out or map it")
            continue
        if target is None and not time_named and "started_at" not in used and all(":" in v for v in vals) \
                and (t := time_of(vals)) and t[0] in ("iso", "strftime"):
            target = "started_at"  # a column of dates and times of day, when no column is named as one
        distinct = list(dict.fromkeys(vals))
        if not vals:
            todo.append(f"# TODO: column {toml_text(c)} is empty in the sample: map it or leave it out")
            continue
        exact = exact_target(c)
        vocabulary = exact in ("outcome", "wagers.bet") and not set(distinct) <= {"player", "banker", "tie"}
        if exact == "dice" and (m := re.fullmatch(r"\d(\D+)\d\1\d", vals[0].strip())):
            fields.append(f"dice = {{column = {toml_text(c)}, split = {toml_text(m[1])}}}")  # 4-2-6
            used.add(exact)
            continue
        if exact and exact not in used and not exact.endswith(("cards", ".high", ".low")) and exact != "started_at" \
                and not vocabulary:
            fields.append(f"{exact} = {toml_text(c)}")
            used.add(exact)
            if exact.startswith("hands."):
                item_list = "hands"
            continue
        how, cards = cells(vals)
        card_notation = notation_of(cards, c) if target in (None, "player_cards", "banker_cards", "dealer_cards",
                                                        "cards") else None
        if card_notation and target in (None, "cards"):
            n = norm(c)
            target = next((f"{side}_cards" for side in ("player", "banker", "dealer") if side in n), "cards")
        if target in ("player_cards", "banker_cards", "dealer_cards", "cards") and card_notation:
            notation = notation or card_notation
            spec = {"json": "json = true", None: ""}.get(how, f"split = {toml_text(how or ' ')}")
            name = "hands.cards" if target == "cards" else target
            if target == "cards":
                item_list = "hands"
            if name in used:
                todo.append(f"# TODO: column {toml_text(c)} holds cards too ({', '.join(distinct[:3])}): which?")
                continue
            fields.append(f"{name} = {{column = {toml_text(c)}{', ' + spec if spec else ''}}}")
            used.add(name)
            continue
        if target == "started_at" and (t := time_of(vals)):
            times = times or t
            fields.append(f"started_at = {toml_text(c)}")
            used.add(target)
            continue
        if target in ("seat", "bet", "amount", "net"):
            lst = "wagers" if target in ("bet", "amount") or item_list != "hands" else "hands"
            name = f"{lst}.{'wager' if lst == 'hands' and target == 'amount' else target}"
            if name in used:
                todo.append(f"# TODO: column {toml_text(c)} looks like {name} too: which?")
                continue
            if target == "bet" and len(distinct) <= 12:
                table_name = "bet"
                values_tables.append(_vocabulary(table_name, distinct, ("player", "banker", "tie")))
                fields.append(f"{name} = {{column = {toml_text(c)}, values = \"{table_name}\"}}")
            else:
                fields.append(f"{name} = {toml_text(c)}")
            used.add(name)
            continue
        if target == "outcome" and len(distinct) <= 12:
            values_tables.append(_vocabulary("outcome", distinct, ("player", "banker", "tie")))
            fields.append(f'outcome = {{column = {toml_text(c)}, values = "outcome"}}')
            used.add(target)
            continue
        if target and target not in used and target not in ("cards",):
            fields.append(f"{target} = {toml_text(c)}")
            used.add(target)
            if target == "shoe_id" and all(v.strip().isdigit() for v in vals):
                todo.append(f"# TODO: {toml_text(c)} numbers shoes (1, 2...) and restarts: make shoe_id name each shoe "
                            f"once, e.g. {{template = \"{{Table}}-{{Day}}-S{{{c}:02d}}\"}}")
            continue
        sample = ", ".join(distinct[:6])
        kind = "amounts" if all(MONEY.match(v.strip()) for v in vals) else f"{len(distinct)} distinct values"
        todo.append(f"# TODO: column {toml_text(c)} ({kind}; e.g. {sample[:80]}): map it to a field or leave it out")
    blackjack = any(re.search(r"doubl|split|surrend|insurance", norm(c)) for c in cols)
    if "game" not in used and game:
        fields.insert(0, f"game = {{const = {toml_text(game)}}}  # TODO: check the game")
    elif "game" not in used and blackjack:
        fields.insert(0, 'game = {const = "blackjack"}  # TODO: check the game')
    elif "game" not in used and "player_cards" in used:
        fields.insert(0, 'game = {const = "baccarat"}  # TODO: or mini_baccarat')
    elif "game" not in used:
        fields.insert(0, '# TODO: the game: a constant (baccarat, blackjack, three_card_poker, pai_gow_poker...) '
                      'or a column with a [values] table\ngame = {const = "baccarat"}')
    if "table_id" not in used:
        fields.insert(1, '# TODO: the table id: a column, or a constant naming the table\ntable_id = {const = "TABLE-1"}')
    grain = ["[grain]"]
    if any(f.startswith(("wagers.", "hands.")) for f in used) and "round_id" in used:
        key = key or next(c for c in cols if guess_target(c) == "round_id")
        grain += [f'rows = "{"hand" if item_list == "hands" else "wager"}"', f"round = [{toml_text(key)}]",
                  "# TODO: check the grain: one row per round, hand, wager or card, and the columns that group rows"]
    else:
        grain += ['rows = "round"', "# TODO: if several rows make one round, say which columns group them: "
                  "round = [\"...\"]"]
    out += grain + ["", "[fields]", *fields, *todo, ""]
    out += ["[cards]", *(card_lines or [f'notation = "{notation}"' if notation else
            '# TODO: the card notation was not recognised: a preset or a pattern\nnotation = "auditkit"']), ""]
    out.append("[times]")
    if times is None:
        out += ["# TODO: no time column recognised: map started_at and give its format, or say there are none",
                'kind = "none"', 'start_date = 2025-01-01', 'zone = "America/Indiana/Indianapolis"']
    else:
        out.append(f'kind = "{times[0]}"')
        if times[1]:
            out.append(f"format = {toml_text(times[1])}")
        out.append('zone = "America/Indiana/Indianapolis"  # TODO: the zone the times were written in')
    out += ["", "[money]", 'currency = ["$"]', 'thousands = ","', "parentheses = true", ""]
    out += values_tables
    return "\n".join(out) + "\n"


def _vocabulary(name: str, distinct: list[str], targets: tuple[str, ...]) -> str:
    lines = [f"[values.{name}]"]
    undecided = False
    for v in distinct:
        low = v.strip().lower()
        guess = next((t for t in targets if t in low or low == t[0]), None)
        if guess is None:
            undecided = True
            lines.append(f"# TODO: {toml_text(v)} = \"?\"")
        else:
            lines.append(f"{toml_text(v)} = {toml_text(guess)}")
    if undecided:
        lines.insert(1, "# TODO: values it could not map")
    return "\n".join(lines) + "\n"
