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
from ..profiles.mapping import ROW, house_rules, map_rows
from ..profiles.model import Profile
from . import ReadBlock, Reader

__all__ = ["profile_reader", "read_rows", "mapped_block"]


def read_rows(source: Any, path: Path) -> tuple[pa.Table, list[tuple[int, str, str]], str, int]:
    """The rows of the source ``path`` as its ``[source]`` spec reads them (string columns and
    ``__row``), its undecodable rows (row, reason, raw text), the name reports show as
    ``source_file``, and the blank rows the source reader passed over."""
    from ..profiles.source import open_source

    src = open_source(source, path)
    batches = list(src.batches())
    table = pa.concat_tables(batches) if batches else pa.table({ROW: pa.array([], pa.int64())})
    return table, list(src.bad), src.name, src.blank


def identity(prof: Profile, path: Path) -> tuple[str, int]:
    """(SHA-256, size) that identify a profiled source: the file's, or for SQL the query's, the URL's
    and the snapshot key's (:mod:`auditkit.ingest.profiles.source`)."""
    from ..profiles.source import open_source

    src = open_source(prof.source, path)
    return src.sha256, path.stat().st_size if path.is_file() else 0


def mapped_block(prof: Profile, table: pa.Table, bad: list[tuple[int, str, str]], blank: int = 0
                 ) -> tuple[Parsed, int, int]:
    """(parsed block, rows read, attached rows) of a source's rows: the rounds mapped, written as
    JSON lines and read by the log's bulk reader (so they store as their JSONL twin), then given
    back their source's row numbers."""
    mapped = map_rows(table, prof)
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
    return parsed, mapped.rows + len(bad) + blank, mapped.attached


def _parse_records(rounds: list[tuple[int, dict[str, Any]]], raws: dict[int, str]) -> Parsed:
    """The records parsed by the JSONL bulk reader, numbered by their source rows."""
    if not rounds:
        return Parsed(raw=raws.__getitem__)
    rows = np.array([row for row, _ in rounds], np.int64)
    data = "".join([json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n" for _, rec in rounds]).encode()
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
    """The reader of sources mapped through ``prof``."""

    def read(path: Path, name: str, bulk: bool, max_line: int) -> Iterator[ReadBlock]:
        table, bad, _, blank = read_rows(prof.source, path)
        parsed, rows, attached = mapped_block(prof, table, bad, blank)
        yield parsed, rows, attached, [], path.stat().st_size if path.is_file() else 0

    return read
