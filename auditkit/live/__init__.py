"""Live mode: follow growing logs and report each round's findings within a second of its line.

:class:`Watcher` polls log files and folders (``auditkit watch``). Each poll it
reads the complete new lines of every file (a partial last line waits for its
newline), parses them as ingest does (:func:`auditkit.ingest.perline.decode_line`,
:func:`auditkit.ingest.records.parse_record`, ingest's hashes and duplicate reason),
runs every round rule and the shoe rules on the open shoes, and emits the findings
at once (JSON lines on stdout and ``--out``, rows of a spreadsheet-safe CSV).

The package, one concern a module (docs/live.md, "Layout"); the watcher holds one of each part:

- :mod:`.settings`: the options, one frozen :class:`~.settings.WatchSettings`;
- :mod:`.files` and :mod:`.tail`: file identity, tailing, rotation, truncation (and the copy of a
  copytruncate), long lines, gzip;
- :mod:`.rounds`: the recent round ids, the open shoes, the poll times (each bounded);
- :mod:`.outputs`: the findings writers (JSON lines and CSV);
- :mod:`.commit`: the rounds of a checkpoint interval and their commit to the store under its lock,
  through ingest's writer (:class:`auditkit.ingest.writer.SourceWriter`);
- :mod:`.checkpoint`: the versioned checkpoint, written atomically, and the writer thread;
- :mod:`.watcher`: the loop (:class:`Watcher`, :func:`watch`).
"""

from __future__ import annotations

from .checkpoint import CHECKPOINT_VERSION
from .outputs import finding_lines
from .rounds import OpenShoes, PollTimes, RecentRounds
from .settings import WatchSettings
from .watcher import Watcher, watch

__all__ = ["Watcher", "watch", "WatchSettings", "OpenShoes", "RecentRounds", "PollTimes", "finding_lines", "CHECKPOINT_VERSION"]
