"""The role of each column of an export, read from its name and its values together, and the game
recognised from the roles of all the columns (``auditkit profile suggest``).

A role is what a column holds in an auditor's words (a stake, a net, the dealer's hand, a seat...);
the game is the one whose stored fields (its ``Game.columns``, asked of the registry) explain the
roles found, the roles that only some games have weighing most: a banker's hand is a baccarat's, an
ante a three card poker's, high and low hands or dice a pai gow poker's, a dealer's hand with the
players' hands any of the dealer's games (the first in the registry's order unless another role
tells). The game is never read from one column's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .sniff import CardFormat, Compound, card_format, card_named, cells, compound, norm, numbers, time_of

__all__ = ["Column", "classify", "role_column", "recognise_game", "vocabulary", "ROLE_COLUMN"]

TAGS = {"P": "player", "B": "banker", "D": "dealer", "H": "hand"}  # a one-letter tag of a hand's cards
ROLE_COLUMN = re.compile(r"^(role|row_?type|record_?type|line_?type|hand_?type|entry_?type|type|kind)$")
DEALER_ROLE = re.compile(r"dealer|banker|house", re.IGNORECASE)
PLAYER_ROLE = re.compile(r"player|seat|box|spot", re.IGNORECASE)

# (pattern on the normalised name, role, what the values must be: "num" numbers, "word" not numbers, None any)
NAMED: list[tuple[str, str, str | None]] = [
    (r"^(round|hand|game|deal|coup)_?(id|key|ref|uid|code)$|^id$|^round$|^round_?key$", "round_id", None),
    (r"^(game|round)_?(no|num|number|counter|count|nr)$|^game$", "round_counter", "num"),
    (r"^(game|round|hand|deal)_?(no|num|number|nr)$", "round_id", "word"),
    (r"^game(_?type|_?name)?$", "game", "word"),
    (r"^(table|tbl)(_?(id|no|name|num|number))?$|table_?id", "table", None),
    (r"dealer_?(id|name|no)?$|^croupier", "dealer", None),
    (r"^shoe(_?(id|no|num|number))?$|^shuffle(_?id)?$", "shoe", None),
    (r"^(hand|round)_?(in_?(shoe|game)|seq|index|sequence)$|^seq$|^coup(_?no)?$", "round_seq", "num"),
    (r"^hand(_?(no|num|number|nr))?$", "hand_no", "num"),
    (r"time|date|^ts$|^when$|^played$|^dealt$", "time", None),
    (r"result|outcome|winner|^win$|winning_?(side|hand)", "outcome", "word"),
    (r"^(seat|box|spot)(_?(no|num|number|id|nr))?$|^player_?(no|id|seat|num)$", "seat", "num"),
    (r"^position$|^pos$", "position", "num"),
    (r"^first_?position$|^first_?(stack|pos)", "first_position", "num"),
    (r"^cards_?(remaining|left)$", "cards_remaining", "num"),
    (r"^dice$|^roll$|^dice_?roll$", "dice", None),
    (r"^(initial|original|first)_?(bet|wager|stake)", "initial_stake", "num"),
    (r"^net_?(ante)$|^ante_?(net|result|win|delta)$", "net_ante", "num"),
    (r"^net_?(play)$|^play_?(net|result|win|delta)$", "net_play", "num"),
    (r"^net_?(pair_?plus|pp)$|^(pair_?plus|pp)_?(net|result|win|delta)$", "net_pair_plus", "num"),
    (r"^(ante_?)?bonus(_?paid)?$", "ante_bonus", "num"),
    (r"^ante(_?(bet|wager|amount))?$", "ante", "num"),
    (r"^play(_?(bet|wager|amount))?$", "play", "num"),
    (r"^(pair_?plus|pp)(_?(bet|wager|amount))?$", "pair_plus", "num"),
    (r"^(decision|action|play_?or_?fold|fold)$", "decision", "word"),
    (r"^(bet|stake|wager|amount|bet_?(amount|size)|wager_?amount|stake_?amount|total_?(bet|stake|wager))$",
     "stake", "num"),
    (r"^(bet|side|bet_?(on|type|side|kind|name|spot)|side_?bet|selection)$", "side", "word"),
    (r"^(net|net_?(win|result|amount)|win_?loss|winloss|profit|p_?l|pnl|delta|win|win_?amount|won|gain|"
     r"result_?amount|payoff)$", "net", "num"),
    (r"^(payout|paid|pay|paid_?out|returned|amount_?returned|return|total_?return|collect(ed)?)$", "payout", "num"),
    (r"^comm(ission)?$|^vig(orish)?$", "commission", "num"),
    (r"(bank|balance|bankroll|credit)\w*_(before|start|open|begin)|^(before|start|opening)_?(bank|balance)",
     "bankroll_before", "num"),
    (r"(bank|balance|bankroll|credit)\w*_(after|end|close)|^(after|end|closing)_?(bank|balance)",
     "bankroll_after", "num"),
    (r"doubl", "doubled", "word"), (r"split", "split", "word"), (r"surrend", "surrendered", "word"),
    (r"^status$|^void$", "status", "word"),
    (r"^(table_?)?min(imum)?(_?(bet|wager|limit))?$", "table_min", "num"),
    (r"^(table_?)?max(imum)?(_?(bet|wager|limit))?$", "table_max", "num"),
    (r"^announced_?player|^player_?(total|points|count)$", "announced_player", "num"),
    (r"^announced_?banker|^banker_?(total|points|count)$", "announced_banker", "num"),
    (r"^deal_?order$", "deal_order", "word"), (r"^cut_?card$", "cut_card", None),
]
# the stored fields (Game.columns, flattened) a role stands for in the games that have them
VOCABULARY = {
    "cards:banker": ("banker_cards",), "cards:player": ("player_cards", "hands.cards"),
    "cards:dealer": ("dealer_cards",), "cards:hand": ("hands.cards",), "cards:high": ("hands.high",),
    "cards:low": ("hands.low",), "cards:dealer_high": ("dealer_high",), "cards:dealer_low": ("dealer_low",),
    "outcome": ("outcome",), "hand_no": ("hands.hand",), "position": ("hands.position",), "dice": ("dice",),
    "first_position": ("first_position",), "cards_remaining": ("cards_remaining",),
    "initial_stake": ("hands.initial_wager",), "doubled": ("hands.doubled",), "split": ("hands.split",),
    "surrendered": ("hands.surrendered",), "decision": ("hands.decision",), "ante": ("hands.ante",),
    "play": ("hands.play",), "pair_plus": ("hands.pair_plus",), "net_ante": ("hands.net_ante",),
    "net_play": ("hands.net_play",), "net_pair_plus": ("hands.net_pair_plus",), "ante_bonus": ("hands.ante_bonus",),
    "announced_player": ("announced_player",), "announced_banker": ("announced_banker",),
    "deal_order": ("deal_order",), "cut_card": ("cut_card",), "table_min": ("table_min",),
    "table_max": ("table_max",),
}


@dataclass
class Column:
    """One column of the sample: its name, its non-empty cells, and the role found for it."""

    name: str
    values: list[str]
    role: str | None = None
    cards: CardFormat | None = None
    how: str | None = None          # how a cell holds several items: "json", a split text, or None
    time: tuple[str, str | None] | None = None
    cells: list[str | None] = field(default_factory=list)  # every cell of the sample, in row order
    compound: Compound | None = None   # a cell of several fields or tagged tokens
    parts: dict[str, str] = field(default_factory=dict)  # a tagged cell: each tag's role

    @property
    def roles(self) -> list[str]:
        return list(self.parts.values()) if self.parts else [self.role] if self.role else []

    @property
    def distinct(self) -> list[str]:
        return list(dict.fromkeys(self.values))


def _side(name: str) -> str:
    n = norm(name.rsplit("[].", 1)[-1])
    dealer = re.search(r"dealer|house|bank(er)?(?!roll)", n) is not None
    for part in ("high", "low"):
        if re.search(rf"(^|_){part}|{part}(_|$)|^{part[0]}_?hand", n):
            return f"dealer_{part}" if dealer else part
    if re.search(r"(^|_)(banker|bank|b)(_|\d|$)|^banker", n):
        return "banker"
    if re.search(r"dealer|house|(^|_)d(_|\d|$)", n):
        return "dealer"
    if re.search(r"player|(^|_)p(_|\d|$)", n):
        return "player"
    return "hand"


def classify(name: str, values: list[str]) -> Column:
    """A column's role from its name and values together: cards by their notation whatever the name
    (a hand's side from the name), times by their format, then names matched on the values' kind (a
    ``bet`` of 5, 10, 20 is a stake; of player, banker a bet's side)."""
    col = Column(name, [v.strip() for v in values if v is not None and v.strip()], cells=list(values))
    vals = col.values
    if not vals:
        return col
    how, items = cells(vals)
    fmt = card_format(items, name) if len(set(items)) > 1 or card_named(name) else None
    counted = re.search(r"remain|left|count|total|number|_no$|_num$", norm(name)) is not None
    if fmt is not None and not (how is None and fmt.notation in ("points", "rank-only")
                                and (not card_named(name) or counted)):
        col.role, col.cards, col.how = f"cards:{_side(name)}", fmt, how
        return col
    if (cut := compound(vals)) is not None and not all(v.isdigit() for v in vals):
        col.role, col.compound = "compound", cut
        if cut.kind == "tagged":
            col.parts = {tag: f"cards:{_side(tag if len(tag) > 1 else TAGS.get(tag.upper(), 'hand'))}"
                         for tag in cut.tags}
        return col
    n = re.sub(r"^(wagers|hands)_(?=.)", "", norm(name.rsplit("[].", 1)[-1]))  # wagers_net, rounds[].id: by its own name
    nums = numbers(vals)
    for pattern, role, kind in NAMED:
        if not re.search(pattern, n):
            continue
        if kind == "num" and nums is None or kind == "word" and nums is not None:
            continue
        if role == "time":
            col.time = time_of(vals)
            if col.time is None:
                continue
        if role == "hand_no" and nums is not None and (0 not in nums or max(nums) > 8):
            role = "round_seq"  # a hand number that never starts from 0 counts rounds, not a seat's hands
        if role == "payout" and nums is not None and any(x < 0 for x in nums):
            role = "net"  # a payout below zero is a net, not an amount returned
        col.role = role
        return col
    if nums is None and all(":" in v for v in vals) and (t := time_of(vals)) and t[0] in ("iso", "strftime"):
        col.role, col.time = "time", t
    return col


def role_column(columns: list[Column]) -> tuple[str, dict[str, list[str]]] | None:
    """A column that says what kind of row each is (``Role``: player, dealer, side bet), with its values
    by kind: one kind of row for the dealer's hand, one for a player's, the rest (side bets)."""
    for col in columns:
        if not ROLE_COLUMN.match(norm(col.name)):
            continue
        distinct = col.distinct
        if not 2 <= len(distinct) <= 6:
            continue
        dealer = [v for v in distinct if DEALER_ROLE.search(v)]
        player = [v for v in distinct if PLAYER_ROLE.search(v) and v not in dealer]
        if dealer and player:
            return col.name, {"dealer": dealer, "player": player, "side": [v for v in distinct if v not in dealer + player]}
    return None


def vocabulary() -> dict[str, set[str]]:
    """Each game's stored fields (its ``columns``, lists' and objects' fields dotted), by game name."""
    import pyarrow as pa

    from ... import games

    def flat(f: pa.Field, prefix: str = "") -> list[str]:
        t = f.type.value_type if pa.types.is_list(f.type) else f.type
        if pa.types.is_struct(t):
            return [x for sub in t for x in flat(sub, f"{prefix}{f.name}.")]
        return [prefix + f.name]

    return {g.name: {x for f in g.columns for x in flat(f)} for g in games.games()}


def recognise_game(roles: list[str], rows_of_kinds: bool = False) -> tuple[str | None, list[str]]:
    """The game whose stored fields explain the roles found (each role weighs 1 over the number of
    games that have it; roles every game has say nothing), and the games that tie with it. With rows of
    several kinds whose one is the dealer's, the dealer's hand is among the roles."""
    vocab = vocabulary()
    found = set(roles) | ({"cards:dealer"} if rows_of_kinds else set())
    scores: dict[str, float] = dict.fromkeys(vocab, 0.0)
    for role in found:
        having = [g for g, fields in vocab.items() if set(VOCABULARY.get(role, ())) & fields]
        if not having or len(having) == len(vocab):
            continue
        for g in having:
            scores[g] += 1 / len(having)
    if found & {"cards:dealer", "cards:dealer_high", "cards:dealer_low"}:
        for g, fields in vocab.items():  # a game without a dealer's hand cannot have one
            if not fields & {"dealer_cards", "dealer_high"}:
                scores[g] = -1.0
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return None, []
    tied = [g for g, s in scores.items() if s == best]
    return tied[0], tied
