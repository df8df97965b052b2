"""``auditkit ingest PATH... --store STORE``: read logs into a Parquet store, each file once."""

from __future__ import annotations

import argparse
import sys

from ..ingest import MAX_LINE
from .common import (
    DEFAULT_LOCK_TIMEOUT,
    EXIT_CLEAN,
    EXIT_ERROR,
    add_dedup_memory,
    add_engine,
    add_lock_timeout,
    add_max_quarantined,
    add_profile,
    ingest_with_progress,
    load_profile_arg,
    positive_int,
    prepare_outputs,
    quarantine_problem,
    refuse_exports,
    report_quarantine,
    require_logs,
    require_rounds,
)


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("ingest", help="read logs into a Parquet store (each file once)", **kw)
    s.add_argument("paths", nargs="+", help="log files or folders (.jsonl, .jsonl.gz, .ndjson, .csv)")
    s.add_argument("--store", required=True, help="store folder (created when missing)")
    s.add_argument("--quarantine-report", metavar="CSV", help="write this run's quarantined lines to this CSV")
    s.add_argument("--follow-symlinks", action="store_true",
                   help="follow symbolic links that lead out of the input folders")
    s.add_argument("--max-line-bytes", type=positive_int, default=MAX_LINE, metavar="N",
                   help="longest line read (bytes); a longer one is quarantined as too long, never held in memory")
    add_lock_timeout(s, DEFAULT_LOCK_TIMEOUT)
    add_profile(s)
    add_engine(s, "the machine's cores; one process for less than 128 MiB of logs",
               "parse the logs (files, and byte ranges of a big plain file)")
    add_max_quarantined(s)
    add_dedup_memory(s)
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..empty_work import no_rounds
    from ..store import Store
    from .validate import check_engine

    check_engine(args)
    store = Store(args.store)
    profile = load_profile_arg(args)
    prepare_outputs([args.quarantine_report])
    if profile is None:
        refuse_exports(args.paths)
    with store.lock(timeout=args.lock_timeout, command="ingest"):
        report = ingest_with_progress(args.paths, store, follow_symlinks=args.follow_symlinks, show=not args.quiet,
                                      max_line=args.max_line_bytes, workers=args.workers, scheduler=args.scheduler,
                                      profile=profile, dedup_memory=args.dedup_memory)
        require_logs(report, args.paths)
        if not args.quiet:
            print(report.summary())
        report_quarantine(report, store)
        if args.quarantine_report:
            from ..report import write_csv  # with pandas: only for this report

            write_csv(store.quarantine_frames({s.sha256 for s in report.sources}), args.quarantine_report)
        require_rounds(report, store)
        problem = quarantine_problem(report, store, args.max_quarantined)
        empty = no_rounds(report.sources, "nothing stored")
    if empty:
        print(f"auditkit: warning: {empty}", file=sys.stderr)
    if problem:  # stored as read; the run still could not do its job
        print(f"auditkit: error: {problem}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_CLEAN
