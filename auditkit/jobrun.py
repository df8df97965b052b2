"""One run of a job (``auditkit run JOB.toml``), as named steps: :func:`plan` (the options in force
and the input files), :func:`ingest` (new sources into the store), :func:`choose` (the sources and
partitions to validate), :func:`check` (validate them), :func:`write` (every report, through
:func:`auditkit.report.write_outputs`, into a hidden folder) and :func:`publish` (the run record, the
folder renamed into place, the job's state). :func:`run_job` runs them under the store's lock; the job
file itself is read by :mod:`auditkit.job`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from datetime import date as Date
from pathlib import Path
from typing import Any

from .empty_work import no_match, no_rounds, quarantine_problem, round_lines
from .job import FAIL_ON, GLOB_CHARS, Job, JobError, expand_inputs, log
from .status import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, SEVERITY_RANK

__all__ = ["run_job", "RunResult", "Run", "plan", "ingest", "choose", "check", "write", "publish"]


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
                                       output=job.output, follow_symlinks=job.follow_symlinks,
                                       profiles={pattern: profile}))
        groups.append((hits, profile))
        taken |= set(hits)
    return [f for f in files if f not in taken], groups


def _ingest(files: list[Path], store, bar, exclude: tuple[Path, ...], follow_symlinks: bool,
            workers: int | None = 1, scheduler: str | None = None,
            profiled: list[tuple[list[Path], Any]] = (), dedup_memory: float | None = None
            ) -> tuple[list[dict[str, Any]], list]:
    """Ingest every log under ``files`` not seen before; one input entry per file for the run record.

    Files under ``exclude`` (the job's output and store folders) are never inputs:
    a findings CSV has the columns of a round CSV. ``workers`` processes (None: the machine's
    cores) or a Dask ``scheduler`` parse them; the sources are committed in order here.
    ``dedup_memory``: the job's, as in :func:`auditkit.ingest.sources.ingest_paths`.
    """
    from .ingest.sources import discover, ingest_paths

    if bar is not None:
        bar.total = len(discover(files, exclude, follow_symlinks=follow_symlinks))
    report = ingest_paths(files, store, exclude=exclude, follow_symlinks=follow_symlinks,
                          on_file=(lambda _p: bar.update(1)) if bar is not None else None,
                          workers=workers, scheduler=scheduler, dedup_memory=dedup_memory)
    for group, profile in profiled:  # exports read through their import profile
        more = ingest_paths(group, store, exclude=exclude, profile=profile, dedup_memory=dedup_memory)
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


@dataclass
class Run:
    """What the steps of one run share, each step filling in its part."""

    job: Job
    fail_on: str
    config: Any
    workers: int | None
    engine: str
    scheduler: str | None
    progress: bool
    started: datetime
    t0: float
    run_id: str
    files: list[Path]
    unmatched: list[str]  # input globs that matched no file
    passed: list[tuple[Path, str]]  # inputs skipped, and why
    profiled: list[tuple[list[Path], Any]]
    exclude: tuple[Path, ...]
    store: Any = None
    validated: set[str] = field(default_factory=set)  # sources an earlier run validated
    inputs: list[dict[str, Any]] = field(default_factory=list)
    new: list = field(default_factory=list)  # sources this run stored
    pending: list = field(default_factory=list)  # sources to validate: new, or left by a killed run
    recovered: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    touched: set[tuple[str, str]] = field(default_factory=set)
    parts: set[tuple[str, str]] = field(default_factory=set)
    checked: int = 0
    tally: Any = None
    findings: Any = None

    @property
    def dask(self) -> str | None:
        """The scheduler when the run's engine is Dask."""
        return self.scheduler if self.engine == "dask" else None


def run_job(job: Job, *, fail_on: str | None = None, progress: bool = True,
            lock_timeout: float | None = None, workers: int | None = None, engine: str | None = None,
            scheduler: str | None = None) -> RunResult:
    """Run a job once under the store's lock; see :mod:`auditkit.job`.

    ``workers``, ``engine`` and ``scheduler`` (the command line's) win over the job file's. Whatever
    runs the validation, the findings and the run record are the same (apart from times and ids)."""
    from .store import Store

    run = plan(job, fail_on=fail_on, progress=progress, workers=workers, engine=engine, scheduler=scheduler)
    timeout = job.lock_timeout if lock_timeout is None else lock_timeout
    with Store(job.store).lock(timeout, command=f"auditkit run {job.path}, run {run.run_id}"):
        log.info("run %s: job %s, store %s, engine %s", run.run_id, job.path, job.store,
                 f"dask at {run.scheduler}" if run.engine == "dask" else f"local, {run.workers or 'all'} worker(s)")
        run.store = Store(job.store)
        ingest(run)
        choose(run)
        check(run)
        partial, names, counts, coverage = write(run)
        result = publish(run, partial, names, counts, coverage)
    log.info("run %s: %s, %d finding(s), exit %d; outputs in %s", run.run_id, result.record["status"],
             len(run.findings), result.exit_code, result.folder)
    return result


def plan(job: Job, *, fail_on: str | None, progress: bool, workers: int | None, engine: str | None,
         scheduler: str | None) -> Run:
    """The options in force (the command line's over the job file's, checked once) and the input files."""
    from .engine.options import COMMAND_LINE, engine_options
    from .ingest.sources import discover

    workers = job.workers if workers is None else workers
    if engine is None and scheduler is not None:
        engine = "dask"  # --scheduler alone, as on validate
    scheduler = (job.scheduler if engine in (None, job.engine) else None) if scheduler is None else scheduler
    engine = engine_options(workers, engine or job.engine, scheduler, "command line", COMMAND_LINE).kind
    started = datetime.now(UTC)
    files, unmatched, passed = expand_inputs(job)
    for pattern in unmatched:
        log.warning("input %r matched no file", pattern)
    for path, why in passed:
        log.warning("skip %s: %s", path, why)
    exclude = (job.output,) + ((job.store,) if isinstance(job.store, Path) else ())
    files, profiled = _profiled(job, files)
    if not profiled and not any(GLOB_CHARS & set(p) for p in job.inputs) and not discover(files, exclude,
                                                                           follow_symlinks=job.follow_symlinks):
        raise JobError(f"{job.path}: no log file (.jsonl, .jsonl.gz, .ndjson, .csv) in the inputs "
                       f"{', '.join(job.inputs)} (a glob may match nothing; a folder must hold logs)")
    return Run(job=job, fail_on=fail_on or job.fail_on, config=job.config(), workers=workers, engine=engine,
               scheduler=scheduler, progress=progress, started=started, t0=time.monotonic(),
               run_id=_run_id(job.name, started), files=files, unmatched=unmatched, passed=passed,
               profiled=profiled, exclude=exclude)


def ingest(run: Run) -> None:
    """Every input file the store has not seen, into the store (a killed run's unfinished output removed
    first); with ``verify``, the store checked against its manifest after."""
    from .progress import progress_bar

    _clean_partials(run.job.output, run.job.name)
    run.validated = _load_state(run.job, run.store)
    bar = progress_bar(None, "ingest", " files", run.progress)
    try:
        inputs, run.new = _ingest(run.files, run.store, bar, run.exclude, run.job.follow_symlinks, run.workers,
                                  run.dask, run.profiled, run.job.dedup_memory)
    finally:
        if bar is not None:
            bar.close()
    run.inputs = [{"path": path, "status": f"skipped: {why}"} for path, why in run.passed] + inputs
    if run.job.verify:
        _verify(run.job, run.store)


def choose(run: Run) -> None:
    """The sources this run validates (those no run of this job validated: new ones, and those a killed
    run stored) and the partitions they touched, of the job's games."""
    new_shas = {r.sha256 for r in run.new}
    run.pending = [r for r in run.store.manifest() if r.sha256 not in run.validated]
    run.recovered = [r for r in run.pending if r.sha256 not in new_shas]
    for r in run.recovered:
        log.warning("validating %s: ingested by an earlier run that did not finish", r.path)
    if (empty := no_rounds(run.pending, "nothing new to check")) is not None:  # an empty export is not clean
        run.warnings.append(empty)
        log.warning("%s", empty)
    wanted = set(run.job.games) if run.job.games else None
    touched = {tuple(p.split("/", 1)) for r in run.pending for p in r.partitions}
    if wanted is not None and touched and not {(g, d) for g, d in touched if g in wanted}:
        run.warnings.append(no_match({"games =": sorted(wanted)}))  # new rounds, none of the job's games
        log.warning("%s", run.warnings[-1])
    run.touched = {(g, d) for g, d in touched if wanted is None or g in wanted}  # type: ignore[misc]


def check(run: Run) -> None:
    """Validate the partitions chosen (and the stored day after each, whose shoe rules read the day
    before); the findings of those partitions, with the coverage tally."""
    from .engine.plan import with_next_days
    from .progress import on_terminal, progress_bar
    from .rules.tally import Tally
    from .validate import validate_into_store

    run.tally = Tally()
    if run.touched:
        run.parts = with_next_days(run.store, run.touched)  # type: ignore[arg-type]
        total = sum(run.store.count(g, d) for g, d in run.parts) if run.progress and on_terminal() else None
        bar = progress_bar(total, "validate", " rounds", run.progress)
        try:
            _n, run.checked = validate_into_store(run.store, run.config, only=run.touched, games=run.job.games or None,
                                                  citations=run.job.citations or None, workers=run.workers,
                                                  scheduler=run.dask, tally=run.tally,
                                                  progress=bar.update if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()
    run.findings = _partition_findings(run.store, run.parts)


def write(run: Run) -> tuple[Path, dict[str, str], dict[str, int], Any]:
    """Every report, into a hidden folder ``<output>/<local date>/.<run id>.partial``: (the folder, the
    name of each report by kind, the review counts, the coverage table)."""
    from . import report as rep
    from .reportcontext import gather
    from .runreport import cannot_draw

    day = Date.fromtimestamp(run.started.timestamp()).isoformat()  # the run's local date
    partial = run.job.output / day / f".{run.run_id}.partial"
    partial.mkdir(parents=True)
    coverage = run.tally.table()
    q = run.store.quarantine({r.sha256 for r in run.pending})
    counts = _review_counts(run.store, run.findings, run.pending)
    if why := cannot_draw():
        log.warning("no report.html: %s", why)
    days = sorted(d for _g, d in run.parts)
    context = gather(run.store, games=sorted({g for g, _d in run.parts}), start=days[0] if days else None,
                     end=days[-1] if days else None, parts=run.parts, config=run.config, outcomes=not why,
                     sources=run.pending, command=["run", str(run.job.path)])  # the partitions this run checked
    written = rep.write_outputs(
        rep.Outputs(partial / "findings.csv", parquet=partial / "findings.parquet", summaries=partial,
                    xlsx=partial / "findings.xlsx", html=None if why else partial / "report.html",
                    title=f"auditkit: {run.job.name}"),
        run.findings, coverage, {"job": run.job.name, "rounds checked": run.checked},
        reviewed=counts.pop("findings"), quarantine=q, context=context)
    names = {"findings_csv": "findings.csv", "findings_parquet": "findings.parquet", "quarantine": "quarantine.csv",
             "record": "run.json",
             **{k: p.name for k, p in written.items() if k not in ("findings_csv", "findings_parquet", "html")}}
    rep.write_csv(q, partial / names["quarantine"])
    if "html" in written:
        names["html"] = "report.html"
    return partial, names, counts, coverage


def publish(run: Run, partial: Path, names: dict[str, str], counts: dict[str, int], coverage: Any) -> RunResult:
    """The notebooks (when asked), the run's status and record, the folder renamed into
    ``<output>/<local date>/<run id>`` once whole, then the sources it validated recorded as the job's
    state (a crash before that redoes them next run)."""
    from . import __version__

    job, findings = run.job, run.findings
    final = partial.parent / run.run_id
    rendered = _render_notebooks(job, run.store, run.parts, partial) if job.notebooks and run.parts else []
    ranks = findings["severity"].map(SEVERITY_RANK).fillna(3)
    failing = int((ranks >= FAIL_ON[run.fail_on]).sum())
    status = "nothing new" if not round_lines(run.pending) else ("findings" if len(findings) else "clean")
    exit_code = EXIT_FINDINGS if failing else EXIT_CLEAN
    problem = quarantine_problem(run.new, run.store.quarantine_reasons({r.sha256 for r in run.new}),
                                 job.max_quarantined)
    if problem:  # the reports are written; the run still could not do its job
        log.error("%s", problem)
        status, exit_code = "quarantined", EXIT_ERROR
    pending = run.pending
    record = {
        "run_id": run.run_id, "job": job.name, "job_file": str(job.path), "job_sha256": job.sha256,
        "tool": "auditkit", "version": __version__, "python": platform.python_version(),
        "host": platform.node(), "pid": os.getpid(),
        "started_at": run.started.isoformat(timespec="milliseconds"), "ended_at": None, "duration_s": None,
        "status": status, "problem": problem, "warnings": run.warnings, "exit_code": exit_code,
        "fail_on": run.fail_on, "findings_failing": failing,
        "configuration": {"source": run.config.source, "sha256": run.config.digest()},
        "games": job.games or "all", "citations": job.citations or "all",
        "store": str(job.store), "output": str(final),
        "inputs": {"patterns": job.inputs, "unmatched_globs": run.unmatched, "files": run.inputs},
        "recovered_sources": [{"sha256": r.sha256, "path": r.path} for r in run.recovered],
        "partitions_validated": [f"{g}/{d}" for g, d in sorted(run.parts)],
        "counts": _run_counts(run, counts),
        "coverage": coverage.to_dict(orient="records"),
        "outputs": names,
        "output_files": {str(f.relative_to(partial)): _file_digest(f)
                         for f in sorted(partial.rglob("*")) if f.is_file() and not f.name.startswith(".")},
        "notebooks": rendered,
    }
    record["ended_at"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    record["duration_s"] = round(time.monotonic() - run.t0, 3)
    from .store import atomic_path

    with atomic_path(partial / names["record"]) as tmp:
        tmp.write_text(json.dumps(record, indent=1, default=str), "utf-8")
    _fsync_dir(partial)
    _check_complete(partial, record)
    os.replace(partial, final)
    _fsync_dir(final.parent)
    if pending:  # last: these sources are validated and reported
        _save_state(job, run.store, run.validated | {r.sha256 for r in pending}, run.run_id)
    return RunResult(exit_code, record, final)


def _run_counts(run: Run, counts: dict[str, int]) -> dict[str, Any]:
    """The run record's ``counts``: files seen, ingested and skipped, lines and rounds, findings, and
    ``counts`` (the reviews')."""
    new, pending, findings = run.new, run.pending, run.findings
    return {
        "files_seen": len(run.inputs), "files_ingested": len(new),
        "files_already_ingested": sum(e.get("status") == "already ingested" for e in run.inputs),
        "files_skipped": sum(e.get("status", "").startswith("skipped") for e in run.inputs),
        "sources_validated": len(pending),
        "lines_read": sum(r.lines_read for r in new), "rounds_stored": sum(r.stored for r in new),
        "rounds_already_stored": sum(r.already_stored for r in new),
        "lines_quarantined": sum(r.quarantined for r in pending),
        "rounds_checked": run.checked, "findings": len(findings),
        "rounds_with_findings": int(findings["round_id"].nunique()),
        "findings_by_severity": {s: int((findings["severity"] == s).sum()) for s in SEVERITY_RANK},
        **counts,
    }


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
