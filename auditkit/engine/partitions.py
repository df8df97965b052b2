"""Partitions read and checked: the round rules batch by batch, the shoe rules over each day's narrow
shoe columns with the previous day's rounds of the shoes dealt again that day (a shoe may cross
midnight), so memory stays bounded by a batch and a day whatever the number of rounds; a plan's
partitions one after another (:func:`walk`), the way every executor runs its share.

Days smaller than a batch are checked together, up to a batch of rounds at once: the round rules over
their rounds (each stamped with its day), the shoe rules over every day's view (its rounds and its
previous day's of the same shoes) side by side, each view apart (:data:`SHOE_VIEW`). A run of small
days then costs what one batch costs, with the findings of each day checked alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import to_numpy
from ..rules.integrity import SHOE_VIEW
from .checks import order_of_shoes, read_columns, report_only, round_findings, shoe_columns, shoe_findings, shoe_numbers
from .findings import SORT_KEYS, Source
from .plan import Partition, Plan, Settings

if TYPE_CHECKING:
    from ..rules.registry import Rule
    from ..store import Store

__all__ = ["check_partition", "walk"]

Checked = tuple[Partition, pa.Table | None, int]
"""A partition, its sorted findings (None: none) and its rounds checked."""


@dataclass
class _Day:
    """A day read: its rounds, when the round rules have yet to check them (None: a day of several batches,
    checked as it was read, its findings in ``found``), its rounds checked, its shoe columns (None: no
    shoe rule), and what its game is read and checked with."""

    part: Partition
    rounds: pa.Table | None
    found: list[pa.Table | None]
    checked: int
    shoes: pa.Table | None
    reading: _Reading


Last = tuple[Partition, pa.Table | None] | None
"""The day checked last and its shoe columns: the prior of the day after it."""


def check_partition(store: Store, part: Partition, settings: Settings, prior: pa.Table | None = None
                    ) -> tuple[pa.Table | None, int, pa.Table | None]:
    """Findings of one partition (sorted; None: none), the rounds it checked, and its shoe columns (the
    next day's ``prior``). ``prior`` is the previous day's shoe columns when the caller has them (a
    serial run), else they are read."""
    last = None if prior is None or part.previous is None else (Partition(part.game, part.previous, None), prior)
    [(_p, found, checked)], last = _check(store, settings, [_read(store, part, settings)], last)
    return found, checked, last[1] if last else None


def walk(plan: Plan) -> Iterator[Checked]:
    """A plan's partitions one after another, in order, each with its sorted findings (None: none) and
    its rounds checked. Consecutive days of one game smaller than a batch are checked together (see the
    module's docstring); a day whose previous stored day was just checked reuses its shoe columns."""
    settings, store = plan.settings, plan.store
    last: Last = None
    block: list[_Day] = []  # small days of one game, read, not yet checked
    readings: dict[str, _Reading] = {}  # each game's rules and columns, looked up once
    for part in plan.parts:
        if part.game not in readings:
            readings[part.game] = _reading(settings, part.game)
        day = _read(store, part, settings, readings[part.game])
        if block and (day.rounds is None or part.game != block[0].part.game
                      or sum(d.checked for d in block) + day.checked > settings.batch_size):
            found, last = _check(store, settings, block, last)
            yield from found
            block = []
        block.append(day)
        if day.rounds is None:  # a big day goes alone
            found, last = _check(store, settings, block, last)
            yield from found
            block = []
    if block:
        found, last = _check(store, settings, block, last)
        yield from found


@dataclass(frozen=True)
class _Reading:
    """What a game's days are read and checked with: its round and shoe rules, the columns read, those
    its shoe rules get (None: no shoe rule) and of them those the rules read (the shoe views'), and the
    report's columns no round rule reads (left in pieces when days are joined)."""

    round_rules: list[Rule]
    shoe_rules: list[Rule]
    columns: list[str] | None
    shoe_columns: list[str] | None
    checked_columns: list[str] | None
    unread: list[str]


def _reading(settings: Settings, game: str) -> _Reading:
    round_rules, shoe_rules = settings.rules(game, "round"), settings.rules(game, "shoe")
    return _Reading(round_rules, shoe_rules, read_columns(round_rules, shoe_rules, game),
                    shoe_columns(shoe_rules, game) if shoe_rules else None,
                    shoe_columns(shoe_rules, game, report=False) if shoe_rules else None,
                    report_only(round_rules, game))


def _read(store: Store, part: Partition, settings: Settings, reading: _Reading | None = None) -> _Day:
    """A day read: whole when it is smaller than a batch, else checked by the round rules batch by batch
    as it is read (its shoe columns kept). ``reading``: the game's (:func:`_reading`), when known."""
    game, date = part.game, part.date
    reading = reading or _reading(settings, game)
    round_rules, cols = reading.round_rules, reading.shoe_columns
    found: list[pa.Table | None] = []
    shoes, checked = [], 0
    batches = store.scan(game, date, batch_size=settings.batch_size, columns=reading.columns)
    for batch in batches:
        settings.checked(batch.num_rows)
        if not checked and batch.num_rows < settings.batch_size:  # the first batch is short: the only one
            return _Day(part, batch, [], batch.num_rows, batch.select(cols) if cols else None, reading)
        found.append(round_findings(batch, game, settings.config, round_rules, date, settings.tally))
        if cols:
            shoes.append(batch.select(cols))
        checked += batch.num_rows
    if not checked:  # no round: the day's columns, empty
        rounds = store.read(game, date, columns=reading.columns)
        return _Day(part, rounds, [], 0, rounds.select(cols) if cols else None, reading)
    return _Day(part, None, found, checked, pa.concat_tables(shoes) if cols else None, reading)


def _check(store: Store, settings: Settings, days: list[_Day], last: Last) -> tuple[list[Checked], Last]:
    """Consecutive days of one game checked together: each with its sorted findings and rounds checked,
    and the last of them with its shoe columns."""
    game, reading = days[0].part.game, days[0].reading
    found = [f for d in days for f in d.found]
    small = [d for d in days if d.rounds is not None]
    if small:
        rounds = small[0].rounds if len(small) == 1 else _stamped([d.rounds for d in small],
                                                                    [d.part.date for d in small], reading.unread)
        found.append(round_findings(rounds, game, settings.config, reading.round_rules,
                                    small[0].part.date, settings.tally))
    if reading.shoe_rules:
        views, emit, source = _views(store, days, last, reading.shoe_columns, reading.checked_columns)
        found.append(shoe_findings(views, game, settings.config, reading.shoe_rules, emit, None, settings.tally,
                                   ordered=True, source=source))
    return _by_day(days, found), (days[-1].part, days[-1].shoes)


def _stamped(tables: list[pa.Table], dates: list[str], unread: Collection[str] = ()) -> pa.Table:
    """Tables of several days as one, each round stamped with its day (a ``date`` column), each column in
    one piece (every rule reads it so: the pieces joined once, not by each reader) but those no rule reads
    (``unread``: the findings read them for the rounds they name)."""
    rounds = pa.concat_tables(tables)
    whole = rounds.select([c for c in rounds.column_names if c not in unread]).combine_chunks()
    rounds = pa.Table.from_arrays([rounds[c] if c in unread else whole[c] for c in rounds.column_names],
                                  schema=rounds.schema)
    day_of_row = np.repeat(np.arange(len(tables)), [t.num_rows for t in tables])
    return rounds.append_column("date", pa.array(dates).take(pa.array(day_of_row)))


def _views(store: Store, days: list[_Day], last: Last, cols: list[str], checked: list[str]
           ) -> tuple[pa.Table, np.ndarray, Source]:
    """What the shoe rules check for each day, side by side: the previous stored day's rounds of the shoes
    dealt again that day, then the day's rounds, as one table whose :data:`SHOE_VIEW` column numbers the
    days (the rules keep each apart) and whose ``date`` is the day's, in :func:`~.checks.shoe_order`; the
    mask of each day's own rounds (the others are context: their findings are the previous day's); and
    where the rounds' metadata is. The views hold the ``checked`` columns only (those the rules read):
    the findings read the rest of ``cols`` (the report's metadata) for the rounds they name."""
    game = days[0].part.game
    sources = [d.shoes for d in days]  # the tables the views are cut from: the days, then priors read
    prior_of = []  # each day's prior among sources (-1: none)
    for i, d in enumerate(days):
        previous = d.part.previous
        if previous is None:
            prior_of.append(-1)
            continue
        if i and days[i - 1].part.date == previous:
            prior_of.append(i - 1)
            continue
        if last is not None and last[0].game == game and last[0].date == previous and last[1] is not None:
            sources.append(last[1])
        else:
            sources.append(store.read(game, previous, columns=cols))
        prior_of.append(len(sources) - 1)
    every = pa.concat_tables(sources)
    both = every.select(checked).combine_chunks()  # a take from one piece: half the time
    sizes = [t.num_rows for t in sources]
    source = np.repeat(np.arange(len(sources)), sizes)
    shoe = shoe_numbers(both)
    n = len(days)
    own_view = np.full(len(sources), -1, np.int64)
    own_view[:n] = np.arange(n)
    context_view = np.full(len(sources), -1, np.int64)
    for i, p in enumerate(prior_of):
        if p >= 0:
            context_view[p] = i
    own_rows = np.flatnonzero(source < n)
    candidates = np.flatnonzero(context_view[source] >= 0)
    shoes_of_views = shoe[own_rows] * n + own_view[source[own_rows]]  # (shoe, day) dealt that day
    context_rows = candidates[np.isin(shoe[candidates] * n + context_view[source[candidates]], shoes_of_views)]
    rows = np.concatenate([context_rows, own_rows])
    view = np.concatenate([context_view[source[context_rows]], own_view[source[own_rows]]])
    own = np.concatenate([np.zeros(len(context_rows), bool), np.ones(len(own_rows), bool)])
    order = np.argsort(view * 2 + own, kind="stable")  # by day; in each, its context first, as read (rows rise)
    rows, view, own = rows[order], view[order], own[order]
    order = order_of_shoes(shoe[rows], to_numpy(both["round_seq"], 0)[rows],
                           to_numpy(both["started_at"].cast(pa.int64()), 0)[rows], view)
    rows, view, own = rows[order], view[order], own[order]  # then in shoe order: the rules' order
    table = _take(both, rows)
    dates = pa.array([d.part.date for d in days])
    table = table.append_column(SHOE_VIEW, pa.array(view.astype(np.int32))).append_column(
        "date", dates.take(pa.array(view)))
    return table, own, (every, rows)


def _take(table: pa.Table, rows: np.ndarray) -> pa.Table:
    """``table.take(rows)``; a column of nulls only (the optional ``house_rules``, say) made, not gathered."""
    index = pa.array(rows)
    return pa.Table.from_arrays([pa.nulls(len(rows), c.type) if c.null_count == len(c) else c.take(index)
                                 for c in table.columns], schema=table.schema)


def _by_day(days: list[_Day], found: list[pa.Table | None]) -> list[Checked]:
    """Findings of several days split by day, each day's in report order (as :func:`sorted_findings`
    orders them: a stable sort, so findings of one day keep the order they had among its own)."""
    tables = [t for t in found if t is not None and t.num_rows]
    if not tables:
        return [(d.part, None, d.checked) for d in days]
    every = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    every = every.take(pc.sort_indices(every, [(k, "ascending") for k in ["date", *SORT_KEYS]]))
    counts = Counter(every["date"].to_pylist())
    out, start = [], 0
    for d in days:
        k = counts.get(d.part.date, 0)
        out.append((d.part, every.slice(start, k) if k else None, d.checked))
        start += k
    return out
