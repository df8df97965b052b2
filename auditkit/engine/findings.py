"""Rules' hits as the findings table (:data:`auditkit.schema.FINDINGS`): one row per round and rule,
with the round's metadata, in report order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..rules.registry import Hits, Rule
from ..schema import FINDINGS

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is made: the workers start without it

__all__ = ["META", "Source", "COLUMNS", "SORT_KEYS", "findings_table", "sorted_findings"]

Source = tuple[pa.Table, np.ndarray]
"""Where the rounds of a table checked without their metadata have it: a table, and each round's row in it."""

META = ["round_id", "table_id", "dealer_id", "started_at", "utc_offset", "shoe_id", "source_file", "source_line"]
"""The columns of a round that its findings repeat."""
COLUMNS = [f.name for f in FINDINGS]
SORT_KEYS = ["started_at", "round_id", "rule_id"]
"""Report order: time, round, then rule id."""


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


def findings_table(table: pa.Table, found: list[tuple[Rule, Hits]], game: str, date: str | None,
                   source: Source | None = None) -> pa.Table:
    """One findings table for all rules' hits on a table: the metadata of the hit rounds only is
    read, so a batch with a few findings costs little; what ``table`` lacks of it, from ``source``."""
    parts = [_hit_columns(h, r) for r, h in found]
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    uniq, inv = np.unique(cols["row"], return_inverse=True)
    names = [c for c in META + ["date"] if c in table.column_names]
    meta = table.select(names).take(pa.array(uniq))
    m = {c: meta[c].to_numpy(zero_copy_only=False) for c in names}
    if source is not None and (more := [c for c in META if c not in m and c in source[0].column_names]):
        meta = source[0].select(more).take(pa.array(source[1][uniq]))
        m.update({c: meta[c].to_numpy(zero_copy_only=False) for c in more})
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



def sorted_findings(tables: Iterable[pa.Table | None]) -> pa.Table | None:
    """Findings tables as one, in report order (:data:`SORT_KEYS`) (Arrow's sort is stable, and orders
    strings by code point, as pandas does); None when there is none."""
    tables = [t for t in tables if t is not None]
    if not tables:
        return None
    found = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    return found.take(pc.sort_indices(found, [(k, "ascending") for k in SORT_KEYS]))
