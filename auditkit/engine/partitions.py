"""A partition read and checked: round rules batch by batch, shoe rules over the day's narrow shoe
columns with the previous day's rounds of the shoes dealt again that day (a shoe may cross midnight),
so memory stays bounded by a batch and a day whatever the number of rounds; and a plan's partitions
one after another (:func:`walk`), the way every executor runs its share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .checks import read_columns, round_findings, shoe_columns, shoe_findings, shoe_key
from .findings import sorted_findings
from .plan import Partition, Plan, Settings

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["check_partition", "walk"]

Day = tuple[Partition, list[pa.Table | None], int, pa.Table]
"""A small day whose round rules wait: its partition, its shoe findings, its rounds checked, its rounds."""


def check_partition(store: Store, part: Partition, settings: Settings, prior: pa.Table | None = None
                    ) -> tuple[pa.Table | None, int, pa.Table | None]:
    """Findings of one partition (sorted; None: none), the rounds it checked, and its shoe columns (the
    next day's ``prior``). ``prior`` is the previous day's shoe columns when the caller has them (a
    serial run), else they are read."""
    found, checked, day, _small = _read(store, part, settings, prior, defer=False)
    return sorted_findings(found), checked, day


def _read(store: Store, part: Partition, settings: Settings, prior: pa.Table | None, *, defer: bool
          ) -> tuple[list[pa.Table | None], int, pa.Table | None, pa.Table | None]:
    """A partition's findings (unsorted), rounds checked, shoe columns, and, with ``defer``, the
    day's rounds unchecked by the round rules when the day is one batch smaller than the batch size
    (the caller checks several such days at once: see :func:`walk`)."""
    game, date, tally = part.game, part.date, settings.tally
    round_rules, shoe_rules = settings.rules(game, "round"), settings.rules(game, "shoe")
    found, checked, small = [], 0, None
    cols = shoe_columns(shoe_rules, game)
    shoe_parts = []  # the shoe pass's narrow columns, kept from the batches already read
    for batch in store.scan(game, date, batch_size=settings.batch_size,
                            columns=read_columns(round_rules, shoe_rules, game)):
        if defer and not checked and batch.num_rows < settings.batch_size:  # the first batch is short: the only one
            small = batch
        else:
            found.append(round_findings(batch, game, settings.config, round_rules, date, tally))
        if shoe_rules:
            shoe_parts.append(batch.select(cols))
        checked += batch.num_rows
        settings.checked(batch.num_rows)
    day = None
    if shoe_rules:
        # no date column: only this day's rounds are emitted, and shoe_findings stamps them with it
        day = pa.concat_tables(shoe_parts) if shoe_parts else store.read(game, date, columns=cols)
        if part.previous is not None and prior is None:
            prior = store.read(game, part.previous, columns=cols)
        if part.previous is not None:  # only the shoes dealt again today need yesterday's rounds
            prior = prior.filter(pc.is_in(shoe_key(prior), value_set=pc.unique(shoe_key(day))))
        both = pa.concat_tables([prior, day]) if part.previous is not None else day
        emit = np.concatenate([np.zeros(both.num_rows - day.num_rows, bool), np.ones(day.num_rows, bool)])
        found.append(shoe_findings(both, game, settings.config, shoe_rules, emit, date, tally))
    return found, checked, day, small


def walk(plan: Plan) -> Iterator[tuple[Partition, pa.Table | None, int]]:
    """A plan's partitions one after another, in order, each with its sorted findings (None: none) and
    its rounds checked; a day whose previous stored day was just checked reuses its shoe columns. Days
    of one game smaller than a batch are checked by the round rules together, up to a batch of rounds
    at once (a round rule reads each round alone, so its findings are the same; a run of small days
    then costs what one batch costs)."""
    settings = plan.settings
    previous: tuple[Partition, pa.Table | None] | None = None
    waiting: list[Day] = []  # small days, round rules to run

    def flush() -> Iterator[tuple[Partition, pa.Table | None, int]]:
        yield from _round_rules_of_days(waiting, settings)
        waiting.clear()

    for part in plan.parts:
        prior = previous[1] if previous and previous[0].game == part.game and previous[0].date == part.previous \
            else None
        found, checked, day, small = _read(plan.store, part, settings, prior, defer=True)
        previous = (part, day)
        if waiting and (small is None or part.game != waiting[0][0].game
                        or sum(w[3].num_rows for w in waiting) + small.num_rows > settings.batch_size):
            yield from flush()
        if small is None:
            yield part, sorted_findings(found), checked
        else:
            waiting.append((part, found, checked, small))
    yield from flush()


def _round_rules_of_days(days: list[Day], settings: Settings) -> Iterator[tuple[Partition, pa.Table | None, int]]:
    """The round rules over several small days of one game at once (each round stamped with its
    day), then each day with its findings, in order."""
    if not days:
        return
    game = days[0][0].game
    if len(days) == 1:
        rounds = days[0][3]
    else:
        rounds = pa.concat_tables([t for *_, t in days])
        day_of_row = np.repeat(np.arange(len(days)), [t.num_rows for *_, t in days])
        rounds = rounds.append_column("date", pa.array([p.date for p, *_ in days]).take(pa.array(day_of_row)))
    found = round_findings(rounds, game, settings.config, settings.rules(game, "round"), days[0][0].date,
                           settings.tally)
    for part, other, checked, _t in days:
        mine = found if found is None or len(days) == 1 else found.filter(pc.equal(found["date"], part.date))
        yield part, sorted_findings([mine if mine is None or mine.num_rows else None, *other]), checked
