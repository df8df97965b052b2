"""``auditkit validate PATH... --out CSV``: check every round of logs (one shot) or of a store."""

from __future__ import annotations

import argparse
import contextlib
import logging
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from .common import (
    DEFAULT_LOCK_TIMEOUT,
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    add_engine,
    add_game,
    add_lock_timeout,
    add_max_quarantined,
    add_profile,
    check_citations,
    ingest_with_progress,
    load_profile_arg,
    prepare_outputs,
    quarantine_problem,
    refuse_exports,
    report_quarantine,
    require_logs,
    require_output,
    require_rounds,
)

log = logging.getLogger("auditkit")
OUTPUTS = ("--out", "--parquet", "--summaries", "--xlsx", "--html")
HOLD_BYTES = 512 << 20
"""Bytes of rounds (as Arrow tables) that the one-shot route holds in memory when it holds its store
(:func:`holds_its_store`); those past it go to its temporary store's folder as Parquet."""
HOLD_LOG_BYTES = 1 << 30
"""Bytes of plain logs up to which the one-shot route on several local workers still holds its store:
about 600 MiB of baccarat rounds as Arrow (314 MiB from a 533 MiB log), the part past :data:`HOLD_BYTES`
encoded by this process; its validation in this process is then still the shorter way (1M rounds on 2
cores: docs/benchmarks.md)."""


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("validate", help="check every round and write the violation report", **kw)
    s.add_argument("paths", nargs="+", help="log files or folders, or one store folder")
    s.add_argument("--out", help="the violation report CSV (when not given: none; at least one of --out, "
                   "--parquet, --summaries, --xlsx, --html)")
    s.add_argument("--parquet", help="also write the findings as Parquet here")
    s.add_argument("--summaries", metavar="DIR", help="also write summaries by citation, table, dealer and day here")
    s.add_argument("--xlsx", metavar="FILE", help="also write an Excel workbook: summary, findings, summaries by "
                   "citation, table, dealer and day, coverage, quarantine")
    s.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report (charts, coverage, "
                   "summaries, the top findings) that opens offline")
    s.add_argument("--quarantine-report", metavar="CSV", help="write every quarantined line (file, line, reason, raw) here")
    s.add_argument("--config", help="paytable and house-rules TOML (when not given: the rules catalog's defaults)")
    add_game(s, "--game", action="append", help="only these games (repeatable; when not given: all)")
    s.add_argument("--citation", action="append",
                   help="only these checks: a citation, its prefix (68 IAC 10-10-14(b)) or a rule id (baccarat.b5), "
                   "as `auditkit rules` lists them (repeatable; when not given: all)")
    s.add_argument("--follow-symlinks", action="store_true",
                   help="follow symbolic links that lead out of the input folders")
    s.add_argument("--no-progress", action="store_true", help="no progress bar (none anyway when not a terminal)")
    add_engine(s, "the machine's cores")
    add_lock_timeout(s, DEFAULT_LOCK_TIMEOUT)
    add_max_quarantined(s)
    add_profile(s)
    s.set_defaults(func=run)


def output_paths(args: argparse.Namespace) -> list[Path]:
    """Every file this command writes."""
    from ..report import SUMMARIES

    out = [Path(p) for p in (args.out, args.parquet, args.quarantine_report, args.xlsx, args.html) if p]
    if args.summaries:
        out += [Path(args.summaries) / f"summary_by_{name}.csv" for name in SUMMARIES]
        out.append(Path(args.summaries) / "coverage.csv")
    return out


def coverage_written(args: argparse.Namespace) -> str | None:
    """Where the whole coverage table was written (the summary names it only then), or None."""
    if args.summaries:
        return str(Path(args.summaries) / "coverage.csv")
    return f"the Coverage sheet of {args.xlsx}" if args.xlsx else None


def _context(store, args: argparse.Namespace, config, filters: dict[str, str]):
    """The report's context (rounds behind it, outcome tests, provenance) for --html and --xlsx, else None."""
    if not (args.html or args.xlsx):
        return None
    from ..reportcontext import gather

    return gather(store, games=args.game, filters=filters, config=config, outcomes=bool(args.html),
                  command=getattr(args, "command_line", None))


@contextlib.contextmanager
def temporary_store() -> Iterator[Path]:
    """A private store in $TMPDIR for the one-shot route, named with this process's id; the ones
    whose creator is gone (a validate killed by SIGKILL) are removed first."""
    from ..store import private_temp_dir

    path = private_temp_dir("auditkit-validate", "the temporary store of an interrupted validate")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def holds_its_store(args: argparse.Namespace, profile) -> bool:
    """Whether the one-shot route holds its store in memory (:meth:`auditkit.store.Store.in_memory`), which
    it then validates in this process: when it runs in this process only (one worker asked for, or none
    asked for and logs too small for more: :func:`auditkit.ingest.parallel.default_ingest_workers`), and
    when its local workers only parse and send their rows back (no import profile, plain logs of at most
    :data:`HOLD_LOG_BYTES`: :func:`auditkit.ingest.parallel.parse_only`), so that no part is encoded by a
    worker and read back by the validation. Otherwise (a Dask cluster, gzip logs, more logs) the workers
    write a folder and validate it."""
    if args.scheduler is not None:
        return False
    if args.workers == 1:
        return True
    from ..ingest.parallel import default_ingest_workers, parse_only
    from ..ingest.sources import discover, profile_files

    files = profile_files(args.paths, profile) if profile is not None else \
        discover(args.paths, (), follow_symlinks=args.follow_symlinks)
    if args.workers is None and default_ingest_workers(files, None) == 1:
        return True
    return profile is None and parse_only(files, HOLD_LOG_BYTES)


def _check(store, config, args: argparse.Namespace, show: bool, tally=None, workers: int | None = None):
    """(findings, rounds checked) of a store, with a progress bar on a terminal; ``tally`` gets the coverage."""
    from ..progress import on_terminal, progress_bar
    from ..validate import collect

    bar = progress_bar(store.count() if show and on_terminal() else None, "validate", " rounds", show)
    try:
        return collect(store, config, games=args.game or None, citations=args.citation or None,
                       workers=workers or args.workers, scheduler=args.scheduler,
                       progress=bar.update if bar is not None else None, tally=tally)
    finally:
        if bar is not None:
            bar.close()


def check_engine(args: argparse.Namespace) -> None:
    """Check ``--workers``, ``--engine`` and ``--scheduler`` as the job file's are checked
    (:func:`auditkit.engine.options.engine_options`: exit 2 naming the option, its value and the reason)."""
    from ..engine.options import COMMAND_LINE, engine_options

    engine_options(args.workers, args.engine, args.scheduler, "command line", COMMAND_LINE)


def _nothing_checked(args: argparse.Namespace, store, checked: int, report) -> str | None:
    """The warning of a run that checked no round, or None: logs holding none (``report``: the one-shot's
    ingest), a store holding none, or a store with rounds of none of the ``--game`` games."""
    from ..empty_work import no_match, no_rounds

    if checked:
        return None
    if report is not None and (empty := no_rounds(report.sources)):
        return empty
    if not (report.total("stored") if report is not None else store.count()):  # the one-shot's store is gone
        return f"{no_match({})}: nothing was checked"
    return no_match({"--game": " --game ".join(args.game)}) if args.game else None


def run(args: argparse.Namespace) -> int:
    from ..paytables import load_config
    from ..report import Outputs, format_summary, write_csv, write_outputs
    from ..reportcontext import describe_filters
    from ..reportcoverage import format_coverage
    from ..rules.tally import Tally
    from ..store import Store

    filters = describe_filters({"--game": args.game, "--citation": args.citation})
    args.citation = check_citations(args.citation, args.game)
    check_engine(args)
    config = load_config(args.config)
    profile = load_profile_arg(args)
    require_output(args, OUTPUTS)
    prepare_outputs(output_paths(args), html=args.html)
    if profile is None:
        refuse_exports(args.paths)
    show = not args.no_progress and not args.quiet
    problem = None
    tally = Tally()
    quarantine = None
    report = None
    if len(args.paths) == 1 and Store.is_store(args.paths[0]):
        store = Store(args.paths[0])
        with store.lock(args.lock_timeout, shared=True, command="validate"):
            findings, checked = _check(store, config, args, show, tally)
            context = _context(store, args, config, filters)
    else:
        held = holds_its_store(args, profile)
        with temporary_store() as tmp, contextlib.ExitStack() as stack:  # a held store spills to tmp past HOLD_BYTES
            store = Store.in_memory(HOLD_BYTES, spill=tmp) if held else Store(tmp)
            stack.enter_context(store.sole_writer())  # private to this run
            report = ingest_with_progress(args.paths, store, follow_symlinks=args.follow_symlinks, show=show,
                                          workers=args.workers, scheduler=args.scheduler, profile=profile,
                                          private=True)
            require_logs(report, args.paths)
            if not args.quiet:
                print(report.summary(), file=sys.stderr)
            report_quarantine(report, store)
            if args.quarantine_report:
                write_csv(store.quarantine_frames(), args.quarantine_report)
            problem = quarantine_problem(report, store, args.max_quarantined)
            quarantine = store.quarantine() if args.xlsx else None  # the temporary store goes with the block
            require_rounds(report, store)
            store.compact()  # the small parts read as one a partition
            findings, checked = _check(store, config, args, show, tally, 1 if held else args.workers)
            context = _context(store, args, config, filters)
    coverage = tally.table()
    unmatched = _nothing_checked(args, store, checked, report)
    if unmatched:
        print(f"auditkit: warning: {unmatched}", file=sys.stderr)
    if quarantine is None and args.xlsx:
        quarantine = store.quarantine()
    write_outputs(Outputs(args.out, parquet=args.parquet, summaries=args.summaries, xlsx=args.xlsx, html=args.html),
                  findings, coverage, {"inputs": ", ".join(map(str, args.paths)), "rounds checked": checked,
                                       "findings": len(findings)}, quarantine=quarantine, context=context)
    if not args.quiet:  # -q: errors and warnings only
        print(format_summary(findings, checked, filters) + (f"\nwarning: {unmatched}" if unmatched else ""))
        print(format_coverage(coverage, see=coverage_written(args)))
        print(f"report: {', '.join(str(p) for p in (args.out, args.parquet, args.summaries, args.xlsx, args.html) if p)}")
    if problem:  # the reports are written; the run still could not do its job
        print(f"auditkit: error: {problem}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_FINDINGS if len(findings) else EXIT_CLEAN
