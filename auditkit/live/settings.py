"""The watcher's options, one frozen object made once (``auditkit watch``'s flags, or a test's)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ingest import MAX_LINE

LOCK_TIMEOUT = 60.0  # seconds the last commit (at exit) waits for the store's lock; the others do not wait


@dataclass(frozen=True)
class WatchSettings:
    """How the watcher polls, checkpoints and reads (seconds unless named otherwise)."""

    poll: float = 0.2                 # sleep between polls that found nothing more to read
    checkpoint_every: float = 5.0     # commit to the store and write the checkpoint this often
    gzip_settle: float = 1.0          # a gzip file unchanged this long (and complete) is read
    gzip_damaged: float = 60.0        # a gzip stream still damaged after this long is read as ingest does
    orphan_grace: float = 10.0        # a file renamed away or deleted is read to its end this long
    shoe_idle: float = 4 * 3600.0     # an open shoe idle this long is dropped
    recent: int = 100_000             # round ids remembered for the duplicate check (without the store)
    rescan: float = 1.0               # folders listed again this often (at least every poll)
    max_line: int = MAX_LINE          # bytes of the longest line read (a longer one is quarantined)
    lock_timeout: float = LOCK_TIMEOUT  # the last commit's wait for the store's lock

    def __post_init__(self) -> None:
        object.__setattr__(self, "rescan", max(self.rescan, self.poll))
