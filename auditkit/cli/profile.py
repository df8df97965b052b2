"""``auditkit profile suggest FILE`` and ``auditkit profile check FILE --profile PROFILE``: write and try an import
profile."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from .common import EXIT_CLEAN, EXIT_FINDINGS, UsageError, positive_int


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("profile", help="write or try an import profile for a vendor's export (docs/profiles.md)", **kw)
    inner = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = {k: v for k, v in kw.items() if k in ("parents", "formatter_class")}
    g = inner.add_parser("suggest", help="write a draft profile from the file's header and a sample of its values",
                         **common)
    g.add_argument("file", help="the export (CSV, a workbook, JSON, a SQLite file; with --format postgresql the "
                   "database's URL or env:NAME)")
    g.add_argument("--out", metavar="PROFILE", help="write the draft here (when not given: to standard output)")
    g.add_argument("--format", help="the source format (when not given: from the file name); postgresql: FILE is "
                   "the database's URL or env:NAME")
    g.add_argument("--table", metavar="NAME", help="the table of a database to draft (its tables are listed "
                   "when it holds several)")
    g.set_defaults(func=run_suggest)
    c = inner.add_parser("check", help="print the first rounds as auditkit reads them and every row it cannot map "
                         "(exit 0 all rows map, 1 some do not, 2 the profile is invalid)",
                         usage="%(prog)s FILE --profile TOML [--rounds N] [--max-rows N] [-v] [-q]", **common)
    c.add_argument("file", nargs="+", metavar="FILE", help="the export (the older order PROFILE FILE is still read)")
    c.add_argument("--profile", metavar="TOML", help="the import profile (TOML), as validate --profile takes it "
                   "(no default: required)")
    c.add_argument("--rounds", type=positive_int, default=3, metavar="N", help="rounds to print")
    c.add_argument("--max-rows", type=positive_int, default=200, metavar="N",
                   help="unmapped rows to print (all are counted)")
    c.set_defaults(func=_check_in_either_order)


def _check_in_either_order(args: argparse.Namespace) -> int:
    """``profile check FILE --profile P``, or the older ``profile check PROFILE FILE`` with a note."""
    if args.profile is not None:
        if len(args.file) != 1:
            raise UsageError(f"profile check takes one FILE with --profile, not {len(args.file)}")
        args.file = args.file[0]
    elif len(args.file) == 2:
        args.profile, args.file = args.file
        print(f"auditkit: note: the profile goes after --profile now: auditkit profile check "
              f"{shlex.quote(args.file)} --profile {shlex.quote(args.profile)}", file=sys.stderr)
    else:
        raise UsageError("profile check needs --profile PROFILE: auditkit profile check FILE --profile PROFILE")
    return run_check(args)


def _sql_tables(fmt: str, location: str) -> list[tuple[str, list[str]]]:
    """The tables and views of a database, each with its primary key's columns (SQLite: ``rowid``
    when it has none), in name order."""
    from ..ingest.profiles.source import SourceSpec, open_source

    if fmt == "sqlite":
        listing = ("SELECT name, (SELECT group_concat(p.name) FROM pragma_table_info(m.name) AS p WHERE p.pk > 0) "
                   "FROM sqlite_master AS m WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")
    else:
        listing = ("SELECT t.table_schema || '.' || t.table_name, (SELECT string_agg(k.column_name, ',' ORDER BY "
                   "k.ordinal_position) FROM information_schema.table_constraints AS c JOIN "
                   "information_schema.key_column_usage AS k ON k.constraint_name = c.constraint_name AND "
                   "k.table_schema = c.table_schema AND k.table_name = c.table_name WHERE c.constraint_type = "
                   "'PRIMARY KEY' AND c.table_schema = t.table_schema AND c.table_name = t.table_name) "
                   "FROM information_schema.tables AS t WHERE t.table_schema NOT IN ('pg_catalog', "
                   "'information_schema') ORDER BY 1")
    src = open_source(SourceSpec(format=fmt, query=listing, url=location, snapshot_key="SELECT 1"), location)
    rows = [r for t in src.batches() for r in zip(*(t[c].to_pylist() for c in t.column_names[:2]), strict=True)]
    out = []
    for name, key in rows:
        name = name[len("public."):] if fmt == "postgresql" and name.startswith("public.") else name
        out.append((name, key.split(",") if key else (["rowid"] if fmt == "sqlite" else [])))
    return out


def _utc_columns(location: str, table: str) -> tuple[str, ...]:
    """A PostgreSQL table's ``timestamp with time zone`` columns: the reader writes their instants in UTC."""
    from ..ingest.profiles.source import SourceSpec, open_source

    literal = "'" + table.replace("'", "''") + "'"
    query = ("SELECT column_name FROM information_schema.columns WHERE data_type = 'timestamp with time zone' "
             f"AND (table_schema || '.' || table_name = {literal} OR (table_schema = 'public' AND table_name = "
             f"{literal})) ORDER BY ordinal_position")
    src = open_source(SourceSpec(format="postgresql", query=query, url=location, snapshot_key="SELECT 1"), location)
    return tuple(v for t in src.batches() for v in t["column_name"].to_pylist())


def _quoted(name: str) -> str:
    """An SQL identifier (a schema-qualified table: each part), quoted."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def _source_table(path: Path, fmt: str | None, table_name: str | None) -> tuple[dict, dict, list[str]]:
    """(the draft's [source] table, the table that reads the sample, the chosen table's primary key):
    for a database, its tables listed and the one chosen (``--table``, or the only one)."""
    fmt = fmt or {".xlsx": "xlsx", ".xlsm": "xlsx", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
                  ".sqlite": "sqlite", ".db": "sqlite", ".sqlite3": "sqlite"}.get(path.suffix.lower(), "csv")
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
    if fmt == "json":
        from ..ingest.profiles.sniff import records_path

        try:
            doc = json.loads(path.read_bytes())
        except ValueError as exc:
            raise UsageError(f"{path}: not a JSON document: {exc}") from None
        if (records := records_path(doc)) is not None:
            table["records"] = records
    if fmt not in ("sqlite", "postgresql"):
        return table, table, []
    location = str(path)
    if fmt == "postgresql":
        from ..ingest.profiles.source import SourceSpec, _url, _without_password

        given = str(path)
        location = _url(SourceSpec(format=fmt, url=given)) if given.startswith("env:") else given
        table["url"] = given if given.startswith("env:") or given == _without_password(given) else "env:AUDIT_PG_URL"
    tables = _sql_tables(fmt, location)
    names = [n for n, _ in tables]
    if not names:
        raise UsageError(f"{_shown(path, fmt)}: no table in the database")
    if table_name is None and len(names) > 1:
        raise UsageError(f"{_shown(path, fmt)} holds {len(names)} tables: choose one with --table "
                         f"({', '.join(names)})")
    chosen = table_name or names[0]
    if chosen not in names:
        raise UsageError(f"{_shown(path, fmt)}: no table {chosen!r} (its tables: {', '.join(names)})")
    key = dict(tables)[chosen]
    sample = {**table, "query": f"SELECT * FROM {_quoted(chosen)} LIMIT {SUGGEST_SAMPLE}", "location": location}
    table["query"] = f"SELECT * FROM {_quoted(chosen)}"
    if fmt == "postgresql":
        table["snapshot_key"] = f"SELECT count(*){''.join(f', max({_quoted(k)})' for k in key)} FROM {_quoted(chosen)}"
    return table, sample, key


SUGGEST_SAMPLE = 500


def _shown(path: Path, fmt: str) -> str:
    if fmt != "postgresql":
        return str(path)
    from ..ingest.profiles.source import _without_password

    return _without_password(str(path))


def _spec(table: dict, where: str):
    from ..ingest.profiles.source import SourceSpec

    return SourceSpec.from_table(table, where)


def _ordered(query: str, key: list[str], order: list[str]) -> str:
    """The table's query ordered by the round key, then by the primary key (the rows' order within a round)."""
    by = list(dict.fromkeys([*key, *order]))
    return f"{query} ORDER BY {', '.join(_quoted(c) if c != 'rowid' else c for c in by)}" if by else query


def run_suggest(args: argparse.Namespace) -> int:
    from ..ingest.profiles.source import SourceSpec, open_source
    from ..ingest.profiles.suggest import suggest_profile
    from ..store import atomic_path

    path = Path(args.file)
    database = args.format == "postgresql"
    if not database and not path.is_file():
        raise UsageError(f"no such file: {path}")
    table, sample, order = _source_table(path, args.format, args.table)
    location = str(path)
    if table["format"] in ("sqlite", "postgresql"):
        location = sample.pop("location")
        spec = SourceSpec(**{k: v for k, v in sample.items() if k != "url"}, url=location)
        src = open_source(spec, location)
    else:
        src = open_source(_spec(table, str(path)), path)
    import pyarrow as pa

    from ..ingest.profiles.mapping import ROW

    batches = []
    for batch in src.batches():
        batches.append(batch)
        if sum(b.num_rows for b in batches) >= SUGGEST_SAMPLE:
            break
    rows = pa.concat_tables(batches) if batches else pa.table({ROW: pa.array([], pa.int64())})
    name = table["query"].rsplit(" ", 1)[1].strip('"') if database else path.name
    utc = _utc_columns(location, args.table or name) if database else ()
    draft = suggest_profile(rows, name, table, utc)
    if table.get("url") == "env:AUDIT_PG_URL" and not str(path).startswith("env:"):
        draft.draft.sections["source"] = [e if e[0] != "url" else (
            "url", "env:AUDIT_PG_URL", "TODO: set AUDIT_PG_URL to the database's URL: a password never goes in "
            "the file", False) for e in draft.draft.sections["source"]]
    if "query" in table:
        ordered = _ordered(table["query"], draft.key, order)
        draft.draft.sections["source"] = [e if e[0] != "query" else ("query", ordered, None if draft.key or order
                                          else "TODO: add an ORDER BY that keeps the rows' order", False)
                                          for e in draft.draft.sections["source"]]
    text = draft.text()
    if args.out:
        out = Path(args.out)
        with atomic_path(out) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
        print(f"draft profile: {out} ({text.count('TODO')} TODO(s) to answer; docs/profiles.md, "
              "'profile suggest')", file=sys.stderr)
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
    if prof.left_out:
        print(f"left out, read as a log that leaves it out (rules check what remains): {', '.join(prof.left_out)}")
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
