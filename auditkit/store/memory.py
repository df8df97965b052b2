"""A store held in this process's memory (a one-shot validation's), spilling to a folder past a limit."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from . import parquet
from .files import LOCK_NAME, _Files, _glob_matches


class _HeldStream:
    """An index or quarantine of an in-memory store, written table by table and kept as one table (not
    encoded) at :meth:`close`, as :class:`ParquetStream` publishes its file. Its tables count against
    the store's limit as they come; past it, they go on into a Parquet file of the spill folder."""

    def __init__(self, files: _MemoryFiles, rel: str, schema: pa.Schema, on_close: Any):
        self.files, self.rel, self.schema, self.on_close = files, rel, schema, on_close
        self.tables: list[pa.Table] = []  # held while it waits for close, counted in the store's held bytes
        self.rows = self.bytes = 0
        self.spill: tuple[Path, pq.ParquetWriter] | None = None

    def _release(self) -> None:
        """Forget the tables held, and their bytes in the store's count."""
        self.files.held -= sum(t.nbytes for t in self.tables)
        self.tables = []

    def write(self, table: pa.Table) -> None:
        table = table.select(self.schema.names).cast(self.schema)
        self.rows += table.num_rows
        self.bytes += table.nbytes
        if self.spill is None and self.files.held + table.nbytes > self.files.limit:
            path = self.files.spill_path()
            self.spill = (path, pq.ParquetWriter(path, self.schema, compression="zstd"))
            for held in self.tables:
                self.spill[1].write_table(held, row_group_size=parquet.ROW_GROUP)
            self._release()
        if self.spill is not None:
            self.spill[1].write_table(table, row_group_size=parquet.ROW_GROUP)
        else:
            self.tables.append(table)
            self.files.held += table.nbytes

    def close(self) -> None:
        if self.spill is not None:
            self.spill[1].close()
            self.files.spilled[self.rel] = (self.spill[0], self.bytes)
            size = self.bytes
        else:
            table = pa.concat_tables(self.tables) if self.tables else self.schema.empty_table()
            self._release()
            size, _sha = self.files.write_parquet(self.rel, table)
        if self.on_close is not None:
            self.on_close(self.rel, self.rows, size, "")

    def abort(self) -> None:
        self._release()
        if self.spill is not None:
            self.spill[1].close()
            self.spill[0].unlink(missing_ok=True)
            self.spill = None


class _MemoryFiles(_Files):
    """A store held in this process's memory, for a one-shot validation that reads its rounds back once:
    each Parquet file (a part, an index, a quarantine) is kept as the Arrow table written, never encoded
    nor decoded, up to ``limit`` bytes of them; past that, files go to ``spill`` (a folder) as Parquet.
    A file's size is its size in memory, wherever it is; its SHA-256 is not recorded (no bytes were
    written). Never sent to a worker: it is this process's."""

    remote = True  # no folder of its own: nothing renamed into place
    fs = None

    def __init__(self, limit: int, spill: Path):
        self.limit, self.held, self.spill = limit, 0, spill
        self.tables: dict[str, pa.Table] = {}
        self.schemas: dict[str, pa.Schema] = {}  # each held table's schema as written
        self.spilled: dict[str, tuple[Path, int]] = {}  # rel -> (its Parquet file in spill, its size in memory)
        self.blobs: dict[str, bytes] = {}  # the other files (manifest entries)

    def __reduce__(self) -> Any:
        raise TypeError("an in-memory store is read in its own process only")

    def path(self, rel: str) -> str:
        return f"memory:{rel}"

    def _names(self) -> list[str]:
        return [*self.tables, *self.spilled, *self.blobs]

    def files(self, pattern: str) -> list[str]:
        return [rel for rel in self._names() if _glob_matches(rel, pattern)]

    def children(self, rel: str) -> list[str]:
        prefix = rel.rstrip("/") + "/"
        return sorted({name[len(prefix):].split("/", 1)[0] for name in self._names() if name.startswith(prefix)})

    def is_dir(self, rel: str) -> bool:
        return bool(self.children(rel))

    def exists(self, rel: str) -> bool:
        return rel in self.tables or rel in self.spilled or rel in self.blobs or self.is_dir(rel)

    def read_bytes(self, rel: str) -> bytes:
        if rel not in self.blobs:
            raise FileNotFoundError(2, "No such file", self.path(rel))
        return self.blobs[rel]

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.blobs[rel] = bytes(data)

    def stream(self, rel: str, schema: pa.Schema, on_close: Any, dictionary: bool | list[str] = True,
               **encodings: Any) -> Any:
        return _HeldStream(self, rel, schema, on_close)

    def write_parquet(self, rel: str, table: pa.Table) -> tuple[int, str]:
        """Keep a file's table, its source file (the same name on every row) dictionary-encoded: (its
        size in memory, no hash)."""
        held = table
        at = table.schema.get_field_index("source_file")
        if at >= 0 and pa.types.is_string(table.schema.field(at).type):
            import pyarrow.compute as pc

            field = table.schema.field(at)
            held = table.set_column(at, field.with_type(pa.dictionary(pa.int32(), pa.string())),
                                    pc.dictionary_encode(table.column(at)))
        size = held.nbytes
        if self.held + size <= self.limit:
            self.tables[rel], self.schemas[rel], self.held = held, table.schema, self.held + size
        else:
            path = self.spill_path()
            pq.write_table(table, path, compression="zstd", row_group_size=parquet.ROW_GROUP)
            self.spilled[rel] = (path, size)
        return size, ""

    def spill_path(self) -> Path:
        """A new file of the spill folder."""
        return self.spill / f"{uuid.uuid4().hex}.parquet"

    def sizes(self, folder: str) -> dict[str, int]:
        prefix = folder.rstrip("/") + "/"
        out = {rel: t.nbytes for rel, t in self.tables.items() if rel.startswith(prefix)}
        out.update((rel, size) for rel, (_p, size) in self.spilled.items() if rel.startswith(prefix))
        return out

    def entries(self, folder: str) -> dict[str, tuple[int, int]]:
        """Name -> (size, 0) of the ``*.json`` blobs directly under ``folder``."""
        prefix = folder.rstrip("/") + "/"
        return {rel[len(prefix):]: (len(data), 0) for rel, data in self.blobs.items()
                if rel.startswith(prefix) and rel.endswith(".json") and "/" not in rel[len(prefix):]}

    def delete(self, rel: str) -> None:
        table = self.tables.pop(rel, None)
        if table is not None:
            self.held -= table.nbytes
            del self.schemas[rel]
        spilled = self.spilled.pop(rel, None)
        if spilled is not None:
            spilled[0].unlink(missing_ok=True)
        self.blobs.pop(rel, None)

    def _dataset(self, rel: str, schema: pa.Schema | None) -> ds.Dataset:
        if rel in self.spilled:
            return ds.dataset(self.spilled[rel][0], schema=schema, format="parquet")
        if rel not in self.tables:
            raise FileNotFoundError(2, "No such file", self.path(rel))
        schema = schema or self.schemas[rel]
        return ds.InMemoryDataset(self.tables[rel].select(schema.names).cast(schema))

    def dataset(self, rels: list[str], schema: pa.Schema | None) -> ds.Dataset:
        if len(rels) == 1:
            return self._dataset(rels[0], schema)
        return ds.dataset([self._dataset(r, schema) for r in rels]) if rels else \
            ds.InMemoryDataset(schema.empty_table())  # type: ignore[union-attr]

    def num_rows(self, rel: str) -> int:
        return self.tables[rel].num_rows if rel in self.tables else self._dataset(rel, None).count_rows()

    def lock_file(self) -> Path:
        return self.spill / LOCK_NAME
