"""Tables for people: the frames the notebooks and the HTML report show, written as an auditor reads them.

Money to the cent with its sign where it is a net and its currency in the column's title
(``discrepancy (USD)``: ``+2.50``), never ``NaN``, ``<NA>`` or ``-0.00`` (an empty cell
instead); cards as ``A♠ 10♥``; a patron hand per line, in the words of its game
(:attr:`auditkit.games.Game.words`); events in words (``seat 2 doubles 25.00``); source
files relative to the folder of the store's logs; and a caption saying how many rows
are shown of how many (``showing 20 of 1,234``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from .cards import JOKER, NO_CARD, RANKS
from .money import format_money, format_net
from .rules.template import evidence_text

__all__ = ["SIGNED", "UNSIGNED", "PROSE", "money_text", "cards_text", "hand_lines", "events_text", "wagers_text",
           "readable", "relative_to", "show", "ROWS"]

SIGNED = ("discrepancy", "expected_amount", "recorded_amount", "net", "win", "cumulative")
"""Money columns that are nets (written with a sign: ``+23.75``)."""
UNSIGNED = ("overpaid", "underpaid", "amount", "drop", "wager", "table_min", "table_max")
"""Money columns that are amounts (``1,234.50``)."""
PROSE = ("message", "expected", "recorded", "reason", "note")
"""Columns of sentences: wrapped in a wide column (every other cell keeps each of its lines on one line)."""
ROWS = 20
"""The rows :func:`show` shows unless told otherwise."""

_SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}


def money_text(x: Any, sign: bool = False) -> str:
    """``1,234.50`` (``+23.75`` with ``sign``); an empty string for no amount (None, NaN, ``<NA>``)."""
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return ""
    return format_net(float(x)) if sign else format_money(float(x))


def cards_text(codes: Iterable[int] | None) -> str:
    """``A♠ 10♥ JK``: the cards of a stored list of codes (padding skipped)."""
    out = []
    for c in codes if codes is not None else ():
        c = int(c)
        if c == NO_CARD:
            continue
        if c == JOKER:
            out.append("JK")
            continue
        rank = RANKS[c // 4]
        out.append(("10" if rank == "T" else rank) + _SUIT_SYMBOLS["cdhs"[c % 4]])
    return " ".join(out)


def _words(game: str) -> Any | None:
    from . import games

    try:
        return games.get(game).words
    except KeyError:
        return None


def _fields_text(item: dict[str, Any]) -> str:
    """A record a game gives no words for: its fields that are set, ``key value``."""
    parts = []
    for k, v in item.items():
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is False:
            continue
        if isinstance(v, (list, tuple, np.ndarray)):
            v = " ".join(map(str, v))
        parts.append(k.replace("_", " ") if v is True else f"{k.replace('_', ' ')} {v}")
    return " ".join(parts)


def hand_lines(game: str, hands: Sequence[dict[str, Any]] | None) -> str:
    """A round's patron hands, one line each, in the words of its game."""
    words = _words(game)
    say: Callable[[dict[str, Any]], str] = getattr(words, "hand_text", None) or _fields_text
    return "\n".join(say(h) for h in hands or [])


def events_text(game: str, events: Sequence[dict[str, Any]] | None) -> str:
    """A round's events in order, in words (``seat 2 doubles 25.00; first card dealt``), one per line."""
    said: dict[str, Callable[[dict[str, Any]], str]] = getattr(_words(game), "EVENTS", {})
    out = []
    for e in events or []:
        kind = str(e.get("type"))
        say = said.get(kind)
        rest = _fields_text({k: v for k, v in e.items() if k != "type"})
        out.append(say(e) if say else " ".join(x for x in (kind.replace("_", " "), rest) if x))
    return "\n".join(out)


def wagers_text(wagers: Sequence[dict[str, Any]] | None) -> str:
    """``seat 2 banker 25.00 → +23.75``, one wager per line."""
    return "\n".join(f"seat {w['seat']} {str(w['bet']).replace('_', ' ')} {money_text(w['amount'])} → "
                     f"{money_text(w['net'], True)}" for w in wagers or [])


def relative_to(paths: pd.Series, root: str | None) -> pd.Series:
    """Each path relative to ``root`` (the folder of the store's logs); a path outside it keeps its name only."""
    if not root:
        return paths

    def rel(p: Any) -> Any:
        if not isinstance(p, str):
            return p
        path = PurePath(p)
        try:
            return str(path.relative_to(root))
        except ValueError:
            return path.name
    return paths.map(rel)


def readable(frame: pd.DataFrame, currency: str | None = None) -> pd.DataFrame:
    """A copy for people: money to the cent (nets signed, the currency in the column's title), rates and
    p-values rounded, hold as a percent, finding times as local date and time with their offset, lists and
    records written out, and every missing value an empty cell."""
    out = frame.copy()
    names = {}
    for c in out.columns:
        col = out[c]
        if c == "discrepancy" and pd.api.types.is_numeric_dtype(col):  # 0: a finding with no money involved
            out[c] = col.map(lambda x: money_text(x, True) if pd.notna(x) and x != 0 else "")
            if currency:
                names[c] = f"{c} ({currency})"
        elif c in SIGNED + UNSIGNED and pd.api.types.is_numeric_dtype(col):
            out[c] = col.map(lambda x, s=c in SIGNED: money_text(x, s))
            if currency:
                names[c] = f"{c} ({currency})"
        elif c == "hold" and pd.api.types.is_numeric_dtype(col):
            out[c] = col.map(lambda x: f"{x:.2%}" if pd.notna(x) else "")
        elif c in ("p_value", "p_adjusted", "chi2_p") and pd.api.types.is_numeric_dtype(col):
            out[c] = col.map(lambda x: f"{x:.2g}" if pd.notna(x) else "")
        elif c in ("rate", "expected_rate") and pd.api.types.is_numeric_dtype(col):
            out[c] = col.map(lambda x: f"{x:.4f}" if pd.notna(x) else "")
        elif c in ("expected", "z", "per_1000") and pd.api.types.is_float_dtype(col):
            out[c] = col.map(lambda x: f"{x:,.2f}" if pd.notna(x) else "")
        elif c == "started_at" and pd.api.types.is_string_dtype(col) and col.astype(str).str.match(
                r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$").all():
            text = col.astype(str)
            out[c] = text.str.slice(0, 10) + " " + text.str.slice(11, 19) + " (UTC" + text.str.slice(19) + ")"
        elif c == "evidence" and col.dtype == object:
            out[c] = col.map(evidence_text)
        elif col.dtype == object and col.map(lambda v: isinstance(v, (list, dict, np.ndarray))).any():
            out[c] = col.map(lambda v: ", ".join(map(str, v)) if isinstance(v, (list, np.ndarray))
                             else "; ".join(f"{k} {x}" for k, x in v.items()) if isinstance(v, dict) else v)
        if out[c].isna().any():  # <NA>, NaN, None: an empty cell
            out[c] = out[c].astype(object).where(out[c].notna(), "")
    return out.rename(columns=names)


def show(frame: pd.DataFrame, rows: int | None = ROWS, *, empty: str = "Nothing to show in this period.",
         currency: str | None = None) -> Any:
    """A table for a notebook or a report: :func:`readable`, its first ``rows`` (None: all) with a caption
    saying how many of how many, each line of a multi-line cell (hands, wagers, events) on its own line,
    nothing from the data read as HTML. An empty frame is ``empty`` in words."""
    from IPython.display import Markdown

    if frame.empty:
        return Markdown(f"*{empty}*")
    shown = frame if rows is None else frame.head(rows)
    styler = readable(shown.reset_index(drop=True), currency).style.format(precision=2, thousands=",", escape="html")
    styler = styler.hide(axis="index").format_index(escape="html", axis=1)  # a title may hold a config's currency
    # a line of a cell (a hand, a wager, an event) never wraps; prose (messages) wraps in a column wide enough
    styler = styler.set_properties(**{"white-space": "pre", "text-align": "left", "vertical-align": "top"})
    # sentences only: a numeric column named like one (expected versus observed's ``expected``) stays narrow
    prose = [c for c in styler.data.columns if c in PROSE and c in shown and not pd.api.types.is_numeric_dtype(shown[c])]
    if prose:
        styler = styler.set_properties(subset=prose, **{"white-space": "pre-line", "min-width": "28em"})
    if len(shown) < len(frame):
        styler = styler.set_caption(f"showing {len(shown):,} of {len(frame):,} (rows=... for more)")
    return styler
