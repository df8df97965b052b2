"""The store as a package (issue 43): the names other code imports from ``auditkit.store`` import, and one
commit primitive closes a source's files, then writes its manifest entry, or commits nothing. (That no import
of the package comes back to it, inside functions too, is tests/test_imports.py's.)"""

from __future__ import annotations

import importlib

import pyarrow as pa
import pytest

from auditkit.schema import QUARANTINE
from auditkit.store import SourceRecord, Store


@pytest.mark.parametrize("module, names", [
    ("auditkit.store", ["Store", "SourceRecord", "INDEX", "ROW_GROUP", "ParquetStream", "StoreLocked", "CorruptStore",
                        "NewerStore", "STORE_FORMAT", "STORE_FILE", "LOCK_NAME", "atomic_path", "named_error",
                        "safe_component", "pid_alive", "remove_stale_temps", "is_uri", "write_parquet_atomic",
                        "compression_for", "_LocalFiles", "_ObjectFiles", "_MemoryFiles"]),
])
def test_the_names_other_code_imports_still_import(module, names):
    mod = importlib.import_module(module)
    assert [n for n in names if not hasattr(mod, n)] == []


class _File:
    def __init__(self, log: list[str], name: str, fail: bool = False):
        self.log, self.name, self.fail = log, name, fail

    def close(self) -> None:
        if self.fail:
            raise OSError(28, "No space left on device", self.name)
        self.log.append(f"close {self.name}")

    def abort(self) -> None:
        self.log.append(f"abort {self.name}")


def _record(sha: str) -> SourceRecord:
    return SourceRecord(sha256=sha, path="x.jsonl", size=1, format="jsonl")


def test_commit_source_closes_the_files_then_writes_the_entry(tmp_path):
    store, log = Store(tmp_path / "s"), []
    quarantine = store.quarantine_stream("a" * 64)
    quarantine.write(pa.table({"source_file": ["x.jsonl"], "line": [1], "round_id": [None], "reason": ["cut"],
                               "raw": ["{"], "sha256": ["a" * 64]}).cast(QUARANTINE))
    store.commit_source(_record("a" * 64), files=[_File(log, "part"), quarantine, _File(log, "index")])
    assert log == ["close part", "close index"]
    (rec,) = Store(tmp_path / "s").manifest()
    assert [f["path"] for f in rec.files] == [f"_quarantine/{'a' * 16}.parquet"]  # closed, recorded, committed
    assert len(Store(tmp_path / "s").quarantine()) == 1


def test_a_file_that_fails_to_close_aborts_every_one_and_commits_nothing(tmp_path):
    store, log = Store(tmp_path / "s"), []
    with pytest.raises(OSError, match="No space left"):
        store.commit_source(_record("b" * 64), files=[_File(log, "part"), _File(log, "index", fail=True)])
    assert log == ["close part", "abort part", "abort index"]
    assert Store(tmp_path / "s").manifest() == [] and not (tmp_path / "s" / "_manifest").exists()
