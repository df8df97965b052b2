"""The validation engine: run every registered rule over batches of rounds.

Round rules run batch by batch; shoe rules (cut card, shoe composition) run over
one gaming day of narrow columns at a time, with the previous day's rounds of the
shoes dealt again that day (a shoe may cross midnight), so memory stays bounded
by a batch and a day whatever the number of rounds.
Findings are one row per round and rule (see :data:`auditkit.schema.FINDINGS`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import games as registered
from .columns import combine, to_numpy
from .paytables import Config
from .rules import coverage
from .rules.registry import PREPARERS, Hits, Rule, rules_for
from .rules.tally import Tally
from .schema import FINDINGS, schema_for

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is made: the workers start without it

    from .store import Store

__all__ = ["collect", "default_workers", "AUTO_MIN_ROUNDS", "Partition", "plan", "validate_partition", "validate_partitions", "validate_into_store", "with_next_days", "validate_store", "validate_records",
           "validate_tables", "check_rounds", "check_shoes", "shoe_columns", "read_columns", "empty_findings", "select_rules",
           "sort_findings", "SHOE_KEY"]

META = ["round_id", "table_id", "dealer_id", "started_at", "utc_offset", "shoe_id", "source_file", "source_line"]
SHOE_KEY = ["table_id", "shoe_id", "round_seq", "started_at", "round_id"]
"""The columns every shoe rule gets: rounds are grouped by table and shoe, in round_seq order."""
COLUMNS = [f.name for f in FINDINGS]
AUTO_MIN_ROUNDS = 1_000_000
"""With the default (``workers=None``), fewer rounds than this run on one process: starting worker
processes (a second or two each, importing numpy, pandas and pyarrow) costs more than it saves."""


def default_workers() -> int:
    """The cores this process may run on (``os.process_cpu_count``, the CPU affinity, or ``os.cpu_count``)."""
    import os

    count = getattr(os, "process_cpu_count", None)  # Python 3.13+: the affinity-aware count
    if count is not None:
        return max(1, count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def empty_findings() -> pd.DataFrame:
    """A findings frame with no row and the report's columns."""
    return _empty_findings().copy()


@functools.cache
def _empty_findings() -> pd.DataFrame:
    return FINDINGS.empty_table().to_pandas()


def select_rules(game: str, scope: str, citations: Sequence[str] | None = None,
                 rule_ids: Sequence[str] | None = None) -> list[Rule]:
    """The rules of a game and scope, optionally only some citations or rule ids."""
    out = rules_for(game, scope)
    if citations:
        out = [r for r in out if r.citation in citations or r.rule_id in citations]
    if rule_ids:
        out = [r for r in out if r.rule_id in rule_ids]
    return out


def _as_array(value: Any, n: int, dtype: Any = object) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    return np.full(n, value, dtype=dtype)


def _hit_columns(hits: Hits, rule: Rule) -> dict[str, np.ndarray]:
    """One rule's hits as arrays, merged to one finding per round when a rule hit a round twice."""
    n = len(hits)
    rows = np.asarray(hits.rows, dtype=np.int64)
    seat = hits.seat
    message, expected, recorded = rule.words(hits)
    evidence = np.empty(n, dtype=object)
    evidence[:] = rule.numbers(hits)
    cols = {
        "row": rows,
        "rule_id": np.full(n, rule.rule_id, dtype=object),
        "citation": np.full(n, rule.citation, dtype=object),
        "severity": np.full(n, rule.severity, dtype=object),
        "message": _as_array(message, n).astype(object),
        "expected": _as_array(expected, n).astype(object),
        "recorded": _as_array(recorded, n).astype(object),
        "discrepancy": _as_array(hits.discrepancy, n, np.float64).astype(np.float64),
        "expected_amount": _as_array(hits.expected_amount, n, np.float64).astype(np.float64),
        "recorded_amount": _as_array(hits.recorded_amount, n, np.float64).astype(np.float64),
        "seats": _seat_text(seat, n),
        "evidence": evidence,
    }
    if len(np.unique(rows)) < n:  # rare: several seats of one round, say
        import pandas as pd

        merged = _merge_per_round(pd.DataFrame(cols))
        cols = {k: merged[k].to_numpy() for k in cols}
    return cols


def _seat_text(seat: np.ndarray | None, n: int) -> np.ndarray:
    """Seat numbers as text, empty where there is none."""
    if seat is None:
        return np.full(n, "", dtype=object)
    seat = np.asarray(seat)
    if seat.dtype.kind in "iu":
        return seat.astype(str).astype(object)
    import pandas as pd

    return pd.Series(seat).astype("Int64").astype(str).replace("<NA>", "").to_numpy(dtype=object)


def _join(values: pd.Series) -> str:
    parts = [str(v) for v in values if v is not None and str(v) != ""]
    return "; ".join(dict.fromkeys(parts)) if len(set(parts)) > 1 else (parts[0] if parts else "")


def _merge_per_round(frame: pd.DataFrame) -> pd.DataFrame:
    """Several hits of one rule on one round (one per seat, say) become one finding."""
    first = frame.groupby("row", sort=False).first()
    joined = frame.groupby("row", sort=False).agg(
        message=("message", _join), expected=("expected", _join), recorded=("recorded", _join),
        seats=("seats", lambda s: ",".join(dict.fromkeys(x for x in s if x))),
        discrepancy=("discrepancy", "sum"),
        expected_amount=("expected_amount", lambda a: a.sum(min_count=1)),  # NaN stays NaN: no money
        recorded_amount=("recorded_amount", lambda a: a.sum(min_count=1)),
        evidence=("evidence", lambda e: [pair for pairs in e for pair in pairs]),  # in the order of the seats
    )
    first.update(joined.drop(columns="evidence"))
    first["evidence"] = joined["evidence"]
    for col in ("discrepancy", "expected_amount", "recorded_amount"):
        first[col] = joined[col].astype(np.float64)
    return first.reset_index()


def _local_time(utc: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """ISO 8601 local times with their offset, as the log wrote them (``2025-06-02T09:21:45-05:00``)."""
    off = np.nan_to_num(np.asarray(offset, dtype=np.float64)).astype(np.int64)
    seconds = np.asarray(utc).astype("datetime64[s]").astype(np.int64) + off * 60
    local = pc.strftime(pa.array(seconds, pa.timestamp("s")), format="%Y-%m-%dT%H:%M:%S").to_numpy(zero_copy_only=False)
    suffix = {o: f"{'-' if o < 0 else '+'}{abs(o) // 60:02d}:{abs(o) % 60:02d}" for o in np.unique(off).tolist()}
    return np.array([t + suffix[o] for t, o in zip(local, off.tolist(), strict=True)], dtype=object)


def _findings(table: pa.Table, found: list[tuple[Rule, Hits]], game: str, date: str | None) -> pa.Table:
    """One findings table for all rules' hits on a table: the metadata of the hit rounds only is
    read, so a batch with a few findings costs little."""
    parts = [_hit_columns(h, r) for r, h in found]
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    uniq, inv = np.unique(cols["row"], return_inverse=True)
    names = [c for c in META + ["date"] if c in table.column_names]
    meta = table.select(names).take(pa.array(uniq))
    m = {c: meta[c].to_numpy(zero_copy_only=False) for c in names}
    n = len(inv)
    out = {
        "round_id": m["round_id"][inv], "game": np.full(n, game, dtype=object),
        "table_id": m["table_id"][inv], "dealer_id": m["dealer_id"][inv],
        "started_at": _local_time(m["started_at"], m["utc_offset"])[inv],
        **{k: cols[k] for k in ("rule_id", "citation", "severity", "message", "expected", "recorded")},
        "discrepancy": cols["discrepancy"].round(6),
        "expected_amount": cols["expected_amount"].round(6), "recorded_amount": cols["recorded_amount"].round(6),
        "seats": cols["seats"], "shoe_id": m["shoe_id"][inv],
        "date": m["date"][inv] if "date" in m else np.full(n, date or "", dtype=object),
        "source_file": m["source_file"][inv], "source_line": m["source_line"][inv].astype(np.int64),
        "evidence": cols["evidence"],
    }
    return pa.Table.from_arrays([pa.array(out[f.name], type=f.type) for f in FINDINGS], schema=FINDINGS)


def _finish(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_findings()
    import pandas as pd

    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _frame(found: pa.Table | None) -> pd.DataFrame:
    """Findings as the report's frame (the dtypes of stored findings)."""
    return empty_findings() if found is None else found.to_pandas()


def _sorted(tables: Iterable[pa.Table | None]) -> pa.Table | None:
    """Findings tables as one, in :func:`sort_findings` order (Arrow's sort is stable, and orders
    strings by code point, as pandas does); None when there is none."""
    tables = [t for t in tables if t is not None]
    if not tables:
        return None
    found = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    return found.take(pc.sort_indices(found, [(k, "ascending") for k in SORT_KEYS]))


def _sorted_frame(tables: Iterable[pa.Table | None]) -> pd.DataFrame:
    """Findings tables as one frame, in :func:`sort_findings` order."""
    return _frame(_sorted(tables))


def check_rounds(table: pa.Table, game: str, config: Config, rules: Sequence[Rule] | None = None,
                 date: str | None = None, tally: Tally | None = None) -> pd.DataFrame:
    """Findings of the round rules of ``game`` on one batch of its rounds (``tally`` gets the coverage)."""
    return _frame(_round_findings(table, game, config, rules, date, tally))


def _round_findings(table: pa.Table, game: str, config: Config, rules: Sequence[Rule] | None,
                    date: str | None, tally: Tally | None = None) -> pa.Table | None:
    rules = select_rules(game, "round") if rules is None else rules
    if table.num_rows == 0 or not rules:
        return None
    ctx = PREPARERS[game](table, config)
    lack = coverage.lacking(table, game)  # a rule neither flags nor passes a round it cannot check
    found = []
    for r in rules:
        hits, cannot = r.func(ctx), coverage.cannot(lack, r.needs)
        if cannot is not None and len(hits):
            hits = hits.subset(~cannot[hits.rows])
        if tally is not None:
            tally.add(game, r, table.num_rows, cannot, lack, hits.rows)
        if len(hits):
            found.append((r, hits))
    return _findings(table, found, game, date) if found else None


def check_shoes(table: pa.Table, game: str, config: Config, rules: Sequence[Rule] | None = None,
                emit: np.ndarray | None = None, date: str | None = None, tally: Tally | None = None,
                emitted: set[tuple[str, str]] | None = None) -> pd.DataFrame:
    """Findings of the shoe rules over rounds grouped by table and shoe, in round_seq order.

    ``emit`` marks the rounds whose findings are wanted (the others are context
    carried from an earlier day); by default all. Given ``emitted`` (the (round_id, rule_id)
    of findings already reported), the findings wanted are instead those not in it, on any
    round, and it gets them; ``emit`` then marks the rounds counted in ``tally`` only. So
    live mode's open shoes, whose rounds may arrive out of order, report a finding that an
    earlier round arriving late puts on a round already checked.
    """
    return _frame(_shoe_findings(table, game, config, rules, emit, date, tally, emitted))


def _shoe_findings(table: pa.Table, game: str, config: Config, rules: Sequence[Rule] | None,
                   emit: np.ndarray | None, date: str | None, tally: Tally | None = None,
                   emitted: set[tuple[str, str]] | None = None) -> pa.Table | None:
    rules = select_rules(game, "shoe") if rules is None else rules
    if table.num_rows == 0 or not rules:
        return None
    order = _shoe_order(table)
    if not (order[1:] > order[:-1]).all():
        table = table.take(pa.array(order))
    keep = None if emit is None else np.asarray(emit)[order]
    lack = coverage.lacking(table, game)
    found = []
    for r in rules:
        cannot = coverage.cannot(lack, r.needs)
        hits = r.func(table, config) if cannot is None else _shoe_rule_on(table, config, r, ~cannot)
        if emitted is not None and len(hits):
            ids = table["round_id"].take(pa.array(hits.rows)).to_pylist()
            new = np.array([(i, r.rule_id) not in emitted for i in ids], bool)
            emitted.update((i, r.rule_id) for i in ids)
            hits = hits.subset(new)
        elif keep is not None and len(hits):
            hits = hits.subset(keep[hits.rows])
        if tally is not None:
            tally.add(game, r, table.num_rows if keep is None else int(keep.sum()), cannot, lack, hits.rows, emit=keep)
        if len(hits):
            found.append((r, hits))
    return _findings(table, found, game, date) if found else None


def _shoe_rule_on(table: pa.Table, config: Config, rule: Rule, checkable: np.ndarray) -> Hits:
    """A shoe rule's hits over the rounds it can check only (a round it cannot check is not counted
    in its shoe either: its cards may be invented), as rows of ``table``."""
    rows = np.flatnonzero(checkable)
    if not len(rows):
        return Hits(rows=rows)
    hits = rule.func(table.take(pa.array(rows)), config)
    hits.rows = rows[np.asarray(hits.rows, dtype=np.int64)]
    return hits


def shoe_columns(rules: Iterable[Rule], game: str | None = None) -> list[str]:
    """The columns the shoe rules read, with the shoe key and the report's metadata (and, given the game,
    those telling which rounds lack the evidence the rules need)."""
    cols = dict.fromkeys(SHOE_KEY + META + ["house_rules"])  # a round's own house rules (Context.param)
    for r in rules:
        cols.update(dict.fromkeys(r.columns))
        if game is not None:
            cols.update(dict.fromkeys(coverage.columns_for(game, r.needs)))
    return list(cols)


def read_columns(round_rules: Sequence[Rule], shoe_rules: Sequence[Rule], game: str | None = None
                 ) -> list[str] | None:
    """The stored columns a validation pass reads: those the selected rules declare, the shoe
    key and the report's metadata (and, given the game, those telling which rounds lack the evidence
    the rules need); None (every column) when a round rule declares none."""
    if any(not r.columns for r in round_rules):
        return None
    cols = dict.fromkeys(["status", *shoe_columns(shoe_rules, game)])
    for r in round_rules:
        cols.update(dict.fromkeys(r.columns))
        if game is not None:
            cols.update(dict.fromkeys(coverage.columns_for(game, r.needs)))
    return list(cols)


def validate_tables(tables: dict[str, pa.Table], config: Config | None = None,
                    citations: Sequence[str] | None = None, tally: Tally | None = None) -> pd.DataFrame:
    """All findings on in-memory tables of rounds, keyed by game (no streaming); ``tally`` (when given)
    gets the coverage counts."""
    config = config or Config()
    frames = []
    for game, table in tables.items():
        frames.append(_frame(_round_findings(table, game, config, select_rules(game, "round", citations), None,
                                             tally)))
        frames.append(_frame(_shoe_findings(table, game, config, select_rules(game, "shoe", citations), None, None,
                                            tally)))
    return sort_findings(_finish(frames))


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


SORT_KEYS = ["started_at", "round_id", "rule_id"]


def sort_findings(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings in a stable order: time, round, then rule id."""
    if findings.empty:
        return findings
    return findings.sort_values(SORT_KEYS, kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class Partition:
    """One unit of validation work: a game's gaming day, and the stored day before it (its shoes may
    cross midnight). Partitions are independent, so they run in any order, on any worker."""

    game: str
    date: str
    previous: str | None


def plan(store: Store, *, games: Sequence[str] | None = None, dates: tuple[str | None, str | None] = (None, None),
         only: set[tuple[str, str]] | None = None, citations: Sequence[str] | None = None) -> list[Partition]:
    """The partitions to validate, in report order (game, then day)."""
    out = []
    for game in games or registered.names():
        if not select_rules(game, "round", citations) and not select_rules(game, "shoe", citations):
            continue
        all_dates = store.dates(game)
        for i, date in enumerate(all_dates):
            wanted = (dates[0] is None or date >= dates[0]) and (dates[1] is None or date <= dates[1]) \
                and (only is None or (game, date) in only)
            if wanted:
                out.append(Partition(game, date, all_dates[i - 1] if i > 0 else None))
    return out


def validate_partition(store: Store, part: Partition, config: Config, *, citations: Sequence[str] | None = None,
                       batch_size: int = 131_072, prior: pa.Table | None = None,
                       progress: Callable[[int], None] | None = None) -> tuple[pd.DataFrame, int, pa.Table | None]:
    """Findings of one partition, the rounds it checked, and its shoe columns (the next day's ``prior``).

    Round rules run batch by batch; shoe rules over the day's narrow shoe columns
    (kept from the batches already read) plus the previous day's rounds of the
    shoes dealt again today. ``prior`` is the previous day's shoe columns when the
    caller has them (a serial run), else they are read.
    """
    found, checked, day = _check_partition(store, part, config, citations, batch_size, prior, progress)
    return _frame(found), checked, day


def _check_partition(store: Store, part: Partition, config: Config, citations: Sequence[str] | None,
                     batch_size: int, prior: pa.Table | None, progress: Callable[[int], None] | None,
                     tally: Tally | None = None) -> tuple[pa.Table | None, int, pa.Table | None]:
    """:func:`validate_partition` with the findings as one sorted Arrow table (None: no finding)."""
    found, checked, day, _small = _read_partition(store, part, config, citations, batch_size, prior, progress,
                                                  defer=False, tally=tally)
    return _sorted(found), checked, day


def _read_partition(store: Store, part: Partition, config: Config, citations: Sequence[str] | None,
                    batch_size: int, prior: pa.Table | None, progress: Callable[[int], None] | None, *,
                    defer: bool, tally: Tally | None = None
                    ) -> tuple[list[pa.Table | None], int, pa.Table | None, pa.Table | None]:
    """A partition's findings (unsorted), rounds checked, shoe columns, and, with ``defer``, the
    day's rounds unchecked by the round rules when the day is one batch smaller than ``batch_size``
    (the caller checks several such days at once: see :func:`_serial`)."""
    game, date = part.game, part.date
    round_rules = select_rules(game, "round", citations)
    shoe_rules = select_rules(game, "shoe", citations)
    found, checked, small = [], 0, None
    cols = shoe_columns(shoe_rules, game)
    shoe_parts = []  # the shoe pass's narrow columns, kept from the batches already read
    for batch in store.scan(game, date, batch_size=batch_size,
                            columns=read_columns(round_rules, shoe_rules, game)):
        if defer and not checked and batch.num_rows < batch_size:  # the first batch is short: the only one
            small = batch
        else:
            found.append(_round_findings(batch, game, config, round_rules, date, tally))
        if shoe_rules:
            shoe_parts.append(batch.select(cols))
        checked += batch.num_rows
        if progress:
            progress(batch.num_rows)
    day = None
    if shoe_rules:
        # no date column: only this day's rounds are emitted, and check_shoes stamps them with it
        day = pa.concat_tables(shoe_parts) if shoe_parts else store.read(game, date, columns=cols)
        if part.previous is not None and prior is None:
            prior = store.read(game, part.previous, columns=cols)
        if part.previous is not None:  # only the shoes dealt again today need yesterday's rounds
            prior = prior.filter(pc.is_in(_shoe_key(prior), value_set=pc.unique(_shoe_key(day))))
        both = pa.concat_tables([prior, day]) if part.previous is not None else day
        emit = np.concatenate([np.zeros(both.num_rows - day.num_rows, bool), np.ones(day.num_rows, bool)])
        found.append(_shoe_findings(both, game, config, shoe_rules, emit, date, tally))
    return found, checked, day, small


CHUNKS_PER_WORKER = 8
"""A parallel run cuts the plan into about this many runs of consecutive partitions per worker: within
one, each day reuses the day before's shoe columns (as the serial engine does) and a task's fixed costs
are paid once, while there are still enough tasks to keep every worker busy to the end."""


def _chunks(parts: list[Partition], workers: int) -> list[list[Partition]]:
    """The plan cut into runs of consecutive partitions, as even as can be."""
    n = max(1, min(len(parts), workers * CHUNKS_PER_WORKER))
    bounds = [round(i * len(parts) / n) for i in range(n + 1)]
    return [parts[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _serial(store: Store, parts: Sequence[Partition], config: Config, citations: Sequence[str] | None,
            batch_size: int, progress: Callable[[int], None] | None = None, tally: Tally | None = None
            ) -> Iterator[tuple[Partition, pa.Table | None, int]]:
    """Partitions one after another, in order; a day whose previous stored day was just checked
    reuses its shoe columns. Days of one game smaller than a batch are checked by the round rules
    together, up to ``batch_size`` rounds at once (a round rule reads each round alone, so its
    findings are the same; a run of small days then costs what one batch costs)."""
    previous: tuple[Partition, pa.Table | None] | None = None
    waiting: list[tuple[Partition, list[pa.Table | None], int, pa.Table]] = []  # small days, round rules to run

    def flush() -> Iterator[tuple[Partition, pa.Table | None, int]]:
        yield from _round_rules_of_days(waiting, config, citations, tally)
        waiting.clear()

    for part in parts:
        prior = previous[1] if previous and previous[0].game == part.game and previous[0].date == part.previous \
            else None
        found, checked, day, small = _read_partition(store, part, config, citations, batch_size, prior, progress,
                                                     defer=True, tally=tally)
        previous = (part, day)
        if waiting and (small is None or part.game != waiting[0][0].game
                        or sum(w[3].num_rows for w in waiting) + small.num_rows > batch_size):
            yield from flush()
        if small is None:
            yield part, _sorted(found), checked
        else:
            waiting.append((part, found, checked, small))
    yield from flush()


def _round_rules_of_days(days: list[tuple[Partition, list[pa.Table | None], int, pa.Table]], config: Config,
                         citations: Sequence[str] | None, tally: Tally | None = None
                         ) -> Iterator[tuple[Partition, pa.Table | None, int]]:
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
    found = _round_findings(rounds, game, config, select_rules(game, "round", citations), days[0][0].date, tally)
    for part, other, checked, _t in days:
        mine = found if found is None or len(days) == 1 else found.filter(pc.equal(found["date"], part.date))
        yield part, _sorted([mine if mine is None or mine.num_rows else None, *other]), checked


def _run_chunk(store: Store, chunk: list[Partition], config: Config, citations: Sequence[str] | None,
               batch_size: int) -> tuple[pa.Table | None, list[int], list[int], Tally]:
    """A worker's task: consecutive partitions of the store (pickled: its folder, or its URI and file
    system), run as the serial engine runs them. Returns their findings as one table, partition after
    partition (one table pickles in a fraction of a millisecond, a table per partition in about 0.4 ms
    each), with each partition's number of findings and of rounds checked, and the coverage counts."""
    tables, rows, checked, tally = [], [], [], Tally()
    for _p, findings, n in _serial(store, chunk, config, citations, batch_size, tally=tally):
        if findings is not None and findings.num_rows:
            tables.append(findings)
        rows.append(0 if findings is None else findings.num_rows)
        checked.append(n)
    return (pa.concat_tables(tables).combine_chunks() if tables else None), rows, checked, tally


def validate_partitions(store: Store, config: Config | None = None, *, games: Sequence[str] | None = None,
                        dates: tuple[str | None, str | None] = (None, None),
                        only: set[tuple[str, str]] | None = None, citations: Sequence[str] | None = None,
                        batch_size: int = 131_072, workers: int | None = 1, scheduler: Any = None,
                        progress: Callable[[int], None] | None = None,
                        tally: Tally | None = None) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """Stream ``(game, date, findings)`` over a store's partitions, in report order.

    Shoe rules see the day's rounds plus those of the previous stored day (a shoe
    may cross midnight); findings land on the day of the round they concern.
    ``only`` limits the run to some (game, date) partitions. ``workers`` > 1 runs
    partitions in that many processes, started before the plan is made so that
    they import while it is (a plan of one partition runs in this process);
    ``None`` is the machine's cores (:func:`default_workers`), started once the
    plan holds :data:`AUTO_MIN_ROUNDS` rounds (one process for fewer). ``scheduler`` (a
    ``dask.distributed`` scheduler address, or a ``Client``) runs them as tasks on
    a Dask cluster whose workers all see the store (a shared folder or an
    ``s3://`` URI). Either way the findings are the same, row for row, and only
    this process writes anything. Workers get runs of consecutive partitions
    (:data:`CHUNKS_PER_WORKER`). ``progress`` is called with the number of
    rounds checked, per batch (one worker) or per partition. ``tally`` (when given) gets the coverage
    counts (:class:`auditkit.rules.coverage.Tally`), whichever way the partitions run.
    """
    for game, date, found in _partition_tables(store, config, games=games, dates=dates, only=only,
                                               citations=citations, batch_size=batch_size, workers=workers,
                                               scheduler=scheduler, progress=progress, tally=tally):
        yield game, date, _frame(found)


def _partition_tables(store: Store, config: Config | None, *, games: Sequence[str] | None,
                      dates: tuple[str | None, str | None], only: set[tuple[str, str]] | None,
                      citations: Sequence[str] | None, batch_size: int, workers: int | None, scheduler: Any,
                      progress: Callable[[int], None] | None, tally: Tally | None = None
                      ) -> Iterator[tuple[str, str, pa.Table | None]]:
    """:func:`validate_partitions` with each partition's findings as a sorted Arrow table (None: none)."""
    config = config or Config()
    with contextlib.ExitStack() as stack:
        # workers asked for are started first: they import while this process plans
        pool = stack.enter_context(_pool(workers)) if scheduler is None and workers and workers > 1 else None
        store = store.pinned()  # one commit point for the whole run; the manifest listed once
        parts = plan(store, games=games, dates=dates, only=only, citations=citations)
        if scheduler is not None:
            yield from _dask(store, parts, config, citations, batch_size, scheduler, progress, tally)
            return
        if workers is None:
            workers = default_workers()
            if workers > 1 and _at_least(store, parts, AUTO_MIN_ROUNDS):
                pool = stack.enter_context(_pool(workers))
        if pool is not None and len(parts) > 1:
            yield from _parallel(pool, store, parts, config, citations, batch_size, min(workers, len(parts)),
                                 progress, tally)
            return
        for part, findings, _n in _serial(store, parts, config, citations, batch_size, progress, tally):
            yield part.game, part.date, findings


def _at_least(store: Store, parts: list[Partition], rounds: int) -> bool:
    """Whether the partitions hold at least ``rounds`` rounds (their files' metadata is read until
    they do: a large store's every footer took seconds)."""
    total = 0
    for p in parts:
        total += store.count(p.game, p.date)
        if total >= rounds:
            return True
    return False


def _parallel(pool: Any, store: Store, parts: list[Partition], config: Config, citations: Sequence[str] | None,
              batch_size: int, workers: int, progress: Callable[[int], None] | None,
              tally: Tally | None = None) -> Iterator[tuple[str, str, pa.Table | None]]:
    """Runs of partitions on a pool of processes, yielded in plan order as they complete in turn."""
    chunks = _chunks(parts, workers)
    futures = [pool.submit(_run_chunk, store, c, config, citations, batch_size) for c in chunks]
    yield from _in_order(chunks, futures, progress, tally)


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[Any]:
    """A pool of ``workers`` processes, each started at once (not at its first task). Left early (an
    error, a caller that stops reading), it cancels the tasks not yet started rather than run them."""
    from .workers import process_pool, stop_pool

    pool = process_pool(workers, _one_arrow_thread)  # its workers die with this process
    try:
        for _ in range(workers):  # the pool starts a process for each task that waits, up to max_workers
            pool.submit(int)
        yield pool
    except BaseException:
        stop_pool(pool)  # an error or an interrupt: the tasks running are abandoned, not awaited
        raise
    finally:
        pool.shutdown()


def _one_arrow_thread() -> None:
    """A pool worker is one of several processes that share the cores: Arrow's thread pool (a thread
    per core in each of them) would oversubscribe them (2 workers on 2 cores: 7% slower)."""
    pa.set_cpu_count(1)


def _in_order(chunks: list[list[Partition]], futures: list[Any], progress: Callable[[int], None] | None,
              tally: Tally | None = None) -> Iterator[tuple[str, str, pa.Table | None]]:
    """Each partition's findings (None: none), in plan order, from the tasks' results in turn."""
    for chunk, future in zip(chunks, futures, strict=True):
        findings, rows, checked, counts = future.result()
        if tally is not None:
            tally.merge(counts)
        start = 0
        for part, n, c in zip(chunk, rows, checked, strict=True):
            if progress:
                progress(c)
            yield part.game, part.date, findings.slice(start, n) if n else None
            start += n


def _dask(store: Store, parts: list[Partition], config: Config, citations: Sequence[str] | None,
          batch_size: int, scheduler: Any, progress: Callable[[int], None] | None,
          tally: Tally | None = None) -> Iterator[tuple[str, str, pa.Table | None]]:
    """Runs of partitions as tasks on a Dask cluster (``client.map``), yielded in plan order.

    A task is pure (it reads the store and returns findings), so a task whose
    worker died is run again by Dask on another worker and its findings arrive once.
    """
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - the optional extra
        raise RuntimeError("the Dask engine needs the dask extra: pip install 'auditkit[dask]'") from None
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        chunks = _chunks(parts, max(1, sum(client.nthreads().values())))
        task = functools.partial(_run_chunk, config=config, citations=citations, batch_size=batch_size)
        futures = client.map(task, [store] * len(chunks), chunks, pure=False)  # a store pickles small
        yield from _in_order(chunks, futures, progress, tally)
    finally:
        if client is not scheduler:
            client.close()


def validate_store(store: Store, config: Config | None = None, **kwargs: Any) -> Iterator[pd.DataFrame]:
    """Stream findings frames over a store (see :func:`validate_partitions` for the options)."""
    for _game, _date, frame in validate_partitions(store, config, **kwargs):
        yield frame


def _shoe_order(table: pa.Table) -> np.ndarray:
    """Row order that puts each shoe's rounds together, by round_seq, then time, then input order.

    Shoes are numbered by first appearance (integers sort much faster than the strings)."""
    shoe = pc.dictionary_encode(combine(_shoe_key(table))).indices.to_numpy(zero_copy_only=False)
    seq = to_numpy(table["round_seq"], 0).astype(np.int64)
    when = to_numpy(table["started_at"].cast(pa.int64()), 0)
    return np.lexsort((when, seq, shoe))


def _shoe_key(table: pa.Table) -> pa.Array:
    """``table_id`` and ``shoe_id`` joined, per round (null shoe ids join as empty)."""
    return pc.binary_join_element_wise(pc.fill_null(table["table_id"], ""), pc.fill_null(table["shoe_id"], ""),
                                       "\x1f")


def with_next_days(store: Store, parts: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (game, date) partitions plus the stored day after each: its shoe rules read the day before."""
    out = set(parts)
    for game, date in parts:
        later = [d for d in store.dates(game) if d > date]
        if later:
            out.add((game, later[0]))
    return out


def validate_into_store(store: Store, config: Config | None = None, *,
                        only: set[tuple[str, str]] | None = None, **kwargs: Any) -> tuple[int, int]:
    """Validate partitions and replace their stored findings; returns (findings, rounds checked).

    With ``only``, the stored day after each named partition is redone too (its
    shoe rules read the day before).
    """
    if only is not None:
        only = with_next_days(store, only)
    checked = 0

    def count(n: int) -> None:
        nonlocal checked
        checked += n
        if kwargs.get("progress"):
            kwargs["progress"](n)

    total = 0
    rest = {k: v for k, v in kwargs.items() if k != "progress"}
    for game, date, frame in validate_partitions(store, config, only=only, progress=count, **rest):
        store.write_findings(game, date, frame)
        total += len(frame)
    return total, checked


def collect(store: Store, config: Config | None = None, *, games: Sequence[str] | None = None,
            dates: tuple[str | None, str | None] = (None, None), citations: Sequence[str] | None = None,
            batch_size: int = 131_072, workers: int | None = 1, scheduler: Any = None,
            progress: Callable[[int], None] | None = None, tally: Tally | None = None) -> tuple[pd.DataFrame, int]:
    """All findings of a store in one sorted frame, and the number of rounds checked (``workers``
    processes validate partitions in parallel: the same findings); ``tally`` gets the coverage counts."""
    checked = 0

    def count(n: int) -> None:
        nonlocal checked
        checked += n
        if progress:
            progress(n)

    found = _sorted(t for _g, _d, t in _partition_tables(store, config, games=games, dates=dates, only=None,
                                                         citations=citations, batch_size=batch_size,
                                                         workers=workers, scheduler=scheduler, progress=count,
                                                         tally=tally))
    return _frame(found), checked
