"""The Parquet store: atomic writes, hive partitions, manifest, streaming reads.

Layout under the store root::

    rounds/game=<game>/date=<yyyy-mm-dd>/part-<uuid>.parquet   stored rounds
    findings/game=<game>/date=<yyyy-mm-dd>/findings.parquet    findings of that partition
    _manifest/<sha256>.json                                   one record per ingested source file
    _quarantine/<sha256>.parquet                              its bad lines

Every file is written to a temporary sibling and renamed into place, so a
crash never leaves a half-written file (pyarrow datasets are not atomic).
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import platform
import re
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["atomic_path", "safe_component", "pid_alive", "remove_stale_temps", "StoreLocked", "CorruptStore",
           "LOCK_NAME"]

log = logging.getLogger("auditkit.store")
LOCK_NAME = ".auditkit.lock"
_TEMP = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")  # .<name>.<creator pid>.<random>.tmp (atomic_path)

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(value: str) -> str:
    """A string made safe as one path component (no separators, no dot-dot, bounded length)."""
    text = _SAFE.sub("_", str(value)).strip("._") or "_"
    return text[:100]


def _temp_sibling(path: Path) -> Path:
    """A new empty file ``.<name>.<pid>.<random>.tmp`` next to ``path``, readable as the finished file
    will be (the pid lets a later run tell a dead writer's leftovers from a live one's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is for others to read too
    return Path(tmp)


def _publish(tmp: Path, path: Path) -> None:
    """fsync ``tmp`` and rename it to ``path``."""
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; on success fsync and rename it into place."""
    path = Path(path)
    tmp_path = _temp_sibling(path)
    try:
        yield tmp_path
        _publish(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def pid_alive(pid: int) -> bool:
    """True when a process with this id runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale(tmp: Path, older_than: float | None) -> bool:
    """A temporary file whose creator (the pid in its name) is gone, or last written before ``older_than``."""
    m = _TEMP.match(tmp.name)
    if m is not None and not pid_alive(int(m.group(1))):
        return True
    return older_than is not None and tmp.stat().st_mtime < older_than


def remove_stale_temps(paths: Iterable[Path]) -> list[Path]:
    """Remove the temporary siblings (``.<name>.<pid>.*.tmp``) of ``paths`` whose writer is gone; returns them."""
    removed = []
    for path in paths:
        path = Path(path)
        if not path.parent.is_dir():
            continue
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                if tmp.is_file() and _stale(tmp, None):
                    tmp.unlink()
                    removed.append(tmp)
    return removed


class StoreLocked(OSError):
    """Another process holds the store's lock past the timeout."""


class CorruptStore(OSError):
    """A store file that cannot be read (cut, overwritten): the message names it."""


# ---- the store ------------------------------------------------------------------------
import json  # noqa: E402
import uuid  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime  # noqa: E402

import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from . import games as registered  # noqa: E402
from .schema import FINDINGS, QUARANTINE, schema_for  # noqa: E402

__all__ += ["Store", "SourceRecord", "INDEX", "ParquetStream", "ROW_GROUP"]

ROW_GROUP = 131_072
"""Rows per Parquet row group (a scan batch reads about one)."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
INDEX = pa.schema([("id_hash", pa.uint64()), ("line_hash", pa.uint64()), ("round_id", pa.string()),
                   ("source_file", pa.string()), ("source_line", pa.int64())])


@dataclass
class SourceRecord:
    """The manifest entry of one ingested source file: what it held and where it went."""

    sha256: str
    path: str
    size: int
    format: str
    lines_read: int = 0
    stored: int = 0
    already_stored: int = 0
    quarantined: int = 0
    blank: int = 0
    attached: int = 0  # CSV companion rows (hands, wagers, events) read into their round
    games: dict[str, int] = field(default_factory=dict)
    partitions: list[str] = field(default_factory=list)
    ingested_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    @property
    def balanced(self) -> bool:
        """Every line read is stored, already stored, quarantined, blank (or a header) or attached."""
        return self.lines_read == (self.stored + self.already_stored + self.quarantined + self.blank
                                   + self.attached)


def _source_record(path: Path) -> SourceRecord:
    """A manifest entry read back; CorruptStore when it is not one."""
    try:
        return SourceRecord(**json.loads(path.read_text("utf-8")))
    except (ValueError, TypeError) as exc:
        raise CorruptStore(f"store manifest entry {path} is unreadable ({exc})") from None


def write_parquet_atomic(table: pa.Table, path: Path) -> Path:
    """Write a Parquet file through a temporary sibling and a rename."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP)
    return path


class ParquetStream:
    """A Parquet file written table by table into a temporary sibling; :meth:`close` renames it into
    place, :meth:`abort` removes it (a killed process leaves only a ``.tmp`` file, removed later)."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path, self.schema = Path(path), schema
        self.tmp = _temp_sibling(self.path)
        self._writer = pq.ParquetWriter(self.tmp, schema, compression="zstd")
        self.rows = 0

    def write(self, table: pa.Table) -> None:
        """Append rows (row groups of at most :data:`ROW_GROUP` rows)."""
        self._writer.write_table(table.select(self.schema.names).cast(self.schema), row_group_size=ROW_GROUP)
        self.rows += table.num_rows

    def close(self) -> Path:
        self._writer.close()
        _publish(self.tmp, self.path)
        return self.path

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self.tmp.unlink(missing_ok=True)


class Store:
    """A folder of hive-partitioned Parquet rounds, findings, manifest and quarantine."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # ---- the lock -----------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, timeout: float, *, shared: bool = False, command: str = "") -> Iterator[float]:
        """Hold the store's lock (``fcntl.flock`` on ``<store>/.auditkit.lock``); yields when it was taken.

        Writers (ingest, a job) take it exclusively, readers (validate of a store,
        report) shared. Waits up to ``timeout`` seconds, then raises StoreLocked
        naming the holder (pid, host, command, since). The kernel releases the lock
        when the process ends, however it ends: a killed run never leaves it stale.
        Local file systems only (flock is not reliable over NFS). A writer removes
        the temporary files that killed writers left in the store.
        """
        import fcntl

        path = self.root / LOCK_NAME
        if shared and self.root.is_dir() and not os.access(self.root, os.W_OK):  # a read-only store: nobody writes it, no lock needed
            log.debug("store %s is read-only: read without its lock", self.root)
            yield time.time()
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout
            waited = False
            while True:
                try:
                    fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        holder = os.pread(fd, 1000, 0).decode("utf-8", "replace").strip()
                        pid = re.match(r"pid (\d+) ", holder)
                        if pid is None or not pid_alive(int(pid.group(1))):  # no writer: readers hold it
                            holder = "a reader (auditkit validate or report)"
                        raise StoreLocked(f"store {self.root} is locked by {holder}"
                                          f" (waited {timeout:g} s; --lock-timeout to wait longer)") from None
                    if not waited:
                        log.info("waiting up to %g s for the lock on %s", timeout, self.root)
                        waited = True
                    time.sleep(0.1)
            taken = time.time()
            if not shared:
                os.ftruncate(fd, 0)
                since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(taken))
                os.pwrite(fd, f"pid {os.getpid()} on {platform.node()} ({command or 'auditkit'}) since {since}\n"
                          .encode(), 0)
                self.remove_stale_temps(taken)
            yield taken
            if not shared:
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # releases the lock

    def remove_stale_temps(self, older_than: float) -> list[Path]:
        """Remove the temporary files in the store written before ``older_than`` or whose writer is gone."""
        removed = []
        for tmp in self.root.glob("**/.*.tmp"):
            with contextlib.suppress(OSError):
                if tmp.is_file() and _stale(tmp, older_than):
                    tmp.unlink()
                    removed.append(tmp)
        if removed:
            log.warning("removed %d temporary file(s) that an interrupted run left in %s", len(removed), self.root)
        return removed

    # ---- paths --------------------------------------------------------------------------
    def _partition(self, kind: str, game: str, date: str) -> Path:
        if game not in registered.names():
            raise ValueError(f"unknown game {game!r}")
        if not _DATE.match(date):
            raise ValueError(f"bad partition date {date!r}")
        return self.root / kind / f"game={game}" / f"date={date}"

    @staticmethod
    def is_store(path: str | Path) -> bool:
        """True when ``path`` is a store folder (it has a manifest or rounds)."""
        p = Path(path)
        return p.is_dir() and ((p / "_manifest").is_dir() or (p / "rounds").is_dir())

    # ---- manifest -----------------------------------------------------------------------
    def manifest(self) -> list[SourceRecord]:
        """Every committed source, oldest first."""
        folder = self.root / "_manifest"
        if not folder.is_dir():
            return []
        out = [_source_record(p) for p in folder.glob("*.json")]
        return sorted(out, key=lambda r: (r.ingested_at, r.path))

    def source(self, sha256: str) -> SourceRecord | None:
        """The manifest entry of a file content, if it was ingested."""
        p = self.root / "_manifest" / f"{safe_component(sha256)}.json"
        return _source_record(p) if p.exists() else None

    def _committed(self) -> set[str]:
        folder = self.root / "_manifest"
        return {p.stem[:16] for p in folder.glob("*.json")} if folder.is_dir() else set()

    def commit_source(self, record: SourceRecord) -> None:
        """Write the manifest entry last: it is what makes a source's parts visible."""
        path = self.root / "_manifest" / f"{safe_component(record.sha256)}.json"
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(record.__dict__, indent=1, sort_keys=True), "utf-8")

    def discard_uncommitted(self, sha256: str) -> int:
        """Remove parts, index and quarantine a crashed ingest of this source left behind."""
        prefix = sha256[:16]
        n = 0
        for p in list(self.root.glob(f"rounds/game=*/date=*/part-{prefix}-*.parquet")):
            p.unlink()
            n += 1
        for p in (self.root / "_index" / f"{prefix}.parquet", self.root / "_quarantine" / f"{prefix}.parquet"):
            p.unlink(missing_ok=True)
        for pattern in (f"rounds/game=*/date=*/.part-{prefix}-*.tmp", f"_index/.{prefix}.*.tmp",
                        f"_quarantine/.{prefix}.*.tmp", f"_manifest/.{sha256}.*.tmp"):
            for p in self.root.glob(pattern):  # only this source's: another writer's are left alone
                p.unlink(missing_ok=True)
        return n

    # ---- rounds -------------------------------------------------------------------------
    def write_rounds(self, game: str, date: str, table: pa.Table, source_sha: str) -> Path:
        """Atomically add a part of rounds of one game and day, tagged with its source."""
        table = table.cast(schema_for(game))
        name = f"part-{source_sha[:16]}-{uuid.uuid4().hex[:12]}.parquet"
        return write_parquet_atomic(table, self._partition("rounds", game, date) / name)

    def games(self) -> list[str]:
        """Games with stored rounds."""
        return [g for g in registered.names() if (self.root / "rounds" / f"game={g}").is_dir()]

    def dates(self, game: str, start: str | None = None, end: str | None = None) -> list[str]:
        """Days with committed rounds of a game, sorted, within [start, end] when given."""
        folder = self.root / "rounds" / f"game={game}"
        if not folder.is_dir():
            return []
        out = []
        for p in folder.glob("date=*"):
            d = p.name[5:]
            if _DATE.match(d) and (start is None or d >= start) and (end is None or d <= end) and self.parts(game, d):
                out.append(d)
        return sorted(out)

    def parts(self, game: str, date: str) -> list[Path]:
        """Committed part files of one partition (parts of an unfinished ingest are skipped)."""
        committed = self._committed()
        folder = self._partition("rounds", game, date)
        return sorted(p for p in folder.glob("part-*.parquet") if p.name[5:21] in committed)

    def _dataset(self, game: str, date: str) -> ds.Dataset:
        return ds.dataset([str(p) for p in self.parts(game, date)], schema=schema_for(game), format="parquet")

    def scan(self, game: str, date: str, batch_size: int = 131_072,
             columns: list[str] | None = None) -> Iterator[pa.Table]:
        """Stream one partition's rounds in batches of whole rounds, about ``batch_size`` each
        (small part files are gathered into one batch, so many small logs cost no more than one)."""
        pending: list[pa.RecordBatch] = []
        rows = 0
        for batch in self._dataset(game, date).to_batches(columns=columns, batch_size=batch_size):
            if not batch.num_rows:
                continue
            pending.append(batch)
            rows += batch.num_rows
            if rows >= batch_size:
                yield pa.Table.from_batches(pending)
                pending, rows = [], 0
        if pending:
            yield pa.Table.from_batches(pending)

    def read(self, game: str, date: str, columns: list[str] | None = None) -> pa.Table:
        """One partition's rounds (only the given columns)."""
        return self._dataset(game, date).to_table(columns=columns)

    def count(self, game: str | None = None, date: str | None = None) -> int:
        """Number of stored rounds (of one game, or all; of one day, or all), from the files' metadata."""
        total = 0
        for g in [game] if game else self.games():
            for d in [date] if date else self.dates(g):
                total += sum(pq.ParquetFile(p).metadata.num_rows for p in self.parts(g, d))
        return total

    # ---- duplicate index ----------------------------------------------------------------
    def write_index(self, sha256: str, table: pa.Table) -> None:
        """The round-id index of a source, written at once."""
        stream = self.index_stream(sha256)
        try:
            stream.write(table)
        except BaseException:
            stream.abort()
            raise
        stream.close()

    def index_stream(self, sha256: str) -> ParquetStream:
        """The round-id index of a source, written as a stream (bounded memory)."""
        from .ingest.hashing import VERSION, VERSION_KEY

        return ParquetStream(self.root / "_index" / f"{sha256[:16]}.parquet",
                             INDEX.with_metadata({VERSION_KEY: VERSION}))

    def index_files(self) -> list[str]:
        """The index files of every committed source."""
        committed = self._committed()
        return [str(p) for p in (self.root / "_index").glob("*.parquet") if p.stem in committed]

    def index(self, columns: list[str] | None = None) -> pa.Table:
        """The round-id index of every committed source."""
        files = self.index_files()
        if not files:
            return INDEX.empty_table().select(columns or INDEX.names)
        return ds.dataset(files, schema=INDEX, format="parquet").to_table(columns=columns)

    # ---- quarantine ---------------------------------------------------------------------
    def write_quarantine(self, sha256: str, table: pa.Table) -> None:
        write_parquet_atomic(table.cast(QUARANTINE), self.root / "_quarantine" / f"{sha256[:16]}.parquet")

    def quarantine_stream(self, sha256: str) -> ParquetStream:
        """The quarantine of a source, written as a stream."""
        return ParquetStream(self.root / "_quarantine" / f"{sha256[:16]}.parquet", QUARANTINE)

    def quarantine(self) -> pd.DataFrame:
        """Every quarantined line of every committed source."""
        committed = self._committed()
        files = [str(p) for p in (self.root / "_quarantine").glob("*.parquet") if p.stem in committed]
        if not files:
            return QUARANTINE.empty_table().to_pandas()
        return ds.dataset(files, schema=QUARANTINE, format="parquet").to_table().to_pandas()

    # ---- findings -----------------------------------------------------------------------
    def write_findings(self, game: str, date: str, findings: pd.DataFrame) -> Path:
        """Replace the findings of one partition (atomic)."""
        table = pa.Table.from_pandas(findings, schema=FINDINGS, preserve_index=False)
        return write_parquet_atomic(table, self._partition("findings", game, date) / "findings.parquet")

    def findings(self, games: list[str] | None = None, start: str | None = None,
                 end: str | None = None) -> pd.DataFrame:
        """Stored findings, optionally of some games and days."""
        files = []
        for g in games or registered.names():
            folder = self.root / "findings" / f"game={g}"
            for p in folder.glob("date=*/findings.parquet"):
                d = p.parent.name[5:]
                if (start is None or d >= start) and (end is None or d <= end):
                    files.append(str(p))
        if not files:
            return FINDINGS.empty_table().to_pandas()
        return ds.dataset(sorted(files), schema=FINDINGS, format="parquet").to_table().to_pandas()
