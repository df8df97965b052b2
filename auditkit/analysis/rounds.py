"""Rounds out of a store: a store from its folder, rounds a day at a time with filters pushed down,
round counts per group, and the rounds behind some findings in words."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import schema_for
from ..store import Store
from ..tables import cards_text, events_text, hand_lines, relative_to, wagers_text
from .shifts import shift_of

StoreLike = Store | str | Path


def open_store(store: StoreLike) -> Store:
    """A :class:`Store` from a store or its folder."""
    if isinstance(store, Store):
        return store
    path = Path(store)
    if not Store.is_store(path):
        raise FileNotFoundError(f"no auditkit store at {path} (run `auditkit ingest` first)")
    return Store(path)


def _as_list(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    out = list(value)
    return out or None


def _filter(tables: list[str] | None, dealers: list[str] | None, round_ids: list[str] | None = None) -> Any:
    expr = None
    for col, values in (("table_id", tables), ("dealer_id", dealers), ("round_id", round_ids)):
        if values is not None:
            e = pc.field(col).isin(values)
            expr = e if expr is None else expr & e
    return expr


def iter_rounds(store: StoreLike, game: str, start: str | None = None, end: str | None = None, *,
                tables: str | Iterable[str] | None = None, dealers: str | Iterable[str] | None = None,
                columns: Sequence[str] | None = None,
                round_ids: Iterable[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
    """``(date, table)`` per stored day of ``game``, only the given columns, table/dealer filters pushed down."""
    st = open_store(store)
    flt = _filter(_as_list(tables), _as_list(dealers), _as_list(round_ids))
    for date in st.dates(game, start, end):
        # the store's own dataset: a folder's, an object store's or a one-shot's held in memory alike
        t = st._dataset(game, date).to_table(columns=list(columns) if columns else None, filter=flt)
        if t.num_rows:
            yield date, t


def load_rounds(store: StoreLike, game: str, start: str | None = None, end: str | None = None, *,
                tables: str | Iterable[str] | None = None, dealers: str | Iterable[str] | None = None,
                columns: Sequence[str] | None = None) -> pa.Table:
    """Rounds of ``game`` in [start, end] as one Arrow table with a ``date`` column.

    Name the columns you need: the whole history of a big store does not fit in
    memory; aggregate per day with :func:`iter_rounds` instead.
    """
    out = [t.append_column("date", pa.array([d] * t.num_rows, pa.string()))
           for d, t in iter_rounds(store, game, start, end, tables=tables, dealers=dealers, columns=columns)]
    if not out:
        schema = schema_for(game)
        if columns:
            schema = pa.schema([schema.field(c) for c in columns])
        return schema.append(pa.field("date", pa.string())).empty_table()
    return pa.concat_tables(out)


def round_counts(store: StoreLike, start: str | None = None, end: str | None = None, *,
                 games: str | Iterable[str] | None = None, tables: str | Iterable[str] | None = None,
                 dealers: str | Iterable[str] | None = None,
                 by: Sequence[str] = ("game", "table_id", "date"),
                 shifts: Mapping[str, tuple[int, int]] | None = None) -> pd.DataFrame:
    """Number of stored rounds per group (keys among game, table_id, dealer_id, date, day, hour, shift)."""
    st = open_store(store)
    keys = list(by)
    frames = []
    for game in _as_list(games) or st.games():
        for date, t in iter_rounds(st, game, start, end, tables=tables, dealers=dealers,
                                   columns=["table_id", "dealer_id", "started_at", "utc_offset"]):
            f = pd.DataFrame({"table_id": t["table_id"].to_numpy(zero_copy_only=False),
                              "dealer_id": t["dealer_id"].to_numpy(zero_copy_only=False)})
            f["game"], f["date"], f["day"] = game, date, date
            if {"hour", "shift"} & set(keys):
                local = pd.to_datetime(t["started_at"].to_numpy(zero_copy_only=False)) + pd.to_timedelta(
                    t["utc_offset"].to_numpy(zero_copy_only=False).astype(np.int64), unit="min")
                f["hour"] = np.asarray(local.hour, dtype=np.int64)
                f["shift"] = shift_of(f["hour"], shifts)
            frames.append(f.groupby(keys, dropna=False).size().rename("rounds").reset_index())
    if not frames:
        return pd.DataFrame(columns=keys + ["rounds"])
    return pd.concat(frames).groupby(keys, dropna=False)["rounds"].sum().reset_index()


def _local_text(utc: pd.Series, offset: pd.Series) -> pd.Series:
    """``2025-06-01 10:05:50 (UTC-05:00)``: the local time the log wrote."""
    off = offset.fillna(0).astype(np.int64)
    local = pd.to_datetime(utc, utc=True).dt.tz_localize(None) + pd.to_timedelta(off, unit="m")
    sign = np.where(off < 0, "-", "+")
    zone = [f"UTC{s}{abs(o) // 60:02d}:{abs(o) % 60:02d}" for s, o in zip(sign, off, strict=True)]
    return local.dt.strftime("%Y-%m-%d %H:%M:%S") + " (" + pd.Series(zone, index=utc.index) + ")"


def logs_folder(store: StoreLike) -> str | None:
    """The folder holding every source the store has read (their longest common folder), or None: the
    folder :func:`rounds_behind` writes source files relative to."""
    import os

    dirs = {os.path.dirname(s.path) for s in open_store(store).manifest()}
    try:
        return os.path.commonpath(sorted(dirs)) if dirs else None
    except ValueError:  # relative and absolute paths mixed
        return None


def rounds_behind(store: StoreLike, findings: pd.DataFrame, columns: Sequence[str] | None = None,
                  limit: int = 1000) -> dict[str, pd.DataFrame]:
    """The stored rounds behind some findings (at most ``limit`` per game), written as a person reads them.

    Returns one frame per game (their columns differ), with the rule ids of the
    findings on each round in ``rules``; cards as ``A♥ 10♦ 4♠``, wagers as
    ``seat 2 banker 25.00 → +23.75``, a hand per line with its cards, stakes and
    payouts and events in words (:mod:`auditkit.tables`), ``started_at`` as local
    time with its offset, source files relative to :func:`logs_folder`.
    """
    st = open_store(store)
    out: dict[str, pd.DataFrame] = {}
    for game, f in findings.groupby("game"):
        ids = list(dict.fromkeys(f["round_id"]))[:limit]
        dates = sorted(f.loc[f["round_id"].isin(ids), "date"].unique())
        frames = []
        for date in dates:
            for _d, t in iter_rounds(st, str(game), date, date, round_ids=ids, columns=columns):
                frames.append(t)
        if not frames:
            continue
        t = pa.concat_tables(frames).sort_by("started_at")
        nested = [c for c in t.column_names if pa.types.is_list(t.schema.field(c).type)]
        frame = t.drop_columns(nested).to_pandas(  # integers stay integers where some are missing
            types_mapper=lambda typ: pd.Int64Dtype() if pa.types.is_integer(typ) else None)
        for c in nested:  # a few drilled rounds: formatted one by one (auditkit.tables)
            typ = t.schema.field(c).type
            if pa.types.is_int8(typ.value_type) and c != "dice":
                frame[c] = [cards_text(v) for v in t[c].to_pylist()]
            elif c == "wagers":
                frame[c] = [wagers_text(w) for w in t[c].to_pylist()]
            elif c == "hands":
                frame[c] = [hand_lines(str(game), hs) for hs in t[c].to_pylist()]
            elif c == "events":
                frame[c] = [events_text(str(game), e) for e in t[c].to_pylist()]
            else:
                frame[c] = [" ".join(str(x) for x in v or []) for v in t[c].to_pylist()]
        if "source_file" in frame:
            frame["source_file"] = relative_to(frame["source_file"], logs_folder(st))
        if "started_at" in frame and "utc_offset" in frame:
            frame["started_at"] = _local_text(frame["started_at"], frame.pop("utc_offset"))
        rules = f.groupby("round_id")["rule_id"].agg(lambda s: ", ".join(sorted(set(s))))
        frame["rules"] = frame["round_id"].map(rules)
        first = ["round_id", "started_at", "table_id", "dealer_id"]
        last = ["wagers", "rules", "status", "events", "shoe_id", "round_seq", "source_file", "source_line"]
        game_cols = sorted((c for c in frame.columns if c not in first + last),  # the cards, then the hands
                           key=lambda c: 0 if c.endswith("_cards") or c == "dice" else 1 if c == "hands" else 2)
        frame = frame.drop(columns=[c for c in ("wagers", "events") if c in frame and not frame[c].astype(bool).any()])
        out[str(game)] = frame[[c for c in first + game_cols + last if c in frame.columns]].reset_index(drop=True)
    return out
