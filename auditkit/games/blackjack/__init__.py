"""Blackjack: 68 IAC 10-2-4 (wagers, outcomes, payouts)."""

from .. import Game, register
from .parse import EVENTS, parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="blackjack", title="Blackjack", section="68 IAC 10-2-4",
    package=__name__, columns=COLUMNS, parse=parse, to_record=to_record, events=EVENTS,
    notebook="11_blackjack",
    house_rules={"decks": "int", "win": "ratio", "blackjack": "ratio", "insurance": "ratio",
                 "even_money": "ratio", "surrender": "ratio", "dealer_hits_soft_17": "bool"},
))
