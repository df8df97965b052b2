"""The parser and the one mapping of outcomes to exit statuses.

0 no finding, 1 findings written, 2 the run could not be done: bad arguments,
unreadable input, store or configuration, a locked store, a full disk, or a
bug ("internal error", never 1). No traceback reaches the user unless ``-v``
asks for it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Sequence

from .. import __version__
from . import ingest, profile, report, review, rules, run, score, simulate, validate, verify, watch
from .common import EXIT_ERROR, UsageError

COMMANDS = (ingest, validate, simulate, rules, run, report, score, watch, profile, review, verify)


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: X)`` after every option's help; ``(default: none)`` when not giving it means nothing is done."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is argparse.SUPPRESS or "default" in text or "when not given" in text:
            return text
        if action.default is None:
            return text + " (default: none)" if action.option_strings else text
        return super()._get_help_string(action) or ""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 as well; keep its message
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _log_options(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="more log output (-vv: debug lines with their time, and tracebacks)")
    parser.add_argument("-q", "--quiet", action="store_true", default=default,
                        help="warnings and errors only, no progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The ``auditkit`` parser with every subcommand; ``-v``/``-q`` go before or after the subcommand."""
    p = _Parser(prog="auditkit", description="Audit casino table-game hand histories against 68 IAC 10.",
                formatter_class=_Formatter)
    p.add_argument("--version", action="version", version=f"auditkit {__version__}")
    _log_options(p, 0)
    p.set_defaults(quiet=False)
    common = argparse.ArgumentParser(add_help=False)
    _log_options(common, argparse.SUPPRESS)  # after the subcommand too, without resetting the global ones
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub, parents=[common], formatter_class=_Formatter)
    return p


class _Message(logging.Formatter):
    """A log record as the commands' own messages read: ``auditkit: warning: skip a.csv: ...``,
    ``auditkit: ingested ...`` (``-v``); never a raw log line with a time and a logger's name."""

    def format(self, record: logging.LogRecord) -> str:
        level = f"{record.levelname.lower()}: " if record.levelno >= logging.WARNING else ""
        text = f"auditkit: {level}{record.getMessage()}"
        return text + "\n" + self.formatException(record.exc_info) if record.exc_info else text


def _setup_logging(verbose: int, quiet: bool) -> None:
    """Warnings (``-q``: the same), ``-v`` informational lines, ``-vv`` debug lines with their time and logger."""
    level = logging.WARNING if quiet else (logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s") if level == logging.DEBUG
                         else _Message())
    logging.basicConfig(level=level, handlers=[handler])


def _expected_errors() -> tuple[type[BaseException], ...]:
    """Errors that say why a run cannot be done; their message is all the user needs."""
    import pyarrow as pa

    from ..ingest.identity import InputError
    from ..job import JobError
    from ..paytables import ConfigError

    return UsageError, InputError, ConfigError, JobError, OSError, pa.ArrowException


def _mistyped(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Refuse a command, action or option that does not exist, suggesting the closest ones (``valdate``:
    did you mean ``validate``?, ``--ouput``: ``--out``?), before argparse would say only what is missing or
    print the top-level usage."""
    import difflib

    sub = _subcommands(parser)
    command = next((t for t in argv if not t.startswith("-")), None)
    if command is None or sub is None:
        return
    target = _choose(sub, command, "unknown command", "auditkit --help")
    inner = _subcommands(target)  # auditkit profile ACTION, auditkit review ACTION
    after = argv[list(argv).index(command) + 1:]
    action = next((t for t in after if not t.startswith("-")), None)
    if inner is not None and action is not None:
        _choose(inner, action, f"auditkit {command}: unknown action", f"auditkit {command} --help")
    parsers = [target] + [p for a in target._actions if isinstance(a, argparse._SubParsersAction)
                          for p in a.choices.values()]  # a command's actions (auditkit review import)
    known = list(dict.fromkeys(o for p in parsers for o in p._option_string_actions if o.startswith("--")))
    for token in after:
        if token == "--":
            return
        name = token.split("=", 1)[0]
        if not name.startswith("--") or name in known or any(k.startswith(name) for k in known):
            continue
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else f"; see auditkit {command} --help"
        raise UsageError(f"auditkit {command}: unknown option {name}{hint}")


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _choose(sub: argparse._SubParsersAction, name: str, unknown: str, helps: str) -> argparse.ArgumentParser:
    """The parser of command ``name``; an unknown one is refused with the closest (``valdate``: did you mean
    ``validate``?)."""
    import difflib

    if name in sub.choices:
        return sub.choices[name]
    close = difflib.get_close_matches(name, list(sub.choices), n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else f"one of {', '.join(sub.choices)} (see {helps})"
    raise UsageError(f"{unknown} {name!r}; {hint}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 no finding, 1 findings written, 2 could not be done)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        _mistyped(parser, argv)
        args = parser.parse_args(argv)
        args.command_line = argv  # a report's provenance names the command
    except UsageError as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    _setup_logging(args.verbose, args.quiet)
    from ..workers import keep_freed_memory, start_fork_server, terminate_on_sigterm

    keep_freed_memory()  # a command's batches and blocks reuse what the last freed (docs/benchmarks.md)
    if (getattr(args, "workers", None) or 0) > 1 and getattr(args, "engine", None) != "dask" \
            and not getattr(args, "scheduler", None):
        start_fork_server()  # it imports the workers' modules while this process imports its own

    try:
        with terminate_on_sigterm():  # SIGTERM leaves every with block (workers reaped) as SIGINT does
            return args.func(args)
    except KeyboardInterrupt:
        print("auditkit: error: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - every failure is exit 2 with one line, never 1 or a traceback
        from ..ingest.profiles.source import redact  # no password of a URL in any message

        if args.verbose:
            print(redact(traceback.format_exc()), end="", file=sys.stderr)
        if isinstance(exc, _expected_errors()):
            print(f"auditkit: error: {redact(_describe(exc))}", file=sys.stderr)
        else:
            print(f"auditkit: error: internal error: {type(exc).__name__}: {redact(str(exc))} (run with -v for the "
                  "traceback)", file=sys.stderr)
        return EXIT_ERROR


def _describe(exc: BaseException) -> str:
    """The one-line message of an expected error."""
    import pyarrow as pa

    if isinstance(exc, pa.ArrowException):
        return f"cannot read a store file (corrupt or truncated?): {exc}"
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)
