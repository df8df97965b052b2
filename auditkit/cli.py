"""Command line: ``auditkit ingest | validate | simulate | rules`` (and ``report``, ``run``).

Exit status (the spec's contract): 0 no finding, 1 findings written, 2 the run
could not be done (bad arguments, unreadable input or configuration).
Quarantined lines are reported on stderr with their count and do not stop a run.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import __version__

log = logging.getLogger("auditkit")

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """A run that cannot be done; the message says why (exit status 2)."""


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def progress_bar(total: int | None, desc: str, unit: str = " rounds", enabled: bool = True):
    """A tqdm bar on stderr when it is a terminal; None otherwise (cron, pipes, logs)."""
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit.strip() == "rounds", file=sys.stderr,
                leave=False)


def _report_quarantine(report, store) -> None:
    n = report.total("quarantined")
    if not n:
        return
    q = store.quarantine()
    q = q[q["sha256"].isin({s.sha256 for s in report.sources})]
    print(f"auditkit: {n} line(s) quarantined", file=sys.stderr)
    for r in q.head(20).itertuples(index=False):
        print(f"  {r.source_file}:{r.line}: {r.reason}", file=sys.stderr)
    if n > 20:
        print(f"  ... and {n - 20} more (see the quarantine report)", file=sys.stderr)


def _config(path: str | None):
    from .paytables import load_config

    return load_config(path)


# ---- commands -----------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    from .ingest.sources import ingest_paths
    from .report import write_csv
    from .store import Store

    store = Store(args.store)
    report = ingest_paths(args.paths, store)
    print(report.summary())
    _report_quarantine(report, store)
    if args.quarantine_report:
        q = store.quarantine()
        write_csv(q[q["sha256"].isin({s.sha256 for s in report.sources})], args.quarantine_report)
    return EXIT_CLEAN


def cmd_validate(args: argparse.Namespace) -> int:
    from .ingest.sources import ingest_paths
    from .report import format_summary, write_csv, write_findings_parquet, write_summaries
    from .store import Store
    from .validate import collect

    config = _config(args.config)
    with tempfile.TemporaryDirectory(prefix="auditkit-") as tmp:
        if len(args.paths) == 1 and Store.is_store(args.paths[0]):
            store = Store(args.paths[0])
        else:
            store = Store(tmp)
            report = ingest_paths(args.paths, store)
            print(report.summary(), file=sys.stderr)
            _report_quarantine(report, store)
            if args.quarantine_report:
                write_csv(store.quarantine(), args.quarantine_report)
        bar = progress_bar(store.count() if sys.stderr.isatty() else None, "validate",
                           enabled=not args.no_progress)
        findings, checked = collect(store, config, games=args.game or None, citations=args.citation or None,
                                    progress=bar.update if bar else None)
        if bar:
            bar.close()
    write_csv(findings, args.out)
    if args.parquet:
        write_findings_parquet(findings, args.parquet)
    if args.summaries:
        write_summaries(findings, args.summaries)
    print(format_summary(findings, checked))
    print(f"report: {args.out}")
    return EXIT_FINDINGS if len(findings) else EXIT_CLEAN


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate_to_jsonl

    if args.follow:
        from .simulate.follow import follow_command

        return follow_command(args)
    if not args.out:
        raise UsageError("simulate needs --out (or --follow with --out-dir)")

    n, faults = simulate_to_jsonl(args.game, args.rounds, Path(args.out), Path(args.truth) if args.truth else None,
                                  seed=args.seed, fault_rate=args.fault_rate)
    print(f"{n} {args.game} round(s) written to {args.out}; {faults} injected fault(s)"
          + (f", ground truth in {args.truth}" if args.truth else ""))
    return EXIT_CLEAN


def cmd_watch(args: argparse.Namespace) -> int:
    from .live import watch_command

    return watch_command(args)


def cmd_rules(args: argparse.Namespace) -> int:
    from .rules.registry import catalog

    frame = catalog(args.game)
    if args.markdown:
        print("| game | rule_id | citation | severity | check |\n|---|---|---|---|---|")
        for r in frame.itertuples(index=False):
            print(f"| {r.games} | `{r.rule_id}` | `{r.citation}` | {r.severity} | {r.summary} |")
    else:
        for r in frame.itertuples(index=False):
            print(f"{r.rule_id:<28} {r.citation:<24} {r.severity:<7} {r.summary}")
    return EXIT_CLEAN


# ---- parser -------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 as well; keep its message
        self.print_usage(sys.stderr)
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from .games import names

    GAMES = names()

    p = _Parser(prog="auditkit", description="Audit casino table-game hand histories against 68 IAC 10.")
    p.add_argument("--version", action="version", version=f"auditkit {__version__}")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    p.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("ingest", help="read logs into a Parquet store (each file once)")
    s.add_argument("paths", nargs="+", help="log files or folders (.jsonl, .jsonl.gz, .csv)")
    s.add_argument("--store", required=True, help="store folder")
    s.add_argument("--quarantine-report", help="write this run's quarantined lines to this CSV")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("validate", help="check every round and write the violation report")
    s.add_argument("paths", nargs="+", help="log files or folders, or one store folder")
    s.add_argument("--out", required=True, help="violation report CSV")
    s.add_argument("--parquet", help="also write the findings as Parquet here")
    s.add_argument("--summaries", metavar="DIR", help="also write summaries by citation, table, dealer and day here")
    s.add_argument("--quarantine-report", metavar="CSV", help="write every quarantined line (file, line, reason, raw) here")
    s.add_argument("--config", help="paytable and house-rules TOML (defaults: the rules catalog's)")
    s.add_argument("--game", action="append", choices=GAMES, help="only these games (repeatable)")
    s.add_argument("--citation", action="append", help="only these citations (repeatable)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("simulate", help="write simulated rounds with injected faults and their ground truth")
    s.add_argument("game", choices=GAMES)
    s.add_argument("--rounds", type=int, default=1000)
    s.add_argument("--out", help="JSONL file to write (.jsonl or .jsonl.gz)")
    s.add_argument("--truth", help="CSV of (round_id, citation) for every injected fault")
    s.add_argument("--fault-rate", type=float, default=0.0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--follow", action="store_true", help="write per-table logs in real time (live demos)")
    s.add_argument("--rate", type=float, default=200.0, help="with --follow: rounds per second in all")
    s.add_argument("--tables", type=int, default=50, help="with --follow: number of table log files")
    s.add_argument("--out-dir", help="with --follow: folder of the table logs")
    s.add_argument("--seconds", type=float, help="with --follow: stop after this long (default: at SIGINT)")
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser("watch", help="follow growing logs; report each round's findings as it arrives (docs/live.md)")
    s.add_argument("paths", nargs="+", help="log files or folders to follow (.jsonl, .jsonl.gz, .ndjson)")
    s.add_argument("--store", help="also ingest the rounds into this store as they arrive")
    s.add_argument("--out", help="append findings here as JSON lines (exactly once across restarts)")
    s.add_argument("--csv", help="append findings here as a spreadsheet-safe CSV")
    s.add_argument("--config", help="paytable and house-rules TOML (defaults: the rules catalog's)")
    s.add_argument("--checkpoint", help="resume from and keep writing this checkpoint file")
    s.add_argument("--poll", type=float, default=0.2, help="seconds between polls (default 0.2)")
    s.add_argument("--checkpoint-every", type=float, default=5.0,
                   help="seconds between checkpoints and store commits (default 5)")
    s.add_argument("--once", action="store_true", help="read what is there, then stop (tests, cron)")
    s.add_argument("--no-stdout", action="store_true", help="do not print findings on stdout")
    s.set_defaults(func=cmd_watch)

    s = sub.add_parser("rules", help="list the registered checks with their citations")
    s.add_argument("--game", choices=GAMES)
    s.add_argument("--markdown", action="store_true")
    s.set_defaults(func=cmd_rules)

    from .job import add_subcommands  # run (scheduled jobs) and report (re-export stored findings)

    add_subcommands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from .ingest.sources import InputError
    from .paytables import ConfigError

    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    _setup_logging(args.verbose, args.quiet)
    try:
        return args.func(args)
    except (UsageError, InputError, ConfigError) as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
