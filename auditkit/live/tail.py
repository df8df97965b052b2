"""Following files: a file's identity (device and inode, the hash of its first bytes), reading its
complete new lines within a poll's budget, rotation (a renamed file read to its end), truncation
(read again from its start, the lines it had not read taken from its copy), long lines and gzip."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import math
import os
import resource
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..ingest.identity import InputError
from ..ingest.jsonl import RAW_KEPT, read_blocks, too_long_reason
from ..ingest.sources import discover
from .files import Tracked, Unread

if TYPE_CHECKING:
    from .settings import WatchSettings

HEAD = 4096                  # bytes of a file's start kept as a hash, to know it again after a restart
READ_BUDGET = 2 << 20        # bytes read from all files in one poll, shared out evenly (a watcher behind its
READ_MIN = 16 << 10          #   logs reads ~3,000 rounds a poll, however many files), at least READ_MIN a file
                             #   (files past the budget wait for the next poll, which starts with them);
                             #   a line longer than its share is read whole, up to max_line
SCAN = 1 << 20               # bytes read at a time while looking for the end of a line longer than max_line
GZIP_LINES = 4_000           # lines of a gzip file validated per batch
OPEN_FILES = 256             # followed files held open at most (a quarter of the open-files limit when lower)


def _head_hash(fh: IO[bytes], n: int) -> str:
    fh.seek(0)
    return hashlib.blake2b(fh.read(n), digest_size=16).hexdigest()


def _gzip_complete(path: Path) -> bool:
    """True when a gzip file decompresses to its end (its trailer is there)."""
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
        return True
    except (EOFError, OSError, zlib.error, gzip.BadGzipFile):
        return False


def open_files_limit() -> int:
    """How many followed files are held open at once: :data:`OPEN_FILES`, or a quarter of the process's
    open-files limit when that is lower (the rest for the outputs, the store and the libraries)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return OPEN_FILES if soft == resource.RLIM_INFINITY else max(4, min(OPEN_FILES, soft // 4))


Lines = list[tuple[Tracked, int, Any]]  # (file, line number, the line or an Unread) of one poll


class Tail:
    """The files a watcher follows, and the reading of their complete new lines, poll by poll.

    ``paths`` are files and folders; ``follows(file, in_folder)`` says whether a file found is one to
    follow, ``skip(resolved path)`` whether it is one of the watcher's own (its outputs, its store),
    ``warn(key, message)`` warns once a key (None: every time).

    Files are opened on demand: a file whose size is its read offset is not opened, and at most
    :func:`open_files_limit` stay open, the least recently read closed first (opened again by its name,
    or found by its inode in its folder once rotated away). So ``watch`` follows 20,000 files under the
    usual limit of 1,024 open files."""

    def __init__(self, paths: list[Path], settings: WatchSettings, follows: Callable[[Path, bool], bool],
                 skip: Callable[[Path], bool], warn: Callable[[str | None, str], None]):
        self.paths, self.settings, self.follows, self.skip, self.warn = paths, settings, follows, skip, warn
        self.files: dict[tuple[int, int], Tracked] = {}
        self.opened: dict[tuple[int, int], Tracked] = {}  # the files held open, least recently read first
        self.max_open = open_files_limit()
        self.first_file = 0  # the file of the listing a poll reads first (the next after the last poll's budget ran out)
        self.behind = False  # the last poll stopped at its budget
        self.stated = -math.inf  # when the files were last stat'ed
        self.scanned = -math.inf  # when the folders were last listed
        self.list_cost = 0.0  # seconds the last listing of the folders took
        self.listed: dict[tuple[int, int], tuple[Path, os.stat_result]] = {}

    def _listing(self) -> dict[tuple[int, int], tuple[Path, os.stat_result]]:
        found: dict[tuple[int, int], tuple[Path, os.stat_result]] = {}
        for p in self.paths:
            try:
                files = discover([p])
            except InputError:
                self.warn(str(p), f"{p} does not exist (yet); watching for it")
                continue
            for f in files:
                if not self.follows(f, p.is_dir()) or self.skip(f.resolve()):
                    continue
                try:
                    st = f.stat()
                except OSError:
                    continue
                found.setdefault((st.st_dev, st.st_ino), (f, st))
        return found

    def known(self) -> dict[tuple[int, int], tuple[Path, os.stat_result]] | None:
        """The files of the last listing, stat'ed again; None when a name now holds another file or is gone."""
        out = {}
        for key, (path, _st) in self.listed.items():
            try:
                st = path.stat()
            except OSError:
                return None
            if (st.st_dev, st.st_ino) != key:
                return None
            out[key] = (path, st)
        return out

    def read(self, now: float, register: Callable[[list[Tracked]], None],
             process: Callable[[Lines], None]) -> tuple[Lines, bool]:
        """The complete new lines of every file (a gzip file's are handed to ``process`` as it is read;
        new files to ``register`` before any of their lines is read), and True when a file had more to
        read than one poll takes."""
        every = max(self.settings.rescan, 10 * self.list_cost)  # listing 20,000 files takes a second: at most 10% of the time
        if self.behind and now - self.stated < every:  # catching up (the last poll stopped at its budget):
            listing = self.listed                      # the files stat'ed again every ``every`` seconds
        else:
            listing = self.known() if now - self.scanned < every else None
            if listing is None:  # folders listed again every ``every`` seconds; known files stat'ed every poll
                listing, self.scanned = self._listing(), now
                self.list_cost = time.monotonic() - now
            self.stated = now
        self.listed = listing
        lines: Lines = []
        more = False
        share = max(READ_BUDGET // max(len(self.files), len(listing), 1), READ_MIN)
        for key, t in list(self.files.items()):  # files renamed away or deleted: read to their end, then drop
            if key in listing:
                t.orphan_since = None
                continue
            if t.orphan_since is None:
                t.orphan_since = now
            final = now - t.orphan_since >= self.settings.orphan_grace or t.gzip
            more |= self._read(t, lines, share, final=bool(final))
            if final:
                self.close(t)
                del self.files[key]
        new = [key for key in listing if key not in self.files]
        for key in new:
            path, st = listing[key]
            t = self.files[key] = Tracked(dev=key[0], ino=key[1], path=path, names=[str(path)])
            if st.st_size:
                with contextlib.suppress(OSError), open(path, "rb") as fh:
                    t.head_len = min(st.st_size, HEAD)
                    t.head = _head_hash(fh, t.head_len)
        if new:
            register([self.files[key] for key in new])
        order = list(listing.items())
        first = self.first_file % len(order) if order else 0  # where the last poll's budget ran out
        spent, stopped = 0, False
        self.behind = False
        for k, (key, (path, st)) in enumerate(order[first:] + order[:first]):
            t = self.files[key]
            t.named(path)
            if spent >= READ_BUDGET:  # the poll's bytes read (many files at READ_MIN each): the rest next poll
                if not stopped:
                    more, stopped, self.first_file, self.behind = True, True, first + k, True
                continue
            if t.gzip is None and st.st_size >= 2:
                with open(path, "rb") as fh:
                    t.gzip = fh.read(2) == b"\x1f\x8b"
            if t.gzip:
                self._read_gzip(t, st, now, process)
            elif t.gzip is False:
                before = t.offset
                more |= self._read(t, lines, share, size=st.st_size)
                spent += max(t.offset - before, 0)
        return lines, more

    def done(self) -> bool:
        """True when every file was read to where it stands (a gzip file: once)."""
        return all(t.gzip is False or t.done for t in self.files.values())

    def close_all(self) -> None:
        for t in self.files.values():
            self.close(t)

    def _read(self, t: Tracked, lines: list[tuple[Tracked, int, Any]], limit: int, final: bool = False,
              size: int | None = None) -> bool:
        """Append the complete new lines of a plain file, about ``limit`` bytes of them; True if more is waiting.
        ``size``: the file's size as listed in this poll (a closed file of that size is not opened)."""
        if t.gzip:
            return False
        if t.fh is None and size is not None and size == t.offset:
            return False  # nothing new (a copytruncate back to the same size waits for the file to grow)
        try:
            if t.fh is None and not self._reopen(t):
                return False
            size = os.fstat(t.fh.fileno()).st_size
        except OSError:
            return False
        self.opened.pop(t.key, None)  # the most recently read, the last closed
        self.opened[t.key] = t
        while len(self.opened) > self.max_open:
            self.opened.pop(next(iter(self.opened))).close()
        if size < t.offset or (t.head_len and size >= t.head_len and _head_hash(t.fh, t.head_len) != t.head
                               and t.offset <= size):
            copy = self._read_copy(t, lines)
            self.warn(None, f"{t.path} was truncated or replaced: read again from its start"
                           + (f"; the lines after line {t.line} read from its copy {copy}" if copy else ""))
            t.gen, t.offset, t.line, t.head, t.head_len = t.gen + 1, 0, 0, "", 0
        if size == t.offset:
            return False
        t.fh.seek(t.offset)
        data = t.fh.read(limit)
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) == limit:  # a line longer than the share: read it whole, up to max_line
            data += t.fh.read(max(self.settings.max_line + 1 - limit, 0))
            cut = data.rfind(b"\n") + 1
        if final and cut < len(data) and t.offset + len(data) == size:
            cut = len(data)  # the writer is gone: its last line is complete as it stands
        if cut == 0 and len(data) > self.settings.max_line:
            return self._skip_long(t, size, lines, final)
        parts = data[:cut].split(b"\n")
        if data[:cut].endswith(b"\n"):
            parts.pop()
        long = cut > self.settings.max_line  # only then can a line be too long
        for raw in parts:
            t.line += 1
            lines.append((t, t.line, Unread(raw[:RAW_KEPT], too_long_reason(self.settings.max_line)) if long and len(raw) > self.settings.max_line
                          else raw.rstrip(b"\r\n")))
        t.offset += cut
        if t.head_len < HEAD and t.offset > t.head_len:
            t.head_len = min(t.offset, HEAD)
            t.head = _head_hash(t.fh, t.head_len)
        return t.offset < size and cut > 0

    def _reopen(self, t: Tracked) -> bool:
        """Open ``t`` under its name, or (rotated away since it was closed) the name its inode has now in
        its folder; False when it is gone."""
        for path in (t.path, None):
            path = path or self.locate(t)
            if path is None:
                return False
            try:
                fh = open(path, "rb")  # noqa: SIM115 (kept open until closed as the least recently read)
            except OSError:
                continue
            st = os.fstat(fh.fileno())
            if (st.st_dev, st.st_ino) == t.key:
                t.fh, t.path = fh, path
                return True
            fh.close()  # the name now holds another file
        return False

    def close(self, t: Tracked) -> None:
        self.opened.pop(t.key, None)
        t.close()

    def _read_copy(self, t: Tracked, lines: list[tuple[Tracked, int, Any]]) -> Path | None:
        """After a copytruncate: find the copy of ``t`` in its folder (a name starting with its name, e.g.
        ``t.jsonl.1`` or ``t.jsonl.1.gz``, whose first bytes are the ones ``t`` had) and append the lines
        ``t`` had not read yet from it (as Vector's file source finds a file by its fingerprint)."""
        if not t.head_len:
            return None
        try:
            entries = sorted(e.path for e in os.scandir(t.path.parent)
                             if e.name.startswith(t.path.name) and e.name != t.path.name
                             and e.is_file(follow_symlinks=False))
        except OSError:
            return None
        for name in entries:
            path = Path(name)
            try:
                with open(path, "rb") as raw_fh:
                    packed = raw_fh.read(2) == b"\x1f\x8b"
                with (gzip.open(path, "rb") if packed else open(path, "rb")) as fh:
                    if hashlib.blake2b(fh.read(t.head_len), digest_size=16).hexdigest() != t.head:
                        continue
                    fh.seek(t.offset)
                    data = fh.read()
            except (OSError, EOFError, zlib.error):
                continue
            st = path.stat()
            copy = Tracked(dev=st.st_dev, ino=st.st_ino, path=path, gen=t.gen, offset=t.offset, line=t.line,
                           names=[*t.names, str(path)])
            parts = data.split(b"\n")
            if parts and not parts[-1]:
                parts.pop()
            for raw in parts:
                copy.line += 1
                lines.append((copy, copy.line, Unread(raw[:RAW_KEPT], too_long_reason(self.settings.max_line)) if len(raw) > self.settings.max_line
                              else raw.rstrip(b"\r")))
            return path
        return None

    def _skip_long(self, t: Tracked, size: int, lines: list[tuple[Tracked, int, Any]], final: bool) -> bool:
        """Pass over a line longer than ``max_line`` without holding it: one entry with its head once its
        line break (or, when ``final``, the file's end) is there; until then wait, remembering how far
        it was searched."""
        t.fh.seek(t.offset)
        head = t.fh.read(RAW_KEPT)
        end = t.offset + head.find(b"\n") + 1
        if end > t.offset:
            head = head[:end - t.offset - 1]
        else:
            t.scanned = max(t.scanned, t.offset + len(head))
            t.fh.seek(t.scanned)
            while chunk := t.fh.read(SCAN):
                at = chunk.find(b"\n")
                if at >= 0:
                    end = t.scanned + at + 1
                    break
                t.scanned += len(chunk)
            else:
                if not final:
                    return False
                end = t.scanned
        t.line += 1
        lines.append((t, t.line, Unread(head, too_long_reason(self.settings.max_line))))
        t.offset, t.scanned = end, 0
        return t.offset < size

    def _read_gzip(self, t: Tracked, st: os.stat_result, now: float, process: Callable[[Lines], None]) -> None:
        """Read a gzip file once it is complete and has not changed for ``gzip_settle`` seconds."""
        if t.done:
            return
        if (st.st_size, st.st_mtime_ns) != (t.size, t.mtime):
            t.size, t.mtime, t.stable_since = st.st_size, st.st_mtime_ns, now
        if now - t.stable_since < self.settings.gzip_settle:
            return
        if not _gzip_complete(t.path) and now - t.stable_since < self.settings.gzip_damaged:
            return  # still being written (or damaged: read as ingest does after gzip_damaged seconds)
        batch: list[tuple[Tracked, int, Any]] = []
        for block in read_blocks(t.path, max_line=self.settings.max_line):
            for i in range(len(block)):
                n = block.first + i
                if n <= t.line:  # read before a restart
                    continue
                error = block.errors.get(i)
                batch.append((t, n, Unread(*error) if error else block.raw(i)))
                if len(batch) >= GZIP_LINES:
                    process(batch)
                    t.line, batch = n, []
        if batch:
            process(batch)
            t.line = batch[-1][1]
        t.done = True

    @staticmethod
    def locate(t: Tracked) -> Path | None:
        """Where a checkpointed file is now: its name, or another name in its folder (rotated)."""
        try:
            st = t.path.stat()
            if (st.st_dev, st.st_ino) == t.key:
                return t.path
        except OSError:
            pass
        try:
            with os.scandir(t.path.parent) as it:
                for entry in it:
                    if entry.inode() == t.ino and entry.is_file(follow_symlinks=False) \
                            and entry.stat(follow_symlinks=False).st_dev == t.dev:
                        return Path(entry.path)
        except OSError:
            pass
        return None
