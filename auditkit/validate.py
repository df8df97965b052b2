"""The engine's pandas API: findings as frames (:data:`auditkit.schema.FINDINGS`, one row per round and
rule), for the command line, notebooks, live mode and tests.

The engine (:mod:`auditkit.engine`) runs in Arrow: a run's settings are one :class:`~auditkit.engine.plan.Settings`,
its partitions one :class:`~auditkit.engine.plan.Plan`, run by one of three executors; these functions
make the settings, run it, and convert the findings to a frame at the end.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .engine import executors
from .engine.checks import round_findings, shoe_findings
from .engine.findings import SORT_KEYS, sorted_findings
from .engine.partitions import check_partition
from .engine.plan import BATCH_SIZE, Partition, Settings, with_next_days
from .paytables import Config
from .rules.tally import Tally
from .schema import FINDINGS, schema_for

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is made: the workers start without it

    from .store import Store

__all__ = ["collect", "validate_into_store", "validate_partitions", "validate_records", "validate_tables",
           "check_rounds", "check_shoes", "empty_findings", "sort_findings", "validate_store", "validate_partition"]


def empty_findings() -> pd.DataFrame:
    """A findings frame with no row and the report's columns."""
    return _empty_findings().copy()


@functools.cache
def _empty_findings() -> pd.DataFrame:
    return FINDINGS.empty_table().to_pandas()


def _frame(found: pa.Table | None) -> pd.DataFrame:
    """Findings as the report's frame (the dtypes of stored findings)."""
    return empty_findings() if found is None else found.to_pandas()


def sort_findings(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings in a stable order: time, round, then rule id (the engine's order, in pandas)."""
    if findings.empty:
        return findings
    return findings.sort_values(SORT_KEYS, kind="stable").reset_index(drop=True)


def check_rounds(table: pa.Table, game: str, config: Config, rules: Sequence[Any] | None = None,
                 date: str | None = None, tally: Tally | None = None) -> pd.DataFrame:
    """Findings of the round rules of ``game`` on one batch of its rounds (``tally`` gets the coverage)."""
    return _frame(round_findings(table, game, config, rules, date, tally))


def check_shoes(table: pa.Table, game: str, config: Config, rules: Sequence[Any] | None = None,
                emit: Any = None, date: str | None = None, tally: Tally | None = None,
                emitted: set[tuple[str, str]] | None = None) -> pd.DataFrame:
    """Findings of the shoe rules over rounds grouped by table and shoe
    (:func:`auditkit.engine.checks.shoe_findings`: ``emit`` and ``emitted``)."""
    return _frame(shoe_findings(table, game, config, rules, emit, date, tally, emitted))


def validate_tables(tables: dict[str, pa.Table], config: Config | None = None,
                    citations: Sequence[str] | None = None, tally: Tally | None = None) -> pd.DataFrame:
    """All findings on in-memory tables of rounds, keyed by game (no streaming); ``tally`` (when given)
    gets the coverage counts."""
    settings = Settings(config or Config(), citations, tally=tally)
    found = []
    for game, table in tables.items():
        found.append(round_findings(table, game, settings.config, settings.rules(game, "round"), None, tally))
        found.append(shoe_findings(table, game, settings.config, settings.rules(game, "shoe"), None, None, tally))
    return _frame(sorted_findings(found))


def validate_records(records: Iterable[dict], config: Config | None = None,
                     citations: Sequence[str] | None = None, tally: Tally | None = None) -> pd.DataFrame:
    """All findings on round records of the spec (parsed JSON objects); for tests and notebooks.

    A record that is not a readable round raises :class:`~auditkit.ingest.records.BadRecord`.
    """
    from .ingest.records import parse_record

    rows: dict[str, list[dict]] = {}
    for i, rec in enumerate(records, start=1):
        game, date, row = parse_record(rec)
        row.update(source_file="<records>", source_line=i, date=date)
        rows.setdefault(game, []).append(row)
    tables = {g: pa.Table.from_pylist(r, schema=schema_for(g).append(pa.field("date", pa.string())))
              for g, r in rows.items()}
    return validate_tables(tables, config, citations, tally)


def validate_partitions(store: Store, config: Config | None = None, *, games: Sequence[str] | None = None,
                        dates: tuple[str | None, str | None] = (None, None),
                        only: set[tuple[str, str]] | None = None, citations: Sequence[str] | None = None,
                        batch_size: int = BATCH_SIZE, workers: int | None = 1, scheduler: Any = None,
                        progress: Callable[[int], None] | None = None,
                        tally: Tally | None = None) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """Stream ``(game, date, findings)`` over a store's partitions, in report order.

    Shoe rules see the day's rounds plus those of the previous stored day (a shoe
    may cross midnight); findings land on the day of the round they concern.
    ``only`` limits the run to some (game, date) partitions. ``workers`` > 1 runs
    partitions in that many processes; ``None`` is the machine's cores once the plan holds
    :data:`AUTO_MIN_ROUNDS` rounds; ``scheduler`` (a ``dask.distributed`` scheduler address, or a
    ``Client``) runs them on a Dask cluster (:func:`auditkit.engine.executors.run`). Either way the
    findings are the same, row for row. ``progress`` is called with the number of rounds checked, per
    batch (one process) or per partition. ``tally`` (when given) gets the coverage counts
    (:class:`auditkit.rules.tally.Tally`), whichever way the partitions run.
    """
    settings = Settings(config or Config(), citations, batch_size, progress, tally)
    for part, found in executors.run(store, settings, games=games, dates=dates, only=only, workers=workers,
                                     scheduler=scheduler):
        yield part.game, part.date, _frame(found)


def validate_into_store(store: Store, config: Config | None = None, *,
                        only: set[tuple[str, str]] | None = None, **kwargs: Any) -> tuple[int, int]:
    """Validate partitions and replace their stored findings; returns (findings, rounds checked).

    With ``only``, the stored day after each named partition is redone too (its
    shoe rules read the day before). The other options are :func:`validate_partitions`'.
    """
    if only is not None:
        only = with_next_days(store, only)
    count = _Counter(kwargs.pop("progress", None))
    total = 0
    for game, date, frame in validate_partitions(store, config, only=only, progress=count, **kwargs):
        store.write_findings(game, date, frame)
        total += len(frame)
    return total, count.rounds


def collect(store: Store, config: Config | None = None, *, games: Sequence[str] | None = None,
            dates: tuple[str | None, str | None] = (None, None), citations: Sequence[str] | None = None,
            batch_size: int = BATCH_SIZE, workers: int | None = 1, scheduler: Any = None,
            progress: Callable[[int], None] | None = None, tally: Tally | None = None) -> tuple[pd.DataFrame, int]:
    """All findings of a store in one sorted frame, and the number of rounds checked (``workers``
    processes validate partitions in parallel: the same findings); ``tally`` gets the coverage counts."""
    count = _Counter(progress)
    settings = Settings(config or Config(), citations, batch_size, count, tally)
    found = sorted_findings(t for _p, t in executors.run(store, settings, games=games, dates=dates,
                                                          workers=workers, scheduler=scheduler))
    return _frame(found), count.rounds


class _Counter:
    """A progress callback that counts the rounds checked, and passes them on."""

    def __init__(self, then: Callable[[int], None] | None) -> None:
        self.rounds, self.then = 0, then

    def __call__(self, n: int) -> None:
        self.rounds += n
        if self.then is not None:
            self.then(n)


def validate_store(store: Store, config: Config | None = None, **kwargs: Any) -> Iterator[pd.DataFrame]:
    """Stream findings frames over a store (:func:`validate_partitions`' options)."""
    for _game, _date, frame in validate_partitions(store, config, **kwargs):
        yield frame


def validate_partition(store: Store, part: Partition, config: Config, *, citations: Sequence[str] | None = None,
                       batch_size: int = BATCH_SIZE, prior: pa.Table | None = None,
                       progress: Callable[[int], None] | None = None) -> tuple[pd.DataFrame, int, pa.Table | None]:
    """Findings of one partition, the rounds it checked, and its shoe columns
    (:func:`auditkit.engine.partitions.check_partition`)."""
    found, checked, day = check_partition(store, part, Settings(config, citations, batch_size, progress), prior)
    return _frame(found), checked, day
