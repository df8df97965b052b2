"""The bulk reader of the CSV layout: a main file and its companions to stored rows, column by column.

pyarrow's CSV reader reads at once the lines that Python's ``csv`` module reads as plain text
between commas (printable ASCII, as many cells as the header, any quote enclosing a whole cell
without a comma: ``"Ac Jd"``), and their cells become, column by column, the values
:func:`auditkit.ingest.csv.csv_row` gives them: text trimmed, card lists split, numbers and
booleans in the spellings whose value is certain (a cell such as ``+5``, ``1e3`` or ``nan`` is
left to the per-line reader). Companion rows become their
round's ``hands``, ``wagers`` and ``events`` lists (the first round of that id takes them, as in
the per-line reader), and the rounds are checked by the JSONL bulk reader's field checks
(:func:`auditkit.ingest.blocks.bulk_rows`). Every other line, and every round not vouched for
(by its own cells, its companion rows' or the checks), is read by the per-line reader of
:mod:`auditkit.ingest.csv`: so the result is that reader's, line for line (a property test checks
it). A file whose header names a column twice, or a nested field (``wagers``, ``announced``...),
is read line by line whole.

Memory: the bytes of the main file and its companions, and the companions' cells as text, are
held while the source is read (a companion row may name any round of the main file); rounds are
converted and checked :data:`ROWS` main-file lines at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from .. import games
from . import fields as F
from .blocks import Parsed, bulk_rows, in_line_order, json_schema, line_by_line
from .csv import (
    CARD_LISTS,
    COMPANIONS,
    INT_LISTS,
    MISSING_ID,
    TEXT,
    CsvLine,
    companions_of,
    csv_line,
    csv_row,
    nest_row,
    orphan_reason,
    read_text,
)

__all__ = ["read_csv_blocks", "ROWS"]

ROWS = 16384
"""Main-file lines checked at a time."""
NESTED = frozenset({"announced", "dealer", *COMPANIONS})
"""Fields the layout writes in other columns or files: a main file naming one is read line by line."""
_INT = r"^-?[0-9]{1,18}$"  # int() and the JSON reader read these alike
_DECIMAL = r"^-?[0-9]{1,18}\.[0-9]{1,17}$"  # float() too (both round correctly)
_FIELD = r'(?:"[^",\r\n]*"|[^"\r\n]*)'  # a quote encloses a whole cell, without a comma
_QUOTED = rf"^{_FIELD}(?:,{_FIELD})*(?:\r\n|\r|\n)?$"
_PLAIN = bytes(sorted({*range(32, 127), 10, 13}))  # and line breaks


@dataclass
class _Text:
    """A CSV file cut into lines as ``bytes.splitlines`` cuts them; ``plain``: printable ASCII,
    each quote enclosing a whole cell without a comma (Python's csv module then reads the text
    between commas, quotes removed, as the cells)."""

    data: bytes
    starts: np.ndarray
    ends: np.ndarray
    plain: np.ndarray
    commas: np.ndarray

    @classmethod
    def read(cls, path: Path) -> _Text:
        data = read_text(path)
        d = np.frombuffer(data, np.uint8)
        breaks = ends = np.flatnonzero(d == 10)
        if b"\r" in data:  # \r\n ends a line at the \r; a lone \r ends one too
            cr = np.flatnonzero(d == 13)
            lone = cr[d[np.minimum(cr + 1, len(d) - 1)] != 10]
            ends = breaks - (d[np.maximum(breaks - 1, 0)] == 13) * (breaks > 0)
            breaks, ends = np.concatenate([breaks, lone]), np.concatenate([ends, lone])
            order = np.argsort(breaks, kind="stable")
            breaks, ends = breaks[order], ends[order]
        starts = np.concatenate([[0], breaks[:-1] + 1]) if len(breaks) else np.zeros(0, np.int64)
        tail = int(breaks[-1]) + 1 if len(breaks) else 0
        if tail < len(d):  # a last line without a line break
            starts, ends = np.append(starts, tail), np.append(ends, len(d))
        commas = np.flatnonzero(d == ord(","))
        plain = np.ones(len(starts), bool)
        if data.translate(None, _PLAIN):  # a byte that is not plain somewhere
            odd = np.flatnonzero(((d < 32) & (d != 10) & (d != 13)) | (d > 126))
            plain = (np.searchsorted(odd, ends) - np.searchsorted(odd, starts)) == 0
        if b'"' in data:
            lines = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(np.append(starts, len(d))),
                                                    pa.py_buffer(data))  # each line with its break
            plain &= F.np_mask(pc.match_substring_regex(lines, _QUOTED))
        return cls(data, starts, ends, plain, np.searchsorted(commas, ends) - np.searchsorted(commas, starts))

    def __len__(self) -> int:
        return len(self.starts)

    def split(self, i: int) -> list[str]:
        """The cells of plain line ``i``, as Python's csv module reads them."""
        return self.line(i).decode("ascii").replace('"', "").split(",")

    def line(self, i: int) -> bytes:
        return self.data[self.starts[i]:self.ends[i]]

    def header(self) -> tuple[int, list[str] | None, list[CsvLine]]:
        """The index of the first line after the header, the header (None: no line has cells), and
        the lines before it (blank, or bad)."""
        before = []
        for i in range(len(self)):
            ln = csv_line(i + 1, self.line(i))
            if ln.cells is not None:
                return i + 1, [h.strip() for h in ln.cells], before
            before.append(ln)
        return len(self), None, before

    def rows(self, first: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of the lines from ``first``: those pyarrow reads (plain, ``width`` cells, not blank),
        the blank plain ones, and the others (read one by one)."""
        at = np.arange(first, len(self))
        plain = self.plain[at]
        empty = self.ends[at] == self.starts[at]
        d = np.frombuffer(self.data, np.uint8)
        spaced = np.flatnonzero(plain & ~empty & (d[np.minimum(self.starts[at], max(len(d) - 1, 0))] == 32))
        blank = plain & empty
        blank[spaced] = [not self.line(int(at[k])).strip() for k in spaced]
        bulk = plain & ~blank & (self.commas[at] == width - 1)
        return at[bulk], at[blank], at[~bulk & ~blank]

    def cells(self, lines: np.ndarray, width: int, columns: dict[str, int]) -> dict[str, pa.Array]:
        """The cells of ``lines`` (all plain, ``width`` cells each) in ``columns`` (name -> index)."""
        if not len(lines) or not columns:
            return {name: pa.array([""] * len(lines), pa.string()) for name in columns}
        starts, ends = self.starts[lines], self.ends[lines]
        d = np.frombuffer(self.data, np.uint8)
        if (np.diff(lines) == 1).all() and (starts[1:] == ends[:-1] + 1).all() and (d[ends[:-1]] == 10).all():
            # one run of lines ended by \n: read in place
            buf = self.data[starts[0]:ends[-1]]
        else:
            buf = b"\n".join(self.data[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True))
        buf = buf.translate(None, b'"')  # each quote a plain line holds encloses a whole cell
        names = [f"c{i}" for i in range(width)]
        table = pcsv.read_csv(
            pa.py_buffer(buf),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=False, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(delimiter=",", quote_char=False, double_quote=False, escape_char=False,
                                            newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                include_columns=[names[i] for i in columns.values()],
                                                strings_can_be_null=False, check_utf8=False))
        if table.num_rows != len(lines):
            raise AssertionError(f"pyarrow read {table.num_rows} CSV rows of {len(lines)} lines")
        return {name: table.column(names[i]).combine_chunks() for name, i in columns.items()}


def _convert(cells: pa.Array, key: str, t: pa.DataType) -> tuple[pa.Array, np.ndarray]:
    """The values :func:`~auditkit.ingest.csv.csv_row` gives the cells of column ``key`` (an
    empty cell is absent: null), as the JSON reader would parse them as type ``t``; and the rows
    where that is certain. TypeError for a column the layout never writes so."""
    text = pc.utf8_trim(cells, " ")
    text = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
    absent = ~F.valid(text)
    if key in TEXT or key in CARD_LISTS or key in INT_LISTS:
        if key in TEXT and t == pa.string():
            return text, np.ones(len(text), bool)
        if key in CARD_LISTS and t == pa.list_(pa.string()):
            return pc.ascii_split_whitespace(text), np.ones(len(text), bool)
        if key in INT_LISTS and t == pa.list_(pa.int64()):
            tokens = pc.ascii_split_whitespace(text)
            flat = tokens.flatten()
            good = F.np_mask(pc.match_substring_regex(flat, _INT))
            lengths = pc.fill_null(pc.list_value_length(tokens), 0).to_numpy()
            values = pc.cast(pc.if_else(pa.array(good), flat, "0"), pa.int64())
            return F.rebuild_list(lengths, values, ~absent), ~F.any_per_row(~good, lengths)
    elif t == pa.bool_():
        low = pc.ascii_lower(text)
        return pc.equal(low, "true"), absent | F.np_mask(pc.is_in(low, value_set=pa.array(["true", "false"])))
    elif t == pa.int64():
        whole = F.np_mask(pc.match_substring_regex(text, _INT))
        return pc.cast(pc.if_else(pa.array(whole), text, pa.scalar(None, pa.string())), pa.int64()), absent | whole
    elif t == pa.float64():
        whole = F.np_mask(pc.match_substring_regex(text, _INT))
        decimal = F.np_mask(pc.match_substring_regex(text, _DECIMAL))
        none = pa.scalar(None, pa.string())
        as_int = pc.cast(pc.cast(pc.if_else(pa.array(whole), text, none), pa.int64()), pa.float64())  # "-0" is 0
        as_decimal = pc.cast(pc.if_else(pa.array(decimal), text, none), pa.float64())
        return pc.if_else(pa.array(whole), as_int, as_decimal), absent | whole | decimal
    raise TypeError(f"CSV column {key!r} read as {t}")


def _struct(values: list[tuple[pa.Field, pa.Array]], present: np.ndarray | None = None) -> pa.StructArray:
    return pa.StructArray.from_arrays([v for _, v in values], fields=[f for f, _ in values],
                                      mask=None if present is None else pa.array(~present))


@dataclass
class _Main:
    """The main file's rows that reach the record parser (``rec``: every row with cells of the
    header's width, in line order), where they are, their ids and whose companion rows they take."""

    text: _Text
    header: list[str]
    bulk: np.ndarray  # lines pyarrow reads
    blank: np.ndarray
    bad: dict[int, tuple[str, str]]  # line index -> (raw, reason)
    slow: dict[int, str | None]  # line index of a row read one by one -> its round id
    rec_lines: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rec_ids: pa.Array | None = None


@dataclass
class _Companion:
    """A companion file's rows: the ones with a round id and the round (a ``rec`` position of the
    main file) they are attached to, in line order; its bad, blank and orphan lines."""

    kind: str
    path: Path
    text: _Text
    header: list[str]
    lines: np.ndarray  # line index of each row with a round id
    owner: np.ndarray  # its round's rec position, -1: none
    item_type: pa.StructType
    cells: dict[str, pa.Array]  # the cells of the rows pyarrow read, by column (converted a block at a time)
    cell_of: np.ndarray  # per row: its position in ``cells`` (-1: read one by one)
    slow: dict[int, dict[str, Any]]  # line index -> fields of a row read one by one
    other: list[tuple[int, str, str]]  # (line index, raw, reason) of bad and orphan lines
    blank: int
    rounds: int  # of the main file (rec positions 0 .. rounds - 1)
    by_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # rows by owner, line order within
    starts: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # of each owner's run (-1 first)

    def __post_init__(self) -> None:
        self.by_owner = np.argsort(self.owner, kind="stable")
        self.starts = np.searchsorted(self.owner[self.by_owner], np.arange(-1, self.rounds + 1))

    def rows_of(self, rec: int) -> np.ndarray:
        """The rows attached to round ``rec``, in line order."""
        return self.by_owner[self.starts[rec + 1]:self.starts[rec + 2]]

    def lists(self, recs: np.ndarray) -> tuple[pa.ListArray, np.ndarray]:
        """The items of rounds ``recs``' rows, as lists (null: no row), and the rounds whose every
        row reads as the per-line reader reads it (pyarrow read it, its cells are certain)."""
        first = self.starts[recs + 1]
        lengths = self.starts[recs + 2] - first
        ends = np.cumsum(lengths)
        rows = self.by_owner[np.repeat(first - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends) else 0)]
        at = self.cell_of[rows]
        take = pa.array(np.maximum(at, 0))
        values, good = [], at >= 0
        for f in self.item_type:
            if f.name in self.cells:
                v, ok = _convert(self.cells[f.name].take(take), f.name, f.type)
                values.append((f, v))
                good &= ok
            else:
                values.append((f, pa.nulls(len(rows), f.type)))
        return F.rebuild_list(lengths, _struct(values), lengths > 0), ~F.any_per_row(~good, lengths)


def read_csv_blocks(path: Path, name: str) -> Iterator[tuple[Parsed, int, int, list, int]] | None:
    """``(parsed block, lines read, attached companion rows, bad lines of other files, bytes
    read)`` of a CSV source, as :func:`auditkit.ingest.readers.csvlayout.read_csv_layout` reads it line by line; or
    None when its headers ask for the per-line reader."""
    main = _Text.read(path)
    first, header, before = main.header()
    if header is None or _odd(header, NESTED):
        return None
    companions = {}
    for kind, cpath in companions_of(path).items():
        ctext = _Text.read(cpath)
        cfirst, cheader, cbefore = ctext.header()
        if cheader is not None and _odd(cheader, frozenset()):
            return None
        companions[kind] = (cpath, ctext, cfirst, cheader, cbefore)
    return _read(path, name, main, first, header, before, companions)


def _odd(header: list[str], nested: frozenset[str]) -> bool:
    """Whether a header names a column twice, or one of ``nested``."""
    names = [h for h in header if h]
    return len(set(names)) != len(names) or bool(nested & set(names))


def _read(path: Path, name: str, text: _Text, first: int, header: list[str], before: list[CsvLine],
          companions: dict[str, tuple]) -> Iterator[tuple[Parsed, int, int, list, int]]:
    main = _main(text, first, header)
    kids = [_companion(kind, *args, main, path) for kind, args in companions.items()]
    rec_at = np.full(len(text), -1, np.int64)
    rec_at[main.rec_lines] = np.arange(len(main.rec_lines))
    schema = json_schema()
    wanted = {h: i for i, h in enumerate(header) if h and (h in schema.names or h.startswith(("announced_", "dealer_")))}

    def raw(n: int) -> str:
        return text.line(n - 1).decode("utf-8", errors="replace")

    bom = path.stat().st_size - len(text.data)
    pre_bad = [(name, ln.line, ln.raw, ln.error) for ln in before if ln.error is not None]
    pre_blank = sum(ln.error is None for ln in before) + 1  # and the header
    lines_from = 0
    slow_lines, bad_lines = np.array(sorted(main.slow), np.int64), np.array(sorted(main.bad), np.int64)
    blank_lines = np.sort(main.blank)
    for lo in range(first, max(len(text), first + 1), ROWS):
        hi = min(lo + ROWS, len(text))
        parsed = Parsed(raw=raw)
        bulk = _within(main.bulk, lo, hi)
        cols, ok = _main_columns(text.cells(bulk, len(header), wanted), len(bulk))
        pos = rec_at[bulk]
        for c in kids:
            cols[c.kind], certain = c.lists(pos)
            ok &= certain
        table = pa.Table.from_arrays([cols[f.name] if f.name in cols else pa.nulls(len(bulk), f.type)
                                      for f in schema], schema=schema).filter(pa.array(ok))
        vouched = np.ones(len(bulk), bool)
        vouched[~ok] = False
        later = bulk_rows(table, bulk[ok] + 1, parsed)
        vouched[np.flatnonzero(ok)[later]] = False
        slow = sorted([*bulk[~vouched].tolist(), *_within(slow_lines, lo, hi).tolist()])
        line_by_line(parsed, [(i + 1, _record(main, kids, i, rec_at[i])) for i in slow], decoded=True)
        in_line_order(parsed)
        parsed.blank += len(_within(blank_lines, lo, hi))
        other = [(name, i + 1, *main.bad[i]) for i in _within(bad_lines, lo, hi).tolist()]
        if lo == first:
            parsed.blank += pre_blank
            other = pre_bad + other
        lines, attached = hi - lines_from, 0
        lines_from = hi
        done = int(text.ends[hi - 1]) + bom if hi else 0
        if hi == len(text):
            for c in kids:
                lines += len(c.text)
                parsed.blank += c.blank
                attached += int((c.owner >= 0).sum())
                other += [(str(c.path), i + 1, r, why) for i, r, why in c.other]
            done = path.stat().st_size
        yield parsed, lines, attached, other, done


def _within(lines: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The sorted ``lines`` in [lo, hi)."""
    return lines[np.searchsorted(lines, lo):np.searchsorted(lines, hi)]


def _main(text: _Text, first: int, header: list[str]) -> _Main:
    bulk, blank, others = text.rows(first, len(header))
    bad, slow, blanks = {}, {}, []
    for i, raw, row, reason in _one_by_one(text, header, others):
        if reason is not None:
            bad[i] = (raw, reason)
        elif row is None:
            blanks.append(i)
        else:
            slow[i] = row.get("round_id")  # its record is made again when its block is checked
    main = _Main(text, header, bulk, np.concatenate([blank, np.array(blanks, np.int64)]), bad, slow)
    ids = text.cells(bulk, len(header), {"round_id": header.index("round_id")} if "round_id" in header else {})
    bulk_ids = (_convert(ids["round_id"], "round_id", pa.string())[0] if ids else pa.nulls(len(bulk), pa.string()))
    lines = np.concatenate([bulk, np.array(sorted(slow), np.int64)])
    slow_ids = [slow[i] for i in sorted(slow)]
    order = np.argsort(lines, kind="stable")
    main.rec_lines = lines[order]
    main.rec_ids = pa.concat_arrays([bulk_ids, pa.array(slow_ids, pa.string())]).take(pa.array(order))
    return main


def _one_by_one(text: _Text, header: list[str], lines: np.ndarray
                ) -> Iterator[tuple[int, str, dict[str, Any] | None, str | None]]:
    """``(line index, raw, fields, reason)`` of lines read by the row reader: fields, or the
    reason the line is bad, or neither for a blank line."""
    for i in lines.tolist():
        ln = csv_line(i + 1, text.line(i))
        if ln.cells is None:
            yield i, ln.raw, None, ln.error
            continue
        try:
            yield i, ln.raw, csv_row(header, ln.cells), None
        except ValueError as exc:
            yield i, ln.raw, None, str(exc)


def _owners(main: _Main, ids: pa.Array) -> np.ndarray:
    """The rec position of the first main row of each id (-1: no row has it)."""
    enc = pc.dictionary_encode(main.rec_ids)
    codes = pc.fill_null(enc.indices, -1).to_numpy()
    first = np.full(len(enc.dictionary), -1, np.int64)
    seen = codes >= 0
    values, at = np.unique(codes[seen], return_index=True)
    first[values] = np.flatnonzero(seen)[at]
    found = pc.fill_null(pc.index_in(ids, value_set=enc.dictionary), -1).to_numpy()
    return np.append(first, -1)[found]  # -1: the last, -1


def _companion(kind: str, path: Path, text: _Text, first: int, header: list[str] | None, before: list[CsvLine],
               main: _Main, main_path: Path) -> _Companion:
    other = [(ln.line - 1, ln.raw, ln.error) for ln in before if ln.error is not None]
    blank = sum(ln.error is None for ln in before) + (header is not None)
    item_type = json_schema().field(kind).type.value_type
    if header is None:
        none = np.zeros(0, np.int64)
        return _Companion(kind, path, text, [], none, none, item_type, {}, none, {}, other, blank,
                          len(main.rec_lines))
    bulk, blanks, others = text.rows(first, len(header))
    blank += len(blanks)
    wanted = {h: i for i, h in enumerate(header) if h and (h == "round_id" or item_type.get_field_index(h) >= 0)}
    cells = text.cells(bulk, len(header), wanted)
    rid = _convert(cells.pop("round_id"), "round_id", pa.string())[0] if "round_id" in cells \
        else pa.nulls(len(bulk), pa.string())
    has_id = F.valid(rid)
    other += [(int(i), text.line(int(i)).decode("ascii"), MISSING_ID) for i in bulk[~has_id]]
    slow, slow_ids, slow_lines = {}, [], []
    for i, raw, row, reason in _one_by_one(text, header, others):
        if row is None:
            if reason is not None:
                other.append((i, raw, reason))
            else:
                blank += 1
            continue
        round_id = row.pop("round_id", None)
        if not isinstance(round_id, str) or not round_id:
            other.append((i, raw, MISSING_ID))
            continue
        slow[i] = row
        slow_ids.append(round_id)
        slow_lines.append(i)
    lines = np.concatenate([bulk[has_id], np.array(slow_lines, np.int64)])
    ids = pa.concat_arrays([rid.filter(pa.array(has_id)), pa.array(slow_ids, pa.string())])
    cell_of = np.concatenate([np.flatnonzero(has_id), np.full(len(slow_lines), -1, np.int64)])
    order = np.argsort(lines, kind="stable")
    lines, ids, cell_of = lines[order], ids.take(pa.array(order)), cell_of[order]
    owner = _owners(main, ids)
    for k in np.flatnonzero(owner < 0):
        other.append((int(lines[k]), text.line(int(lines[k])).decode("utf-8"), orphan_reason(kind, ids[int(k)].as_py(), main_path)))
    other.sort(key=lambda o: o[0])
    return _Companion(kind, path, text, header, lines, owner, item_type, cells, cell_of, slow, other, blank,
                      len(main.rec_lines))


def _main_columns(cells: dict[str, pa.Array], n: int) -> tuple[dict[str, pa.Array], np.ndarray]:
    """The main file's columns as the JSON reader would parse its records (``announced`` and a
    ``dealer`` the game flattens in CSV nested), and the rows whose every cell is certain."""
    schema = json_schema()
    cols, ok = {}, np.ones(n, bool)

    def convert(key: str, t: pa.DataType) -> pa.Array:
        nonlocal ok
        if key not in cells:
            return pa.nulls(n, t)
        values, good = _convert(cells[key], key, t)
        ok &= good
        return values

    for f in schema:
        if f.name not in NESTED and f.name in cells:
            cols[f.name] = convert(f.name, f.type)
    announced = schema.field("announced").type
    parts = [(a, convert(f"announced_{a.name}", a.type)) for a in announced]
    cols["announced"] = _struct(parts, np.logical_or.reduce([F.valid(v) for _, v in parts]))
    game = cols.get("game", pa.nulls(n, pa.string()))
    nested = pa.array([name for g in games.games() if "dealer" in g.csv_flattened for name in g.names], pa.string())
    own = F.np_mask(pc.is_in(game, value_set=nested))  # the games whose dealer_* columns are their `dealer`
    dealer = schema.field("dealer").type
    fields = [(d, convert(f"dealer_{d.name}", d.type)) for d in dealer]
    present = own & np.logical_or.reduce([F.valid(v) for _, v in fields])
    cols["dealer"] = _struct(fields, present)
    if "dealer_cards" in cols:  # another game's own field
        cols["dealer_cards"] = pc.if_else(pa.array(own), pa.nulls(n, cols["dealer_cards"].type), cols["dealer_cards"])
    return cols, ok


def _record(main: _Main, kids: list[_Companion], i: int, rec: int) -> dict[str, Any]:
    """The record the per-line reader makes of main line ``i`` (rec position ``rec``)."""
    cells = csv_line(i + 1, main.text.line(i)).cells if i in main.slow else main.text.split(i)
    row = csv_row(main.header, cells)
    nest_row(row)
    for c in kids:
        mine = c.rows_of(rec)
        if len(mine):
            row[c.kind] = [_child(c, int(k)) for k in mine]
    return row


def _child(c: _Companion, k: int) -> dict[str, Any]:
    line = int(c.lines[k])
    if line in c.slow:
        return c.slow[line]
    row = csv_row(c.header, c.text.split(line))
    row.pop("round_id", None)
    return row
