"""``auditkit report``: re-export stored findings (a period, games, tables, citations) as CSV; nothing is re-validated."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import sys
from datetime import date as Date
from typing import TYPE_CHECKING

from ..status import SEVERITY_RANK
from .common import (
    DEFAULT_LOCK_TIMEOUT,
    EXIT_CLEAN,
    UsageError,
    add_choice,
    add_game,
    add_lock_timeout,
    check_citations,
    prepare_outputs,
    require_output,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..store import SourceRecord, Store


def _summaries() -> list[str]:
    from ..schema import SUMMARIES  # with pyarrow: looked up only when the parser needs it

    return list(SUMMARIES)


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("report", help="re-export stored findings (a period, games, tables, citations) as CSV",
                       description="Reads the findings stored by earlier runs; nothing is re-validated. "
                                   "Exit 0 when written, 2 on error.", **kw)
    s.add_argument("--store", help="store folder (or --job)")
    s.add_argument("--job", help="take the store from this job file (or --store)")
    s.add_argument("--out", help="CSV file to write (when not given: none; at least one of --out, --parquet, "
                   "--xlsx, --html)")
    s.add_argument("--from", dest="start", metavar="YYYY-MM-DD", help="first gaming day, inclusive (when not given: the first)")
    s.add_argument("--to", dest="end", metavar="YYYY-MM-DD", help="last gaming day, inclusive (when not given: the last)")
    add_game(s, "--game", action="append", help="only these games (repeatable; when not given: all)")
    s.add_argument("--table", action="append",
                   help="only these table ids or globs such as 'BJ-*' (repeatable; when not given: all)")
    s.add_argument("--citation", action="append",
                   help="only these checks: a citation, its prefix or a rule id (repeatable; when not given: all)")
    s.add_argument("--dealer", action="append", help="only these dealer ids (repeatable; when not given: all)")
    s.add_argument("--severity", choices=list(SEVERITY_RANK),
                   help="only findings at or above this severity (when not given: all)")
    add_choice(s, "--summary", choices=_summaries,
                   help="write counts and money by this instead of the findings (when not given: the findings)")
    s.add_argument("--parquet", help="also write the selected findings as Parquet here")
    s.add_argument("--status", action="append", choices=("open", "explained", "confirmed", "escalated"),
                   help="only findings whose review status is this (repeatable; when not given: all)")
    s.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report that opens offline")
    s.add_argument("--xlsx", metavar="FILE", help="also write the selected findings as an Excel workbook (summary, "
                   "findings, summaries, coverage, quarantine)")
    add_lock_timeout(s, DEFAULT_LOCK_TIMEOUT)
    s.set_defaults(func=run)


def _check_date(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    try:
        return Date.fromisoformat(value).isoformat()
    except ValueError:
        raise UsageError(f"{what} must be a date YYYY-MM-DD, not {value!r}") from None


def select_findings(findings: pd.DataFrame, *, tables: list[str] | None = None, citations: list[str] | None = None,
                    severity: str | None = None, dealers: list[str] | None = None) -> pd.DataFrame:
    """Findings of some tables (ids or globs), citations, dealers, at or above a severity."""
    keep = findings.index == findings.index
    if tables:
        ids = findings["table_id"].fillna("").astype(str)
        ok = {t for t in ids.unique() if any(fnmatch.fnmatchcase(t, pat) for pat in tables)}
        keep &= ids.isin(ok).to_numpy()
    if citations:
        keep &= (findings["citation"].isin(citations) | findings["rule_id"].isin(citations)).to_numpy()
    if dealers:
        keep &= findings["dealer_id"].isin(dealers).to_numpy()
    if severity:
        keep &= (findings["severity"].map(SEVERITY_RANK).fillna(3) >= SEVERITY_RANK[severity]).to_numpy()
    return findings[keep].reset_index(drop=True)


def _never_validated(store: Store) -> list[SourceRecord]:
    """The store's sources no nightly run validated (their findings are not in the store's findings)."""
    validated: set[str] = set()
    for state in store.text_files("_jobs/*.json"):
        with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
            validated |= set(json.loads(store.read_text(state) or "{}")["validated"])
    return [r for r in store.manifest() if r.sha256 not in validated]


def _stored_findings(store: Store, args: argparse.Namespace, start: str | None, end: str | None) -> pd.DataFrame:
    """The stored findings of the period and games, with their latest reviews, selected by the command's
    filters (tables, citations, severity, dealers, review status), in the report's order."""
    from ..reviews import latest, with_reviews
    from ..validate import sort_findings

    findings = with_reviews(sort_findings(store.findings(args.game or None, start, end)), latest(store))
    findings = select_findings(findings, tables=args.table, citations=args.citation, severity=args.severity,
                               dealers=args.dealer)
    if args.status:
        findings = findings[findings["status"].isin(args.status)].reset_index(drop=True)
    return findings


def run(args: argparse.Namespace) -> int:
    from .. import report as rep
    from ..job import load_job
    from ..reportcontext import describe_filters, gather
    from ..reportcoverage import format_coverage, of_store
    from ..schema import SUMMARIES
    from ..store import Store
    from ..summaries import summarize

    if bool(args.store) == bool(args.job):
        raise UsageError("give either --store or --job")
    require_output(args, ("--out", "--parquet", "--xlsx", "--html"))
    filters = describe_filters({"--game": args.game, "--table": args.table, "--dealer": args.dealer,
                                "--citation": args.citation, "--severity": args.severity, "--status": args.status})
    args.citation = check_citations(args.citation, args.game)
    job = load_job(args.job) if args.job else None
    root = args.store if args.store else job.store  # a folder or an s3:// URI
    if not Store.is_store(root):
        raise UsageError(f"{root} is not a store (no _manifest or rounds folder)")
    start, end = _check_date(args.start, "--from"), _check_date(args.end, "--to")
    if start and end and start > end:
        raise UsageError("--from is after --to")
    prepare_outputs([args.out, args.parquet, args.xlsx, args.html], html=args.html)
    store = Store(root)
    with store.lock(args.lock_timeout, shared=True, command="report"):
        behind = _never_validated(store)
        findings = _stored_findings(store, args, start, end)
        quarantine = store.quarantine() if args.xlsx else None
        # coverage and counts of the selected rounds and checks only
        coverage = of_store(store, args.game or None, start, end, tables=args.table, dealers=args.dealer,
                            checks=args.citation, findings=findings)
        context = None
        if args.html or args.xlsx:
            config = job.config() if job is not None else None
            context = gather(store, games=args.game, start=start, end=end, tables=args.table, dealers=args.dealer,
                             filters=filters, config=config, outcomes=bool(args.html),
                             command=getattr(args, "command_line", None),
                             configuration=None if config is not None else
                             "that of the runs which stored the findings (report does not validate again)")
    if behind:
        print(f"auditkit: warning: {len(behind)} source(s) in the store were never validated by `auditkit run` "
              f"(e.g. {behind[0].path}); their findings are not in this report", file=sys.stderr)
    unmatched = _unmatched(store, args) if not len(findings) else None
    if unmatched:
        print(f"auditkit: warning: {unmatched}", file=sys.stderr)
    out = summarize(findings, SUMMARIES[args.summary]) if args.summary else findings
    rep.write_outputs(rep.Outputs(args.out, parquet=args.parquet, xlsx=args.xlsx, html=args.html),
                      findings, coverage, {"store": str(root), "from": args.start or "the first day",
                                           "to": args.end or "the last day", "findings": len(findings)},
                      csv_frame=out, quarantine=quarantine, context=context)
    if not args.quiet:
        if filters:
            print("filtered: " + " ".join(f"{k} {v}" for k, v in filters.items())
                  + " (findings and coverage of the selected rounds only)")
        print(f"{len(findings)} finding(s) on {findings['round_id'].nunique()} round(s) written to "
              f"{', '.join(str(p) for p in (args.out, args.parquet, args.xlsx, args.html) if p)}"
              + (f"; {unmatched}" if unmatched else ""))
        print(format_coverage(coverage, see=f"the Coverage sheet of {args.xlsx}" if args.xlsx else None))
    return EXIT_CLEAN


def _unmatched(store, args: argparse.Namespace) -> str | None:
    """``no rounds match --dealer D999`` when the round filters select no round of the store, else None."""
    from ..empty_work import no_match, rounds_matching

    given = {"--game": args.game, "--table": args.table, "--dealer": args.dealer, "--from": args.start, "--to": args.end}
    if not any(given.values()):
        return None
    with store.lock(args.lock_timeout, shared=True, command="report"):
        if rounds_matching(store, games=args.game, start=args.start, end=args.end, tables=args.table,
                           dealers=args.dealer):
            return None
    return no_match({k: " ".join(v) if isinstance(v, list) else v for k, v in given.items()})
