"""A field of a profile: where its value comes from (:class:`FieldSpec`), how its cell is read
(:func:`kind_of`), checked up front (:func:`parse_spec`)."""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from typing import Any

from ...paytables import ConfigError

__all__ = ["FieldSpec", "kind_of", "parse_spec", "SPEC_KEYS", "SOURCE_KEYS", "TYPES", "err", "check_keys", "typed",
           "house_rules", "house_rule_games", "check_target"]

SPEC_KEYS = {"column", "columns", "const", "template", "compute", "split", "json", "values", "when", "type",
             "collect", "returned", "bankroll_before", "bankroll_after", "default", "pattern", "group", "only",
             "index", "repeat"}
SOURCES = ("column", "columns", "const", "template", "compute", "returned", "bankroll_before")
SOURCE_KEYS = set(SOURCES)  # one names a field's source
TYPES = ("text", "int", "money", "bool", "cards", "ints", "time", "ratio")


def house_rules() -> dict[str, str]:
    """The house rules a round may carry (``rules.<name>``), each with its type: the settings of the same
    name (docs/rules.md) that some game's rules read per round (``Game.house_rules``)."""
    from ... import games

    return {name: kind for g in games.games() for name, kind in g.house_rules.items()}


def house_rule_games() -> dict[str, tuple[str, ...]]:
    """The games whose rules read each house rule per round (a profile of another game mapping it is refused)."""
    from ... import games

    out: dict[str, tuple[str, ...]] = {}
    for g in games.games():
        for name in g.house_rules:
            out[name] = (*out.get(name, ()), g.name)
    return out


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
    if target.startswith("rules."):
        return house_rules().get(last, "ratio")
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
    compute: str | None = None
    default: str | None = None
    pattern: re.Pattern | None = None
    group: str | None = None
    only: dict[str, list[str]] | None = None
    index: int | None = None
    repeat: bool = False

    @property
    def cuts(self) -> bool:
        """Whether a cell is cut (a pattern or an element of a split) before it is read."""
        return self.pattern is not None or self.index is not None

    def source_columns(self) -> list[str]:
        cols = [c for c in (self.column, self.returned, self.bankroll_before, self.bankroll_after) if c]
        cols += self.columns or []
        for text in (self.template, self.compute):
            if text:
                cols += [f for _, f, _, _ in string.Formatter().parse(text) if f]
        if self.when:
            cols += [c["column"] for c in self.when["conds"]]
        return cols


def err(where: str, key: str, why: str) -> ConfigError:
    return ConfigError(f"{where}: {key}: {why}")


def check_keys(table: dict, allowed: set[str], where: str, prefix: str) -> None:
    for k in table:
        if k not in allowed:
            raise err(where, f"{prefix}{k}", f"unknown key (known: {', '.join(sorted(allowed))})")


def typed(value: Any, kind: type | tuple, where: str, key: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise err(where, key, f"expected {names}, got {type(value).__name__} {value!r}")
    return value


def parse_spec(spec: Any, values: dict, where: str, key: str) -> FieldSpec:
    if isinstance(spec, str):
        return FieldSpec(column=spec)
    if not isinstance(spec, dict):
        return FieldSpec(const=spec)
    check_keys(spec, SPEC_KEYS, where, f"{key}.")
    f = FieldSpec()
    for k in ("column", "template", "compute", "split", "type", "returned", "bankroll_before", "bankroll_after",
              "default", "group"):
        if k in spec:
            setattr(f, k, typed(spec[k], str, where, f"{key}.{k}"))
    for k in ("json", "collect", "repeat"):
        if k in spec:
            setattr(f, k, typed(spec[k], bool, where, f"{key}.{k}"))
    if "columns" in spec:
        f.columns = [typed(c, str, where, f"{key}.columns") for c in typed(spec["columns"], list, where, f"{key}.columns")]
    f.const = spec.get("const")
    sources = [k for k in SOURCES if k in spec]
    if len(sources) != 1:
        raise err(where, key, f"give exactly one of {', '.join(SOURCES)} (given: {', '.join(sources) or 'none'})")
    if f.default is not None and "const" in spec:
        raise err(where, f"{key}.default", "a const has no empty cell: give default with a column")
    if (f.bankroll_before is None) != (f.bankroll_after is None):
        raise err(where, key, "bankroll_before and bankroll_after go together")
    if f.type is not None and f.type not in TYPES:
        raise err(where, f"{key}.type", f"{f.type!r} is not one of {', '.join(TYPES)}")
    if f.template is not None:
        _check_template(f.template, where, f"{key}.template")
    if f.compute is not None:
        from .compute import parse

        try:
            parse(f.compute)
        except ValueError as exc:
            raise err(where, f"{key}.compute", f"{f.compute!r}: {exc}") from exc
    _cut(f, spec, where, key)
    if "values" in spec:
        v = spec["values"]
        if isinstance(v, str):
            if v not in values:
                raise err(where, f"{key}.values", f"no table [values.{v}] in the profile")
            v = values[v]
        f.values = {str(k): x for k, x in typed(v, dict, where, f"{key}.values").items()}
    if "when" in spec:
        f.when = _when(typed(spec["when"], dict, where, f"{key}.when"), where, f"{key}.when")
    return f


def _condition(w: dict, where: str, key: str) -> dict[str, Any]:
    check_keys(w, {"column", "equals", "in"}, where, f"{key}.")
    if "column" not in w or ("equals" in w) == ("in" in w):
        raise err(where, key, "needs column and one of equals, in")
    values = typed(w["in"], list, where, f"{key}.in") if "in" in w else [w["equals"]]
    return {"column": typed(w["column"], str, where, f"{key}.column"), "in": [str(x) for x in values]}


def _when(w: dict, where: str, key: str) -> dict[str, Any]:
    """``{"mode": "all" | "any", "conds": [{"column", "in"}...]}`` of a ``when`` (one condition, all, any)."""
    if "all" in w or "any" in w:
        check_keys(w, {"all", "any"}, where, f"{key}.")
        if len(w) != 1:
            raise err(where, key, "give one of all, any")
        mode = next(iter(w))
        conds = typed(w[mode], list, where, f"{key}.{mode}")
        if not conds:
            raise err(where, f"{key}.{mode}", "at least one condition")
        return {"mode": mode, "conds": [_condition(typed(c, dict, where, f"{key}.{mode}"), where, f"{key}.{mode}")
                                        for c in conds]}
    return {"mode": "all", "conds": [_condition(w, where, key)]}


def _cut(f: FieldSpec, spec: dict, where: str, key: str) -> None:
    """``pattern``, ``group``, ``only`` and ``index``, checked: a pattern bounded, its groups known."""
    from .cut import Unbounded, compile_pattern

    if "pattern" in spec:
        text = typed(spec["pattern"], str, where, f"{key}.pattern")
        try:
            f.pattern = compile_pattern(text)
        except (re.error, Unbounded) as exc:
            raise err(where, f"{key}.pattern", f"bad pattern {text!r}: {exc}") from exc
        groups = list(f.pattern.groupindex)
        if f.group is None and len(groups) > 1:
            raise err(where, f"{key}.group", f"the pattern has several groups ({', '.join(groups)}): name the one "
                      "that gives the value")
        f.group = f.group or (groups[0] if groups else None)
        if f.group is not None and f.group not in groups:
            raise err(where, f"{key}.group", f"the pattern has no group {f.group!r} (its groups: "
                      f"{', '.join(groups) or 'none'})")
    else:
        for k in ("group", "only", "repeat"):
            if k in spec:
                raise err(where, f"{key}.{k}", "goes with a pattern")
    several = f.split is not None or f.json or f.repeat
    if "only" in spec:
        only = typed(spec["only"], dict, where, f"{key}.only")
        if not several:
            raise err(where, f"{key}.only", "keeps elements of a split, json or repeat cell: give one of them")
        f.only = {}
        for g, v in only.items():
            if g not in f.pattern.groupindex:  # type: ignore[union-attr]
                raise err(where, f"{key}.only.{g}", "not a group of the pattern")
            f.only[g] = [str(x) for x in (v if isinstance(v, list) else [v])]
    if "index" in spec:
        f.index = typed(spec["index"], int, where, f"{key}.index")
        if not several:
            raise err(where, f"{key}.index", "takes an element of a split, json or repeat cell: give one of them")


def check_target(target: str, spec: FieldSpec, where: str) -> None:
    """The field-specific checks: a house rule's name, where a net may be made from an amount returned."""
    key = f"fields.{target}"
    if target.startswith("rules."):
        name = target.split(".", 1)[1]
        known = house_rules()
        if name not in known:
            raise err(where, key, f"{name!r} is not a house rule a round may carry (known: {', '.join(known)})")
    elif target not in known_targets():
        import difflib

        head, _, tail = target.partition(".")
        if tail and head in known_targets():  # a known object or list: the nearest of its own fields
            what = f"{head!r}"
            own = sorted(k.split(".", 1)[1] for k in known_targets() if k.startswith(head + "."))
            near = [f"{head}.{k}" for k in difflib.get_close_matches(tail, own, n=1, cutoff=0.6)]
        else:
            what = "a round"
            near = difflib.get_close_matches(target, sorted(known_targets()), n=1, cutoff=0.6)
        raise err(where, key, f"not a field of {what}" + (f" (did you mean {near[0]}?)" if near else
                                                          " (see docs/log-format.md)"))
    if spec.returned and not target.endswith(".net"):
        raise err(where, f"{key}.returned", "only a list item's net is made from an amount returned")
    if (spec.split is not None or spec.repeat) and spec.index is None and kind_of(target, spec) not in (
            "cards", "ints") and spec.const is None and spec.values is None:
        raise err(where, f"{key}.index", "a field of one value cut by split needs the element's index "
                  "(index = 0 the first)")


@functools.cache
def known_targets() -> frozenset[str]:
    """Every field a profile may map: the log's round fields (of every game), an object's fields
    (``announced.player``) and a list item's (``hands.seat``, ``events.type``), from the log's schema."""
    import pyarrow as pa

    from ..blocks import json_schema

    out: set[str] = set()
    for f in json_schema():
        out.add(f.name)
        t = f.type
        if pa.types.is_list(t) and pa.types.is_struct(t.value_type):
            t = t.value_type
        if pa.types.is_struct(t):
            out.update(f"{f.name}.{t.field(i).name}" for i in range(t.num_fields))
    return frozenset(out)


def _check_template(text: str, where: str, key: str) -> None:
    """A template names columns and format specs only: no attribute access, no index, no conversion."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise err(where, key, f"bad template {text!r}: {exc}") from exc
    for _, name, spec, conv in parts:
        if name is None:
            continue
        if not name or not _IDENT.match(name) or conv:
            raise err(where, key, f"{{{name}}}: a template names a column only (no '.', '[', '!' or position)")
        if spec and "{" in spec:
            raise err(where, key, f"{{{name}:{spec}}}: no nested fields in a format spec")
        if spec:
            from .cut import check_format_spec

            try:
                check_format_spec(spec)
            except ValueError as exc:
                raise err(where, key, f"{{{name}:{spec}}}: {exc}") from exc
