"""Three card poker: 68 IAC 10-11-6 (ante, play, the dealer's qualifying hand, ante bonus, pair plus)."""

from .. import Game, register
from .parse import parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="three_card_poker", title="Three card poker", section="68 IAC 10-11-6",
    package=__name__, columns=COLUMNS, parse=parse, to_record=to_record,
    notebook="12_three_card_poker",
))
