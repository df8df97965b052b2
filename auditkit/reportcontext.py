"""What a filed report says besides its findings: the filters that selected them, the rounds behind
them (by game, table, dealer, gaming day and shift), the improbable outcome frequencies among those
rounds, and where the report came from (provenance: auditkit's version, the configuration's hash,
every input's SHA-256 or the store's manifest, the command).

:func:`gather` reads it from the store while the store is there (a one-shot ``validate`` removes its
temporary store before the reports are written); the page (:mod:`auditkit.runreport`) and the
workbook (:mod:`auditkit.workbook`) show it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ReportContext", "gather", "provenance", "describe_filters", "currency_of", "ROUND_KEYS", "INPUTS_LISTED"]

ROUND_KEYS = ["game", "table_id", "dealer_id", "date", "shift"]
"""The groups the rounds behind a report are counted by (``rounds`` per group)."""
INPUTS_LISTED = 50  # inputs named one by one; past that, their count and the manifest's digest


@dataclass
class ReportContext:
    """The scope and provenance of a report. ``filters``: each option as given (``--dealer``: ``D705``);
    ``rounds``: rounds per :data:`ROUND_KEYS`; ``flagged``: :func:`auditkit.analysis.flagged_groups` of
    those rounds (None: not computed); ``provenance``: label -> text, ``inputs``: (path, SHA-256)."""

    filters: dict[str, str] = field(default_factory=dict)
    rounds: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=[*ROUND_KEYS, "rounds"]))
    flagged: pd.DataFrame | None = None
    provenance: dict[str, str] = field(default_factory=dict)
    inputs: list[tuple[str, str]] = field(default_factory=list)
    currency: str = "USD"

    @property
    def period(self) -> tuple[str, str] | None:
        """(first, last) gaming day of the rounds behind the report, or None when there is none."""
        if not len(self.rounds):
            return None
        days = self.rounds["date"].astype(str)
        return str(days.min()), str(days.max())

    @property
    def rounds_checked(self) -> int:
        return int(self.rounds["rounds"].sum()) if len(self.rounds) else 0


def describe_filters(filters: Mapping[str, Any]) -> dict[str, str]:
    """The filters given (option -> value, values joined by ``, ``), those not given left out."""
    out = {}
    for option, value in filters.items():
        if value is None or value == [] or value == ():
            continue
        out[option] = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return out


def provenance(store: Any, *, config: Any = None, command: Sequence[str] | None = None,
               sources: Sequence[Any] | None = None, configuration: str | None = None) -> tuple[dict[str, str],
                                                                                            list[tuple[str, str]]]:
    """(label -> text, inputs as (path, SHA-256)) of a report: auditkit's version, the configuration
    (its source and SHA-256, or ``configuration`` saying why there is none), the inputs (``sources``:
    manifest records; default the store's whole manifest) with the manifest's digest, and the command."""
    from . import __version__

    records = list(store.manifest() if sources is None else sources)
    inputs = sorted((str(r.path), str(r.sha256)) for r in records)
    digest = hashlib.sha256("".join(f"{sha}  {path}\n" for path, sha in inputs).encode()).hexdigest()
    out = {"auditkit": __version__,
           "configuration": configuration or (f"{config.source}, SHA-256 {config.digest()}" if config is not None
                                              else "the catalog's defaults")}
    out["inputs"] = (f"{len(inputs):,} source file(s); SHA-256 of their list (sha256  path, one a line, sorted by "
                     f"path) {digest}")
    from .ingest.profiles.source import redact  # a page is filed: no password of a URL on it

    if getattr(store, "uri", None) and sources is None:
        out["store"] = redact(str(store.uri))
    if command:
        out["command"] = redact(shlex.join(["auditkit", *command]))
    return out, inputs


def gather(store: Any, *, games: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
           tables: Sequence[str] | None = None, dealers: Sequence[str] | None = None,
           parts: set[tuple[str, str]] | None = None, filters: Mapping[str, Any] | None = None, config: Any = None,
           outcomes: bool = True, **prov: Any) -> ReportContext:
    """The context of a report on ``store``'s rounds of some games, days, tables (ids or globs), dealers
    (and, ``parts``, only these (game, day) partitions). ``outcomes``: test the outcome frequencies
    (seconds on a large store; the page shows them). ``prov``: :func:`provenance`'s keywords."""
    from . import analysis

    text, inputs = provenance(store, config=config, **prov)
    if parts is not None and not parts:  # nothing was checked
        return ReportContext(describe_filters(filters or {}), provenance=text, inputs=inputs,
                             currency=currency_of(config))
    rounds = analysis.round_counts(store, start, end, games=games, dealers=dealers, by=ROUND_KEYS)
    rounds = _select(rounds, tables, parts)
    flagged = None
    if outcomes:
        counts = _select(analysis.outcome_counts(store, start, end, games=games, dealers=dealers, config=config),
                         tables, parts)
        flagged = analysis.flagged_groups(counts) if len(counts) else None
    return ReportContext(describe_filters(filters or {}), rounds.reset_index(drop=True), flagged, text, inputs,
                         currency_of(config))


def currency_of(config: Any = None) -> str:
    """The currency amounts are in: the configuration's ``[money] currency`` (the defaults' USD)."""
    from .paytables import Config

    return str((config or Config()).money.get("currency", "USD"))


def _select(frame: pd.DataFrame, tables: Sequence[str] | None, parts: set[tuple[str, str]] | None) -> pd.DataFrame:
    """Rows of the tables (ids or globs) and partitions asked for."""
    keep = np.ones(len(frame), dtype=bool)
    if tables and len(frame):
        ids = frame["table_id"].fillna("").astype(str)
        ok = {t for t in ids.unique() if any(fnmatch.fnmatchcase(t, p) for p in tables)}
        keep &= ids.isin(ok).to_numpy()
    if parts is not None and len(frame):
        keep &= pd.Series(list(zip(frame["game"], frame["date"], strict=True))).isin(parts).to_numpy()
    return frame[keep]
