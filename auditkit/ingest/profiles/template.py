"""A profile's template field (``"{Table}-{Shoe:02d}-{Hand:03d}"``): each row's cells put into the
template, a cell of digits as a number (so ``:02d`` pads it), the other cells as their trimmed text.

:func:`format_row` is the reading, one row at a time. :func:`format_column` is what the mapping
runs: every replacement field formatted once per distinct cell of its column and the pieces joined
by Arrow; it is property-tested equal to :func:`format_row` (tests/test_profile_template.py).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .distinct import code_reasons, encode

__all__ = ["format_row", "format_column", "names"]


def names(template: str) -> list[str]:
    """The columns a template names, each once, in order."""
    return list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(template) if f))


def cell(text: str) -> Any:
    """A cell as a template sees it: an integer when it is digits (with a sign), else trimmed text."""
    t = text.strip()
    digits = t[1:] if t.startswith("-") else t
    return int(t) if digits.isdecimal() else t  # isdecimal: what int() reads ("²" is a digit it refuses)


def format_row(template: str, cells: dict[str, str | None]) -> str | None:
    """The template filled from one row's cells; None when a cell it names is empty (null).
    ValueError or TypeError when a cell does not fit its format spec."""
    if any(v is None for v in cells.values()):
        return None
    return template.format(**{c: cell(v) for c, v in cells.items()})  # type: ignore[arg-type]


def format_column(table: pa.Table, template: str) -> tuple[pa.Array, dict[int, str]]:
    """Every row of ``table`` put into the template (null where a cell it names is null or does not
    fit), and the message of each row that did not fit, by row index."""
    n = table.num_rows
    pieces: list[pa.Array | str] = []
    absent = np.zeros(n, bool)  # a named cell is null: no value, no reason
    failed: dict[int, str] = {}
    for literal, name, spec, _ in string.Formatter().parse(template):
        if literal:
            pieces.append(literal)
        if not name:
            continue
        dictionary, indices = encode(table[name])
        one = "{0:" + spec + "}" if spec else "{0}"
        texts: list[str | None] = []
        errors: dict[int, str] = {}
        for k, v in enumerate(dictionary.to_pylist()):
            try:
                texts.append(one.format(cell(v)))
            except (ValueError, TypeError) as exc:
                texts.append(None)
                errors[k] = str(exc)
        absent |= indices == len(dictionary)
        for i, why in code_reasons(indices, errors).items():
            failed.setdefault(i, why)  # the first field that fails, as str.format
        pieces.append(pa.array(texts + [None], pa.string()).take(pa.array(indices)))
    if not any(isinstance(p, pa.Array) for p in pieces):
        return pa.array(["".join(pieces)] * n, pa.string()), {}  # type: ignore[arg-type]
    args = [p if isinstance(p, pa.Array) else pa.scalar(p, pa.string()) for p in pieces]
    out = args[0] if len(args) == 1 else pc.binary_join_element_wise(*args, "")
    if absent.any():
        out = pc.if_else(pa.array(absent), pa.scalar(None, pa.string()), out)
    return out, {i: why for i, why in failed.items() if not absent[i]}
