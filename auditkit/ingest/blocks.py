"""The bulk reader: a block of JSONL lines to stored rows per game, and the bad lines with reasons.

The lines of a block are parsed at once by ``pyarrow.json`` with an explicit
schema (the common fields plus the fields of the game of the block's first line,
its events' included; a block holding rows of another bulk game is parsed again
with every bulk game's fields, merged; other fields are inferred and never read,
which also makes the parser refuse a key named twice in any object), then checked
column by column (:mod:`auditkit.ingest.fields`, and each game's bulk reader in its
package, see :attr:`auditkit.games.Game.bulk`).
A block the parser refuses
as a whole (one malformed line, a value of another type) is split in halves
until the refused lines are found. Every line the bulk path does not vouch for
(refused by the parser, not vouched for by a field check, a game without a bulk
reader) is read again by the per-line reader (:mod:`auditkit.ingest.perline`),
which stores it or gives its reason: so the result is the per-line reader's,
line for line (a property test checks it).
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from .. import games as registry
from ..schema import schema_for, table_of
from . import fields as F
from .jsonl import Lines
from .perline import decode_line, from_object

__all__ = ["Parsed", "parse_block", "parse_objects", "staged_schema", "bulk_readers", "json_schema", "bulk_rows",
           "line_by_line", "in_line_order"]

COMMON_FIELDS = [
    pa.field("round_id", pa.string()), pa.field("game", pa.string()), pa.field("table_id", pa.string()),
    pa.field("started_at", pa.string()), pa.field("dealer_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_seq", pa.int64()), pa.field("status", pa.string()),
    pa.field("wagers", pa.list_(pa.struct([("seat", pa.int64()), ("bet", pa.string()), ("amount", pa.float64()),
                                           ("net", pa.float64())]))),
    pa.field("events", pa.list_(pa.struct([("type", pa.string())]))),
]
_SMALLEST = 2  # a refused piece this small is read line by line
_BOM = b"\xef\xbb\xbf"  # pyarrow skips a BOM that json.loads refuses: such lines go line by line
_MAX_OPENERS = 1000  # a line with more '[' and '{' may nest deeper than the bulk parser's stack allows


Reader = Callable[[dict[str, pa.Array]], tuple[dict[str, pa.Array], np.ndarray]]


@functools.cache
def bulk_readers() -> dict[str, Reader]:
    """``game`` value -> the vectorized reader of its own fields and its events, for every game that has one."""
    readers = {}
    for g in registry.games():
        if g.bulk:
            readers.update(dict.fromkeys(g.names, _game_reader(g)))
    return readers


def _game_reader(g: registry.Game) -> Reader:
    """A game's bulk ``read``, plus its ``events`` (their types and, for a game with typed
    events, its ``read_events``)."""
    module = g.bulk
    kinds = tuple(g.events)
    read_events = getattr(module, "read_events", None)
    if any(g.events.values()) and read_events is None:
        raise TypeError(f"game {g.name}: its events carry fields, but its bulk reader has no read_events")

    def read(cols: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
        own, ok = module.read(cols)
        events, ok_events = F.events(cols["events"], kinds, read_events)
        return {**own, "events": events}, ok & ok_events

    return read


def _merge(a: pa.DataType, b: pa.DataType, where: str) -> pa.DataType:
    """One parsed type for a field two games declare: structs merge their fields (recursively),
    lists their items; anything else must be the same type."""
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fields = {f.name: f.type for f in a}
        for f in b:
            fields[f.name] = _merge(fields[f.name], f.type, f"{where}.{f.name}") if f.name in fields else f.type
        return pa.struct(list(fields.items()))
    if pa.types.is_list(a) and pa.types.is_list(b):
        return pa.list_(_merge(a.value_type, b.value_type, f"{where}[]"))
    if a != b:
        raise TypeError(f"bulk field {where} is {a} in one game and {b} in another")
    return a


@functools.cache
def json_schema(game: str | None = None) -> pa.Schema:
    """What ``pyarrow.json`` parses: the common fields and every bulk game's own (or only
    ``game``'s), its event fields in the ``events`` items (a field two games name is merged, see
    :func:`_merge`). A block of one game is parsed with its own schema: the parser then makes no
    column of another game's fields (the whole schema costs a third more on a pai gow block)."""
    merged: dict[str, pa.DataType] = {f.name: f.type for f in COMMON_FIELDS}
    for g in registry.games() if game is None else (registry.get(game),):
        module = g.bulk
        if module is None:
            continue
        own = [*module.FIELDS, pa.field("events", pa.list_(pa.struct(getattr(module, "EVENT_FIELDS", []))))]
        for f in own:
            merged[f.name] = _merge(merged[f.name], f.type, f.name) if f.name in merged else f.type
    return pa.schema(list(merged.items()))


@functools.cache
def _parse_options(game: str | None) -> pj.ParseOptions:
    # "infer", not "ignore": the parser then refuses a key named twice in any object, known or not
    return pj.ParseOptions(explicit_schema=json_schema(game), unexpected_field_behavior="infer")


def staged_schema(game: str) -> pa.Schema:
    """A game's stored schema without ``source_file`` (added when written), plus the local ``date``."""
    s = schema_for(game)
    return s.remove(s.get_field_index("source_file")).append(pa.field("date", pa.string()))


@dataclass
class Parsed:
    """What a block of lines held: rows per game (in line order), bad lines, blank lines."""

    tables: dict[str, pa.Table] = field(default_factory=dict)
    bad: list[tuple[int, bytes | str, str, str | None]] = field(default_factory=list)  # line, raw, reason, id
    blank: int = 0
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (round_id as written, as stored)
    raw: Callable[[int], bytes | str] = bytes  # the raw text of a line of the block, by number


def _read_json(data: bytes, game: str | None) -> pa.Table | None:
    """The parsed lines, with the fields of :func:`json_schema` of ``game`` only (:func:`_declared`),
    or None when the parser refuses them or makes arrays that are not valid Arrow (``data`` must be
    a ``bytes``: the parser reads up to a NUL after the end, which CPython keeps there)."""
    try:
        table = pj.read_json(pa.BufferReader(data),
                             read_options=pj.ReadOptions(use_threads=False, block_size=len(data) + 1),
                             parse_options=_parse_options(game))
        schema = json_schema(game)
        table = pa.Table.from_arrays(
            [pa.chunked_array([_declared(c, f.type) for c in table.column(f.name).chunks], f.type) for f in schema],
            schema=schema)
        table.validate()
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    return table


def _declared(arr: pa.Array, t: pa.DataType) -> pa.Array:
    """``arr`` with only the fields of type ``t``: the fields the parser inferred are dropped
    before anything reads the table. An inferred list whose first items are null is not valid
    Arrow (its offsets span more items than it holds, apache/arrow#51305, pyarrow 25 and 26):
    taking rows of it reads past its buffers."""
    if arr.type == t:
        return arr
    if pa.types.is_struct(t):
        children = [_declared(arr.field(f.name), f.type) for f in t]  # each at the struct's offset
        return pa.StructArray.from_arrays(children, fields=list(t), mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_list(t):
        return pa.Array.from_buffers(t, len(arr), arr.buffers()[:2], arr.null_count, arr.offset,
                                     [_declared(arr.values, t.value_type)])
    raise TypeError(f"parsed {arr.type}, declared {t}")  # the parser keeps a declared field's type


def _bulk_parse(block: Lines, cand: np.ndarray, lo: int, hi: int, pieces: list[tuple[np.ndarray, pa.Table]],
                refused: list[int], game: str | None) -> None:
    """Parse the lines ``cand[lo:hi]`` (candidates, blank lines between them allowed) at once, or
    its halves, down to :data:`_SMALLEST` lines."""
    if hi - lo <= _SMALLEST:
        refused.extend(int(i) for i in cand[lo:hi])
        return
    begin, end = int(block.starts[cand[lo]]), int(block.ends[cand[hi - 1]])
    whole = begin == 0 and end == len(block.data) - 1  # the usual case: the block's bytes, not a copy
    table = _read_json(block.data if whole else block.data[begin:end], game)
    if table is not None and table.num_rows == hi - lo:  # one row per line (never two objects on a line)
        pieces.append((cand[lo:hi], table))
        return
    mid = (lo + hi) // 2
    _bulk_parse(block, cand, lo, mid, pieces, refused, game)
    _bulk_parse(block, cand, mid, hi, pieces, refused, game)


def _common(t: dict[str, pa.Array]) -> tuple[dict[str, pa.Array], np.ndarray]:
    started, offset, date, ok_ts = F.timestamps(t["started_at"])
    status, ok_status = F.status(t["status"])
    wagers, ok_w = F.wagers(t["wagers"])
    # a round id is stored in NFC: only an ASCII one is sure to be NFC as written
    ok = (F.text(t["round_id"]) & F.np_mask(pc.string_is_ascii(t["round_id"])) & F.text(t["table_id"]) & ok_ts & ok_status & ok_w
          & F.integer(t["round_seq"], 1, None, False))
    return {"round_id": t["round_id"], "table_id": t["table_id"], "dealer_id": t["dealer_id"],
            "started_at": started, "utc_offset": offset, "shoe_id": t["shoe_id"],
            "round_seq": t["round_seq"].cast(pa.int32(), safe=False), "status": status,
            "wagers": wagers, "date": date}, ok


def bulk_rows(table: pa.Table, lines: np.ndarray, parsed: Parsed) -> np.ndarray:
    """Store the rows the field checks vouch for; the positions (in ``table``) of the others."""
    readers = bulk_readers()
    games = table["game"].combine_chunks()
    later = [np.flatnonzero(~F.np_mask(pc.is_in(games, value_set=pa.array(list(readers), pa.string()))))]
    for game, read in readers.items():
        where = np.flatnonzero(F.np_mask(pc.equal(games, game)))
        if not len(where):
            continue
        sub = (table if len(where) == table.num_rows else table.take(pa.array(where))).combine_chunks()
        cols = {name: sub.column(name).chunk(0) for name in sub.column_names}
        common, ok = _common(cols)
        own, ok_game = read(cols)
        ok &= ok_game
        later.append(where[~ok])
        schema = staged_schema(game)
        values = {**common, **own, "source_line": pa.array(lines[where])}
        out = table_of(values, schema, len(where))
        if not ok.all():
            out = out.filter(pa.array(ok))
        _add_rows(parsed, game, out)
    return np.concatenate(later)


def _add_rows(parsed: Parsed, game: str, rows: pa.Table) -> None:
    if rows.num_rows:
        prior = parsed.tables.get(game)
        parsed.tables[game] = rows if prior is None else pa.concat_tables([prior, rows])


def line_by_line(parsed: Parsed, items: list[tuple[int, Any]], decoded: bool) -> None:
    """Read ``(line, raw bytes)`` items (or ``(line, decoded record)`` ones) one by one."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for line, value in items:
        obj, error = (value, None) if decoded else decode_line(value)
        got = (None, error, None) if error is not None else from_object(obj)
        if got[0] is None:
            parsed.bad.append((line, parsed.raw(line) if decoded else value, got[1], got[2]))
            continue
        game, date, row = got
        if obj["round_id"] != row["round_id"]:
            parsed.renamed.append((obj["round_id"], row["round_id"]))
        row["source_line"], row["date"] = line, date
        rows.setdefault(game, []).append(row)
    for game, rs in rows.items():
        _add_rows(parsed, game, pa.Table.from_pylist(rs, schema=staged_schema(game)))


_WS = np.zeros(256, bool)
_WS[list(b" \t\r\n\x0b\x0c")] = True


def _classify(block: Lines, parsed: Parsed) -> tuple[np.ndarray, np.ndarray]:
    """Count blank lines and note the unread ones; return the lines to read and the barriers:
    lines the bulk parser must not see (it reads them otherwise than ``json.loads``, or could not
    read them at all: a BOM, a blank line of vertical tabs, a line too long or nested too deep)."""
    data = np.frombuffer(block.data, np.uint8)
    lengths = block.ends - block.starts
    maybe_blank = (lengths == 0) | _WS[data[np.minimum(block.starts, len(data) - 1)]]
    todo = np.ones(len(block), bool)
    barrier = np.zeros(len(block), bool)
    for i, (raw, reason) in block.errors.items():
        parsed.bad.append((block.first + i, raw, reason, None))
        todo[i] = False
        barrier[i] = True
    for i in np.flatnonzero(maybe_blank & todo):
        raw = block.raw(i)
        if not raw.strip():
            parsed.blank += 1
            todo[i] = False
            barrier[i] = bool(raw.strip(b" \t\r"))  # \x0b or \x0c: blank to bytes.strip, not to JSON
    barrier |= data[np.minimum(block.starts, len(data) - 1)] != ord("{")  # a top-level null crashes the parser
    long = np.flatnonzero(lengths > _MAX_OPENERS)  # only a long line can nest that deep
    if len(long):
        openers = np.flatnonzero((data == ord("[")) | (data == ord("{")))
        count = np.searchsorted(openers, block.ends[long]) - np.searchsorted(openers, block.starts[long])
        barrier[long[count > _MAX_OPENERS]] = True
    if b"\0" in block.data:  # NUL ends the parser's text
        barrier[np.unique(np.searchsorted(block.ends, np.flatnonzero(data == 0)))] = True
    if not block.data.isascii():
        barrier[_not_utf8(block)] = True  # the parser does not check UTF-8 in strings
        for at in np.flatnonzero(data == _BOM[0]):
            if block.data[at:at + 3] == _BOM:
                barrier[np.searchsorted(block.ends, at)] = True
    return todo, barrier


def _not_utf8(block: Lines) -> list[int]:
    """The lines of a block that are not UTF-8 (one decode of the whole block when none is)."""
    view, at, bad = memoryview(block.data), 0, []
    while at < len(view):
        try:
            codecs.utf_8_decode(view[at:], "strict", True)
            break
        except UnicodeDecodeError as exc:
            line = int(np.searchsorted(block.ends, at + exc.start))
            bad.append(line)
            at = int(block.ends[line]) + 1 if line < len(block) else len(view)
    return bad


def parse_block(block: Lines, *, bulk: bool = True) -> Parsed:
    """Rows, bad lines and blank lines of a block of JSONL lines (``bulk=False``: every line by
    the per-line reader, the reference)."""
    parsed = Parsed(raw=lambda n: block.raw(n - block.first))
    todo, barrier = _classify(block, parsed)
    if bulk:
        run = np.cumsum(barrier)  # lines between two barriers form a run
        cand = np.flatnonzero(todo & ~barrier)
        game = _main_game(block, cand)
        pieces, slow = _parse_runs(block, cand, run, game)
        if game is not None and _other_games(pieces, game):  # another game's fields may be misread
            pieces, slow = _parse_runs(block, cand, run, None)
        slow += [int(i) for i in np.flatnonzero(todo & barrier)]
        for at, table in pieces:  # one by one: each holds the unknown fields of its own lines
            slow += [int(i) for i in at[bulk_rows(table, at + block.first, parsed)]]
        slow.sort()
    else:
        slow = [int(i) for i in np.flatnonzero(todo)]
    line_by_line(parsed, [(block.first + i, block.raw(i)) for i in slow], decoded=False)
    in_line_order(parsed)
    return parsed


def _parse_runs(block: Lines, cand: np.ndarray, run: np.ndarray, game: str | None,
                ) -> tuple[list[tuple[np.ndarray, pa.Table]], list[int]]:
    """The parsed pieces of the candidate lines, run by run, and the lines the parser refused."""
    pieces: list[tuple[np.ndarray, pa.Table]] = []
    refused: list[int] = []
    for part in np.split(cand, np.flatnonzero(np.diff(run[cand])) + 1):
        _bulk_parse(block, part, 0, len(part), pieces, refused, game)
    return pieces, refused


def _main_game(block: Lines, cand: np.ndarray) -> str | None:
    """The bulk game of the block's first candidate line (its schema is tried for the block), or
    None (the schema of every game)."""
    if not len(cand):
        return None
    obj, _ = decode_line(block.raw(int(cand[0])))
    game = obj.get("game") if isinstance(obj, dict) else None
    return registry.get(game).name if isinstance(game, str) and game in bulk_readers() else None


def _other_games(pieces: list[tuple[np.ndarray, pa.Table]], game: str) -> bool:
    """Whether rows of another bulk game than ``game`` were parsed (with ``game``'s schema)."""
    others = pa.array([n for n in bulk_readers() if n not in registry.get(game).names], pa.string())
    return any(pc.any(pc.is_in(t["game"], value_set=others)).as_py() for _, t in pieces)


def parse_objects(items: list[tuple[int, Any]], raws: dict[int, str]) -> Parsed:
    """:func:`parse_block` of records already decoded (the CSV layout's rows, with their raw
    lines by number), line by line."""
    parsed = Parsed(raw=raws.__getitem__)
    line_by_line(parsed, items, decoded=True)
    in_line_order(parsed)
    return parsed


def in_line_order(parsed: Parsed) -> None:
    for game, t in parsed.tables.items():
        lines = t["source_line"].to_numpy()
        if len(lines) > 1 and (np.diff(lines) < 0).any():
            parsed.tables[game] = t.take(pa.array(np.argsort(lines, kind="stable")))
