"""PostgreSQL sources of import profiles, read through ADBC from a real throwaway cluster (tests/pg.py):
skipped with the reason when the server is missing, failing when AUDITKIT_REQUIRE_POSTGRES=1 (CI)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from auditkit.ingest.profiles.source import SourceSpec, open_source
from auditkit.ingest.sources import InputError
from auditkit.paytables import ConfigError
from tests.pg import execute, pg_url  # noqa: F401 (the fixture)


@pytest.fixture(scope="module")
def hands(pg_url):  # noqa: F811
    execute(pg_url, "DROP TABLE IF EXISTS hands",
            "CREATE TABLE hands (id bigint, played timestamp, cards text, net numeric(10,2), rate double precision,"
            " split boolean, note text)",
            "INSERT INTO hands VALUES (1, '2025-06-01 04:02:00', 'Th 9c', -5.00, 1.5, false, ''),"
            " (2, '2025-06-01 04:03:30', 'A♠ K♥', 12.50, 2, true, NULL), (3, NULL, '02s 11s', 0, NULL, NULL, 'x, \"y\"')")
    return pg_url


def read(spec: dict, location: str = "") -> tuple[dict, object]:
    src = open_source(SourceSpec.from_table({"format": "postgresql", **spec}, "pg.toml"), location)
    table = pa.concat_tables(list(src.batches()))
    assert all(f.type == (pa.int64() if f.name == "__row" else pa.string()) for f in table.schema)
    return table.to_pydict(), src


def test_postgres_rows_as_text(hands, monkeypatch):
    monkeypatch.setenv("AUDIT_PG_URL", hands)
    spec = {"url": "env:AUDIT_PG_URL", "query": "SELECT * FROM hands ORDER BY id",
            "snapshot_key": "SELECT max(id) FROM hands"}
    cols, src = read(spec)
    assert cols == {"id": ["1", "2", "3"], "played": ["2025-06-01 04:02:00", "2025-06-01 04:03:30", None],
                    "cards": ["Th 9c", "A♠ K♥", "02s 11s"], "net": ["-5.00", "12.50", "0.00"],
                    "rate": ["1.5", "2", None], "split": ["false", "true", None], "note": [None, None, 'x, "y"'],
                    "__row": [1, 2, 3]}
    assert src.name == "sql:hands" and src.rows_read == 3
    # the hash: the same query on the same snapshot is the same source; another query or a new row is not
    assert read(spec)[1].sha256 == src.sha256
    assert read({**spec, "query": "SELECT * FROM hands ORDER BY id DESC"})[1].sha256 != src.sha256
    execute(hands, "INSERT INTO hands (id) VALUES (4)")
    try:
        assert read(spec)[1].sha256 != src.sha256
    finally:
        execute(hands, "DELETE FROM hands WHERE id = 4")


def test_postgres_batches_and_errors(hands, monkeypatch):
    spec = {"url": hands, "query": "SELECT g AS n FROM generate_series(1, 2500) g", "snapshot_key": "SELECT 1"}
    src = open_source(SourceSpec.from_table({"format": "postgresql", **spec}, "pg.toml"), "", batch_rows=1000)
    batches = list(src.batches())
    assert max(b.num_rows for b in batches) <= 1000
    assert pa.concat_tables(batches)["__row"].to_pylist() == list(range(1, 2501))
    assert src.name.startswith("sql:") and len(src.name) == 16  # no single table: the query's hash
    with pytest.raises(InputError, match="the query failed"):
        read({**spec, "query": "SELECT nothing FROM hands"})
    monkeypatch.delenv("AUDIT_PG_URL", raising=False)
    with pytest.raises(ConfigError, match="pg.toml: source.url: the environment variable AUDIT_PG_URL is not set"):
        read({**spec, "url": "env:AUDIT_PG_URL"})
