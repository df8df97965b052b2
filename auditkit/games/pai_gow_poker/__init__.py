"""Pai gow poker: 68 IAC 10-9-17 (irregularities), the house way and the hands' settlement."""

from .. import Game, register
from .parse import EVENTS, parse, to_record
from .schema import COLUMNS

GAME = register(Game(
    name="pai_gow_poker", title="Pai gow poker", section="68 IAC 10-9-17",
    columns=COLUMNS, parse=parse, to_record=to_record, events=EVENTS,
    rules=f"{__name__}.rules", bulk=f"{__name__}.bulk", simulate=f"{__name__}.simulate:simulate", theory=f"{__name__}.theory", words=f"{__name__}.words",
    notebook="13_pai_gow_poker",
    house_rules={"win": "ratio", "commission": "ratio"}, csv_flattened=("dealer",),
    setting_kinds=f"{__name__}.settings",
))
