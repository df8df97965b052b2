"""A profile's ``compute`` field (``"({Game} - 1) * 100 + {Round}"``): integer arithmetic on columns,
a column at a time. Only ``{Column}`` names, integer literals, ``+ - * // %``, unary minus and
parentheses are allowed: the text is parsed, checked node by node, and evaluated on NumPy arrays,
never by ``eval``."""

from __future__ import annotations

import ast
import string

import numpy as np
import pyarrow as pa

from .distinct import column_codes

__all__ = ["parse", "compute_column", "LIMIT"]

LIMIT = 2**53  # a result must stay below this in magnitude (every such integer is exact in a float)
_OPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.FloorDiv: np.floor_divide,
        ast.Mod: np.mod}


def parse(text: str) -> tuple[ast.expr, list[str]]:
    """The checked expression tree of ``text`` and the columns it names (``_c0``, ``_c1``... in the tree).
    ValueError naming what is not allowed."""
    if len(text) > 1000:
        raise ValueError("longer than 1,000 characters")
    names: list[str] = []
    out = []
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"bad column name: {exc}") from exc
    for literal, name, spec, conv in parts:
        out.append(literal)
        if name is None:
            continue
        if not name or spec or conv:
            raise ValueError(f"{{{name}}}: a column's name only, in braces")
        if name not in names:
            names.append(name)
        out.append(f" _c{names.index(name)} ")
    try:
        tree = ast.parse("".join(out).strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not an expression: {exc.msg}") from exc
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _OPS:
                raise ValueError("only + - * // % are allowed")
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub | ast.UAdd):
                raise ValueError("only a unary minus or plus is allowed")
        elif isinstance(node, ast.Constant):
            if type(node.value) is not int or abs(node.value) >= LIMIT:
                raise ValueError(f"{node.value!r}: only whole numbers below 2^53 are allowed")
        elif isinstance(node, ast.Name):
            if not node.id.startswith("_c") or not node.id[2:].isdecimal():
                raise ValueError(f"{node.id!r}: name a column in braces ({{{node.id}}})")
        elif not isinstance(node, ast.operator | ast.unaryop | ast.Load):
            raise ValueError(f"{type(node).__name__.lower()} is not allowed (whole numbers, columns, + - * // %)")
    if not names:
        raise ValueError("names no column: use const")
    return tree, names


def compute_column(table: pa.Table, text: str) -> tuple[pa.Array, dict[int, str]]:
    """Every row's result as text (null where it fails) and the reasons of the rows it failed for."""
    tree, names = parse(text)
    n = table.num_rows
    bad = np.zeros(n, bool)
    reasons: dict[int, str] = {}
    cols: dict[str, np.ndarray] = {}
    for k, name in enumerate(names):
        vals, idx, failed = column_codes(table[name], _whole)
        ints = np.array([0 if v is None else v for v in vals.tolist()], np.int64)
        empty = np.array([v is None for v in vals.tolist()], bool)
        for code, why in failed.items():
            empty[code] = False
            rows = np.flatnonzero(idx == code)
            for i in rows.tolist():
                reasons.setdefault(i, f"{{{name}}}: {why}")
            bad[rows] = True
        gone = empty[idx] & ~bad
        for i in np.flatnonzero(gone).tolist():
            reasons.setdefault(i, f"{{{name}}} is empty (give the field a default)")
        bad |= empty[idx]
        cols[f"_c{k}"] = ints[idx]
    with np.errstate(all="ignore"):
        value, size = _eval(tree, cols, n, bad, reasons)
    far = ~bad & (np.abs(size) >= LIMIT)
    for i in np.flatnonzero(far).tolist():
        reasons.setdefault(i, f"{text!r} gives a number beyond 2^53")
    bad |= far
    out = pa.array(value.astype(str).astype(object), pa.string())
    return pa.array(np.where(bad, None, out.to_numpy(zero_copy_only=False)), pa.string()), reasons


def _eval(node: ast.expr, cols: dict[str, np.ndarray], n: int, bad: np.ndarray, reasons: dict[int, str]
          ) -> tuple[np.ndarray, np.ndarray]:
    """(the integer results, the same in floats: a result far beyond int64 shows there)."""
    if isinstance(node, ast.Constant):
        return np.full(n, node.value, np.int64), np.full(n, float(node.value))
    if isinstance(node, ast.Name):
        return cols[node.id], cols[node.id].astype(np.float64)
    if isinstance(node, ast.UnaryOp):
        v, f = _eval(node.operand, cols, n, bad, reasons)
        return (-v, -f) if isinstance(node.op, ast.USub) else (v, f)
    assert isinstance(node, ast.BinOp)
    a, fa = _eval(node.left, cols, n, bad, reasons)
    b, fb = _eval(node.right, cols, n, bad, reasons)
    if isinstance(node.op, ast.FloorDiv | ast.Mod):
        zero = (b == 0) & ~bad
        for i in np.flatnonzero(zero).tolist():
            reasons.setdefault(i, "a division by zero")
        bad |= zero
        b = np.where(b == 0, 1, b)
        fb = np.where(fb == 0, 1.0, fb)
    op = _OPS[type(node.op)]
    return op(a, b), op(fa, fb)


def _whole(text: str) -> int:
    t = text.strip()
    digits = t[1:] if t[:1] in "+-" else t
    if not digits.isdecimal() or len(digits) > 16:
        raise ValueError(f"not a whole number: {text!r}")
    return int(t)
