"""Scheduled batch validation: the job file behind ``auditkit run JOB.toml`` (run by
:func:`auditkit.jobrun.run_job`).

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
    dedup_memory = 256                    # optional; MiB for holding the store's round-id hashes (past it: streamed)
    verify = false                        # true: check the store against its manifest after the ingest (exit 2 when it disagrees)

    [engine]                              # optional; default kind = "local" (the processes above)
    kind = "dask"                         # "local" or "dask" (a dask.distributed cluster; the dask extra)
    scheduler = "tcp://10.0.0.5:8786"     # the scheduler (kind = "dask"); workers see store and inputs

    [settings.baccarat]                   # optional inline overrides, same shape as a config file
    tie = 9.0

    [limits]                              # optional table limits by table id or glob (limit_sections())
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

import hashlib
import json
import logging
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .status import SEVERITY_RANK

__all__ = ["Job", "JobError", "load_job", "expand_inputs", "SEVERITY_RANK", "FAIL_ON"]

log = logging.getLogger("auditkit.job")

FAIL_ON = {"any": 1, "low": 1, "medium": 2, "high": 3, "none": 99}
KEYS = {"name", "inputs", "store", "output", "config", "settings", "limits", "games", "citations", "fail_on",
        "lock_timeout", "notebooks", "follow_symlinks", "workers", "engine", "max_quarantined", "verify",
        "dedup_memory"}
ENGINE_KEYS = {"kind", "scheduler"}
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
    dedup_memory: float | None = None  # MiB for holding the store's round-id hashes (None: the default)
    profiles: dict[str, Any] = field(default_factory=dict)  # input pattern -> its import profile
    sha256: str = ""
    verify: bool = False

    def config(self):
        """The merged configuration: defaults, the config file, ``[settings]``, then ``[limits]``."""
        from .paytables import load_config, merge_config

        over = json.loads(json.dumps(self.settings))  # a deep copy of plain TOML data
        tables = over.setdefault("tables", {})
        for pattern, lim in self.limits.items():
            for section in limit_sections():
                tables.setdefault(pattern, {}).setdefault(section, {}).update({f"table_{k}": v for k, v in lim.items()})
        cfg = load_config(self.config_path)
        source = str(self.config_path) if self.config_path else "defaults"
        if self.settings or self.limits:
            cfg = merge_config(cfg, over, source + " + job settings", where=str(self.path), prefix=("settings",))
        return cfg


def limit_sections() -> list[str]:
    """The configuration sections a job's ``[limits]`` sets: those with ``table_min`` and ``table_max``
    settings (blackjack's, among the built-in games)."""
    from .paytables import schema

    return [name for name, keys in schema().items() if "table_min" in keys and "table_max" in keys]


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


def load_job(path: str | Path) -> Job:
    """Read and check a job file; JobError says what is wrong."""
    from .games import names
    from .paytables import ConfigError, glob_reason, number_reason, show, value_reason

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
        from .rules.registry import catalog_rows

        known = {r["citation"] for r in catalog_rows()}
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
    dedup_memory = raw.get("dedup_memory")
    if dedup_memory is not None and number_reason(dedup_memory, {"min": 0}):  # --dedup-memory's check
        raise JobError(f"{path}: dedup_memory = {show(dedup_memory)}: {number_reason(dedup_memory, {'min': 0})} (MiB)")
    notebooks = raw.get("notebooks", False)
    if not isinstance(notebooks, bool):
        from .notebooks import NOTEBOOKS

        unknown = [n for n in notebooks if n not in NOTEBOOKS] if isinstance(notebooks, list) else None
        if unknown is None or unknown:
            raise JobError(f"{path}: notebooks must be true, false or a list (empty: none) of {', '.join(NOTEBOOKS)}"
                           + (f"; unknown: {', '.join(map(repr, unknown))}" if unknown else ""))
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
            for section in limit_sections():
                reason = value_reason(section, f"table_{k}", v)
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
    from .engine.options import JOB_FILE, engine_options

    try:
        options = engine_options(raw.get("workers"), engine.get("kind", "local"), engine.get("scheduler"), str(path),
                                 JOB_FILE)
    except ConfigError as exc:
        raise JobError(str(exc)) from None
    workers, kind, scheduler = options.workers, options.kind, options.scheduler
    from .store import is_uri

    store = raw["store"] if is_uri(raw.get("store")) else _path(raw, "store", base, path)
    output = _path(raw, "output", base, path)
    job = Job(path=path, name=safe_component(name), inputs=inputs, store=store, output=output,  # type: ignore[arg-type]
              config_path=_path(raw, "config", base, path, required=False), settings=settings, limits=limits,
              games=games, citations=citations, fail_on=fail_on, lock_timeout=float(timeout), notebooks=notebooks,
              follow_symlinks=follow, workers=workers, engine=kind, scheduler=scheduler,
              max_quarantined=max_quarantined, sha256=hashlib.sha256(text).hexdigest(), profiles=profiles,
              verify=raw.get("verify", False), dedup_memory=dedup_memory)
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
    (an empty night) is not. Globs are expanded by walking the glob's folder
    (:func:`auditkit.ingest.walk.glob_matches`: ``**`` recursive, hidden names
    skipped, each folder entered once, a link loop reported and never followed
    round); nothing is executed. A match that is a symbolic link out of the
    glob's folder (unless ``follow_symlinks``), a FIFO, a device or a socket is
    passed over.
    """
    from .ingest.sources import input_problem
    from .ingest.walk import glob_matches

    base = job.path.parent
    found: list[Path] = []
    empty: list[str] = []
    skipped: list[tuple[str, str]] = []
    for pattern in job.inputs:
        full = base / Path(pattern).expanduser()
        if GLOB_CHARS & set(pattern):
            root = _glob_root(full)
            hits = glob_matches(root, full.parts[len(root.parts):], job.follow_symlinks, skipped)
            if not hits:
                empty.append(pattern)
            for hit in hits:
                why = input_problem(hit, root, job.follow_symlinks)
                if why:
                    skipped.append((str(hit), why))
                else:
                    found.append(hit)
        elif full.exists() or getattr(getattr(job.profiles.get(pattern), "source", None), "format", None) == \
                "postgresql":  # a database read through its profile is a name, not a file
            found.append(full)
        else:
            raise JobError(f"input {pattern!r} does not exist ({full})")
    return list(dict.fromkeys(p.resolve() for p in found)), empty, skipped
