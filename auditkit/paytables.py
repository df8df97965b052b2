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
import tomllib
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_UP, ROUND_UP
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Config", "ConfigError", "load_config", "merge_config", "section_of"]

ROUNDINGS = {"half_up": ROUND_HALF_UP, "down": ROUND_DOWN, "up": ROUND_UP}


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


def _merge(base: dict[str, Any], over: dict[str, Any], where: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key not in base and where != "tables" and not where.endswith("house_ways"):
            raise ConfigError(f"unknown setting {where}.{key}" if where else f"unknown section [{key}]")
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _merge(base[key], value, f"{where}.{key}" if where else key)
        else:
            if key in base and not isinstance(base[key], dict) and isinstance(value, dict):
                raise ConfigError(f"{where}.{key} must be a value, not a table")
            out[key] = copy.deepcopy(value)
    return out


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
                base = _merge(base, over, name)
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


def merge_config(base: Config, over: dict[str, Any], source: str) -> Config:
    """``base`` overridden by configuration data of the same shape as a TOML file (keys checked)."""
    over = copy.deepcopy(over)
    tables = over.pop("tables", {})
    data = _merge(base.data, over, "")
    merged = dict(data.get("tables", {}))
    for pattern, body in tables.items():
        if not isinstance(body, dict):
            raise ConfigError(f"tables.{pattern} must be a table")
        for section, values in body.items():
            if section not in data or not isinstance(data[section], dict) or section in ("money", "tables"):
                raise ConfigError(f"tables.{pattern}: unknown game section [{section}]")
            _merge(data[section], values, section)  # validates the keys
        old = merged.get(pattern, {})
        merged[pattern] = {**old, **{s: {**old.get(s, {}), **v} for s, v in body.items()}}
    data["tables"] = merged
    _check_money(data["money"])
    return Config(data=data, source=source)


def load_config(path: str | Path | None = None) -> Config:
    """Defaults merged with a licensee TOML file; ConfigError says what is wrong."""
    cfg = Config()
    if path is None:
        return cfg
    p = Path(path)
    try:
        over = tomllib.loads(p.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration {p}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration {p} is not valid TOML: {exc}") from exc
    return merge_config(cfg, over, str(p))


def _check_money(money: dict[str, Any]) -> None:
    if money["rounding"] not in ROUNDINGS:
        raise ConfigError(f"money.rounding must be one of {sorted(ROUNDINGS)}, not {money['rounding']!r}")
    if not (isinstance(money["rounding_unit"], (int, float)) and money["rounding_unit"] > 0):
        raise ConfigError("money.rounding_unit must be a positive number")
