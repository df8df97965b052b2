"""SQL sources of import profiles: a query on a SQLite file or a PostgreSQL database, through ADBC
(``adbc_driver_sqlite``, ``adbc_driver_postgresql``: the ``sources`` extra), in record batches."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..sources import InputError
from .source import ROW, RawSource, SourceSpec, env_url, file_sha256, sql_name, url_without_credentials


def open_sql(spec: SourceSpec, fmt: str, location: str | Path, batch_rows: int) -> RawSource:
    """The rows of ``spec.query``; the hash is that of the query, the URL without credentials and the
    snapshot key's value (for SQLite without a snapshot key: the file's SHA-256)."""
    if not spec.query:
        raise InputError(f"{spec.where}: source.query: a {fmt} source needs a query")
    if fmt == "sqlite":
        path = Path(location)
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        target, shown = str(path), path.name
    else:
        target = env_url(spec) or str(location)
        if not target.startswith(("postgresql://", "postgres://")):
            raise InputError(f"{spec.where}: source.url: not a postgresql:// URL")
        shown = url_without_credentials(target)
    conn = _connect(fmt, target)
    try:
        snapshot = _scalar(conn, spec.snapshot_key) if spec.snapshot_key else "file:" + file_sha256(Path(target))
    except Exception:
        conn.close()
        raise
    digest = hashlib.sha256("\0".join([spec.query, shown, snapshot]).encode()).hexdigest()
    src = RawSource(sql_name(spec.query), digest, iter(()))

    def batches() -> Iterator[pa.Table]:
        done = 0
        try:
            with conn.cursor() as cur:
                try:
                    cur.execute(spec.query)
                    reader = cur.fetch_record_batch()
                    for batch in reader:
                        table = _as_strings(pa.Table.from_batches([batch]))
                        table = table.append_column(ROW, pa.array(range(done + 1, done + table.num_rows + 1), pa.int64()))
                        done += table.num_rows
                        for at in range(0, table.num_rows, batch_rows):
                            yield table.slice(at, batch_rows)
                except InputError:
                    raise
                except Exception as e:
                    raise InputError(f"{src.name}: the query failed: {_reason(e)}") from None
        finally:
            conn.close()

    src._batches = batches()
    return src


def _connect(fmt: str, target: str) -> Any:
    try:
        if fmt == "sqlite":
            import adbc_driver_sqlite.dbapi as driver
        else:
            import adbc_driver_postgresql.dbapi as driver
    except ImportError:
        raise InputError(f"reading {fmt} needs its ADBC driver: pip install 'auditkit[sources]'") from None
    try:
        return driver.connect(target)
    except Exception as e:
        shown = target if fmt == "sqlite" else url_without_credentials(target)
        raise InputError(f"{shown}: cannot connect: {_reason(e)}") from None


def _scalar(conn: Any, query: str) -> str:
    try:
        with conn.cursor() as cur:
            cur.execute(query)
            row = cur.fetchone()
    except Exception as e:
        raise InputError(f"source.snapshot_key: the query failed: {_reason(e)}") from None
    return "snapshot:" + ("" if row is None else repr(tuple(row)))


def _reason(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _as_strings(table: pa.Table) -> pa.Table:
    """Every column as text (an empty string as null); bytes as hexadecimal, nested values as JSON."""
    cols = []
    for col in table.columns:
        t = col.type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            out = col.cast(pa.string())
        elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
            out = pa.array([None if v is None else v.hex() for v in col.to_pylist()], pa.string())
        elif pa.types.is_nested(t):
            import json
            out = pa.array([None if v is None else json.dumps(v, default=str) for v in col.to_pylist()], pa.string())
        elif pa.types.is_timestamp(t):
            whole = col.cast(pa.timestamp("s", t.tz), safe=False)  # whole seconds, as the sheet-style text
            out = pc.strftime(whole, "%Y-%m-%d %H:%M:%S" if t.tz is None else "%Y-%m-%d %H:%M:%S%z")
        elif pa.types.is_null(t):
            out = pa.nulls(len(col), pa.string())
        else:
            out = col.cast(pa.string())
        cols.append(pc.if_else(pc.equal(out, ""), pa.scalar(None, pa.string()), out))
    return pa.table(cols, names=table.column_names)
