"""What the commands share: exit statuses, argument checks, the configuration, the quarantine summary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..status import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS

__all__ = ["EXIT_CLEAN", "EXIT_FINDINGS", "EXIT_ERROR", "DEFAULT_LOCK_TIMEOUT", "UsageError", "positive", "ingest_with_progress"]

DEFAULT_LOCK_TIMEOUT = 60.0  # seconds ingest, validate and report wait for the store's lock


class UsageError(Exception):
    """A run that cannot be done; the message says why (exit status 2)."""


def add_lock_timeout(parser: argparse.ArgumentParser, default: float | None) -> None:
    """The ``--lock-timeout`` option: seconds to wait for another process holding the store."""
    parser.add_argument("--lock-timeout", type=non_negative, default=default, metavar="SECONDS",
                        help="seconds to wait for another auditkit process holding the store's lock"
                        + ("" if default is not None else " (default: the job's lock_timeout)"))


def add_engine(parser: argparse.ArgumentParser, workers_default: str,
               work: str = "parse the logs and validate (game, day) partitions") -> None:
    """The ``--workers``, ``--engine`` and ``--scheduler`` options (docs/scaling.md); all default to None."""
    parser.add_argument("--workers", type=positive_int, metavar="N",
                        help=f"{work} in this many processes (default: {workers_default})")
    parser.add_argument("--engine", choices=["local", "dask"],
                        help="local: processes on this machine (--workers); dask: tasks on a dask.distributed "
                             "cluster (--scheduler; the dask extra)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="the Dask cluster's scheduler (tcp://host:8786; implies --engine dask); every worker "
                             "must see the store (a shared folder or an s3:// URI) and the logs, at the same paths")


def number(spec: dict[str, Any], integer: bool = False) -> Callable[[str], Any]:
    """An argparse type: a number (an integer) in ``spec``'s range, checked as a job file's numbers are
    (``values.number_reason``), so a value reads the same wherever it is given."""

    def parse(text: str) -> Any:
        from ..values import number_reason

        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if integer else 'a number'}, not {text!r}") from None
        reason = number_reason(value, spec, integer=integer)
        if reason:
            raise argparse.ArgumentTypeError(f"{reason}, not {text}")
        return value

    return parse


positive_int = number({"min": 1}, integer=True)
non_negative_int = number({"min": 0}, integer=True)
positive = number({"above": 0})
non_negative = number({"min": 0})
fraction = number({"min": 0, "max": 1})


class _Later(Sequence[str]):
    """An argument's choices, looked up only when the parser needs them (a value to check, a help or an
    error to show), so that the command line starts without importing what lists them."""

    def __init__(self, find: Callable[[], Sequence[str]]):
        self._find = find

    def __getitem__(self, index: Any) -> Any:
        return self._find()[index]

    def __len__(self) -> int:
        return len(self._find())

    def __contains__(self, value: object) -> bool:
        return value in self._find()

    def __iter__(self) -> Iterator[str]:
        return iter(self._find())


def add_choice(parser: argparse.ArgumentParser, *flags: str, choices: Callable[[], Sequence[str]],
               **kw: Any) -> argparse.Action:
    """An argument whose values are ``choices()``, called only when the parser needs them."""
    action = parser.add_argument(*flags, **kw)
    action.choices = _Later(choices)  # after add_argument, which formats the choices (and would call it)
    return action


def game_names() -> tuple[str, ...]:
    """Every known game (the game packages are imported, and pyarrow with them)."""
    from ..games import names

    return names()


def add_game(parser: argparse.ArgumentParser, *flags: str, **kw: Any) -> argparse.Action:
    """An argument whose values are the known games (:func:`game_names`, looked up when needed)."""
    return add_choice(parser, *flags, choices=game_names, **kw)


CITATION_ACT = "68 IAC "


def _key(text: str) -> str:
    """A citation or rule id as compared: no spaces, lower case (``68 IAC 10-10-14 (B)`` is ``68iac10-10-14(b)``)."""
    return "".join(text.split()).lower()


def _heads(citations: Sequence[str]) -> list[str]:
    """Every citation and every prefix of one that ends a parenthesis (``68 IAC 10-10-14(b)`` of ``...(b)(5)``)."""
    out: dict[str, None] = {}
    for c in citations:
        for i, ch in enumerate(c):
            if ch == ")":
                out[c[:i + 1]] = None
        out[c] = None
    return list(out)


def _short_forms(head: str) -> set[str]:
    """The keys a citation is also written as: without ``68 IAC`` (``10-10-14(b)``) and by its last section
    number only (``14(b)``)."""
    key = _key(head)
    forms = {key}
    act = _key(CITATION_ACT)
    if key.startswith(act):
        short = key[len(act):]
        forms.add(short)
        section = short.split("(", 1)
        if len(section) == 2:
            forms.add(section[0].rsplit("-", 1)[-1] + "(" + section[1])
    return forms


def _closest(value: str, candidates: Sequence[str], n: int = 5) -> list[str]:
    """The ``n`` candidates most like ``value``, compared also to their short forms, best first."""
    import difflib

    key = _key(value)

    def score(c: str) -> float:
        return max(difflib.SequenceMatcher(None, key, form).ratio() for form in _short_forms(c) | {_key(c)})

    scored = sorted(((score(c), i, c) for i, c in enumerate(candidates)), key=lambda t: (-t[0], t[1]))
    return [c for s, _, c in scored if s >= 0.6][:n]


def check_citations(citations: Sequence[str] | None, games: Sequence[str] | None = None) -> list[str] | None:
    """The checks ``--citation`` names, as citations and rule ids the engine selects by: each value a
    citation (``68 IAC 10-10-14(b)(5)``), a rule id (``baccarat.b5``, as ``auditkit rules`` lists it),
    a citation's prefix (``68 IAC 10-10-14(b)``: every subsection under it), or a short form of one of
    them (``10-10-14(b)``, ``14(b)``, ``b5``) when it names one only; spaces and case do not count. An
    unknown or ambiguous value is refused with the closest known ones, one per line."""
    if not citations:
        return None
    from ..rules.registry import catalog_rows

    rows = [r for r in catalog_rows(None) if not games or any(g in r["games"].split(", ") for g in games)]
    known = list(dict.fromkeys(r["citation"] for r in rows))
    ids = [r["rule_id"] for r in rows]
    heads = _heads(known)
    out: list[str] = []
    for value in citations:
        key = _key(value)
        full = [r for r in ids if _key(r) == key] or [h for h in heads if _key(h) == key]
        found = full or ([r for r in ids if _key(r.split(".", 1)[-1]) == key]
                         + [h for h in heads if key and key in _short_forms(h)])
        if len(found) != 1:
            hint = found or _closest(value, heads + ids)
            closest = ("; it could be:" if found else "; the closest:") + "\n  " + "\n  ".join(hint) if hint else ""
            raise UsageError(f"{'ambiguous' if found else 'unknown'} citation {value!r} (a citation, its prefix or a "
                             f"rule id, as `auditkit rules` lists them{' for ' + ', '.join(games) if games else ''})"
                             f"{closest}")
        head = found[0]
        out.extend([head] if head in ids else [c for c in known if c == head or c.startswith(head + "(")])
    return list(dict.fromkeys(out))


def report_quarantine(report: Any, store: Any) -> None:
    """Say on stderr how many lines of this run were quarantined, with the first few."""
    n = report.total("quarantined")
    if not n:
        return
    q = store.quarantine_table({s.sha256 for s in report.sources}, ["source_file", "line", "reason"], limit=20)
    print(f"auditkit: {n} line(s) quarantined", file=sys.stderr)
    for r in q.to_pylist():
        print(f"  {r['source_file']}:{r['line']}: {r['reason']}", file=sys.stderr)
    if n > 20:
        print(f"  ... and {n - 20} more (see the quarantine report)", file=sys.stderr)


def add_max_quarantined(parser: argparse.ArgumentParser) -> None:
    """The ``--max-quarantined FRACTION`` option (exit 2 past that share of quarantined lines)."""
    parser.add_argument("--max-quarantined", type=fraction, metavar="FRACTION",
                        help="exit 2 (after writing the reports) when more than this share of the round lines read "
                             "is quarantined; a run whose every line is quarantined is exit 2 anyway (default: none)")


def add_dedup_memory(parser: argparse.ArgumentParser) -> None:
    """The ``--dedup-memory MIB`` option (the memory for holding the store's round-id hashes)."""
    parser.add_argument("--dedup-memory", type=number({"min": 0}), metavar="MIB",
                        help="memory for holding the store's round-id hashes (up to 20 bytes a round) in the "
                             "duplicate check; a larger store streams them past each file (docs/scaling.md) "
                             "(default: 256)")


def quarantine_problem(report: Any, store: Any, max_quarantined: float | None) -> str | None:
    """Why this ingest's quarantine fails the run (all its lines, or more than ``max_quarantined``), or None."""
    from ..empty_work import quarantine_problem as problem

    if not report.total("quarantined"):
        return None
    return problem(report.sources, store.quarantine_reasons({s.sha256 for s in report.sources}), max_quarantined)


def prepare_outputs(paths: Sequence[str | Path | None], html: str | Path | None = None) -> None:
    """Before any work: refuse an output that is a folder or cannot be written (its folder missing and not
    creatable, read-only, not a folder), and an HTML page (``html``) that cannot be drawn here; remove the
    temporary files killed writers of the outputs left."""
    from ..store import remove_stale_temps

    if html:
        from ..runreport import cannot_draw

        if why := cannot_draw():
            raise UsageError(f"--html {html}: {why}")
    outputs = [Path(p) for p in paths if p]
    for p in outputs:
        check_writable(p)
    remove_stale_temps(outputs)


def check_writable(path: Path) -> None:
    """Refuse an output file that cannot be written: a folder, or one whose nearest existing folder refuses
    a new file (tried with an empty temporary file, removed at once; nothing else is created)."""
    import tempfile

    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not a file to write")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"cannot write {path}: {folder} is not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".auditkit-write-check-"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write {path}: cannot create a file in {folder} ({exc.strerror or exc})") from None


def require_output(args: argparse.Namespace, options: Sequence[str]) -> None:
    """Refuse a run that would write nothing: one of ``options`` (``--out``, ``--xlsx``...) must be given."""
    if not any(getattr(args, o.lstrip("-").replace("-", "_")) for o in options):
        raise UsageError(f"nothing to write: give {', '.join(options[:-1])} or {options[-1]}")


EXPORTS = ((b"PK\x03\x04", "a ZIP file (an Excel workbook?)"), (b"SQLite format 3\x00", "a SQLite database"),
           (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel workbook (.xls)"), (b"PAR1", "a Parquet file"))
"""The first bytes of the exports (and other files) that are never a round log, and what they are."""


def export_kind(path: Path) -> str | None:
    """What a file named as a log is when it is a vendor's export, not a round log: a workbook, a
    database, a CSV without the round log's columns; None for anything else (the readers judge it)."""
    from ..ingest.csv import is_companion, is_round_csv

    if not path.is_file():
        return None
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    for magic, kind in EXPORTS:
        if head.startswith(magic):
            return "an Excel workbook" if magic == b"PK\x03\x04" and path.suffix.lower() in (".xlsx", ".xlsm") else kind
    if path.name.lower().endswith(".csv") and not is_companion(path) and not is_round_csv(path):
        return "a CSV whose header lacks round_id, game, table_id or started_at"
    return None


PROFILE_HINT = ("a vendor's export is read through an import profile: `auditkit profile suggest {file} --out "
                "PROFILE.toml` drafts one, then give --profile PROFILE.toml (docs/profiles.md)")


def refuse_exports(paths: Sequence[str | Path]) -> None:
    """Before any work, refuse a file named without ``--profile`` that is an export, not a round log,
    naming ``--profile`` and ``auditkit profile suggest``."""
    import shlex

    for raw in paths:
        if kind := export_kind(Path(raw)):
            raise UsageError(f"{raw}: not a round log ({kind}); " + PROFILE_HINT.format(file=shlex.quote(str(raw))))


def add_profile(parser: argparse.ArgumentParser) -> None:
    """The ``--profile`` option: read the inputs through an import profile (docs/profiles.md)."""
    parser.add_argument("--profile", metavar="TOML",
                        help="read the inputs as a vendor's export through this import profile (docs/profiles.md)")


def load_profile_arg(args: argparse.Namespace) -> Any:
    """The import profile ``--profile`` names, validated (a bad one is exit 2); None when not given."""
    if not getattr(args, "profile", None):
        return None
    from ..ingest.profiles import load_profile

    return load_profile(args.profile)


def require_logs(report: Any, paths: Sequence[str | Path]) -> None:
    """Refuse an ingest that met no log file at all (an empty folder, only ``.json`` files)."""
    if not any(e.get("status") in ("ingested", "already ingested") for e in report.files):
        csvs = [path for path, why in report.skipped if why.startswith("not a round log")]
        hint = (f"; {len(csvs)} CSV file(s) without the round log's columns, such as {csvs[0]}: "
                + PROFILE_HINT.format(file="FILE")) if csvs else ""
        raise UsageError(f"no log file (.jsonl, .jsonl.gz, .ndjson, .csv of rounds) in {', '.join(map(str, paths))}"
                         + hint)


def require_rounds(report: Any, store: Any = None) -> None:
    """Refuse a run whose every line read was quarantined (after the reasons were printed), with the
    three most common reasons when the ``store`` holding its quarantine is given."""
    if report.sources and report.total("quarantined") and not (report.total("stored") or
                                                               report.total("already_stored")):
        head = (quarantine_problem(report, store, None) if store is not None else None) or (
            f"every line read was quarantined ({report.total('quarantined')}), no round stored")
        raise UsageError(f"{head} (see the reasons above; a vendor's export is read through an import profile: "
                         "--profile, docs/profiles.md; `auditkit profile suggest FILE` drafts one)")


def ingest_with_progress(paths: Sequence[str | Path], store: Any, *, follow_symlinks: bool, show: bool,
                         max_line: int | None = None, workers: int | None = None, scheduler: str | None = None,
                         profile: Any = None, dedup_memory: float | None = None, private: bool = False) -> Any:
    """Ingest ``paths`` into ``store``, with a bar of each file's bytes and rounds per second on a
    terminal; the ingest report. ``workers`` (None: the machine's cores) or a Dask ``scheduler``
    parse the files (docs/scaling.md); ``profile`` (an import profile) reads them through it;
    ``dedup_memory`` as in :func:`auditkit.ingest.sources.ingest_paths`."""
    from ..ingest.jsonl import MAX_LINE
    from ..ingest.sources import ingest_paths

    return ingest_paths(paths, store, follow_symlinks=follow_symlinks, progress=show, max_line=max_line or MAX_LINE,
                        workers=workers, scheduler=scheduler, profile=profile, dedup_memory=dedup_memory,
                        private=private)
