"""What a validation run checks and how (:class:`Settings`), and the partitions it checks (:class:`Plan`):
made once, then passed whole to the code that reads partitions and to the executors that run them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import games as registered
from ..paytables import Config
from ..rules.registry import Rule
from ..rules.tally import Tally
from .checks import select_rules

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["BATCH_SIZE", "Settings", "Partition", "Plan", "plan", "with_next_days", "at_least"]

BATCH_SIZE = 131_072
"""Rounds read and checked by the round rules at once."""


@dataclass(frozen=True)
class Settings:
    """The settings of a run, the same for every partition: the configuration, the checks (citations or
    rule ids; None: all), the rounds per batch, what is told the rounds checked (``progress``, called
    with a count per batch or per partition) and what gets the coverage counts (``tally``)."""

    config: Config = field(default_factory=Config)
    citations: tuple[str, ...] | None = None
    batch_size: int = BATCH_SIZE
    progress: Callable[[int], None] | None = None
    tally: Tally | None = None

    def __post_init__(self) -> None:
        if self.citations is not None:
            object.__setattr__(self, "citations", tuple(self.citations) or None)

    def rules(self, game: str, scope: str) -> list[Rule]:
        """The rules of a game and scope (``round`` or ``shoe``) this run checks."""
        return select_rules(game, scope, self.citations)

    def checked(self, rounds: int) -> None:
        """Tell ``progress`` that ``rounds`` more rounds were checked."""
        if self.progress is not None:
            self.progress(rounds)

    def for_worker(self) -> Settings:
        """The settings a worker runs with: no progress (its parent tells it) and a tally of its own,
        which it returns to be added to this one."""
        return replace(self, progress=None, tally=Tally())


@dataclass(frozen=True)
class Partition:
    """One unit of validation work: a game's gaming day, and the stored day before it (its shoes may
    cross midnight). Partitions are independent, so they run in any order, on any worker."""

    game: str
    date: str
    previous: str | None


@dataclass(frozen=True)
class Plan:
    """A run: the store (pinned to one commit point), its partitions in report order, and the settings.
    A plan pickles small (a store is its folder or URI), so a worker gets the plan of its partitions."""

    store: Store
    parts: tuple[Partition, ...]
    settings: Settings

    @classmethod
    def make(cls, store: Store, settings: Settings, *, games: Sequence[str] | None = None,
             dates: tuple[str | None, str | None] = (None, None),
             only: set[tuple[str, str]] | None = None) -> Plan:
        """The plan of a run over a store, pinned: its manifest is listed once."""
        store = store.pinned()
        return cls(store, tuple(plan(store, games=games, dates=dates, only=only, citations=settings.citations)),
                   settings)

    def of(self, parts: Sequence[Partition], settings: Settings | None = None) -> Plan:
        """The same run over some of its partitions (a worker's share), with other settings if given; its
        store knows those partitions and the days before them only (it pickles small)."""
        keys = [(p.game, d) for p in parts for d in (p.date, p.previous) if d is not None]
        return replace(self, store=self.store.narrowed(keys), parts=tuple(parts), settings=settings or self.settings)


def plan(store: Store, *, games: Sequence[str] | None = None, dates: tuple[str | None, str | None] = (None, None),
         only: set[tuple[str, str]] | None = None, citations: Sequence[str] | None = None) -> list[Partition]:
    """The partitions to validate, in report order (game, then day)."""
    out = []
    for game in games or registered.names():
        all_dates = store.dates(game)  # first: a game with no rounds stored has its rules not even imported
        if not all_dates or not select_rules(game, "round", citations) and not select_rules(game, "shoe", citations):
            continue
        for i, date in enumerate(all_dates):
            wanted = (dates[0] is None or date >= dates[0]) and (dates[1] is None or date <= dates[1]) \
                and (only is None or (game, date) in only)
            if wanted:
                out.append(Partition(game, date, all_dates[i - 1] if i > 0 else None))
    return out


def with_next_days(store: Store, parts: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (game, date) partitions plus the stored day after each: its shoe rules read the day before."""
    out = set(parts)
    for game, date in parts:
        later = [d for d in store.dates(game) if d > date]
        if later:
            out.add((game, later[0]))
    return out


def at_least(store: Store, parts: Sequence[Partition], rounds: int) -> bool:
    """Whether the partitions hold at least ``rounds`` rounds (their files' metadata is read until
    they do: a large store's every footer took seconds)."""
    total = 0
    for p in parts:
        total += store.count(p.game, p.date)
        if total >= rounds:
            return True
    return False
