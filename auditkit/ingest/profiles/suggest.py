"""A draft profile from an export's header and a sample of its values (``auditkit profile suggest``).

Each column gets a role from its name and values together (:mod:`.roles`); the game is recognised
from the roles of all the columns; each role becomes the field the game records it as. What the
sample cannot decide (the time zone, a separator that may be a decimal one) is a ``TODO:`` value the
profile refuses until it is answered; what it could not place is a ``# TODO:`` comment.
docs/profiles.md ("profile suggest") lists what a user must still decide.
"""

from __future__ import annotations

import pyarrow as pa

from .draft import TODO, Draft
from .mapping import ROW
from .placement import MONEY_ROLES, Placement, left_out
from .roles import Column, classify, recognise_game, role_column
from .sniff import has_offset, money_format, norm

__all__ = ["suggest_profile", "SAMPLE", "Suggestion"]

SAMPLE = 500  # rows looked at


class Suggestion:
    """The draft of one export: :attr:`draft` (its TOML by ``text()``), the round key, the game."""

    def __init__(self, draft: Draft, key: list[str], game: str | None) -> None:
        self.draft, self.key, self.game = draft, key, game

    def text(self) -> str:
        return self.draft.text()


def suggest_profile(table: pa.Table, file_name: str, source: dict | None = None, utc: tuple[str, ...] = ()
                    ) -> Suggestion:
    """The draft profile of a source's rows (string columns and ``__row``); ``source`` its ``[source]``;
    ``utc`` the columns the source gives as instants written in UTC (a PostgreSQL ``timestamptz``)."""
    head = table.slice(0, SAMPLE)
    columns = [classify(c, head[c].to_pylist()) for c in table.column_names if c != ROW]
    draft = _top(file_name, min(SAMPLE, table.num_rows), source)
    kinds = role_column(columns)
    game, tied = recognise_game([r for c in columns for r in c.roles], kinds is not None)
    key = _round_key(columns, kinds is not None)
    build = Placement(draft, columns, game, kinds, key)
    build.game_field(tied)
    build.columns()
    _grain(draft, build, key)
    _fields(draft, build)
    _cards(draft, columns)
    _times(draft, columns, build.used, utc)
    _money(draft, columns)
    _values(draft, build)
    return Suggestion(draft, key, game)


def _top(file_name: str, rows: int, source: dict | None) -> Draft:
    """The draft's header, its name (the file's stem) and its ``[source]``."""
    draft = Draft([f"Draft profile for {file_name}, written by `auditkit profile suggest` from its header and",
                   f"the first {rows} rows. Check every line; docs/profiles.md documents "
                   "each key and lists what a draft leaves to decide."])
    draft.section(None)
    draft.set("profile", 1)
    draft.set("name", norm(file_name.rsplit(".", 1)[0]) or "export")
    if source:
        draft.section("source")
        for k, v in source.items():
            draft.set(k, v)
    return draft


def _fields(draft: Draft, build: Placement) -> None:
    """The ``[fields]`` placed, and the evidence no column records: ``not_recorded`` when the placement
    knows the export lacks it, else ``left_out`` with the question it leaves to the user."""
    draft.sections["fields"] = build.fields.sections["fields"]
    if build.not_recorded:
        draft.set("not_recorded", build.not_recorded, "evidence the export lacks", section=None)
    if left := left_out(build):
        draft.note("TODO: decide: no column records these. left_out reads each round as a log without them (none "
                   "happened);\nif the vendor's system does not record them, write not_recorded = [...] instead "
                   "(rules needing them: not checkable)", section=None)
        draft.set("left_out", left, section=None)


def _values(draft: Draft, build: Placement) -> None:
    """The ``[values.NAME]`` tables (a column's codes as the game's words); a code the sample cannot
    decide is a ``# TODO:`` comment."""
    for name, table_ in build.tables.items():
        draft.section(f"values.{name}")
        for k, v in table_.items():
            if isinstance(v, str) and v.startswith(TODO):
                draft.note(f"TODO: {k!r} = ? ({v[len(TODO):]})")
            else:
                draft.set(k, v)


def _round_key(columns: list[Column], shared: bool) -> list[str]:
    """The column naming each row's round when rows share rounds: a round id or a game counter whose
    values repeat in the sample (one unique to each row numbers rows)."""
    table = next((c for c in columns if c.role == "table" and len(c.distinct) > 1), None)
    for role in ("round_id", "round_counter"):
        for c in columns:
            if c.role == role and len(c.distinct) < len(c.values):
                return _per_table(c, table) if role == "round_counter" else [c.name]
    if not shared:
        counters = [c for c in columns if c.role == "round_counter"]
        if counters and not any(c.role == "round_id" for c in columns):
            return _per_table(counters[0], table)
    return []


def _per_table(counter: Column, table: Column | None) -> list[str]:
    """A game counter's key: with the table when the counter restarts per table (a number met on two)."""
    if table is None:
        return [counter.name]
    seen: dict[str, str] = {}
    for n, t in zip(counter.cells, table.cells, strict=True):
        if n is None or t is None:
            continue
        if seen.setdefault(n.strip(), t.strip()) != t.strip():
            return [table.name, counter.name]
    return [counter.name]

def _grain(draft: Draft, build: Placement, key: list[str]) -> None:
    draft.section("grain")
    items = any(t.startswith(("hands.", "wagers.")) for t in build.used)
    if key and (items or build.kinds):
        draft.set("rows", "hand" if build.items == "hands" else "wager")
        draft.set("round", key, "the columns whose values together name a round")
    elif key:
        draft.set("rows", "round")
        draft.set("round", key)
    else:
        draft.set("rows", "round", "TODO if several rows make one round: round = [the columns that group them]")
    if not build.fields.has("table_id", "fields"):
        build.fields.note("TODO: the table id: a column, or a constant naming the table")
        build.fields.set("table_id", f"{TODO}the table")  # a column no export has: refused until answered


def _cards(draft: Draft, columns: list[Column]) -> None:
    draft.section("cards")
    tagged = next((c.compound for c in columns if c.compound is not None and c.compound.kind == "tagged"), None)
    if tagged is not None:  # who:rank:suit tokens: the card part of each token
        draft.set("notation", "pattern")
        draft.set("pattern", tagged.card)
        if tagged.numbered_suits:
            draft.set("suits", {"0": "c", "1": "d", "2": "h", "3": "s"}, "TODO: check the order of the numbered "
                      "suits (no finding depends on it: only the cards' texts do)")
        if tagged.ace_14:
            draft.set("ranks", {"14": "A"})
        return
    found = [c.cards for c in columns if c.cards is not None]
    if not found:
        draft.note("TODO: no card column recognised: name the notation (a preset or a pattern)")
        draft.set("notation", "auditkit")
        return
    first = found[0]
    if any(f.table() != first.table() for f in found[1:]):
        draft.note("TODO: the card columns are written in different notations: check every card column")
    for k, v in first.table().items():
        draft.set(k, v)


def _times(draft: Draft, columns: list[Column], used: set[str], utc: tuple[str, ...] = ()) -> None:
    draft.section("times")
    col = next((c for c in columns if c.role == "time" and c.time), None)
    zone = f"{TODO}the time zone the times were written in, e.g. America/Chicago (docs/profiles.md)"
    if col is None or "started_at" not in used:
        draft.note("TODO: no time column recognised: map started_at and give its format, or say there are none")
        draft.set("kind", "none")
        draft.set("start_date", f"{TODO}the date of the first round, YYYY-MM-DD")
        draft.set("zone", zone)
        return
    kind, fmt = col.time  # type: ignore[misc]
    draft.set("kind", kind)
    if fmt:
        draft.set("format", fmt)
    if kind == "iso" and has_offset(col.values):
        draft.note("the times carry their UTC offset: no zone to give")
        return
    if col.name in utc:
        draft.set("zone", "UTC", "a timestamp with time zone: the database gives its instants in UTC")
        return
    draft.set("zone", zone, "the draft never guesses it")


def _money(draft: Draft, columns: list[Column]) -> None:
    values = [v for c in columns if c.role in MONEY_ROLES for v in c.values]
    fmt = money_format(values)
    draft.section("money")
    mixed = "TODO: amounts in several currencies: auditkit compares amounts as written; keep one currency per source"
    draft.set("currency", fmt.currency, mixed if len(fmt.currency) > 1 else None if fmt.currency else
              "no currency symbol in the amounts")
    if fmt.undecided:
        draft.set("decimal", f"{TODO}',' or '.': {fmt.undecided}", "answer with one character")
        draft.set("thousands", "")
    else:
        draft.set("decimal", fmt.decimal)
        draft.set("thousands", fmt.thousands)
    draft.set("parentheses", fmt.parentheses)
