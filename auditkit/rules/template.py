"""Finding words from evidence: a rule declares its message as a template, the engine fills it.

A rule returns the rows it flags and named **evidence** (numbers, codes, cards), each an
array aligned with the flagged rows or one value for all of them. Its ``message``,
``expected`` and ``recorded`` are templates declared with the rule, in Python's format
syntax, whose format spec names the **kind** of a value (``{wager:money}``); one
formatter per kind serves every game, so an amount, a net or a hand of cards reads the
same in every report (docs/report.md, "How values are written"). A template may have
cases: a mapping from a code to a text, picked per row by the hit's ``case``.

Evidence that is a number is also kept as a number: :func:`numeric_evidence` gives the
pairs the findings' ``evidence`` column stores.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..cards import cards_str
from ..money import format_money, format_net

__all__ = ["KINDS", "Template", "by_case", "numeric_evidence", "evidence_text"]


def _cards(value: Any) -> str:
    """Card codes (a row of padded codes, :func:`auditkit.cards.cards_str`) or card names as ``As Kd``;
    ``no card`` for none."""
    if value is None:
        return "no card"
    names = " ".join(value) if len(value) and isinstance(value[0], str) else cards_str(value)
    return names or "no card"


def _odds(rate: Any) -> str:
    """A payout multiple as odds: 1.5 -> ``3:2``, 1.2 -> ``6:5``, 2 -> ``2:1``."""
    f = Fraction(float(rate)).limit_denominator(100)
    return f"{f.numerator}:{f.denominator}"


def _bets(pairs: Any) -> str:
    """Some wagers' nets, each named by its bet: ``ante +10.00, play -10.00``."""
    return ", ".join(f"{bet} {format_net(net)}" for bet, net in pairs)


def _int(value: Any) -> str:
    return "-" if value is None or value != value else str(int(value))


def _percent(rate: Any) -> str:
    """A rate as a percent: 0.5 -> ``50%``."""
    return f"{float(rate) * 100:g}%"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


KINDS: dict[str, Callable[[Any], str]] = {
    "money": format_money,   # an amount: 1,234.50
    "net": format_net,       # a net won (+) or lost (-): +23.75, -150.00
    "cards": _cards,         # a hand as dealt: As Kd 10h
    "int": _int,             # a count, a total, a seat, a round_seq: 17 (- when missing)
    "odds": _odds,           # a payout multiple: 3:2
    "percent": _percent,     # a rate: 50%
    "bets": _bets,           # nets named by their bets: ante +10.00, play -10.00
    "": _text,               # a code or a word as it is: banker stands
}
"""The formatter of each kind of value, shared by every game."""

_NUMERIC = ("money", "net", "int", "odds", "percent")


@dataclass(frozen=True)
class _Text:
    parts: tuple[tuple[str, str | None, str], ...]  # (literal, field or None, kind)

    @classmethod
    def parse(cls, text: str) -> _Text:
        parts = []
        for literal, name, spec, conversion in string.Formatter().parse(text):
            if conversion:
                raise ValueError(f"template {text!r}: conversions (!{conversion}) are not used; name a kind")
            if name is not None and (not name.isidentifier() or (spec or "") not in KINDS):
                raise ValueError(f"template {text!r}: field {{{name}:{spec}}}: the kind must be one of {list(KINDS)}")
            parts.append((literal, name, spec or ""))
        return cls(tuple(parts))


@dataclass(frozen=True)
class Template:
    """A message, expected or recorded text of a rule: one text, or one per case."""

    cases: Mapping[str, _Text]
    single: bool

    @classmethod
    def of(cls, spec: str | Mapping[str, str] | None) -> Template | None:
        """A template from a rule's declaration (None: none declared, the text is empty)."""
        if spec is None:
            return None
        if isinstance(spec, str):
            return cls({"": _Text.parse(spec)}, True)
        return cls({case: _Text.parse(text) for case, text in spec.items()}, False)

    def fields(self) -> dict[str, str]:
        """Each field the template reads, with its kind."""
        return {name: kind for text in self.cases.values() for _, name, kind in text.parts if name is not None}

    def render(self, n: int, evidence: Mapping[str, Any], case: Any = None) -> np.ndarray:
        """The text of each of ``n`` hits, from their evidence (and case, for a template with cases)."""
        used = [self.cases[""]] if self.single else [self.cases[c] for c in _distinct(case, n)]
        missing = {name for text in used for _, name, _ in text.parts if name is not None} - set(evidence)
        if missing:
            raise KeyError(f"evidence {sorted(missing)} not given")
        out = np.empty(n, dtype=object)
        if not n:
            return out
        if self.single or not _aligned(case, n):  # one text for every hit
            texts = [(self.cases[""] if self.single else self.cases[case], None)]
        else:
            picked: dict[Any, list[int]] = {}
            for k, c in enumerate(case):
                picked.setdefault(c, []).append(k)
            texts = [(self.cases[c], np.array(rows)) for c, rows in picked.items()]
        for text, rows in texts:  # a column of strings per part, formatted a value at a time, joined per hit
            m = n if rows is None else len(rows)
            columns: list[list[str]] = []
            for literal, name, kind in text.parts:
                if literal:
                    columns.append([literal] * m)
                if name is not None:
                    value, write = evidence[name], KINDS[kind]
                    if _aligned(value, n):
                        picked_values = value if rows is None else (
                            value[rows] if isinstance(value, np.ndarray) else [value[k] for k in rows])
                        columns.append([write(v) for v in picked_values])
                    else:
                        columns.append([write(value)] * m)
            joined = ["".join(parts) for parts in zip(*columns, strict=True)] if columns else [""] * m
            if rows is None:
                out[:] = joined
            else:
                out[rows] = joined
        return out


def _distinct(case: Any, n: int) -> list[Any]:
    """The cases among ``n`` hits (one for all, or one per hit)."""
    if isinstance(case, (np.ndarray, list)) and len(case) == n:
        return list(dict.fromkeys(case))
    return [case] if n else []


def _aligned(value: Any, n: int) -> bool:
    """Whether ``value`` is one per hit (an array or list aligned with the ``n`` hits); anything else is one
    value for all."""
    return isinstance(value, (np.ndarray, list)) and len(value) == n


def by_case(**words: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """The templates of a rule whose hits come from several checks, each with its own words: ``message``,
    ``expected`` and ``recorded`` each a text per case (``by_case(pair_plus={"message": ...}, ...)``)."""
    return {part: {case: w[part] for case, w in words.items()} for part in ("message", "expected", "recorded")}


def numeric_evidence(n: int, evidence: Mapping[str, Any], templates: Iterable[Template | None] = ()
                     ) -> list[list[tuple[str, float]]]:
    """Each hit's evidence that is a number, as ``(name, value)`` pairs in the order given.

    A name a template shows as cards (or a card matrix) is not a number; a missing value (NaN) is left
    out, a boolean is not evidence of a quantity and is left out too.
    """
    shown_as = {}
    for t in templates:
        if t is not None:
            shown_as.update(t.fields())
    numeric = []
    for name, value in evidence.items():
        if shown_as.get(name, "int") not in _NUMERIC:
            continue
        arr = np.asarray(value) if not isinstance(value, list) else None
        if arr is None or arr.dtype.kind not in "iuf" or arr.ndim > 1 or (arr.ndim == 1 and len(arr) != n):
            continue
        numeric.append((name, np.broadcast_to(arr.astype(np.float64), (n,)).tolist()))
    return [[(name, v[k]) for name, v in numeric if v[k] == v[k]] for k in range(n)]  # NaN: left out


def evidence_text(pairs: Any) -> str:
    """A finding's evidence as a spreadsheet reads it: ``initial_wager=5; table_min=10`` (empty for none)."""
    if pairs is None or (isinstance(pairs, float) and math.isnan(pairs)):
        return ""
    return "; ".join(f"{name}={_number(value)}" for name, value in pairs)


def _number(value: float) -> str:
    """A number as short as it is exact to the cent: ``10``, ``37.5``, ``1.875``."""
    if not math.isfinite(value):
        return str(value)
    if value == int(value):
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")
