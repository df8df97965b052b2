"""``auditkit watch PATH...``: follow growing logs and report each round's findings as it arrives."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from ..ingest import MAX_LINE
from .common import DEFAULT_LOCK_TIMEOUT, add_lock_timeout, check_writable, positive, positive_int, refuse_exports


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("watch", help="follow growing logs; report each round's findings as it arrives (docs/live.md)",
                       **kw)
    s.add_argument("paths", nargs="+", help="log files or folders to follow (.jsonl, .jsonl.gz, .ndjson)")
    s.add_argument("--store", help="also ingest the rounds into this store as they arrive (when not given: not)")
    s.add_argument("--out", help="append findings here as JSON lines (exactly once across restarts)")
    s.add_argument("--csv", help="append findings here as a spreadsheet-safe CSV")
    s.add_argument("--profile", help="read the files through this import profile (docs/profiles.md): CSV or JSON "
                   "lines of another shape, rounds grouped by the profile's keys")
    s.add_argument("--config", help="paytable and house-rules TOML (when not given: the rules catalog's defaults)")
    s.add_argument("--checkpoint", help="resume from and keep writing this checkpoint file")
    s.add_argument("--poll", type=positive, default=0.2, help="seconds between polls")
    s.add_argument("--checkpoint-every", type=positive, default=5.0,
                   help="seconds between checkpoints and store commits")
    s.add_argument("--max-line-bytes", type=positive_int, default=MAX_LINE, metavar="N",
                   help="longest line read (bytes); a longer one is quarantined as too long, never held in memory")
    s.add_argument("--once", action="store_true", help="read what is there, then stop (tests, cron); "
                   "a path that does not exist is an error (exit 2)")
    add_lock_timeout(s, DEFAULT_LOCK_TIMEOUT)
    s.add_argument("--no-stdout", action="store_true", help="do not print findings on stdout")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """0 after SIGINT/SIGTERM (checkpoint written); with ``--once`` 1 when findings were emitted, else 0;
    2 (InputError) with ``--once`` when a path does not exist (a scheduler must not read that as clean)."""
    from pathlib import Path

    import numpy as np

    from ..ingest.identity import InputError
    from ..live import Watcher
    from ..paytables import load_config
    from ..reportcoverage import format_coverage
    from ..store import Store

    if args.once:
        missing = [p for p in args.paths if not Path(p).exists()]
        if missing:
            raise InputError(f"no such file or folder: {', '.join(missing)}")
    for output in (args.out, args.csv, args.checkpoint):
        if output:
            check_writable(Path(output))
    if not args.profile:
        refuse_exports(args.paths)
    kind: Any = Watcher
    if args.profile:
        from ..ingest.profiles import load_profile
        from ..live.profiled import ProfiledWatcher

        kind = functools.partial(ProfiledWatcher, profile=load_profile(args.profile))
    watcher = kind(args.paths, config=load_config(args.config), store=Store(args.store) if args.store else None,
                      out=Path(args.out) if args.out else None, csv=Path(args.csv) if args.csv else None,
                      checkpoint=Path(args.checkpoint) if args.checkpoint else None,
                      stdout=None if args.no_stdout else sys.stdout, poll=args.poll,
                      checkpoint_every=args.checkpoint_every, gzip_settle=0.0 if args.once else 1.0,
                      max_line=args.max_line_bytes, lock_timeout=args.lock_timeout)
    found = watcher.run(once=args.once)
    s = watcher.stats
    print(f"auditkit watch: {s['rounds']} round(s) checked, {found} finding(s) emitted, "
          f"{s['quarantined']} line(s) quarantined", file=sys.stderr)
    print(f"auditkit watch: {format_coverage(watcher.coverage.table())}", file=sys.stderr)
    if watcher.poll_times:
        wall, cpu = (x * 1000 for x in watcher.poll_times.wall_cpu())
        print(f"auditkit watch: {len(wall)} poll(s) read lines; per poll wall p50 {np.median(wall):.0f} ms, "
              f"p99 {np.percentile(wall, 99):.0f} ms, max {wall.max():.0f} ms; CPU p50 {np.median(cpu):.0f} ms, "
              f"p99 {np.percentile(cpu, 99):.0f} ms, max {cpu.max():.0f} ms", file=sys.stderr)
    return 1 if args.once and found else 0
