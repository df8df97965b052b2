"""How a configured value is shown in a message and whether a number is in its range: one text for a
configuration file, a job file and the command line. Plain Python, so the command line checks its
numbers before it imports numpy or pyarrow."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["show", "number_reason"]


def show(value: Any) -> str:
    """A value as TOML writes it (for messages)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {show(v)}" for k, v in value.items()) + " }"
    return str(value)


def _range(spec: dict[str, Any]) -> str:
    """The range of a number spec in words: `` from 0 to 10000``, `` from 0 to less than 1``, `` > 0``."""
    low = (">=", spec["min"]) if "min" in spec else (">", spec["above"]) if "above" in spec else None
    high = ("<=", spec["max"]) if "max" in spec else ("<", spec["below"]) if "below" in spec else None
    if low and high:
        first = f"from {show(low[1])}" if low[0] == ">=" else f"above {show(low[1])}"
        second = f"to {show(high[1])}" if high[0] == "<=" else f"to less than {show(high[1])}"
        return f" {first} {second}"
    bound = low or high
    return f" {bound[0]} {show(bound[1])}" if bound else ""


def number_reason(value: Any, spec: dict[str, Any], integer: bool = False) -> str | None:
    """Why ``value`` is not a number (an integer) in the spec's range (``min``/``max`` inclusive,
    ``above``/``below`` exclusive, ``finite``); None when it is. The one check of every number a
    configuration file, a job file or the command line gives."""
    finite = spec.get("finite", True)
    what = ("an integer" if integer else "a finite number" if finite else "a number") + _range(spec)
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return f"must be {what}"
    if math.isnan(value) or (finite and math.isinf(value)):
        return f"must be {what}"
    if ("min" in spec and value < spec["min"]) or ("max" in spec and value > spec["max"]) \
            or ("above" in spec and value <= spec["above"]) or ("below" in spec and value >= spec["below"]):
        return f"must be {what}"
    return None
