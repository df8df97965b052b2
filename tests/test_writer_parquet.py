"""The Parquet files ingest writes: a tiny one (a five-round source's part and index) without codec, dictionaries
or statistics, larger ones as before; each read back whole by the store and by pyarrow."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from test_parallel_ingest import _lines, _records

from auditkit.ingest.sources import ingest_paths
from auditkit.store import INDEX, Store
from auditkit.store.parquet import TINY_FILE_ROWS


def _layout(path) -> tuple[str, bool, bool]:
    """(codec, any dictionary page, any statistics) of a Parquet file's first column chunks."""
    meta = pq.ParquetFile(path).metadata
    cols = [meta.row_group(0).column(i) for i in range(meta.num_columns)]
    return (cols[0].compression, any(c.has_dictionary_page for c in cols), any(c.is_stats_set for c in cols))


def _columns(path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each column's (codec, encodings) in a Parquet file's first row group."""
    meta = pq.ParquetFile(path).metadata
    cols = [meta.row_group(0).column(i) for i in range(meta.num_columns)]
    return {c.path_in_schema: (c.compression, tuple(sorted(c.encodings))) for c in cols}


def _ingest(tmp_path, rounds: int):
    log = tmp_path / "t.jsonl"
    log.write_bytes(b"\n".join(_lines(_records("baccarat", rounds, seed=41))) + b"\n")
    store = Store(tmp_path / "store")
    (rec,) = ingest_paths([log], store).sources
    return store, rec, {f["path"].split("/")[0]: store.root / f["path"] for f in rec.files}


def test_a_five_round_source_is_written_as_tiny_files_read_back_whole(tmp_path):
    store, rec, files = _ingest(tmp_path, 5)
    assert _layout(files["rounds"]) == ("UNCOMPRESSED", False, False)
    assert _layout(files["_index"]) == ("UNCOMPRESSED", False, False)
    assert rec.stored == 5 and pq.read_table(files["rounds"]).num_rows == 5
    assert store.index().num_rows == 5 and sorted(store.index()["source_line"].to_pylist()) == [1, 2, 3, 4, 5]
    (game,) = store.games()
    assert sum(store.read(game, d).num_rows for d in store.dates(game)) == 5


def test_a_larger_source_keeps_its_codec_dictionaries_and_statistics(tmp_path):
    store, rec, files = _ingest(tmp_path, 2 * TINY_FILE_ROWS)
    assert rec.stored == pq.read_table(files["_index"]).num_rows == 2 * TINY_FILE_ROWS
    assert _layout(files["_index"])[1:] == (True, True)
    assert _layout(files["rounds"]) == ("SNAPPY", True, True)


def test_an_index_writes_its_hashes_plain_and_its_line_numbers_delta_encoded(tmp_path):
    """Random 64-bit hashes zstd cannot shrink, ascending line numbers a few bits each: neither compressed, the
    round ids zstd, the file name a dictionary; read back by pyarrow alone as by the store, the same rows."""
    store, rec, files = _ingest(tmp_path, 2 * TINY_FILE_ROWS)
    cols = _columns(files["_index"])
    assert cols["id_hash"][0] == cols["line_hash"][0] == "UNCOMPRESSED" and "PLAIN" in cols["id_hash"][1]
    assert cols["source_line"] == ("UNCOMPRESSED", ("DELTA_BINARY_PACKED", "RLE"))
    assert cols["round_id"][0] == "ZSTD" and cols["source_file"][0] == "ZSTD"
    assert "RLE_DICTIONARY" in cols["source_file"][1] and "RLE_DICTIONARY" not in cols["round_id"][1]
    plain = pq.read_table(files["_index"])
    assert plain.schema.remove_metadata().equals(INDEX) and plain.select(INDEX.names).equals(
        store.index().select(INDEX.names).cast(INDEX))
    assert plain["source_line"].to_pylist() == list(range(1, 2 * TINY_FILE_ROWS + 1))


def test_a_stream_of_small_tables_opens_its_writer_once_past_a_tiny_files_rows(tmp_path):
    """The live watcher's way: many small blocks into one source's index, held until TINY_FILE_ROWS, none lost."""
    store = Store(tmp_path / "store")
    stream = store.index_stream("cd" * 32)
    rows = [{"id_hash": k, "line_hash": k, "round_id": f"R{k}", "source_file": "t.jsonl", "source_line": k}
            for k in range(1, 3 * TINY_FILE_ROWS + 2)]
    for k in range(0, len(rows), 5):
        stream.write(pa.Table.from_pylist(rows[k:k + 5], schema=INDEX))
    stream.close()
    (path,) = (tmp_path / "store" / "_index").glob("*.parquet")
    assert pq.read_table(path)["source_line"].to_pylist() == list(range(1, 3 * TINY_FILE_ROWS + 2))
    assert _layout(path)[1:] == (True, True) and _columns(path)["round_id"][0] == "ZSTD"


def test_an_empty_index_stream_is_a_file_of_no_rows(tmp_path):
    store = Store(tmp_path / "store")
    stream = store.index_stream("ab" * 32)
    stream.close()
    (path,) = (tmp_path / "store" / "_index").glob("*.parquet")
    assert pq.read_table(path).num_rows == 0 and pq.read_table(path).schema.names[:1] == ["id_hash"]
    assert isinstance(pq.read_table(path), pa.Table)
