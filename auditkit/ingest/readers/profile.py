"""The reader of any export mapped through an import profile (:mod:`auditkit.ingest.profiles`).

The raw source (CSV, xlsx, JSON, SQL: :mod:`auditkit.ingest.profiles.source`) gives tables of
string cells with each row's number; :func:`auditkit.ingest.profiles.mapping.map_rows` makes them
round records, which the JSONL record reader stores (so a round stores as its JSONL twin would).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..blocks import Parsed, parse_block
from ..jsonl import Lines
from ..profiles.mapping import ROW, map_rows
from ..profiles.model import Profile
from . import ReadBlock, Reader

__all__ = ["profile_reader", "read_rows", "mapped_block"]


def read_rows(source: Any, path: Path) -> tuple[pa.Table, list[tuple[int, str, str]], str]:
    """The rows of the source ``path`` as its ``[source]`` spec reads them (string columns and
    ``__row``), its undecodable rows (row, reason, raw text) and the name reports show as ``source_file``."""
    try:
        from ..profiles.source import open_source
    except ImportError:
        return _csv_rows(source if isinstance(source, dict) else {}, path) + (path.name,)
    src = open_source(source, path)
    batches = list(src.batches())
    table = pa.concat_tables(batches) if batches else pa.table({ROW: pa.array([], pa.int64())})
    return table, list(src.bad), src.name


def _csv_rows(spec: dict[str, Any], path: Path) -> tuple[pa.Table, list[tuple[int, str, str]]]:
    """A CSV's rows as strings, numbered by physical line (a stand-in until the source readers land)."""
    text = path.read_bytes().decode(spec.get("encoding", "utf-8-sig"), errors="replace")
    header_row = int(spec.get("header_row", 1))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=spec.get("delimiter", ","),
                        quotechar=spec.get("quote", '"'))
    header: list[str] = []
    cells: list[list[str | None]] = []
    rows: list[int] = []
    bad: list[tuple[int, str, str]] = []
    for record in reader:
        line = reader.line_num
        if line < header_row:
            continue
        if not header:
            header = [h.strip() for h in record]
            continue
        if len(record) > len(header) and any(v.strip() for v in record[len(header):]):
            bad.append((line, f"{len(record)} cells, the header has {len(header)}", ",".join(record)))
            continue
        cells.append([(v if v.strip() else None) for v in record[:len(header)]] + [None] * (len(header) - len(record)))
        rows.append(line)
    cols = {h: pa.array([r[j] for r in cells], pa.string()) for j, h in enumerate(header)}
    cols[ROW] = pa.array(rows, pa.int64())
    return pa.table(cols), bad


def mapped_block(prof: Profile, table: pa.Table, bad: list[tuple[int, str, str]]) -> tuple[Parsed, int, int]:
    """(parsed block, rows read, attached rows) of a source's rows: the rounds mapped, written as
    JSON lines and read by the log's bulk reader (so they store as their JSONL twin), then given
    back their source's row numbers."""
    mapped = map_rows(table, prof)
    parsed = _parse_records(mapped.rounds, mapped.raws)
    parsed.bad.extend((row, raw, reason, None) for row, reason, raw in bad)
    parsed.bad.extend(mapped.bad)
    parsed.bad.sort(key=lambda b: b[0])
    parsed.blank += mapped.blank
    if prof.not_recorded:
        for game, t in parsed.tables.items():
            at = t.schema.get_field_index("not_recorded")
            if at >= 0:
                value = pa.array([prof.not_recorded] * t.num_rows, t.schema.field(at).type)
                parsed.tables[game] = t.set_column(at, t.schema.field(at), value)
    return parsed, mapped.rows + len(bad), mapped.attached


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
        table, bad, _ = read_rows(prof.source, path)
        parsed, rows, attached = mapped_block(prof, table, bad)
        yield parsed, rows, attached, [], path.stat().st_size

    return read
