"""The store as a package (issue 43): its modules import nothing that imports the store back (imports inside
functions counted), the names other code imports from ``auditkit.store`` (and the old ``auditkit.integrity``
and ``auditkit.compaction``) still import, and one commit primitive closes a source's files, then writes its
manifest entry, or commits nothing."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pyarrow as pa
import pytest

from auditkit.schema import QUARANTINE
from auditkit.store import SourceRecord, Store

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "auditkit" / "store"


def _imports(path: Path, package: str) -> set[str]:
    """The auditkit modules a file imports, anywhere in it (functions included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            parts = package.split(".")  # the module's own name (of a package: its __init__, "<package>.__init__")
            base = parts[: len(parts) - node.level] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)  # `from . import parquet`
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("auditkit")}


def _file(module: str) -> Path | None:
    path = ROOT / Path(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def test_no_module_of_the_store_imports_one_that_imports_the_store_back():
    outside: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        for module in _imports(path, f"auditkit.store.{path.stem}"):
            if not module.startswith("auditkit.store") and _file(module) is not None:
                outside.setdefault(module, set()).add(path.name)
    assert outside, "the store imports nothing of auditkit?"
    for module, importers in sorted(outside.items()):
        path = _file(module)
        back = {m for m in _imports(path, module if path.name != "__init__.py" else module + ".__init__")
                if m.startswith(("auditkit.store", "auditkit.integrity", "auditkit.compaction"))}
        assert not back, f"{module} (imported by store/{', '.join(sorted(importers))}) imports {sorted(back)}"


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
