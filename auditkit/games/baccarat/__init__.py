"""Baccarat and mini baccarat: 68 IAC 10-10-14 (third-card rules, dealing order, cut card)."""

from .. import Game, register
from .parse import parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="baccarat", aliases=("mini_baccarat",), title="Baccarat", section="68 IAC 10-10-14",
    columns=COLUMNS, parse=parse, to_record=to_record,
    rules=f"{__name__}.rules", bulk=f"{__name__}.bulk", simulate=f"{__name__}.simulate:simulate", theory=f"{__name__}.theory",
    notebook="10_baccarat", words=f"{__name__}.words", evidence=f"{__name__}.evidence",
    house_rules={"decks": "int"},
))
