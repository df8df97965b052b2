"""Scheduled batch validation: the job behind ``auditkit run JOB.toml`` (:func:`run_job`).

A job file (TOML; nothing in it is executed) names the logs, the store, the
output folder, the configuration and what to check::

    name = "nightly"                      # optional; default: the job file's stem
    inputs = ["logs/**/*.jsonl*", "/data/csv"]   # globs, files or folders
    # an input read through an import profile (docs/profiles.md) is a table:
    #   inputs = ["logs/*.jsonl", {path = "exports/*.csv", profile = "acme.toml"}]
    store = "store"
    output = "reports"
    config = "casino.toml"                # optional paytable / house-rules file
    games = ["baccarat", "blackjack"]     # optional; default every game
    citations = ["68 IAC 10-10-14(b)(5)"] # optional; default every check
    fail_on = "high"                      # any | low | medium | high | none
    lock_timeout = 0                      # seconds to wait for a running job (0: refuse)
    follow_symlinks = false               # follow symbolic links out of the input folders
    notebooks = false                     # true (or a list of names) renders the notebooks to HTML in the run folder
    workers = 2                           # optional; ingest and validation processes (default: the cores)
    max_quarantined = 0.05                # optional; exit 2 past this share of quarantined lines
    verify = false                        # true: check the store against its manifest after the ingest (exit 2 when it disagrees)

    [engine]                              # optional; default kind = "local" (the processes above)
    kind = "dask"                         # "local" or "dask" (a dask.distributed cluster; the dask extra)
    scheduler = "tcp://10.0.0.5:8786"     # the scheduler (kind = "dask"); workers see store and inputs

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

import contextlib
import glob
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from datetime import date as Date
from pathlib import Path
from typing import Any

from .status import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, SEVERITY_RANK

__all__ = ["Job", "JobError", "load_job", "expand_inputs", "run_job", "RunResult", "SEVERITY_RANK", "FAIL_ON"]

log = logging.getLogger("auditkit.job")

FAIL_ON = {"any": 1, "low": 1, "medium": 2, "high": 3, "none": 99}
KEYS = {"name", "inputs", "store", "output", "config", "settings", "limits", "games", "citations", "fail_on",
        "lock_timeout", "notebooks", "follow_symlinks", "workers", "engine", "max_quarantined", "verify"}
ENGINES = ("local", "dask")
ENGINE_KEYS = {"kind", "scheduler"}
SCHEDULER = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://\S+$")  # the schemes dask.distributed knows
GLOB_CHARS = set("*?[")


class JobError(ValueError):
    """A job that cannot run (bad job file, missing input, unusable configuration)."""


# ---- the job file ---------------------------------------------------------------------------
@dataclass
class Job:
    """A validated job file; paths are absolute."""

    path: Path
    name: str
    inputs: list[str]
    store: Path | str  # a folder, or an object-store URI (s3://bucket/prefix)
    output: Path
    config_path: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, dict[str, float]] = field(default_factory=dict)
    games: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    fail_on: str = "any"
    lock_timeout: float = 0.0
    notebooks: bool | list[str] = False
    follow_symlinks: bool = False
    workers: int | None = None  # None: the machine's cores
    engine: str = "local"
    scheduler: str | None = None
    max_quarantined: float | None = None  # a run past this share of quarantined lines is exit 2
    profiles: dict[str, Any] = field(default_factory=dict)  # input pattern -> its import profile
    sha256: str = ""
    verify: bool = False

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
            cfg = merge_config(cfg, over, source + " + job settings", where=str(self.path), prefix=("settings",))
        return cfg


def _strings(raw: dict[str, Any], key: str, where: Path) -> list[str]:
    value = raw.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise JobError(f"{where}: {key} must be a list of non-empty strings")
    return value


def _inputs(raw: dict[str, Any], base: Path, where: Path) -> tuple[list[str], dict[str, Any]]:
    """The input patterns, and the import profile of those given as ``{path = ..., profile = ...}``."""
    value = raw.get("inputs", [])
    value = [value] if isinstance(value, str | dict) else value
    if not isinstance(value, list):
        raise JobError(f"{where}: inputs must be a list of globs, files or folders")
    patterns: list[str] = []
    profiles: dict[str, Any] = {}
    for item in value:
        if isinstance(item, dict):
            if set(item) - {"path", "profile"} or not all(isinstance(item.get(k), str) and item[k] for k in
                                                          ("path", "profile")):
                raise JobError(f"{where}: an input table has a path and a profile (both non-empty strings), "
                               f"got {item!r}")
            from .ingest.profiles import load_profile

            profiles[item["path"]] = load_profile(base / Path(item["profile"]).expanduser())
            item = item["path"]
        if not isinstance(item, str) or not item:
            raise JobError(f"{where}: inputs must be a list of non-empty strings or {{path, profile}} tables")
        patterns.append(item)
    return patterns, profiles


def _path(raw: dict[str, Any], key: str, base: Path, where: Path, required: bool = True) -> Path | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise JobError(f"{where}: {key} must be a path (a non-empty string)")
    return (base / Path(value).expanduser()).resolve()


def check_engine(workers: Any, engine: Any, scheduler: Any, where: str, keys: tuple[str, str, str]) -> None:
    """Refuse a bad workers / engine / scheduler choice; JobError names ``where``, the key and the reason.

    ``keys`` are the names the user wrote (``workers``, ``engine.kind``, ``engine.scheduler`` in a job
    file, ``--workers``, ``--engine``, ``--scheduler`` on the command line)."""
    from .paytables import _number_reason, show

    if workers is not None:
        reason = _number_reason(workers, {"min": 1}, integer=True)
        if reason:
            raise JobError(f"{where}: {keys[0]} = {show(workers)}: {reason}")
    if engine not in ENGINES:
        raise JobError(f"{where}: {keys[1]} = {show(engine)}: must be one of {', '.join(ENGINES)}")
    if scheduler is not None and (not isinstance(scheduler, str) or not SCHEDULER.match(scheduler)):
        raise JobError(f"{where}: {keys[2]} = {show(scheduler)}: must be a scheduler address (tcp://host:8786; schemes: tcp, tls, inproc, ucx, ws, wss)")
    if engine == "dask" and scheduler is None:
        raise JobError(f"{where}: {keys[1]} = \"dask\": needs {keys[2]} (the cluster's scheduler address)")
    if engine == "local" and scheduler is not None:
        raise JobError(f"{where}: {keys[2]} = {show(scheduler)}: only with {keys[1]} = \"dask\"")


def load_job(path: str | Path) -> Job:
    """Read and check a job file; JobError says what is wrong."""
    from .games import names
    from .paytables import glob_reason, number_reason, show, value_reason

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
    inputs, profiles = _inputs(raw, base, path)
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
            raise JobError(f"{path}: unknown citation(s) {', '.join(map(repr, bad))}; "
                           f"valid: {', '.join(sorted(known))} (see `auditkit rules`)")
    fail_on = raw.get("fail_on", "any")
    if fail_on not in FAIL_ON:
        raise JobError(f"{path}: fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    timeout = raw.get("lock_timeout", 0)
    if number_reason(timeout, {"min": 0}):  # the check of --lock-timeout
        raise JobError(f"{path}: lock_timeout = {show(timeout)}: {number_reason(timeout, {'min': 0})} (seconds)")
    max_quarantined = raw.get("max_quarantined")
    if max_quarantined is not None and number_reason(max_quarantined, {"min": 0, "max": 1}):  # --max-quarantined's check
        raise JobError(f"{path}: max_quarantined = {show(max_quarantined)}: "
                       f"{number_reason(max_quarantined, {'min': 0, 'max': 1})}")
    notebooks = raw.get("notebooks", False)
    if not isinstance(notebooks, bool):
        from .notebooks import NOTEBOOKS

        if not isinstance(notebooks, list) or not notebooks or set(notebooks) - set(NOTEBOOKS):
            raise JobError(f"{path}: notebooks must be true, false or a list of {', '.join(NOTEBOOKS)}")
    follow = raw.get("follow_symlinks", False)
    if not isinstance(follow, bool):
        raise JobError(f"{path}: follow_symlinks must be true or false")
    if not isinstance(raw.get("verify", False), bool):
        raise JobError(f"{path}: verify must be true or false")
    settings = raw.get("settings", {})
    if not isinstance(settings, dict):
        raise JobError(f"{path}: [settings] must be a table")
    limits = raw.get("limits", {})
    if not isinstance(limits, dict):
        raise JobError(f"{path}: [limits] must be a table of table id (or glob) = {{min = .., max = ..}}")
    for table, lim in limits.items():
        where = f"{path}: limits.{json.dumps(table)}"
        if glob_reason(table):
            raise JobError(f"{where}: {glob_reason(table)}")
        if not isinstance(lim, dict) or not lim or set(lim) - {"min", "max"}:
            raise JobError(f"{where} must be {{min = <number>, max = <number>}}")
        for k, v in lim.items():
            reason = value_reason("blackjack", f"table_{k}", v)
            if reason:
                raise JobError(f"{where}.{k} = {show(v)}: {reason}")
        if "min" in lim and "max" in lim and lim["min"] > lim["max"]:
            raise JobError(f"{where}.min = {show(lim['min'])}: min is above max ({show(lim['max'])})")
    engine = raw.get("engine", {})
    if not isinstance(engine, dict):
        raise JobError(f"{path}: [engine] must be a table (kind = \"local\" or \"dask\", scheduler = \"tcp://...\")")
    unknown = sorted(set(engine) - ENGINE_KEYS)
    if unknown:
        raise JobError(f"{path}: unknown key(s) {', '.join('engine.' + k for k in unknown)} "
                       f"(known: {', '.join('engine.' + k for k in sorted(ENGINE_KEYS))})")
    workers, kind, scheduler = raw.get("workers"), engine.get("kind", "local"), engine.get("scheduler")
    check_engine(workers, kind, scheduler, str(path), ("workers", "engine.kind", "engine.scheduler"))
    from .store import is_uri

    store = raw["store"] if is_uri(raw.get("store")) else _path(raw, "store", base, path)
    output = _path(raw, "output", base, path)
    job = Job(path=path, name=safe_component(name), inputs=inputs, store=store, output=output,  # type: ignore[arg-type]
              config_path=_path(raw, "config", base, path, required=False), settings=settings, limits=limits,
              games=games, citations=citations, fail_on=fail_on, lock_timeout=float(timeout), notebooks=notebooks,
              follow_symlinks=follow, workers=workers, engine=kind, scheduler=scheduler,
              max_quarantined=max_quarantined, sha256=hashlib.sha256(text).hexdigest(), profiles=profiles,
              verify=raw.get("verify", False))
    job.config()  # fail now on a bad configuration (ConfigError)
    return job


def _glob_root(full: Path) -> Path:
    """The folder a glob searches: its leading components without ``* ? [``."""
    parts = []
    for part in full.parts:
        if GLOB_CHARS & set(part):
            break
        parts.append(part)
    return Path(*parts)


def expand_inputs(job: Job) -> tuple[list[Path], list[str], list[tuple[str, str]]]:
    """Files and folders the job's inputs name now, the globs that matched nothing, and the
    matches passed over as (path, reason).

    A literal path that does not exist is an error; a glob matching nothing
    (an empty night) is not. Globs are expanded with :mod:`glob` (``**``
    recursive, hidden files skipped); nothing is executed. A match that is a
    symbolic link out of the glob's folder (unless ``follow_symlinks``), a FIFO,
    a device or a socket is passed over.
    """
    from .ingest.sources import input_problem

    base = job.path.parent
    found: list[Path] = []
    empty: list[str] = []
    skipped: list[tuple[str, str]] = []
    for pattern in job.inputs:
        full = base / Path(pattern).expanduser()
        if GLOB_CHARS & set(pattern):
            hits = sorted(glob.glob(str(full), recursive=True))
            if not hits:
                empty.append(pattern)
            root = _glob_root(full)
            for hit in map(Path, hits):
                why = input_problem(hit, root, job.follow_symlinks)
                if why:
                    skipped.append((str(hit), why))
                else:
                    found.append(hit)
        elif full.exists():
            found.append(full)
        else:
            raise JobError(f"input {pattern!r} does not exist ({full})")
    return list(dict.fromkeys(p.resolve() for p in found)), empty, skipped


# ---- state: which committed sources this job has validated ---------------------------------
def _state_name(job: Job) -> str:
    return f"_jobs/{job.name}.json"


def _load_state(job: Job, store) -> set[str]:
    text = store.read_text(_state_name(job))
    if text is None:
        return set()
    try:
        return set(json.loads(text)["validated"])
    except (ValueError, KeyError, TypeError) as exc:
        raise JobError(f"job state {store.root}/{_state_name(job)} is unreadable: {exc}") from exc


def _save_state(job: Job, store, validated: set[str], run_id: str) -> None:
    store.write_text(_state_name(job), json.dumps({"job": job.name, "last_run": run_id, "updated_at": _now_iso(),
                                                  "validated": sorted(validated)}, indent=1))


# ---- the run --------------------------------------------------------------------------------
def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class RunResult:
    """What a run did: its exit status, record and output folder."""

    exit_code: int
    record: dict[str, Any]
    folder: Path


def _profiled(job: Job, files: list[Path]) -> tuple[list[Path], list[tuple[list[Path], Any]]]:
    """The files read as logs, and those read through each input's import profile."""
    if not job.profiles:
        return files, []
    groups = []
    taken: set[Path] = set()
    for pattern, profile in job.profiles.items():
        hits, _, _ = expand_inputs(Job(path=job.path, name=job.name, inputs=[pattern], store=job.store,
                                       output=job.output, follow_symlinks=job.follow_symlinks))
        groups.append((hits, profile))
        taken |= set(hits)
    return [f for f in files if f not in taken], groups


def _ingest(files: list[Path], store, bar, exclude: tuple[Path, ...], follow_symlinks: bool,
            workers: int | None = 1, scheduler: str | None = None,
            profiled: list[tuple[list[Path], Any]] = ()) -> tuple[list[dict[str, Any]], list]:
    """Ingest every log under ``files`` not seen before; one input entry per file for the run record.

    Files under ``exclude`` (the job's output and store folders) are never inputs:
    a findings CSV has the columns of a round CSV. ``workers`` processes (None: the machine's
    cores) or a Dask ``scheduler`` parse them; the sources are committed in order here.
    """
    from .ingest.sources import discover, ingest_paths

    if bar is not None:
        bar.total = len(discover(files, exclude, follow_symlinks=follow_symlinks))
    report = ingest_paths(files, store, exclude=exclude, follow_symlinks=follow_symlinks,
                          on_file=(lambda _p: bar.update(1)) if bar is not None else None,
                          workers=workers, scheduler=scheduler)
    for group, profile in profiled:  # exports read through their import profile
        more = ingest_paths(group, store, exclude=exclude, profile=profile)
        report.files += more.files
        report.sources += more.sources
    return report.files, report.sources


def _partition_findings(store, parts: set[tuple[str, str]]):
    import pandas as pd

    from .validate import empty_findings, sort_findings

    frames = [store.findings([g], d, d) for g, d in sorted(parts)]
    frames = [f for f in frames if len(f)]
    return sort_findings(pd.concat(frames, ignore_index=True)) if frames else empty_findings()


def _run_id(name: str, started: datetime) -> str:
    return f"{name}-{started:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def _clean_partials(output: Path, job_name: str) -> None:
    """Remove output folders that a killed run of this job left unfinished: its own run ids exactly
    (job ``n`` never touches job ``n-x``'s)."""
    own = re.compile(rf"^\.{re.escape(job_name)}-\d{{8}}T\d{{6}}Z-[0-9a-f]{{6}}\.partial$")
    for p in output.glob("*/.*.partial"):
        if own.match(p.name) and p.is_dir() and not p.is_symlink():
            log.warning("removing the unfinished output of an interrupted run: %s", p)
            shutil.rmtree(p, ignore_errors=True)


def _file_digest(path: Path) -> dict[str, Any]:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return {"size": path.stat().st_size, "sha256": h.hexdigest()}


def _check_complete(folder: Path, record: dict[str, Any]) -> None:
    """Refuse to publish a run folder unless every file its run.json lists is there, whole."""
    problems = []
    for name, expected in record["output_files"].items():
        path = folder / name
        if not path.is_file() or path.is_symlink():
            problems.append(f"{name} is missing")
        elif _file_digest(path) != expected:
            problems.append(f"{name} is not what was written (size or SHA-256 differs)")
    written = json.loads((folder / record["outputs"]["record"]).read_text("utf-8"))
    if written != json.loads(json.dumps(record, default=str)):
        problems.append("run.json is not what was written")
    if problems:
        raise JobError(f"run folder {folder} not published: {'; '.join(problems)}")


def run_job(job: Job, *, fail_on: str | None = None, progress: bool = True,
            lock_timeout: float | None = None, workers: int | None = None, engine: str | None = None,
            scheduler: str | None = None) -> RunResult:
    """Run a job once under the store's lock; see the module docstring.

    ``workers``, ``engine`` and ``scheduler`` (the command line's) win over the job file's. Whatever
    runs the validation, the findings and the run record are the same (apart from times and ids)."""
    from . import __version__
    from . import report as rep
    from .ingest.sources import discover
    from .progress import on_terminal, progress_bar
    from .rules.coverage import Tally
    from .runreport import cannot_draw
    from .store import Store
    from .validate import validate_into_store, with_next_days

    fail_on = fail_on or job.fail_on
    config = job.config()
    workers = job.workers if workers is None else workers
    if engine is None and scheduler is not None:
        engine = "dask"  # --scheduler alone, as on validate
    scheduler = (job.scheduler if engine in (None, job.engine) else None) if scheduler is None else scheduler
    engine = engine or job.engine
    check_engine(workers, engine, scheduler, "command line", ("--workers", "--engine", "--scheduler"))
    started = datetime.now(UTC)
    t0 = time.monotonic()
    run_id = _run_id(job.name, started)
    files, empty, passed = expand_inputs(job)
    for pattern in empty:
        log.warning("input %r matched no file", pattern)
    for path, why in passed:
        log.warning("skip %s: %s", path, why)
    exclude = (job.output,) + ((job.store,) if isinstance(job.store, Path) else ())
    files, profiled = _profiled(job, files)
    if not profiled and not any(GLOB_CHARS & set(p) for p in job.inputs) and not discover(files, exclude,
                                                                           follow_symlinks=job.follow_symlinks):
        raise JobError(f"{job.path}: no log file (.jsonl, .jsonl.gz, .ndjson, .csv) in the inputs "
                       f"{', '.join(job.inputs)} (a glob may match nothing; a folder must hold logs)")

    timeout = job.lock_timeout if lock_timeout is None else lock_timeout
    with Store(job.store).lock(timeout, command=f"auditkit run {job.path}, run {run_id}"):
        log.info("run %s: job %s, store %s, engine %s", run_id, job.path, job.store,
                 f"dask at {scheduler}" if engine == "dask" else f"local, {workers or 'all'} worker(s)")
        store = Store(job.store)
        _clean_partials(job.output, job.name)
        validated = _load_state(job, store)

        bar = progress_bar(None, "ingest", " files", progress)
        try:
            inputs, new = _ingest(files, store, bar, exclude, job.follow_symlinks, workers,
                                  scheduler if engine == "dask" else None, profiled)
        finally:
            if bar is not None:
                bar.close()
        inputs = [{"path": path, "status": f"skipped: {why}"} for path, why in passed] + inputs
        if job.verify:
            _verify(job, store)

        new_shas = {r.sha256 for r in new}
        pending = [r for r in store.manifest() if r.sha256 not in validated]
        recovered = [r for r in pending if r.sha256 not in new_shas]
        for r in recovered:
            log.warning("validating %s: ingested by an earlier run that did not finish", r.path)
        wanted = set(job.games) if job.games else None
        touched = {tuple(p.split("/", 1)) for r in pending for p in r.partitions}
        warnings = []
        if wanted is not None and touched and not {(g, d) for g, d in touched if g in wanted}:
            from .empty_work import no_match

            warnings.append(no_match({"games =": sorted(wanted)}))  # new rounds, none of the job's games
            log.warning("%s", warnings[-1])
        touched = {(g, d) for g, d in touched if wanted is None or g in wanted}

        checked = 0
        tally = Tally()
        parts: set[tuple[str, str]] = set()
        if touched:
            parts = with_next_days(store, touched)  # type: ignore[arg-type]
            total = sum(store.count(g, d) for g, d in parts) if progress and on_terminal() else None
            bar = progress_bar(total, "validate", " rounds", progress)
            try:
                _n, checked = validate_into_store(store, config, only=touched, games=job.games or None,
                                                  citations=job.citations or None, workers=workers,
                                                  scheduler=scheduler if engine == "dask" else None,
                                                  progress=bar.update if bar is not None else None, tally=tally)
            finally:
                if bar is not None:
                    bar.close()
        findings = _partition_findings(store, parts)

        # outputs: written into a hidden folder, renamed into place when complete
        day = Date.fromtimestamp(started.timestamp()).isoformat()  # the run's local date
        final = job.output / day / run_id
        partial = job.output / day / f".{run_id}.partial"
        partial.mkdir(parents=True)
        coverage = tally.table()
        q = store.quarantine()
        q = q[q["sha256"].isin({r.sha256 for r in pending})]
        reviewed = _review_counts(store, findings, pending)
        html = partial / "report.html"
        if why := cannot_draw():
            log.warning("no report.html: %s", why)
        written = rep.write_outputs(
            rep.Outputs(partial / "findings.csv", parquet=partial / "findings.parquet", summaries=partial,
                        xlsx=partial / "findings.xlsx", html=None if why else html, title=f"auditkit: {job.name}"),
            findings, coverage, {"job": job.name, "rounds checked": checked}, reviewed=reviewed.pop("findings"),
            quarantine=q)
        names = {"findings_csv": "findings.csv", "findings_parquet": "findings.parquet", "quarantine": "quarantine.csv",
                 "record": "run.json",
                 **{k: p.name for k, p in written.items() if k not in ("findings_csv", "findings_parquet", "html")}}
        rep.write_csv(q, partial / names["quarantine"])
        if "html" in written:
            names["html"] = "report.html"
        rendered = _render_notebooks(job, store, parts, partial) if job.notebooks and parts else []
        threshold = FAIL_ON[fail_on]
        ranks = findings["severity"].map(SEVERITY_RANK).fillna(3)
        failing = int((ranks >= threshold).sum())
        status = "nothing new" if not pending else ("findings" if len(findings) else "clean")
        exit_code = EXIT_FINDINGS if failing else EXIT_CLEAN
        from .empty_work import quarantine_problem

        problem = quarantine_problem(new, q.loc[q["sha256"].isin(new_shas), "reason"], job.max_quarantined)
        if problem:  # the reports are written; the run still could not do its job
            log.error("%s", problem)
            status, exit_code = "quarantined", EXIT_ERROR
        record = {
            "run_id": run_id, "job": job.name, "job_file": str(job.path), "job_sha256": job.sha256,
            "tool": "auditkit", "version": __version__, "python": platform.python_version(),
            "host": platform.node(), "pid": os.getpid(),
            "started_at": started.isoformat(timespec="milliseconds"), "ended_at": None, "duration_s": None,
            "status": status, "problem": problem, "warnings": warnings, "exit_code": exit_code, "fail_on": fail_on, "findings_failing": failing,
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
                **reviewed,
            },
            "coverage": coverage.to_dict(orient="records"),
            "outputs": names,
            "output_files": {str(f.relative_to(partial)): _file_digest(f)
                             for f in sorted(partial.rglob("*")) if f.is_file() and not f.name.startswith(".")},
            "notebooks": rendered,
        }
        ended = datetime.now(UTC)
        record["ended_at"] = ended.isoformat(timespec="milliseconds")
        record["duration_s"] = round(time.monotonic() - t0, 3)
        from .store import atomic_path

        with atomic_path(partial / names["record"]) as tmp:
            tmp.write_text(json.dumps(record, indent=1, default=str), "utf-8")
        _fsync_dir(partial)
        _check_complete(partial, record)
        os.replace(partial, final)
        _fsync_dir(final.parent)
        # last: these sources are validated and reported (a crash before this redoes them next run)
        if pending:
            _save_state(job, store, validated | {r.sha256 for r in pending}, run_id)
    log.info("run %s: %s, %d finding(s), exit %d; outputs in %s", run_id, status, len(findings), exit_code, final)
    return RunResult(exit_code, record, final)


def _review_counts(store, findings, pending) -> dict:
    """The findings with their reviews (key ``findings``), and how many are new (on rounds this run stored
    first), open (never reviewed, or reviewed as open) and reviewed (explained, confirmed or escalated)."""
    from .reviews import latest, with_reviews

    out = with_reviews(findings, latest(store))
    files = [f"_index/{r.sha256[:16]}.parquet" for r in pending]
    files = [f for f in files if f in set(store.index_files())]
    new_ids = set(store.read_index(files, ["round_id"])["round_id"].to_pylist()) if files else set()
    return {"findings": out, "findings_new": int(out["round_id"].isin(new_ids).sum()),
            "findings_open": int((out["status"] == "open").sum()),
            "findings_reviewed": int((out["status"] != "open").sum())}


def _verify(job: Job, store) -> None:
    """``verify = true``: JobError (exit 2) when the store disagrees with its manifest."""
    from .verify import verify

    result = verify(store)
    log.info("run: %s", result.summary().splitlines()[0])
    if not result.ok:
        shown = "; ".join(result.problems[:3]) + (f"; and {len(result.problems) - 3} more" if len(result.problems) > 3 else "")
        raise JobError(f"{job.path}: verify = true: store {job.store} disagrees with its manifest: {shown} "
                       f"(auditkit verify {job.store} lists each)")


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
