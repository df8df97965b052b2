"""The games auditkit knows: one package per game, each described by a :class:`Game`.

The rest of auditkit asks this registry, never a hard-coded list: the game
names a log may carry, the stored schema of each, how a record is read, which
module registers its rules, how rounds are simulated, and what the analysis
needs (stakes and nets for hold, events with known odds). A new game is one
package that calls :func:`register` with its descriptor (an installed package names
itself under the ``auditkit.games`` entry point group); its modules are found by their
file names (:data:`MODULES`)::

    from auditkit.games import Game, register
    GAME = register(Game(name="war", title="War", section="68 IAC 10-99-1", package=__name__,
                         columns=[...], parse=parse, to_record=to_record))

The built-in games are imported on first use, so ``import auditkit`` stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Game", "register", "get", "names", "games", "BUILTIN", "MODULES"]

BUILTIN = ("baccarat", "blackjack", "three_card_poker", "pai_gow_poker")
"""Packages under ``auditkit.games`` registered on first use, in catalog order."""


MODULES = ("rules", "bulk", "simulate", "theory", "evidence", "words", "setting_kinds")
"""The modules of a game package that auditkit asks for, each by its file name (``rules.py`` ...): a
:class:`Game`'s properties of the same names import them on first use (``rules`` is required, the
others optional: None when the package has no such file). docs/adding-a-game.md says what each holds."""


@dataclass(frozen=True, eq=False)
class Game:
    """What the rest of auditkit needs to know about one game (and its variants).

    * ``name``: the ``game`` value of its records and the store partition; ``aliases``
      are other ``game`` values read, stored and checked the same way (``mini_baccarat``).
    * ``title``: its name for people; ``section``: the regulation section its rules enforce
      (``68 IAC 10-10-14``); ``config_section``: its section of the configuration (default ``name``).
    * ``package``: its package (``__name__`` of the package's ``__init__``), whose modules
      (:data:`MODULES`) are the properties of the same names, imported on first use.
    * ``columns``: its stored fields after the common ones (a list of ``pyarrow.Field``).
    * ``parse(record, row)``: fills ``row`` with the game's fields of a spec record,
      raising :class:`auditkit.ingest.records.BadRecord` with the reason; ``to_record(row, record)``
      is the inverse (a stored row's game fields back into a spec record).
    * ``events``: the event types its records may carry, each with a reader of the
      event's fields (``reader(event, out, where)``; None when the type has no field).
    * ``notebook``: the name of its page of the game notebook (``notebooks/10_game.ipynb`` run with
      ``game`` set to it: ``11_blackjack``), if any.
    * ``defaults`` and ``settings``: the default settings of its configuration section and
      their schema (type, range, meaning of each key, as ``auditkit/settings_schema.toml``
      writes them), for a game whose section is not in auditkit's own files.
    * ``house_rules``: the settings its rules read per round when a round carries its own (an import
      profile's ``rules.<name>``: :meth:`auditkit.rules.context.Context.param`), each with the
      type a profile reads it as (``int``, ``ratio``, ``bool``).
    * ``csv_flattened``: record objects of its own that the CSV layout writes as ``<name>_<key>``
      columns where another game's field of the same name is a column of its own (pai gow poker's
      ``dealer``: ``dealer_cards``, ``dealer_high``, ``dealer_low``).
    """

    name: str
    title: str
    section: str
    package: str
    columns: Sequence[Any]
    parse: Callable[[dict, dict], None]
    to_record: Callable[[dict, dict], None]
    aliases: tuple[str, ...] = ()
    config_section: str | None = None
    events: dict[str, Callable[..., None] | None] = field(default_factory=dict)
    notebook: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    house_rules: dict[str, str] = field(default_factory=dict)
    csv_flattened: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every ``game`` value this descriptor reads: its name, then its aliases."""
        return (self.name, *self.aliases)

    @property
    def section_name(self) -> str:
        return self.config_section or self.name

    def _module(self, name: str) -> Any | None:
        """Its package's module ``name`` (imported on first use), or None when the package has none.
        Nothing is kept on the record (it stays picklable); Python keeps the modules imported."""
        full = f"{self.package}.{name}"
        if full not in _FOUND:
            _FOUND[full] = importlib.util.find_spec(full) is not None
        return importlib.import_module(full) if _FOUND[full] else None

    @property
    def rules(self) -> Any:
        """``rules.py``: registers its context and its rules (one function per citation); required."""
        module = self._module("rules")
        if module is None:
            raise ModuleNotFoundError(f"game {self.name}: its package {self.package} has no rules module")
        return module

    @property
    def bulk(self) -> Any | None:
        """``bulk.py``: its bulk reader, if any. ``FIELDS`` (its top-level fields as ``pyarrow.json``
        parses them) and ``read(columns) -> (stored columns, ok)``, vectorized field checks that vouch for
        the rows ``parse`` would read to exactly those values (others are read line by line); for a game
        whose events carry fields, ``EVENT_FIELDS`` (as parsed) and ``read_events(types, fields) ->
        (stored event fields, ok)``, the same for its event readers. Without one: read line by line."""
        return self._module("bulk")

    @property
    def simulate(self) -> Any | None:
        """``simulate.py``: its simulator, ``simulate(n_rounds, *, seed, fault_rate, **kw) -> (table, truth)``."""
        return self._module("simulate")

    @property
    def theory(self) -> Any | None:
        """``theory.py``: its analysis helpers: ``STAKE_COLUMNS`` and ``stakes_and_nets(hands)`` for hold;
        ``EVENTS``, ``EVENT_COLUMNS``, ``EXCLUSIVE`` and ``events(table, config, game)`` for the events of
        known odds (none: ``EVENTS = ()``)."""
        return self._module("theory")

    @property
    def evidence(self) -> Any | None:
        """``evidence.py``: the evidence only it knows (``STANDS_FOR``, ``lacking(table)``:
        :mod:`auditkit.rules.coverage`)."""
        return self._module("evidence")

    @property
    def words(self) -> Any | None:
        """``words.py``: its words for people (:mod:`auditkit.tables`): ``INTRO``, what its rules cover (the
        game notebook's opening); ``hand_text(hand)``, one patron hand as a line; ``EVENTS``, an event
        type's words (``{type: event -> str}``)."""
        return self._module("words")

    @property
    def setting_kinds(self) -> Any | None:
        """``setting_kinds.py``: its own kinds of setting (``settings_schema.toml`` types only it uses):
        ``KINDS``, ``value_reason(kind, value)``, ``item_reasons(kind, value)`` and
        ``merged_reason(kind, value, section)`` (:mod:`auditkit.paytables` asks them)."""
        return self._module("setting_kinds")


_FOUND: dict[str, bool] = {}
"""Whether each module of a game package asked for exists (``package.module``: True or False)."""
_GAMES: dict[str, Game] = {}
_ORDER: list[Game] = []
_loaded = False


def register(game: Game) -> Game:
    """Make a game known under its name and aliases; returns it. A name taken by another game is an error."""
    for n in game.names:
        if n in _GAMES and _GAMES[n] is not game:
            raise ValueError(f"game {n!r} registered twice")
    for n in game.names:
        _GAMES[n] = game
    if game not in _ORDER:
        _ORDER.append(game)
    return game


def _load() -> None:
    """Import the built-in game packages, then those installed under the ``auditkit.games`` entry points."""
    global _loaded
    if not _loaded:
        _loaded = True
        for name in BUILTIN:
            importlib.import_module(f"{__name__}.{name}")
        from importlib.metadata import entry_points

        for ep in entry_points(group="auditkit.games"):
            importlib.import_module(ep.value.split(":")[0])


def flattened_in_csv(name: str) -> tuple[str, ...]:
    """``csv_flattened`` of the game a record names (none for a name no game has)."""
    try:
        return get(name).csv_flattened
    except (KeyError, TypeError):
        return ()


def get(name: str) -> Game:
    """The game descriptor of a ``game`` value (``mini_baccarat`` gives baccarat's); KeyError when unknown."""
    _load()
    return _GAMES[name]


def names() -> tuple[str, ...]:
    """Every known ``game`` value, in catalog order (variants after their game)."""
    return tuple(n for g in games() for n in g.names)


def games() -> tuple[Game, ...]:
    """Every registered game descriptor, in catalog order: the built-in games, then the others
    as registered (whatever order their packages were imported in)."""
    _load()
    rank = {name: i for i, name in enumerate(BUILTIN)}
    return tuple(sorted(_ORDER, key=lambda g: (rank.get(g.name, len(rank)), _ORDER.index(g))))
