"""The import profile (``profile = 1`` TOML), validated up front: an unknown key, a wrong type or a
bad pattern is a :class:`~auditkit.paytables.ConfigError` naming the file and the key."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...paytables import ConfigError
from .fields import SOURCE_KEYS, FieldSpec, check_keys, check_target, kind_of, parse_spec, typed
from .fields import err as _err

__all__ = ["Profile", "FieldSpec", "load_profile", "parse_profile", "GRAINS", "LISTS", "NOTATIONS",
           "TIME_KINDS", "kind_of"]

GRAINS = ("round", "hand", "wager", "card")
LISTS = ("hands", "wagers", "events")  # the round's lists: each row of the source may add one item to each
NOTATIONS = ("auditkit", "rank-suit", "symbols", "numeric-ace-14", "numeric-ace-1", "points", "rank-only",
             "pattern")
TIME_KINDS = ("iso", "strftime", "excel", "epoch", "epoch-ms", "none")
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
    left_out: list[str] = field(default_factory=list)  # evidence left out as a log leaves it out
    source: Any = None  # the [source] table's spec (profsrc), or the raw table


def load_profile(path: str | Path) -> Profile:
    """Read and validate the profile at ``path``."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the profile: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: {not_utf8(data, exc)}; save the profile as UTF-8") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from exc
    return parse_profile(raw, str(p))


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """Where a file stops being UTF-8: ``not UTF-8 text: byte 0xe9 at line 3, column 12``."""
    start = exc.start
    head = data.rfind(b"\n", 0, start) + 1
    line, column = data.count(b"\n", 0, start) + 1, len(data[head:start].decode("utf-8", "replace")) + 1
    return f"not UTF-8 text: byte 0x{data[start]:02x} at line {line}, column {column}"


def _open_questions(value: Any, where: str, key: str = "") -> None:
    """Refuse a value the draft left as a question (``"TODO: ..."``, ``auditkit profile suggest``): it is
    answered by the user, never taken as a value (a zone or a decimal mark guessed is a wrong audit)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _open_questions(v, where, f"{key}.{k}" if key else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _open_questions(v, where, f"{key}[{i}]")
    elif isinstance(value, str) and value.lstrip().upper().startswith("TODO"):
        raise _err(where, key, f"still a question of the draft: {value.strip()!r}; answer it in the profile "
                               "(docs/profiles.md: what a user must still decide)")


def parse_profile(raw: dict[str, Any], where: str = "<profile>") -> Profile:
    """The :class:`Profile` of a parsed TOML document."""
    _open_questions(raw, where)
    check_keys(raw, {"profile", "name", "source", "grain", "fields", "cards", "times", "money", "values",
                      "not_recorded", "left_out"}, where, "")
    if raw.get("profile") != 1:
        raise _err(where, "profile", f"must be 1 (the profile format version), got {raw.get('profile')!r}")
    prof = Profile(name=typed(raw.get("name", Path(where).stem), str, where, "name"), where=where, raw=raw)
    prof.source = _source(raw.get("source", {}), where)
    _grain(prof, typed(raw.get("grain", {}), dict, where, "grain"))
    values = typed(raw.get("values", {}), dict, where, "values")
    for name, table in values.items():
        typed(table, dict, where, f"values.{name}")
    fields = typed(raw.get("fields"), dict, where, "fields") if "fields" in raw else None
    if not fields:
        raise _err(where, "fields", "missing: map at least game, table_id and the game's cards")
    _fields(prof, fields, values, where, "")
    if prof.shoe_key and "shoe_id" not in prof.fields:
        prof.fields["shoe_id"] = FieldSpec(template="-".join("{" + c + "}" for c in prof.shoe_key))
    for need in ("game", "table_id"):
        if need not in prof.fields:
            raise _err(where, f"fields.{need}", "missing (a column, or {const = ...})")
    _house_rules_read(prof)
    _cards(prof, typed(raw.get("cards", {}), dict, where, "cards"))
    _times(prof, typed(raw.get("times", {}), dict, where, "times"))
    _money(prof, typed(raw.get("money", {}), dict, where, "money"))
    extra = typed(raw.get("not_recorded", []), list, where, "not_recorded")
    left = typed(raw.get("left_out", []), list, where, "left_out")
    prof.left_out = _left_out(prof, [typed(x, str, where, "left_out") for x in left], extra)
    prof.not_recorded = _not_recorded(prof, [typed(x, str, where, "not_recorded") for x in extra])
    return prof


LEFT_OUT = {"events": "events.", "wagers": "wagers.", "announced": "announced.", "deal_order": "deal_order",
            "cut_card": "cut_card", "dealer": "dealer_id", "shoe": "shoe_id"}
"""The kinds a profile may say its export leaves out as a log leaves them out, each with the fields
that would record it (a kind both left out and mapped is a contradiction)."""


def _left_out(prof: Profile, kinds: list[str], extra: list[str]) -> list[str]:
    for k in kinds:
        if k not in LEFT_OUT:
            raise _err(prof.where, "left_out", f"{k!r} is not one of {', '.join(LEFT_OUT)}")
        if k in extra:
            raise _err(prof.where, "left_out", f"{k!r} is also in not_recorded: say one (left out as a log leaves "
                       "it out, or not recorded: rules needing it not checkable)")
        mapped = [t for t in prof.fields if t == LEFT_OUT[k] or t.startswith(LEFT_OUT[k])]
        if k == "shoe" and prof.shoe_key:
            mapped.append("grain.shoe")
        if mapped:
            raise _err(prof.where, "left_out", f"{k!r} is left out but the profile maps {mapped[0]}")
    return list(dict.fromkeys(kinds))


def _source(table: Any, where: str) -> Any:
    table = typed(table, dict, where, "source")
    from .source import SourceSpec

    return SourceSpec.from_table(table, where)


def _grain(prof: Profile, g: dict, where: str | None = None) -> None:
    where = prof.where
    check_keys(g, {"rows", "round", "shoe"}, where, "grain.")
    prof.grain = typed(g.get("rows", "round"), str, where, "grain.rows")
    if prof.grain not in GRAINS:
        raise _err(where, "grain.rows", f"{prof.grain!r} is not one of {', '.join(GRAINS)}")
    for key, attr in (("round", "round_key"), ("shoe", "shoe_key")):
        cols = g.get(key, [])
        cols = [cols] if isinstance(cols, str) else typed(cols, list, where, f"grain.{key}")
        setattr(prof, attr, [typed(c, str, where, f"grain.{key}") for c in cols])
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
        prof.fields[target] = parse_spec(spec, values, where, f"fields.{target}")
        check_target(target, prof.fields[target], where)


def _house_rules_read(prof: Profile) -> None:
    """A house rule mapped for a game whose rules do not read it per round is refused, not ignored."""
    from ... import games
    from .fields import house_rule_games

    const = prof.fields["game"].const
    if const is None:
        return
    try:
        game = games.get(str(const)).name
    except KeyError:
        return  # an unknown game: the record reader says so, row by row
    readers = house_rule_games()
    for target in prof.fields:
        name = target.split(".", 1)[1] if target.startswith("rules.") else None
        if name in readers and game not in readers[name]:
            raise _err(prof.where, f"fields.{target}", f"the {game} rules do not read {name!r} per round "
                       f"(it is read for {', '.join(readers[name])}); set it per table in the configuration")


def _cards(prof: Profile, c: dict) -> None:
    where = prof.where
    check_keys(c, {"notation", "pattern", "ranks", "suits", "placeholder_suit"}, where, "cards.")
    prof.notation = typed(c.get("notation", "auditkit"), str, where, "cards.notation")
    if prof.notation not in NOTATIONS:
        raise _err(where, "cards.notation", f"{prof.notation!r} is not one of {', '.join(NOTATIONS)}")
    if "pattern" in c:
        text = typed(c["pattern"], str, where, "cards.pattern")
        from .cut import Unbounded, compile_pattern

        try:
            prof.pattern = compile_pattern(text)
        except (re.error, Unbounded) as exc:
            raise _err(where, "cards.pattern", f"bad pattern {text!r}: {exc}") from exc
        if "rank" not in prof.pattern.groupindex:
            raise _err(where, "cards.pattern", "needs a group (?P<rank>...) (and (?P<suit>...) when cards have suits)")
    elif prof.notation == "pattern":
        raise _err(where, "cards.pattern", "notation 'pattern' needs a pattern")
    for k in ("ranks", "suits"):
        table = typed(c.get(k, {}), dict, where, f"cards.{k}")
        setattr(prof, k, {str(a): typed(b, str, where, f"cards.{k}.{a}") for a, b in table.items()})
    prof.placeholder_suit = typed(c.get("placeholder_suit", "s"), str, where, "cards.placeholder_suit")
    if prof.placeholder_suit not in ("c", "d", "h", "s"):
        raise _err(where, "cards.placeholder_suit", "one of c, d, h, s")


def _times(prof: Profile, t: dict) -> None:
    where = prof.where
    check_keys(t, {"kind", "format", "zone", "start_date", "spacing_seconds"}, where, "times.")
    prof.time_format = typed(t["format"], str, where, "times.format") if "format" in t else None
    prof.time_kind = typed(t.get("kind", "strftime" if prof.time_format else "iso"), str, where, "times.kind")
    if prof.time_kind not in TIME_KINDS:
        raise _err(where, "times.kind", f"{prof.time_kind!r} is not one of {', '.join(TIME_KINDS)}")
    if prof.time_kind == "strftime" and not prof.time_format:
        raise _err(where, "times.format", "kind 'strftime' needs a format such as '%m/%d/%Y %H:%M'")
    if "zone" in t:
        prof.zone = typed(t["zone"], str, where, "times.zone")
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
            dt.date.fromisoformat(typed(d, str, where, "times.start_date"))
        except ValueError as exc:
            raise _err(where, "times.start_date", f"not a date YYYY-MM-DD: {d!r}") from exc
        prof.start_date = d
        prof.spacing_seconds = typed(t.get("spacing_seconds", 60), int, where, "times.spacing_seconds")
        if prof.spacing_seconds < 1:
            raise _err(where, "times.spacing_seconds", "at least 1")
        if "started_at" in prof.fields:
            raise _err(where, "fields.started_at", "times.kind 'none' makes started_at: do not map it")
    elif "started_at" not in prof.fields:
        raise _err(where, "fields.started_at", "missing (or set times.kind = 'none' with a start_date)")


def _money(prof: Profile, m: dict) -> None:
    where = prof.where
    check_keys(m, {"currency", "thousands", "decimal", "parentheses"}, where, "money.")
    cur = m.get("currency", prof.currency)
    cur = [cur] if isinstance(cur, str) else typed(cur, list, where, "money.currency")
    prof.currency = [typed(c, str, where, "money.currency") for c in cur]
    prof.thousands = typed(m.get("thousands", ","), str, where, "money.thousands")
    prof.decimal = typed(m.get("decimal", "."), str, where, "money.decimal")
    prof.parentheses = typed(m.get("parentheses", True), bool, where, "money.parentheses")
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
    if not any(k.startswith(("wagers.", "hands.")) and kind_of(k, s) == "money" for k, s in prof.fields.items()):
        out.add("wagers")  # any amount mapped is a wager recorded: three card poker's ante, play, pair plus
    if not any(k.startswith("announced.") for k in prof.fields):
        out.add("announced")
    if not any(k.startswith("events") for k in prof.fields):
        out.add("events")
    if any(k in prof.fields for k in ("player_cards", "banker_cards")):  # baccarat's
        out.update(k for k in ("deal_order", "cut_card") if k not in prof.fields)
    return sorted(out - set(prof.left_out))
