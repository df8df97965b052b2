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

Its keys, with their types, ranges and defaults, are ``auditkit/job_schema.toml``
(:func:`job_schema`), checked as a configuration file is checked against its settings
schema. Relative paths are relative to the job file. A run takes the store's lock,
ingests the files whose content (SHA-256) the store has not seen, validates
the partitions those files touched (plus the stored day after each, whose shoe
rules read the day before), and writes its outputs to a hidden folder renamed
into ``<output>/<local date>/<run id>/`` once complete. The sources it validated
are then recorded in ``<store>/_jobs/<job name>.json``; a source committed to
the store but not recorded there (a run killed after ingesting) is validated
by the next run. See docs/batch.md.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import logging
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .status import SEVERITY_RANK

__all__ = ["Job", "JobError", "load_job", "job_schema", "expand_inputs", "SEVERITY_RANK", "FAIL_ON"]

log = logging.getLogger("auditkit.job")

FAIL_ON = {"any": 1, "low": 1, "medium": 2, "high": 3, "none": 99}
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


@functools.cache
def job_schema() -> dict[str, dict[str, Any]]:
    """The keys of a job file (``auditkit/job_schema.toml``): key -> type, default, range, meaning."""
    return tomllib.loads(resources.files("auditkit").joinpath("job_schema.toml").read_text("utf-8"))


def _reason(spec: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` is not of a job file key's type and range (its schema entry); None when it is."""
    from .paytables import SIMPLE_KINDS, spec_reason

    kind = spec["type"]
    if kind in SIMPLE_KINDS:
        reason = spec_reason(spec, value)
        return f"{reason} ({spec['unit']})" if reason and "unit" in spec else reason
    if kind == "string":
        return None if isinstance(value, str) and value.strip() else "must be a non-empty string"
    if kind == "path":
        return None if isinstance(value, str) and value else "must be a path (a non-empty string)"
    if kind == "strings":
        ok = isinstance(value, str) and value or isinstance(value, list) and all(isinstance(v, str) and v for v in value)
        return None if ok else "must be a list of non-empty strings"
    if kind == "table":
        return None if isinstance(value, dict) else "must be a table"
    if kind == "inputs":
        items = [value] if isinstance(value, str | dict) else value
        ok = isinstance(items, list) and all(isinstance(i, dict) or isinstance(i, str) and i for i in items)
        return None if ok else "must be a list of non-empty strings or {path, profile} tables"
    if kind == "notebooks":
        if isinstance(value, bool) or isinstance(value, list) and all(isinstance(n, str) for n in value):
            return None
        from .notebooks import NOTEBOOKS

        return f"must be true, false or a list (empty: none) of {', '.join(NOTEBOOKS)}"
    raise AssertionError(f"unknown job schema type {kind!r}")  # a bug in job_schema.toml


def _names_reason(of: str, names: list[str]) -> str | None:
    """Why some ``names`` are not names of ``of`` (games, citations, notebooks); None when all are."""
    if of == "games":
        from .games import names as game_names

        known = game_names()
        bad = [g for g in names if g not in known]
        return f"unknown game(s) {', '.join(bad)} (known: {', '.join(known)})" if bad else None
    if of == "citations":
        from .rules.registry import catalog_rows

        cited = {r["citation"] for r in catalog_rows()}
        bad = [c for c in names if c not in cited]
        return (f"unknown citation(s) {', '.join(map(repr, bad))}; valid: {', '.join(sorted(cited))} "
                "(see `auditkit rules`)") if bad else None
    raise AssertionError(f"unknown job schema names {of!r}")  # a bug in job_schema.toml


def _checked(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """Every key of a job file checked against :func:`job_schema`, with the defaults of those not given;
    JobError names the file, the key, the value and the reason."""
    from .values import show

    schema = job_schema()
    unknown = sorted(set(raw) - set(schema))
    if unknown:
        raise JobError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(schema))})")
    out: dict[str, Any] = {}
    for key, spec in schema.items():
        if key not in raw:
            if spec.get("required"):
                raise JobError(f"{path}: {key} is required ({spec['needed']})")
            out[key] = copy.deepcopy(spec.get("default"))
            continue
        value = raw[key]
        reason = _reason(spec, value)
        if reason is None and "keys" in spec and (unknown := sorted(set(value) - set(spec["keys"]))):
            raise JobError(f"{path}: unknown key(s) {', '.join(f'{key}.{k}' for k in unknown)} "
                           f"(known: {', '.join(f'{key}.{k}' for k in spec['keys'])})")
        if spec["type"] == "strings" and isinstance(value, str):
            value = [value]
        if reason is None and "of" in spec:
            reason = _names_reason(spec["of"], value)
        if reason is None and spec["type"] == "notebooks" and isinstance(value, list):
            from .notebooks import NOTEBOOKS

            bad = [n for n in value if n not in NOTEBOOKS]
            reason = f"{_reason(spec, 0)}; unknown: {', '.join(map(repr, bad))}" if bad else None
        if reason:
            raise JobError(f"{path}: {key} = {show(raw[key])}: {reason}")
        out[key] = value
    return out


def _inputs(value: Any, base: Path, where: Path) -> tuple[list[str], dict[str, Any]]:
    """The input patterns (checked by the schema), and the import profile of those given as
    ``{path = ..., profile = ...}``."""
    from .values import show

    patterns: list[str] = []
    profiles: dict[str, Any] = {}
    for item in [value] if isinstance(value, str | dict) else value:
        if isinstance(item, dict):
            if set(item) - {"path", "profile"} or not all(isinstance(item.get(k), str) and item[k] for k in
                                                          ("path", "profile")):
                raise JobError(f"{where}: inputs: an input table has a path and a profile (both non-empty "
                               f"strings), got {show(item)}")
            from .ingest.profiles import load_profile

            profiles[item["path"]] = load_profile(base / Path(item["profile"]).expanduser())
            item = item["path"]
        patterns.append(item)
    if not patterns:
        raise JobError(f"{where}: inputs = []: must name at least one glob, file or folder of logs")
    return patterns, profiles


def _limits(limits: dict[str, Any], where: Path) -> None:
    """Check ``[limits]``: table id or glob = {min = .., max = ..}, each a table limit's value."""
    from .paytables import glob_reason, value_reason
    from .values import show

    for table, lim in limits.items():
        key = f"{where}: limits.{json.dumps(table)}"
        if glob_reason(table):
            raise JobError(f"{key}: {glob_reason(table)}")
        if not isinstance(lim, dict) or not lim or set(lim) - {"min", "max"}:
            raise JobError(f"{key} = {show(lim)}: must be {{min = <number>, max = <number>}}")
        for k, v in lim.items():
            for section in limit_sections():
                reason = value_reason(section, f"table_{k}", v)
                if reason:
                    raise JobError(f"{key}.{k} = {show(v)}: {reason}")
        if "min" in lim and "max" in lim and lim["min"] > lim["max"]:
            raise JobError(f"{key}.min = {show(lim['min'])}: min is above max ({show(lim['max'])})")


def load_job(path: str | Path) -> Job:
    """Read and check a job file against :func:`job_schema`; JobError says what is wrong (file, key,
    value, reason), ConfigError what is wrong with its configuration."""
    from .engine.options import JOB_FILE, engine_options
    from .paytables import ConfigError
    from .store import is_uri, safe_component

    path = Path(path).resolve()
    try:
        text = path.read_bytes()
        raw = tomllib.loads(text.decode("utf-8"))
    except OSError as exc:
        raise JobError(f"cannot read job file {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise JobError(f"job file {path} is not valid TOML: {exc}") from exc
    values = _checked(raw, path)
    base = path.parent
    inputs, profiles = _inputs(values["inputs"], base, path)
    _limits(values["limits"], path)
    try:
        engine = engine_options(values["workers"], values["engine"].get("kind", "local"),
                                values["engine"].get("scheduler"), str(path), JOB_FILE)
    except ConfigError as exc:
        raise JobError(str(exc)) from None

    def where(key: str) -> Path:
        return (base / Path(values[key]).expanduser()).resolve()

    job = Job(path=path, name=safe_component(values["name"] or path.stem), inputs=inputs,
              store=values["store"] if is_uri(values["store"]) else where("store"), output=where("output"),
              config_path=where("config") if values["config"] is not None else None, settings=values["settings"],
              limits=values["limits"], games=values["games"], citations=values["citations"],
              fail_on=values["fail_on"], lock_timeout=float(values["lock_timeout"]), notebooks=values["notebooks"],
              follow_symlinks=values["follow_symlinks"], workers=engine.workers, engine=engine.kind,
              scheduler=engine.scheduler, max_quarantined=values["max_quarantined"],
              dedup_memory=values["dedup_memory"], sha256=hashlib.sha256(text).hexdigest(), profiles=profiles,
              verify=values["verify"])
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
