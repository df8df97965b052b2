"""Money: payouts rounded to the paytable's unit, compared to the cent, and written one way.

Every amount a finding or a message shows goes through :func:`format_money`
(``1,234.50``; nets signed: ``+23.75``, ``-150.00``), so a spreadsheet and a
reader see one number format in every game.
"""

from __future__ import annotations

import numpy as np

__all__ = ["money_round", "money_differs", "format_money", "format_net"]


def money_round(values: np.ndarray, unit: float = 0.01, rounding: str = "half_up") -> np.ndarray:
    """Exact payouts rounded to the unit, vectorized (half up away from zero by default)."""
    q = np.asarray(values, dtype=np.float64) / unit
    q = np.round(q, 6)  # absorb float noise such as 35.625000000001
    if rounding == "half_up":
        r = np.sign(q) * np.floor(np.abs(q) + 0.5)
    elif rounding == "down":
        r = np.sign(q) * np.floor(np.abs(q))
    else:
        r = np.sign(q) * np.ceil(np.abs(q))
    return np.round(r * unit, 9)


def money_differs(recorded: np.ndarray, exact: np.ndarray, unit: float = 0.01) -> np.ndarray:
    """True where a recorded amount is a whole rounding unit or more away from the exact one.

    A payout inside the rounding (35.62 or 35.63 for an exact 35.625) is not a finding;
    one cent off a whole-cent payout is.
    """
    diff = np.subtract(np.asarray(recorded, dtype=np.float64), np.asarray(exact, dtype=np.float64))
    np.abs(diff, out=diff)  # in place: one temporary per call, however many wagers
    return diff >= unit - 1e-9


def format_money(x: float) -> str:
    """An amount to the cent with thousands separators: ``1,234.50``; ``-`` for no amount (NaN)."""
    return "-" if x != x else f"{_no_negative_zero(x):,.2f}"


def format_net(x: float) -> str:
    """A net (won or lost) to the cent, always signed: ``+23.75``, ``-150.00``, ``+0.00``."""
    return "-" if x != x else f"{_no_negative_zero(x):+,.2f}"


def _no_negative_zero(x: float) -> float:
    """``x`` with an amount that rounds to 0.00 written as 0.00, never ``-0.00``."""
    return 0.0 if round(x, 2) == 0 else x
