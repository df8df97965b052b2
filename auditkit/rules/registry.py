"""The one registry of checks: each rule knows its citation, severity and summary.

A game module registers a *preparer* (a batch of rounds and the configuration
to a context of derived numpy arrays, computed once per batch) and its rules
(context to :class:`Hits`). The catalog in the docs, the reports and the CLI
all read this registry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..status import SEVERITIES, SEVERITY_RANK

__all__ = ["Hits", "Rule", "RULES", "PREPARERS", "rule", "preparer", "rules_for", "catalog", "SEVERITIES",
           "SEVERITY_RANK"]



@dataclass
class Hits:
    """What one rule found in one batch: row positions plus per-hit details.

    ``rows`` index the rounds of the batch given to the preparer (or, for shoe
    rules, of the shoe table). Each other field is one value for every hit or an
    array aligned with ``rows``. ``expected`` and ``recorded`` are short text;
    ``expected_amount`` and ``recorded_amount`` are the expected and recorded
    nets of the wagers a money finding covers (NaN when no money is involved),
    and ``discrepancy`` is recorded minus expected (0 when no money is involved).
    Several hits on one round (one per seat, say) are merged by the engine into
    one finding per round and rule, messages joined and amounts summed.
    """

    rows: np.ndarray
    message: np.ndarray | str
    expected: np.ndarray | str = ""
    recorded: np.ndarray | str = ""
    discrepancy: np.ndarray | float = 0.0
    seat: np.ndarray | None = None
    expected_amount: np.ndarray | float = np.nan
    recorded_amount: np.ndarray | float = np.nan

    @classmethod
    def where(cls, mask: np.ndarray, message: np.ndarray | str, **fields: Any) -> Hits:
        """Hits at the True rows of ``mask``; array fields aligned with the mask are cut to them."""
        rows = np.flatnonzero(mask)
        cut = {k: (v[mask] if isinstance(v, np.ndarray) and v.shape[:1] == mask.shape else v)
               for k, v in fields.items()}
        if isinstance(message, np.ndarray) and message.shape[:1] == mask.shape:
            message = message[mask]
        return cls(rows=rows, message=message, **cut)

    @classmethod
    def none(cls) -> Hits:
        """No hit."""
        return cls(rows=np.empty(0, np.int64), message="")

    @classmethod
    def concat(cls, parts: Sequence[Hits]) -> Hits:
        """The hits of several parts as one (a field given once for a part's every hit spread over them)."""
        parts = [p for p in parts if len(p)]
        if len(parts) < 2:
            return parts[0] if parts else cls.none()
        out: dict[str, Any] = {"rows": np.concatenate([p.rows for p in parts])}
        for k in ("message", "expected", "recorded", "discrepancy", "seat", "expected_amount", "recorded_amount"):
            values = [getattr(p, k) for p in parts]
            if all(v is None for v in values):
                out[k] = None
                continue
            if any(v is None for v in values):
                raise ValueError(f"Hits.concat: {k} given for some parts only")
            out[k] = np.concatenate([v if isinstance(v, np.ndarray) else
                                     np.full(len(p), v, dtype=object if isinstance(v, str) else None)
                                     for p, v in zip(parts, values, strict=True)])
        return cls(**out)

    def subset(self, keep: np.ndarray) -> Hits:
        """The hits where the boolean array ``keep`` (aligned with ``rows``) is True."""
        return Hits(rows=self.rows[keep], **{k: (v[keep] if isinstance(v, np.ndarray) else v)
                                             for k, v in vars(self).items() if k != "rows"})

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class Rule:
    """A registered check.

    ``columns`` are the stored columns it reads (through the game's context for a
    round rule), so the engine can read only those; ``params`` the configuration
    keys of the game's section it reads (paytable entries, minimums, limits);
    ``needs`` the kinds of evidence (:data:`auditkit.rules.coverage.EVIDENCE`) a
    round must hold for the rule to check it: the engine neither flags nor passes
    a round that lacks one, and counts it as not checkable.
    """

    rule_id: str
    games: tuple[str, ...]
    citation: str
    severity: str
    summary: str
    func: Callable[[Any], Hits] = field(repr=False)
    scope: str = "round"          # "round": per batch of rounds; "shoe": over a shoe's rounds in order
    columns: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()


RULES: dict[str, Rule] = {}
PREPARERS: dict[str, Callable[[pa.Table, Any], Any]] = {}


def rule(rule_id: str, *, games: Sequence[str], citation: str, severity: str, summary: str,
         scope: str = "round", columns: Sequence[str] = (), params: Sequence[str] = (),
         needs: Sequence[str] = ()) -> Callable:
    """Register a check. Round rules take the game's context; shoe rules take
    ``(table, config)`` where ``table`` holds ``columns`` grouped by table and shoe, in round_seq order.
    ``columns``: the stored columns the check reads; ``params``: the configuration keys it reads;
    ``needs``: the kinds of evidence it needs (see :class:`Rule`)."""
    from .coverage import EVIDENCE

    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r} not in {SEVERITIES}")
    if scope not in ("round", "shoe"):
        raise ValueError(f"scope {scope!r}")
    unknown = [k for k in needs if k not in EVIDENCE]
    if unknown:
        raise ValueError(f"rule {rule_id}: needs {unknown} not in {list(EVIDENCE)}")

    def register(func: Callable) -> Callable:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, tuple(games), citation, severity, summary, func, scope, tuple(columns),
                              tuple(params), tuple(needs))
        return func

    return register


def preparer(*games: str) -> Callable:
    """Register the function that turns a batch of a game's rounds into its rules' context."""

    def register(func: Callable) -> Callable:
        for g in games:
            PREPARERS[g] = func
        return func

    return register


def rules_for(game: str, scope: str | None = None) -> list[Rule]:
    """The rules that apply to a game, in catalog order."""
    return [r for r in _ordered() if game in r.games and (scope is None or r.scope == scope)]


def _ordered() -> list[Rule]:
    """Every rule in a fixed order, whatever order the rule modules were imported in:
    by game (as :func:`auditkit.games.games` lists them), then as registered."""
    from .. import games

    found = games.games()
    for g in found:
        g.load_rules()
    return _sorted_rules(tuple(tuple(g.names) for g in found), tuple(RULES))


@functools.lru_cache(maxsize=8)
def _sorted_rules(names: tuple[tuple[str, ...], ...], rule_ids: tuple[str, ...]) -> list[Rule]:
    """:func:`_ordered` for these games and registered rules (each partition of a run asks again)."""
    rank = {}
    for i, game_names in enumerate(names):
        rank.update(dict.fromkeys(game_names, i))
    position = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    return sorted((RULES[r] for r in rule_ids),
                  key=lambda r: (min(rank.get(g, len(rank)) for g in r.games), position[r.rule_id]))


def catalog(game: str | None = None, config: Any = None):
    """The registered rules as a table (games, rule_id, citation, severity, summary, scope, params, needs).

    ``params`` lists the configuration keys each rule reads with the values in
    force (``tie = 8.0``): the defaults, or those of ``config`` when given; ``needs`` the kinds of
    evidence it needs, comma separated.
    """
    import pandas as pd

    from ..paytables import Config, section_of

    config = config or Config()

    def shown(r: Rule) -> str:
        section = config.section(r.games[0])
        return "; ".join(f"{section_of(r.games[0])}.{k} = {_value(section.get(k))}" for k in r.params)

    rows = [{"games": ", ".join(r.games), "rule_id": r.rule_id, "citation": r.citation, "severity": r.severity,
             "summary": r.summary, "scope": r.scope, "params": shown(r), "needs": ", ".join(r.needs)}
            for r in _ordered() if game is None or game in r.games]
    return pd.DataFrame(rows, columns=["games", "rule_id", "citation", "severity", "summary", "scope", "params",
                                       "needs"])


def _value(v: Any) -> str:
    """A configuration value as TOML writes it (tables inline)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    return str(v).lower() if isinstance(v, bool) else str(v)
