"""Paytables, table limits and house rules, loaded from TOML with documented defaults.

The defaults are ``auditkit/defaults.toml`` (the rules catalog's values). A
licensee file overrides any of them and may override per table::

    [baccarat]
    tie = 9.0

    [tables."EX-BAC-*".baccarat]   # table id or glob pattern (matched, never used as a path)
    banker_commission = 0.0

Nothing in a configuration is executed. Validators read parameters per round
with :meth:`Config.param`, which maps table ids to values without a loop per round.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .values import number_reason, show

__all__ = ["Config", "ConfigError", "load_config", "merge_config", "check_settings", "schema", "value_reason", "spec_reason", "glob_reason",
           "section_of"]


def section_of(game: str) -> str:
    """The configuration section of a game (mini baccarat reads ``[baccarat]``); the name itself if unknown."""
    from . import games

    try:
        return games.get(game).section_name
    except KeyError:
        return game


class ConfigError(ValueError):
    """A configuration that cannot be used, with the reason."""


def _defaults() -> dict[str, Any]:
    """auditkit's ``defaults.toml``, plus the default section of each game registered from outside."""
    from . import games

    data = tomllib.loads(resources.files("auditkit").joinpath("defaults.toml").read_text("utf-8"))
    for g in games.games():
        data.setdefault(g.section_name, copy.deepcopy(g.defaults))
    return data


def schema() -> dict[str, dict[str, dict[str, Any]]]:
    """The settings schema (``auditkit/settings_schema.toml``, plus the section of each game registered
    from outside): section -> key -> type, range, meaning."""
    from . import games

    sch = tomllib.loads(resources.files("auditkit").joinpath("settings_schema.toml").read_text("utf-8"))
    for g in games.games():
        sch.setdefault(g.section_name, copy.deepcopy(g.settings))
    return sch


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` merged in, tables recursively (both already checked)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _merge(base[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


# ---- checking a configuration against the schema ----------------------------------------
_number_reason = number_reason  # the name the callers of wave 2 use


def glob_reason(pattern: str) -> str | None:
    """Why ``pattern`` is not a table id or glob (fnmatch: ``*``, ``?``, ``[seq]``, ``[!seq]``); None when it is.
    fnmatch reads an unclosed ``[`` as a literal character, which no table id holds: refused."""
    if not pattern.strip():
        return "a table id or glob may not be empty"
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                return f"not a valid glob: the [ at character {i + 1} is never closed (fnmatch: *, ?, [seq], [!seq])"
            i = j
        i += 1
    return None


SIMPLE_KINDS = ("number", "integer", "bool", "choice")
"""The kinds of value :func:`spec_reason` checks, in any schema (settings, job files)."""


def spec_reason(spec: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` is not of a schema entry's simple kind (:data:`SIMPLE_KINDS`) and range; None when it is."""
    kind = spec["type"]
    if kind == "number":
        return _number_reason(value, spec)
    if kind == "integer":
        return _number_reason(value, spec, integer=True)
    if kind == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "choice":
        return None if value in spec["choices"] else f"must be one of {', '.join(spec['choices'])}"
    raise AssertionError(f"not a simple kind of value: {kind!r}")  # a bug in a schema


def value_reason(section: str, key: str, value: Any) -> str | None:
    """Why ``value`` cannot be setting ``section.key``; None when it can (house way names are checked later)."""
    spec = schema()[section][key]
    kind = spec["type"]
    if kind in SIMPLE_KINDS:
        return spec_reason(spec, value)
    if kind == "text":
        ok = isinstance(value, str) and re.fullmatch(spec["pattern"], value)
        return None if ok else f"must be text matching {spec['pattern']} (e.g. {_defaults()[section][key]!r})"
    if kind == "paytable":
        if not isinstance(value, dict):
            return "must be a table of hand = payout"
        return None
    own = _own_kind(kind)
    if own is not None:
        return own.value_reason(kind, value)
    raise AssertionError(f"unknown schema type {kind!r}")  # a bug in settings_schema.toml


def _own_kind(kind: str) -> Any:
    """The settings module of the game whose own kind of setting ``kind`` is (``Game.setting_kinds``)."""
    from . import games

    for g in games.games():
        module = g.setting_kinds
        if module is not None and kind in module.KINDS:
            return module
    return None


def _key(path: list[str]) -> str:
    """A dotted key as TOML writes it; a table pattern (after ``tables``) always quoted."""
    return ".".join(json.dumps(p) if (i and path[i - 1] == "tables") or not p.replace("_", "").isalnum() else p
                    for i, p in enumerate(path))


def check_settings(data: dict[str, Any], where: str, prefix: tuple[str, ...] = ()) -> None:
    """Check configuration data (a TOML file's shape) against the schema; ConfigError names
    ``where`` (the file), the key (under ``prefix``, e.g. a job's ``settings``), the value and the reason."""
    sch, defaults = schema(), _defaults()

    def fail(path: list[str], reason: str, value: Any = None, with_value: bool = True) -> None:
        shown = f" = {show(value)}" if with_value else ""
        raise ConfigError(f"{where}: {_key([*prefix, *path])}{shown}: {reason}")

    def section(body: Any, name: str, path: list[str]) -> None:
        if not isinstance(body, dict):
            fail(path, "must be a table of settings", body)
        for key, value in body.items():
            if key not in sch[name]:
                raise ConfigError(f"{where}: unknown setting {_key([*prefix, *path, key])} "
                                  f"(known: {', '.join(sch[name])})")
            reason = value_reason(name, key, value)
            if reason:
                fail(path + [key], reason, value)
            kind = sch[name][key]["type"]
            if kind == "paytable":
                for hand, pay in value.items():
                    if hand not in defaults[name][key]:
                        raise ConfigError(f"{where}: unknown setting {_key([*prefix, *path, key, hand])} "
                                          f"(known: {', '.join(defaults[name][key])})")
                    reason = _number_reason(pay, sch[name][key])
                    if reason:
                        fail(path + [key, hand], reason, pay)
            elif (own := _own_kind(kind)) is not None:
                for part, why in own.item_reasons(kind, value):
                    fail(path + [key, part], why, with_value=False)

    if not isinstance(data, dict):
        raise ConfigError(f"{where}: must be a table of sections")
    for name, body in data.items():
        if name == "tables":
            if not isinstance(body, dict):
                fail(["tables"], 'must be a table of [tables."<table id or glob>".<game>] sections', body)
            for pattern, games in body.items():
                if glob_reason(pattern):
                    fail(["tables", pattern], glob_reason(pattern), with_value=False)  # type: ignore[arg-type]
                if not isinstance(games, dict):
                    fail(["tables", pattern], "must be a table of game sections", games)
                for game, values in games.items():
                    if game not in sch or game == "money":
                        raise ConfigError(f"{where}: {_key([*prefix, 'tables', pattern])}: unknown game section [{game}] "
                                          f"(known: {', '.join(g for g in sch if g != 'money')})")
                    section(values, game, ["tables", pattern, game])
        elif name in sch:
            section(body, name, [name])
        else:
            raise ConfigError(f"{where}: unknown section [{_key([*prefix, name])}] (known: {', '.join(sch)}, tables)")


def check_merged(cfg: Config, where: str) -> None:
    """The checks across keys of a merged configuration, globally and per table: ``at_most``
    pairs (table_min <= table_max) and house way names; ConfigError names ``where``."""
    sch = schema()
    tables = [None, *cfg.data.get("tables", {})]
    for name, keys in sch.items():
        if name == "money":
            continue
        for table in tables:
            if table is not None and name not in cfg.data["tables"][table]:
                continue
            sec = cfg.section(name, table)
            path = ["tables", table, name] if table is not None else [name]
            for key, spec in keys.items():
                other = spec.get("at_most")
                if other and sec[key] > sec[other]:
                    raise ConfigError(f"{where}: {_key([*path, key])} = {show(sec[key])}: must be at most "
                                      f"{other} = {show(sec[other])}")
                own = _own_kind(spec["type"])
                why = own.merged_reason(spec["type"], sec[key], sec) if own is not None else None
                if why:
                    raise ConfigError(f"{where}: {_key([*path, key])} = {show(sec[key])}: {why}")


@dataclass
class Config:
    """Merged configuration: defaults, then a licensee file, then per-table overrides."""

    data: dict[str, Any] = field(default_factory=_defaults)
    source: str = "defaults"
    _codes: tuple[Any, np.ndarray, list] | None = field(default=None, repr=False, compare=False)

    # ---- lookups -------------------------------------------------------------
    def section(self, game: str, table_id: str | None = None) -> dict[str, Any]:
        """A game's settings, with the overrides of the first table section matching ``table_id``."""
        name = section_of(game)
        base = self.data.get(name, {})
        if table_id is not None:
            over = self._table_override(name, table_id)
            if over:
                base = _merge(base, over)
        return base

    def _table_override(self, section: str, table_id: str) -> dict[str, Any] | None:
        tables = self.data.get("tables", {})
        if table_id in tables and section in tables[table_id]:
            return tables[table_id][section]
        for pattern, body in tables.items():
            if section in body and fnmatch.fnmatchcase(table_id, pattern):
                return body[section]
        return None

    def get(self, game: str, key: str, table_id: str | None = None) -> Any:
        """One setting, as configured for ``table_id`` when given."""
        sec = self.section(game, table_id)
        if key not in sec:
            raise ConfigError(f"no setting {section_of(game)}.{key}")
        return sec[key]

    def table_codes(self, table_ids: Any) -> tuple[np.ndarray, list]:
        """``(codes, distinct table ids)`` of a column of table ids; the last column's result is reused."""
        if self._codes is not None and self._codes[0] is table_ids:
            return self._codes[1], self._codes[2]
        if isinstance(table_ids, (pa.Array, pa.ChunkedArray)):
            arr = table_ids.combine_chunks() if isinstance(table_ids, pa.ChunkedArray) else table_ids
            enc = pc.dictionary_encode(pc.fill_null(arr, ""))
            codes = enc.indices.to_numpy(zero_copy_only=False)
            uniques = enc.dictionary.to_pylist()
        else:
            import pandas as pd  # only for a column that is not Arrow's

            codes, u = pd.factorize(pd.Series(np.asarray(table_ids, dtype=object)), sort=False)
            uniques = list(u)
        self._codes = (table_ids, codes, uniques)
        return codes, uniques

    def param(self, game: str, key: str, table_ids: Any, dtype: Any = np.float64) -> np.ndarray:
        """A numeric setting per round: one value for each table id, looked up once per distinct table.

        ``table_ids`` is best the Arrow column itself (``table["table_id"]``): it is
        dictionary-encoded once and reused by the next call with the same column.
        A missing setting gives NaN (for optional values such as table limits).
        """
        codes, uniques = self.table_codes(table_ids)
        vals = np.array([self.section(game, str(t)).get(key, np.nan) for t in uniques], dtype=dtype)
        return vals[codes] if len(codes) else np.empty(0, dtype=dtype)

    @property
    def money(self) -> dict[str, Any]:
        return self.data["money"]

    def digest(self) -> str:
        """SHA-256 of the merged configuration, for run records."""
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()


def merge_config(base: Config, over: dict[str, Any], source: str, where: str | None = None,
                 prefix: tuple[str, ...] = ()) -> Config:
    """``base`` overridden by configuration data of the same shape as a TOML file, checked against
    the schema first (errors name ``where``, default ``source``, and keys under ``prefix``)."""
    check_settings(over, where or source, prefix)
    over = copy.deepcopy(over)
    tables = over.pop("tables", {})
    data = _merge(base.data, over)
    merged = dict(data.get("tables", {}))
    for pattern, body in tables.items():
        old = merged.get(pattern, {})
        merged[pattern] = {**old, **{s: {**old.get(s, {}), **v} for s, v in body.items()}}
    data["tables"] = merged
    cfg = Config(data=data, source=source)
    check_merged(cfg, where or source)
    return cfg


def load_config(path: str | Path | None = None) -> Config:
    """Defaults merged with a licensee TOML file; ConfigError says what is wrong (file, key, value, reason)."""
    cfg = Config()
    if path is None:
        return cfg
    p = Path(path)
    try:
        over = tomllib.loads(p.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration {p}: {getattr(exc, 'strerror', None) or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration {p} is not valid TOML: {exc}") from exc
    return merge_config(cfg, over, str(p))
