"""``auditkit watch PATH...``: follow growing logs and report each round's findings as it arrives."""

from __future__ import annotations

import argparse

from ..ingest import MAX_LINE
from .common import DEFAULT_LOCK_TIMEOUT, add_lock_timeout, positive, positive_int


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("watch", help="follow growing logs; report each round's findings as it arrives (docs/live.md)",
                       **kw)
    s.add_argument("paths", nargs="+", help="log files or folders to follow (.jsonl, .jsonl.gz, .ndjson)")
    s.add_argument("--store", help="also ingest the rounds into this store as they arrive (when not given: not)")
    s.add_argument("--out", help="append findings here as JSON lines (exactly once across restarts)")
    s.add_argument("--csv", help="append findings here as a spreadsheet-safe CSV")
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
    """0 after SIGINT/SIGTERM (checkpoint written); with ``--once`` 1 when findings were emitted, else 0."""
    from ..live import watch_command

    return watch_command(args)
