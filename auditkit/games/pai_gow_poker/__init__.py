"""Pai gow poker: 68 IAC 10-9-17 (irregularities), the house way and the hands' settlement."""

from .. import Game, register
from .parse import EVENTS, parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="pai_gow_poker", title="Pai gow poker", section="68 IAC 10-9-17",
    package=__name__, columns=COLUMNS, parse=parse, to_record=to_record, events=EVENTS,
    notebook="13_pai_gow_poker",
    house_rules={"win": "ratio", "commission": "ratio"}, csv_flattened=("dealer",),
))
