"""The findings writers: JSON lines (the report's columns) on stdout and ``--out``, rows of a
spreadsheet-safe CSV (:func:`auditkit.report.csv_text`, the report's writer), exactly once
across restarts (see docs/live.md)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import IO, Any, TextIO

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
    """The findings' outputs: ``stdout``, ``out`` (JSON lines, appended) and ``csv`` (appended,
    spreadsheet-safe), each finding exactly once across restarts in ``out`` and ``csv``."""

    def __init__(self, out: Path | None, csv: Path | None, stdout: TextIO | None):
        self.out, self.csv, self.stdout = out, csv, stdout
        self.out_fh: IO[bytes] | None = None
        self.csv_fh: IO[bytes] | None = None
        self.suppress: set[tuple[str, str]] = set()  # (round_id, rule_id) already in --out past the checkpoint
        self.pin: int | None = None  # the --out offset checkpoints keep while its tail is being read again

    def open(self, state: dict[str, Any]) -> None:
        """Open the outputs where the checkpoint ``state`` left them (rows after it cut, or remembered)."""
        self.pin = None
        if self.out is not None:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.out_fh = open(self.out, "a+b")  # noqa: SIM115 (open while watching)
            self._read_out_tail(int(state.get("out_offset", 0)))
        if self.csv is not None:
            self.csv.parent.mkdir(parents=True, exist_ok=True)
            fh = self.csv_fh = open(self.csv, "a+b")  # noqa: SIM115 (open while watching)
            offset = int(state.get("csv_offset", 0))
            if fh.seek(0, os.SEEK_END) > offset:  # rows after the checkpoint: written again below
                fh.truncate(offset)
                fh.seek(0, os.SEEK_END)  # truncate() leaves the position at the old end
            if fh.tell() == 0:
                fh.write(",".join(COLUMNS).encode() + b"\r\n")
                fh.flush()

    def close(self) -> None:
        for fh in (self.out_fh, self.csv_fh):
            if fh is not None:
                fh.close()
        self.out_fh = self.csv_fh = None

    def files(self) -> list[tuple[int, Path]]:
        """(file descriptor, path) of each open output file (fsynced at a checkpoint)."""
        return [(fh.fileno(), path) for fh, path in ((self.out_fh, self.out), (self.csv_fh, self.csv))  # type: ignore[misc]
                if fh is not None]

    def offsets(self) -> dict[str, int]:
        """Where a checkpoint taken now leaves the outputs."""
        out = (self.pin if self.pin is not None else self.out_fh.tell()) if self.out_fh is not None else 0
        return {"out_offset": out, "csv_offset": self.csv_fh.tell() if self.csv_fh is not None else 0}

    def caught_up(self) -> None:
        """Every line after the checkpoint was read again: nothing more to suppress."""
        self.suppress.clear()
        self.pin = None

    def _read_out_tail(self, offset: int) -> None:
        """Findings written to ``--out`` after the checkpoint: their rounds are read again, not reported again.
        A partial last line (a crash while writing) is cut off; its finding is written again."""
        fh = self.out_fh
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
            self.pin = offset
        fh.seek(0, os.SEEK_END)

    def emit(self, found: pd.DataFrame) -> int:
        """Write a poll's findings: stdout first, then ``--out`` (skipping those already there), then the
        CSV; the number of findings new to ``--out``."""
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
            if self.out_fh is not None:
                _write(self.out_fh, ("\n".join(lines) + "\n").encode("utf-8"), self.out)
        if self.csv_fh is not None and len(found):
            text = csv_text(found[COLUMNS], header=False) or ""
            _write(self.csv_fh, text.encode("utf-8"), self.csv)
        return len(new)
