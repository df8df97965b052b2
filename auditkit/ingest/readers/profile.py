"""The reader of any export mapped through an import profile (:mod:`auditkit.ingest.profiles`).

The raw source (CSV, xlsx, JSON, SQL: :mod:`auditkit.ingest.profiles.source`) gives tables of
string cells with each row's number; :func:`auditkit.ingest.profiles.mapping.map_rows` makes them
round records, which the JSONL record reader stores (so a round stores as its JSONL twin would).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..blocks import Parsed, parse_block
from ..jsonl import Lines
from ..profiles.mapping import ROW, Mapped, house_rules, map_rows
from ..profiles.model import Profile
from .base import ReadBlock, Reader

__all__ = ["profile_reader", "read_rows", "mapped_block", "SEGMENT"]

SEGMENT = 65_536  # rows mapped at a time when every row is a round


def read_rows(source: Any, path: Path) -> tuple[pa.Table, list[tuple[int, str, str]], str, int]:
    """The rows of the source ``path`` as its ``[source]`` spec reads them (string columns and
    ``__row``), its undecodable rows (row, reason, raw text), the name reports show as
    ``source_file``, and the blank rows the source reader passed over."""
    from ..profiles.source import open_source

    src = open_source(source, path)
    batches = list(src.batches())
    table = pa.concat_tables(batches) if batches else pa.table({ROW: pa.array([], pa.int64())})
    return table, list(src.bad), src.name, src.blank


def identity(prof: Profile, path: Path, store: Any) -> tuple[str, int, str | None]:
    """(SHA-256, size, quick key) that identify a profiled source: the file's, or for SQL the query's,
    the URL's and the snapshot key's (:mod:`auditkit.ingest.profiles.source`). A file read as a file
    (CSV, a workbook, JSON) has a quick key (:func:`auditkit.ingest.identity.recognise`): one ``store``
    holds under it is known without reading the file whole. A database has none (its rows change
    with its query)."""
    from ..identity import recognise
    from ..profiles.source import open_source

    src = open_source(prof.source, path)
    if src.format in ("sqlite", "postgresql"):
        return src.sha256, path.stat().st_size if path.is_file() else 0, None
    known, quick, size = recognise(path, store)
    return (known.sha256 if known else src.sha256), size, quick


def mapped_block(prof: Profile, table: pa.Table, bad: list[tuple[int, str, str]], blank: int = 0,
                 first_ordinal: int = 0, seq: dict[Any, int] | None = None) -> tuple[Parsed, int, int, int]:
    """(parsed block, rows read, attached rows, rounds found) of a source's rows: the rounds mapped,
    written as JSON lines and read by the log's bulk reader (so they store as their JSONL twin), then
    given back their source's row numbers. ``first_ordinal`` and ``seq`` go on from an earlier part of
    the same source (:func:`auditkit.ingest.profiles.mapping.map_rows`)."""
    from ..profiles.onerow import one_row_rounds

    fast = one_row_rounds(table, prof, first_ordinal, seq)  # every row a round: a column at a time
    if fast is not None:
        parsed, mapped = fast
        house: dict[int, Any] = {}
    else:  # a source without a single row has no columns to map either
        mapped = Mapped() if table.column_names == [ROW] else map_rows(table, prof, first_ordinal, seq)
        house = {row: rules for row, rec in mapped.rounds if (rules := house_rules(rec)) is not None}
        parsed = _parse_records(mapped.rounds, mapped.raws)
    parsed.bad.extend((row, raw, reason, None) for row, reason, raw in bad)
    parsed.bad.extend(mapped.bad)
    parsed.bad.sort(key=lambda b: b[0])
    parsed.blank += mapped.blank + blank
    if prof.not_recorded:
        for game, t in parsed.tables.items():
            at = t.schema.get_field_index("not_recorded")
            if at >= 0:
                value = pa.array([prof.not_recorded] * t.num_rows, t.schema.field(at).type)
                parsed.tables[game] = t.set_column(at, t.schema.field(at), value)
    if house:  # the rounds' own house rules, by their first row (the stored source_line)
        for game, t in parsed.tables.items():
            at = t.schema.get_field_index("house_rules")
            if at >= 0:
                value = pa.array([house.get(r) for r in t["source_line"].to_pylist()], t.schema.field(at).type)
                parsed.tables[game] = t.set_column(at, t.schema.field(at), value)
    return parsed, mapped.rows + len(bad) + blank, mapped.attached, mapped.groups


def _parse_records(rounds: list[tuple[int, dict[str, Any]]], raws: dict[int, str]) -> Parsed:
    """The records parsed by the JSONL bulk reader, numbered by their source rows: their columns made
    straight from the records (:mod:`auditkit.ingest.recordtable`), else written as JSON lines."""
    if not rounds:
        return Parsed(raw=raws.__getitem__)
    from ..recordtable import parse_records

    direct = parse_records(rounds, raws)
    if direct is not None:
        return direct
    rows = np.array([row for row, _ in rounds], np.int64)
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # one encoder, not one per record
    data = "\n".join([encode(rec) for _, rec in rounds]).encode() + b"\n"
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    parsed = parse_block(Lines(data, starts, ends, 1, {}, len(data)))
    for game, t in parsed.tables.items():
        at = t.schema.get_field_index("source_line")
        lines = rows[t["source_line"].to_numpy() - 1]
        parsed.tables[game] = t.set_column(at, t.schema.field(at), pa.array(lines, t.schema.field(at).type))
    parsed.bad = [(int(rows[line - 1]), raws[int(rows[line - 1])], reason, rid) for line, _, reason, rid in parsed.bad]
    parsed.raw = raws.__getitem__
    return parsed


def profile_reader(prof: Profile) -> Reader:
    """The reader of sources mapped through ``prof``. A source whose rows are rounds is read and mapped
    :data:`SEGMENT` rows at a time, so its memory does not grow with it; a source whose rounds span
    rows (a round key) is mapped whole, since a round's rows may lie anywhere in it."""

    def read(path: Path, name: str, bulk: bool, max_line: int) -> Iterator[ReadBlock]:
        from ..profiles.source import open_source

        size = path.stat().st_size if path.is_file() else 0
        src = open_source(prof.source, path)
        if prof.round_key:
            batches = list(src.batches())
            table = pa.concat_tables(batches) if batches else pa.table({ROW: pa.array([], pa.int64())})
            parsed, rows, attached, _ = mapped_block(prof, table, list(src.bad), src.blank)
            yield parsed, rows, attached, [], size
            return
        ordinal, seq, pending, empty = 0, {}, [], pa.table({ROW: pa.array([], pa.int64())})
        for batch in src.batches():
            pending.append(batch)
            empty = batch.schema.empty_table()
            while sum(t.num_rows for t in pending) >= SEGMENT:
                table = pa.concat_tables(pending)
                parsed, rows, attached, found = mapped_block(prof, table.slice(0, SEGMENT), [], 0, ordinal, seq)
                ordinal, pending = ordinal + found, [table.slice(SEGMENT)]
                yield parsed, rows, attached, [], 0
        table = pa.concat_tables(pending) if pending else empty  # with the source's bad and blank rows
        parsed, rows, attached, _ = mapped_block(prof, table, list(src.bad), src.blank, ordinal, seq)
        yield parsed, rows, attached, [], size

    return read
