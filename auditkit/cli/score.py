"""``auditkit score FINDINGS.csv TRUTH.csv...``: recall and false positives per citation against a ground truth.

A finding matches a planted fault when both have the same round id and
citation (as ``tests/test_sample_data.py`` compares them). Exit 0 when every
planted fault is found and nothing else is, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from .common import EXIT_CLEAN, EXIT_FINDINGS, UsageError


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("score", help="compare a findings CSV with a ground truth (recall, false positives)",
                       description="Exit 0: every planted fault found and no other finding; 1: a fault missed or "
                                   "an extra finding; 2: bad input.", **kw)
    s.add_argument("findings", help="findings CSV (auditkit validate --out, or a run's findings.csv)")
    s.add_argument("truth", nargs="+",
                   help="ground truth CSV files of (round_id, citation), e.g. sample_data/truth/*.csv")
    s.set_defaults(func=run)


def _pairs(path: str, what: str) -> set[tuple[str, str]]:
    """The (round_id, citation) pairs of a CSV file."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} {p}: no such file")
    try:
        frame = pd.read_csv(p, dtype=str, keep_default_na=False, usecols=lambda c: c in ("round_id", "citation"))
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise UsageError(f"{what} {p} is not a readable CSV: {exc}") from None
    missing = {"round_id", "citation"} - set(frame.columns)
    if missing:
        raise UsageError(f"{what} {p} has no column {', '.join(sorted(missing))}")
    return set(zip(frame["round_id"], frame["citation"], strict=True))


def natural(citation: str) -> list[Any]:
    """A citation's sort key: numbers as numbers (``(b)(2)`` before ``(b)(10)``, ``10-2-4`` before ``10-11-6``)."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", citation) if p]


def run(args: argparse.Namespace) -> int:
    found = _pairs(args.findings, "findings")
    truth = set().union(*(_pairs(t, "truth") for t in args.truth))
    citations = sorted({c for _r, c in found | truth}, key=natural)
    width = max([len("citation"), *map(len, citations)])
    print(f"{'citation':<{width}}  {'planted':>7}  {'found':>7}  {'recall':>7}  {'false positives':>15}")
    rows = [(c, {p for p in truth if p[1] == c}, {p for p in found if p[1] == c}) for c in citations]
    for name, planted, got in [*rows, ("total", truth, found)]:
        hit = len(planted & got)
        recall = f"{100 * hit / len(planted):.1f}%" if planted else "-"
        print(f"{name:<{width}}  {len(planted):>7}  {hit:>7}  {recall:>7}  {len(got - planted):>15}")
    return EXIT_CLEAN if found == truth else EXIT_FINDINGS
