"""A followed file's identity (device and inode, the hash of its first bytes, the names it had, how far
it was read) and an entry of a poll's lines that is not a readable line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

NAMES = 8                    # names a followed file is remembered under


@dataclass
class Tracked:
    """One followed file, known by ``(dev, ino)``; ``gen`` counts truncations."""

    dev: int
    ino: int
    path: Path
    gen: int = 0
    offset: int = 0          # bytes consumed (complete lines only)
    line: int = 0            # lines consumed
    head: str = ""           # blake2b of the first head_len bytes
    head_len: int = 0
    gzip: bool | None = None  # None until the first two bytes are there
    done: bool = False       # a gzip file read to its end
    size: int = -1           # gzip: size and mtime at the last poll, and since when they hold
    mtime: int = -1
    stable_since: float = 0.0
    orphan_since: float | None = None  # no longer listed under any watched name (rotated away, deleted)
    scanned: int = 0         # a too-long line being written: bytes of it known to have no line break
    names: list[str] = field(default_factory=list)  # the names it was read under (the last few)
    fh: IO[bytes] | None = field(default=None, repr=False)

    @property
    def key(self) -> tuple[int, int]:
        return self.dev, self.ino

    @property
    def source_key(self) -> str:
        return f"{self.dev}:{self.ino}:{self.gen}"

    def state(self) -> dict[str, Any]:
        return {"dev": self.dev, "ino": self.ino, "path": str(self.path), "gen": self.gen, "offset": self.offset,
                "line": self.line, "head": self.head, "head_len": self.head_len, "gzip": self.gzip, "done": self.done,
                "names": self.names}

    def named(self, path: Path) -> None:
        """Now under ``path`` (a rotation renames it): remembered, so that its rounds stored under an
        earlier name are known as its own after a restart."""
        self.path = path
        name = str(path)
        if name not in self.names:
            self.names = [*self.names[-(NAMES - 1):], name]

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


@dataclass(frozen=True)
class Unread:
    """An entry that is not a readable line, counted as a line read as ingest counts it: a line
    longer than ``max_line`` (its head is kept) or the place where a gzip stream broke."""

    head: bytes
    reason: str
