"""The fields of a draft profile (``auditkit profile suggest``): each column's role placed where the
recognised game records it (a stake as a hand's wager or a wager's amount, a banker's hand as the
dealer's in a game without a banker...), rows of several kinds each with their ``when``, cells of
several fields cut, and what no column gives asked of the game (its required fields, its events)."""

from __future__ import annotations

import re

from .draft import TODO, Draft
from .notation import BOOL_WORDS
from .roles import Column, vocabulary
from .sniff import norm

__all__ = ["Placement", "left_out", "MONEY_ROLES"]

ROUND_ROLES = {"round_id": "round_id", "table": "table_id", "dealer": "dealer_id", "shoe": "shoe_id",
               "round_seq": "round_seq", "status": "status", "table_min": "table_min", "table_max": "table_max",
               "announced_player": "announced.player", "announced_banker": "announced.banker",
               "deal_order": "deal_order", "cut_card": "cut_card", "first_position": "first_position",
               "cards_remaining": "cards_remaining", "dice": "dice"}
HAND_ROLES = {"position": "position", "initial_stake": "initial_wager", "decision": "decision", "ante": "ante",
              "play": "play", "pair_plus": "pair_plus", "net_ante": "net_ante", "net_play": "net_play",
              "net_pair_plus": "net_pair_plus", "ante_bonus": "ante_bonus", "hand_no": "hand"}
FLAGS = ("doubled", "split", "surrendered")
WAGER_ROLES = ("seat", "stake", "side", "net", "payout", "bankroll_before", "bankroll_after", "commission")
MONEY_ROLES = {"stake", "net", "payout", "bankroll_before", "bankroll_after", "commission", "initial_stake", "ante",
               "play", "pair_plus", "net_ante", "net_play", "net_pair_plus", "ante_bonus", "table_min", "table_max"}
WORDS = {"outcome": ("player", "banker", "tie"), "side": ("player", "banker", "tie"), "decision": ("play", "fold"),
         "status": ("completed", "void", "dead")}


class Placement:
    """The ``[fields]`` of the draft, each role placed where the game records it."""

    def __init__(self, draft: Draft, columns: list[Column], game: str | None,
                 kinds: tuple[str, dict[str, list[str]]] | None, key: list[str]) -> None:
        self.columns_, self.game, self.kinds, self.key = columns, game, kinds, key
        vocab = vocabulary()
        self.vocab = vocab.get(game or "", set().union(*vocab.values()))
        from ... import games

        self.flattened = games.get(game).csv_flattened if game else ()
        self.fields = Draft([]).section("fields")
        self.used: set[str] = set()
        self.tables: dict[str, dict] = {}
        self.not_recorded: list[str] = []
        self.items = "hands" if any(t.startswith("hands.") for t in self.vocab) else "wagers"

    # -- helpers ---------------------------------------------------------------------------------
    def put(self, target: str, spec: object, comment: str | None = None) -> bool:
        if target in self.used:
            self.fields.note(f"TODO: {comment or ''} another column maps to {target} too: which?".replace("  ", " "))
            return False
        self.used.add(target)
        self.fields.set(target, spec, comment, dotted=not target.startswith(("dealer.", "announced.")))
        return True

    def when(self, kind: str) -> dict | None:
        if not self.kinds or not self.kinds[1][kind]:
            return None
        role, values = self.kinds[0], self.kinds[1][kind]
        return {"column": role, "equals": values[0]} if len(values) == 1 else {"column": role, "in": values}

    def spec(self, col: Column, kind: str | None = None, **more: object) -> object:
        spec: dict = {"column": col.name, **more}
        if col.how == "json":
            spec["json"] = True
        elif col.how is not None and col.role and col.role.startswith("cards:"):
            spec["split"] = col.how
        w = self.when(kind) if kind else None
        if w:
            spec["when"] = w
        return col.name if list(spec) == ["column"] else spec

    def known(self, target: str) -> bool:
        flat = target.replace("dealer.", "dealer_").replace("announced.", "announced_")
        return flat in self.vocab or target in ("round_id", "table_id", "dealer_id", "shoe_id", "round_seq",
                                                "status", "game", "started_at") or target.startswith("wagers.")

    def vocabulary_table(self, col: Column, role: str) -> str | None:
        targets = WORDS[role]
        distinct = col.distinct
        if {v.lower() for v in distinct} <= set(targets) or role == "side" and "outcome" not in self.vocab:
            return None  # the game's own words (a blackjack's side bets: insurance, even_money)
        table: dict[str, str] = {}
        for v in distinct[:24]:
            low = v.lower()
            guess = next((t for t in targets if t in low or low == t[0] or low.startswith(t[:4])), None)
            table[v] = guess if guess else f"{TODO}one of {', '.join(targets)}"
        self.tables[role] = table
        return role

    # -- the fields ------------------------------------------------------------------------------
    def game_field(self, tied: list[str]) -> None:
        from ... import games

        named = next((c for c in self.columns_ if c.role == "game"), None)
        if named is not None:
            table: dict[str, str] = {}
            if set(named.distinct) <= set(games.names()):
                self.put("game", named.name)
                return
            for v in named.distinct:
                found = next((g.name for g in games.games() for n in (*g.names, g.title)
                              if norm(n) == norm(v)), None)
                table[v] = found or f"{TODO}one of {', '.join(games.names())}"
            self.tables["game"] = table
            self.put("game", {"column": named.name, "values": "game"})
            return
        if self.game is None:
            self.fields.note(f"TODO: the game: no column says it (one of {', '.join(games.names())})")
            self.put("game", f"{TODO}the game")
            return
        others = [g for g in tied if g != self.game]
        aliases = games.get(self.game).aliases
        comment = (f"TODO: the columns fit {', '.join(others)} as well" if others else
                   f"or {', '.join(aliases)}" if aliases else "from the columns' roles")
        self.put("game", {"const": self.game}, comment)

    def columns(self) -> None:
        cols = self.columns_
        kinds = self.kinds
        role_col = kinds[0] if kinds else None
        groups: dict[str, list[Column]] = {}
        for c in cols:  # cards one a column (P1, P2, P3): one field of several columns
            if c.role and c.role.startswith("cards:") and c.how is None and c.name[-1:].isdigit():
                groups.setdefault(c.role, []).append(c)
        for role, members in groups.items():
            if len(members) > 1:
                self.put(self.card_target(role), {"columns": [m.name for m in members]})
        grouped = {m.name for members in groups.values() if len(members) > 1 for m in members}
        before = next((c for c in cols if c.role == "bankroll_before"), None)
        after = next((c for c in cols if c.role == "bankroll_after"), None)
        stake = next((c for c in cols if c.role == "stake"), None)
        seat = next((c for c in cols if c.role == "seat"), None)
        for c in cols:
            if c.name in grouped or c.name == role_col:
                continue
            if not c.values:
                self.fields.note(f"TODO: column {c.name!r} is empty in the sample: map it or leave it out")
                continue
            self.column(c, before, after)
        for name in _required(self.game):  # a round field the game requires that no column gives
            if name == "shoe_id" and "shoe_id" not in self.used:
                self.put("shoe_id", {"const": "unknown"}, "the export names no shoe: one for all, declared not recorded")
                self.not_recorded.append("shoe")
        if stake is not None and seat is None:
            target = f"{self.items}.seat"
            self.put(target, {"const": 1}, "TODO: the export records no seat: every wager drafted at seat 1")

    def layout(self, c: Column) -> bool:
        """A cell of several fields (``46|PBPBPB``) cut into those it can name: two digits that agree with
        the point totals of the player's and banker's first two cards on most rows are the announced
        totals, a text of P and B the deal order; the other parts are left as TODOs."""
        cut = c.compound
        assert cut is not None
        groups = list(re.compile(cut.pattern).groupindex)
        hands = {side: next((x for x in self.columns_ if x.role == f"cards:{side}" and x.cells), None)
                 for side in ("player", "banker")}
        placed = False
        digits = [g for g in groups if g.startswith("d")]
        if len(digits) == 2 and all(hands.values()) and "announced_player" in self.vocab:
            found = [re.fullmatch(cut.pattern, v.strip()) if v else None for v in c.cells]
            totals = [(_points(p, hands["player"]), _points(b, hands["banker"]))  # type: ignore[union-attr]
                      for p, b in zip(hands["player"].cells, hands["banker"].cells, strict=True)]  # type: ignore[union-attr]
            pairs = [((int(m[digits[0]]), int(m[digits[1]])), t) for m, t in zip(found, totals, strict=True) if m and
                     None not in t]
            for order in (digits, digits[::-1]):
                agree = sum((a, b) == t for (a, b), t in pairs) if order == digits else \
                    sum((b, a) == t for (a, b), t in pairs)
                if pairs and agree >= 0.8 * len(pairs):
                    for target, group in zip(("announced.player", "announced.banker"), order, strict=True):
                        self.put(target, {"column": c.name, "pattern": cut.pattern, "group": group})
                    placed = True
                    break
        for group in groups:
            if group.startswith("order") and "deal_order" in self.vocab:
                self.put("deal_order", {"column": c.name, "pattern": cut.pattern, "group": group})
                placed = True
        if placed:
            self.fields.note(f"the cell {c.name!r} ({c.values[0]!r}) cut by its parts: check what each part holds")
        return placed

    def card_target(self, role: str, kind: str = "player") -> str:
        side = role.split(":", 1)[1]
        dealer = "dealer.cards" if "dealer" in self.flattened else "dealer_cards"
        if side == "banker":
            return "banker_cards" if "banker_cards" in self.vocab else dealer
        if side == "player":
            return "player_cards" if "player_cards" in self.vocab else "hands.cards"
        if side == "dealer":
            return dealer
        if side in ("dealer_high", "dealer_low"):
            return f"dealer.{side[7:]}"
        if kind == "dealer":
            return dealer if side == "hand" else f"dealer.{side}"
        return f"hands.{'cards' if side == 'hand' else side}"

    def column(self, c: Column, before: Column | None, after: Column | None) -> None:
        """Place column ``c`` by its role: cards, a field of the round, of a hand or of a wager; else a TODO."""
        role = c.role
        if role is None or role == "game":
            if role is None:
                sample = ", ".join(c.distinct[:5])[:80]
                self.fields.note(f"TODO: column {c.name!r} ({len(c.distinct)} distinct values; e.g. {sample}): "
                                 "map it to a field or leave it out")
            return
        if role == "compound":
            self.compound(c)
        elif role.startswith("cards:"):
            self.cards(c)
        elif role in ("time", "round_id", "round_counter", "outcome", "status") or role in ROUND_ROLES:
            self.round_field(c)
        elif role in HAND_ROLES or role in FLAGS:
            self.hand_field(c)
        elif role in WAGER_ROLES:
            self.wager_field(c, before, after)
        else:
            self.fields.note(f"TODO: column {c.name!r} ({role}): map it or leave it out")

    def compound(self, c: Column) -> None:
        """A cell of several fields: tagged tokens (each hand's cards), a layout it can name, or a TODO."""
        if c.compound is not None and c.compound.kind == "tagged":
            for tag, part in c.parts.items():  # each hand's tokens: a cut of the cell keeping that tag's
                self.put(self.card_target(part), {"column": c.name, "split": " ", "pattern": c.compound.pattern,
                                                  "group": "card", "only": {"who": tag}})
            return
        if c.compound is not None and self.layout(c):
            return
        self.fields.note(f"TODO: column {c.name!r} holds several fields in one cell ({c.values[0]!r}): "
                         "cut it with a pattern of named groups (docs/profiles.md)")

    def cards(self, c: Column) -> None:
        """A column of cards: a hand's (both the player's and the dealer's where the rows are of two kinds)."""
        role = c.role
        assert role is not None
        if self.kinds and role in ("cards:hand", "cards:player", "cards:high", "cards:low"):
            self.put(self.card_target(role, "player"), self.spec(c, "player"))
            self.put(self.card_target(role, "dealer"), self.spec(c, "dealer"))
        else:
            self.put(self.card_target(role), self.spec(c))

    def round_field(self, c: Column) -> None:
        """A field of the round: its time, id, counter, outcome or status, or another round field."""
        role = c.role
        assert role is not None
        if role == "time":
            self.put("started_at", c.name)
            return
        if role == "round_id":
            if self.key and c.name not in self.key:
                self.fields.note(f"TODO: column {c.name!r} numbers the rows, not the rounds ({self.key[0]!r} does): "
                                 "leave it out or map it")
                return
            self.put("round_id", c.name)
            return
        if role == "round_counter":
            if c.name not in self.key:
                self.fields.note(f"TODO: column {c.name!r} counts games (1, 2...): the round key with it?")
            elif len(self.key) > 1 and not any(x.role == "round_id" for x in self.columns_):
                self.put("round_id", {"template": "-".join("{" + k + "}" for k in self.key)},
                         "the table and its game counter: a round id that stays when the file is exported again")
            return
        if role in ("outcome", "status"):
            if not self.known(role):
                self.fields.note(f"TODO: column {c.name!r} ({', '.join(c.distinct[:4])}): the {self.game} record "
                                 f"has no {role}; map it or leave it out")
                return
            table = self.vocabulary_table(c, role)
            self.put(role, {"column": c.name, "values": table} if table else c.name)
            return
        if role in ROUND_ROLES:
            target = ROUND_ROLES[role]
            if not self.known(target):
                if role == "round_seq" or (role == "shoe" and "shoe_id" in self.used):
                    return
                self.fields.note(f"TODO: column {c.name!r}: the {self.game} record has no {target}")
                return
            if role == "dice":
                m = re.fullmatch(r"\d(\D+)\d\1\d", c.values[0])
                self.put("dice", {"column": c.name, "split": m[1]} if m else self.spec(c))
                return
            self.put(target, c.name)
            if role == "shoe" and all(v.isdigit() for v in c.values):
                names = [x.name for x in self.columns_ if x.role == "table" or x.role is None and
                         re.search(r"day|date", norm(x.name)) and all(v.isdigit() or "-" in v for v in x.values)]
                example = "-".join("{" + n + "}" for n in [*names, c.name])  # columns of this export only
                self.fields.note(f"TODO: {c.name!r} numbers shoes (1, 2...) and may restart: make shoe_id name each "
                                 f"shoe once, e.g. shoe_id = {{template = \"{example}\"}}")
            return

    def hand_field(self, c: Column) -> None:
        """A field of a hand: one of HAND_ROLES, or a yes/no flag."""
        role = c.role
        assert role is not None
        if role in HAND_ROLES:
            target = f"hands.{HAND_ROLES[role]}"
            if role == "hand_no" and not self.known(target):
                if "round_seq" not in self.used:
                    self.put("round_seq", c.name)
                return
            if not self.known(target):
                self.fields.note(f"TODO: column {c.name!r}: the {self.game} record has no {target}")
                return
            table = self.vocabulary_table(c, role) if role in WORDS else None
            self.put(target, self.spec(c, "player", **({"values": table} if table else {})))
            return
        if role in FLAGS:
            if not {v.lower() for v in c.values} <= set(BOOL_WORDS):
                self.fields.note(f"TODO: column {c.name!r} ({', '.join(c.distinct[:4])}): a yes/no flag? "
                                 "give it a [values] table")
                return
            self.tables["yn"] = {**self.tables.get("yn", {}), **{v: BOOL_WORDS[v.lower()] for v in c.distinct}}
            self.put(f"hands.{role}", self.spec(c, "player", values="yn"))

    def wager_field(self, c: Column, before: Column | None, after: Column | None) -> None:
        """The seat, stake, side bet, net (or payout, or both bankrolls) or commission of a wager."""
        role = c.role
        item = self.items
        side = "side" if self.kinds and self.kinds[1]["side"] else None
        if role == "seat":
            self.put(f"{item}.seat", self.spec(c, "player"))
            if side:
                self.put("wagers.seat", self.spec(c, "side"))
            return
        if role == "stake":
            target = f"{item}.{'wager' if item == 'hands' else 'amount'}"
            self.put(target, self.spec(c, "player"))
            if side:
                self.put("wagers.amount", self.spec(c, "side"))
            return
        if role == "side":
            table = self.vocabulary_table(c, role)
            self.put("wagers.bet", self.spec(c, "side" if side else None,
                                               **({"values": table} if table else {})))
            return
        if role in ("net", "payout"):
            how = {"returned": c.name} if role == "payout" else {}
            for target, kind in ((f"{item}.net", "player"), ("wagers.net", "side") if side else (None, None)):
                if target is None:
                    continue
                spec = {**how, **({"when": self.when(kind)} if self.when(kind) else {})} if how else self.spec(c, kind)
                self.put(target, spec)
            return
        if role in ("bankroll_before", "bankroll_after"):
            if role == "bankroll_before" and before is not None and after is not None:
                spec = {"bankroll_before": before.name, "bankroll_after": after.name}
                if self.when("player"):
                    spec["when"] = self.when("player")
                self.put(f"{item}.net", spec)
            elif before is None or after is None:
                self.fields.note(f"TODO: column {c.name!r} is a bankroll without its other side (before/after)")
            return
        if role == "commission":
            self.fields.note(f"TODO: column {c.name!r} is a commission: is the net written before or after it? "
                             "map the net after commission")


def _points(cell: str | None, col: Column) -> int | None:
    """The point total (ranks 2-9 their value, an ace 1, tens and faces 0, modulo 10) of a hand's first two
    cards in ``cell``, written as ``col`` writes them; None when it cannot say."""
    if not cell or col.cards is None:
        return None
    cards = cell.split() if col.how == " " else cell.split(col.how) if col.how and col.how != "json" else [cell]
    total = 0
    for card in [c.strip() for c in cards][:2]:
        rank = card if col.cards.notation in ("points", "rank-only") else card[:-1]
        value = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}.get(rank.upper())
        if value is None:
            if not rank.isdigit():
                return None
            value = int(rank) % 10 if int(rank) < 14 else 1
        total += value
    return total % 10

def left_out(build: Placement) -> list[str]:
    """The evidence of the game no column gives that a log leaves out the same way: its events (a game
    that has some), a baccarat-like deal order and cutting card (the game's stored fields)."""
    from ... import games

    if build.game is None:
        return []
    out = []
    if games.get(build.game).events and not any(t.startswith("events.") for t in build.used):
        out.append("events")
    out += [k for k in ("deal_order", "cut_card") if k in build.vocab and k not in build.used]
    return out

def _required(game: str | None) -> list[str]:
    """The round fields every record of ``game`` must carry beyond the cards (baccarat's shoe_id and
    round_seq), asked of the game's own record reader with a record that has none."""
    from ... import games
    from ...ingest.records import BadRecord
    from ...schema import COMMON

    if game is None:
        return []
    row: dict = {f.name: None for f in COMMON}
    needed: list[str] = []
    for _ in range(len(row)):
        try:
            games.get(game).parse({}, row)
        except BadRecord as exc:
            m = re.fullmatch(r"missing required field (\w+)", str(exc))
            if not m or m[1] not in row or m[1] in needed:
                break
            needed.append(m[1])
            row[m[1]] = 1
            continue
        except Exception:  # noqa: BLE001 (a reader that wants more than an empty record: done asking)
            break
        break
    return needed
