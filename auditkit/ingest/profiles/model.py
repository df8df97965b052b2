"""The import profile (``profile = 1`` TOML), validated up front: an unknown key, a wrong type or a
bad pattern is a :class:`~auditkit.paytables.ConfigError` naming the file and the key."""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...paytables import ConfigError

__all__ = ["Profile", "FieldSpec", "load_profile", "parse_profile", "GRAINS", "LISTS", "NOTATIONS",
           "TIME_KINDS", "kind_of"]

GRAINS = ("round", "hand", "wager", "card")
LISTS = ("hands", "wagers")  # the round's lists: each row of the source may add one item to each
NOTATIONS = ("auditkit", "rank-suit", "symbols", "numeric-ace-14", "numeric-ace-1", "points", "rank-only",
             "pattern")
TIME_KINDS = ("iso", "strftime", "excel", "epoch", "epoch-ms", "none")
SPEC_KEYS = {"column", "columns", "const", "template", "split", "json", "values", "when", "type", "collect",
             "returned", "bankroll_before", "bankroll_after"}
SOURCE_KEYS = {"column", "columns", "const", "template", "returned", "bankroll_before"}  # one names a field's source
TYPES = ("text", "int", "money", "bool", "cards", "ints", "time")
MONEY = {"amount", "net", "wager", "initial_wager", "ante", "play", "pair_plus", "ante_bonus", "table_min",
         "table_max", "insurance", "net_insurance", "commission"}
INTS = {"seat", "hand", "position", "round_seq", "first_position", "cards_remaining", "player", "banker",
        "count", "decks"}
BOOLS = {"doubled", "split", "surrendered", "exposed", "misdeal", "cut_card"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]*$")


def kind_of(target: str, spec: FieldSpec) -> str:
    """The type a target field's values are converted to: stated, or by its name."""
    if spec.type:
        return spec.type
    last = target.rsplit(".", 1)[-1]
    if target == "started_at":
        return "time"
    if last.endswith("cards") or last in {"high", "low"}:
        return "cards"
    if last == "dice":
        return "ints"
    if last in MONEY or last.startswith("net_"):
        return "money"
    if last in INTS:
        return "int"
    if last in BOOLS:
        return "bool"
    return "text"


@dataclass
class FieldSpec:
    """Where one field of the round comes from (exactly one of column, columns, const, template,
    returned, bankroll_before/after), how its cell is read and which rows it is taken from."""

    column: str | None = None
    columns: list[str] | None = None
    const: Any = None
    template: str | None = None
    split: str | None = None
    json: bool = False
    values: dict[str, Any] | None = None
    when: dict[str, Any] | None = None
    type: str | None = None
    collect: bool = False
    returned: str | None = None
    bankroll_before: str | None = None
    bankroll_after: str | None = None

    def source_columns(self) -> list[str]:
        cols = [c for c in (self.column, self.returned, self.bankroll_before, self.bankroll_after) if c]
        cols += self.columns or []
        if self.template:
            cols += [f for _, f, _, _ in string.Formatter().parse(self.template) if f]
        if self.when:
            cols.append(self.when["column"])
        return cols


@dataclass
class Profile:
    """A validated import profile."""

    name: str
    where: str
    raw: dict[str, Any]
    grain: str = "round"
    round_key: list[str] = field(default_factory=list)
    shoe_key: list[str] = field(default_factory=list)
    fields: dict[str, FieldSpec] = field(default_factory=dict)  # dotted target -> spec; lists as "hands.seat"
    notation: str = "auditkit"
    pattern: re.Pattern | None = None
    ranks: dict[str, str] = field(default_factory=dict)
    suits: dict[str, str] = field(default_factory=dict)
    placeholder_suit: str = "s"
    time_kind: str = "iso"
    time_format: str | None = None
    zone: str | None = None
    start_date: str | None = None
    spacing_seconds: int = 60
    currency: list[str] = field(default_factory=lambda: ["$", "€", "£"])
    thousands: str = ","
    decimal: str = "."
    parentheses: bool = True
    not_recorded: list[str] = field(default_factory=list)
    source: Any = None  # the [source] table's spec (profsrc), or the raw table


def _err(where: str, key: str, why: str) -> ConfigError:
    return ConfigError(f"{where}: {key}: {why}")


def _check_keys(table: dict, allowed: set[str], where: str, prefix: str) -> None:
    for k in table:
        if k not in allowed:
            raise _err(where, f"{prefix}{k}", f"unknown key (known: {', '.join(sorted(allowed))})")


def _typed(value: Any, kind: type | tuple, where: str, key: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _err(where, key, f"expected {names}, got {type(value).__name__} {value!r}")
    return value


def load_profile(path: str | Path) -> Profile:
    """Read and validate the profile at ``path``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the profile: {exc.strerror or exc}") from exc
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from exc
    return parse_profile(raw, str(p))


def parse_profile(raw: dict[str, Any], where: str = "<profile>") -> Profile:
    """The :class:`Profile` of a parsed TOML document."""
    _check_keys(raw, {"profile", "name", "source", "grain", "fields", "cards", "times", "money", "values",
                      "not_recorded"}, where, "")
    if raw.get("profile") != 1:
        raise _err(where, "profile", f"must be 1 (the profile format version), got {raw.get('profile')!r}")
    prof = Profile(name=_typed(raw.get("name", Path(where).stem), str, where, "name"), where=where, raw=raw)
    prof.source = _source(raw.get("source", {}), where)
    _grain(prof, _typed(raw.get("grain", {}), dict, where, "grain"))
    values = _typed(raw.get("values", {}), dict, where, "values")
    for name, table in values.items():
        _typed(table, dict, where, f"values.{name}")
    fields = _typed(raw.get("fields"), dict, where, "fields") if "fields" in raw else None
    if not fields:
        raise _err(where, "fields", "missing: map at least game, table_id and the game's cards")
    _fields(prof, fields, values, where, "")
    if prof.shoe_key and "shoe_id" not in prof.fields:
        prof.fields["shoe_id"] = FieldSpec(template="-".join("{" + c + "}" for c in prof.shoe_key))
    for need in ("game", "table_id"):
        if need not in prof.fields:
            raise _err(where, f"fields.{need}", "missing (a column, or {const = ...})")
    _cards(prof, _typed(raw.get("cards", {}), dict, where, "cards"))
    _times(prof, _typed(raw.get("times", {}), dict, where, "times"))
    _money(prof, _typed(raw.get("money", {}), dict, where, "money"))
    extra = _typed(raw.get("not_recorded", []), list, where, "not_recorded")
    prof.not_recorded = _not_recorded(prof, [_typed(x, str, where, "not_recorded") for x in extra])
    return prof


def _source(table: Any, where: str) -> Any:
    table = _typed(table, dict, where, "source")
    try:
        from .source import SourceSpec  # profsrc's
    except ImportError:
        return table
    return SourceSpec.from_table(table, where)


def _grain(prof: Profile, g: dict, where: str | None = None) -> None:
    where = prof.where
    _check_keys(g, {"rows", "round", "shoe"}, where, "grain.")
    prof.grain = _typed(g.get("rows", "round"), str, where, "grain.rows")
    if prof.grain not in GRAINS:
        raise _err(where, "grain.rows", f"{prof.grain!r} is not one of {', '.join(GRAINS)}")
    for key, attr in (("round", "round_key"), ("shoe", "shoe_key")):
        cols = g.get(key, [])
        cols = [cols] if isinstance(cols, str) else _typed(cols, list, where, f"grain.{key}")
        setattr(prof, attr, [_typed(c, str, where, f"grain.{key}") for c in cols])
    if prof.grain != "round" and not prof.round_key:
        raise _err(where, "grain.round", f"one row per {prof.grain} needs the key columns that group rows into a round")


def _fields(prof: Profile, table: dict, values: dict, where: str, prefix: str) -> None:
    for key, spec in table.items():
        target = f"{prefix}{key}"
        if isinstance(spec, dict) and not (set(spec) & SOURCE_KEYS):  # a nested object or a list's fields
            if prefix:
                raise _err(where, f"fields.{target}", "nested too deep")
            _fields(prof, spec, values, where, f"{target}.")
            continue
        prof.fields[target] = _spec(spec, values, where, f"fields.{target}")
        if prof.fields[target].returned and not target.endswith(".net"):
            raise _err(where, f"fields.{target}.returned", "only a list item's net is made from an amount returned")


def _spec(spec: Any, values: dict, where: str, key: str) -> FieldSpec:
    if isinstance(spec, str):
        return FieldSpec(column=spec)
    if not isinstance(spec, dict):
        return FieldSpec(const=spec)
    _check_keys(spec, SPEC_KEYS, where, f"{key}.")
    f = FieldSpec()
    for k in ("column", "template", "split", "type", "returned", "bankroll_before", "bankroll_after"):
        if k in spec:
            setattr(f, k, _typed(spec[k], str, where, f"{key}.{k}"))
    for k in ("json", "collect"):
        if k in spec:
            setattr(f, k, _typed(spec[k], bool, where, f"{key}.{k}"))
    if "columns" in spec:
        f.columns = [_typed(c, str, where, f"{key}.columns") for c in _typed(spec["columns"], list, where, f"{key}.columns")]
    f.const = spec.get("const")
    sources = [k for k in ("column", "columns", "const", "template", "returned", "bankroll_before") if k in spec]
    if len(sources) != 1:
        raise _err(where, key, "give exactly one of column, columns, const, template, returned, bankroll_before "
                   f"(given: {', '.join(sources) or 'none'})")
    if (f.bankroll_before is None) != (f.bankroll_after is None):
        raise _err(where, key, "bankroll_before and bankroll_after go together")
    if f.type is not None and f.type not in TYPES:
        raise _err(where, f"{key}.type", f"{f.type!r} is not one of {', '.join(TYPES)}")
    if f.template is not None:
        _check_template(f.template, where, f"{key}.template")
    if "values" in spec:
        v = spec["values"]
        if isinstance(v, str):
            if v not in values:
                raise _err(where, f"{key}.values", f"no table [values.{v}] in the profile")
            v = values[v]
        f.values = {str(k): x for k, x in _typed(v, dict, where, f"{key}.values").items()}
    if "when" in spec:
        w = _typed(spec["when"], dict, where, f"{key}.when")
        _check_keys(w, {"column", "equals", "in"}, where, f"{key}.when.")
        if "column" not in w or ("equals" in w) == ("in" in w):
            raise _err(where, f"{key}.when", "needs column and one of equals, in")
        f.when = {"column": _typed(w["column"], str, where, f"{key}.when.column"),
                  "in": [str(x) for x in (w["in"] if "in" in w else [w["equals"]])]}
    return f


def _check_template(text: str, where: str, key: str) -> None:
    """A template names columns and format specs only: no attribute access, no index, no conversion."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise _err(where, key, f"bad template {text!r}: {exc}") from exc
    for _, name, spec, conv in parts:
        if name is None:
            continue
        if not name or not _IDENT.match(name) or conv:
            raise _err(where, key, f"{{{name}}}: a template names a column only (no '.', '[', '!' or position)")
        if spec and "{" in spec:
            raise _err(where, key, f"{{{name}:{spec}}}: no nested fields in a format spec")


def _cards(prof: Profile, c: dict) -> None:
    where = prof.where
    _check_keys(c, {"notation", "pattern", "ranks", "suits", "placeholder_suit"}, where, "cards.")
    prof.notation = _typed(c.get("notation", "auditkit"), str, where, "cards.notation")
    if prof.notation not in NOTATIONS:
        raise _err(where, "cards.notation", f"{prof.notation!r} is not one of {', '.join(NOTATIONS)}")
    if "pattern" in c:
        text = _typed(c["pattern"], str, where, "cards.pattern")
        try:
            prof.pattern = re.compile(text)
        except re.error as exc:
            raise _err(where, "cards.pattern", f"bad pattern {text!r}: {exc}") from exc
        if "rank" not in prof.pattern.groupindex:
            raise _err(where, "cards.pattern", "needs a group (?P<rank>...) (and (?P<suit>...) when cards have suits)")
    elif prof.notation == "pattern":
        raise _err(where, "cards.pattern", "notation 'pattern' needs a pattern")
    for k in ("ranks", "suits"):
        table = _typed(c.get(k, {}), dict, where, f"cards.{k}")
        setattr(prof, k, {str(a): _typed(b, str, where, f"cards.{k}.{a}") for a, b in table.items()})
    prof.placeholder_suit = _typed(c.get("placeholder_suit", "s"), str, where, "cards.placeholder_suit")
    if prof.placeholder_suit not in ("c", "d", "h", "s"):
        raise _err(where, "cards.placeholder_suit", "one of c, d, h, s")


def _times(prof: Profile, t: dict) -> None:
    where = prof.where
    _check_keys(t, {"kind", "format", "zone", "start_date", "spacing_seconds"}, where, "times.")
    prof.time_format = _typed(t["format"], str, where, "times.format") if "format" in t else None
    prof.time_kind = _typed(t.get("kind", "strftime" if prof.time_format else "iso"), str, where, "times.kind")
    if prof.time_kind not in TIME_KINDS:
        raise _err(where, "times.kind", f"{prof.time_kind!r} is not one of {', '.join(TIME_KINDS)}")
    if prof.time_kind == "strftime" and not prof.time_format:
        raise _err(where, "times.format", "kind 'strftime' needs a format such as '%m/%d/%Y %H:%M'")
    if "zone" in t:
        prof.zone = _typed(t["zone"], str, where, "times.zone")
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(prof.zone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise _err(where, "times.zone", f"unknown time zone {prof.zone!r}") from exc
    elif prof.time_kind not in ("iso",):
        raise _err(where, "times.zone", "needed: the time zone the export's times are in (e.g. 'America/Chicago')")
    if prof.time_kind == "none":
        import datetime as dt

        d = t.get("start_date")
        if isinstance(d, dt.date) and not isinstance(d, dt.datetime):
            d = d.isoformat()
        try:
            dt.date.fromisoformat(_typed(d, str, where, "times.start_date"))
        except ValueError as exc:
            raise _err(where, "times.start_date", f"not a date YYYY-MM-DD: {d!r}") from exc
        prof.start_date = d
        prof.spacing_seconds = _typed(t.get("spacing_seconds", 60), int, where, "times.spacing_seconds")
        if prof.spacing_seconds < 1:
            raise _err(where, "times.spacing_seconds", "at least 1")
        if "started_at" in prof.fields:
            raise _err(where, "fields.started_at", "times.kind 'none' makes started_at: do not map it")
    elif "started_at" not in prof.fields:
        raise _err(where, "fields.started_at", "missing (or set times.kind = 'none' with a start_date)")


def _money(prof: Profile, m: dict) -> None:
    where = prof.where
    _check_keys(m, {"currency", "thousands", "decimal", "parentheses"}, where, "money.")
    cur = m.get("currency", prof.currency)
    cur = [cur] if isinstance(cur, str) else _typed(cur, list, where, "money.currency")
    prof.currency = [_typed(c, str, where, "money.currency") for c in cur]
    prof.thousands = _typed(m.get("thousands", ","), str, where, "money.thousands")
    prof.decimal = _typed(m.get("decimal", "."), str, where, "money.decimal")
    prof.parentheses = _typed(m.get("parentheses", True), bool, where, "money.parentheses")
    if prof.decimal == prof.thousands or len(prof.decimal) != 1:
        raise _err(where, "money.decimal", "one character, not the thousands separator")


def _not_recorded(prof: Profile, extra: list[str]) -> list[str]:
    """The evidence every round read through this profile lacks (rules/coverage.py's vocabulary)."""
    from ...rules.coverage import EVIDENCE

    out = set(extra)
    for x in extra:
        if x not in EVIDENCE:
            raise _err(prof.where, "not_recorded", f"{x!r} is not one of {', '.join(EVIDENCE)}")
    has_suit = prof.notation in ("auditkit", "rank-suit", "symbols", "numeric-ace-14", "numeric-ace-1") or (
        prof.pattern is not None and "suit" in prof.pattern.groupindex)
    if not has_suit:
        out.add("suits")
    if prof.notation == "points":
        out.add("ranks")
    if prof.time_kind == "none":
        out.add("times")
    rid = prof.fields.get("round_id")
    if rid is None or rid.column is None:
        out.add("round_id")
    for key, kind in (("dealer_id", "dealer"), ("shoe_id", "shoe")):
        if key not in prof.fields:
            out.add(kind)
    if not any(k.startswith(("wagers.", "hands.")) and k.rsplit(".", 1)[-1] in ("net", "amount", "wager")
               for k in prof.fields):
        out.add("wagers")
    if not any(k.startswith("announced.") for k in prof.fields):
        out.add("announced")
    if not any(k.startswith("events") for k in prof.fields):
        out.add("events")
    if any(k in prof.fields for k in ("player_cards", "banker_cards")):  # baccarat's
        out.update(k for k in ("deal_order", "cut_card") if k not in prof.fields)
    return sorted(out)
