"""The one registry of checks: each rule knows its citation, severity and summary.

A game module registers a *preparer* (a batch of rounds and the configuration
to a context of derived numpy arrays, computed once per batch) and its rules
(context to :class:`Hits`). The catalog in the docs, the reports and the CLI
all read this registry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..status import SEVERITIES, SEVERITY_RANK
from .template import Template, numeric_evidence

__all__ = ["Hits", "Rule", "RULES", "PREPARERS", "rule", "preparer", "rules_for", "catalog", "catalog_rows", "CATALOG_COLUMNS", "SEVERITIES",
           "SEVERITY_RANK"]



@dataclass
class Hits:
    """What one rule found in one batch: row positions plus per-hit details.

    ``rows`` index the rounds of the batch given to the preparer (or, for shoe
    rules, of the shoe table). Each other field is one value for every hit or an
    array aligned with ``rows``. ``evidence`` names the values the finding rests on
    (numbers, codes, cards), from which the engine writes the words the rule declares
    as templates (:mod:`auditkit.rules.template`); ``case`` picks the text of a
    template with cases. ``expected_amount`` and ``recorded_amount`` are the expected and recorded
    nets of the wagers a money finding covers, one per hit (NaN when no money is involved): the one
    way a rule gives money, when it makes its hits (:meth:`discrepancy` follows from them).
    Several hits on one round (one per seat, say) are merged by the engine into
    one finding per round and rule, messages joined and amounts summed.
    """

    rows: np.ndarray
    seat: np.ndarray | None = None
    expected_amount: np.ndarray | float = np.nan
    recorded_amount: np.ndarray | float = np.nan
    evidence: dict[str, Any] = field(default_factory=dict)
    case: np.ndarray | str | None = None

    @classmethod
    def where(cls, mask: np.ndarray, **fields: Any) -> Hits:
        """Hits at the True rows of ``mask``, as :meth:`at` takes them."""
        return cls.at(np.flatnonzero(mask), **fields)

    @classmethod
    def at(cls, rows: np.ndarray, *, items: np.ndarray | None = None, **fields: Any) -> Hits:
        """Hits at ``rows`` of the batch. An array field or evidence is one value per round of the batch
        and is taken at those rows; evidence given as a function is asked for those rows only (cards,
        say), as may a field; any other value is one for every hit. When the hits are on ``items`` of
        the rounds (hands, wagers, events; ``rows`` their rounds), arrays are per item and taken at them.
        The amounts (``expected_amount``, ``recorded_amount``) are one per hit, as the constructor takes them."""
        at = rows if items is None else items

        def take(v: Any) -> Any:
            return v(at) if callable(v) else v[at] if isinstance(v, np.ndarray) else v

        evidence = {k: take(v) for k, v in fields.pop("evidence", {}).items()}
        amounts = {k: fields.pop(k) for k in ("expected_amount", "recorded_amount") if k in fields}
        return cls(rows=rows, evidence=evidence, **amounts, **{k: take(v) for k, v in fields.items()})

    @classmethod
    def none(cls) -> Hits:
        """No hit."""
        return cls(rows=np.empty(0, np.int64))

    @classmethod
    def concat(cls, parts: Sequence[Hits]) -> Hits:
        """The hits of several parts as one (a field given once for a part's every hit spread over them)."""
        parts = [p for p in parts if len(p)]
        if len(parts) < 2:
            return parts[0] if parts else cls.none()
        out: dict[str, Any] = {"rows": np.concatenate([p.rows for p in parts])}
        for k in ("seat", "expected_amount", "recorded_amount", "case"):
            out[k] = _spread(k, [(len(p), getattr(p, k)) for p in parts])
        names = dict.fromkeys(k for p in parts for k in p.evidence)  # a part without one: NaN (not shown)
        out["evidence"] = {k: _spread(k, [(len(p), p.evidence.get(k, np.nan)) for p in parts]) for k in names}
        return cls(**out)

    def subset(self, keep: np.ndarray) -> Hits:
        """The hits where the boolean array ``keep`` (aligned with ``rows``) is True."""
        def cut(v: Any) -> Any:
            return v[keep] if isinstance(v, np.ndarray) else v

        return Hits(rows=self.rows[keep], evidence={k: cut(v) for k, v in self.evidence.items()},
                    **{k: cut(v) for k, v in vars(self).items() if k not in ("rows", "evidence")})

    @property
    def discrepancy(self) -> np.ndarray | float:
        """Recorded minus expected, per hit; 0 where no money is involved (neither amount known)."""
        expected, recorded = self.expected_amount, self.recorded_amount
        none = np.isnan(expected) & np.isnan(recorded)
        if np.ndim(none) == 0:
            return 0.0 if none else float(np.subtract(recorded, expected))
        return np.where(none, 0.0, np.subtract(recorded, expected))

    def __len__(self) -> int:
        return len(self.rows)


def _spread(name: str, values: list[tuple[int, Any]]) -> Any:
    """One field of several parts' hits as one array (a value given once for a part's hits repeated)."""
    if all(v is None for _, v in values):
        return None
    if any(v is None for _, v in values):
        raise ValueError(f"Hits.concat: {name} given for some parts only")
    return np.concatenate([v if isinstance(v, np.ndarray) else
                           np.full(n, v, dtype=object if isinstance(v, str) else None) for n, v in values])


@dataclass(frozen=True)
class Rule:
    """A registered check.

    ``columns`` are the stored columns it reads (through the game's context for a
    round rule), so the engine can read only those; ``params`` the configuration
    keys of the game's section it reads (paytable entries, minimums, limits);
    ``needs`` the kinds of evidence (:data:`auditkit.rules.coverage.EVIDENCE`) a
    round must hold for the rule to check it: the engine neither flags nor passes
    a round that lacks one, and counts it as not checkable. ``message``, ``expected``
    and ``recorded`` are the templates the engine fills from the hits' evidence
    (:class:`auditkit.rules.template.Template`; an expected or recorded not declared is empty).
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
    message: Template | None = None
    expected: Template | None = None
    recorded: Template | None = None

    def words(self, hits: Hits) -> tuple[np.ndarray | str, np.ndarray | str, np.ndarray | str]:
        """The message, expected and recorded text of the hits: the rule's templates filled from their evidence."""
        return tuple("" if t is None else t.render(len(hits), hits.evidence, hits.case)
                     for t in (self.message, self.expected, self.recorded))

    def numbers(self, hits: Hits) -> list[list[tuple[str, float]]]:
        """Each hit's evidence that is a number, as ``(name, value)`` pairs (the findings' ``evidence``)."""
        return numeric_evidence(len(hits), hits.evidence, (self.message, self.expected, self.recorded))


RULES: dict[str, Rule] = {}
PREPARERS: dict[str, Callable[[pa.Table, Any], Any]] = {}


def rule(rule_id: str, *, games: Sequence[str], citation: str, severity: str, summary: str,
         scope: str = "round", columns: Sequence[str] = (), params: Sequence[str] = (),
         needs: Sequence[str] = (), message: str | Mapping[str, str] = "",
         expected: str | Mapping[str, str] | None = None, recorded: str | Mapping[str, str] | None = None
         ) -> Callable:
    """Register a check. Round rules take the game's context; shoe rules take
    ``(table, config)`` where ``table`` holds ``columns`` grouped by table and shoe, in round_seq order.
    ``columns``: the stored columns the check reads; ``params``: the configuration keys it reads;
    ``needs``: the kinds of evidence it needs (see :class:`Rule`); ``message`` (required), ``expected``,
    ``recorded``: templates of its words, filled from the hits' evidence."""
    from .coverage import EVIDENCE

    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r} not in {SEVERITIES}")
    if not message:
        raise ValueError(f"rule {rule_id}: a message template is required")
    if scope not in ("round", "shoe"):
        raise ValueError(f"scope {scope!r}")
    unknown = [k for k in needs if k not in EVIDENCE]
    if unknown:
        raise ValueError(f"rule {rule_id}: needs {unknown} not in {list(EVIDENCE)}")

    def register(func: Callable) -> Callable:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, tuple(games), citation, severity, summary, func, scope, tuple(columns),
                              tuple(params), tuple(needs), *(Template.of(t) for t in (message, expected, recorded)))
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
    """The rules that apply to a game, in catalog order. Only that game's rules module is imported (a
    game's rules are registered by its own module), so a run over one game's rounds loads no other's."""
    return [r for r in _ordered(game) if game in r.games and (scope is None or r.scope == scope)]


def _ordered(game: str | None = None) -> list[Rule]:
    """Every rule in a fixed order, whatever order the rule modules were imported in: by game (as
    :func:`auditkit.games.games` lists them), then as registered. Given a game, only its rules module
    is imported first (an unknown name: every one); the order of the rules registered is the same."""
    from .. import games

    found = games.games()
    try:
        wanted = (games.get(game),) if game is not None else found
    except KeyError:
        wanted = found
    for g in wanted:
        _ = g.rules  # importing it registers them
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


CATALOG_COLUMNS = ["games", "rule_id", "citation", "severity", "summary", "scope", "params", "needs"]


def catalog(game: str | None = None, config: Any = None):
    """The registered rules as a table (games, rule_id, citation, severity, summary, scope, params, needs).

    ``params`` lists the configuration keys each rule reads with the values in
    force (``tie = 8.0``): the defaults, or those of ``config`` when given; ``needs`` the kinds of
    evidence it needs, comma separated.
    """
    import pandas as pd

    return pd.DataFrame(catalog_rows(game, config), columns=CATALOG_COLUMNS)


def catalog_rows(game: str | None = None, config: Any = None) -> list[dict[str, str]]:
    """:func:`catalog` as one dict a rule, without pandas (``auditkit rules``, the checks of ``--citation``)."""
    from ..paytables import Config, section_of

    config = config or Config()

    def shown(r: Rule) -> str:
        section = config.section(r.games[0])
        return "; ".join(f"{section_of(r.games[0])}.{k} = {_value(section.get(k))}" for k in r.params)

    return [{"games": ", ".join(r.games), "rule_id": r.rule_id, "citation": r.citation, "severity": r.severity,
             "summary": r.summary, "scope": r.scope, "params": shown(r), "needs": ", ".join(r.needs)}
            for r in _ordered() if game is None or game in r.games]


def _value(v: Any) -> str:
    """A configuration value as TOML writes it (tables inline)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    return str(v).lower() if isinstance(v, bool) else str(v)
