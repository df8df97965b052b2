"""Scheduled batch validation: ``auditkit run JOB.toml`` and ``auditkit report``.

A job file (TOML; nothing in it is executed) names the logs, the store, the
output folder, the configuration and what to check::

    name = "nightly"                      # optional; default: the job file's stem
    inputs = ["logs/**/*.jsonl*", "/data/csv"]   # globs, files or folders
    store = "store"
    output = "reports"
    config = "casino.toml"                # optional paytable / house-rules file
    games = ["baccarat", "blackjack"]     # optional; default every game
    citations = ["68 IAC 10-10-14(b)(5)"] # optional; default every check
    fail_on = "high"                      # any | low | medium | high | none
    lock_timeout = 0                      # seconds to wait for a running job (0: refuse)
    notebooks = false                     # true (or a list of names) renders the notebooks to HTML in the run folder

    [settings.baccarat]                   # optional inline overrides, same shape as a config file
    tie = 9.0

    [limits]                              # optional blackjack table limits by table id or glob
    "BJ-*" = { min = 25, max = 1000 }

Relative paths are relative to the job file. A run takes the store's lock,
ingests the files whose content (SHA-256) the store has not seen, validates
the partitions those files touched (plus the stored day after each, whose shoe
rules read the day before), and writes its outputs to a hidden folder renamed
into ``<output>/<local date>/<run id>/`` once complete. The sources it validated
are then recorded in ``<store>/_jobs/<job name>.json``; a source committed to
the store but not recorded there (a run killed after ingesting) is validated
by the next run. See docs/batch.md.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import glob
import hashlib
import json
import logging
import os
import platform
import shutil
import sys
import time
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date as Date
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["Job", "JobError", "JobLocked", "load_job", "run_job", "job_lock", "cmd_run", "cmd_report",
           "add_subcommands", "SEVERITY_RANK", "FAIL_ON"]

log = logging.getLogger("auditkit.job")

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SEVERITY_RANK = {"low": 1, "medium": 2, "high": 3}
FAIL_ON = {"any": 1, "low": 1, "medium": 2, "high": 3, "none": 99}
KEYS = {"name", "inputs", "store", "output", "config", "settings", "limits", "games", "citations", "fail_on",
        "lock_timeout", "notebooks"}
LOCK_NAME = ".auditkit.lock"
GLOB_CHARS = set("*?[")


class JobError(ValueError):
    """A job that cannot run (bad job file, missing input, unusable configuration)."""


class JobLocked(JobError):
    """Another run holds the store's lock."""


# ---- the job file ---------------------------------------------------------------------------
@dataclass
class Job:
    """A validated job file; paths are absolute."""

    path: Path
    name: str
    inputs: list[str]
    store: Path
    output: Path
    config_path: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, dict[str, float]] = field(default_factory=dict)
    games: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    fail_on: str = "any"
    lock_timeout: float = 0.0
    notebooks: bool | list[str] = False
    sha256: str = ""

    def config(self):
        """The merged configuration: defaults, the config file, ``[settings]``, then ``[limits]``."""
        from .paytables import load_config, merge_config

        over = json.loads(json.dumps(self.settings))  # a deep copy of plain TOML data
        tables = over.setdefault("tables", {})
        for pattern, lim in self.limits.items():
            bj = tables.setdefault(pattern, {}).setdefault("blackjack", {})
            bj.update({f"table_{k}": v for k, v in lim.items()})
        cfg = load_config(self.config_path)
        source = str(self.config_path) if self.config_path else "defaults"
        if self.settings or self.limits:
            cfg = merge_config(cfg, over, source + " + job settings")
        return cfg


def _strings(raw: dict[str, Any], key: str, where: Path) -> list[str]:
    value = raw.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise JobError(f"{where}: {key} must be a list of non-empty strings")
    return value


def _path(raw: dict[str, Any], key: str, base: Path, where: Path, required: bool = True) -> Path | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise JobError(f"{where}: {key} must be a path (a non-empty string)")
    return (base / Path(value).expanduser()).resolve()


def load_job(path: str | Path) -> Job:
    """Read and check a job file; JobError says what is wrong."""
    from .games import names

    GAMES = names()
    from .store import safe_component

    path = Path(path).resolve()
    try:
        text = path.read_bytes()
        raw = tomllib.loads(text.decode("utf-8"))
    except OSError as exc:
        raise JobError(f"cannot read job file {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise JobError(f"job file {path} is not valid TOML: {exc}") from exc
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise JobError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    base = path.parent
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise JobError(f"{path}: name must be a non-empty string")
    inputs = _strings(raw, "inputs", path)
    if not inputs:
        raise JobError(f"{path}: inputs is required (globs, files or folders of logs)")
    games = _strings(raw, "games", path)
    bad = [g for g in games if g not in GAMES]
    if bad:
        raise JobError(f"{path}: unknown game(s) {', '.join(bad)} (known: {', '.join(GAMES)})")
    citations = _strings(raw, "citations", path)
    if citations:
        from .rules.registry import catalog

        known = set(catalog()["citation"])
        bad = [c for c in citations if c not in known]
        if bad:
            raise JobError(f"{path}: unknown citation(s) {', '.join(map(repr, bad))} (see `auditkit rules`)")
    fail_on = raw.get("fail_on", "any")
    if fail_on not in FAIL_ON:
        raise JobError(f"{path}: fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    timeout = raw.get("lock_timeout", 0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise JobError(f"{path}: lock_timeout must be a number of seconds >= 0")
    notebooks = raw.get("notebooks", False)
    if not isinstance(notebooks, bool):
        from .notebooks import NOTEBOOKS

        if not isinstance(notebooks, list) or not notebooks or set(notebooks) - set(NOTEBOOKS):
            raise JobError(f"{path}: notebooks must be true, false or a list of {', '.join(NOTEBOOKS)}")
    settings = raw.get("settings", {})
    if not isinstance(settings, dict):
        raise JobError(f"{path}: [settings] must be a table")
    limits = raw.get("limits", {})
    if not isinstance(limits, dict):
        raise JobError(f"{path}: [limits] must be a table of table id (or glob) = {{min = .., max = ..}}")
    for table, lim in limits.items():
        if not isinstance(lim, dict) or not lim or set(lim) - {"min", "max"} or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in lim.values()):
            raise JobError(f"{path}: limits.{table} must be {{min = <number>, max = <number>}}")
        if "min" in lim and "max" in lim and lim["min"] > lim["max"]:
            raise JobError(f"{path}: limits.{table}: min is above max")
    store = _path(raw, "store", base, path)
    output = _path(raw, "output", base, path)
    job = Job(path=path, name=safe_component(name), inputs=inputs, store=store, output=output,  # type: ignore[arg-type]
              config_path=_path(raw, "config", base, path, required=False), settings=settings, limits=limits,
              games=games, citations=citations, fail_on=fail_on, lock_timeout=float(timeout), notebooks=notebooks,
              sha256=hashlib.sha256(text).hexdigest())
    job.config()  # fail now on a bad configuration (ConfigError)
    return job


def expand_inputs(job: Job) -> tuple[list[Path], list[str]]:
    """Files and folders the job's inputs name now, and the globs that matched nothing.

    A literal path that does not exist is an error; a glob matching nothing
    (an empty night) is not. Globs are expanded with :mod:`glob` (``**``
    recursive, hidden files skipped); nothing is executed.
    """
    base = job.path.parent
    found: list[Path] = []
    empty: list[str] = []
    for pattern in job.inputs:
        full = base / Path(pattern).expanduser()
        if GLOB_CHARS & set(pattern):
            hits = sorted(glob.glob(str(full), recursive=True))
            if not hits:
                empty.append(pattern)
            found.extend(Path(h) for h in hits)
        elif full.exists():
            found.append(full)
        else:
            raise JobError(f"input {pattern!r} does not exist ({full})")
    return list(dict.fromkeys(p.resolve() for p in found)), empty


# ---- the lock -------------------------------------------------------------------------------
@contextlib.contextmanager
def job_lock(store: Path, timeout: float, owner: str) -> Iterator[Path]:
    """Hold the store's lock (``fcntl.flock`` on ``<store>/.auditkit.lock``) for the run.

    Waits up to ``timeout`` seconds for a running job, then raises JobLocked.
    The kernel releases the lock when the process ends, however it ends, so a
    killed run never leaves a stale lock. Local file systems only (not NFS).
    """
    import fcntl

    store.mkdir(parents=True, exist_ok=True)
    path = store / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 500, 0).decode("utf-8", "replace").strip() or "another process"
                    raise JobLocked(f"store {store} is locked by {holder}"
                                    + (f" (waited {timeout:g} s)" if timeout else " (lock_timeout = 0)")) from None
                if not waited:
                    log.info("waiting up to %g s for the lock on %s", timeout, store)
                    waited = True
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({owner}) since {_now_iso()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock


# ---- state: which committed sources this job has validated ---------------------------------
def _state_path(job: Job) -> Path:
    return job.store / "_jobs" / f"{job.name}.json"


def _load_state(job: Job) -> set[str]:
    p = _state_path(job)
    if not p.exists():
        return set()
    try:
        return set(json.loads(p.read_text("utf-8"))["validated"])
    except (ValueError, KeyError, TypeError) as exc:
        raise JobError(f"job state {p} is unreadable: {exc}") from exc


def _save_state(job: Job, validated: set[str], run_id: str) -> None:
    from .store import atomic_path

    with atomic_path(_state_path(job)) as tmp:
        tmp.write_text(json.dumps({"job": job.name, "last_run": run_id, "updated_at": _now_iso(),
                                   "validated": sorted(validated)}, indent=1), "utf-8")


# ---- the run --------------------------------------------------------------------------------
def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunResult:
    """What a run did: its exit status, record and output folder."""

    exit_code: int
    record: dict[str, Any]
    folder: Path


def _ingest(files: list[Path], store, bar, exclude: tuple[Path, ...] = ()) -> tuple[list[dict[str, Any]], list]:
    """Ingest every log under ``files`` not seen before; one input entry per file for the run record.

    Files under ``exclude`` (the job's output and store folders) are never inputs:
    a findings CSV has the columns of a round CSV.
    """
    from .ingest.sources import discover, ingest_paths

    if bar is not None:
        bar.total = len(discover(files, exclude))
    report = ingest_paths(files, store, exclude=exclude, on_file=(lambda _p: bar.update(1)) if bar is not None else None)
    return report.files, report.sources


def _partition_findings(store, parts: set[tuple[str, str]]):
    import pandas as pd

    from .validate import empty_findings, sort_findings

    frames = [store.findings([g], d, d) for g, d in sorted(parts)]
    frames = [f for f in frames if len(f)]
    return sort_findings(pd.concat(frames, ignore_index=True)) if frames else empty_findings()


def _clean_partials(output: Path, job_name: str) -> None:
    """Remove output folders that a killed run of this job left unfinished."""
    for p in output.glob(f"*/.{job_name}-*.partial"):
        log.warning("removing the unfinished output of an interrupted run: %s", p)
        shutil.rmtree(p, ignore_errors=True)


def run_job(job: Job, *, fail_on: str | None = None, progress: bool = True,
            lock_timeout: float | None = None) -> RunResult:
    """Run a job once under the store's lock; see the module docstring."""
    from . import __version__
    from . import report as rep
    from .store import Store
    from .cli import progress_bar
    from .validate import validate_into_store, with_next_days

    fail_on = fail_on or job.fail_on
    config = job.config()
    started = datetime.now(timezone.utc)
    t0 = time.monotonic()
    run_id = f"{job.name}-{started:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
    files, empty = expand_inputs(job)
    for pattern in empty:
        log.warning("input %r matched no file", pattern)

    with job_lock(job.store, job.lock_timeout if lock_timeout is None else lock_timeout, run_id):
        log.info("run %s: job %s, store %s", run_id, job.path, job.store)
        store = Store(job.store)
        _clean_partials(job.output, job.name)
        validated = _load_state(job)

        bar = progress_bar(None, "ingest", " files", progress)
        inputs, new = _ingest(files, store, bar, exclude=(job.output, job.store))
        if bar is not None:
            bar.close()

        new_shas = {r.sha256 for r in new}
        pending = [r for r in store.manifest() if r.sha256 not in validated]
        recovered = [r for r in pending if r.sha256 not in new_shas]
        for r in recovered:
            log.warning("validating %s: ingested by an earlier run that did not finish", r.path)
        wanted = set(job.games) if job.games else None
        touched = {tuple(p.split("/", 1)) for r in pending for p in r.partitions}
        touched = {(g, d) for g, d in touched if wanted is None or g in wanted}

        checked = 0
        parts: set[tuple[str, str]] = set()
        if touched:
            parts = with_next_days(store, touched)  # type: ignore[arg-type]
            total = sum(store.count(g, d) for g, d in parts) if progress and sys.stderr.isatty() else None
            bar = progress_bar(total, "validate", " rounds", progress)
            _n, checked = validate_into_store(store, config, only=touched, games=job.games or None,
                                              citations=job.citations or None,
                                              progress=bar.update if bar is not None else None)
            if bar is not None:
                bar.close()
        findings = _partition_findings(store, parts)

        # outputs: written into a hidden folder, renamed into place when complete
        day = Date.fromtimestamp(started.timestamp()).isoformat()  # the run's local date
        final = job.output / day / run_id
        partial = job.output / day / f".{run_id}.partial"
        partial.mkdir(parents=True)
        names = {"findings_csv": "findings.csv", "findings_parquet": "findings.parquet",
                 "quarantine": "quarantine.csv", "record": "run.json"}
        rep.write_csv(findings, partial / names["findings_csv"])
        rep.write_findings_parquet(findings, partial / names["findings_parquet"])
        names.update(rep.write_summaries(findings, partial))
        q = store.quarantine()
        rep.write_csv(q[q["sha256"].isin({r.sha256 for r in pending})], partial / names["quarantine"])

        rendered = _render_notebooks(job, store, parts, partial) if job.notebooks and parts else []
        threshold = FAIL_ON[fail_on]
        ranks = findings["severity"].map(SEVERITY_RANK).fillna(3)
        failing = int((ranks >= threshold).sum())
        status = "nothing new" if not pending else ("findings" if len(findings) else "clean")
        exit_code = EXIT_FINDINGS if failing else EXIT_CLEAN
        record = {
            "run_id": run_id, "job": job.name, "job_file": str(job.path), "job_sha256": job.sha256,
            "tool": "auditkit", "version": __version__, "python": platform.python_version(),
            "host": platform.node(), "pid": os.getpid(),
            "started_at": started.isoformat(timespec="milliseconds"), "ended_at": None, "duration_s": None,
            "status": status, "exit_code": exit_code, "fail_on": fail_on, "findings_failing": failing,
            "configuration": {"source": config.source, "sha256": config.digest()},
            "games": job.games or "all", "citations": job.citations or "all",
            "store": str(job.store), "output": str(final),
            "inputs": {"patterns": job.inputs, "unmatched_globs": empty, "files": inputs},
            "recovered_sources": [{"sha256": r.sha256, "path": r.path} for r in recovered],
            "partitions_validated": [f"{g}/{d}" for g, d in sorted(parts)],
            "counts": {
                "files_seen": len(inputs), "files_ingested": len(new),
                "files_already_ingested": sum(e.get("status") == "already ingested" for e in inputs),
                "files_skipped": sum(e.get("status", "").startswith("skipped") for e in inputs),
                "sources_validated": len(pending),
                "lines_read": sum(r.lines_read for r in new), "rounds_stored": sum(r.stored for r in new),
                "rounds_already_stored": sum(r.already_stored for r in new),
                "lines_quarantined": sum(r.quarantined for r in pending),
                "rounds_checked": checked, "findings": len(findings),
                "rounds_with_findings": int(findings["round_id"].nunique()),
                "findings_by_severity": {s: int((findings["severity"] == s).sum()) for s in SEVERITY_RANK},
            },
            "outputs": names,
            "notebooks": rendered,
        }
        ended = datetime.now(timezone.utc)
        record["ended_at"] = ended.isoformat(timespec="milliseconds")
        record["duration_s"] = round(time.monotonic() - t0, 3)
        from .store import atomic_path

        with atomic_path(partial / names["record"]) as tmp:
            tmp.write_text(json.dumps(record, indent=1, default=str), "utf-8")
        _fsync_dir(partial)
        os.replace(partial, final)
        _fsync_dir(final.parent)
        # last: these sources are validated and reported (a crash before this redoes them next run)
        if pending:
            _save_state(job, validated | {r.sha256 for r in pending}, run_id)
    log.info("run %s: %s, %d finding(s), exit %d; outputs in %s", run_id, status, len(findings), exit_code, final)
    return RunResult(exit_code, record, final)


def _render_notebooks(job: Job, store, parts: set[tuple[str, str]], folder: Path) -> list[str]:
    """Render the auditor notebooks over the validated days to HTML in the run folder.

    A failure is logged and recorded, never fatal: the findings are the job's output.
    """
    try:
        from .notebooks import NOTEBOOK_DIR, NOTEBOOKS, render_all

        if not NOTEBOOK_DIR.is_dir():
            raise FileNotFoundError(f"notebooks folder {NOTEBOOK_DIR} not found (install from a source checkout)")
        days = sorted(d for _g, d in parts)
        names = NOTEBOOKS if job.notebooks is True else job.notebooks
        paths = render_all(store.root, folder / "notebooks", start=days[0], end=days[-1], notebooks=names)
        return [str(p.relative_to(folder)) for p in paths]
    except Exception as exc:  # noqa: BLE001 - any failure of an optional report
        log.error("notebooks not rendered: %s", exc)
        return [f"failed: {exc}"]


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---- commands -------------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    """``auditkit run JOB.toml``: exit 0 clean, 1 findings at or above fail_on, 2 could not run."""
    from .paytables import ConfigError

    try:
        job = load_job(args.job)
        result = run_job(job, fail_on=args.fail_on, progress=not args.no_progress and not args.quiet,
                         lock_timeout=args.lock_timeout)
    except (JobError, ConfigError) as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: still exit 2 ("could not run"), never 1 ("findings")
        print(f"auditkit: error: run failed: {exc!r}", file=sys.stderr)
        log.debug("traceback", exc_info=True)
        return EXIT_ERROR
    if not args.quiet:
        r, c = result.record, result.record["counts"]
        print(f"run {r['run_id']}: {r['status']}; {c['files_ingested']} file(s) ingested, "
              f"{c['files_already_ingested']} already ingested; {c['rounds_checked']} round(s) checked; "
              f"{c['findings']} finding(s), {r['findings_failing']} at or above fail_on={r['fail_on']}; "
              f"{c['lines_quarantined']} line(s) quarantined")
        print(f"outputs: {result.folder}")
    return result.exit_code


def cmd_report(args: argparse.Namespace) -> int:
    """``auditkit report``: re-export stored findings, filtered, as CSV (no re-validation)."""
    from .paytables import ConfigError

    try:
        return _report(args)
    except (JobError, ConfigError, OSError) as exc:
        print(f"auditkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:
        print(f"auditkit: error: report failed: {exc!r}", file=sys.stderr)
        log.debug("traceback", exc_info=True)
        return EXIT_ERROR


def _check_date(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    try:
        return Date.fromisoformat(value).isoformat()
    except ValueError:
        raise JobError(f"{what} must be a date YYYY-MM-DD, not {value!r}") from None


def select_findings(findings, *, tables: list[str] | None = None, citations: list[str] | None = None,
                    severity: str | None = None, dealers: list[str] | None = None):
    """Findings of some tables (ids or globs), citations, dealers, at or above a severity."""
    keep = findings.index == findings.index
    if tables:
        ids = findings["table_id"].fillna("").astype(str)
        uniq = ids.unique()
        ok = {t for t in uniq if any(fnmatch.fnmatchcase(t, pat) for pat in tables)}
        keep &= ids.isin(ok).to_numpy()
    if citations:
        keep &= findings["citation"].isin(citations).to_numpy()
    if dealers:
        keep &= findings["dealer_id"].isin(dealers).to_numpy()
    if severity:
        keep &= (findings["severity"].map(SEVERITY_RANK).fillna(3) >= SEVERITY_RANK[severity]).to_numpy()
    return findings[keep].reset_index(drop=True)


def _report(args: argparse.Namespace) -> int:
    from . import report as rep
    from .store import Store
    from .validate import sort_findings

    if bool(args.store) == bool(args.job):
        raise JobError("give either --store or --job")
    root = Path(args.store) if args.store else load_job(args.job).store
    if not Store.is_store(root):
        raise JobError(f"{root} is not a store (no _manifest or rounds folder)")
    start, end = _check_date(args.start, "--from"), _check_date(args.end, "--to")
    if start and end and start > end:
        raise JobError("--from is after --to")
    store = Store(root)
    validated: set[str] = set()
    for state in (root / "_jobs").glob("*.json"):
        with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
            validated |= set(json.loads(state.read_text("utf-8"))["validated"])
    behind = [r for r in store.manifest() if r.sha256 not in validated]
    if behind:
        print(f"auditkit: warning: {len(behind)} source(s) in the store were never validated by `auditkit run` "
              f"(e.g. {behind[0].path}); their findings are not in this report", file=sys.stderr)
    findings = sort_findings(store.findings(args.game or None, start, end))
    findings = select_findings(findings, tables=args.table, citations=args.citation, severity=args.severity,
                               dealers=args.dealer)
    out = rep.summarize(findings, rep.SUMMARIES[args.summary]) if args.summary else findings
    rep.write_csv(out, args.out)
    if args.parquet:
        rep.write_findings_parquet(findings, args.parquet)
    if not args.quiet:
        print(f"{len(findings)} finding(s) on {findings['round_id'].nunique()} round(s) written to {args.out}")
    return EXIT_CLEAN


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register ``run`` and ``report`` on the CLI's subparsers."""
    from .report import SUMMARIES
    from .games import names

    GAMES = names()

    s = sub.add_parser("run", help="run a scheduled job: ingest what is new, validate it, write dated reports",
                       description="Exit 0: clean or nothing new; 1: findings at or above fail_on; "
                                   "2: the job could not run (bad job file, missing input, store locked).")
    s.add_argument("job", help="job file (TOML); see docs/batch.md")
    s.add_argument("--fail-on", choices=list(FAIL_ON), help="override the job's fail_on threshold")
    s.add_argument("--lock-timeout", type=float, metavar="SECONDS",
                   help="override the job's lock_timeout (seconds to wait for a running job)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar (none anyway when not a TTY)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("report", help="re-export stored findings (a period, games, tables, citations) as CSV",
                       description="Reads the findings stored by earlier runs; nothing is re-validated. "
                                   "Exit 0 when written, 2 on error.")
    s.add_argument("--store", help="store folder")
    s.add_argument("--job", help="take the store from this job file")
    s.add_argument("--out", required=True, help="CSV file to write")
    s.add_argument("--from", dest="start", metavar="YYYY-MM-DD", help="first gaming day (inclusive)")
    s.add_argument("--to", dest="end", metavar="YYYY-MM-DD", help="last gaming day (inclusive)")
    s.add_argument("--game", action="append", choices=GAMES, help="only these games (repeatable)")
    s.add_argument("--table", action="append", help="only these table ids or globs such as 'BJ-*' (repeatable)")
    s.add_argument("--citation", action="append", help="only these citations (repeatable)")
    s.add_argument("--dealer", action="append", help="only these dealer ids (repeatable)")
    s.add_argument("--severity", choices=list(SEVERITY_RANK), help="only findings at or above this severity")
    s.add_argument("--summary", choices=list(SUMMARIES),
                   help="write counts and money by this instead of the findings")
    s.add_argument("--parquet", help="also write the selected findings as Parquet here")
    s.set_defaults(func=cmd_report)
