"""Blackjack: 68 IAC 10-2-4 (wagers, outcomes, payouts)."""

from .. import Game, register
from .parse import EVENTS, parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="blackjack", title="Blackjack", section="68 IAC 10-2-4",
    columns=COLUMNS, parse=parse, to_record=to_record, events=EVENTS,
    rules=f"{__name__}.rules", bulk=f"{__name__}.bulk", simulate=f"{__name__}.simulate:simulate", theory=f"{__name__}.theory", words=f"{__name__}.words",
    notebook="11_blackjack", evidence=f"{__name__}.evidence",
    house_rules={"decks": "int", "win": "ratio", "blackjack": "ratio", "insurance": "ratio",
                 "even_money": "ratio", "surrender": "ratio", "dealer_hits_soft_17": "bool"},
))
