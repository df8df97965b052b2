"""``auditkit profile suggest FILE`` and ``auditkit profile check PROFILE FILE``: write and try an import profile."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import EXIT_CLEAN, EXIT_FINDINGS, UsageError, positive_int


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("profile", help="write or try an import profile for a vendor's export (docs/profiles.md)", **kw)
    inner = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = {k: v for k, v in kw.items() if k in ("parents", "formatter_class")}
    g = inner.add_parser("suggest", help="write a draft profile from the file's header and a sample of its values",
                         **common)
    g.add_argument("file", help="the export (CSV; other formats as the [source] section supports)")
    g.add_argument("--out", metavar="PROFILE", help="write the draft here (when not given: to standard output)")
    g.add_argument("--format", help="the source format (when not given: from the file name)")
    g.set_defaults(func=run_suggest)
    c = inner.add_parser("check", help="print the first rounds as auditkit reads them and every row it cannot map "
                         "(exit 0 all rows map, 1 some do not, 2 the profile is invalid)", **common)
    c.add_argument("profile", help="the profile (TOML)")
    c.add_argument("file", help="the export")
    c.add_argument("--rounds", type=positive_int, default=3, metavar="N", help="rounds to print")
    c.add_argument("--max-rows", type=positive_int, default=200, metavar="N",
                   help="unmapped rows to print (all are counted)")
    c.set_defaults(func=run_check)


def _source_table(path: Path, fmt: str | None) -> dict:
    """The [source] table for a file, guessed from its name and first bytes."""
    fmt = fmt or {".xlsx": "xlsx", ".json": "json", ".jsonl": "jsonl", ".sqlite": "sqlite", ".db": "sqlite",
                  ".sqlite3": "sqlite"}.get(path.suffix.lower(), "csv")
    table: dict = {"format": fmt}
    if fmt == "csv":
        head = path.open("rb").read(1 << 16)
        try:
            text = head.decode("utf-8-sig")
            table["encoding"] = "utf-8"
        except UnicodeDecodeError:
            text = head.decode("cp1252", errors="replace")
            table["encoding"] = "cp1252"
        first = text.splitlines()[0] if text else ""
        table["delimiter"] = max([",", ";", "\t", "|"], key=first.count)
    elif fmt == "sqlite":
        import sqlite3

        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
            names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                                "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if not names:
            raise UsageError(f"{path}: no table in the database")
        quoted = '"' + names[0].replace('"', '""') + '"'
        table["query"] = f"SELECT * FROM {quoted}"  # TODO in the draft: the table and an ORDER BY
    return table


def _spec(table: dict, where: str):
    from ..ingest.profiles.source import SourceSpec

    return SourceSpec.from_table(table, where)


def run_suggest(args: argparse.Namespace) -> int:
    from ..ingest.profiles.suggest import suggest_profile
    from ..ingest.readers.profile import read_rows
    from ..store import atomic_path

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    table = _source_table(path, args.format)
    rows, _, name, _ = read_rows(_spec(table, str(path)), path)
    lines = ["[source]"] + [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in table.items()]
    text = suggest_profile(rows, path.name, lines)
    if args.out:
        out = Path(args.out)
        with atomic_path(out) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
        print(f"draft profile: {out} ({text.count('# TODO')} TODO(s) to check)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_CLEAN


def run_check(args: argparse.Namespace) -> int:
    """The preview: what the export holds, its first rounds beside their rows in words, the coverage the
    rounds read will get per citation, and the rows that cannot be mapped grouped by reason."""
    import pyarrow as pa

    from ..ingest.profiles import load_profile
    from ..ingest.profiles import preview as pv
    from ..ingest.profiles.mapping import ROW, map_rows
    from ..ingest.profiles.source import open_source
    from ..ingest.readers.profile import mapped_block

    prof = load_profile(args.profile)
    path = Path(args.file)
    if not path.is_file() and prof.source.format != "postgresql":  # a database is a name, not a file
        raise UsageError(f"no such file: {path}")
    src = open_source(prof.source, path)
    batches = list(src.batches())
    table = pa.concat_tables(batches) if batches else pa.table({ROW: pa.array([], pa.int64())})
    parsed, rows, attached, _ = mapped_block(prof, table, list(src.bad), src.blank)
    stored = {line for t in parsed.tables.values() for line in t["source_line"].to_pylist()}
    print(f"{src.name}: {rows} row(s) read through profile {prof.name!r}: {len(stored)} round(s), "
          f"{attached} row(s) read into their round, {parsed.blank} blank")
    for note in src.notes:
        print(note)
    if prof.not_recorded:
        print(f"not recorded by this export (rules needing it report 'not checkable'): {', '.join(prof.not_recorded)}")
    if stored and table.column_names != [ROW]:
        mapped = map_rows(table, prof)  # the records of the rounds shown, as the mapping made them
        for line, rec in [(line, rec) for line, rec in mapped.rounds if line in stored][:args.rounds]:
            print(f"\nround from row {line}: {json.dumps(rec, ensure_ascii=False)}")  # the record, then in words
            cells = pv.source_cells(pv.round_rows(table, line, mapped.raws[line], ROW), ROW)
            print("\n".join(pv.side_by_side(cells, pv.round_words(rec, prof.not_recorded))))
    lines = pv.coverage_lines(parsed.tables)
    if lines:
        print("\n" + "\n".join(lines))
    bad = [(row, reason) for row, _, reason, _ in parsed.bad]
    if not bad:
        print("\nevery row maps")
        return EXIT_CLEAN
    print("\n" + "\n".join(pv.unmapped_lines(bad, args.max_rows)))
    return EXIT_FINDINGS
