"""Work that checked nothing is not clean (docs/reliability.md).

A run whose round lines were all quarantined, or more of them than
``max_quarantined`` allows, could not do its job: :func:`quarantine_problem`
says so (the commands exit 2). A filter that matches no round of the store
is not an error but is said (:func:`no_match`): a report filtered to a
dealer who does not exist is empty, not clean. Nor are logs that hold no round
at all (an empty export): :func:`no_rounds` says so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["quarantine_problem", "common_reasons", "no_match", "no_rounds"]

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_LINE = re.compile(r"\bline \d+")
_VALUE = re.compile(r"= [-+]?(?:\d[\d,]*\.?\d*(?:e[-+]?\d+)?|inf|nan)\b", re.IGNORECASE)


def _kind(reason: str) -> str:
    """A reason without its values: ``field started_at '6/1/2025 04:02' is ...`` -> ``field started_at '…' is ...``."""
    return _VALUE.sub("= …", _LINE.sub("line …", _QUOTED.sub("'…'", str(reason))))


def common_reasons(reasons: Iterable[str], top: int = 3) -> list[tuple[str, int]]:
    """The ``top`` most common kinds of reason, with their counts."""
    return Counter(_kind(r) for r in reasons).most_common(top)


def round_lines(sources: Sequence[Any]) -> int:
    """Lines of these sources that were rounds to check (not blank, a header, or a companion row): those
    stored, already stored or quarantined (a simulated source's rounds, stored without lines, count)."""
    return sum(s.stored + s.already_stored + s.quarantined for s in sources)


def quarantine_problem(sources: Sequence[Any], reasons: Iterable[str] | None,
                       max_quarantined: float | None = None) -> str | None:
    """Why the quarantine of these sources (:class:`~auditkit.store.SourceRecord`) makes the run a
    failure, or None. ``reasons``: their quarantine's reasons (for the three most common)."""
    quarantined = sum(s.quarantined for s in sources)
    lines = round_lines(sources)
    if not quarantined or not lines:
        return None
    share = quarantined / lines
    if quarantined >= lines:
        head = f"every line read was quarantined ({quarantined}), no round stored"
    elif max_quarantined is not None and share > max_quarantined:
        head = (f"{quarantined} of {lines} line(s) quarantined ({share:.1%}), more than "
                f"max_quarantined = {max_quarantined:g} ({max_quarantined:.1%})")
    else:
        return None
    common = common_reasons(reasons if reasons is not None else [])
    return head + ("; most common: " + "; ".join(f"{n} x {r}" for r, n in common) if common else "")


def no_rounds(sources: Sequence[Any], outcome: str = "nothing was checked") -> str | None:
    """The warning of sources read that hold no round line at all (each empty, blank lines or a header
    only), ending with the ``outcome``, or None: nothing was there to check, which is no clean result."""
    if not sources or round_lines(sources):
        return None
    said = ", ".join(f"{s.path} ({f'{s.lines_read} line(s), none a round' if s.lines_read else 'empty'})"
                     for s in sources[:3])
    more = f" and {len(sources) - 3} more" if len(sources) > 3 else ""
    return f"no round in the logs read: {said}{more}; {outcome}"


def no_match(filters: dict[str, Any]) -> str:
    """The warning of filters that match no round: ``no rounds match --dealer D999``."""
    given = " ".join(f"{k} {v}" for k, v in filters.items() if v not in (None, [], ()))
    return f"no rounds match {given}" if given else "no rounds in the store"


def rounds_matching(store: Any, *, games: Sequence[str] | None = None, start: str | None = None,
                    end: str | None = None, tables: Sequence[str] | None = None,
                    dealers: Sequence[str] | None = None) -> int:
    """How many rounds of the store these filters select (tables: ids or fnmatch globs); reads two columns."""
    import fnmatch

    import numpy as np
    import pyarrow.compute as pc

    n = 0
    for game in games or store.games():
        for date in store.dates(game, start, end):
            if not tables and not dealers:
                n += store.count(game, date)
                continue
            t = store.read(game, date, columns=["table_id", "dealer_id"])
            keep = np.ones(len(t), dtype=bool)
            if tables:
                ids = [i for i in pc.unique(t["table_id"]).to_pylist()
                       if i is not None and any(fnmatch.fnmatchcase(i, p) for p in tables)]
                keep &= _in(t["table_id"], ids)
            if dealers:
                keep &= _in(t["dealer_id"], list(dealers))
            n += int(keep.sum())
    return n


def _in(column: Any, values: list[str]) -> Any:
    """A numpy mask: the column's value is one of ``values`` (a null is not)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    found = pc.is_in(column, value_set=pa.array(values, type=pa.string()))
    return pc.fill_null(found, False).to_numpy(zero_copy_only=False)
