"""The findings writers: JSON lines (the report's columns) on stdout and ``--out``, rows of a
spreadsheet-safe CSV (:func:`auditkit.report.csv_text`, the report's writer), exactly once
across restarts (see docs/live.md)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from ..report import csv_text
from ..schema import FINDINGS
from ..store import named_error

COLUMNS = [f.name for f in FINDINGS]


def _write(fh: IO[bytes], data: bytes, path: Path | None) -> None:
    """Append ``data`` to an output and flush it; an error (a full disk) names the file."""
    try:
        fh.write(data)
        fh.flush()
    except OSError as exc:
        raise named_error(exc, path or Path(str(fh.name))) from exc


def _plain(v: Any) -> Any:
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.generic):
        v = v.item()
        return None if isinstance(v, float) and math.isnan(v) else v
    if isinstance(v, (list, np.ndarray)):  # a finding's evidence: [name, number] pairs
        return [[str(name), float(x)] for name, x in v]
    return v


def finding_lines(findings: pd.DataFrame) -> list[str]:
    """Findings as JSON lines with the report's columns, in order (no money: null)."""
    cols = [findings[c].tolist() for c in COLUMNS]
    return [json.dumps(dict(zip(COLUMNS, map(_plain, row), strict=True)), ensure_ascii=False, allow_nan=False)
            for row in zip(*cols, strict=True)]


class Outputs:
    """The writing half of :class:`~auditkit.live.watcher.Watcher` (a mixin)."""

    def _read_out_tail(self, offset: int) -> None:
        """Findings written to ``--out`` after the checkpoint: their rounds are read again, not reported again.
        A partial last line (a crash while writing) is cut off; its finding is written again."""
        fh = self._out_fh
        assert fh is not None
        end = fh.seek(0, os.SEEK_END)
        if end <= offset:
            return
        fh.seek(offset)
        tail = fh.read()
        cut = tail.rfind(b"\n") + 1
        if cut < len(tail):
            fh.truncate(offset + cut)
        for raw in tail[:cut].splitlines():
            try:
                rec = json.loads(raw)
                self.suppress.add((rec["round_id"], rec["rule_id"]))
            except (ValueError, KeyError, TypeError):
                continue
        if self.suppress:  # a checkpoint keeps this offset until the lines after it were read again
            self._out_pin = offset
        fh.seek(0, os.SEEK_END)

    def _emit(self, found: pd.DataFrame) -> None:
        """Write a poll's findings: stdout first, then ``--out`` (skipping those already there), then the CSV."""
        if self.suppress:
            dup = np.array([(r, k) in self.suppress for r, k in zip(found["round_id"], found["rule_id"], strict=True)])
            new = found[~dup]
        else:
            new = found
        lines = finding_lines(new)
        if lines:
            if self.stdout is not None:
                self.stdout.write("\n".join(lines) + "\n")
                self.stdout.flush()
            if self._out_fh is not None:
                _write(self._out_fh, ("\n".join(lines) + "\n").encode("utf-8"), self.out)
        if self._csv_fh is not None and len(found):
            text = csv_text(found[COLUMNS], header=False) or ""
            _write(self._csv_fh, text.encode("utf-8"), self.csv)
        self.stats["findings"] += len(new)
        if self.on_emit is not None:
            self.on_emit(found)
