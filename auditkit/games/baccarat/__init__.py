"""Baccarat and mini baccarat: 68 IAC 10-10-14 (third-card rules, dealing order, cut card)."""

from .. import Game, register
from .parse import parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="baccarat", aliases=("mini_baccarat",), title="Baccarat", section="68 IAC 10-10-14",
    package=__name__, columns=COLUMNS, parse=parse, to_record=to_record,
    notebook="10_baccarat",
    house_rules={"decks": "int"},
))
