"""Progress bars on a terminal only: cron, pipes and log files get log lines and nothing else."""

from __future__ import annotations

import sys
from typing import Any


def progress_bar(total: int | None, desc: str, unit: str = " rounds", enabled: bool = True) -> Any:
    """A tqdm bar on stderr when it is a terminal and ``enabled``; None otherwise."""
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit.strip() in ("rounds", "B"), file=sys.stderr,
                leave=False)


def on_terminal() -> bool:
    """True when stderr is a terminal (a bar would be drawn)."""
    return sys.stderr.isatty()
