"""``auditkit run JOB.toml``: the scheduled job (orchestrated by :func:`auditkit.jobrun.run_job`)."""

from __future__ import annotations

import argparse
import sys

from .common import add_engine, add_lock_timeout


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    from ..job import FAIL_ON

    s = sub.add_parser("run", help="run a scheduled job: ingest what is new, validate it, write dated reports",
                       description="Exit 0: clean or nothing new; 1: findings at or above fail_on; "
                                   "2: the job could not run (bad job file, missing input, store locked).", **kw)
    s.add_argument("job", help="job file (TOML); see docs/batch.md")
    s.add_argument("--fail-on", choices=list(FAIL_ON), help="override the job's fail_on threshold (default: the job's)")
    add_lock_timeout(s, None)
    add_engine(s, "the job's workers, else the machine's cores")
    s.add_argument("--no-progress", action="store_true", help="no progress bar (none anyway when not a terminal)")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..job import load_job
    from ..jobrun import run_job

    job = load_job(args.job)
    result = run_job(job, fail_on=args.fail_on, progress=not args.no_progress and not args.quiet,
                     lock_timeout=args.lock_timeout, workers=args.workers, engine=args.engine,
                     scheduler=args.scheduler)
    if not args.quiet:
        r, c = result.record, result.record["counts"]
        print(f"run {r['run_id']}: {r['status']}; {c['files_ingested']} file(s) ingested, "
              f"{c['files_already_ingested']} already ingested; {c['rounds_checked']} round(s) checked; "
              f"{c['findings']} finding(s), {r['findings_failing']} at or above fail_on={r['fail_on']}; "
              f"{c['lines_quarantined']} line(s) quarantined")
        for warning in result.record.get("warnings", []):
            print(f"warning: {warning}")
        print(f"outputs: {result.folder}")
    if result.record.get("problem"):
        print(f"auditkit: error: {result.record['problem']}", file=sys.stderr)
    return result.exit_code
